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
 * Trivial cases are resolved from the tree ids: theirs == base gives ours,
 * ours == base gives theirs, with only that tree's top level read (and
 * written again when its modes are not git's canonical ones, as merge-ort
 * writes every top level it merges). Everything else is a
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

#include "rq_conflict.h" /* rq_conflicts, the conflicts a merge reports */
#include "rq_error.h"

/* The id of the empty tree. */
#define RQ_EMPTY_TREE_HEX "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

typedef struct rq_merge_stats {
	size_t trivial;	 /* picks resolved from the tree ids (one side unchanged) */
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

/*
 * Forget the renames remembered along the current chain of picks (as a
 * conflict or an unrelated merge would): the next merge detects renames
 * afresh, as a separate git replay call would. The similarity scores stay
 * (they are facts about pairs of blobs, not about the chain).
 */
void rq_merger_forget_renames(rq_merger *m);

#endif
