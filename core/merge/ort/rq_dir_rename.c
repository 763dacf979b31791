/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_dir_rename: directory renames (see rq_dir_rename.h), with merge-ort's
 * rules:
 *
 *  - a removed directory's new name is the directory most of its files
 *    went to; a tie between two candidates is a conflict and renames
 *    nothing (get_provisional_directory_renames);
 *  - a directory renamed on both sides is not applied at all
 *    (handle_directory_level_conflicts);
 *  - a path the other side adds into a renamed directory moves; when
 *    several paths would move to the same place, or something is already
 *    there, that is a conflict and none moves (compute_collisions,
 *    handle_path_level_conflicts); a move into a directory that was itself
 *    renamed on the moving side is not made;
 *  - a moved path becomes an entry at its new place; with
 *    merge.directoryRenames=conflict it is marked as a conflict there.
 *
 * Where this differs from merge-ort: merge-ort can move a path into a
 * directory it resolved without opening, or onto a path it resolved, and
 * either asserts or writes a result it then mishandles. With the default
 * merge.directoryRenames=conflict, such a move is a conflict whatever
 * happens next, so it is reported as one; with =true the pick falls back
 * (dir_rename_trouble).
 */
#include "rq_dir_rename.h"

#include <string.h>

/* ---- deciding the renames ----------------------------------------------------- */

/* How a removed directory's vote went. */
enum { VOTE_NONE, VOTE_TIE, VOTE_WON };

/*
 * The new directory with the most votes in counts (*best; the first of them
 * in insertion order, though a tie for the most decides nothing anyway).
 * Returns VOTE_NONE, VOTE_TIE or VOTE_WON.
 */
static int count_votes(const rq_pathmap *counts, const char **best)
{
	intptr_t max = 0, bad_max = 0;

	*best = NULL;
	for (size_t k = 0; k < counts->len; k++) {
		intptr_t count;
		if (counts->dead[k])
			continue;
		count = counts->vals[k];
		if (count == max) {
			bad_max = max;
		} else if (count > max) {
			max = count;
			*best = counts->keys[k];
		}
	}
	if (max == 0)
		return VOTE_NONE;
	return bad_max == max ? VOTE_TIE : VOTE_WON;
}

/*
 * get_provisional_directory_renames() for one side: a won vote renames the
 * directory; a tie renames nothing and is a conflict at the old directory
 * (merge-ort's "directory rename split": it cannot tell where the directory
 * went, and the merge is unclean without an entry to attach that to, hence
 * renames_unclean). 0, or -1.
 */
static int provisional_renames(rq_ort_merge *merge, int side)
{
	rq_pathmap *drc = &merge->dir_rename_count[side];

	for (size_t i = 0; i < drc->len; i++) {
		const char *best;
		int vote;
		if (drc->dead[i])
			continue;
		vote = count_votes((const rq_pathmap *)drc->vals[i], &best);
		if (vote == VOTE_TIE) {
			merge->renames_unclean = 1;
			if (rq_ort_conflict(merge, drc->keys[i], RQ_CONFLICT_DIR_RENAME) < 0)
				return -1;
		} else if (vote == VOTE_WON && rq_pathmap_put(&merge->dir_renames[side],
							      drc->keys[i], (intptr_t)best) < 0) {
			return rq_ort_nomem(merge);
		}
	}
	return 0;
}

/*
 * handle_directory_level_conflicts(): a directory both sides renamed is
 * treated as renamed by neither (its files' own renames still apply, and a
 * rename/rename of the files shows the disagreement).
 */
static void drop_renamed_on_both_sides(rq_ort_merge *merge)
{
	rq_pathmap *d1 = &merge->dir_renames[RQ_ORT_SIDE1], *d2 = &merge->dir_renames[RQ_ORT_SIDE2];

	for (size_t i = 0; i < d1->len; i++) {
		if (d1->dead[i] || !rq_pathmap_has(d2, d1->keys[i]))
			continue;
		rq_pathmap_del(d2, d1->keys[i]);
		rq_pathmap_del_at(d1, i);
	}
}

/* Both sides' provisional renames, then the directory-level conflicts. */
int rq_dir_rename_find(rq_ort_merge *merge)
{
	if (provisional_renames(merge, RQ_ORT_SIDE1) < 0 ||
	    provisional_renames(merge, RQ_ORT_SIDE2) < 0)
		return -1;
	drop_renamed_on_both_sides(merge);
	return 0;
}

/* ---- where paths go -------------------------------------------------------------- */

