/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker_loop: the worker's descriptors and timers on the event loop (see
 * worker_loop.h). The parts: the read (sent, its socket fired, no answer
 * in time); the reclaim; the heartbeat; the drain; the timers set from
 * the worker's state before each turn; the loop.
 */
#include "worker_loop.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claim.h"
#include "rq_clock.h"
#include "log.h"
#include "rq_group.h"
#include "stop.h"

/* how long past its BLOCK time a read may go unanswered */
#define RQ_WORKER_READ_SLACK_MS 5000
/* how often the queue's counts are offered to the metrics (which read
 * them at most every 2 s) */
#define RQ_WORKER_COUNTS_MS 500

/* ---- the read ---- */

/* Abandon the outstanding read (what it may have got is reclaimed later). */
static void read_abandon(rq_worker_loop *w)
{
	rq_evloop_watch_del(w->loop, w->on_read);
	w->on_read = NULL;
	rq_evloop_timer_at(w->read_expiry, -1);
	rq_redis_disconnect(rq_queue_redis(w->qread));
	w->reading = 0;
}

/* The read's socket is readable: take the reply when it is complete. */
static void read_fired(void *arg, int fd, short revents)
{
	rq_worker_loop *w = arg;
	rq_queue_msg *msgs = NULL;
	size_t n = 0;
	rq_error err;
	int r = rq_queue_msg_read_recv(w->qread, &msgs, &n, &err);

	(void)fd;
	(void)revents;
	if (r == 0)
		return;
	rq_evloop_watch_del(w->loop, w->on_read);
	w->on_read = NULL;
	rq_evloop_timer_at(w->read_expiry, -1);
	w->reading = 0;
	if (r < 0) {
		rq_log(RQ_LOG_WARN, "read failed", json_pack("{s:s}", "error", err.msg));
		w->next_read = rq_clock_mono_ms() + 200;
		w->tasks.own_lost = 1; /* what it read may be pending under our name */
		return;
	}
	for (size_t i = 0; i < n; i++)
		rq_claim_handle(&w->tasks, w->pool, &msgs[i]);
	free(msgs);
}

/* Start a read for as many jobs as there are free slots. It blocks on the
 * server no longer than until the next reclaim is due. */
static void read_send(rq_worker_loop *w, long long now)
{
	rq_error err;
	long long block = w->next_reclaim - now;
	int fd;

	if (block < 1)
		block = 1;
	if (block > 1000)
		block = 1000;
	if (rq_queue_msg_read_send(w->qread, w->name, (size_t)rq_pool_idle_count(w->pool),
				   (int)block, &err) < 0) {
		rq_log(RQ_LOG_WARN, "read failed", json_pack("{s:s}", "error", err.msg));
		w->next_read = now + 200;
		w->tasks.own_lost = 1;
		return;
	}
	w->reading = 1;
	if ((fd = rq_redis_fd(rq_queue_redis(w->qread))) >= 0)
		w->on_read = rq_evloop_watch_add(w->loop, fd, POLLIN, read_fired, w);
	/* a connection gone silent (no FIN) must not stall the reads for good */
	rq_evloop_timer_at(w->read_expiry, now + block + RQ_WORKER_READ_SLACK_MS);
}

/* No answer in time. */
static long long read_expired(void *arg, long long now)
{
	rq_worker_loop *w = arg;

	(void)now;
	rq_log(RQ_LOG_WARN, "read failed", json_pack("{s:s}", "error", "no answer in time"));
	read_abandon(w);
	w->tasks.own_lost = 1;
	return -1;
}

/* ---- the reclaim, and the fetch it starts ---- */

/* groups whose turns the sweep looks at, each reclaim */
#define RQ_WORKER_SWEEP_GROUPS 100

/* Pass on the groups' turns whose jobs left the stream without it (their
 * worker died right after storing the result): some groups a reclaim. */
