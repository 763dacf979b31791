/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_vbase: the tree two commits are merged against, as git's merge-ort
 * takes it (merge_ort_internal): their merge base's tree; for several
 * merge bases a virtual base, the bases merged one by one, oldest first,
 * into the merge of those before, each inner merge against its own merge
 * bases (recursively) and keeping its conflicts (markers two longer than
 * git's 7, labelled "Temporary merge branch 1" and "2", the base
 * "merged common ancestors" or the base's id); for none the empty tree.
 * One module for the replay of merge commits (rq_remerge) and merge
 * trains (core/replay/rq_train), so both give what `git merge`,
 * `git merge-tree --write-tree` and `git show --remerge-diff` give.
 *
 * Commits are read through the merger's commit cache (rq_merger_commits,
 * core/odb/rq_cobj.h), merge bases found by rq_reach over it.
 *
 * Limits: merge bases nested deeper than RQ_VBASE_DEPTH_MAX are an error
 * (RQ_E_USAGE); one rq_vbase makes at most RQ_VBASE_INNER_MAX inner
 * merges (their number grows exponentially in a ladder of octopus
 * merges), past which the answer is RQ_VBASE_OVER_BUDGET. An inner merge
 * that the tree merge hands to libgit2 (RQ_MERGE_NO_TREE, rq_merge.h)
 * gives no tree: RQ_VBASE_NO_TREE. Either is a conflict for the caller.
 */
#ifndef RQ_VBASE_H
#define RQ_VBASE_H

#include <stddef.h>

#include "rq_error.h"
#include "rq_merge.h"
#include "rq_oid.h"
#include "rq_oidmap.h"

#define RQ_VBASE_DEPTH_MAX 32
#define RQ_VBASE_INNER_MAX 256
/* What rq_vbase_tree returns besides 0 and -1. */
#define RQ_VBASE_NO_TREE     1
#define RQ_VBASE_OVER_BUDGET 3
/* The room for a base's label: an id, or git's words. */
#define RQ_VBASE_LABEL_MAX (RQ_OID_MAX_HEXSZ + 32)

typedef struct rq_vbase {
	rq_merger *m;
	const rq_oidmap *ranks;	  /* the replay's new commits (rq_reach.h); NULL: none */
	const rq_oid *empty_tree; /* the base of unrelated histories (written by the caller) */
	size_t inner;		  /* inner merges made so far */
	rq_error *err;
} rq_vbase;

/*
 * The tree to merge b and the merge of leaves[0..nleaves) against (one
 * commit, or the commits merged so far), *out; label (RQ_VBASE_LABEL_MAX
 * bytes, or NULL): its label in conflict markers (the base's id, "merged
 * common ancestors", "empty tree"); nbases (or NULL): how many merge bases
 * there were. 0, RQ_VBASE_NO_TREE, RQ_VBASE_OVER_BUDGET, or -1 with
 * vb->err set.
 */
int rq_vbase_tree(rq_vbase *vb, const rq_oid *leaves, size_t nleaves, const rq_oid *b, rq_oid *out,
		  char *label, size_t *nbases);

/* Commit id's tree, read through the merger's commit cache: 0, or -1 with
 * err set (rq_cobj_get's errors). */
int rq_vbase_commit_tree(rq_merger *m, const rq_oid *id, rq_oid *tree, rq_error *err);

#endif
