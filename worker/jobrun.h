/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobrun: what a pool child does with its one job, and what it tells the
 * parent.
 *
 * The child (forked by worker/pool with core/base/rq_child) holds itself
 * to its limits (a deadline timer, CPU time, private memory), opens the
 * job's repository under the root and holds it there, runs the engine
 * (rq_replay, or rq_train for a job of mode "train"), and, for ref_action
 * "update", moves the refs by the ref-update protocol (queue/rq_refproto:
 * the intent and its "go", the fence under the locks, a stored intent
 * finished by a later delivery; a keep-going job or a train moves the
 * refs that replayed cleanly even when others conflicted). Its messages
 * to the parent:
 *
 *   'P' <intent>   RQ_REFPROTO_ASK_GO: the parent records the intent and
 *                  answers go; after a go no limit interrupts the child.
 *   'C' {}         RQ_REFPROTO_ASK_COMMIT: the fence, under the locks.
 *   'R' <result>   the result, the end of the job's report: the parent
 *                  publishes it as soon as it is in (stores it, prints
 *                  it), without waiting for the child to exit.
 *   'F' <after>    only when a consolidation of replayq's packs was due
 *                  after the job (rq_odb_repack): what it did,
 *                  {"merged":n,"own_before":n,"own_after":n,"busy":b}, or
 *                  {"error":{"code":..,"message":..}}. Logged and counted;
 *                  it never changes the result, nor does a child that
 *                  dies before it.
 *   'S' <result>   instead of 'R', when an update stopped after its grant
 *                  (the child then exits RQ_JOBRUN_EXIT_ABORT): the error,
 *                  the result only where no later delivery finishes the
 *                  intent (run); never published as a worker's result.
 *
 * Each is one rq_child message whose payload is the child's monotonic
 * clock in milliseconds, a space and the JSON: the parent judges a result
 * against its deadline by the time the child finished, not by the time
 * it got round to reading it. A child that was refused, or whose commit
 * failed after it was granted (some refs may have moved), sends no result
 * and exits RQ_JOBRUN_EXIT_ABORT: the job is left for its retry, which
 * finishes the update from its intent.
 */
#ifndef RQ_JOBRUN_H
#define RQ_JOBRUN_H

#include <stdint.h>
#include <sys/types.h>

#include "rq_job.h"

/* Exit statuses of a child that sent no result. */
#define RQ_JOBRUN_EXIT_NOMEM 3 /* out of memory */
#define RQ_JOBRUN_EXIT_ABORT 5 /* intent or commit refused, or a granted commit failed */

/* How long a child may work after its result (its consolidation), in
 * milliseconds: then its own timer kills it (the result stands). */
#define RQ_JOBRUN_AFTER_MS 600000

/* The result and after messages (the questions are rq_refproto's). */
#define RQ_JOBRUN_MSG_RESULT  'R'
#define RQ_JOBRUN_MSG_AFTER   'F'
#define RQ_JOBRUN_MSG_STOPPED 'S'

/* What a child knows of its pool. */
typedef struct rq_jobrun_env {
	const char *root;	 /* the repository root, absolute and resolved */
	int alternates_anywhere; /* follow objects/info/alternates outside the root */
	uint64_t memory_limit;	 /* bytes of resident memory, 0: none */
	int data_limit;		 /* also limit the private memory (RLIMIT_DATA) */
	const char *worker;	 /* the name results carry */
	int no_consolidate;	 /* replayq's packs are left as they are after a job */
	struct rq_sign *signer;	 /* the worker's signer (--sign-key); NULL: none */
	unsigned confine_flags;	 /* rq_confine_open's (--repo-scope=root) */
} rq_jobrun_env;

/* One job for a child. */
typedef struct rq_jobrun_task {
	const rq_job *job;
	int64_t default_time; /* committer time (seconds) when the job has none */
	long attempt;	      /* the delivery */
	/* the intent an earlier delivery recorded (its updates are finished
	 * and it is the result), or a --force copy's prior result marked
	 * "already_applied"; NULL: none */
	const char *intent;
	long long deadline; /* monotonic milliseconds */
	/* an earlier delivery passed the fence with the intent: it may have
	 * moved refs (without: none did, and a job with "on_ref_moved":
	 * "retry" replays when the intent's refs moved elsewhere) */
	int granted;
} rq_jobrun_task;

/*
 * In a child just forked: run the task and report on report_fd, asking on
 * it and reading the answers on answer_fd (-1 for a job that moves no
 * ref), then exit. parent: the pid it was forked from (a child whose
 * parent is gone already exits at once).
 */
void rq_jobrun_child(const rq_jobrun_env *env, const rq_jobrun_task *task, pid_t parent,
		     int report_fd, int answer_fd) __attribute__((noreturn));

/* The JSON of a message's payload, and in *sent_ms the child's clock when
 * it sent it; NULL when the payload is not one. */
const char *rq_jobrun_payload_json(const char *payload, long long *sent_ms);

#endif
