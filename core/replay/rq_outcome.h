/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_outcome: what a --keep-going replay (rq_replay) makes of its
 * conflicts: which commits are picked, which are skipped, and the outcome
 * of every ref.
 *
 * A conflict does not stop a keep-going replay. Each commit is in one of
 * four states: pending (not picked yet), ok, conflict (its pick
 * conflicted), skipped (a parent of it conflicted or was skipped: it has
 * no new parent to land on; a merge commit needs all of its replayed
 * parents). Commits are picked in replay order, parents first, so the
 * states of a commit's parents are known before it is picked, in this
 * process or in the forked worker that picks the parents' group
 * (rq_parallel: a group holds a commit and its replayed parents).
 *
 * A ref moves when the commit it points at is ok. Otherwise the chain of
 * parents from that commit down to the conflicting pick decides (through
 * a merge, its first parent that did not replay): when
 * another ref to update points at a commit on that chain, at or above the
 * conflicting pick (the nearest one to it), the ref is blocked by that
 * ref: it waits on that branch; else the conflict is in the ref's own
 * commits and its outcome is a conflict. Branches that share a conflicting
 * commit no ref points at each get a conflict. A ref given by --ref,
 * --advance or --revert moves only when no pick conflicted.
 *
 * The new commits of picks that later lead to a conflict stay in the
 * replay's pack (unreachable from any ref it moves; git gc prunes them as
 * any unreachable object): only the refs decide what is reachable, and
 * leaving them costs less than a second pass over the objects.
 */
#ifndef RQ_OUTCOME_H
#define RQ_OUTCOME_H

#include <git2.h>
#include <stddef.h>

#include "rq_cobj.h"
#include "rq_error.h"
#include "rq_replay_result.h"

enum { RQ_OUTCOME_PENDING, RQ_OUTCOME_OK, RQ_OUTCOME_CONFLICT, RQ_OUTCOME_SKIPPED };

/* The state of every commit of a keep-going replay. */
typedef struct rq_outcome {
	size_t n;
	/* the walk indices of commit i's parents in the range, in order:
	 * parents[first[i] .. first[i + 1]) */
	size_t *first, *parents;
	unsigned char *state; /* RQ_OUTCOME_* */
} rq_outcome;

/* For the walk's commits (replay order). 0, or -1 with err set. */
int rq_outcome_init(rq_outcome *o, const rq_cobj_commit *const *commits, size_t n, rq_error *err);
void rq_outcome_free(rq_outcome *o);

/* Before the pick of commit i: 1 when a parent of it conflicted or was
 * skipped (i is marked skipped and must not be picked), else 0. */
int rq_outcome_skip(rq_outcome *o, size_t i);

/* The pick of commit i: r 0 (ok) or 1 (conflict). */
void rq_outcome_mark(rq_outcome *o, size_t i, int r);

/* Append a conflicting pick to res->failed, taking *conf (left empty);
 * merge: the commit is a merge commit. 0, or -1 with err set (*conf
 * freed). */
int rq_outcome_add_failure(rq_replay_result *res, size_t index, const rq_oid *commit, int merge,
			   rq_conflicts *conf, rq_error *err);

/*
 * After picks made elsewhere (forked workers): sort res->failed into
 * replay order and set every state from it (ok unless conflicting or
 * below a conflict).
 */
void rq_outcome_settle(rq_outcome *o, rq_replay_result *res);

/*
 * A ref the replay would move (in update order): its commit's walk index
 * at (SIZE_MAX: a --ref/--advance/--revert ref, at the end), and its new
 * id when it moves (NULL: it does not). 0, or -1 with err set.
 */
int rq_outcome_add_ref(rq_replay_result *res, const char *ref, const rq_oid *old_id,
		       const rq_oid *new_id, size_t at, rq_error *err);

/*
 * Every ref's status (and blocked_by) from the states o holds (NULL: no
 * keep-going pick: only refs at the end), and the first conflict copied
 * into res->conflict_commit and res->conflicts. 0, or -1 with err set.
 */
int rq_outcome_resolve(const rq_outcome *o, rq_replay_result *res, rq_error *err);

/* Free res->refs and res->failed. */
void rq_outcome_result_free(rq_replay_result *res);

/* "ok", "conflict", "blocked". */
const char *rq_outcome_status_name(rq_ref_status status);

#endif
