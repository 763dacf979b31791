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
 * Not reproduced, as merge-ort does not use them: copies, break/rewrite
 * pairs, the "inexact renames skipped" warnings; the rename limit's progress
 * reporting. Where git keeps filespecs and a queue, this code works on the
 * merge's pairs in place.
 */
#include "rq_rename_detect.h"
#include "rq_rename_cache.h"
#include "rq_similarity.h"

#include <stdlib.h>
#include <string.h>

/* diffcore-rename.c's constants. */
#define DEFAULT_RENAME_SCORE  30000 /* 50% */
#define NUM_CANDIDATE_PER_DST 4
#define DEFAULT_RENAME_LIMIT  7000
/* find_identical_files() looks at this many identical sources at most */
#define MAX_IDENTICAL_CANDIDATES 100

/* The new-directory key that counts sources whose fate is not known yet
 * (git's UNKNOWN_DIR); compared by address and by content. */
static const char UNKNOWN_DIR[] = "/";

/* A destination and, once paired, its source (git's diff_rename_dst). */
typedef struct rename_dst {
	rq_ort_pair *pair;
	rq_ort_pair *source;
	int is_rename;
} rename_dst;

/* git's struct dir_rename_info, for one search. */
typedef struct dir_rename_info {
	int setup;
	rq_pathmap idx_map;		  /* destination path -> index + 1 (not renamed yet) */
	rq_pathmap dir_rename_guess;	  /* old dir -> the new dir most files went to */
	rq_pathmap *dir_rename_count;	  /* merge->dir_rename_count[side] */
	rq_pathmap *relevant_source_dirs; /* dirs whose renames matter (NULL: all) */
} dir_rename_info;

/* One side's rename search. */
typedef struct rename_search {
	rq_ort_merge *merge;
	int side;
	rq_ort_pair **sources;
	size_t nsources;
	rename_dst *dests;
	size_t ndests;
	dir_rename_info info;
} rename_search;

/* ---- paths ------------------------------------------------------------------- */

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

