/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_walk: the commits to replay, in the order git replays them.
 *
 * The set is every commit reachable from a positive revision and not from
 * a negative one. The order is git's `rev-list --topo-order` (graph order)
 * reversed, parents first: the walk follows git's date-ordered limiting
 * walk and its topological sort, so that several divergent branches are
 * replayed in the order `git rev-list --reverse --topo-order` lists them.
 * With newest_first the list is not reversed (used by revert).
 */
#ifndef RQ_WALK_H
#define RQ_WALK_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_oidmap.h"
#include "rq_revs.h"

typedef struct rq_walk {
	/* replay order; the commits are the job's (revs->commits' cache) and
	 * live as long as the rq_revs the walk was run with */
	const rq_cobj_commit **commits;
	size_t n;
	/*
	 * The parents of these commits that a negative revision excludes
	 * (git's boundary commits, rev-list --boundary), as walked: with
	 * --first-parent, only first parents. A parent outside the set that
	 * is in neither list was left out by a walk option (or not walked).
	 */
	rq_oidmap boundary;
} rq_walk;

/*
 * Fill *out. max_commits 0 means no limit; more commits than that fail
 * with RQ_E_TOO_MANY_COMMITS. Merge commits are in the set like any other
 * (the replay replays them, or refuses them for a revert).
 */
int rq_walk_run(git_repository *repo, const rq_revs *revs, int newest_first, size_t max_commits,
		rq_walk *out, rq_error *err);
void rq_walk_free(rq_walk *walk);

#endif
