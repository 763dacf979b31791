/* SPDX-License-Identifier: GPL-2.0-only; follows git's diffcore-rename.c (Elijah Newren et al.) */
/*
 * rq_rename_inexact: the passes of rename detection that compare contents
 * (see rq_rename_detect.c for all the passes): pass 2, the basename
 * matches, and pass 4, the similarity matrix and its greedy pairing. Both
 * score a pair with rq_similarity_estimate; each rename found votes for its
 * directory (rq_rename_dirs.c).
 */
#include "rq_rename_inexact.h"

#include "rq_rename_dirs.h"
#include "rq_similarity.h"

#include <stdlib.h>

/* diffcore-rename.c's constant: the best sources kept per destination. */
#define NUM_CANDIDATE_PER_DST 4

/* ---- pass 2: basename matches --------------------------------------------------- */

/*
 * Map each basename to the index of its only source (or destination), or -1
 * when several share it; destinations already renamed are left out.
 */
static int index_basenames(rq_rename_search *search, rq_pathmap *sources, rq_pathmap *dests)
{
	rq_ort_merge *merge = search->merge;

	rq_pathmap_init(sources, &merge->arena);
	rq_pathmap_init(dests, &merge->arena);
	for (size_t i = 0; i < search->nsources; i++) {
		const char *base = rq_rename_search_basename(search->sources[i]->src_path);
		if (rq_pathmap_put(sources, base,
				   rq_pathmap_has(sources, base) ? -1 : (intptr_t)i) < 0)
			return rq_ort_nomem(merge);
	}
	for (size_t i = 0; i < search->ndests; i++) {
		const char *base;
		if (search->dests[i].is_rename)
			continue;
		base = rq_rename_search_basename(search->dests[i].pair->dst_path);
		if (rq_pathmap_put(dests, base, rq_pathmap_has(dests, base) ? -1 : (intptr_t)i) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * find_basename_matches(): most renames keep the file's name and move it to
 * another directory, so before the quadratic search each relevant source is
 * compared with one destination only: the one with its basename, when the
 * basename is unique among the sources and among the destinations, else the
 * one the directory-rename guess names. A pair is taken at minimum_score
 * (75%, higher than the inexact search's 50%, because it is chosen by name
 * first). 0, or -1.
 */
int rq_rename_inexact_basenames(rq_rename_search *search, int minimum_score,
				rq_pathmap *relevant_sources, rq_pathmap *dirs_removed)
{
	rq_pathmap sources, dests;

	if (index_basenames(search, &sources, &dests) < 0)
		return -1;
	for (size_t i = 0; i < search->nsources; i++) {
		const char *filename = search->sources[i]->src_path,
			   *base = rq_rename_search_basename(filename);
		intptr_t src_index = -1, dst_index = -1;
		long guess;
		int score;

		if (relevant_sources && !rq_pathmap_has(relevant_sources, filename))
			continue;
		rq_pathmap_get(&sources, base, &src_index);
		if (!rq_pathmap_get(&dests, base, &dst_index))
			continue;
		if (src_index == -1 || dst_index == -1) {
			if (rq_rename_dirs_possible_rename(search, filename, &guess) < 0)
				return rq_ort_nomem(search->merge);
			src_index = (intptr_t)i;
			dst_index = guess;
		}
		if (dst_index == -1 || search->dests[dst_index].is_rename)
			continue;
		score = rq_similarity_estimate(search->merge, &search->sources[src_index]->src,
					       &search->dests[dst_index].pair->dst, minimum_score);
		if (score < 0)
			return -1;
		if (score < minimum_score)
			continue;
		rq_rename_search_record_pair(search, (size_t)dst_index, (size_t)src_index);
		if (rq_rename_dirs_update_counts(search, dirs_removed,
						 search->sources[src_index]->src_path,
						 search->dests[dst_index].pair->dst_path) < 0)
			return -1;
	}
	return 0;
}

/* ---- pass 4: the similarity matrix -------------------------------------------- */

/* A candidate pairing (git's diff_score). */
typedef struct diff_score {
	long src, dst; /* dst < 0: an unused slot */
	int score;
	int name_score; /* same basename */
	size_t order;	/* position in the matrix, for a stable sort */
} diff_score;

/*
 * score_compare(): unused slots last, then the higher score, then the same
 * basename first.
 */
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

/*
 * git sorts the matrix with STABLE_QSORT: ties keep their matrix order
 * (destination order, then slot order). qsort is not stable, so the
 * position breaks the tie.
 */
static int score_compare_stable(const void *a_, const void *b_)
{
	const diff_score *a = a_, *b = b_;
	int c = score_compare(a, b);
	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order ? 1 : 0;
}

/*
 * record_if_better(): keep o among a destination's NUM_CANDIDATE_PER_DST best
 * candidates when it beats the worst of them (the first worst on ties).
 */
static void record_if_better(diff_score m[], const diff_score *o)
{
	int worst = 0;
	for (int i = 1; i < NUM_CANDIDATE_PER_DST; i++)
		if (score_compare(&m[i], &m[worst]) > 0)
			worst = i;
	if (score_compare(&m[worst], o) > 0)
		m[worst] = *o;
}

/*
 * One row of the matrix: destination d's best candidates among all the
 * sources left. 0, or -1.
 */
static int score_destination(rq_rename_search *search, size_t d, int minimum_score, diff_score *m)
{
	for (int j = 0; j < NUM_CANDIDATE_PER_DST; j++)
		m[j].dst = -1;
	for (size_t j = 0; j < search->nsources; j++) {
		diff_score this_src;
		int score = rq_similarity_estimate(search->merge, &search->sources[j]->src,
						   &search->dests[d].pair->dst, minimum_score);
		if (score < 0)
			return -1;
		this_src.score = score;
		this_src.name_score = rq_rename_search_basename_same(
		    search->sources[j]->src_path, search->dests[d].pair->dst_path);
		this_src.dst = (long)d;
		this_src.src = (long)j;
		this_src.order = 0;
		record_if_better(m, &this_src);
	}
	return 0;
}

/*
 * The greedy pairing of diffcore_rename_extended(): best candidates first,
 * down to minimum_score, skipping destinations and sources already taken;
 * each rename found votes for its directory. 0, or -1.
 */
static int pair_from_matrix(rq_rename_search *search, const diff_score *mx, size_t n,
			    int minimum_score, rq_pathmap *dirs_removed)
{
	for (size_t i = 0; i < n; i++) {
		if (mx[i].dst < 0 || mx[i].score < minimum_score)
			break;
		if (search->dests[mx[i].dst].is_rename || search->sources[mx[i].src]->rename_used)
			continue;
		rq_rename_search_record_pair(search, (size_t)mx[i].dst, (size_t)mx[i].src);
		if (rq_rename_dirs_update_counts(search, dirs_removed,
						 search->sources[mx[i].src]->src_path,
						 search->dests[mx[i].dst].pair->dst_path) < 0)
			return -1;
	}
	return 0;
}

/*
 * The inexact search of diffcore_rename_extended(): every destination not
 * renamed yet against every source left, unless there are more pairs than the
 * rename limit allows (too_many_rename_candidates: git then skips the search
 * and warns; this skips it silently, as replayq prints no merge warnings).
 * 0, or -1.
 */
int rq_rename_inexact_matrix(rq_rename_search *search, int minimum_score, int rename_limit,
			     rq_pathmap *dirs_removed)
{
	size_t renamed = 0, ndst, cnt = 0;
	diff_score *mx;
	int rc = -1;

	for (size_t i = 0; i < search->ndests; i++)
		renamed += (size_t)search->dests[i].is_rename;
	ndst = search->ndests - renamed;
	if (!ndst || !search->nsources ||
	    (uint64_t)ndst * (uint64_t)search->nsources >
		(uint64_t)rename_limit * (uint64_t)rename_limit)
		return 0;
	if (!(mx = calloc(NUM_CANDIDATE_PER_DST * ndst, sizeof(*mx))))
		return rq_ort_nomem(search->merge);
	for (size_t i = 0; i < search->ndests; i++) {
		if (search->dests[i].is_rename)
			continue;
		if (score_destination(search, i, minimum_score, &mx[cnt * NUM_CANDIDATE_PER_DST]) <
		    0)
			goto done;
		cnt++;
	}
	for (size_t i = 0; i < cnt * NUM_CANDIDATE_PER_DST; i++)
		mx[i].order = i;
	qsort(mx, cnt * NUM_CANDIDATE_PER_DST, sizeof(*mx), score_compare_stable);
	rc = pair_from_matrix(search, mx, cnt * NUM_CANDIDATE_PER_DST, minimum_score, dirs_removed);
done:
	free(mx);
	return rc;
}
