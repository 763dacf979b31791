/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker_loop: the worker's side of the event loop (worker/evloop). On
 * the loop, besides the pool's children (worker/pool) and the metrics
 * endpoint: the signal pipe, and the socket of the blocking XREADGROUP,
 * watched while a read is outstanding (on a connection of its own, so
 * that results, intents, heartbeats and claims go over the other one
 * meanwhile); and one timer each for the heartbeat (with the claim
 * refresh), the next fetch (the reclaim of stalled jobs, then a read for
 * the free slots), a read that gets no answer in time, the next try to
 * store a kept result, the next start of the tasks held for want of a
 * descriptor, the end of the drain, the queue's counts for the metrics. Each entry read or
 * reclaimed goes to worker/claim, each result to worker/tasks.
 */
#ifndef RQ_WORKER_LOOP_H
#define RQ_WORKER_LOOP_H

#include "evloop.h"
#include "pool.h"
#include "rq_queue.h"
#include "tasks.h"
#include "worker_metrics.h"

/* The worker: its connections, its loop, its pool, its tasks. */
typedef struct rq_worker_loop {
	rq_queue *q;	 /* commands: results, intents, heartbeats, claims */
	rq_queue *qread; /* its own connection: the blocking XREADGROUP */
	rq_evloop *loop;
	rq_pool *pool;
	rq_tasks tasks;
	char name[128];
	long visibility_ms;
	long grace_ms;
	rq_worker_metrics *metrics; /* --metrics-listen; NULL: none */
	int reading;		    /* an XREADGROUP is outstanding on qread */
	long long next_reclaim, next_read, drain_deadline;
	long long next_own;	  /* the next look for its own entries (tasks.own_lost) */
	unsigned reconnects_seen; /* both connections' reconnects at the last look */
	rq_evloop_watch *on_read; /* qread's socket while reading */
	rq_evloop_timer *beat, *fetch, *read_expiry, *store, *held, *drain, *queue_counts;
	int running_loop;      /* in rq_worker_loop_run */
	char group_cursor[32]; /* where the sweep of the groups' turns is ("": start) */
} rq_worker_loop;

/*
 * The loop's descriptors that serve before the worker is connected: the
 * signal pipe, the metrics endpoint (w->loop and w->metrics set). 0, or
 * -1 out of memory.
 */
int rq_worker_loop_watch_early(rq_worker_loop *w);

/* Run the worker (connected, its group made) until it has drained after
 * a stop request: 0, or -1 out of memory (said). */
int rq_worker_loop_run(rq_worker_loop *w);

/* For a health check: 1 while the loop runs, connected to Redis (the
 * commands' connection holds a socket) and not draining. The loop's turns
 * are rq_evloop_turns(w->loop). */
int rq_worker_loop_ready(const rq_worker_loop *w);

#endif
