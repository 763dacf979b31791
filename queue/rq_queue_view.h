/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue_view: what a queue (rq_queue.h) holds, read for operators and
 * metrics: its counters, its consumer group's counts, its dead letters and
 * its pending entries, as JSON whose strings show any bytes safely.
 */
#ifndef RQ_QUEUE_VIEW_H
#define RQ_QUEUE_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "rq_queue.h"

/*
 * The consumer group's counts (XINFO GROUPS, group RQ_QUEUE_GROUP):
 * *pending, the entries delivered and not acknowledged, and *lag, those
 * not delivered yet (when Redis cannot tell it after a deletion: the
 * stream's length less the pending ones; -1 when that cannot be read
 * either). 0, or -1 with err set (no group yet, or Redis failed).
 */
int rq_queue_view_group_counts(rq_queue *q, long long *pending, long long *lag, rq_error *err);

/* Operator views: stats, dead letters, pending entries. */
int rq_queue_view_stats(rq_queue *q, json_t **out, rq_error *err);
int rq_queue_view_dead_list(rq_queue *q, size_t count, json_t **out, rq_error *err);
int rq_queue_view_pending_list(rq_queue *q, size_t count, json_t **out, rq_error *err);

#endif
