/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c and diffcore-rename.c */
/*
 * rq_treemerge_rename: rename detection and processing for rq_treemerge,
 * with the behaviour of git 2.39's merge-ort over diffcore-rename:
 *
 *  - per side, the paths deleted on that side are rename sources and the
 *    paths added on it are destinations (empty blobs excluded);
 *  - a side with no relevant source (deleted there and changed or deleted
 *    on the other side, or needed for a directory rename) is not searched;
 *  - exact renames (same blob; same mode unless both are regular files;
 *    a source with the same basename preferred), then, for relevant
 *    sources only, same-basename pairs at 75% similarity (with the
 *    directory-rename guess when basenames repeat), then the similarity
 *    matrix at 50% (4 best candidates per destination, highest score
 *    first, same basename first on ties), skipped when
 *    sources x destinations exceeds merge.renameLimit squared;
 *  - similarity is git's: 64-byte-or-line chunks hashed and counted
 *    (diffcore-delta), CR before LF ignored in text;
 *  - directory renames: majority vote per removed directory, applied to
 *    paths the other side added or renamed into it (merge.directoryRenames);
 *  - renames are then applied to the collected paths (rename/rename,
 *    rename/delete, rename/add collisions, type changes).
 */
#include "rq_treemerge.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SCORE	      60000
#define DEFAULT_RENAME_SCORE  30000
#define NUM_CANDIDATE_PER_DST 4
#define HASHBASE	      107927
#define S_IFMT_		      0170000
#define S_IFREG_	      0100000
#define IS_REG(m)	      (((m)&S_IFMT_) == S_IFREG_)

static const char UNKNOWN_DIR[] = "/";

static int nomem(tm_state *s)
{
	s->oom = 1;
	return rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
}

/* ---- similarity (diffcore-delta) with a cache across merges ------------ */

typedef struct span {
	unsigned int hashval, cnt;
} span;

typedef struct sim_ent {
	git_oid oid;
	size_t size;
	span *spans; /* sorted by hashval; NULL until computed */
	size_t nspans;
	int have_size, have_spans;
} sim_ent;

/*
 * Similarity scores, remembered across the picks of one merger: a score is
 * a function of the two blobs (and the minimum score asked for), so a pick
 * that meets a source/destination pair an earlier pick scored takes the
 * score from here. In a topic replayed onto an upstream that renamed files,
 * each pick's rename search meets mostly the pairs of the pick before (the
 * same upstream renames), and pays only for the pairs the pick changed.
 * Unlike merge-ort's remembered rename pairs this never changes a result:
 * every pick gets the pairs a fresh merge would find.
 */
typedef struct pair_score {
	git_oid src, dst;
	int min_score, score;
} pair_score;

/*
 * Renames remembered across picks, as merge-ort does for a rebase or a
 * replay (git's Documentation/technical/remembering-renames.txt). When a
 * merge's base is the previous merge's side 2 (the commit picked before)
 * and its side 1 the previous result, the renames side 1 showed before
 * are side 1's renames again: the upstream's renames, which a fresh
 * search can miss once the topic has shrunk a file (the doc's section 4),
 * as when a commit cuts a file down and its revert brings it back. Such a
 * merge pairs those paths as renames first, then searches the rest. Any
 * other merge, a conflict, or libgit2's fallback forgets them.
 */
typedef struct kept_rename {
	char *from, *to;
} kept_rename;

struct rq_tm_cache {
	kept_rename *ren; /* side 1's renames along the chain */
	size_t nren, capren;
	int chain; /* the next merge continues it when its base and side 1 are: */
	git_oid chain_base, chain_ours;
	tm_chunk *chunks; /* arena memory kept between merges */
	pair_score *ps;	  /* open addressing; src all zero: empty */
	size_t ps_n, ps_size;
	size_t scores_computed, scores_reused; /* over the merger's life */
	sim_ent *v;
	size_t n, cap;
	uint32_t *tab;
	size_t tabsz;
	size_t bytes;
};

int rq_tm_cache_new(rq_tm_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

static void cache_clear(rq_tm_cache *c)
{
	tm_chunk *chunks = c->chunks;
	size_t computed = c->scores_computed, reused = c->scores_reused;
	kept_rename *ren = c->ren;
	size_t nren = c->nren, capren = c->capren;
	int chain = c->chain;
	git_oid cb = c->chain_base, co = c->chain_ours;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].spans);
	free(c->v);
	free(c->tab);
	free(c->ps);
	memset(c, 0, sizeof(*c));
	c->chunks = chunks;
	c->scores_computed = computed;
	c->scores_reused = reused;
	c->ren = ren; /* the remembered renames are not a cache to trim */
	c->nren = nren;
	c->capren = capren;
	c->chain = chain;
	c->chain_base = cb;
	c->chain_ours = co;
}

void rq_tm_cache_score_stats(const rq_tm_cache *c, size_t *computed, size_t *reused)
{
	*computed = c->scores_computed;
	*reused = c->scores_reused;
}

static size_t pair_slot(const rq_tm_cache *c, const git_oid *src, const git_oid *dst, int min_score)
{
	uint64_t a, b;
	memcpy(&a, src->id, sizeof(a));
	memcpy(&b, dst->id, sizeof(b));
	return (size_t)((a ^ (b * 0x9e3779b97f4a7c15ull) ^ (uint64_t)min_score) & (c->ps_size - 1));
}

static int is_zero_oid(const git_oid *id)
{
	for (size_t i = 0; i < GIT_OID_RAWSZ; i++)
		if (id->id[i])
			return 0;
	return 1;
}

/* The remembered score, or -1. */
static int pair_get(const rq_tm_cache *c, const git_oid *src, const git_oid *dst, int min_score)
{
	if (!c->ps_size)
		return -1;
	for (size_t i = pair_slot(c, src, dst, min_score);; i = (i + 1) & (c->ps_size - 1)) {
		const pair_score *p = &c->ps[i];
		if (is_zero_oid(&p->src))
			return -1;
		if (p->min_score == min_score && git_oid_equal(&p->src, src) &&
		    git_oid_equal(&p->dst, dst))
			return p->score;
	}
}

/* Remember a score (best effort: out of memory just forgets). */
static void pair_put(rq_tm_cache *c, const git_oid *src, const git_oid *dst, int min_score,
		     int score)
{
	size_t i;
	if (is_zero_oid(src))
		return;
	if ((c->ps_n + 1) * 2 > c->ps_size) {
		size_t ns = c->ps_size ? c->ps_size * 2 : 1024;
		pair_score *old = c->ps, *nt = calloc(ns, sizeof(*nt));
		size_t os = c->ps_size;
		if (!nt)
			return;
		c->ps = nt;
		c->ps_size = ns;
		for (size_t k = 0; k < os; k++) {
			if (is_zero_oid(&old[k].src))
				continue;
			i = pair_slot(c, &old[k].src, &old[k].dst, old[k].min_score);
			while (!is_zero_oid(&c->ps[i].src))
				i = (i + 1) & (ns - 1);
			c->ps[i] = old[k];
		}
		free(old);
	}
	i = pair_slot(c, src, dst, min_score);
	while (!is_zero_oid(&c->ps[i].src))
		i = (i + 1) & (c->ps_size - 1);
	git_oid_cpy(&c->ps[i].src, src);
	git_oid_cpy(&c->ps[i].dst, dst);
	c->ps[i].min_score = min_score;
	c->ps[i].score = score;
	c->ps_n++;
	c->bytes += 2 * sizeof(pair_score);
}

