/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_ort: the helpers every phase of the tree merge uses (see rq_ort.h):
 * out-of-memory and fallback reports, the conflict list, entries and their
 * path map, rename pair lists, blob reads.
 */
#include "rq_ort.h"
#include "rq_ortodb.h"

#include <string.h>

/*
 * Every map of the merge draws on the merge's arena; deferring trivial
 * directory merges is allowed on both sides until handle_deferred_entries
 * decides otherwise (merge-ort's trivial_merges_okay starts at 1).
 */
void rq_ort_merge_init(rq_ort_merge *merge)
{
	rq_pathmap_init(&merge->paths, &merge->arena);
	for (int i = 0; i < 3; i++) {
		rq_pathmap_init(&merge->dirs_removed[i], &merge->arena);
		rq_pathmap_init(&merge->relevant_sources[i], &merge->arena);
		rq_pathmap_init(&merge->dir_rename_count[i], &merge->arena);
		rq_pathmap_init(&merge->dir_renames[i], &merge->arena);
		rq_pathmap_init(&merge->possible_trivial[i], &merge->arena);
		merge->trivial_merges_okay[i] = 1;
	}
}

/*
 * Phases check merge->out_of_memory where a helper can only return NULL
 * (rq_dir_rename_check), to tell "no result" from "failed".
 */
int rq_ort_nomem(rq_ort_merge *merge)
{
	merge->out_of_memory = 1;
	return rq_error_set(merge->err, RQ_E_NOMEM, "out of memory");
}

/*
 * Only the first reason is kept: later ones are often its consequences.
 * The phases keep going after a fallback is decided (they only stop where
 * continuing would be unsafe); the driver checks the flag between phases.
 */
void rq_ort_fall_back(rq_ort_merge *merge, const char *why)
{
	if (!merge->fall_back)
		merge->fall_back_why = why;
	merge->fall_back = 1;
}

/*
 * merge-ort records conflicts per path (path_msg) and keeps every message;
 * replayq reports one kind per path, the first found, which is the one the
 * rename phase decided when there is one. A conflict anywhere means the
 * pick stops, so nothing more is written (a merge that keeps its conflicts
 * goes on writing: rq_ort_mode).
 */
int rq_ort_conflict(rq_ort_merge *merge, const char *path, rq_conflict_kind kind)
{
	rq_conflicts *c = merge->conflicts;

	if (!merge->mode || !merge->mode->accept)
		merge->write_objects = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, path))
			return 0;
	if (rq_conflicts_add(c, path, kind) < 0)
		return rq_ort_nomem(merge);
	return 0;
}

/* Deleted entries (moved away by a directory rename) are not found. */
rq_ort_entry *rq_ort_entry_get(rq_ort_merge *merge, const char *path)
{
	intptr_t v;
	return rq_pathmap_get(&merge->paths, path, &v) ? (rq_ort_entry *)v : NULL;
}

/*
 * Children are kept in the order they are added: the walk adds them in
 * traverse order (close to tree order), directory renames add new ones at
 * the end; write_dir sorts them into tree order when it writes a tree.
 */
static int add_child(rq_ort_merge *merge, rq_ort_entry *dir, rq_ort_entry *child)
{
	rq_ort_entry **nv = rq_arena_grow(&merge->arena, dir->children, dir->nchildren,
					  &dir->capchildren, sizeof(*nv), 8);
	if (!nv)
		return rq_ort_nomem(merge);
	dir->children = nv;
	dir->children[dir->nchildren++] = child;
	return 0;
}

/*
 * merge-ort's setup_path_info(): the entry is registered under its full
 * path and remembers where its basename starts, so that trees are written
 * from basenames without splitting paths again.
 */
rq_ort_entry *rq_ort_entry_new(rq_ort_merge *merge, rq_ort_entry *dir, const char *path)
{
	rq_ort_entry *e = rq_arena_alloc(&merge->arena, sizeof(*e));

	if (!e) {
		rq_ort_nomem(merge);
		return NULL;
	}
	e->path = path;
	e->dir = dir;
	e->basename_offset = dir && dir->path[0] ? strlen(dir->path) + 1 : 0;
	e->conflict_kind = -1;
	if (add_child(merge, dir, e) < 0)
		return NULL;
	if (rq_pathmap_put(&merge->paths, path, (intptr_t)e) < 0) {
		rq_ort_nomem(merge);
		return NULL;
	}
	return e;
}

/*
 * merge-ort creates the entries a directory rename needs in
 * apply_directory_rename_modifications(): the new path and each parent
 * directory that does not exist yet, marked as walked so that its tree is
 * written.
 */
rq_ort_entry *rq_ort_entry_insert(rq_ort_merge *merge, const char *path)
{
	rq_ort_entry *dir = NULL;
	char *dpath;
	long k;

	/* the nearest directory that has an entry, marked walked (the top at
	 * worst, as it is); then the missing ones down from it, each walked. A
	 * loop, not a recursion: the path may be thousands of levels deep. */
	for (k = (long)strlen(path) - 1; k >= 0 && !dir; k--) {
		if (path[k] != '/')
			continue;
		if (!(dpath = rq_arena_strndup(&merge->arena, path, (size_t)k)))
			return rq_ort_nomem(merge), NULL;
		if ((dir = rq_ort_entry_get(merge, dpath)))
			dir->walked = 1;
	}
	if (!dir)
		dir = merge->root;
	for (size_t j = dir == merge->root ? 0 : (size_t)k + 2; path[j]; j++) {
		if (path[j] != '/')
			continue;
		if (!(dpath = rq_arena_strndup(&merge->arena, path, j)))
			return rq_ort_nomem(merge), NULL;
		if (!(dir = rq_ort_entry_new(merge, dir, dpath)))
			return NULL;
		dir->walked = 1;
	}
	return rq_ort_entry_new(merge, dir, path);
}

/*
 * The pair lists are arena arrays of pointers: pairs move between lists (a
 * side's list, the combined list of renames) without being copied.
 */
int rq_ort_pair_push(rq_ort_merge *merge, rq_ort_pairs *pairs, rq_ort_pair *pair)
{
	rq_ort_pair **nv =
	    rq_arena_grow(&merge->arena, pairs->v, pairs->n, &pairs->cap, sizeof(*nv), 16);
	if (!nv)
		return rq_ort_nomem(merge);
	pairs->v = nv;
	pairs->v[pairs->n++] = pair;
	return 0;
}

/*
 * Through the repository's object database, which also serves the objects
 * earlier picks wrote (the replay's in-memory store is one of its backends,
 * core/odb/rq_odb_mem.h).
 */
int rq_ort_read_blob(rq_ort_merge *merge, const rq_oid *id, rq_odb_read_obj *out)
{
	if (rq_ortodb_blob(out, merge->config->reader, id) < 0)
		return rq_error_git(merge->err, "cannot read blob");
	return 0;
}
