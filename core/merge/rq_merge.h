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
#include "rq_oid.h"
#include "rq_oidmap.h"
#include "rq_tree.h"

typedef struct rq_merge_stats {
	size_t trivial;	 /* picks resolved from the tree ids (one side unchanged) */
	size_t full;	 /* picks that needed a real merge (tree merge or fallback) */
	size_t fallback; /* of those, picks merged by libgit2's merge */
	/* rename similarity scores: computed, and remembered from an earlier pick */
	size_t scores_computed, scores_reused;
} rq_merge_stats;

typedef struct rq_merger rq_merger;

typedef struct rq_merger_opts {
	/* the worker's root (NULL: none), which every attribute file the merge
	 * reads must resolve inside; a job's merge reads no global or system
	 * attribute file (core/merge/ort/rq_attr.h) */
	const char *root;
	/* the repository's object format, read once by the caller (NULL:
	 * SHA-1): the width of every id the merge takes, reads and writes */
	const rq_oid_algo *algo;
} rq_merger_opts;

/* A merger for repo; opts NULL: all defaults. The empty tree of the
 * format is algo->empty_tree (rq_oid.h). */
int rq_merger_new(rq_merger **out, git_repository *repo, const rq_merger_opts *opts, rq_error *err);
void rq_merger_free(rq_merger *m);
const rq_merge_stats *rq_merger_stats(const rq_merger *m);
/* The object format of the merger's ids (never NULL). */
const rq_oid_algo *rq_merger_algo(const rq_merger *m);
/* Follow the repository's object database if it was replaced since the
 * merger last read (every merge does this first; a caller that reads
 * through the two below before a merge calls it). 0, or -1 with err set. */
int rq_merger_sync(rq_merger *m, rq_error *err);
/* The merger's reader of trees (core/odb/rq_odb_read.h underneath), for
 * rq_tree_open_with; valid while m lives. */
const rq_tree_reader *rq_merger_trees(const rq_merger *m);
/* The commit cache the merger reads commits through (the virtual bases
 * and remerges, core/merge/rq_vbase.h): the one given to
 * rq_merger_use_commits, else its own (made the first time, over its
 * reader). NULL with err set: out of memory. */
struct rq_cobj_cache *rq_merger_commits(rq_merger *m, rq_error *err);
/* Read commits through the job's cache c (core/odb/rq_cobj.h, in the
 * merger's format; it must outlive the merger) rather than a cache of the
 * merger's own: the replay's, so that a commit is parsed once per job.
 * Before the merger's first commit read. */
void rq_merger_use_commits(rq_merger *m, struct rq_cobj_cache *c);

int rq_merger_merge(rq_merger *m, const rq_oid *base, const rq_oid *ours, const rq_oid *theirs,
		    rq_oid *out, rq_conflicts *conflicts, rq_error *err);

/* ---- the merges of a remerge (core/merge/rq_remerge.h) -------------------- */

/* The conflict markers an accepting merge writes: labels (NULL: none) and
 * length (0: git's 7). */
typedef struct rq_merge_marks {
	const char *ours, *base, *theirs;
	int size;
} rq_merge_marks;

/* What rq_merger_merge_accept returns besides 0, 1 and -1. */
#define RQ_MERGE_NO_TREE 2

/*
 * A merge that keeps its conflicts, as merge-ort does for `git show
 * --remerge-diff` and `git merge-tree`: 0 clean (*out), 1 conflicted
 * (*out: the tree with the conflicts accepted: text with conflict markers
 * labelled by marks, the surviving side of a modify/delete, ...; conflicts
 * and details get one entry each per conflict), RQ_MERGE_NO_TREE (a
 * conflicted merge in a state the tree merge hands to libgit2, which gives
 * no tree: conflicts listed, no details), -1. Remembered renames are not
 * used; the chain is broken.
 */
int rq_merger_merge_accept(rq_merger *m, const rq_oid *base, const rq_oid *ours,
			   const rq_oid *theirs, const rq_merge_marks *marks, rq_oid *out,
			   rq_conflicts *conflicts, rq_conflict_details *details, rq_error *err);

/*
 * The third merge of a remerge: base R, ours N, theirs the original merge's
 * tree, where the blobs in base_marked (R's) and ours_marked (N's) hold
 * conflict hunks written with marks: a hunk is taken or replaced whole, and
 * one of N left in the result is a conflict (RQ_CONFLICT_RESOLUTION where
 * R had one at that place). 0 clean, 1 conflict, -1; as rq_merger_merge
 * otherwise (a fallback to libgit2 merges plainly: the caller decides
 * whether that can stand, by rq_merger_stats' fallback count).
 */
int rq_merger_merge_remerge(rq_merger *m, const rq_oid *base, const rq_oid *ours,
			    const rq_oid *theirs, const rq_merge_marks *marks,
			    const rq_oidmap *base_marked, const rq_oidmap *ours_marked, rq_oid *out,
			    rq_conflicts *conflicts, rq_error *err);

/*
 * Forget the renames remembered along the current chain of picks (as a
 * conflict or an unrelated merge would): the next merge detects renames
 * afresh, as a separate git replay call would. The similarity scores stay
 * (they are facts about pairs of blobs, not about the chain).
 */
void rq_merger_forget_renames(rq_merger *m);

#endif
