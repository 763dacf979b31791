/* SPDX-License-Identifier: GPL-2.0-only; follows git's diffcore-rename.c (Elijah Newren et al.) */
/*
 * rq_rename_detect: rename detection on one side of a merge, with the
 * behaviour of git's diffcore_rename_extended() as merge-ort runs it.
 *
 * The side's sources are the paths it deleted, its destinations the paths
 * it added (empty blobs are neither: git never pairs them). Passes, each on
 * what the earlier ones left:
 *
 *  0. remembered renames (only for side 1 of a merge that continues a chain
 *     of picks, see rq_rename_cache.h);
 *  1. exact renames (find_exact_renames): same blob, and the same mode
 *     unless both are regular files; among several sources, one with the
 *     same basename;
 *  2. basename matches (find_basename_matches), for relevant sources only:
 *     a source and a destination whose basename is unique among the sources
 *     and among the destinations pair when 75% similar; when the basename is
 *     not unique, the directory-rename guess (idx_possible_rename) names the
 *     destination to try;
 *  3. sources no longer needed are dropped: those only relevant for their
 *     location when every directory they could tell about is already
 *     decided (handle_early_known_dir_renames);
 *  4. the similarity matrix (the core of diffcore_rename_extended): for
 *     every destination the 4 best sources at 50% or more, all candidates
 *     sorted by score (same basename first on ties, then matrix order), and
 *     paired greedily; skipped when sources x destinations exceeds
 *     merge.renameLimit squared.
 *
 * Along the way it counts, per removed directory, where its files went
 * (dir_rename_count), which is what directory rename detection votes on.
 *
 * This file gathers the candidates, runs the passes and writes the result
 * back, and holds passes 0 and 1; passes 2 and 4 compare contents
 * (rq_rename_inexact.c); pass 3 and the directory counts are
 * rq_rename_dirs.c; the search's state is rq_rename_search.h.
 *
 * Not reproduced, as merge-ort does not use them: copies, break/rewrite
 * pairs, the "inexact renames skipped" warnings; the rename limit's progress
 * reporting. Where git keeps filespecs and a queue, this code works on the
 * merge's pairs in place.
 */
#include "rq_rename_detect.h"

#include "rq_rename_cache.h"
#include "rq_rename_dirs.h"
#include "rq_rename_inexact.h"
#include "rq_rename_search.h"
#include "rq_similarity.h"

#include <stdlib.h>
#include <string.h>

/* diffcore-rename.c's constants. */
#define DEFAULT_RENAME_SCORE 30000 /* 50% */
#define DEFAULT_RENAME_LIMIT 7000
/* find_identical_files() looks at this many identical sources at most */
#define MAX_IDENTICAL_CANDIDATES 100

/*
 * The empty blob (e69de29...). git leaves empty files out of rename
 * detection: every empty file is identical to every other, so pairing them
 * says nothing about where a file went.
 */
static int is_empty_blob(const git_oid *id)
{
	static const unsigned char empty[GIT_OID_RAWSZ] = {0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6,
							   0x43, 0x4b, 0x8b, 0x29, 0xae, 0x77, 0x5a,
							   0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91};
	return !memcmp(id->id, empty, GIT_OID_RAWSZ);
}

/* ---- passes 0 and 1: remembered and exact renames -------------------------- */

/*
 * Pair the remembered renames whose source this side deleted and whose
 * target it added, before any search (merge-ort's use_cached_pairs). A
 * remembered rename whose paths do not both appear is simply not used.
 */
static void use_remembered_renames(rq_rename_search *search)
{
	size_t n;
	const rq_rename_cache_entry *r = rq_rename_cache_list(search->merge->rename_cache, &n);

	for (size_t k = 0; k < n; k++) {
		long src = -1, dst = -1;
		for (size_t j = 0; j < search->nsources && src < 0; j++)
			if (!search->sources[j]->rename_used &&
			    !strcmp(search->sources[j]->src_path, r[k].src))
				src = (long)j;
		for (size_t i = 0; i < search->ndests && dst < 0 && src >= 0; i++)
			if (!search->dests[i].is_rename &&
			    !strcmp(search->dests[i].pair->dst_path, r[k].dst))
				dst = (long)i;
		if (src >= 0 && dst >= 0)
			rq_rename_search_record_pair(search, (size_t)dst, (size_t)src);
	}
}

