/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker_metrics: the worker's metrics and their endpoint (see
 * worker_metrics.h). The parts: the families; what a settled job adds;
 * the queue's lag and pending count from Redis; the scrape.
 */
#include "worker_metrics.h"

#include <git2.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_clock.h"
#include "metrics.h"
#include "rq_build_info.h"
#include "rq_queue_view.h"
#include "stop.h"

/* how often the queue's lag and pending count are read, and after a
 * failure */
#define QUEUE_READ_MS  2000
#define QUEUE_RETRY_MS 10000
#define LABEL_MAX      32
/* /healthz: the loop last turned at most that long ago */
#define STALE_TURN_MS 30000

struct rq_worker_metrics {
	rq_metrics *reg;
	rq_http *http;
	rq_metrics_family *jobs, *retries, *dead, *duration, *phases, *replay, *picks, *objects,
	    *bytes, *consolidations, *build;
	rq_metrics_family *running, *capacity, *reconnects, *redirects, *unreplicated, *lag,
	    *pending;
	char queue[128]; /* "" until watched */
	int capacity_n;
	const rq_pool *pool;
	const rq_redis *redis[2];
	long long next_queue_read;
	long long last_turn; /* the loop last asked for its descriptors (monotonic ms) */
};

/* A job's time, from milliseconds to an hour (timeout_ms is at most 1 h). */
static const double job_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,    2.5,
				    5,	   10,	 30,	60,   120, 300,	 600, 1800, 3600};
/* A phase's time: from a millisecond. */
static const double phase_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				      0.5,   1,	     2.5,   5,	  10,	 30,   60,  300};

#define NB(a) (sizeof(a) / sizeof((a)[0]))

/* ===================== the families ===================== */

/* The families: where each goes in rq_worker_metrics (the offset of its
 * pointer), its name, help, type and buckets. */
static const struct family_spec {
	size_t slot;
	const char *name, *help;
	rq_metrics_type type;
	const double *bounds;
	size_t nbounds;
} family_specs[] = {
    {offsetof(rq_worker_metrics, jobs), "replayq_jobs_total",
     "Jobs finished by this worker, by final status (and error code).", RQ_METRICS_COUNTER, NULL,
     0},
    {offsetof(rq_worker_metrics, retries), "replayq_job_retries_total",
     "Failed deliveries left unacknowledged for a retry, by error code.", RQ_METRICS_COUNTER, NULL,
     0},
    {offsetof(rq_worker_metrics, dead), "replayq_dead_letters_total",
     "Jobs this worker dead-lettered.", RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, duration), "replayq_job_duration_seconds",
     "Time from the read of a job to its stored result.", RQ_METRICS_HISTOGRAM, job_bounds,
     NB(job_bounds)},
    {offsetof(rq_worker_metrics, phases), "replayq_job_phase_duration_seconds",
     "Time of each phase a job's result reports (stats.ms but total).", RQ_METRICS_HISTOGRAM,
     phase_bounds, NB(phase_bounds)},
    {offsetof(rq_worker_metrics, replay), "replayq_job_replay_duration_seconds",
     "Time of a job's whole replay in its child (stats.ms.total).", RQ_METRICS_HISTOGRAM,
     phase_bounds, NB(phase_bounds)},
    {offsetof(rq_worker_metrics, picks), "replayq_picks_total",
     "Commits picked (replayed) by finished jobs.", RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, objects), "replayq_objects_written_total",
     "Objects written by finished jobs (into their packs).", RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, bytes), "replayq_pack_written_bytes_total",
     "Bytes of the packs finished jobs wrote.", RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, consolidations), "replayq_consolidations_total",
     "Consolidations of replayq's packs after jobs, by outcome (merged, nothing, busy, failed, "
     "killed); none changes a job's result.",
     RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, running), "replayq_jobs_running",
     "Jobs running now in this worker's children (until the child exits, its consolidation "
     "included).",
     RQ_METRICS_GAUGE, NULL, 0},
    {offsetof(rq_worker_metrics, capacity), "replayq_pool_capacity",
     "Jobs this worker runs at once (--jobs).", RQ_METRICS_GAUGE, NULL, 0},
    {offsetof(rq_worker_metrics, reconnects), "replayq_redis_reconnects_total",
     "Reconnects of this worker's Redis connections.", RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, redirects), "replayq_redis_redirects_total",
     "Redirections this worker's Redis connections followed (MOVED, ASK, a new master).",
     RQ_METRICS_COUNTER, NULL, 0},
    {offsetof(rq_worker_metrics, unreplicated), "replayq_redis_unreplicated_writes_total",
     "Writes WAIT could not confirm on the replicas the Redis URL asks for.", RQ_METRICS_COUNTER,
     NULL, 0},
    {offsetof(rq_worker_metrics, lag), "replayq_queue_lag",
     "Jobs in the queue not yet delivered to any worker (XINFO GROUPS lag).", RQ_METRICS_GAUGE,
     NULL, 0},
    {offsetof(rq_worker_metrics, pending), "replayq_queue_pending",
     "Jobs delivered and not acknowledged yet (XINFO GROUPS pending).", RQ_METRICS_GAUGE, NULL, 0},
    {offsetof(rq_worker_metrics, build), "replayq_build_info",
     "1, labelled with the program's version, its commit and the libgit2 it runs with.",
     RQ_METRICS_GAUGE, NULL, 0},
};

