/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_parents: where a replayed commit's parents that are outside the range
 * go, once the range holds merge commits (rq_replay; rq_remerge.h replays
 * the merges themselves).
 *
 * A parent in the range becomes its replayed commit. For a parent outside
 * the range, git replay's rule, which replayq keeps for every range
 * without a merge (byte for byte), is: the new base (--onto, --advance).
 * With merges, the rule is `git rebase --rebase-merges --onto`'s (in its
 * default "no-rebase-cousins" mode), so that topology is kept:
 *  - the commits are split into components: a commit goes with its
 *    parents in the range (a merge joins its parents' components);
 *  - in a component with a merge, a parent outside the range that a
 *    negative revision excludes (the boundary) goes onto the new base when
 *    it is a merge base of a negative revision and a positive one whose
 *    tip is in the component (rebase-merges labels the merge base of its
 *    upstream and its branch "onto": the range's bottom); when several
 *    negative revisions give several such merge bases and some are in the
 *    new base's history, only those are (a merge base of an excluded
 *    branch the new base does not hold, a release branch merged in, stays
 *    merged). Any other stays where it is: a branch point of a cousin
 *    branch (merged in, or forked from an older point), or a branch
 *    merged in;
 *  - a parent a walk option left out (--first-parent: a merge's other
 *    parents; a filter: a commit not selected): the first parent goes onto
 *    the new base, as git replay does; another stays;
 *  - a root commit (a history merged in as unrelated) stays a root, as
 *    rebase-merges keeps it ("[new root]"), where git replay picks a root
 *    onto the new base.
 * In a range without merges the first rule applies, byte for byte. (There
 * the two agree: a component without a merge has one boundary parent, and
 * it is a merge base of a negative and a positive revision.)
 */
#ifndef RQ_PARENTS_H
#define RQ_PARENTS_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_revs.h"
#include "rq_walk.h"

typedef struct rq_parents rq_parents;

/* The plan for a walk's commits (of revs, onto the new base onto); *out
 * NULL (nothing to plan) when the range holds no merge commit. 0, or -1
 * with err set. */
int rq_parents_plan(rq_parents **out, const rq_revs *revs, const rq_walk *walk, const rq_oid *onto,
		    rq_error *err);

/*
 * Parent k (outside the range) of walk commit i: 1 when it goes onto the
 * new base, 0 when it stays. plan NULL: git replay's rule (1).
 */
int rq_parents_onto(const rq_parents *plan, size_t i, unsigned k, const rq_oid *parent);

/* Root commit i: 1 when it stays a root (in a component with a merge), 0
 * when it is picked onto the new base (git replay's rule; plan NULL). */
int rq_parents_keeps_root(const rq_parents *plan, size_t i);

void rq_parents_free(rq_parents *plan);

#endif
