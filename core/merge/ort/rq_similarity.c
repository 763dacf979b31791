/* SPDX-License-Identifier: GPL-2.0-only; follows git's diffcore-delta.c and diffcore-rename.c */
/*
 * rq_similarity: the similarity of two blobs, as git's rename detection
 * scores it, with a cache across merges (see rq_similarity.h).
 *
 * git's measure (diffcore-delta.c): cut a blob into chunks that end at a
 * newline or after 64 bytes, hash each chunk (ignoring the CR of a CRLF in
 * text), and count the bytes per hash. The similarity of src to dst is the
 * number of bytes of src whose chunk hash also occurs in dst (at most as
 * often as there), over the larger size, on a scale of 60000. Pairs whose
 * sizes differ too much for the minimum score are not scored at all
 * (estimate_similarity's early exit), and a blob is only read when a score
 * needs its chunks.
 *
 * Where it differs from git: the chunk counts live in a cache kept by the
 * merger, not in the diff's filespecs, and each score is remembered by the
 * pair of blob ids. Neither changes a score.
 */
#include "rq_similarity.h"

#include "rq_hindex.h"
#include "rq_mem.h"

#include <stdlib.h>
#include <string.h>

/* diffcore-delta.c's modulus for chunk hashes. */
#define HASHBASE 107927

/* The cache is cleared between merges past either bound. */
#define TRIM_ENTRIES 65536
#define TRIM_BYTES   (64u << 20)

/* The bytes of all chunks with one hash (diffcore-delta's spanhash). */
typedef struct span {
	unsigned int hashval, cnt;
} span;

/* What the cache knows of one blob. */
typedef struct blob_info {
	git_oid oid;
	size_t size;
	span *spans; /* sorted by hashval; NULL until computed */
	size_t nspans;
	int have_size, have_spans;
} blob_info;

/* A score computed: src's similarity to dst, asked with min_score. */
typedef struct pair_score {
	git_oid src, dst;
	int min_score, score;
} pair_score;

struct rq_similarity_cache {
	blob_info *blobs; /* entries move when the array grows: keep indices */
	size_t nblobs, capblobs;
	rq_hindex blob_index;
	pair_score *scores;
	size_t nscores, capscores;
	rq_hindex score_index;
	size_t bytes;			       /* memory held, for trimming */
	size_t scores_computed, scores_reused; /* over the cache's life */
};