/*
 * check_dir_renamed(): the closest ancestor directory of path that is
 * renamed in dir_renames: *old_dir (in the arena) and *new_dir. The closest
 * wins, so a rename of a/b overrides one of a for the paths under a/b. 1 when
 * found, 0 when none, -1 out of memory.
 */
static int check_dir_renamed(rq_ort_merge *merge, const char *path, const rq_pathmap *dir_renames,
			     const char **old_dir, const char **new_dir)
{
	char *temp = rq_arena_strdup(&merge->arena, path), *end;
	intptr_t v;

	if (!temp)
		return -1;
	while ((end = strrchr(temp, '/'))) {
		*end = '\0';
		if (rq_pathmap_get(dir_renames, temp, &v)) {
			*old_dir = temp;
			*new_dir = (const char *)v;
			return 1;
		}
	}
	return 0;
}

/*
 * apply_dir_rename(): old_path with its old_dir prefix replaced by new_dir
 * (a rename to the top level drops the separator too); NULL out of memory.
 */
static char *apply_dir_rename(rq_ort_merge *merge, const char *old_dir, const char *new_dir,
			      const char *old_path)
{
	size_t oldlen = strlen(old_dir), nl = strlen(new_dir);
	char *out;

	if (!*new_dir)
		oldlen++;
	out = rq_arena_alloc(&merge->arena, nl + strlen(old_path + oldlen) + 1);
	if (!out)
		return NULL;
	memcpy(out, new_dir, nl);
	strcpy(out + nl, old_path + oldlen);
	return out;
}

/* merge-ort's struct collision_info: the paths that would move to one new
 * path, as a sorted set. */
typedef struct collision_info {
	const char **sources;
	size_t n, cap;
	int reported_already;
} collision_info;

/*
 * Add source to the sorted set (once), keeping it sorted as git's string
 * list is (the order decides nothing here but keeps the set a set). 0, or -1
 * out of memory.
 */
static int collision_add_source(rq_ort_merge *merge, collision_info *ci, const char *source)
{
	size_t pos = 0;
	const char **nv;

	for (; pos < ci->n; pos++) {
		int c = strcmp(ci->sources[pos], source);
		if (!c)
			return 0;
		if (c > 0)
			break;
	}
	if (!(nv = rq_arena_grow(&merge->arena, ci->sources, ci->n, &ci->cap, sizeof(*nv), 4)))
		return -1;
	ci->sources = nv;
	memmove(&ci->sources[pos + 1], &ci->sources[pos], (ci->n - pos) * sizeof(*ci->sources));
	ci->sources[pos] = source;
	ci->n++;
	return 0;
}

/*
 * The collision record of new_path (created empty on first use); NULL out of
 * memory.
 */
static collision_info *collision_at(rq_ort_merge *merge, rq_pathmap *collisions,
				    const char *new_path)
{
	intptr_t v;
	collision_info *ci;

	if (rq_pathmap_get(collisions, new_path, &v))
		return (collision_info *)v;
	ci = rq_arena_alloc(&merge->arena, sizeof(*ci));
	if (!ci || rq_pathmap_put(collisions, new_path, (intptr_t)ci) < 0)
		return NULL;
	return ci;
}

/*
 * compute_collisions() for one side: every path the side added or renamed
 * whose directory the other side renamed; collisions maps each new path to
 * the paths that would move there. Counted before any path moves, so that
 * handle_path_level_conflicts can refuse a move shared by several paths.
 */
