/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_similarity: how similar two blobs are, for rename detection (git's
 * estimate_similarity() in diffcore-rename.c over diffcore-delta.c), with a
 * cache kept across the merges of one merger.
 *
 * The cache holds, per blob, its size and its chunk counts (the expensive
 * part: the blob must be read), and every score computed, by the pair of
 * blob ids and the minimum score asked for. A score depends on nothing
 * else, so taking it from the cache never changes a result; in a topic
 * replayed onto an upstream that renamed files, each pick's search meets
 * mostly the pairs of the pick before and computes only the new ones.
 */
#ifndef RQ_SIMILARITY_H
#define RQ_SIMILARITY_H

#include <stddef.h>

#include "rq_ort.h"

/* Scores are on git's scale: MAX_SCORE (60000) is identical. */
#define RQ_SIMILARITY_MAX_SCORE 60000

typedef struct rq_similarity_cache rq_similarity_cache;

/* 0, or -1 out of memory (*out NULL). */
int rq_similarity_cache_new(rq_similarity_cache **out);
void rq_similarity_cache_free(rq_similarity_cache *c);
/* Bound the cache's memory (between merges only: a merge holds indices
 * into it). */
void rq_similarity_cache_trim(rq_similarity_cache *c);
/* Scores computed, and taken from the cache, over its life. */
void rq_similarity_cache_stats(const rq_similarity_cache *c, size_t *computed, size_t *reused);

/*
 * The similarity of src's blob to dst's (0 .. RQ_SIMILARITY_MAX_SCORE), or 0
 * when either is not a regular file or their sizes alone rule out
 * minimum_score; from merge->similarity when known. -1 on error.
 */
int rq_similarity_estimate(rq_ort_merge *merge, const rq_ort_stage *src, const rq_ort_stage *dst,
			   int minimum_score);

#endif
