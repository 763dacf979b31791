/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_reach: computations on the commit graph, one code path for every
 * caller and both object formats: the merge bases of a commit and one or
 * more others (git merge-base --all), and whether one commit descends
 * from another (git merge-base --is-ancestor). Follows git's
 * commit-reach.c (paint_down_to_common, remove_redundant).
 *
 * The walk paints down from both sides, newest commit first by committer
 * date (ties in the order queued), until every commit left in the queue
 * is reachable from a common one; the common commits not reached through
 * another are the candidates, and those reachable from another candidate
 * are dropped. The bases come out in git's order: newest first, commits
 * of the same date in the order the walk found them.
 *
 * ranks (the remerges of core/merge): the replay's new commits, each with
 * its rank in the replay (a commit after its parents). They are walked
 * first, the later ranked first, then the others by date: the replay's
 * commits all carry one date, and a date-ordered walk of a chain of
 * merges went down one side's whole replayed history before the other
 * caught up (quadratic in the merges). No commit of the repository
 * descends from one the replay just wrote, so the walk stays correct.
 * When that walk finds several candidates, the bases are those of the
 * plain date-ordered walk, so that their order is git's.
 *
 * Commits are read through a reader (rq_reach_reader): its date and its
 * parents, once per commit and walk: rq_cobj_reach_reader reads them from
 * a job's commit cache (core/odb's rq_cobj).
 */
#ifndef RQ_REACH_H
#define RQ_REACH_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_oid.h"
#include "rq_oidmap.h"

typedef struct rq_reach_reader {
	/* Commit id's committer date (*date) and parents (*parents, malloc'ed
	 * or NULL for none, *nparents of them). 0, or -1 with err set. */
	int (*read)(void *ctx, const rq_oid *id, int64_t *date, rq_oid **parents, size_t *nparents,
		    rq_error *err);
	void *ctx;
} rq_reach_reader;

/*
 * The merge bases of one and the merge of twos[0..ntwos) (git merge-base
 * --all one twos...; libgit2's git_merge_bases_many), in git's order:
 * *out (malloc'ed, NULL for none) and *n (0: unrelated histories). ranks:
 * see above (NULL: none). 0, or -1 with err set.
 */
int rq_reach_bases(const rq_reach_reader *rd, const rq_oidmap *ranks, const rq_oid *one,
		   const rq_oid *twos, size_t ntwos, rq_oid **out, size_t *n, rq_error *err);

/*
 * Does commit descend from ancestor? 1 yes, 0 no (and 0 when they are the
 * same commit, as libgit2's git_graph_descendant_of answers), -1 with err
 * set.
 */
int rq_reach_descends(const rq_reach_reader *rd, const rq_oid *commit, const rq_oid *ancestor,
		      rq_error *err);

#endif