static void sweep_groups(rq_worker_loop *w)
{
	rq_error err;
	int n;

	if (!w->group_cursor[0])
		snprintf(w->group_cursor, sizeof(w->group_cursor), "0");
	if ((n = rq_group_sweep(w->q, w->group_cursor, RQ_WORKER_SWEEP_GROUPS, &err)) < 0)
		rq_log(RQ_LOG_WARN, "group sweep failed", json_pack("{s:s}", "error", err.msg));
	else if (n > 0)
		rq_log(RQ_LOG_INFO, "passed on the turns of groups whose job had left",
		       json_pack("{s:i}", "groups", n));
}

/* Jobs idle past the visibility timeout in any consumer: claim and run. */
static void reclaim(rq_worker_loop *w, long long now)
{
	rq_queue_msg *msgs = NULL;
	size_t n = 0;
	rq_error err;

	w->next_reclaim = now + (w->visibility_ms / 2 > 1000 ? w->visibility_ms / 2 : 1000);
	if (rq_queue_msg_reclaim(w->q, w->name, w->visibility_ms,
				 (size_t)rq_pool_idle_count(w->pool), &msgs, &n, &err) < 0) {
		rq_log(RQ_LOG_WARN, "reclaim failed", json_pack("{s:s}", "error", err.msg));
		w->tasks.own_lost = 1; /* it may have claimed entries for us */
		return;
	}
	sweep_groups(w);
	for (size_t i = 0; i < n; i++) {
		if (rq_tasks_is_running(&w->tasks, msgs[i].sid)) { /* ours, still running */
			rq_queue_msg_clear(&msgs[i]);
			continue;
		}
		rq_log(RQ_LOG_INFO, "reclaimed a stalled job",
		       json_pack("{s:s, s:I}", "entry", msgs[i].sid, "delivery",
				 (json_int_t)msgs[i].deliveries));
		rq_claim_handle(&w->tasks, w->pool, &msgs[i]);
	}
	free(msgs);
}

/* ---- the worker's own entries, taken back after a Redis failure ---- */

/* how long after a look that failed (or one more failure) it looks again */
#define RQ_WORKER_OWN_RETRY_MS 1000

/* The reconnects of both connections: a command sent on one that broke
 * may have been done without its answer arriving (an entry read or
 * claimed for this worker). */
static unsigned reconnects(rq_worker_loop *w)
{
	return rq_redis_reconnects(rq_queue_redis(w->q)) +
	       rq_redis_reconnects(rq_queue_redis(w->qread));
}

/*
 * After a Redis failure (tasks.h, own_lost): the entries pending under
 * this worker's name that it holds no task for (a read whose answer was
 * lost, a claim that failed while Redis was away, a failed job waiting
 * for its retry) are taken back, as many as there are free slots, and
 * handled as if read: no other worker would take them before the
 * visibility timeout. Called with no read outstanding (what that read
 * gets is pending under our name too and would run twice).
 */
static void take_back_own(rq_worker_loop *w, long long now)
{
	size_t count = (size_t)rq_pool_idle_count(w->pool), n = 0;
	const char **known;
	long nknown = rq_tasks_entries(&w->tasks, &known);
	rq_queue_msg *msgs = NULL;
	rq_error err;

	w->next_own = now + RQ_WORKER_OWN_RETRY_MS;
	if (nknown < 0 ||
	    rq_queue_msg_own(w->q, w->name, known, (size_t)nknown, count, &msgs, &n, &err) < 0) {
		free(known);
		rq_log(RQ_LOG_WARN, "cannot take back the worker's own pending entries",
		       json_pack("{s:s}", "error", nknown < 0 ? "out of memory" : err.msg));
		return;
	}
	free(known);
	rq_log(RQ_LOG_DEBUG, "looked for its own pending entries",
	       json_pack("{s:I, s:I}", "taken", (json_int_t)n, "holding", (json_int_t)nknown));
	/* a full batch: there may be more, for the next free slots */
	w->tasks.own_lost = n == count;
	if (n == count)
		w->next_own = now;
	for (size_t i = 0; i < n; i++) {
		rq_log(RQ_LOG_INFO, "took back its own pending entry",
		       json_pack("{s:s, s:I}", "entry", msgs[i].sid, "delivery",
				 (json_int_t)msgs[i].deliveries));
		rq_claim_handle(&w->tasks, w->pool, &msgs[i]);
	}
	free(msgs);
}

