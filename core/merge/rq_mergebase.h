/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_mergebase: the merge bases of a commit and one or more others (git
 * merge-base --all B L1 L2 ...), for the remerges of a replay
 * (rq_remerge.c).
 *
 * git's paint_down_to_common() walks both histories newest first, by
 * commit date, until every commit left is reachable from a common one.
 * The commits a replay writes all have the same committer date, and on a
 * chain of merges (a topic merged again and again) a date-ordered walk
 * goes down one side's whole replayed history before the other side
 * catches up: libgit2's merge base (no generation numbers) then parses
 * every commit replayed so far, at every merge, quadratic in the merges
 * (200 merges cost 2.9 ms each, against 0.19 ms a pick: bench/gen-merges,
 * NSUB=200). Here the walk is the same paint-down, in an order that is
 * topological where it matters: the replay's new commits first, each
 * ranked by its place in the replay (a commit after its parents), then
 * the others by date as git orders them. No commit of the repository
 * descends from a commit the replay just wrote, so the order holds.
 *
 * One base found is the answer; several are handed to libgit2's
 * git_merge_bases_many, which removes the redundant ones (as git does).
 */
#ifndef RQ_MERGEBASE_H
#define RQ_MERGEBASE_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_oidmap.h"

/*
 * The merge bases of b and the merge of leaves[0..nleaves): *out
 * (malloc'ed, NULL for none) and *n. ranks: the replay's new commits and
 * their rank (a larger one later; NULL: none). 0, or -1 with err set.
 */
int rq_mergebase(git_repository *repo, const rq_oidmap *ranks, const git_oid *b,
		 const git_oid *leaves, size_t nleaves, git_oid **out, size_t *n, rq_error *err);

#endif
