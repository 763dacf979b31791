/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_group: how a job enters the queue's stream, and groups.
 *
 * A job with a "group" runs after the jobs of its group submitted before
 * it have their results, one at a time across every worker of the queue,
 * as SQS FIFO message groups and BullMQ groups do. In Redis (all keys of
 * queue Q share the hash tag {Q}, so each script runs on one node of a
 * Cluster):
 *   replayq:{Q}:groups     hash: group -> "<entry> <job id>", the stream
 *                          entry that holds the group's turn (queued or
 *                          running); no field: the group is idle
 *   replayq:{Q}:group:<G>  stream: the group's other jobs, parked in
 *                          submission order (the fields of a jobs entry)
 *   replayq:{Q}:job:<id>   of a parked job: "<its entry in group:<G>> <G>"
 * A group has at most one entry in the jobs stream. Submitting a grouped
 * job (one script) puts it in the jobs stream when its group is idle and
 * makes it the group's turn, else parks it. When the entry that holds a
 * turn leaves the jobs stream (its result stored with its
 * acknowledgement, a duplicate answered, a dead letter), the turn passes
 * on: the first parked job is moved to the tail of the jobs stream, where
 * it waits behind what was queued before it (so one busy group takes one
 * worker slot at a time and cannot starve the others). The worker passes
 * the turn on right after it stores a grouped job's result
 * (rq_group_release); a turn whose entry left the stream otherwise (the
 * worker died between the two, a write lost with a failed master) is
 * passed on by whoever looks next: a submission or a worker's read in that
 * group, or the sweep every worker runs with its reclaim
 * (rq_group_sweep). An entry a producer added with XADD alone is checked
 * when a worker first reads it (rq_group_gate): it runs if it holds the
 * turn or the group is idle, else it is parked (in the order workers read
 * such entries).
 *
 * Jobs without a group take none of these steps: their submission is the
 * same one script, and a worker checks nothing more. A dead-lettered job
 * is put back (rq_group_requeue) the way a submission is.
 */
#ifndef RQ_GROUP_H
#define RQ_GROUP_H

#include <stddef.h>

#include "rq_queue.h"

/* Where the job that holds an id is, when a submission is refused. */
typedef struct rq_group_stored {
	/* "result" (it has its result), the entry in the jobs stream
	 * (queued or running), "group <G>" (parked), or "" */
	char where[200];
	/* the content digest of that job (rq_job_digest), "" unknown */
	char digest[41];
} rq_group_stored;

/*
 * Enqueue a job (group NULL: none). 0: queued (sid set; *parked 1 when
 * it waits in its group). 1: refused, a result or an entry already holds
 * the id (stored says which, with its digest when it can be known).
 * force: drop an existing result and queue again; still refused (1) while
 * a job of the id is queued, parked or running. Never creates the consumer
 * group (a producer need not be allowed to).
 */
int rq_group_enqueue(rq_queue *q, const char *id, const char *job, size_t len, const char *group,
		     int force, char sid[64], int *parked, rq_group_stored *stored, rq_error *err);

/* A dead letter to requeue under its id (rq_dead). */
typedef struct rq_group_requeue_args {
	const char *id, *job; /* the job's text, job_len bytes */
	size_t job_len;
	const char *history; /* JSON array: the result's "history" (rq_dead) */
	const char *group;   /* the job's group, NULL: none */
	const char *dead;    /* its entry in the dead stream, removed */
	const char *result;  /* the result stored for the id (NULL: none) */
	const char **older;  /* older dead letters of the same job, removed */
	size_t nolder;
} rq_group_requeue_args;

/*
 * Requeue a dead-lettered job: its result and claim dropped, its dead
 * letters removed, the job queued (or parked in its group) with a
 * "history" field. 0 requeued (sid, *parked); 1 refused, why: "gone" (the
 * dead letter was removed meanwhile), "changed" (the stored result is not
 * r->result any more), "queued" (a job of the id is queued, parked or
 * running); -1 / RQ_QUEUE_PERMANENT with err set.
 */
int rq_group_requeue(rq_queue *q, const rq_group_requeue_args *r, char sid[64], int *parked,
		     char why[32], rq_error *err);

/*
 * A worker read entry m of a job of group: 0 it holds the group's turn
 * (taken now if the group was idle): run it; 1 another job of the group
 * holds the turn: m was parked behind the group's jobs and acknowledged,
 * run nothing; -1 / RQ_QUEUE_PERMANENT with err set.
 */
int rq_group_gate(rq_queue *q, const rq_queue_msg *m, const char *id, const char *group,
		  rq_error *err);

/* A job of group left the jobs stream: pass the turn on if it held it.
 * 1 passed on, 0 not (another entry holds it), -1 error. */
int rq_group_release(rq_queue *q, const char *group, rq_error *err);

/*
 * Pass on the turns whose entries left the jobs stream, for up to count
 * groups from HSCAN cursor (a string, "0" to start; the next one is
 * written back, "0" at the end of a pass). The number passed on, or -1.
 */
int rq_group_sweep(rq_queue *q, char cursor[32], int count, rq_error *err);

/* The groups with a job queued or running (*groups) and the jobs parked
 * in them (*parked). 0, or -1 with err set. */
int rq_group_counts(rq_queue *q, long long *groups, long long *parked, rq_error *err);

#endif
