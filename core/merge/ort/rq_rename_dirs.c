/* SPDX-License-Identifier: GPL-2.0-only; follows git's diffcore-rename.c (Elijah Newren et al.) */
/*
 * rq_rename_dirs: what rename detection counts for directory rename
 * detection (git's struct dir_rename_info and its functions): per removed
 * directory, where its files went (dir_rename_count, which
 * core/merge/ort/rq_dir_rename.c votes on), the guess the basename pass
 * follows when a basename is not unique, and pass 3 of the search (see
 * rq_rename_detect.c): dropping the sources that are needed only for a
 * location whose directory rename is decided already.
 */
#include "rq_rename_dirs.h"

#include <string.h>

/* The new-directory key that counts sources whose fate is not known yet
 * (git's UNKNOWN_DIR); compared by address and by content. */
static const char UNKNOWN_DIR[] = "/";

/* ---- directory rename counts ---------------------------------------------------- */

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
 * increment_count(): one more file of old_dir went to new_dir (UNKNOWN_DIR:
 * a file whose fate is still open). The per-directory count maps are created
 * on demand; keys are arena copies, as the paths they come from are
 * temporary.
 */
static int increment_count(rq_rename_search *search, const char *old_dir, const char *new_dir)
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
int rq_rename_dirs_update_counts(rq_rename_search *search, rq_pathmap *dirs_removed,
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
int rq_rename_dirs_init(rq_rename_search *search, rq_pathmap *dirs_removed)
{
	rq_ort_merge *merge = search->merge;
	rq_pathmap *drc = search->info.dir_rename_count;

	search->info.setup = 1;
	rq_pathmap_init(&search->info.idx_map, &merge->arena);
	rq_pathmap_init(&search->info.dir_rename_guess, &merge->arena);
	search->info.relevant_source_dirs = dirs_removed;
	for (size_t i = 0; i < search->ndests; i++) {
		const rq_rename_dst *d = &search->dests[i];
		if (!d->is_rename) {
			if (rq_pathmap_put(&search->info.idx_map, d->pair->dst_path,
					   (intptr_t)(i + 1)) < 0)
				return rq_ort_nomem(merge);
		} else if (rq_rename_dirs_update_counts(search, dirs_removed, d->source->src_path,
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
int rq_rename_dirs_possible_rename(rq_rename_search *search, const char *filename, long *index)
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
	base = rq_rename_search_basename(filename);
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
static int settle_decided_dirs(rq_rename_search *search, rq_pathmap *dirs_removed)
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
int rq_rename_dirs_handle_early_known(rq_rename_search *search, rq_pathmap *relevant_sources,
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
void rq_rename_dirs_cleanup(rq_rename_search *search, const rq_pathmap *dirs_removed)
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
