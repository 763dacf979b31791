/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_dead: dead letters back into the queue (`replayq queue retry`).
 *
 * A job is dead-lettered (replayq:{Q}:dead: id, job, reason[, result])
 * when it crashed or timed out at every delivery, or when Redis refused
 * its result for good; its error result is stored as any result. A
 * requeue puts the job back under the same id (rq_group_requeue: its
 * result and claim dropped, its dead letters removed, queued or parked in
 * its group as a submission is), with a "history" stream field: what its
 * result will carry, every earlier dead-lettered result with its reason,
 * oldest first (a job dead-lettered, requeued and dead-lettered again
 * keeps both). A dead letter of another job than the one that holds its
 * id (a duplicate id with other content, refused by the worker) is not
 * requeued.
 */
#ifndef RQ_DEAD_H
#define RQ_DEAD_H

#include <stddef.h>

#include "rq_queue.h"

/* One dead letter; a field the entry lacks is NULL. */
typedef struct rq_dead_letter {
	char entry[64];
	char *id, *job, *reason, *result;
	size_t job_len;
} rq_dead_letter;

/* The dead letters, oldest first. */
typedef struct rq_dead_list {
	rq_dead_letter *v;
	size_t n;
} rq_dead_list;

/* Read every dead letter of the queue: 0, or -1 with err set. */
int rq_dead_read(rq_queue *q, rq_dead_list *out, rq_error *err);
void rq_dead_list_free(rq_dead_list *l);

/*
 * Requeue job id from its dead letters in l (the newest one of the job
 * that holds the id; the older ones of the same job are removed too):
 * 0 requeued (*parked 1 when it waits in its group); 1 not, why says why
 * (no dead letter, another job's, queued again already, changed
 * meanwhile); -1 with err set.
 */
int rq_dead_requeue(rq_queue *q, const rq_dead_list *l, const char *id, int *parked, char *why,
		    size_t why_size, rq_error *err);

/*
 * The result with "history" (a JSON array's text) as its last member
 * (replacing one it had); malloc'ed, NULL when memory runs out. A result
 * or a history that does not parse gives the result as it is.
 */
char *rq_dead_with_history(const char *result, const char *history);

#endif