/* The fetch timer: the worker's own entries after a Redis failure, the
 * reclaim when it is due, then a read for the free slots when one may
 * start. */
static long long fetch_due(void *arg, long long now)
{
	rq_worker_loop *w = arg;
	unsigned rc = reconnects(w);

	if (rc != w->reconnects_seen) {
		w->reconnects_seen = rc;
		w->tasks.own_lost = 1;
	}
	if (w->tasks.own_lost && now >= w->next_own && rq_pool_idle_count(w->pool) > 0)
		take_back_own(w, now);
	if (now >= w->next_reclaim)
		reclaim(w, now);
	if (rq_pool_idle_count(w->pool) > 0 && now >= w->next_read)
		read_send(w, now);
	return -1; /* set again before the next turn */
}

/* ---- the heartbeat ---- */

static void heartbeat(rq_worker_loop *w, int ttl)
{
	rq_error err;
	char host[128] = "";
	json_t *o;
	char *s;

	gethostname(host, sizeof(host) - 1);
	if (getenv("REPLAYQ_HEARTBEAT_FILE")) { /* for liveness probes */
		int fd =
		    open(getenv("REPLAYQ_HEARTBEAT_FILE"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			futimens(fd, NULL);
			close(fd);
		}
	}
	o = json_pack("{s:I, s:s, s:i, s:i, s:I, s:I, s:I}", "time",
		      (json_int_t)(rq_clock_wall_ms() / 1000), "host", host, "pid", (int)getpid(),
		      "running", rq_pool_running(w->pool), "ok", (json_int_t)w->tasks.done_ok,
		      "conflict", (json_int_t)w->tasks.done_conflict, "error",
		      (json_int_t)w->tasks.done_error);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!s)
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	if (!s || rq_queue_heartbeat(w->q, w->name, s, ttl, &err) < 0)
		rq_log(RQ_LOG_WARN, "heartbeat failed", json_pack("{s:s}", "error", err.msg));
	free(s);
	rq_tasks_keep_claims(&w->tasks);
}

static long long beat_due(void *arg, long long now)
{
	rq_worker_loop *w = arg;

	heartbeat(w, (int)(w->visibility_ms / 1000 > 10 ? w->visibility_ms / 1000 : 10));
	/* often enough that no one reclaims a job we run */
	return now + (w->visibility_ms / 3 < 2000 ? w->visibility_ms / 3 : 2000);
}

/* ---- the other timers ---- */

static long long store_due(void *arg, long long now)
{
	rq_worker_loop *w = arg;

	(void)now;
	rq_tasks_flush(&w->tasks);
	return -1; /* set again before the next turn */
}

static long long counts_due(void *arg, long long now)
{
	rq_worker_loop *w = arg;

	rq_worker_metrics_read_queue(w->metrics, w->q, now);
	return now + RQ_WORKER_COUNTS_MS;
}

/* Start the tasks held for want of a descriptor or a process. */
static long long held_due(void *arg, long long now)
{
	rq_worker_loop *w = arg;

	(void)now;
	rq_claim_start_held(&w->tasks, w->pool);
	return -1; /* set again before the next turn */
}

/* The end of the drain: the loop sees it. */
static long long drain_due(void *arg, long long now)
{
	(void)arg;
	(void)now;
	return -1;
}

/* ---- the drain ---- */

/* A stop was requested: no new jobs; the running ones have the grace. */
static void drain_begin(rq_worker_loop *w, long long now)
{
	w->drain_deadline = now + w->grace_ms;
	rq_evloop_timer_at(w->drain, w->drain_deadline);
	if (w->reading)
		read_abandon(w);
	rq_log(RQ_LOG_INFO, "draining",
	       json_pack("{s:i, s:I}", "running", rq_pool_running(w->pool), "grace_s",
			 (json_int_t)(w->grace_ms / 1000)));
}