void rq_tm_cache_chain_break(rq_tm_cache *c)
{
	for (size_t i = 0; i < c->nren; i++) {
		free(c->ren[i].from);
		free(c->ren[i].to);
	}
	free(c->ren);
	c->ren = NULL;
	c->nren = c->capren = 0;
	c->chain = 0;
}

void rq_tm_cache_chain_advance(rq_tm_cache *c, const git_oid *theirs, const git_oid *result)
{
	c->chain = 1;
	git_oid_cpy(&c->chain_base, theirs);
	git_oid_cpy(&c->chain_ours, result);
}

int rq_tm_cache_chain_continues(rq_tm_cache *c, const git_oid *base, const git_oid *ours)
{
	if (c->chain && base && git_oid_equal(base, &c->chain_base) &&
	    git_oid_equal(ours, &c->chain_ours))
		return 1;
	rq_tm_cache_chain_break(c);
	return 0;
}

/* Remember side 1's rename from -> to (once). 0, or -1 out of memory. */
static int keep_rename(rq_tm_cache *c, const char *from, const char *to)
{
	for (size_t i = 0; i < c->nren; i++)
		if (!strcmp(c->ren[i].from, from))
			return 0;
	if (c->nren == c->capren) {
		size_t ncap = c->capren ? c->capren * 2 : 16;
		kept_rename *nv = realloc(c->ren, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		c->ren = nv;
		c->capren = ncap;
	}
	c->ren[c->nren].from = strdup(from);
	c->ren[c->nren].to = strdup(to);
	if (!c->ren[c->nren].from || !c->ren[c->nren].to) {
		free(c->ren[c->nren].from);
		free(c->ren[c->nren].to);
		return -1;
	}
	c->nren++;
	return 0;
}

void rq_tm_cache_free(rq_tm_cache *c)
{
	if (!c)
		return;
	rq_tm_cache_chain_break(c);
	cache_clear(c);
	tm_chunks_free(c->chunks);
	free(c);
}

void rq_tm_cache_lend(rq_tm_cache *c, tm_arena *a)
{
	a->spare = c->chunks;
	c->chunks = NULL;
}

void rq_tm_cache_take_back(rq_tm_cache *c, tm_arena *a)
{
	c->chunks = tm_arena_release(a, 16u << 20);
}

static uint32_t oidhash(const git_oid *id)
{
	uint32_t h;
	memcpy(&h, id->id, sizeof(h));
	return h;
}

/* Bound the cache between merges (never during one: entries are used by
 * index while a merge runs). */
void rq_tm_cache_trim(rq_tm_cache *c)
{
	if (c->n >= 65536 || c->bytes > (64u << 20))
		cache_clear(c);
}

/* The index of the cache entry for a blob (created on demand); -1 out of
 * memory. Entries move when the cache grows: keep indices, not pointers. */
static long cache_ent(rq_tm_cache *c, const git_oid *id)
{
	if (c->tabsz) {
		size_t mask = c->tabsz - 1, i = oidhash(id) & mask;
		while (c->tab[i]) {
			sim_ent *e = &c->v[c->tab[i] - 1];
			if (git_oid_equal(&e->oid, id))
				return (long)(c->tab[i] - 1);
			i = (i + 1) & mask;
		}
	}
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		sim_ent *nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		c->v = nv;
		c->cap = ncap;
	}
	if ((c->n + 1) * 2 > c->tabsz) {
		size_t tabsz = c->tabsz ? c->tabsz * 2 : 128;
		uint32_t *tab = calloc(tabsz, sizeof(*tab));
		if (!tab)
			return -1;
		for (size_t k = 0; k < c->n; k++) {
			size_t i = oidhash(&c->v[k].oid) & (tabsz - 1);
			while (tab[i])
				i = (i + 1) & (tabsz - 1);
			tab[i] = (uint32_t)(k + 1);
		}
		free(c->tab);
		c->tab = tab;
		c->tabsz = tabsz;
	}
	sim_ent *e = &c->v[c->n++];
	memset(e, 0, sizeof(*e));
	git_oid_cpy(&e->oid, id);
	{
		size_t i = oidhash(id) & (c->tabsz - 1);
		while (c->tab[i])
			i = (i + 1) & (c->tabsz - 1);
		c->tab[i] = (uint32_t)c->n;
	}
	return (long)(c->n - 1);
}

static int span_cmp(const void *a_, const void *b_)
{
	const span *a = a_, *b = b_;
	return a->hashval < b->hashval ? -1 : a->hashval > b->hashval ? 1 : 0;
}

/* hash_chars(): count bytes per chunk hash (a chunk ends at LF or 64 bytes). */
static int hash_chars(const unsigned char *buf, size_t sz, span **out, size_t *nout)
{
	int is_text = !rq_buffer_is_binary((const char *)buf, sz);
	size_t cap = 512, n = 0;
	span *tab = calloc(cap, sizeof(*tab));
	unsigned int accum1 = 0, accum2 = 0;
	int cnt = 0;

	if (!tab)
		return -1;
	for (;;) {
		unsigned int hashval;
		if (sz) {
			unsigned int c = *buf++, old_1 = accum1;
			sz--;
			if (is_text && c == '\r' && sz && *buf == '\n')
				continue;
			accum1 = (accum1 << 7) ^ (accum2 >> 25);
			accum2 = (accum2 << 7) ^ (old_1 >> 25);
			accum1 += c;
			if (++cnt < 64 && c != '\n')
				continue;
		} else if (!cnt) {
			break;
		}
		hashval = (accum1 + accum2 * 0x61) % HASHBASE;
		/* open addressing on hashval, like add_spanhash() */
		if ((n + 1) * 4 > cap * 3) {
			size_t ncap = cap * 2;
			span *nt = calloc(ncap, sizeof(*nt));
			if (!nt) {
				free(tab);
				return -1;
			}
			for (size_t i = 0; i < cap; i++) {
				if (!tab[i].cnt)
					continue;
				size_t b = tab[i].hashval & (ncap - 1);
				while (nt[b].cnt)
					b = (b + 1) & (ncap - 1);
				nt[b] = tab[i];
			}
			free(tab);
			tab = nt;
			cap = ncap;
		}
		{
			size_t b = hashval & (cap - 1);
			while (tab[b].cnt && tab[b].hashval != hashval)
				b = (b + 1) & (cap - 1);
			if (!tab[b].cnt) {
				tab[b].hashval = hashval;
				n++;
			}
			tab[b].cnt += (unsigned int)cnt;
		}
		cnt = 0;
		accum1 = accum2 = 0;
		if (!sz)
			break;
	}
	{
		size_t k = 0;
		for (size_t i = 0; i < cap; i++)
			if (tab[i].cnt)
				tab[k++] = tab[i];
		qsort(tab, k, sizeof(*tab), span_cmp);
		*out = tab;
		*nout = k;
	}
	return 0;
}

static int blob_size(tm_state *s, sim_ent *e)
{
	size_t len;
	git_object_t type;

	if (e->have_size)
		return 0;
	if (git_odb_read_header(&len, &type, s->odb, &e->oid) < 0)
		return rq_error_git(s->err, "cannot read blob header");
	e->size = len;
	e->have_size = 1;
	return 0;
}

