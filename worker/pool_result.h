/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_result: the result of a pool child's job (internal to
 * worker/pool): the one the child sent, handed to done as soon as it is
 * in (published) or once the child is reaped, and judged against the
 * deadline by the child's own clock (a late one is discarded); or the
 * error result the parent writes for a child that ended without one
 * (crashed, timeout, out_of_memory), or the error a child that stopped
 * part-way sent.
 */
#ifndef RQ_POOL_RESULT_H
#define RQ_POOL_RESULT_H

#include "pool_slot.h"

/* The child's report is in: its result goes to done now, once. */
void rq_pool_result_publish(rq_pool *p, rq_pool_slot *s);

/* The result of a reaped child that was not published, with *status and
 * *transient as done gets them; NULL out of memory. */
char *rq_pool_result_of(const rq_pool *p, rq_pool_slot *s, const char **status, int *transient);

/* The error result a child that stopped part-way sent (NULL: none). */
char *rq_pool_result_stopped(const rq_pool_slot *s);

#endif
