/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refproto: the exactly-once ref-update protocol of a job, in one place
 * (docs/refs.md tells it in prose). A job with ref_action "update" moves
 * its refs in four steps, each safe to be killed at:
 *
 *   1. replay and pack: the new commits are in objects/pack, no ref moved;
 *   2. intent: the job's process asks "go" with its intent (the result it
 *      is about to make true, every update and the reflog message); the
 *      worker records it (replayq:{Q}:intent:<id>, refused once the job
 *      has a result) and only then answers go; from the go on no limit
 *      interrupts the process;
 *   3. locks, fence, commit (core/refs/rq_refs): every ref locked and
 *      checked; under the locks the process asks the fence, and the worker
 *      answers "commit" only when the job is still its own (no result; the
 *      stream entry pending with it at this delivery), recording the grant
 *      (replayq:{Q}:granted:<id>) in the same Lua script; then the refs
 *      move (files: one by one; reftable: all at once);
 *   4. result: rq_queue_complete stores it, acknowledges the job and
 *      deletes the intent and the grant, in one script.
 *
 * A later delivery of the job reads the stored intent (rq_refproto_stored)
 * and finishes that update instead of replaying (rq_refproto_answer_stored):
 * refs at their new ids are done, refs at their old ids are moved, a ref
 * anywhere else is ref_moved; its result is the intent's, "recovered".
 * While a grant stands, no delivery stores a failure: the granted process
 * may still be committing.
 *
 * Who calls what:
 *   the job's process (worker/jobrun)    rq_refproto_applies, _apply,
 *                                        _answer_stored, over a link
 *                                        (its questions to the worker)
 *   the worker's pool (worker/pool)      carries the questions (the message
 *                                        types below) and the answers
 *   the worker's task store (worker/tasks, worker/claim)
 *                                        rq_refproto_record, _fence,
 *                                        _stored, _granted (Redis)
 *   the command line (worker/cmd_replay, cmd_train)
 *                                        rq_refproto_applies
 *
 * Ref names are bytes: in every JSON the protocol writes they are encoded
 * by rq_result_json_refname (\xNN for a byte that is not UTF-8 and for a
 * backslash) and read back by rq_result_json_refname_bytes, so that an
 * intent names exactly the refs it moves.
 */
#ifndef RQ_REFPROTO_H
#define RQ_REFPROTO_H

#include <git2.h>
#include <jansson.h>

#include "rq_ident.h"
#include "rq_queue.h"
#include "rq_refs.h"
#include "rq_replay.h"

/* The job's questions (rq_child message types) and the worker's answers. */
#define RQ_REFPROTO_ASK_GO     'P' /* the intent: "I am about to make this true" */
#define RQ_REFPROTO_ASK_COMMIT 'C' /* the fence: "I hold the ref locks" */
#define RQ_REFPROTO_GO	       'g'
#define RQ_REFPROTO_COMMIT     'c'
#define RQ_REFPROTO_ABORT      'a'
/* Not a question: the job's round ended before its fence with nothing
 * moved, and a new go (another intent) may follow ("on_ref_moved":
 * "retry"): the worker enforces the job's limits again meanwhile. */
#define RQ_REFPROTO_AGAIN 'A' /* (the result is RQ_JOBRUN_MSG_RESULT, 'R') */

/*
 * ref_locked without a stall: a lock held by a live process (or by no
 * replayq process of this machine: git's own, another program's) is tried
 * again by the same process after a growing pause, at most this many
 * times, before the update fails with ref_locked (left for a later
 * delivery). A lock whose owner is gone is not waited for.
 */
#define RQ_REFPROTO_LOCK_TRIES 12

/* A randomised pause before try n (0 ...) of something that may go
 * through soon: between base << n / 2 and base << n milliseconds, the
 * growth stopped at cap. */
void rq_refproto_backoff(long base_ms, long cap_ms, int n);

/*
 * The rule for when refs move: a clean replay with updates, or, when
 * partial (--keep-going, a train), one whose clean refs have updates even
 * though others conflicted. rc: what the replay returned.
 */
int rq_refproto_applies(int rc, const rq_replay_result *res, int partial);

/* ---- the intent ---- */

/* An intent, as a stored one is read back. */
typedef struct rq_refproto_intent {
	rq_ref_updates upd; /* every ref the job moves (names are bytes), its reflog message */
	json_t *result;	    /* the result it makes true (no "reflog_msg") */
	int prior;	    /* a --force copy's prior result ("already_applied") */
} rq_refproto_intent;

/*
 * The intent of a result: result (taken) with its "updates" written from
 * res (names without loss) and the reflog message. NULL out of memory.
 */
json_t *rq_refproto_intent_json(json_t *result, const rq_replay_result *res);

/* A stored intent (or a prior result) read back, its ids exactly of
 * algo's width (the repository's): 0, or -1 with err set when it is not
 * one (RQ_E_INTERNAL) or memory runs out. */
int rq_refproto_intent_parse(const char *text, const rq_oid_algo *algo, rq_refproto_intent *out,
			     rq_error *err);
void rq_refproto_intent_free(rq_refproto_intent *in);

