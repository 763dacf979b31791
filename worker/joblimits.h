/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * joblimits: the limits a pool child (worker/jobrun) holds itself to,
 * which the kernel enforces, so that it stops by itself even when the
 * parent cannot watch it in time: its deadline timer, its CPU time and
 * its private memory while it works; none while it moves refs; a timer
 * of RQ_JOBRUN_AFTER_MS for what it does after its result.
 */
#ifndef RQ_JOBLIMITS_H
#define RQ_JOBLIMITS_H

#include "jobrun.h"

/* The job's limits, from now on, with the time task has left. */
void rq_joblimits_set(const rq_jobrun_env *env, const rq_jobrun_task *task);

/* Before the ref updates: no limit, and no death with the worker. */
void rq_joblimits_lift(void);

/* After the result: the limits of what the child does then. */
void rq_joblimits_after(void);

#endif