/*
 * find_identical_files() for destination d: among the unused sources with
 * d's blob (the chain of its hash, in source order), those of the same kind
 * (mode, unless both are regular files), the first with d's basename, else
 * the first; at most 100 candidates are looked at, as in git. The source
 * index, or -1.
 */
static long best_identical_source(const rq_rename_search *search, const long *head,
				  const long *next, size_t nbuckets, size_t d)
{
	const rq_ort_stage *target = &search->dests[d].pair->dst;
	long best = -1;
	int best_score = -1, left = MAX_IDENTICAL_CANDIDATES;

	for (long j = head[rq_hindex_hash_id(target->oid.id) & (nbuckets - 1)]; j >= 0;
	     j = next[j]) {
		const rq_ort_pair *sp = search->sources[j];
		int score;
		if (!git_oid_equal(&sp->src.oid, &target->oid))
			continue;
		if ((!rq_ort_mode_is_reg(sp->src.mode) || !rq_ort_mode_is_reg(target->mode)) &&
		    sp->src.mode != target->mode)
			continue;
		if (sp->rename_used)
			continue;
		score = 1 + rq_rename_search_basename_same(sp->src_path,
							   search->dests[d].pair->dst_path);
		if (score > best_score) {
			best = j;
			best_score = score;
			if (score == 2)
				break;
		}
		if (!--left)
			break;
	}
	return best;
}

/*
 * find_exact_renames(): chain the sources by blob id (inserted from the last,
 * so each chain lists them in source order, as git's hash map returns them)
 * and pair each destination not renamed yet with its best identical source.
 * 0, or -1.
 */
static int find_exact_renames(rq_rename_search *search)
{
	rq_ort_merge *merge = search->merge;
	size_t nbuckets = 16;
	long *head, *next;

	while (nbuckets < search->nsources * 2)
		nbuckets <<= 1;
	head = rq_arena_alloc(&merge->arena, nbuckets * sizeof(*head));
	next = rq_arena_alloc(&merge->arena, search->nsources * sizeof(*next));
	if (!head || !next)
		return rq_ort_nomem(merge);
	for (size_t b = 0; b < nbuckets; b++)
		head[b] = -1;
	for (size_t j = search->nsources; j-- > 0;) {
		size_t b = rq_hindex_hash_id(search->sources[j]->src.oid.id) & (nbuckets - 1);
		next[j] = head[b];
		head[b] = (long)j;
	}
	for (size_t i = 0; i < search->ndests; i++) {
		long best;
		if (search->dests[i].is_rename) /* a remembered rename */
			continue;
		if ((best = best_identical_source(search, head, next, nbuckets, i)) >= 0)
			rq_rename_search_record_pair(search, i, (size_t)best);
	}
	return 0;
}

/* ---- the search ---------------------------------------------------------------- */

/*
 * remove_unneeded_paths_from_src(): drop the sources already used, and with
 * interesting, those not in it (after the basename pass, only relevant
 * sources go on to the expensive search).
 */
static void remove_unneeded_paths_from_src(rq_rename_search *search, const rq_pathmap *interesting)
{
	size_t k = 0;
	for (size_t i = 0; i < search->nsources; i++) {
		if (search->sources[i]->rename_used)
			continue;
		if (interesting && !rq_pathmap_has(interesting, search->sources[i]->src_path))
			continue;
		search->sources[k++] = search->sources[i];
	}
	search->nsources = k;
}

/*
 * The side's sources and destinations, from the pairs phase 1 collected
 * (each is one or the other), empty blobs left out.
 */
