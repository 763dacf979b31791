/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tasks: the worker's task store. A task is a stream entry being handled:
 * running in a child of the pool, or answered without a run, or finished
 * with its result waiting to be stored while Redis is away. The store
 * holds the running tasks (one per busy slot of the pool) and the waiting
 * ones, stores each result and acknowledges its job in one step
 * (rq_queue_complete, or a dead letter when Redis refuses it for good),
 * logs and counts each settled task, and answers the pool's callbacks for
 * a running task: the intent of its ref update, the fence before it
 * commits, its end (retried or final).
 */
#ifndef RQ_TASKS_H
#define RQ_TASKS_H

#include <jansson.h>

#include "rq_queue.h"
#include "worker_metrics.h"

/* A stream entry being handled. */
typedef struct rq_task {
	rq_queue_msg msg;
	char *id; /* the name its keys are built from: the checked id, or "!<entry>" */
	char *reply_to;
	long long started;
	struct rq_task *next; /* in the list of results waiting for Redis */
	char *result;
	char *status;
	char *dead_reason;
	int tries;	    /* failed attempts to store its result */
	long long next_try; /* when to try storing again */
	int granted;	    /* an earlier delivery passed the fence: it may be committing */
	int prior_same;	    /* msg.prior is this content's result before a --force */
	int holds;	    /* times it was held (rq_tasks_hold) */
	char *group;	    /* its job's group (rq_group), NULL: none */
} rq_task;

/* The store, and where its results go. */
typedef struct rq_tasks {
	rq_queue *q;		    /* the commands' connection: results, intents, claims */
	const char *worker;	    /* this worker's name */
	long max_deliveries;	    /* a transient failure is final past that many */
	rq_worker_metrics *metrics; /* NULL: none */
	rq_task **running;	    /* cap slots, NULL where free */
	int cap;
	rq_task *waiting; /* finished, result not stored yet (Redis away) */
	/* not started yet for want of a descriptor or a process (the pool
	 * was busy): started again when a child ends, or at held_retry */
	rq_task *held;
	long long held_retry;
	/* a Redis failure (a read, a reclaim, a claim that failed, a
	 * reconnect) may have left entries pending under this worker's name
	 * with no task for them: the worker looks for them and takes them
	 * back (worker_loop) */
	int own_lost;
	unsigned long done_ok, done_conflict, done_error;
} rq_tasks;

/* Room for cap running tasks: 0, or -1 out of memory. */
int rq_tasks_init(rq_tasks *ts, int cap);
/* Free the store (the tasks still in it are dropped). */
void rq_tasks_free(rq_tasks *ts);

/* A new task for message m (taken: m is left empty), its clock started;
 * NULL out of memory (m cleared). */
rq_task *rq_task_new(rq_queue_msg *m);
void rq_task_free(rq_task *t);

/* The fields every log line about a task has. */
json_t *rq_tasks_log_fields(const rq_task *t);

/* A task whose child started; 1 if entry sid is one of them (or held). */
void rq_tasks_run_add(rq_tasks *ts, rq_task *t);
int rq_tasks_is_running(const rq_tasks *ts, const char *sid);

/* The entry ids of the tasks in the store (running, held, waiting to be
 * stored), in *out (malloc'ed, borrowing the tasks' strings; NULL when
 * there are none): their number, or -1 out of memory. */
long rq_tasks_entries(const rq_tasks *ts, const char ***out);

/* A task the pool could not start now: held, its claim kept fresh, until
 * it can (rq_claim_start_held), not left for a redelivery, which would
 * count as one and could end in a dead letter that says it crashed. */
void rq_tasks_hold(rq_tasks *ts, rq_task *t);
/* The first held task, taken out of the list (NULL: none). */
rq_task *rq_tasks_unhold(rq_tasks *ts);
/* At the end: the held tasks left for another worker, each with an
 * attempt noted that says it was never started. */
void rq_tasks_release_held(rq_tasks *ts);

/*
 * The task is answered: store its result (with dead_reason, also as a
 * dead letter) and acknowledge its job, or keep it to store later while
 * Redis is away. The task is the store's from then on.
 */
void rq_tasks_finish(rq_tasks *ts, rq_task *t, const char *result, const char *status,
		     const char *dead_reason);
/* The same with the result the job has stored already (a redelivery of a
 * job that has its result), passed on as it is. */
void rq_tasks_finish_stored(rq_tasks *ts, rq_task *t, const char *result, const char *status);

/* A job of a group left the stream (acknowledged): its group's turn
 * passes on if it held it (rq_group_release; a failure is logged, the
 * workers' sweep passes it on later). */
void rq_tasks_release_group(rq_tasks *ts, const rq_task *t);

/* Store the kept results whose pause is over (stop at the first that
 * fails again); the soonest the next is due, or -1 when none is kept. */
void rq_tasks_flush(rq_tasks *ts);
long long rq_tasks_next_store(const rq_tasks *ts);

/* Reset the idle time of the running (and held) tasks' entries, so that
 * no one reclaims them (with each heartbeat). */
void rq_tasks_keep_claims(rq_tasks *ts);

/* After the loop: store what can be stored now, trying for a few
 * seconds; what cannot is left unacknowledged (redelivered later). */
void rq_tasks_settle(rq_tasks *ts);

/* The pool's callbacks (rq_pool_opts: intent, owns, done, after,
 * and the dropped of rq_pool_kill_all), arg being the store, ctx the task. */
int rq_tasks_intent(void *arg, void *ctx, const char *result);
int rq_tasks_owns(void *arg, void *ctx);
void rq_tasks_done(void *arg, void *ctx, const char *result, const char *status, int transient);
/* A consolidation after a job whose result was stored ended (rq_pool_opts
 * after): counted. */
void rq_tasks_after(void *arg, const char *outcome);
void rq_tasks_dropped(void *arg, void *ctx);

#endif