static int add_families(rq_worker_metrics *wm)
{
	for (size_t i = 0; i < NB(family_specs); i++) {
		const struct family_spec *f = &family_specs[i];
		rq_metrics_family **slot = (rq_metrics_family **)((char *)wm + f->slot);
		if (!(*slot = rq_metrics_family_add(wm->reg, f->name, f->help, f->type, f->bounds,
						    f->nbounds)))
			return -1;
	}
	return 0;
}

static void on_request(void *arg, const char *method, const char *path, rq_http_response *res);

int rq_worker_metrics_open(rq_worker_metrics **out, const char *addr, rq_error *err)
{
	rq_worker_metrics *wm = calloc(1, sizeof(*wm));

	*out = NULL;
	if (!wm || !(wm->reg = rq_metrics_new()) || add_families(wm) < 0) {
		rq_worker_metrics_free(wm);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (rq_http_listen(&wm->http, addr, on_request, wm, err) < 0) {
		rq_worker_metrics_free(wm);
		return -1;
	}
	*out = wm;
	return 0;
}

void rq_worker_metrics_free(rq_worker_metrics *wm)
{
	if (!wm)
		return;
	rq_http_free(wm->http);
	rq_metrics_free(wm->reg);
	free(wm);
}

const char *rq_worker_metrics_address(const rq_worker_metrics *wm)
{
	return rq_http_address(wm->http);
}

/* replayq_build_info{version, commit, libgit2} 1 */
static void set_build_info(rq_worker_metrics *wm)
{
	int major = 0, minor = 0, rev = 0;
	char git2[48];

	git_libgit2_version(&major, &minor, &rev);
	snprintf(git2, sizeof(git2), "%d.%d.%d", major, minor, rev);
	const char *l[] = {"queue",	     wm->queue, "version",
			   RQ_BUILD_VERSION, "commit",	RQ_BUILD_COMMIT,
			   "libgit2",	     git2,	NULL};
	rq_metrics_set(wm->build, l, 1);
}

void rq_worker_metrics_watch(rq_worker_metrics *wm, const char *queue, int capacity,
			     const rq_pool *pool, const rq_redis *r1, const rq_redis *r2)
{
	if (!wm)
		return;
	snprintf(wm->queue, sizeof(wm->queue), "%s", queue);
	wm->capacity_n = capacity;
	wm->pool = pool;
	wm->redis[0] = r1;
	wm->redis[1] = r2;
	/* the series a dashboard reads from the start, at 0 */
	const char *ok[] = {"queue", wm->queue, "status", "ok", NULL};
	const char *conflict[] = {"queue", wm->queue, "status", "conflict", NULL};
	const char *q[] = {"queue", wm->queue, NULL};
	rq_metrics_touch(wm->jobs, ok);
	rq_metrics_touch(wm->jobs, conflict);
	rq_metrics_touch(wm->dead, q);
	rq_metrics_touch(wm->duration, q);
	rq_metrics_touch(wm->picks, q);
	rq_metrics_touch(wm->objects, q);
	rq_metrics_touch(wm->bytes, q);
	set_build_info(wm);
}

/* ===================== a settled job ===================== */

/* A name fit for a label value from a result ([a-z0-9_], at most
 * LABEL_MAX bytes), else "other": a child's output decides no series. */
static const char *label_word(const char *s)
{
	size_t n = s ? strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") : 0;

	return s && n > 0 && n <= LABEL_MAX && !s[n] ? s : "other";
}

/* The error code of a result, or "unknown". */
static const char *result_code(const json_t *r)
{
	const char *code = json_string_value(json_object_get(json_object_get(r, "error"), "code"));

	return code ? label_word(code) : "unknown";
}

/* A counter += a non-negative integer member of stats. */
static void add_stat(rq_metrics_family *f, const char *const *labels, const json_t *stats,
		     const char *name)
{
	const json_t *v = json_object_get(stats, name);

	if (json_is_integer(v) && json_integer_value(v) >= 0)
		rq_metrics_add(f, labels, (double)json_integer_value(v));
}

/* What a result's stats add: picks, objects, bytes, phase times. */
static void add_stats(rq_worker_metrics *wm, const json_t *stats)
{
	const char *q[] = {"queue", wm->queue, NULL};
	const char *key;
	json_t *v;

	add_stat(wm->picks, q, stats, "picked");
	add_stat(wm->objects, q, stats, "objects");
	add_stat(wm->bytes, q, stats, "pack_bytes");
	json_object_foreach(json_object_get(stats, "ms"), key, v)
	{
		/* total is the sum of the others, and more: its own family, so
		 * that a sum by (phase) counts each millisecond once */
		const char *phase[] = {"queue", wm->queue, "phase", label_word(key), NULL};
		if (!json_is_number(v) || json_number_value(v) < 0)
			continue;
		if (!strcmp(key, "total"))
			rq_metrics_observe(wm->replay, q, json_number_value(v) / 1000.0);
		else
			rq_metrics_observe(wm->phases, phase, json_number_value(v) / 1000.0);
	}
}

void rq_worker_metrics_job_done(rq_worker_metrics *wm, const char *status, const json_t *result,
				double seconds, int dead_lettered)
{
	const char *q[] = {"queue", wm ? wm->queue : "", NULL};

	if (!wm)
		return;
	if (strcmp(status, "ok") && strcmp(status, "conflict")) {
		const char *l[] = {"queue", wm->queue,		 "status", "error",
				   "code",  result_code(result), NULL};
		rq_metrics_add(wm->jobs, l, 1);
	} else {
		const char *l[] = {"queue", wm->queue, "status", status, NULL};
		rq_metrics_add(wm->jobs, l, 1);
	}
	rq_metrics_observe(wm->duration, q, seconds > 0 ? seconds : 0);
	if (dead_lettered)
		rq_metrics_add(wm->dead, q, 1);
	if (json_is_object(json_object_get(result, "stats")))
		add_stats(wm, json_object_get(result, "stats"));
}

void rq_worker_metrics_retry(rq_worker_metrics *wm, const char *result)
{
	json_t *r;

	if (!wm)
		return;
	r = result ? json_loads(result, 0, NULL) : NULL;
	const char *l[] = {"queue", wm->queue, "code", result_code(r), NULL};
	rq_metrics_add(wm->retries, l, 1);
	json_decref(r);
}

void rq_worker_metrics_consolidation(rq_worker_metrics *wm, const char *outcome)
{
	if (!wm)
		return;
	const char *l[] = {"queue", wm->queue, "outcome", label_word(outcome), NULL};
	rq_metrics_add(wm->consolidations, l, 1);
}

/* ===================== the queue's lag and pending count ===================== */

void rq_worker_metrics_read_queue(rq_worker_metrics *wm, rq_queue *q, long long now_ms)
{
	const char *l[] = {"queue", wm ? wm->queue : "", NULL};
	long long pending, lag;
	rq_error err;

	if (!wm || !wm->queue[0] || now_ms < wm->next_queue_read)
		return;
	wm->next_queue_read = now_ms + QUEUE_RETRY_MS;
	if (rq_queue_view_group_counts(q, &pending, &lag, &err) < 0)
		return;
	rq_metrics_set(wm->pending, l, (double)pending);
	if (lag >= 0)
		rq_metrics_set(wm->lag, l, (double)lag);
	wm->next_queue_read = now_ms + QUEUE_READ_MS;
}

/* ===================== the scrape ===================== */

/* The counters of the worker's two Redis connections, summed. */
static void set_connections(rq_worker_metrics *wm, const char *const *q)
{
	unsigned reconnects = 0, redirects = 0, unreplicated = 0;

	for (int i = 0; i < 2; i++)
		if (wm->redis[i]) {
			reconnects += rq_redis_reconnects(wm->redis[i]);
			redirects += rq_redis_redirects(wm->redis[i]);
			unreplicated += rq_redis_unreplicated(wm->redis[i]);
		}
	rq_metrics_set(wm->reconnects, q, reconnects);
	rq_metrics_set(wm->redirects, q, redirects);
	rq_metrics_set(wm->unreplicated, q, unreplicated);
}

/* /healthz: the process lives and its loop turns (200), or its loop has
 * not turned for STALE_TURN_MS (503). */
static void on_healthz(const rq_worker_metrics *wm, rq_http_response *res)
{
	long long ago = rq_clock_mono_ms() - wm->last_turn;
	char text[96];

	res->status = ago <= STALE_TURN_MS ? 200 : 503;
	snprintf(text, sizeof(text), "%s: the loop turned %lld ms ago\n",
		 res->status == 200 ? "ok" : "stuck", ago);
	rq_buf_str(&res->body, text);
}

/* /readyz: connected to Redis (the queue opened, the command connection
 * up) and not draining (200); else 503 with the reason. */
static void on_readyz(const rq_worker_metrics *wm, rq_http_response *res)
{
	const char *why = NULL;

	if (!wm->queue[0])
		why = "not connected to the queue yet";
	else if (rq_stop_requested())
		why = "draining: takes no new jobs";
	else if (wm->redis[0] && rq_redis_fd(wm->redis[0]) < 0)
		why = "not connected to Redis";
	res->status = why ? 503 : 200;
	rq_buf_str(&res->body, why ? why : "ready");
	rq_buf_str(&res->body, "\n");
}

static void on_request(void *arg, const char *method, const char *path, rq_http_response *res)
{
	rq_worker_metrics *wm = arg;
	int get = !strcmp(method, "GET");

	if (get && !strcmp(path, "/healthz")) {
		on_healthz(wm, res);
		return;
	}
	if (get && !strcmp(path, "/readyz")) {
		on_readyz(wm, res);
		return;
	}
	if (!get || strcmp(path, "/metrics")) {
		res->status = 404;
		rq_buf_str(&res->body, "not found: try GET /metrics, /healthz or /readyz\n");
		return;
	}
	if (!wm->queue[0]) {
		res->status = 503;
		rq_buf_str(&res->body, "not connected to the queue yet\n");
		return;
	}
	const char *q[] = {"queue", wm->queue, NULL};
	rq_metrics_set(wm->running, q, wm->pool ? rq_pool_running(wm->pool) : 0);
	rq_metrics_set(wm->capacity, q, wm->capacity_n);
	set_connections(wm, q);
	res->status = 200;
	res->content_type = RQ_METRICS_CONTENT_TYPE;
	rq_metrics_render(wm->reg, &res->body);
}

int rq_worker_metrics_pollfds(rq_worker_metrics *wm, struct pollfd *pfd, int max, int *timeout_ms)
{
	if (!wm)
		return 0;
	wm->last_turn = rq_clock_mono_ms(); /* the loop turns: /healthz */
	return rq_http_pollfds(wm->http, pfd, max, timeout_ms);
}

void rq_worker_metrics_process(rq_worker_metrics *wm, const struct pollfd *pfd, int n)
{
	if (wm)
		rq_http_process(wm->http, pfd, n);
}