/* The last component of path. */
static const char *get_basename(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/*
 * basename_same(): do the two paths end in the same last component? Used as
 * the tie breaker of exact and inexact renames: a file that kept its name is
 * the likelier rename.
 */
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

/*
 * The directory of path ("" at the top), as a new arena string (callers
 * keep it as a map key); NULL out of memory.
 */
static char *get_dirname(rq_ort_merge *merge, const char *path)
{
	const char *slash = strrchr(path, '/');
	return rq_arena_strndup(&merge->arena, path, slash ? (size_t)(slash - path) : 0);
}

/*
 * dirname_munge(): cut at the last '/', or make the string empty. Applied
 * repeatedly to a copy of a path it walks up its directories, leaving the
 * cut-off parts readable after each NUL (update_dir_rename_counts relies on
 * that).
 */
static void dirname_munge(char *p)
{
	char *slash = strrchr(p, '/');
	if (!slash)
		slash = p;
	*slash = '\0';
}

/*
 * record_rename_pair(): destination d is a rename of source s. A source can
 * only be used once (merge-ort never detects copies); rename_used stays on
 * the pair so that write_back can drop the used sources.
 */
static void record_rename_pair(rename_search *search, size_t d, size_t s)
{
	search->sources[s]->rename_used++;
	search->dests[d].source = search->sources[s];
	search->dests[d].is_rename = 1;
}

/* ---- directory rename counts ---------------------------------------------------- */

/*
 * increment_count(): one more file of old_dir went to new_dir (UNKNOWN_DIR:
 * a file whose fate is still open). The per-directory count maps are created
 * on demand; keys are arena copies, as the paths they come from are
 * temporary.
 */
static int increment_count(rename_search *search, const char *old_dir, const char *new_dir)
{
	rq_ort_merge *merge = search->merge;
	rq_pathmap *counts;
	intptr_t v;
	char *key;

	if (rq_pathmap_get(search->info.dir_rename_count, old_dir, &v)) {
		counts = (rq_pathmap *)v;
	} else {
		key = rq_arena_strdup(&merge->arena, old_dir);
		counts = rq_arena_alloc(&merge->arena, sizeof(*counts));
		if (!key || !counts)
			return rq_ort_nomem(merge);
		rq_pathmap_init(counts, &merge->arena);
		if (rq_pathmap_put(search->info.dir_rename_count, key, (intptr_t)counts) < 0)
			return rq_ort_nomem(merge);
	}
	if (rq_pathmap_get(counts, new_dir, &v))
		return rq_pathmap_put(counts, new_dir, v + 1) < 0 ? rq_ort_nomem(merge) : 0;
	key =
	    new_dir == UNKNOWN_DIR ? (char *)UNKNOWN_DIR : rq_arena_strdup(&merge->arena, new_dir);
	if (!key || rq_pathmap_put(counts, key, 1) < 0)
		return rq_ort_nomem(merge);
	return 0;
}

/*
 * After one step up the two paths' directories (update_dir_rename_counts'
 * loop), do the parts just cut off still match? When the new path reached the
 * top level, its leading part was overwritten by the NUL of an empty string,
 * so the comparison skips the first character and checks it against the
 * saved one instead (git handles a rename to the top level the same way).
 */
static int subdirs_match(const char *old_dir, const char *new_dir, char new_dir_first_char)
{
	const char *old_sub_dir = strchr(old_dir, '\0') + 1;
	const char *new_sub_dir = strchr(new_dir, '\0') + 1;

	if (!*new_dir)
		return new_dir_first_char == old_sub_dir[0] &&
		       !strcmp(old_sub_dir + 1, new_sub_dir);
	return !strcmp(old_sub_dir, new_sub_dir);
}

/*
 * update_dir_rename_counts(): the rename oldname -> newname is a vote that
 * oldname's directory went to newname's. The vote is repeated for each
 * ancestor as long as the two paths keep the same trailing components (a/b/c
 * -> x/b/c also says a -> x) and the ancestor is a removed directory relevant
 * for itself; the walk stops at the first directory that is not relevant (or
 * not among the relevant source directories at all). 0, or -1.
 */
static int update_dir_rename_counts(rename_search *search, rq_pathmap *dirs_removed,
				    const char *oldname, const char *newname)
{
	rq_ort_merge *merge = search->merge;
	size_t ol = strlen(oldname), nl = strlen(newname);
	char *old_dir, *new_dir;
	int first_time = 1;

	if (!search->info.setup)
		return 0;
	/* two NULs after each: the parts cut off stay readable */
	old_dir = rq_arena_alloc(&merge->arena, ol + 2);
	new_dir = rq_arena_alloc(&merge->arena, nl + 2);
	if (!old_dir || !new_dir)
		return rq_ort_nomem(merge);
	memcpy(old_dir, oldname, ol);
	memcpy(new_dir, newname, nl);
	for (;;) {
		intptr_t drd_flag = RQ_ORT_DIR_NOT_RELEVANT;
		dirname_munge(old_dir);
		if (search->info.relevant_source_dirs &&
		    !rq_pathmap_has(search->info.relevant_source_dirs, old_dir))
			break;
		dirname_munge(new_dir);
		if (!first_time && !subdirs_match(old_dir, new_dir, newname[0]))
			break;
		if (dirs_removed)
			drd_flag = rq_pathmap_get0(dirs_removed, old_dir);
		if ((drd_flag == RQ_ORT_DIR_RELEVANT_FOR_SELF || first_time) &&
		    increment_count(search, old_dir, new_dir) < 0)
			return -1;
		first_time = 0;
		if (drd_flag == RQ_ORT_DIR_NOT_RELEVANT || !*old_dir || !*new_dir)
			break;
	}
	return 0;
}

/*
 * get_highest_rename_path(): the new directory with the most votes; on a tie
 * the first met in git's hash map order wins, which is why the order is
 * reproduced (it decides the guess below). 0, or -1.
 */
static int get_highest_rename_path(rq_ort_merge *merge, const rq_pathmap *counts, const char **best)
{
	intptr_t highest = 0;
	size_t *order = counts->len ? rq_pathmap_git_order(counts) : NULL;

	*best = NULL;
	if (counts->len && !order)
		return rq_ort_nomem(merge);
	for (size_t o = 0; o < counts->len; o++) {
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

/*
 * initialize_dir_rename_info(): set up the directory rename guess used by
 * the basename pass. Destinations not renamed yet are indexed by path (to
 * find the one a guess names); the renames found so far (exact and
 * remembered ones) vote, and each removed directory's guess is its current
 * winner. 0, or -1.
 */
static int initialize_dir_rename_info(rename_search *search, rq_pathmap *dirs_removed)
{
	rq_ort_merge *merge = search->merge;
	rq_pathmap *drc = search->info.dir_rename_count;

	search->info.setup = 1;
	rq_pathmap_init(&search->info.idx_map, &merge->arena);
	rq_pathmap_init(&search->info.dir_rename_guess, &merge->arena);
	search->info.relevant_source_dirs = dirs_removed;
	for (size_t i = 0; i < search->ndests; i++) {
		const rename_dst *d = &search->dests[i];
		if (!d->is_rename) {
			if (rq_pathmap_put(&search->info.idx_map, d->pair->dst_path,
					   (intptr_t)(i + 1)) < 0)
				return rq_ort_nomem(merge);
		} else if (update_dir_rename_counts(search, dirs_removed, d->source->src_path,
						    d->pair->dst_path) < 0) {
			return -1;
		}
	}
	for (size_t i = 0; i < drc->len; i++) {
		const char *best;
		if (drc->dead[i])
			continue;
		if (get_highest_rename_path(merge, (rq_pathmap *)drc->vals[i], &best) < 0)
			return -1;
		if (best && rq_pathmap_put(&search->info.dir_rename_guess, drc->keys[i],
					   (intptr_t)best) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * idx_possible_rename(): where would filename be if its directory went where
 * the guess says? That destination is the one the basename pass tries when
 * the basename alone is ambiguous. *index: its index, or -1 when there is no
 * guess or no such destination. 0, or -1 out of memory.
 */
static int idx_possible_rename(rename_search *search, const char *filename, long *index)
{
	rq_ort_merge *merge = search->merge;
	intptr_t v;
	char *old_dir, *new_path;
	const char *new_dir, *base;

	*index = -1;
	if (!search->info.setup)
		return 0;
	if (!(old_dir = get_dirname(merge, filename)))
		return -1;
	if (!rq_pathmap_get(&search->info.dir_rename_guess, old_dir, &v))
		return 0;
	new_dir = (const char *)v;
	base = get_basename(filename);
	new_path = rq_arena_alloc(&merge->arena, strlen(new_dir) + strlen(base) + 2);
	if (!new_path)
		return -1;
	strcpy(new_path, new_dir);
	strcat(new_path, "/");
	strcat(new_path, base);
	if (rq_pathmap_get(&search->info.idx_map, new_path, &v))
		*index = (long)v - 1;
	return 0;
}

/* ---- basename matches --------------------------------------------------------- */

/*
 * Map each basename to the index of its only source (or destination), or -1
 * when several share it; destinations already renamed are left out.
 */
static int index_basenames(rename_search *search, rq_pathmap *sources, rq_pathmap *dests)
{
	rq_ort_merge *merge = search->merge;

	rq_pathmap_init(sources, &merge->arena);
	rq_pathmap_init(dests, &merge->arena);
	for (size_t i = 0; i < search->nsources; i++) {
		const char *base = get_basename(search->sources[i]->src_path);
		if (rq_pathmap_put(sources, base,
				   rq_pathmap_has(sources, base) ? -1 : (intptr_t)i) < 0)
			return rq_ort_nomem(merge);
	}
	for (size_t i = 0; i < search->ndests; i++) {
		const char *base;
		if (search->dests[i].is_rename)
			continue;
		base = get_basename(search->dests[i].pair->dst_path);
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
static int find_basename_matches(rename_search *search, int minimum_score,
				 rq_pathmap *relevant_sources, rq_pathmap *dirs_removed)
{
	rq_pathmap sources, dests;

	if (index_basenames(search, &sources, &dests) < 0)
		return -1;
	for (size_t i = 0; i < search->nsources; i++) {
		const char *filename = search->sources[i]->src_path, *base = get_basename(filename);
		intptr_t src_index = -1, dst_index = -1;
		long guess;
		int score;

		if (relevant_sources && !rq_pathmap_has(relevant_sources, filename))
			continue;
		rq_pathmap_get(&sources, base, &src_index);
		if (!rq_pathmap_get(&dests, base, &dst_index))
			continue;
		if (src_index == -1 || dst_index == -1) {
			if (idx_possible_rename(search, filename, &guess) < 0)
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
		record_rename_pair(search, (size_t)dst_index, (size_t)src_index);
		if (update_dir_rename_counts(search, dirs_removed,
					     search->sources[src_index]->src_path,
					     search->dests[dst_index].pair->dst_path) < 0)
			return -1;
	}
	return 0;
}

/*
 * remove_unneeded_paths_from_src(): drop the sources already used, and with
 * interesting, those not in it (after the basename pass, only relevant
 * sources go on to the expensive search).
 */
static void remove_unneeded_paths_from_src(rename_search *search, const rq_pathmap *interesting)
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

/* ---- sources whose only purpose is already served ---------------------------- */

/*
 * dir_rename_already_determinable(): is the winner of this directory's vote
 * certain even if every unknown source voted for the runner-up?
 */
static int dir_rename_already_determinable(const rq_pathmap *counts)
{
	intptr_t first = 0, second = 0, unknown = 0;
	for (size_t i = 0; i < counts->len; i++) {
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

/*
 * The first half of handle_early_known_dir_renames(): count each remaining
 * source as an unknown vote for its removed ancestors; then a directory
 * relevant for itself whose vote is decided all the same needs no more
 * votes, and becomes relevant only as an ancestor. 0, or -1.
 */
static int settle_decided_dirs(rename_search *search, rq_pathmap *dirs_removed)
{
	rq_ort_merge *merge = search->merge;
	rq_pathmap *drc = search->info.dir_rename_count;

	for (size_t i = 0; i < search->nsources; i++) {
		char *old_dir = get_dirname(merge, search->sources[i]->src_path);
		if (!old_dir)
			return rq_ort_nomem(merge);
		while (*old_dir &&
		       rq_pathmap_get0(dirs_removed, old_dir) != RQ_ORT_DIR_NOT_RELEVANT) {
			if (increment_count(search, old_dir, UNKNOWN_DIR) < 0)
				return -1;
			if (!(old_dir = get_dirname(merge, old_dir)))
				return rq_ort_nomem(merge);
		}
	}
	for (size_t i = 0; i < drc->len; i++) {
		if (drc->dead[i])
			continue;
		if (rq_pathmap_get0(dirs_removed, drc->keys[i]) == RQ_ORT_DIR_RELEVANT_FOR_SELF &&
		    dir_rename_already_determinable((rq_pathmap *)drc->vals[i]) &&
		    rq_pathmap_put(dirs_removed, drc->keys[i], RQ_ORT_DIR_RELEVANT_FOR_ANCESTOR) <
			0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * Does some removed ancestor of path still need votes (relevant for
 * itself)? The walk up stops at the first directory that is not relevant.
 * 1, 0, or -1 out of memory.
 */
static int location_still_needed(rq_ort_merge *merge, const char *path,
				 const rq_pathmap *dirs_removed)
{
	char *dir = get_dirname(merge, path);

	for (;;) {
		intptr_t res;
		if (!dir)
			return rq_ort_nomem(merge);
		res = rq_pathmap_get0(dirs_removed, dir);
		if (res == RQ_ORT_DIR_NOT_RELEVANT)
			return 0;
		if (res == RQ_ORT_DIR_RELEVANT_FOR_SELF)
			return 1;
		dir = get_dirname(merge, dir);
	}
}

/*
 * handle_early_known_dir_renames(): a source that is relevant only for its
 * location, under directories whose renames are all decided already, need
 * not be paired: it leaves the search and the relevant sources (merge-ort's
 * optimization that keeps a directory rename from forcing a full search of
 * every file that left the directory). 0, or -1.
 */
static int handle_early_known_dir_renames(rename_search *search, rq_pathmap *relevant_sources,
					  rq_pathmap *dirs_removed)
{
	size_t k = 0;

	if (settle_decided_dirs(search, dirs_removed) < 0)
		return -1;
	for (size_t i = 0; i < search->nsources; i++) {
		const char *path = search->sources[i]->src_path;
		intptr_t val = -1;
		rq_pathmap_get(relevant_sources, path, &val);
		if (val == RQ_ORT_SOURCE_RELEVANT_LOCATION) {
			int needed = location_still_needed(search->merge, path, dirs_removed);
			if (needed < 0)
				return -1;
			if (!needed) {
				if (rq_pathmap_put(relevant_sources, path,
						   RQ_ORT_SOURCE_RELEVANT_NO_MORE) < 0)
					return rq_ort_nomem(search->merge);
				continue;
			}
		}
		search->sources[k++] = search->sources[i];
	}
	search->nsources = k;
	return 0;
}

/*
 * cleanup_dir_rename_info(): what directory rename detection gets: the
 * counts of removed directories that are still relevant, without the unknown
 * votes, which were only there to decide relevance.
 */
static void cleanup_dir_rename_info(rename_search *search, const rq_pathmap *dirs_removed)
{
	rq_pathmap *drc = search->info.dir_rename_count;

	if (!search->info.setup)
		return;
	for (size_t i = 0; i < drc->len; i++) {
		if (drc->dead[i])
			continue;
		if (!rq_pathmap_get0(dirs_removed, drc->keys[i])) {
			rq_pathmap_del_at(drc, i);
			continue;
		}
		rq_pathmap_del((rq_pathmap *)drc->vals[i], UNKNOWN_DIR);
	}
}

/* ---- passes 0 and 1: remembered and exact renames -------------------------- */

/*
 * Pair the remembered renames whose source this side deleted and whose
 * target it added, before any search (merge-ort's use_cached_pairs). A
 * remembered rename whose paths do not both appear is simply not used.
 */
static void use_remembered_renames(rename_search *search)
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
			record_rename_pair(search, (size_t)dst, (size_t)src);
	}
}

/*
 * find_identical_files() for destination d: among the unused sources with
 * d's blob (the chain of its hash, in source order), those of the same kind
 * (mode, unless both are regular files), the first with d's basename, else
 * the first; at most 100 candidates are looked at, as in git. The source
 * index, or -1.
 */
static long best_identical_source(const rename_search *search, const long *head, const long *next,
				  size_t nbuckets, size_t d)
{
	const rq_ort_stage *target = &search->dests[d].pair->dst;
	long best = -1;
	int best_score = -1, left = MAX_IDENTICAL_CANDIDATES;

	for (long j = head[rq_hindex_hash_oid(&target->oid) & (nbuckets - 1)]; j >= 0;
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
		score = 1 + basename_same(sp->src_path, search->dests[d].pair->dst_path);
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
static int find_exact_renames(rename_search *search)
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
		size_t b = rq_hindex_hash_oid(&search->sources[j]->src.oid) & (nbuckets - 1);
		next[j] = head[b];
		head[b] = (long)j;
	}
	for (size_t i = 0; i < search->ndests; i++) {
		long best;
		if (search->dests[i].is_rename) /* a remembered rename */
			continue;
		if ((best = best_identical_source(search, head, next, nbuckets, i)) >= 0)
			record_rename_pair(search, i, (size_t)best);
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
static int score_destination(rename_search *search, size_t d, int minimum_score, diff_score *m)
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
		this_src.name_score =
		    basename_same(search->sources[j]->src_path, search->dests[d].pair->dst_path);
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
static int pair_from_matrix(rename_search *search, const diff_score *mx, size_t n,
			    int minimum_score, rq_pathmap *dirs_removed)
{
	for (size_t i = 0; i < n; i++) {
		if (mx[i].dst < 0 || mx[i].score < minimum_score)
			break;
		if (search->dests[mx[i].dst].is_rename || search->sources[mx[i].src]->rename_used)
			continue;
		record_rename_pair(search, (size_t)mx[i].dst, (size_t)mx[i].src);
		if (update_dir_rename_counts(search, dirs_removed,
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
static int find_inexact_renames(rename_search *search, int minimum_score, int rename_limit,
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

/* ---- the search ---------------------------------------------------------------- */

/*
 * The side's sources and destinations, from the pairs phase 1 collected
 * (each is one or the other), empty blobs left out.
 */
static int gather_candidates(rename_search *search, const rq_ort_pairs *pairs)
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
static void write_back(rename_search *search, rq_ort_pairs *pairs)
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
static int run_search(rename_search *search)
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
	if (initialize_dir_rename_info(search, dirs_removed) < 0 ||
	    find_basename_matches(search, min_basename_score, relevant_sources, dirs_removed) < 0)
		return -1;
	remove_unneeded_paths_from_src(search, relevant_sources);
	if (handle_early_known_dir_renames(search, relevant_sources, dirs_removed) < 0)
		return -1;
	return find_inexact_renames(search, minimum_score, rename_limit, dirs_removed);
}

/*
 * diffcore_rename_extended() for one side: nothing to do without both
 * sources and destinations (the write back and cleanup still run, to leave
 * the side's lists as a search would).
 */
int rq_rename_detect(rq_ort_merge *merge, int side)
{
	rq_ort_pairs *pairs = &merge->pairs[side];
	rename_search search;

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
	cleanup_dir_rename_info(&search, &merge->dirs_removed[side]);
	return 0;
}