static int blob_spans(tm_state *s, sim_ent *e)
{
	git_blob *b;

	if (e->have_spans)
		return 0;
	if (tm_read_blob(s, &e->oid, &b) < 0)
		return -1;
	if (hash_chars(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), &e->spans, &e->nspans) <
	    0) {
		git_blob_free(b);
		return nomem(s);
	}
	e->size = (size_t)git_blob_rawsize(b);
	e->have_size = 1;
	e->have_spans = 1;
	s->cache->bytes += e->nspans * sizeof(span) + sizeof(*e);
	git_blob_free(b);
	return 0;
}

static int score_blobs(tm_state *s, const tm_stage *src, const tm_stage *dst, int minimum_score);

/* estimate_similarity(); -1 on error. */
static int estimate_similarity(tm_state *s, const tm_stage *src, const tm_stage *dst,
			       int minimum_score)
{
	rq_tm_cache *c = s->cache;
	int score;

	if (!IS_REG(src->mode) || !IS_REG(dst->mode))
		return 0;
	if ((score = pair_get(c, &src->oid, &dst->oid, minimum_score)) >= 0) {
		c->scores_reused++;
		return score;
	}
	if ((score = score_blobs(s, src, dst, minimum_score)) < 0)
		return -1;
	c->scores_computed++;
	pair_put(c, &src->oid, &dst->oid, minimum_score, score);
	return score;
}

/* The score itself, from the blobs' chunk counts. */
static int score_blobs(tm_state *s, const tm_stage *src, const tm_stage *dst, int minimum_score)
{
	rq_tm_cache *c = s->cache;
	long is, id;
	unsigned long max_size, base_size, delta_size, sc = 0;

	if ((is = cache_ent(c, &src->oid)) < 0 || (id = cache_ent(c, &dst->oid)) < 0)
		return nomem(s);
	if (blob_size(s, &c->v[is]) < 0 || blob_size(s, &c->v[id]) < 0)
		return -1;
	max_size = c->v[is].size > c->v[id].size ? c->v[is].size : c->v[id].size;
	base_size = c->v[is].size < c->v[id].size ? c->v[is].size : c->v[id].size;
	delta_size = max_size - base_size;
	if (max_size * (MAX_SCORE - minimum_score) < delta_size * MAX_SCORE)
		return 0;
	if (blob_spans(s, &c->v[is]) < 0 || blob_spans(s, &c->v[id]) < 0)
		return -1;
	{
		const sim_ent *es = &c->v[is], *ed = &c->v[id];
		const span *a = es->spans, *ae = es->spans + es->nspans;
		const span *d = ed->spans, *de = ed->spans + ed->nspans;
		for (; a < ae; a++) {
			unsigned int dst_cnt = 0;
			while (d < de && d->hashval < a->hashval)
				d++;
			if (d < de && d->hashval == a->hashval)
				dst_cnt = (d++)->cnt;
			sc += a->cnt < dst_cnt ? a->cnt : dst_cnt;
		}
		if (!ed->size)
			return 0;
	}
	return (int)(sc * MAX_SCORE / max_size);
}

/* ---- diffcore_rename_extended() ------------------------------------------- */

typedef struct rn_src {
	tm_pair *p;
} rn_src;

typedef struct rn_dst {
	tm_pair *p;
	tm_pair *from; /* the source pair, once renamed */
	int is_rename;
} rn_dst;

typedef struct rn_info {
	int setup;
	tm_map idx_map;		 /* dst path -> index + 1 */
	tm_map dir_rename_guess; /* old dir -> new dir */
	tm_map *dir_rename_count;
	tm_map *relevant_source_dirs;
} rn_info;

typedef struct rn {
	tm_state *s;
	int side;
	rn_src *src;
	size_t nsrc;
	rn_dst *dst;
	size_t ndst;
	rn_info info;
} rn;

static int is_empty_blob(const git_oid *id)
{
	static const unsigned char empty[GIT_OID_RAWSZ] = {0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6,
							   0x43, 0x4b, 0x8b, 0x29, 0xae, 0x77, 0x5a,
							   0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91};
	return !memcmp(id->id, empty, GIT_OID_RAWSZ);
}

