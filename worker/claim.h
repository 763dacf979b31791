/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * claim: what the worker does with a stream entry it has just read or
 * reclaimed, before any child runs. The entry's own id is checked before
 * any key is built from it; the job id is claimed for the entry (one id,
 * one run, one result: rq_queue_claim), so that a duplicate is answered
 * with the owner's result and another job under a taken id is refused;
 * then the entry is answered without a run (a job that is not valid, one
 * delivered too often) or its job is started in the pool, handed the
 * intent an earlier delivery recorded.
 */
#ifndef RQ_CLAIM_H
#define RQ_CLAIM_H

#include "pool.h"
#include "rq_queue.h"
#include "tasks.h"

/* Handle message m (taken: m is left empty): a task of ts that runs in
 * pool or is answered, or an entry left for a retry (logged). */
void rq_claim_handle(rq_tasks *ts, rq_pool *pool, rq_queue_msg *m);

/* Start the tasks the pool could not start before (rq_tasks_hold), in
 * their order, while it can. */
void rq_claim_start_held(rq_tasks *ts, rq_pool *pool);

#endif