/*
 * Where the refs of an intent stand now: todo gets the updates still to
 * make (refs at their old ids whose new commits are there; its updates
 * borrow the intent's names). 1 usable (todo may be empty: all done), 0
 * of no use (its commits are gone, a ref cannot be read: replay again), -1
 * a ref is elsewhere (RQ_E_REF_MOVED, naming it) or out of memory.
 */
int rq_refproto_intent_todo(git_repository *repo, const rq_refproto_intent *in,
			    rq_replay_result *todo, rq_error *err);

/* ---- the job's process ---- */

/* How the process asks its worker; a NULL link (or ask): nobody to ask. */
typedef struct rq_refproto_link {
	/* send a question (RQ_REFPROTO_ASK_*) with a JSON object (taken) and
	 * wait: the answer byte, 0 when none came (the worker closed its end),
	 * -1 when it could not be sent (or memory ran out) */
	int (*ask)(void *arg, char type, json_t *msg);
	/* the go came: nothing may interrupt the update from here (limits) */
	void (*going)(void *arg);
	/* the round ended before the fence, nothing moved, and the job will
	 * ask go again (RQ_REFPROTO_AGAIN: the limits are back); may be NULL */
	void (*again)(void *arg);
	void *arg;
} rq_refproto_link;

typedef enum rq_refproto_outcome {
	RQ_REFPROTO_APPLIED, /* every ref holds its new id */
	RQ_REFPROTO_FAILED,  /* nothing moved; err says why (its verdict too) */
	/* end without a result: the go or the commit was refused (nothing
	 * moved: another delivery owns the job) */
	RQ_REFPROTO_STOPPED,
	/* a commit failed after its grant (a files repository: some refs may
	 * have moved, err says how many): no result either, the next delivery
	 * finishes the update from the intent; only a caller that has no next
	 * delivery (replayq run) reports err */
	RQ_REFPROTO_PARTIAL,
	RQ_REFPROTO_LOST /* the question could not be asked: nothing moved */
} rq_refproto_outcome;

/*
 * Steps 2 and 3: ask go with intent (taken; an rq_refproto_intent_json),
 * then apply todo under the fence. *verdict (may be NULL): why it failed.
 * A lock held by a live process is waited for within step 3 (the same
 * intent, its locks all released between tries, the fence not asked
 * yet): up to RQ_REFPROTO_LOCK_TRIES tries, hold point "refs-lock-wait"
 * before each pause.
 */
rq_refproto_outcome rq_refproto_apply(const rq_refproto_link *link, git_repository *repo,
				      json_t *intent, const rq_replay_result *todo,
				      const rq_ident *committer, rq_refs_verdict *verdict,
				      rq_error *err);

/*
 * A delivery handed a stored intent (rq_refproto_stored): finish that
 * update, or, for a prior result, answer with it while every ref it moved
 * still holds its new id. 1 with *out the result (the intent's, marked
 * "recovered"; or the prior, "already_applied"), 0 replay as usual, -1
 * err set (*how FAILED, PARTIAL), or *how STOPPED / LOST (no result).
 */
int rq_refproto_answer_stored(const rq_refproto_link *link, git_repository *repo,
			      const char *stored, const rq_ident *committer, json_t **out,
			      rq_refproto_outcome *how, rq_error *err);

/*
 * "on_ref_moved": "retry": after a round that failed with
 * RQ_REFPROTO_FAILED and verdict RQ_REFS_MOVED (a ref moved before the
 * fence: nothing moved, no grant), end the round (link->again) and pause
 * before attempt n + 1 (randomised, a few ms); the caller then replays
 * from the refs as they are now and asks go with its new intent, which
 * the worker records over the old one.
 */
void rq_refproto_again(const rq_refproto_link *link, int n);

/* ---- the worker (Redis) ---- */

/* Step 2: record the intent (the text the process sent). 0 recorded, 1
 * refused (the job has its result already), -1 error. */
int rq_refproto_record(rq_queue *q, const char *id, const char *intent, rq_error *err);

/*
 * Step 3's fence: 1 when the job (entry m at delivery m->deliveries) is
 * still consumer's: no result, pending with it at that delivery; the grant
 * "<consumer> <delivery>" is recorded in the same script. 0 another worker
 * has it or finished it, -1 error.
 */
int rq_refproto_fence(rq_queue *q, const rq_queue_msg *m, const char *id, const char *consumer,
		      rq_error *err);

/* 1 when a delivery of job id passed the fence and its result is not
 * stored: a process may be committing its refs. 0 none, -1 error. */
int rq_refproto_granted(rq_queue *q, const char *id, rq_error *err);

/*
 * What a delivery of a ref-update job is handed: the intent an earlier
 * delivery recorded (*granted set: whether it passed the fence), or, for
 * a --force copy of the same content (prior_same), its prior result when
 * that moved refs. 0 (*intent NULL: none), -1 when it cannot be known now
 * (Redis: err set; the job is left for a retry).
 */
int rq_refproto_stored(rq_queue *q, const rq_queue_msg *m, const char *id, int prior_same,
		       char **intent, int *granted, rq_error *err);

#endif