static int gather_candidates(rq_rename_search *search, const rq_ort_pairs *pairs)
{
	rq_ort_merge *merge = search->merge;

	search->sources = rq_arena_alloc(&merge->arena, (pairs->n + 1) * sizeof(*search->sources));
	search->dests = rq_arena_alloc(&merge->arena, (pairs->n + 1) * sizeof(*search->dests));
	if (!search->sources || !search->dests)
		return rq_ort_nomem(merge);
	for (size_t i = 0; i < pairs->n; i++) {
		rq_ort_pair *p = pairs->v[i];
		if (!p->src_path) {
			if (!is_empty_blob(&p->dst.oid))
				search->dests[search->ndests++].pair = p;
		} else if (!p->dst_path) {
			if (!is_empty_blob(&p->src.oid))
				search->sources[search->nsources++] = p;
		}
	}
	return 0;
}

/*
 * Write the result back into the side's pairs, as diffcore does when it
 * rebuilds its queue: a renamed destination takes its source's path and
 * version; the sources used leave the list; everything else stays, in
 * order.
 */
static void write_back(rq_rename_search *search, rq_ort_pairs *pairs)
{
	size_t k = 0;

	for (size_t i = 0; i < search->ndests; i++) {
		rq_ort_pair *p = search->dests[i].pair;
		if (!search->dests[i].is_rename)
			continue;
		p->src_path = search->dests[i].source->src_path;
		p->src = search->dests[i].source->src;
	}
	for (size_t i = 0; i < pairs->n; i++) {
		rq_ort_pair *p = pairs->v[i];
		if (p->src_path && !p->dst_path && p->rename_used)
			continue;
		pairs->v[k++] = p;
	}
	pairs->n = k;
}

/*
 * Passes 1 to 4 (see the top of the file), with git's thresholds: 50% for
 * the inexact search, halfway between it and 100% (75%) for basename
 * matches, and merge.renameLimit (default 7000) for the matrix. 0, or -1.
 */
static int run_search(rq_rename_search *search)
{
	rq_ort_merge *merge = search->merge;
	rq_pathmap *relevant_sources = &merge->relevant_sources[search->side];
	rq_pathmap *dirs_removed = &merge->dirs_removed[search->side];
	int minimum_score = DEFAULT_RENAME_SCORE;
	int min_basename_score =
	    minimum_score + (int)(0.5 * (RQ_SIMILARITY_MAX_SCORE - minimum_score));
	int rename_limit =
	    merge->config->rename_limit > 0 ? merge->config->rename_limit : DEFAULT_RENAME_LIMIT;

	if (find_exact_renames(search) < 0)
		return -1;
	remove_unneeded_paths_from_src(search, NULL);
	if (rq_rename_dirs_init(search, dirs_removed) < 0 ||
	    rq_rename_inexact_basenames(search, min_basename_score, relevant_sources,
					dirs_removed) < 0)
		return -1;
	remove_unneeded_paths_from_src(search, relevant_sources);
	if (rq_rename_dirs_handle_early_known(search, relevant_sources, dirs_removed) < 0)
		return -1;
	return rq_rename_inexact_matrix(search, minimum_score, rename_limit, dirs_removed);
}

/*
 * diffcore_rename_extended() for one side: nothing to do without both
 * sources and destinations (the write back and cleanup still run, to leave
 * the side's lists as a search would).
 */
int rq_rename_detect(rq_ort_merge *merge, int side)
{
	rq_ort_pairs *pairs = &merge->pairs[side];
	rq_rename_search search;

	memset(&search, 0, sizeof(search));
	search.merge = merge;
	search.side = side;
	search.info.dir_rename_count = &merge->dir_rename_count[side];
	if (gather_candidates(&search, pairs) < 0)
		return -1;
	if (search.ndests && search.nsources) {
		if (side == RQ_ORT_SIDE1 && merge->use_remembered_renames)
			use_remembered_renames(&search);
		if (run_search(&search) < 0)
			return -1;
	}
	write_back(&search, pairs);
	rq_rename_dirs_cleanup(&search, &merge->dirs_removed[side]);
	return 0;
}