int rq_dir_rename_collisions(rq_ort_merge *merge, int side, rq_pathmap *collisions)
{
	const rq_pathmap *dir_renames = &merge->dir_renames[rq_ort_other_side(side)];
	const rq_ort_pairs *pairs = &merge->pairs[side];

	rq_pathmap_init(collisions, &merge->arena);
	if (!dir_renames->live)
		return 0;
	for (size_t i = 0; i < pairs->n; i++) {
		rq_ort_pair *p = pairs->v[i];
		const char *old_dir, *new_dir;
		char *new_path;
		collision_info *ci;
		int found;

		if (p->status != RQ_ORT_STATUS_ADDED && p->status != RQ_ORT_STATUS_RENAMED)
			continue;
		if ((found = check_dir_renamed(merge, p->dst_path, dir_renames, &old_dir,
					       &new_dir)) < 0)
			return rq_ort_nomem(merge);
		if (!found)
			continue;
		if (!(new_path = apply_dir_rename(merge, old_dir, new_dir, p->dst_path)) ||
		    !(ci = collision_at(merge, collisions, new_path)) ||
		    collision_add_source(merge, ci, p->dst_path) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * path_in_way(): is something at path already, for a path moving there from
 * side_mask's side? An entry resolved at that path, or one with a file or
 * directory on the moving side, is in the way.
 */
static int path_in_way(rq_ort_merge *merge, const char *path, unsigned side_mask)
{
	rq_ort_entry *e = rq_ort_entry_get(merge, path);
	if (!e || e->moved_away)
		return 0;
	return e->clean || (side_mask & (e->filemask | e->dirmask));
}

/*
 * handle_path_level_conflicts(): the new path of path, or NULL when the move
 * collides: several paths going there, or something in the way. merge-ort
 * then leaves the path where it was and reports a conflict at the new path,
 * once per new path (reported_already); so does this.
 */
static char *handle_path_level_conflicts(rq_ort_merge *merge, const char *path, int side,
					 const char *old_dir, const char *new_dir,
					 rq_pathmap *collisions)
{
	char *new_path = apply_dir_rename(merge, old_dir, new_dir, path);
	collision_info *ci;
	intptr_t v;
	int clean = 1;

	if (!new_path) {
		rq_ort_nomem(merge);
		return NULL;
	}
	if (!rq_pathmap_get(collisions, new_path, &v)) {
		rq_ort_fall_back(merge, "directory rename without a collision record");
		return NULL;
	}
	ci = (collision_info *)v;
	if (ci->reported_already) {
		clean = 0;
	} else if (path_in_way(merge, new_path, rq_ort_mask(side)) || ci->n > 1) {
		ci->reported_already = 1;
		clean = 0;
	}
	if (!clean) {
		merge->renames_unclean = 1;
		rq_ort_conflict(merge, new_path, RQ_CONFLICT_DIR_RENAME);
		return NULL;
	}
	return new_path;
}

/*
 * check_for_directory_rename(): no move when some path of the other side
 * would move onto this very path (it is a key of the other side's
 * collisions), when the target directory was itself renamed on this side
 * (merge-ort's exclusions: "not applying ... because it was itself
 * renamed"), or on a collision.
 */
char *rq_dir_rename_check(rq_ort_merge *merge, const char *path, int side,
			  const rq_pathmap *dir_renames, const rq_pathmap *exclusions,
			  rq_pathmap collisions[3])
{
	const char *old_dir, *new_dir;
	int found;

	if (!dir_renames->live)
		return NULL;
	if (rq_pathmap_has(&collisions[rq_ort_other_side(side)], path))
		return NULL;
	if ((found = check_dir_renamed(merge, path, dir_renames, &old_dir, &new_dir)) < 0) {
		rq_ort_nomem(merge);
		return NULL;
	}
	if (!found)
		return NULL;
	if (rq_pathmap_has(exclusions, new_dir))
		return NULL; /* the target directory was itself renamed */
	return handle_path_level_conflicts(merge, path, side, old_dir, new_dir, &collisions[side]);
}

/* ---- moving the entry ------------------------------------------------------------ */

/*
 * A directory rename meets a state merge-ort does not handle cleanly (it
 * asserts, or leaves entries it then mishandles). With
 * merge.directoryRenames=conflict the moved path is a conflict whatever
 * happens next, so say so; with =true, an entry that is also a directory,
 * or a file moved onto a directory, ends in a file/directory conflict in
 * git (or git dies): report that too; anything else falls back.
 */
static int dir_rename_trouble(rq_ort_merge *merge, const char *new_path, int df, const char *why)
{
	rq_ort_entry *at = rq_ort_entry_get(merge, new_path);

	if (merge->config->dir_renames == RQ_ORT_DIR_RENAMES_TRUE && !df &&
	    !(at && at->dirmask && !at->clean)) {
		rq_ort_fall_back(merge, why);
		return 0;
	}
	merge->renames_unclean = 1;
	merge->forced_conflict = 1;
	return rq_ort_conflict(merge, new_path, RQ_CONFLICT_DIR_RENAME);
}

/*
 * 1 when a directory entry cannot take a moved path: resolved (its tree is
 * final), or deferred without being opened (its tree is taken as it is).
 */
static int closed_dir(const rq_ort_entry *d)
{
	return d->clean || !d->walked;
}

/*
 * Make sure the parent directories of new_path have entries, creating the
 * missing ones from the top down, as merge-ort does when it records the new
 * path: each new directory is opened (walked), present on the moving side,
 * and empty until the moved path is added. A parent that is closed cannot
 * take the path (dir_rename_trouble). 1 when done, 0 when the move cannot be
 * made (trouble reported), -1 on error.
 */
static int ensure_parent_dirs(rq_ort_merge *merge, const char *new_path, unsigned side_mask)
{
	const char *slash = strrchr(new_path, '/');
	char *parent, *p;
	rq_ort_entry *dir;

	if (!slash)
		return 1;
	if (!(parent = rq_arena_strndup(&merge->arena, new_path, (size_t)(slash - new_path))))
		return rq_ort_nomem(merge);
	if ((dir = rq_ort_entry_get(merge, parent)))
		return closed_dir(dir) || dir->moved_away
			   ? dir_rename_trouble(merge, new_path, 0,
						"dir rename into a resolved dir")
			   : 1;
	for (p = parent;;) {
		char *sl = strchr(p, '/');
		char *prefix = rq_arena_strndup(&merge->arena, parent,
						sl ? (size_t)(sl - parent) : strlen(parent));
		rq_ort_entry *d;
		if (!prefix)
			return rq_ort_nomem(merge);
		if (!(d = rq_ort_entry_get(merge, prefix))) {
			if (!(d = rq_ort_entry_insert(merge, prefix)))
				return -1;
			d->walked = 1;
			d->dirmask = side_mask;
			d->is_null = 1;
		} else if (closed_dir(d)) {
			return dir_rename_trouble(merge, new_path, 0,
						  "dir rename into a resolved dir");
		}
		if (!sl)
			return 1;
		p = sl + 1;
	}
}

/*
 * The moved entry at new_path, where nothing was: a new entry takes ci's
 * versions and flags, but keeps its own place in the tree (directory,
 * basename, no children) and its own conflict kind. NULL on error.
 */
static rq_ort_entry *move_to_new_entry(rq_ort_merge *merge, rq_ort_entry *ci, char *new_path)
{
	rq_ort_entry *moved = rq_ort_entry_insert(merge, new_path), *dir;
	size_t offset;
	int kind;

	if (!moved)
		return NULL;
	kind = moved->conflict_kind;
	dir = moved->dir;
	offset = moved->basename_offset;
	*moved = *ci;
	moved->path = new_path;
	moved->dir = dir;
	moved->basename_offset = offset;
	moved->moved_away = 0;
	moved->conflict_kind = kind;
	moved->children = NULL;
	moved->nchildren = moved->capchildren = 0;
	return moved;
}

/* The moved version joins the entry already at new_path (as the side's
 * stage there): 1, or when that entry cannot take it, what
 * dir_rename_trouble returns (0, or -1). */
static int move_onto_entry(rq_ort_merge *merge, const rq_ort_entry *ci, rq_ort_entry *new_ci,
			   const char *new_path)
{
	int side = rq_ort_lone_side(ci->filemask);

	if (new_ci->clean || (new_ci->filemask & ci->filemask))
		return dir_rename_trouble(merge, new_path, 0, "dir rename onto a resolved path");
	new_ci->filemask |= ci->filemask;
	if (new_ci->dirmask)
		new_ci->df_conflict = 1;
	new_ci->pathnames[side] = ci->pathnames[side];
	new_ci->stages[side] = ci->stages[side];
	return 1;
}

/*
 * apply_directory_rename_modifications(): the moved path leaves its old
 * place (its entry is marked moved_away and unregistered, so its old
 * directory no longer lists it) and appears at new_path, either as a new
 * entry or joined to the entry there. With merge.directoryRenames=conflict
 * the new entry is a conflict of its own kind ("directory rename"), which
 * is what merge-ort reports for every path it moves in that mode.
 */
int rq_dir_rename_apply(rq_ort_merge *merge, rq_ort_pair *pair, char *new_path)
{
	rq_ort_entry *ci = rq_ort_entry_get(merge, pair->dst_path), *new_ci;
	int r;

	/* merge-ort only moves an unresolved file that one side added */
	if (!ci || ci->clean || ci->moved_away || rq_ort_lone_side(ci->filemask) < 0 || ci->dirmask)
		return dir_rename_trouble(merge, new_path, ci && ci->dirmask,
					  "dir rename of an unexpected entry");
	if ((r = ensure_parent_dirs(merge, new_path, ci->filemask)) <= 0)
		return r;
	/* take ci out of its old place */
	ci->moved_away = 1;
	rq_pathmap_del(&merge->paths, ci->path);
	if (!(new_ci = rq_ort_entry_get(merge, new_path))) {
		if (!(ci = move_to_new_entry(merge, ci, new_path)))
			return -1;
	} else {
		if ((r = move_onto_entry(merge, ci, new_ci, new_path)) <= 0)
			return r;
		ci = new_ci;
	}
	if (merge->config->dir_renames != RQ_ORT_DIR_RENAMES_TRUE) {
		ci->path_conflict = 1;
		ci->conflict_kind = RQ_CONFLICT_DIR_RENAME;
	}
	pair->dst_path = new_path;
	return 0;
}