int rq_similarity_cache_new(rq_similarity_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

/* Empty the cache, keeping its statistics. */
static void cache_clear(rq_similarity_cache *c)
{
	size_t computed = c->scores_computed, reused = c->scores_reused;

	for (size_t i = 0; i < c->nblobs; i++)
		free(c->blobs[i].spans);
	free(c->blobs);
	free(c->blob_index.slot);
	free(c->scores);
	free(c->score_index.slot);
	memset(c, 0, sizeof(*c));
	c->scores_computed = computed;
	c->scores_reused = reused;
}

void rq_similarity_cache_free(rq_similarity_cache *c)
{
	if (!c)
		return;
	cache_clear(c);
	free(c);
}

void rq_similarity_cache_trim(rq_similarity_cache *c)
{
	if (c->nblobs >= TRIM_ENTRIES || c->bytes > TRIM_BYTES)
		cache_clear(c);
}

void rq_similarity_cache_stats(const rq_similarity_cache *c, size_t *computed, size_t *reused)
{
	*computed = c->scores_computed;
	*reused = c->scores_reused;
}

/* ---- the score cache ---------------------------------------------------------- */

static size_t score_hash(const git_oid *src, const git_oid *dst, int min_score)
{
	return rq_hindex_hash_oid(src) ^ (rq_hindex_hash_oid(dst) * 0x9e3779b97f4a7c15ull) ^
	       (size_t)min_score;
}

static size_t score_hash_at(const void *ctx, size_t i)
{
	const pair_score *p = &((const rq_similarity_cache *)ctx)->scores[i];
	return score_hash(&p->src, &p->dst, p->min_score);
}

static int score_is(const void *ctx, size_t i, const void *key)
{
	const pair_score *p = &((const rq_similarity_cache *)ctx)->scores[i], *k = key;
	return p->min_score == k->min_score && git_oid_equal(&p->src, &k->src) &&
	       git_oid_equal(&p->dst, &k->dst);
}

/* The remembered score, or -1. */
static int score_get(const rq_similarity_cache *c, const pair_score *key)
{
	long i = rq_hindex_find(&c->score_index, score_hash(&key->src, &key->dst, key->min_score),
				score_is, c, key);
	return i < 0 ? -1 : c->scores[i].score;
}

/* Remember a score (best effort: out of memory just forgets it). The
 * memory count is the one of the open-addressed table this replaced, which
 * decides when the cache is trimmed. */
static void score_put(rq_similarity_cache *c, const pair_score *key)
{
	pair_score *nv = rq_mem_grow(c->scores, &c->capscores, c->nscores + 1, sizeof(*nv), 512);

	if (!nv)
		return;
	c->scores = nv;
	if (rq_hindex_reserve(&c->score_index, 1024, c->nscores, score_hash_at, c) < 0)
		return;
	c->scores[c->nscores] = *key;
	rq_hindex_add(&c->score_index, score_hash(&key->src, &key->dst, key->min_score),
		      c->nscores);
	c->nscores++;
	c->bytes += 2 * sizeof(pair_score);
}

/* ---- the blob cache ------------------------------------------------------------ */

static size_t blob_hash_at(const void *ctx, size_t i)
{
	return rq_hindex_hash_oid(&((const rq_similarity_cache *)ctx)->blobs[i].oid);
}

static int blob_is(const void *ctx, size_t i, const void *key)
{
	return git_oid_equal(&((const rq_similarity_cache *)ctx)->blobs[i].oid, key);
}

/* The index of the cache entry for a blob (created empty on demand); -1 out
 * of memory. */
static long blob_entry(rq_similarity_cache *c, const git_oid *id)
{
	long i = rq_hindex_find(&c->blob_index, rq_hindex_hash_oid(id), blob_is, c, id);
	blob_info *nv;

	if (i >= 0)
		return i;
	if (!(nv = rq_mem_grow(c->blobs, &c->capblobs, c->nblobs + 1, sizeof(*nv), 64)))
		return -1;
	c->blobs = nv;
	if (rq_hindex_reserve(&c->blob_index, 128, c->nblobs, blob_hash_at, c) < 0)
		return -1;
	memset(&c->blobs[c->nblobs], 0, sizeof(*c->blobs));
	git_oid_cpy(&c->blobs[c->nblobs].oid, id);
	rq_hindex_add(&c->blob_index, rq_hindex_hash_oid(id), c->nblobs);
	return (long)c->nblobs++;
}

/* ---- chunk counts (diffcore-delta.c) ---------------------------------------- */

/* The spans of one blob while they are counted: dense, with an index. */
typedef struct span_table {
	span *v;
	size_t n, cap;
	rq_hindex index;
} span_table;

static size_t span_hash_at(const void *ctx, size_t i)
{
	return ((const span_table *)ctx)->v[i].hashval;
}

static int span_is(const void *ctx, size_t i, const void *key)
{
	return ((const span_table *)ctx)->v[i].hashval == *(const unsigned int *)key;
}

/* add_spanhash(): count cnt more bytes under hashval. 0, or -1. */
static int add_span(span_table *t, unsigned int hashval, unsigned int cnt)
{
	long i = rq_hindex_find(&t->index, hashval, span_is, t, &hashval);
	span *nv;

	if (i >= 0) {
		t->v[i].cnt += cnt;
		return 0;
	}
	if (!(nv = rq_mem_grow(t->v, &t->cap, t->n + 1, sizeof(*nv), 256)))
		return -1;
	t->v = nv;
	if (rq_hindex_reserve(&t->index, 512, t->n, span_hash_at, t) < 0)
		return -1;
	t->v[t->n].hashval = hashval;
	t->v[t->n].cnt = cnt;
	rq_hindex_add(&t->index, hashval, t->n++);
	return 0;
}

static int span_cmp(const void *a_, const void *b_)
{
	const span *a = a_, *b = b_;
	return a->hashval < b->hashval ? -1 : a->hashval > b->hashval ? 1 : 0;
}

/*
 * hash_chars(): the byte counts of a blob per chunk hash, sorted by hash
 * (git sorts them too, for diffcore_count_changes' merge walk). 0 with
 * *out (malloc'd) and *nout, or -1 out of memory.
 */
static int hash_chars(const unsigned char *buf, size_t sz, span **out, size_t *nout)
{
	int is_text = !rq_xmerge_buffer_is_binary((const char *)buf, sz);
	span_table t = {NULL, 0, 0, {NULL, 0, 0}};
	unsigned int accum1 = 0, accum2 = 0, cnt = 0;

	while (sz) {
		unsigned int c = *buf++, old_1 = accum1;
		sz--;
		if (is_text && c == '\r' && sz && *buf == '\n')
			continue;
		accum1 = (accum1 << 7) ^ (accum2 >> 25);
		accum2 = (accum2 << 7) ^ (old_1 >> 25);
		accum1 += c;
		if (++cnt < 64 && c != '\n')
			continue;
		if (add_span(&t, (accum1 + accum2 * 0x61) % HASHBASE, cnt) < 0)
			goto fail;
		cnt = 0;
		accum1 = accum2 = 0;
	}
	if (cnt && add_span(&t, (accum1 + accum2 * 0x61) % HASHBASE, cnt) < 0)
		goto fail;
	free(t.index.slot);
	qsort(t.v, t.n, sizeof(*t.v), span_cmp);
	*out = t.v;
	*nout = t.n;
	return 0;
fail:
	free(t.index.slot);
	free(t.v);
	return -1;
}

/* ---- scoring ------------------------------------------------------------------- */

/* The size of a blob, from its header (no need to read it yet). */
static int blob_size(rq_ort_merge *merge, blob_info *b)
{
	size_t len;
	git_object_t type;

	if (b->have_size)
		return 0;
	if (git_odb_read_header(&len, &type, merge->odb, &b->oid) < 0)
		return rq_error_git(merge->err, "cannot read blob header");
	b->size = len;
	b->have_size = 1;
	return 0;
}

/* The chunk counts of a blob (reads it). */
static int blob_spans(rq_ort_merge *merge, blob_info *b)
{
	git_blob *blob;

	if (b->have_spans)
		return 0;
	if (rq_ort_read_blob(merge, &b->oid, &blob) < 0)
		return -1;
	if (hash_chars(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), &b->spans,
		       &b->nspans) < 0) {
		git_blob_free(blob);
		return rq_ort_nomem(merge);
	}
	b->size = (size_t)git_blob_rawsize(blob);
	b->have_size = 1;
	b->have_spans = 1;
	merge->similarity->bytes += b->nspans * sizeof(span) + sizeof(*b);
	git_blob_free(blob);
	return 0;
}