static const char *get_basename(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static int basename_same(const char *src, const char *dst)
{
	size_t sl = strlen(src), dl = strlen(dst);
	while (sl && dl) {
		char c1 = src[--sl], c2 = dst[--dl];
		if (c1 != c2)
			return 0;
		if (c1 == '/')
			return 1;
	}
	return (!sl || src[sl - 1] == '/') && (!dl || dst[dl - 1] == '/');
}

static char *get_dirname(tm_state *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	return tm_strndup(&s->arena, path, slash ? (size_t)(slash - path) : 0);
}

static intptr_t map_get0(const tm_map *m, const char *key)
{
	intptr_t v = 0;
	tm_map_get(m, key, &v);
	return v;
}

static void record_rename_pair(rn *r, size_t dst_index, size_t src_index)
{
	r->src[src_index].p->rename_used++;
	r->dst[dst_index].from = r->src[src_index].p;
	r->dst[dst_index].is_rename = 1;
}

static int increment_count(rn *r, const char *old_dir, const char *new_dir)
{
	tm_state *s = r->s;
	intptr_t v;
	tm_map *counts;

	if (tm_map_get(r->info.dir_rename_count, old_dir, &v)) {
		counts = (tm_map *)v;
	} else {
		char *key = tm_strdup(&s->arena, old_dir);
		counts = tm_alloc(&s->arena, sizeof(*counts));
		if (!key || !counts)
			return nomem(s);
		tm_map_init(counts, &s->arena);
		if (tm_map_put(r->info.dir_rename_count, key, (intptr_t)counts) < 0)
			return nomem(s);
	}
	if (tm_map_get(counts, new_dir, &v))
		return tm_map_put(counts, new_dir, v + 1) < 0 ? nomem(s) : 0;
	{
		char *key =
		    new_dir == UNKNOWN_DIR ? (char *)UNKNOWN_DIR : tm_strdup(&s->arena, new_dir);
		if (!key || tm_map_put(counts, key, 1) < 0)
			return nomem(s);
	}
	return 0;
}

/* dirname_munge(): cut at the last '/', or make the string empty. */
static void dirname_munge(char *p)
{
	char *slash = strrchr(p, '/');
	if (!slash)
		slash = p;
	*slash = '\0';
}

static int update_dir_rename_counts(rn *r, tm_map *dirs_removed, const char *oldname,
				    const char *newname)
{
	tm_state *s = r->s;
	size_t ol = strlen(oldname), nl = strlen(newname);
	char *old_dir, *new_dir;
	const char new_dir_first_char = newname[0];
	int first_time = 1;

	if (!r->info.setup)
		return 0;
	/* two NULs after each: the munged parts stay readable */
	old_dir = tm_alloc(&s->arena, ol + 2);
	new_dir = tm_alloc(&s->arena, nl + 2);
	if (!old_dir || !new_dir)
		return nomem(s);
	memcpy(old_dir, oldname, ol);
	memcpy(new_dir, newname, nl);
	for (;;) {
		intptr_t drd_flag = TM_NOT_RELEVANT;

		dirname_munge(old_dir);
		if (r->info.relevant_source_dirs &&
		    !tm_map_has(r->info.relevant_source_dirs, old_dir))
			break;
		dirname_munge(new_dir);
		if (!first_time) {
			char *old_sub_dir = strchr(old_dir, '\0') + 1;
			char *new_sub_dir = strchr(new_dir, '\0') + 1;
			if (!*new_dir) {
				if (new_dir_first_char != old_sub_dir[0] ||
				    strcmp(old_sub_dir + 1, new_sub_dir))
					break;
			} else if (strcmp(old_sub_dir, new_sub_dir)) {
				break;
			}
		}
		if (dirs_removed)
			drd_flag = map_get0(dirs_removed, old_dir);
		if (drd_flag == TM_RELEVANT_FOR_SELF || first_time)
			if (increment_count(r, old_dir, new_dir) < 0)
				return -1;
		first_time = 0;
		if (drd_flag == TM_NOT_RELEVANT)
			break;
		if (!*old_dir || !*new_dir)
			break;
	}
	return 0;
}

/* The first highest count in git's hash-table order (ties matter). */
static int get_highest_rename_path(tm_state *s, const tm_map *counts, const char **best)
{
	intptr_t highest = 0;
	size_t *order = counts->n ? tm_alloc(&s->arena, counts->n * sizeof(*order)) : NULL;

	*best = NULL;
	if (counts->n && (!order || tm_git_hash_order(counts->keys, counts->n, order) < 0))
		return nomem(s);
	for (size_t o = 0; o < counts->n; o++) {
		size_t i = order[o];
		if (counts->dead[i])
			continue;
		if (counts->vals[i] > highest) {
			highest = counts->vals[i];
			*best = counts->keys[i];
		}
	}
	return 0;
}

static int initialize_dir_rename_info(rn *r, tm_map *dirs_removed)
{
	tm_state *s = r->s;
	tm_map *drc = r->info.dir_rename_count;

	r->info.setup = 1;
	tm_map_init(&r->info.idx_map, &s->arena);
	tm_map_init(&r->info.dir_rename_guess, &s->arena);
	r->info.relevant_source_dirs = dirs_removed;
	for (size_t i = 0; i < r->ndst; i++) {
		if (!r->dst[i].is_rename) {
			if (tm_map_put(&r->info.idx_map, r->dst[i].p->two, (intptr_t)(i + 1)) < 0)
				return nomem(s);
			continue;
		}
		if (update_dir_rename_counts(r, dirs_removed, r->dst[i].from->one,
					     r->dst[i].p->two) < 0)
			return -1;
	}
	for (size_t i = 0; i < drc->n; i++) {
		const char *best;
		if (drc->dead[i])
			continue;
		if (get_highest_rename_path(s, (tm_map *)drc->vals[i], &best) < 0)
			return -1;
		if (best && tm_map_put(&r->info.dir_rename_guess, drc->keys[i], (intptr_t)best) < 0)
			return nomem(s);
	}
	return 0;
}

/* The index lookups below return an index, -1 (not found), or IDX_NOMEM
 * (out of memory: the caller fails the merge). */
#define IDX_NOMEM (-2)

static long idx_possible_rename(rn *r, const char *filename)
{
	tm_state *s = r->s;
	intptr_t v;
	char *old_dir, *new_path;
	const char *new_dir, *base;

	if (!r->info.setup)
		return -1;
	if (!(old_dir = get_dirname(s, filename)))
		return IDX_NOMEM;
	if (!tm_map_get(&r->info.dir_rename_guess, old_dir, &v))
		return -1;
	new_dir = (const char *)v;
	base = get_basename(filename);
	new_path = tm_alloc(&s->arena, strlen(new_dir) + strlen(base) + 2);
	if (!new_path)
		return IDX_NOMEM;
	strcpy(new_path, new_dir);
	strcat(new_path, "/");
	strcat(new_path, base);
	if (!tm_map_get(&r->info.idx_map, new_path, &v))
		return -1;
	return (long)v - 1;
}

static int find_basename_matches(rn *r, int minimum_score, tm_map *relevant_sources,
				 tm_map *dirs_removed)
{
	tm_state *s = r->s;
	tm_map sources, dests;

	tm_map_init(&sources, &s->arena);
	tm_map_init(&dests, &s->arena);
	for (size_t i = 0; i < r->nsrc; i++) {
		const char *base = get_basename(r->src[i].p->one);
		if (tm_map_put(&sources, base, tm_map_has(&sources, base) ? -1 : (intptr_t)i) < 0)
			return nomem(s);
	}
	for (size_t i = 0; i < r->ndst; i++) {
		const char *base;
		if (r->dst[i].is_rename)
			continue;
		base = get_basename(r->dst[i].p->two);
		if (tm_map_put(&dests, base, tm_map_has(&dests, base) ? -1 : (intptr_t)i) < 0)
			return nomem(s);
	}
	for (size_t i = 0; i < r->nsrc; i++) {
		const char *filename = r->src[i].p->one, *base;
		intptr_t src_index = -1, dst_index = -1;
		int score;

		if (relevant_sources && !tm_map_has(relevant_sources, filename))
			continue;
		base = get_basename(filename);
		tm_map_get(&sources, base, &src_index);
		if (!tm_map_get(&dests, base, &dst_index))
			continue;
		if (src_index == -1 || dst_index == -1) {
			long k = idx_possible_rename(r, filename);
			if (k == IDX_NOMEM)
				return nomem(s);
			src_index = (intptr_t)i;
			dst_index = k;
		}
		if (dst_index == -1)
			continue;
		if (r->dst[dst_index].is_rename)
			continue;
		score = estimate_similarity(s, &r->src[src_index].p->src, &r->dst[dst_index].p->dst,
					    minimum_score);
		if (score < 0)
			return -1;
		if (score < minimum_score)
			continue;
		record_rename_pair(r, (size_t)dst_index, (size_t)src_index);
		if (update_dir_rename_counts(r, dirs_removed, r->src[src_index].p->one,
					     r->dst[dst_index].p->two) < 0)
			return -1;
	}
	return 0;
}

static void remove_unneeded_paths_from_src(rn *r, tm_map *interesting)
{
	size_t k = 0;
	for (size_t i = 0; i < r->nsrc; i++) {
		if (r->src[i].p->rename_used)
			continue;
		if (interesting && !tm_map_has(interesting, r->src[i].p->one))
			continue;
		r->src[k++] = r->src[i];
	}
	r->nsrc = k;
}

static int dir_rename_already_determinable(const tm_map *counts)
{
	intptr_t first = 0, second = 0, unknown = 0;
	for (size_t i = 0; i < counts->n; i++) {
		intptr_t count;
		if (counts->dead[i])
			continue;
		count = counts->vals[i];
		if (!strcmp(counts->keys[i], UNKNOWN_DIR)) {
			unknown = count;
		} else if (count >= first) {
			second = first;
			first = count;
		} else if (count >= second) {
			second = count;
		}
	}
	return first > second + unknown;
}

static int handle_early_known_dir_renames(rn *r, tm_map *relevant_sources, tm_map *dirs_removed)
{
	tm_state *s = r->s;
	tm_map *drc = r->info.dir_rename_count;
	size_t k = 0;

	for (size_t i = 0; i < r->nsrc; i++) {
		char *old_dir = get_dirname(s, r->src[i].p->one);
		if (!old_dir)
			return nomem(s);
		while (*old_dir && map_get0(dirs_removed, old_dir) != TM_NOT_RELEVANT) {
			if (increment_count(r, old_dir, UNKNOWN_DIR) < 0)
				return -1;
			if (!(old_dir = get_dirname(s, old_dir)))
				return nomem(s);
		}
	}
	for (size_t i = 0; i < drc->n; i++) {
		if (drc->dead[i])
			continue;
		if (map_get0(dirs_removed, drc->keys[i]) == TM_RELEVANT_FOR_SELF &&
		    dir_rename_already_determinable((tm_map *)drc->vals[i]) &&
		    tm_map_put(dirs_removed, drc->keys[i], TM_RELEVANT_FOR_ANCESTOR) < 0)
			return nomem(s);
	}
	for (size_t i = 0; i < r->nsrc; i++) {
		const char *path = r->src[i].p->one;
		intptr_t val = -1;
		tm_map_get(relevant_sources, path, &val);
		if (val == TM_RELEVANT_LOCATION) {
			int removable = 1;
			char *dir = get_dirname(s, path);
			if (!dir)
				return nomem(s);
			for (;;) {
				intptr_t res = map_get0(dirs_removed, dir);
				if (res == TM_NOT_RELEVANT)
					break;
				if (res == TM_RELEVANT_FOR_SELF) {
					removable = 0;
					break;
				}
				if (!(dir = get_dirname(s, dir)))
					return nomem(s);
			}
			if (removable) {
				if (tm_map_put(relevant_sources, path, TM_RELEVANT_NO_MORE) < 0)
					return nomem(s);
				continue;
			}
		}
		r->src[k++] = r->src[i];
	}
	r->nsrc = k;
	return 0;
}

typedef struct diff_score {
	long src, dst; /* dst < 0: unused */
	int score;
	int name_score;
	size_t order;
} diff_score;

static int score_compare(const diff_score *a, const diff_score *b)
{
	if (a->dst < 0)
		return 0 <= b->dst;
	else if (b->dst < 0)
		return -1;
	if (a->score == b->score)
		return b->name_score - a->name_score;
	return b->score - a->score;
}

static int score_compare_stable(const void *a_, const void *b_)
{
	const diff_score *a = a_, *b = b_;
	int c = score_compare(a, b);
	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order ? 1 : 0;
}

static void record_if_better(diff_score m[], const diff_score *o)
{
	int worst = 0;
	for (int i = 1; i < NUM_CANDIDATE_PER_DST; i++)
		if (score_compare(&m[i], &m[worst]) > 0)
			worst = i;
	if (score_compare(&m[worst], o) > 0)
		m[worst] = *o;
}

static int cleanup_dir_rename_info(rn *r, tm_map *dirs_removed)
{
	tm_map *drc = r->info.dir_rename_count;
	if (!r->info.setup)
		return 0;
	for (size_t i = 0; i < drc->n; i++) {
		if (drc->dead[i])
			continue;
		if (!map_get0(dirs_removed, drc->keys[i])) {
			drc->dead[i] = 1;
			drc->live--;
			continue;
		}
		tm_map_del((tm_map *)drc->vals[i], UNKNOWN_DIR);
	}
	return 0;
}

/* Detect renames on one side; pairs[side] is rewritten with statuses. */
/* Pair the remembered renames whose source side 1 deleted and whose
 * target it added, before any search (merge-ort's cached pairs). */
static void use_kept_renames(rn *r, size_t *count)
{
	const rq_tm_cache *c = r->s->cache;

	for (size_t k = 0; k < c->nren; k++) {
		long src = -1, dst = -1;
		for (size_t j = 0; j < r->nsrc && src < 0; j++)
			if (!r->src[j].p->rename_used && !strcmp(r->src[j].p->one, c->ren[k].from))
				src = (long)j;
		for (size_t i = 0; i < r->ndst && dst < 0 && src >= 0; i++)
			if (!r->dst[i].is_rename && !strcmp(r->dst[i].p->two, c->ren[k].to))
				dst = (long)i;
		if (src >= 0 && dst >= 0) {
			record_rename_pair(r, (size_t)dst, (size_t)src);
			(*count)++;
		}
	}
}

/* Remember side 1's renames of this merge for the next one (not those
 * side 2 made the same way: the next base has them, see the doc's
 * rename/rename(1to1)). */
static int keep_side1_renames(tm_state *s)
{
	const tm_pairs *q1 = &s->pairs[1], *q2 = &s->pairs[2];

	for (size_t i = 0; i < q1->n; i++) {
		const tm_pair *p = q1->v[i];
		int same = 0;
		if (p->status != 'R')
			continue;
		for (size_t k = 0; k < q2->n && !same; k++)
			same = q2->v[k]->status == 'R' && !strcmp(q2->v[k]->one, p->one) &&
			       !strcmp(q2->v[k]->two, p->two);
		if (!same && keep_rename(s->cache, p->one, p->two) < 0)
			return nomem(s);
	}
	return 0;
}

static int diffcore_rename(tm_state *s, int side)
{
	tm_pairs *q = &s->pairs[side];
	tm_map *relevant_sources = &s->relevant_sources[side];
	tm_map *dirs_removed = &s->dirs_removed[side];
	int minimum_score = DEFAULT_RENAME_SCORE;
	int rename_limit = s->cfg->rename_limit > 0 ? s->cfg->rename_limit : 7000;
	size_t rename_count = 0;
	rn r;

	memset(&r, 0, sizeof(r));
	r.s = s;
	r.side = side;
	r.info.dir_rename_count = &s->dir_rename_count[side];
	r.src = tm_alloc(&s->arena, (q->n + 1) * sizeof(*r.src));
	r.dst = tm_alloc(&s->arena, (q->n + 1) * sizeof(*r.dst));
	if (!r.src || !r.dst)
		return nomem(s);
	for (size_t i = 0; i < q->n; i++) {
		tm_pair *p = q->v[i];
		if (!p->one) {
			if (is_empty_blob(&p->dst.oid))
				continue;
			r.dst[r.ndst++].p = p;
		} else if (!p->two) {
			if (is_empty_blob(&p->src.oid))
				continue;
			r.src[r.nsrc++].p = p;
		}
	}
	if (!r.ndst || !r.nsrc)
		goto cleanup;
	if (side == 1 && s->chain)
		use_kept_renames(&r, &rename_count);

	/* exact renames: sources by blob id, each chain in source order */
	{
		size_t nb = 16;
		long *head, *next;
		while (nb < r.nsrc * 2)
			nb <<= 1;
		head = tm_alloc(&s->arena, nb * sizeof(*head));
		next = tm_alloc(&s->arena, r.nsrc * sizeof(*next));
		if (!head || !next)
			return nomem(s);
		for (size_t b = 0; b < nb; b++)
			head[b] = -1;
		for (size_t j = r.nsrc; j-- > 0;) {
			size_t b = oidhash(&r.src[j].p->src.oid) & (nb - 1);
			next[j] = head[b];
			head[b] = (long)j;
		}
		for (size_t i = 0; i < r.ndst; i++) {
			const tm_stage *target = &r.dst[i].p->dst;
			long best = -1;
			int best_score = -1, left = 100;
			if (r.dst[i].is_rename) /* a remembered rename */
				continue;
			for (long j = head[oidhash(&target->oid) & (nb - 1)]; j >= 0; j = next[j]) {
				const tm_pair *sp = r.src[j].p;
				int score;
				if (!git_oid_equal(&sp->src.oid, &target->oid))
					continue;
				if ((!IS_REG(sp->src.mode) || !IS_REG(target->mode)) &&
				    sp->src.mode != target->mode)
					continue;
				if (sp->rename_used)
					continue;
				score = 1 + basename_same(sp->one, r.dst[i].p->two);
				if (score > best_score) {
					best = j;
					best_score = score;
					if (score == 2)
						break;
				}
				if (!--left)
					break;
			}
			if (best >= 0) {
				record_rename_pair(&r, i, (size_t)best);
				rename_count++;
			}
		}
	}

	{
		int min_basename_score = minimum_score + (int)(0.5 * (MAX_SCORE - minimum_score));
		remove_unneeded_paths_from_src(&r, NULL);
		if (initialize_dir_rename_info(&r, dirs_removed) < 0)
			return -1;
		if (find_basename_matches(&r, min_basename_score, relevant_sources, dirs_removed) <
		    0)
			return -1;
		remove_unneeded_paths_from_src(&r, relevant_sources);
		if (handle_early_known_dir_renames(&r, relevant_sources, dirs_removed) < 0)
			return -1;
	}
	rename_count = 0;
	for (size_t i = 0; i < r.ndst; i++)
		rename_count += (size_t)r.dst[i].is_rename;
	{
		size_t num_destinations = r.ndst - rename_count, num_sources = r.nsrc;
		diff_score *mx;
		size_t dst_cnt = 0;

		if (!num_destinations || !num_sources)
			goto cleanup;
		if ((uint64_t)num_destinations * (uint64_t)num_sources >
		    (uint64_t)rename_limit * (uint64_t)rename_limit) {
			goto cleanup;
		}
		mx = calloc(NUM_CANDIDATE_PER_DST * num_destinations, sizeof(*mx));
		if (!mx)
			return nomem(s);
		for (size_t i = 0; i < r.ndst; i++) {
			diff_score *m;
			if (r.dst[i].is_rename)
				continue;
			m = &mx[dst_cnt * NUM_CANDIDATE_PER_DST];
			for (int j = 0; j < NUM_CANDIDATE_PER_DST; j++)
				m[j].dst = -1;
			for (size_t j = 0; j < r.nsrc; j++) {
				diff_score this_src;
				int score = estimate_similarity(s, &r.src[j].p->src,
								&r.dst[i].p->dst, minimum_score);
				if (score < 0) {
					free(mx);
					return -1;
				}
				this_src.score = score;
				this_src.name_score =
				    basename_same(r.src[j].p->one, r.dst[i].p->two);
				this_src.dst = (long)i;
				this_src.src = (long)j;
				this_src.order = 0;
				record_if_better(m, &this_src);
			}
			dst_cnt++;
		}
		/* STABLE_QSORT: ties keep their place in the matrix */
		for (size_t i = 0; i < dst_cnt * NUM_CANDIDATE_PER_DST; i++)
			mx[i].order = i;
		qsort(mx, dst_cnt * NUM_CANDIDATE_PER_DST, sizeof(*mx), score_compare_stable);
		for (size_t i = 0; i < dst_cnt * NUM_CANDIDATE_PER_DST; i++) {
			if (mx[i].dst < 0 || mx[i].score < minimum_score)
				break;
			if (r.dst[mx[i].dst].is_rename)
				continue;
			if (r.src[mx[i].src].p->rename_used)
				continue;
			record_rename_pair(&r, (size_t)mx[i].dst, (size_t)mx[i].src);
			if (update_dir_rename_counts(&r, dirs_removed, r.src[mx[i].src].p->one,
						     r.dst[mx[i].dst].p->two) < 0) {
				free(mx);
				return -1;
			}
		}
		free(mx);
	}
cleanup:
	/* write back: renamed destinations become renames, used sources go */
	{
		size_t k = 0;
		for (size_t i = 0; i < r.ndst; i++) {
			if (!r.dst[i].is_rename)
				continue;
			tm_pair *p = r.dst[i].p;
			p->one = r.dst[i].from->one;
			p->src = r.dst[i].from->src;
		}
		for (size_t i = 0; i < q->n; i++) {
			tm_pair *p = q->v[i];
			if (p->one && !p->two && p->rename_used)
				continue;
			q->v[k++] = p;
		}
		q->n = k;
	}
	return cleanup_dir_rename_info(&r, dirs_removed);
}

static void resolve_statuses(tm_pairs *q)
{
	for (size_t i = 0; i < q->n; i++) {
		tm_pair *p = q->v[i];
		p->status = !p->one ? 'A' : !p->two ? 'D' : strcmp(p->one, p->two) ? 'R' : 0;
	}
}

static int possible_side_renames(tm_state *s, int side)
{
	return s->pairs[side].n > 0 && s->relevant_sources[side].live > 0;
}

/* ---- directory renames ----------------------------------------------------- */

static int get_provisional_directory_renames(tm_state *s, int side)
{
	tm_map *drc = &s->dir_rename_count[side];
	for (size_t i = 0; i < drc->n; i++) {
		const tm_map *counts;
		intptr_t max = 0, bad_max = 0;
		const char *best = NULL;
		if (drc->dead[i])
			continue;
		counts = (const tm_map *)drc->vals[i];
		for (size_t k = 0; k < counts->n; k++) {
			intptr_t count;
			if (counts->dead[k])
				continue;
			count = counts->vals[k];
			if (count == max)
				bad_max = max;
			else if (count > max) {
				max = count;
				best = counts->keys[k];
			}
		}
		if (max == 0)
			continue;
		if (bad_max == max) {
			s->unclean = 1;
			if (tm_add_conflict(s, drc->keys[i], RQ_CONFLICT_DIR_RENAME) < 0)
				return -1;
		} else if (tm_map_put(&s->dir_renames[side], drc->keys[i], (intptr_t)best) < 0) {
			return nomem(s);
		}
	}
	return 0;
}

static void handle_directory_level_conflicts(tm_state *s)
{
	tm_map *d1 = &s->dir_renames[1], *d2 = &s->dir_renames[2];
	for (size_t i = 0; i < d1->n; i++) {
		if (d1->dead[i] || !tm_map_has(d2, d1->keys[i]))
			continue;
		tm_map_del(d2, d1->keys[i]);
		d1->dead[i] = 1;
		d1->live--;
	}
}

/* The directory rename covering path (closest ancestor), or -1. */
static long check_dir_renamed(tm_state *s, const char *path, const tm_map *dir_renames,
			      const char **old_dir, const char **new_dir)
{
	char *temp = tm_strdup(&s->arena, path), *end;
	intptr_t v;
	if (!temp)
		return IDX_NOMEM;
	while ((end = strrchr(temp, '/'))) {
		*end = '\0';
		if (tm_map_get(dir_renames, temp, &v)) {
			*old_dir = temp;
			*new_dir = (const char *)v;
			return 0;
		}
	}
	return -1;
}

static char *apply_dir_rename(tm_state *s, const char *old_dir, const char *new_dir,
			      const char *old_path)
{
	size_t oldlen = strlen(old_dir), nl = strlen(new_dir);
	char *out;
	if (!*new_dir)
		oldlen++;
	out = tm_alloc(&s->arena, nl + strlen(old_path + oldlen) + 1);
	if (!out)
		return NULL;
	memcpy(out, new_dir, nl);
	strcpy(out + nl, old_path + oldlen);
	return out;
}

typedef struct collision_info {
	const char **sources;
	size_t n, cap;
	int reported_already;
} collision_info;

static int compute_collisions(tm_state *s, tm_map *collisions, const tm_map *dir_renames,
			      tm_pairs *pairs)
{
	tm_map_init(collisions, &s->arena);
	if (!dir_renames->live)
		return 0;
	for (size_t i = 0; i < pairs->n; i++) {
		tm_pair *p = pairs->v[i];
		const char *od, *nd;
		char *new_path;
		intptr_t v;
		collision_info *ci;
		long r;

		if (p->status != 'A' && p->status != 'R')
			continue;
		r = check_dir_renamed(s, p->two, dir_renames, &od, &nd);
		if (r == IDX_NOMEM)
			return nomem(s);
		if (r < 0)
			continue;
		if (!(new_path = apply_dir_rename(s, od, nd, p->two)))
			return nomem(s);
		if (tm_map_get(collisions, new_path, &v)) {
			ci = (collision_info *)v;
		} else {
			ci = tm_alloc(&s->arena, sizeof(*ci));
			if (!ci || tm_map_put(collisions, new_path, (intptr_t)ci) < 0)
				return nomem(s);
		}
		/* a sorted set of source paths */
		size_t pos = 0;
		int found = 0;
		while (pos < ci->n) {
			int c = strcmp(ci->sources[pos], p->two);
			if (!c) {
				found = 1;
				break;
			}
			if (c > 0)
				break;
			pos++;
		}
		if (found)
			continue;
		if (ci->n == ci->cap) {
			size_t ncap = ci->cap ? ci->cap * 2 : 4;
			const char **nv = tm_alloc(&s->arena, ncap * sizeof(*nv));
			if (!nv)
				return nomem(s);
			if (ci->n)
				memcpy(nv, ci->sources, ci->n * sizeof(*nv));
			ci->sources = nv;
			ci->cap = ncap;
		}
		memmove(&ci->sources[pos + 1], &ci->sources[pos],
			(ci->n - pos) * sizeof(*ci->sources));
		ci->sources[pos] = p->two;
		ci->n++;
	}
	return 0;
}

static int path_in_way(tm_state *s, const char *path, unsigned side_mask)
{
	tm_entry *e = tm_entry_get(s, path);
	if (!e || e->removed)
		return 0;
	return e->clean || (side_mask & (e->filemask | e->dirmask));
}

static char *handle_path_level_conflicts(tm_state *s, const char *path, int side_index,
					 const char *old_dir, const char *new_dir,
					 tm_map *collisions)
{
	char *new_path = apply_dir_rename(s, old_dir, new_dir, path);
	collision_info *ci;
	intptr_t v;
	int clean = 1;

	if (!new_path) {
		nomem(s);
		return NULL;
	}
	if (!tm_map_get(collisions, new_path, &v)) {
		tm_unsure(s, "directory rename without a collision record");
		return NULL;
	}
	ci = (collision_info *)v;
	if (ci->reported_already) {
		clean = 0;
	} else if (path_in_way(s, new_path, 1u << side_index)) {
		ci->reported_already = 1;
		clean = 0;
	} else if (ci->n > 1) {
		ci->reported_already = 1;
		clean = 0;
	}
	if (!clean) {
		s->unclean = 1;
		tm_add_conflict(s, new_path, RQ_CONFLICT_DIR_RENAME);
		return NULL;
	}
	return new_path;
}

static char *check_for_directory_rename(tm_state *s, const char *path, int side_index,
					const tm_map *dir_renames, const tm_map *exclusions,
					tm_map collisions[3])
{
	const char *od, *nd;
	long r;

	if (!dir_renames->live)
		return NULL;
	if (tm_map_has(&collisions[3 - side_index], path))
		return NULL;
	r = check_dir_renamed(s, path, dir_renames, &od, &nd);
	if (r == IDX_NOMEM) {
		nomem(s);
		return NULL;
	}
	if (r < 0)
		return NULL;
	if (tm_map_has(exclusions, nd))
		return NULL; /* the target directory was itself renamed */
	return handle_path_level_conflicts(s, path, side_index, od, nd, &collisions[side_index]);
}

/* Move the entry of pair->two to new_path (creating parent directories). */
/*
 * A directory rename meets a state merge-ort does not handle cleanly (it
 * asserts, or leaves entries it then mishandles). With
 * merge.directoryRenames=conflict the moved path is a conflict whatever
 * happens next, so say so; with =true, fall back.
 */
static int dir_rename_trouble(tm_state *s, const char *new_path, int df, const char *why)
{
	tm_entry *at = tm_entry_get(s, new_path);
	/* with =true, an entry that is also a directory, or a file moved onto
	 * a directory, ends in a file/directory conflict (or git dies);
	 * anything else is left to the fallback */
	if (s->cfg->dir_renames == RQ_TM_DIRREN_TRUE && !df && !(at && at->dirmask && !at->clean)) {
		tm_unsure(s, why);
		return 0;
	}
	s->unclean = 1;
	s->forced_conflict = 1;
	return tm_add_conflict(s, new_path, RQ_CONFLICT_DIR_RENAME);
}

static int apply_directory_rename_modifications(tm_state *s, tm_pair *pair, char *new_path)
{
	tm_entry *ci = tm_entry_get(s, pair->two), *new_ci, *dir;
	const char *slash;

	if (!ci || ci->clean || ci->removed || (ci->filemask != 2 && ci->filemask != 4) ||
	    ci->dirmask)
		return dir_rename_trouble(s, new_path, ci && ci->dirmask,
					  "dir rename of an unexpected entry");
	/* parent directories missing from paths */
	slash = strrchr(new_path, '/');
	if (slash) {
		char *parent = tm_strndup(&s->arena, new_path, (size_t)(slash - new_path));
		if (!parent)
			return nomem(s);
		dir = tm_entry_get(s, parent);
		if (!dir) {
			/* create the chain from the top */
			char *p = parent;
			for (;;) {
				char *sl = strchr(p, '/');
				char *prefix = tm_strndup(
				    &s->arena, parent, sl ? (size_t)(sl - parent) : strlen(parent));
				tm_entry *d;
				if (!prefix)
					return nomem(s);
				d = tm_entry_get(s, prefix);
				if (!d) {
					if (!(d = tm_entry_insert(s, prefix)))
						return -1;
					d->walked = 1;
					d->dirmask = ci->filemask;
					d->is_null = 1;
				} else if (d->clean || !d->walked) {
					return dir_rename_trouble(s, new_path, 0,
								  "dir rename into a resolved dir");
				}
				if (!sl)
					break;
				p = sl + 1;
			}
			dir = tm_entry_get(s, parent);
		} else if (dir->clean || !dir->walked || dir->removed) {
			return dir_rename_trouble(s, new_path, 0, "dir rename into a resolved dir");
		}
	} else {
		dir = s->root;
	}
	(void)dir;

	/* take ci out of its old place */
	ci->removed = 1;
	tm_map_del(&s->paths, ci->path);

	new_ci = tm_entry_get(s, new_path);
	if (!new_ci) {
		tm_entry *moved = tm_entry_insert(s, new_path);
		if (!moved)
			return -1;
		int ck = moved->conflict_kind;
		tm_entry *d = moved->dir;
		size_t off = moved->base_off;
		/* the new entry takes ci's state */
		*moved = *ci;
		moved->path = new_path;
		moved->dir = d;
		moved->base_off = off;
		moved->removed = 0;
		moved->conflict_kind = ck;
		moved->kids = NULL;
		moved->nkids = moved->capkids = 0;
		ci = moved;
	} else {
		int index;
		if (new_ci->clean || (new_ci->filemask & ci->filemask))
			return dir_rename_trouble(s, new_path, 0,
						  "dir rename onto a resolved path");
		new_ci->filemask |= ci->filemask;
		if (new_ci->dirmask)
			new_ci->df_conflict = 1;
		index = (int)ci->filemask >> 1;
		new_ci->pathnames[index] = ci->pathnames[index];
		new_ci->stages[index] = ci->stages[index];
		ci = new_ci;
	}
	if (s->cfg->dir_renames != RQ_TM_DIRREN_TRUE) {
		ci->path_conflict = 1;
		ci->conflict_kind = RQ_CONFLICT_DIR_RENAME;
	}
	pair->two = new_path;
	return 0;
}

static int collect_renames(tm_state *s, tm_pairs *result, int side_index, tm_map collisions[3],
			   const tm_map *dir_renames_for_side, const tm_map *rename_exclusions)
{
	tm_pairs *side_pairs = &s->pairs[side_index];

	for (size_t i = 0; i < side_pairs->n; i++) {
		tm_pair *p = side_pairs->v[i];
		char *new_path;

		if (p->status != 'A' && p->status != 'R')
			continue;
		new_path = check_for_directory_rename(s, p->two, side_index, dir_renames_for_side,
						      rename_exclusions, collisions);
		if (!new_path && s->oom)
			return -1;
		if (p->status != 'R' && !new_path)
			continue;
		if (new_path && apply_directory_rename_modifications(s, p, new_path) < 0)
			return -1;
		p->side = side_index;
		p->seq = result->n;
		if (tm_pair_push(s, result, p) < 0)
			return -1;
	}
	return 0;
}

static int pair_cmp(const void *a_, const void *b_)
{
	const tm_pair *a = *(tm_pair *const *)a_, *b = *(tm_pair *const *)b_;
	int c = strcmp(a->one ? a->one : a->path0, b->one ? b->one : b->path0);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int mark(tm_state *s, tm_entry *e, int kind)
{
	e->path_conflict = 1;
	if (e->conflict_kind < 0)
		e->conflict_kind = kind;
	(void)s;
	return 0;
}

static int process_renames(tm_state *s, tm_pairs *renames)
{
	for (size_t i = 0; i < renames->n; ++i) {
		tm_pair *pair = renames->v[i];
		tm_entry *oldinfo = pair->one ? tm_entry_get(s, pair->one) : NULL;
		tm_entry *newinfo = tm_entry_get(s, pair->two);
		const char *oldpath = pair->one, *newpath = pair->two;
		int target_index, other_source_index, source_deleted, collision, type_changed;
		unsigned old_sidemask;

		if (!oldinfo || oldinfo->clean)
			continue;
		if (i + 1 < renames->n && renames->v[i + 1]->one &&
		    !strcmp(oldpath, renames->v[i + 1]->one)) {
			/* rename/rename(1to2) or (1to1) */
			const char *p1 = newpath, *p2 = renames->v[i + 1]->two;
			tm_entry *base = oldinfo, *side1 = tm_entry_get(s, p1),
				 *side2 = tm_entry_get(s, p2);
			if (!side1 || !side2 || side1->clean || side2->clean) {
				tm_unsure(s, "rename/rename of resolved entries");
				return 0;
			}
			if (!strcmp(p1, p2)) {
				side1->stages[0] = base->stages[0];
				side1->filemask |= 1;
				side1->pathnames[0] = oldpath;
				base->is_null = 1;
				base->clean = 1;
				i++;
				continue;
			}
			mark(s, side1, RQ_CONFLICT_RENAME_RENAME);
			mark(s, side2, RQ_CONFLICT_RENAME_RENAME);
			mark(s, base, RQ_CONFLICT_RENAME_RENAME);
			i++;
			continue;
		}
		if (!newinfo || newinfo->clean) {
			tm_unsure(s, "rename onto a resolved entry");
			return 0;
		}
		target_index = pair->side;
		other_source_index = 3 - target_index;
		old_sidemask = 1u << other_source_index;
		source_deleted = oldinfo->filemask == 1;
		collision = (newinfo->filemask & old_sidemask) != 0;
		type_changed =
		    !source_deleted && (IS_REG(oldinfo->stages[other_source_index].mode) !=
					IS_REG(newinfo->stages[target_index].mode));
		if (type_changed && collision)
			collision = 0;
		if (!source_deleted && !(oldinfo->filemask & old_sidemask)) {
			tm_unsure(s, "rename source missing on the other side");
			return 0;
		}
		if (collision && !source_deleted) {
			/* rename/add or rename/rename(2to1): merge the renamed file
			 * first, then it meets the other side's file at newpath */
			tm_stage merged;
			int clean, why;
			const tm_entry *side_a = target_index == 1 ? newinfo : oldinfo;
			const tm_entry *side_b = target_index == 2 ? newinfo : oldinfo;
			memset(&merged, 0, sizeof(merged));
			if ((side_a->stages[1].mode & S_IFMT_) !=
			    (side_b->stages[2].mode & S_IFMT_)) {
				tm_unsure(s, "rename/add of different kinds");
				return 0;
			}
			if (tm_content_merge(s, oldpath, &oldinfo->stages[0], &side_a->stages[1],
					     &side_b->stages[2], &merged, &clean, &why) < 0)
				return -1;
			newinfo->stages[target_index] = merged;
			/* merge-ort puts the conflicted text (with markers) there
			 * and lets the path resolve as usual; that text is not
			 * reproduced here, so the path must not depend on it */
			if (!clean && (why & TM_CM_TEXT))
				newinfo->dirty |= 1u << target_index;
		} else if (collision && source_deleted) {
			mark(s, newinfo, RQ_CONFLICT_RENAME_DELETE);
		} else {
			newinfo->stages[0] = oldinfo->stages[0];
			newinfo->filemask |= 1;
			newinfo->pathnames[0] = oldpath;
			if (type_changed) {
				memset(&oldinfo->stages[0], 0, sizeof(oldinfo->stages[0]));
				oldinfo->filemask &= 0x06;
			} else if (source_deleted) {
				mark(s, newinfo, RQ_CONFLICT_RENAME_DELETE);
			} else {
				newinfo->stages[other_source_index] =
				    oldinfo->stages[other_source_index];
				newinfo->filemask |= old_sidemask;
				newinfo->pathnames[other_source_index] = oldpath;
			}
		}
		if (!type_changed) {
			oldinfo->is_null = 1;
			oldinfo->clean = 1;
			memset(&oldinfo->result, 0, sizeof(oldinfo->result));
		}
	}
	return 0;
}

int tm_detect_and_process_renames(tm_state *s)
{
	tm_pairs combined;
	tm_map collisions[3];

	memset(&combined, 0, sizeof(combined));
	if (!possible_side_renames(s, 1) && !possible_side_renames(s, 2))
		return 0;
	for (int side = 1; side <= 2; side++) {
		if (possible_side_renames(s, side) && diffcore_rename(s, side) < 0)
			return -1;
		resolve_statuses(&s->pairs[side]);
	}
	if (keep_side1_renames(s) < 0)
		return -1;
	if (s->cfg->dir_renames != RQ_TM_DIRREN_NONE) {
		if (get_provisional_directory_renames(s, 1) < 0 ||
		    get_provisional_directory_renames(s, 2) < 0)
			return -1;
		handle_directory_level_conflicts(s);
	}
	tm_map_init(&collisions[0], &s->arena);
	for (int i = 1; i <= 2; i++)
		if (compute_collisions(s, &collisions[i], &s->dir_renames[3 - i], &s->pairs[i]) < 0)
			return -1;
	if (collect_renames(s, &combined, 1, collisions, &s->dir_renames[2], &s->dir_renames[1]) <
		0 ||
	    collect_renames(s, &combined, 2, collisions, &s->dir_renames[1], &s->dir_renames[2]) <
		0)
		return -1;
	if (s->unsure)
		return 0;
	if (combined.n)
		qsort(combined.v, combined.n, sizeof(*combined.v), pair_cmp);
	return process_renames(s, &combined);
}
