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
#include "rq_ortodb.h"

#include "rq_hindex.h"
#include "rq_mem.h"

#include <stdlib.h>
#include <string.h>

/* diffcore-delta.c's modulus for chunk hashes. */
#define HASHBASE 107927

/* diffcore-delta.c's longest chunk (a chunk also ends at a newline). */
#define MAX_CHUNK_BYTES 64

/* First sizes of the cache's arrays and indexes (then doubling). */
#define FIRST_SCORES	 512
#define FIRST_BLOBS	 64
#define FIRST_SPANS	 256
#define FIRST_SPAN_SLOTS 512

/* The cache is cleared between merges past either bound. */
#define TRIM_ENTRIES 65536
#define TRIM_BYTES   (64u << 20)

/* The bytes of all chunks with one hash (diffcore-delta's spanhash). */
typedef struct span {
	unsigned int hashval, cnt;
} span;

/* What the cache knows of one blob. */
typedef struct blob_info {
	rq_oid oid;
	size_t size;
	span *spans; /* sorted by hashval; NULL until computed */
	size_t nspans;
	int have_size, have_spans;
} blob_info;

/* A score computed: src's similarity to dst, asked with min_score. */
typedef struct pair_score {
	rq_oid src, dst;
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

/* An empty cache; the statistics start at zero and survive trimming. */
int rq_similarity_cache_new(rq_similarity_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

/*
 * Empty the cache, keeping its statistics (they count over the merger's
 * life, for the replay's stats).
 */
static void cache_clear(rq_similarity_cache *cache)
{
	size_t computed = cache->scores_computed, reused = cache->scores_reused;

	for (size_t i = 0; i < cache->nblobs; i++)
		free(cache->blobs[i].spans);
	free(cache->blobs);
	free(cache->blob_index.slot);
	free(cache->scores);
	free(cache->score_index.slot);
	memset(cache, 0, sizeof(*cache));
	cache->scores_computed = computed;
	cache->scores_reused = reused;
}

void rq_similarity_cache_free(rq_similarity_cache *cache)
{
	if (!cache)
		return;
	cache_clear(cache);
	free(cache);
}

/*
 * Bounded by the number of blobs and by the bytes held (chunk counts and
 * scores). A trim only costs recomputation: scores never depend on it.
 */
void rq_similarity_cache_trim(rq_similarity_cache *cache)
{
	if (cache->nblobs >= TRIM_ENTRIES || cache->bytes > TRIM_BYTES)
		cache_clear(cache);
}

/* Reported as similarity_computed / similarity_reused in a replay's stats. */
void rq_similarity_cache_stats(const rq_similarity_cache *cache, size_t *computed, size_t *reused)
{
	*computed = cache->scores_computed;
	*reused = cache->scores_reused;
}

/* ---- the score cache ---------------------------------------------------------- */

/*
 * The key of a remembered score: both blob ids (their first bytes are
 * uniform already) and the minimum score, mixed so that (a, b) and (b, a)
 * land apart.
 */
static size_t score_hash(const rq_oid *src, const rq_oid *dst, int min_score)
{
	return rq_hindex_hash_id(src->id) ^ (rq_hindex_hash_id(dst->id) * 0x9e3779b97f4a7c15ull) ^
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
	return p->min_score == k->min_score && rq_oid_eq(&p->src, &k->src) &&
	       rq_oid_eq(&p->dst, &k->dst);
}

/* The remembered score for key's pair and minimum score, or -1. */
static int score_get(const rq_similarity_cache *cache, const pair_score *key)
{
	long i =
	    rq_hindex_find(&cache->score_index, score_hash(&key->src, &key->dst, key->min_score),
			   score_is, cache, key);
	return i < 0 ? -1 : cache->scores[i].score;
}

/*
 * Remember a score (best effort: out of memory just forgets it). The memory
 * counted per score is that of the open-addressed table this replaced (two
 * slots per entry), which is what decides when the cache is trimmed; it is
 * kept so that trimming happens at the same points as before.
 */
static void score_put(rq_similarity_cache *cache, const pair_score *key)
{
	pair_score *nv = rq_mem_grow(cache->scores, &cache->capscores, cache->nscores + 1,
				     sizeof(*nv), FIRST_SCORES);

	if (!nv)
		return;
	cache->scores = nv;
	if (rq_hindex_reserve(&cache->score_index, 2 * FIRST_SCORES, cache->nscores, score_hash_at,
			      cache) < 0)
		return;
	cache->scores[cache->nscores] = *key;
	rq_hindex_add(&cache->score_index, score_hash(&key->src, &key->dst, key->min_score),
		      cache->nscores);
	cache->nscores++;
	cache->bytes += 2 * sizeof(pair_score);
}

/* ---- the blob cache ------------------------------------------------------------ */

/* rq_hindex's callbacks for the blob entries, keyed by blob id. */
static size_t blob_hash_at(const void *ctx, size_t i)
{
	return rq_hindex_hash_id(((const rq_similarity_cache *)ctx)->blobs[i].oid.id);
}

static int blob_is(const void *ctx, size_t i, const void *key)
{
	return rq_oid_eq(&((const rq_similarity_cache *)ctx)->blobs[i].oid, key);
}

/*
 * The index of the cache entry for a blob (created empty on demand); -1 out
 * of memory. Entries move when the array grows: callers hold indices across
 * calls that may add entries, and take pointers only after.
 */
static long blob_entry(rq_similarity_cache *cache, const rq_oid *id)
{
	long i = rq_hindex_find(&cache->blob_index, rq_hindex_hash_id(id->id), blob_is, cache, id);
	blob_info *nv;

	if (i >= 0)
		return i;
	if (!(nv = rq_mem_grow(cache->blobs, &cache->capblobs, cache->nblobs + 1, sizeof(*nv),
			       FIRST_BLOBS)))
		return -1;
	cache->blobs = nv;
	if (rq_hindex_reserve(&cache->blob_index, 2 * FIRST_BLOBS, cache->nblobs, blob_hash_at,
			      cache) < 0)
		return -1;
	memset(&cache->blobs[cache->nblobs], 0, sizeof(*cache->blobs));
	cache->blobs[cache->nblobs].oid = *id;
	rq_hindex_add(&cache->blob_index, rq_hindex_hash_id(id->id), cache->nblobs);
	return (long)cache->nblobs++;
}

/* ---- chunk counts (diffcore-delta.c) ---------------------------------------- */

/* The spans of one blob while they are counted: dense, with an index. */
typedef struct span_table {
	span *v;
	size_t n, cap;
	rq_hindex index;
} span_table;

/*
 * rq_hindex's callbacks for the spans of a blob: the chunk hash is already a
 * hash, so it is its own index hash.
 */
static size_t span_hash_at(const void *ctx, size_t i)
{
	return ((const span_table *)ctx)->v[i].hashval;
}

static int span_is(const void *ctx, size_t i, const void *key)
{
	return ((const span_table *)ctx)->v[i].hashval == *(const unsigned int *)key;
}

/*
 * add_spanhash(): count cnt more bytes under hashval, adding the hash the
 * first time it is seen. 0, or -1 out of memory.
 */
static int add_span(span_table *table, unsigned int hashval, unsigned int cnt)
{
	long i = rq_hindex_find(&table->index, hashval, span_is, table, &hashval);
	span *nv;

	if (i >= 0) {
		table->v[i].cnt += cnt;
		return 0;
	}
	if (!(nv = rq_mem_grow(table->v, &table->cap, table->n + 1, sizeof(*nv), FIRST_SPANS)))
		return -1;
	table->v = nv;
	if (rq_hindex_reserve(&table->index, FIRST_SPAN_SLOTS, table->n, span_hash_at, table) < 0)
		return -1;
	table->v[table->n].hashval = hashval;
	table->v[table->n].cnt = cnt;
	rq_hindex_add(&table->index, hashval, table->n++);
	return 0;
}

/*
 * Spans by hash, for the merge walk of copied_bytes (hashes are unique
 * within a blob, so the order is total).
 */
static int span_cmp(const void *a_, const void *b_)
{
	const span *a = a_, *b = b_;
	return a->hashval < b->hashval ? -1 : a->hashval > b->hashval ? 1 : 0;
}

/*
 * hash_chars(): the byte counts of a blob per chunk hash, sorted by hash.
 * A chunk ends after a newline or after 64 bytes; a CR right before an LF
 * is skipped in text (so CRLF and LF files compare equal), not in binary
 * data. The rolling hash and HASHBASE are git's, so the spans, and the
 * scores built on them, are git's. 0 with *out (malloc'd) and *nout, or -1
 * out of memory.
 */
static int hash_chars(const unsigned char *buf, size_t sz, span **out, size_t *nout)
{
	int is_text = !rq_xmerge_buffer_is_binary((const char *)buf, sz);
	span_table table = {NULL, 0, 0, {NULL, 0, 0}};
	unsigned int accum1 = 0, accum2 = 0, cnt = 0;

	while (sz) {
		unsigned int c = *buf++, old_1 = accum1;
		sz--;
		if (is_text && c == '\r' && sz && *buf == '\n')
			continue;
		accum1 = (accum1 << 7) ^ (accum2 >> 25);
		accum2 = (accum2 << 7) ^ (old_1 >> 25);
		accum1 += c;
		if (++cnt < MAX_CHUNK_BYTES && c != '\n')
			continue;
		if (add_span(&table, (accum1 + accum2 * 0x61) % HASHBASE, cnt) < 0)
			goto fail;
		cnt = 0;
		accum1 = accum2 = 0;
	}
	if (cnt && add_span(&table, (accum1 + accum2 * 0x61) % HASHBASE, cnt) < 0)
		goto fail;
	free(table.index.slot);
	qsort(table.v, table.n, sizeof(*table.v), span_cmp);
	/* kept while the blob may be compared again: no room to grow left */
	if (table.n && table.n < table.cap) {
		span *fit = realloc(table.v, table.n * sizeof(*fit));
		table.v = fit ? fit : table.v;
	}
	*out = table.v;
	*nout = table.n;
	return 0;
fail:
	free(table.index.slot);
	free(table.v);
	return -1;
}

/* ---- scoring ------------------------------------------------------------------- */

/*
 * The size of a blob, from the object header: estimate_similarity's size
 * test runs before any blob is read, and rules out most pairs of a large
 * search.
 */
static int blob_size(rq_ort_merge *merge, blob_info *info)
{
	size_t len;
	git_object_t type;

	if (info->have_size)
		return 0;
	if (rq_ortodb_read_header(&len, &type, merge->config->reader, &info->oid) < 0)
		return rq_error_git(merge->err, "cannot read blob header");
	info->size = len;
	info->have_size = 1;
	return 0;
}

/*
 * The chunk counts of a blob (reads it, once for the cache's life), and its
 * exact size with them.
 */
static int blob_spans(rq_ort_merge *merge, blob_info *info)
{
	rq_odb_read_obj blob;

	if (info->have_spans)
		return 0;
	if (rq_ort_read_blob(merge, &info->oid, &blob) < 0)
		return -1;
	if (hash_chars(blob.data, blob.len, &info->spans, &info->nspans) < 0) {
		rq_odb_read_obj_free(&blob);
		return rq_ort_nomem(merge);
	}
	info->size = blob.len;
	info->have_size = 1;
	info->have_spans = 1;
	merge->similarity->bytes += info->nspans * sizeof(span) + sizeof(*info);
	rq_odb_read_obj_free(&blob);
	return 0;
}

/*
 * diffcore_count_changes(): the bytes of src whose chunk hash dst has too
 * (at most as many as dst has), walking both sorted lists together. git
 * also counts the bytes dst added; rename scoring does not use them.
 */
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

/*
 * The score itself (the body of estimate_similarity()): sizes first (a pair
 * whose size difference alone rules out minimum_score scores 0, as in git,
 * without reading either blob), then the chunks: copied bytes over the
 * larger size, on the 60000 scale. An empty destination scores 0.
 */
static int score_blobs(rq_ort_merge *merge, const rq_ort_stage *src, const rq_ort_stage *dst,
		       int minimum_score)
{
	rq_similarity_cache *cache = merge->similarity;
	long is, id;
	unsigned long max_size, base_size, delta_size;

	if ((is = blob_entry(cache, &src->oid)) < 0 || (id = blob_entry(cache, &dst->oid)) < 0)
		return rq_ort_nomem(merge);
	if (blob_size(merge, &cache->blobs[is]) < 0 || blob_size(merge, &cache->blobs[id]) < 0)
		return -1;
	max_size = cache->blobs[is].size > cache->blobs[id].size ? cache->blobs[is].size
								 : cache->blobs[id].size;
	base_size = cache->blobs[is].size < cache->blobs[id].size ? cache->blobs[is].size
								  : cache->blobs[id].size;
	delta_size = max_size - base_size;
	/* the sizes alone rule out minimum_score */
	if (max_size * (RQ_SIMILARITY_MAX_SCORE - minimum_score) <
	    delta_size * RQ_SIMILARITY_MAX_SCORE)
		return 0;
	if (blob_spans(merge, &cache->blobs[is]) < 0 || blob_spans(merge, &cache->blobs[id]) < 0)
		return -1;
	if (!cache->blobs[id].size)
		return 0;
	return (int)(copied_bytes(&cache->blobs[is], &cache->blobs[id]) * RQ_SIMILARITY_MAX_SCORE /
		     max_size);
}

/*
 * estimate_similarity() with the cache in front. Only regular files are
 * scored (git gives symlinks and submodules 0, so they never pair
 * inexactly). A score remembered for the same pair and minimum score is
 * returned as it is; otherwise it is computed and remembered.
 */
int rq_similarity_estimate(rq_ort_merge *merge, const rq_ort_stage *src, const rq_ort_stage *dst,
			   int minimum_score)
{
	rq_similarity_cache *cache = merge->similarity;
	pair_score key;
	int score;

	if (!rq_ort_mode_is_reg(src->mode) || !rq_ort_mode_is_reg(dst->mode))
		return 0;
	memset(&key, 0, sizeof(key));
	key.src = src->oid;
	key.dst = dst->oid;
	key.min_score = minimum_score;
	if ((score = score_get(cache, &key)) >= 0) {
		cache->scores_reused++;
		return score;
	}
	if ((score = score_blobs(merge, src, dst, minimum_score)) < 0)
		return -1;
	cache->scores_computed++;
	key.score = score;
	score_put(cache, &key);
	return score;
}