/* diffcore_count_changes(): the bytes of src whose chunk hash dst has too
 * (at most as many as dst has), walking both sorted lists together. */
static unsigned long copied_bytes(const blob_info *src, const blob_info *dst)
{
	const span *a = src->spans, *ae = src->spans + src->nspans;
	const span *d = dst->spans, *de = dst->spans + dst->nspans;
	unsigned long sc = 0;

	for (; a < ae; a++) {
		unsigned int dst_cnt = 0;
		while (d < de && d->hashval < a->hashval)
			d++;
		if (d < de && d->hashval == a->hashval)
			dst_cnt = (d++)->cnt;
		sc += a->cnt < dst_cnt ? a->cnt : dst_cnt;
	}
	return sc;
}

/* The score itself (the body of estimate_similarity()). */
static int score_blobs(rq_ort_merge *merge, const rq_ort_stage *src, const rq_ort_stage *dst,
		       int minimum_score)
{
	rq_similarity_cache *c = merge->similarity;
	long is, id;
	unsigned long max_size, base_size, delta_size;

	if ((is = blob_entry(c, &src->oid)) < 0 || (id = blob_entry(c, &dst->oid)) < 0)
		return rq_ort_nomem(merge);
	if (blob_size(merge, &c->blobs[is]) < 0 || blob_size(merge, &c->blobs[id]) < 0)
		return -1;
	max_size = c->blobs[is].size > c->blobs[id].size ? c->blobs[is].size : c->blobs[id].size;
	base_size = c->blobs[is].size < c->blobs[id].size ? c->blobs[is].size : c->blobs[id].size;
	delta_size = max_size - base_size;
	/* the sizes alone rule out minimum_score */
	if (max_size * (RQ_SIMILARITY_MAX_SCORE - minimum_score) <
	    delta_size * RQ_SIMILARITY_MAX_SCORE)
		return 0;
	if (blob_spans(merge, &c->blobs[is]) < 0 || blob_spans(merge, &c->blobs[id]) < 0)
		return -1;
	if (!c->blobs[id].size)
		return 0;
	return (int)(copied_bytes(&c->blobs[is], &c->blobs[id]) * RQ_SIMILARITY_MAX_SCORE /
		     max_size);
}

int rq_similarity_estimate(rq_ort_merge *merge, const rq_ort_stage *src, const rq_ort_stage *dst,
			   int minimum_score)
{
	rq_similarity_cache *c = merge->similarity;
	pair_score key;
	int score;

	if (!rq_ort_mode_is_reg(src->mode) || !rq_ort_mode_is_reg(dst->mode))
		return 0;
	memset(&key, 0, sizeof(key));
	git_oid_cpy(&key.src, &src->oid);
	git_oid_cpy(&key.dst, &dst->oid);
	key.min_score = minimum_score;
	if ((score = score_get(c, &key)) >= 0) {
		c->scores_reused++;
		return score;
	}
	if ((score = score_blobs(merge, src, dst, minimum_score)) < 0)
		return -1;
	c->scores_computed++;
	key.score = score;
	score_put(c, &key);
	return score;
}