/* The signal pipe fired (the request itself is the flag's). */
static void stop_fired(void *arg, int fd, short revents)
{
	(void)arg;
	(void)fd;
	(void)revents;
	rq_stop_drain();
}

static int metrics_pollfds(void *arg, struct pollfd *pfd, int max, int *timeout_ms)
{
	return rq_worker_metrics_pollfds(arg, pfd, max, timeout_ms);
}

static void metrics_process(void *arg, const struct pollfd *pfd, int n)
{
	rq_worker_metrics_process(arg, pfd, n);
}

int rq_worker_loop_watch_early(rq_worker_loop *w)
{
	rq_evloop_poller mp = {metrics_pollfds, metrics_process, w->metrics,
			       RQ_WORKER_METRICS_POLLFDS};

	if (rq_stop_fd() >= 0 && !rq_evloop_watch_add(w->loop, rq_stop_fd(), POLLIN, stop_fired, w))
		return -1;
	return w->metrics ? rq_evloop_poller_add(w->loop, &mp) : 0;
}

/* ---- the loop ---- */

/* Before each turn, the timers the worker's state decides: the next try
 * to store a kept result; the next start of the held tasks, while a slot is free; the next
 * fetch, while one may start (not draining, no read outstanding, no
 * result kept, no task held, a slot free). */
static void timers_set(rq_worker_loop *w)
{
	long long fetch = w->next_read < w->next_reclaim ? w->next_read : w->next_reclaim;

	rq_evloop_timer_at(w->store, rq_tasks_next_store(&w->tasks));
	/* (a job's result can be in before its child exits: a held task
	 * waits for a free slot, not for the result) */
	rq_evloop_timer_at(w->held,
			   w->tasks.held && !w->drain_deadline && rq_pool_idle_count(w->pool) > 0
			       ? w->tasks.held_retry
			       : -1);
	if (w->drain_deadline || w->reading || w->tasks.waiting || w->tasks.held ||
	    rq_pool_idle_count(w->pool) == 0)
		fetch = -1;
	rq_evloop_timer_at(w->fetch, fetch);
}

/* The worker's timers, each added once. 0, or -1 out of memory. */
static int timers_add(rq_worker_loop *w)
{
	rq_evloop *l = w->loop;
	int ok;

	w->beat = rq_evloop_timer_add(l, 0, beat_due, w);
	w->read_expiry = rq_evloop_timer_add(l, -1, read_expired, w);
	w->store = rq_evloop_timer_add(l, -1, store_due, w);
	w->held = rq_evloop_timer_add(l, -1, held_due, w);
	w->fetch = rq_evloop_timer_add(l, -1, fetch_due, w);
	w->drain = rq_evloop_timer_add(l, -1, drain_due, w);
	ok = w->beat && w->read_expiry && w->store && w->held && w->fetch && w->drain;
	if (ok && w->metrics)
		ok = (w->queue_counts = rq_evloop_timer_add(l, 0, counts_due, w)) != NULL;
	return ok ? 0 : -1;
}

int rq_worker_loop_run(rq_worker_loop *w)
{
	if (timers_add(w) < 0) {
		rq_log(RQ_LOG_ERROR, "out of memory", NULL);
		return -1;
	}
	w->running_loop = 1;
	w->reconnects_seen = reconnects(w);
	for (;;) {
		long long now = rq_clock_mono_ms();
		if (rq_stop_requested() && !w->drain_deadline)
			drain_begin(w, now);
		if (w->drain_deadline &&
		    (rq_pool_running(w->pool) == 0 || now >= w->drain_deadline))
			break;
		timers_set(w);
		rq_evloop_turn(w->loop, -1);
	}
	w->running_loop = 0;
	return 0;
}

int rq_worker_loop_ready(const rq_worker_loop *w)
{
	return w->running_loop && !w->drain_deadline && w->q &&
	       rq_redis_fd(rq_queue_redis(w->q)) >= 0;
}
