/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker_metrics: what `replayq worker --metrics-listen` serves on
 * GET /metrics (Prometheus text format), on worker/http inside the
 * worker's event loop, from a worker/metrics registry.
 *
 * Every series has the label queue="<Q>":
 *   replayq_jobs_total{status, code}       jobs finished by this worker, by final
 *                                           status; code (error code) only with
 *                                           status="error"
 *   replayq_job_retries_total{code}        failed deliveries left for a retry
 *   replayq_dead_letters_total             jobs dead-lettered
 *   replayq_job_duration_seconds           histogram: from the read of a job to its
 *                                           stored result
 *   replayq_job_phase_duration_seconds{phase}  histogram: the phases a job's
 *                                           result reports (stats.ms: resolve, walk,
 *                                           replay, pack)
 *   replayq_job_replay_duration_seconds    histogram: stats.ms.total, the whole
 *                                           replay in the child (not a phase, so
 *                                           that sum by (phase) adds up)
 *   replayq_picks_total, replayq_objects_written_total,
 *   replayq_pack_written_bytes_total       from the results' stats
 *   replayq_consolidations_total{outcome}  consolidations of replayq's packs
 *                                           after jobs, by what they did (merged,
 *                                           nothing, busy) or how they failed
 *                                           (failed, killed); never a job's result
 *   replayq_jobs_running, replayq_pool_capacity   gauges, read at the scrape (a
 *                                           job runs until its child exits, its
 *                                           consolidation included)
 *   replayq_redis_reconnects_total, replayq_redis_redirects_total,
 *   replayq_redis_unreplicated_writes_total   both of the worker's connections
 *   replayq_queue_lag, replayq_queue_pending      the group's lag and pending count
 *                                           (XINFO GROUPS), read by the worker at
 *                                           most every 2 s; every worker of a queue
 *                                           serves the same values: aggregate with
 *                                           max by (queue), never sum
 *   replayq_build_info{version, commit, libgit2}  1
 * GET /healthz: 200 while the event loop turns (it asked for its
 * descriptors within the last 30 s), else 503. GET /readyz: 200 when
 * connected to the queue's Redis and not draining, else 503 with the
 * reason. Anything else gets 404.
 */
#ifndef RQ_WORKER_METRICS_H
#define RQ_WORKER_METRICS_H

#include <jansson.h>
#include <poll.h>

#include "http.h"
#include "pool.h"
#include "rq_queue.h"
#include "rq_redis.h"

/* descriptors rq_worker_metrics_pollfds may fill */
#define RQ_WORKER_METRICS_POLLFDS RQ_HTTP_POLLFDS

typedef struct rq_worker_metrics rq_worker_metrics;

/* Listen on addr (see rq_http_listen): 0, or -1 with err set. */
int rq_worker_metrics_open(rq_worker_metrics **out, const char *addr, rq_error *err);
void rq_worker_metrics_free(rq_worker_metrics *wm);
const char *rq_worker_metrics_address(const rq_worker_metrics *wm);

/*
 * What the metrics are about: the queue (its name labels every series),
 * the pool's capacity (--jobs), the pool (running jobs are read from it
 * at each scrape)
 * and the worker's two Redis connections (their reconnects, redirections
 * and writes not confirmed on the replicas). Until this
 * is called a scrape answers 503.
 */
void rq_worker_metrics_watch(rq_worker_metrics *wm, const char *queue, int capacity,
			     const rq_pool *pool, const rq_redis *r1, const rq_redis *r2);

/*
 * A job settled with its final result (status "ok", "conflict" or
 * "error", as the result says; result the result parsed, NULL when it
 * does not parse), seconds after the worker read it;
 * dead_lettered when it went to the dead stream. A retry: a delivery
 * that failed (its result names the code) and is left for another.
 * wm may be NULL (metrics off): nothing happens.
 */
void rq_worker_metrics_job_done(rq_worker_metrics *wm, const char *status, const json_t *result,
				double seconds, int dead_lettered);
void rq_worker_metrics_retry(rq_worker_metrics *wm, const char *result);
/* A consolidation after a job ended with outcome (rq_pool_opts after). */
void rq_worker_metrics_consolidation(rq_worker_metrics *wm, const char *outcome);

/*
 * Read the queue's lag and pending count (rq_queue_view_group_counts)
 * when at least 2 s have passed since the last read (10 s after a
 * failure). Called from the loop's timers; a blocking Redis call, as the
 * heartbeat is.
 */
void rq_worker_metrics_read_queue(rq_worker_metrics *wm, rq_queue *q, long long now_ms);

/* For the event loop: as rq_http_pollfds and rq_http_process. Each call
 * of rq_worker_metrics_pollfds is a turn of the loop (/healthz). */
int rq_worker_metrics_pollfds(rq_worker_metrics *wm, struct pollfd *pfd, int max, int *timeout_ms);
void rq_worker_metrics_process(rq_worker_metrics *wm, const struct pollfd *pfd, int n);

#endif
