/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_merge: the 3-way tree merge behind every pick.
 *
 * base = the picked commit's parent tree (NULL: the empty tree), ours = the
 * tree the pick lands on, theirs = the picked commit's tree (for a revert,
 * base and theirs are swapped by the caller). A clean merge writes the
 * result tree (and any merged blobs and new subtrees) through the
 * repository's object database and returns 0; a conflicted one returns 1
 * and lists each conflicting path with its kind; errors are negative.
 *
 * Trivial cases are resolved without reading a tree: theirs == base gives
 * ours, ours == base or ours == theirs gives theirs. Everything else is a
 * tree-level re-implementation of git 2.39's merge-ort (see rq_merge.c for
 * what it covers and when it falls back to libgit2's merge), reading only
 * the directories that differ, following merge.renameLimit,
 * merge.directoryRenames and merge.conflictStyle from the repository
 * config. Like merge-ort, merge.renames/diff.renames are not consulted.
 */
#ifndef RQ_MERGE_H
#define RQ_MERGE_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"

/* The id of the empty tree. */
#define RQ_EMPTY_TREE_HEX "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

typedef enum {
	RQ_CONFLICT_CONTENT,
	RQ_CONFLICT_ADD_ADD,
	RQ_CONFLICT_MODIFY_DELETE,
	RQ_CONFLICT_RENAME,
	RQ_CONFLICT_FILE_DIRECTORY,
	RQ_CONFLICT_RENAME_DELETE, /* renamed on one side, deleted on the other */
	RQ_CONFLICT_RENAME_RENAME, /* renamed differently on the two sides */
	RQ_CONFLICT_DIR_RENAME,	   /* a path moved (or not) by a directory rename */
	RQ_CONFLICT_MODE,	   /* both sides changed the mode differently */
	RQ_CONFLICT_TYPE,	   /* file, symlink, submodule: different kinds */
	RQ_CONFLICT_COUNT
} rq_conflict_kind;

typedef struct rq_conflict {
	char *path;
	rq_conflict_kind kind;
} rq_conflict;

typedef struct rq_conflicts {
	rq_conflict *v;
	size_t n, cap;
} rq_conflicts;

/*
 * Stable names: "content", "add/add", "modify/delete", "rename",
 * "file/directory", "rename/delete", "rename/rename", "directory rename",
 * "mode", "distinct types".
 */
const char *rq_conflict_kind_name(rq_conflict_kind kind);
/* Append a conflict (path copied). 0, or -1 out of memory (c unchanged). */
int rq_conflicts_add(rq_conflicts *c, const char *path, rq_conflict_kind kind);
void rq_conflicts_free(rq_conflicts *c);

typedef struct rq_merge_stats {
	size_t trivial;	 /* picks resolved without opening a tree */
	size_t full;	 /* picks that needed a real merge (tree merge or fallback) */
	size_t fallback; /* of those, picks merged by libgit2's merge */
	/* rename similarity scores: computed, and remembered from an earlier pick */
	size_t scores_computed, scores_reused;
} rq_merge_stats;

typedef struct rq_merger rq_merger;

int rq_merger_new(rq_merger **out, git_repository *repo, rq_error *err);
void rq_merger_free(rq_merger *m);
const rq_merge_stats *rq_merger_stats(const rq_merger *m);

int rq_merger_merge(rq_merger *m, const git_oid *base, const git_oid *ours, const git_oid *theirs,
		    git_oid *out, rq_conflicts *conflicts, rq_error *err);

#endif
