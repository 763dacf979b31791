/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq worker: the job pool over Redis.
 *
 * The parent holds the Redis connections, reads jobs with XREADGROUP,
 * reclaims stalled ones with XAUTOCLAIM, runs each in a forked child
 * (worker/pool), stores each result and acknowledges the job in one step,
 * and beats a heartbeat. It never opens a repository itself (worker/janitor
 * cleans the repositories' stale temporary directories at start). This
 * file: the options, the connections, setting up and taking down; the
 * loop is worker/worker_loop (on worker/evloop), an entry's way to a run
 * worker/claim, a task's way to its stored result worker/tasks.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_clock.h"
#include "cmds.h"
#include "connect.h"
#include "janitor.h"
#include "log.h"
#include "opt.h"
#include "pool.h"
#include "pool_cli.h"
#include "rq_job.h"
#include "stop.h"
#include "worker_loop.h"

/* ===================== options ===================== */

/* the descriptors the worker opens for itself besides those open when it
 * sizes its pool and the pool's: its two Redis connections, and a few
 * for a moment (a reconnection, a Sentinel, the heartbeat file, a child's
 * memory reading); the metrics endpoint's clients on top */
#define WORKER_OWN_FDS 8

/* The options of worker. */
typedef struct worker_cli {
	const char *redis, *queue, *name, *visibility, *max_deliveries, *grace, *metrics_listen;
	rq_pool_cli pool;
	char *redis_url; /* --redis, its password blanked in argv */
} worker_cli;

static const char worker_synopsis[] =
    "usage: replayq worker [--redis=URL] [--queue=Q] --repo-root=DIR [--jobs=N] [--name=ID]\n"
    "                      [--visibility-timeout=S] [--max-deliveries=N] [--grace=S]\n"
    "                      [--memory-limit=MB] [--alternates=root|any] [--repo-scope=repo|root]\n"
    "                      [--consolidate=auto|off]\n"
    "                      [--log-level=debug|info|warn|error] [--metrics-listen=HOST:PORT]\n"
    "                      [--sign-key=KEY] [--sign-format=ssh|openpgp|x509] [--sign-agent]\n";

static const char worker_footer[] =
    "environment, too: REPLAYQ_REDIS_PASSWORD, REPLAYQ_REDIS_PASSWORD_FILE,\n"
    "  REPLAYQ_HEARTBEAT_FILE, REPLAYQ_COMMITTER_NAME, REPLAYQ_COMMITTER_EMAIL\n";

/* The command line of worker: 0, or -1 with the exit status in *status. */
static int worker_parse(int argc, char **argv, worker_cli *c, int *status)
{
	const rq_opt opts[] = {
	    RQ_CONNECT_OPTIONS(&c->redis, &c->queue),
	    RQ_POOL_CLI_OPTIONS(&c->pool),
	    RQ_OPT_STRING_ENV("name", &c->name, "<id>",
			      "this worker's name (default: <host>-<pid>)", "REPLAYQ_WORKER_NAME"),
	    RQ_OPT_STRING_ENV("visibility-timeout", &c->visibility, "<s>",
			      "reclaim a job idle that long in another worker (60)",
			      "REPLAYQ_VISIBILITY_TIMEOUT"),
	    RQ_OPT_STRING_ENV("max-deliveries", &c->max_deliveries, "<n>",
			      "dead-letter a job delivered more often (3)",
			      "REPLAYQ_MAX_DELIVERIES"),
	    RQ_OPT_STRING_ENV("grace", &c->grace, "<s>",
			      "after SIGTERM, how long running jobs may finish (30)",
			      "REPLAYQ_GRACE"),
	    RQ_OPT_STRING_ENV("metrics-listen", &c->metrics_listen, "<host:port>",
			      "serve /metrics, /healthz, /readyz there (default:\n"
			      "none; e.g. 127.0.0.1:9187, :9187 every IPv4 address,\n"
			      "[::]:9187 IPv6 and IPv4)",
			      "REPLAYQ_METRICS_LISTEN"),
	    RQ_OPT_END};
	const rq_opt_spec spec = {.usage = worker_synopsis, .opts = opts, .footer = worker_footer};
	const char *file;

	return rq_opt_parse_at_most(&spec, argc, argv, 0, "worker takes no input file", &file,
				    status);
}

/*
 * Wait ms, or less when a stop is requested, serving the metrics endpoint
 * meanwhile: before the worker is connected, a scrape gets its 503 ("not
 * connected to the queue yet") at once instead of waiting for Redis.
 */
static void worker_pause(rq_worker_loop *w, long ms)
{
	long long now = rq_clock_mono_ms(), end = now + ms;

	for (; now < end && !rq_stop_requested(); now = rq_clock_mono_ms())
		rq_evloop_turn(w->loop, (int)(end - now));
}

/*
 * The two connections, retried until Redis answers: each failed attempt is
 * logged, the wait between them grows to 5 s (the metrics endpoint served
 * meanwhile), and SIGTERM/SIGINT stop the worker at once (-1). A URL that
 * cannot work (it does not parse, the password or the database is
 * refused, a redis+cluster:// server without cluster support:
 * RQ_REDIS_PERMANENT) is fatal at once (128).
 */
static int worker_connect(const worker_cli *o, rq_worker_loop *w, rq_redis **r, rq_redis **rr)
{
	rq_error err;
	long wait_ms = 100;

	for (int attempt = 1;; attempt++) {
		int rc = rq_connect_queue(o->redis, o->queue, 1, r, &w->q, &err);
		if (rc == 0 &&
		    (rc = rq_connect_queue(o->redis, o->queue, 1, rr, &w->qread, &err)) == 0)
			return 0;
		rq_queue_free(w->q);
		rq_redis_free(*r);
		w->q = NULL;
		*r = NULL;
		if (rc == RQ_REDIS_PERMANENT) {
			fprintf(stderr, "fatal: %s\n", err.msg);
			return 128;
		}
		rq_log(RQ_LOG_WARN, "cannot connect to Redis yet; retrying",
		       json_pack("{s:s, s:i, s:I}", "error", err.msg, "attempt", attempt,
				 "retry_in_ms", (json_int_t)wait_ms));
		worker_pause(w, wait_ms);
		if (rq_stop_requested()) {
			rq_log(RQ_LOG_INFO, "worker stopped before it could connect", NULL);
			return -1;
		}
		wait_ms = wait_ms * 2 > 5000 ? 5000 : wait_ms * 2;
	}
}

/* Give back what cmd_worker set up. */
static void worker_free(rq_worker_loop *w, char *redis_url, rq_redis *r, rq_redis *rr)
{
	rq_pool_free(w->pool);
	rq_tasks_free(&w->tasks);
	rq_evloop_free(w->loop);
	rq_queue_free(w->q);
	rq_queue_free(w->qread);
	rq_redis_free(r);
	rq_redis_free(rr);
	free(redis_url);
	rq_worker_metrics_free(w->metrics);
}

/* Create the group, waiting for a server that is not ready yet (the
 * metrics endpoint served meanwhile); -1 on an error no wait can fix
 * (not allowed, authentication, a key of the wrong type). */
static int worker_ensure_group(rq_worker_loop *w)
{
	rq_error err;
	int rc;

	for (int attempt = 0; (rc = rq_queue_ensure_group(w->q, &err)) != 0 && !rq_stop_requested();
	     attempt++) {
		if (rc > 0 || rc == RQ_QUEUE_PERMANENT) {
			fprintf(stderr, "fatal: %s\n", err.msg);
			return -1;
		}
		rq_log(RQ_LOG_WARN, "cannot create the group yet",
		       json_pack("{s:s}", "error", err.msg));
		worker_pause(w, attempt < 5 ? 200 : 1000);
	}
	return 0;
}

/* After the loop: kill what still runs, store what can be stored. */
static void worker_shutdown(rq_worker_loop *w)
{
	rq_error err;

	rq_pool_kill_all(w->pool, rq_tasks_dropped, &w->tasks);
	rq_tasks_release_held(&w->tasks);
	rq_tasks_settle(&w->tasks);
	rq_queue_worker_gone(w->q, w->name, &err);
	rq_log(RQ_LOG_INFO, "worker stopped",
	       json_pack("{s:I, s:I, s:I}", "ok", (json_int_t)w->tasks.done_ok, "conflict",
			 (json_int_t)w->tasks.done_conflict, "error",
			 (json_int_t)w->tasks.done_error));
}

/* The worker's name (--name, else <host>-<pid>) and logging: 0, or -1
 * said. */
static int worker_name(const worker_cli *c, rq_worker_loop *w)
{
	if (c->name) {
		snprintf(w->name, sizeof(w->name), "%s", c->name);
	} else {
		char host[64] = "host";
		gethostname(host, sizeof(host) - 1);
		snprintf(w->name, sizeof(w->name), "%s-%ld", host, (long)getpid());
	}
	if (!rq_job_id_valid(w->name)) {
		fprintf(stderr, "error: bad worker name '%s'\n", w->name);
		return -1;
	}
	return rq_pool_cli_log(&c->pool, NULL, w->name) ? -1 : 0;
}

/* --redis, its password blanked in argv (and warned about), into
 * c->redis_url: 0, or -1 out of memory (said). */
static int worker_redis_url(worker_cli *c)
{
	int had_password;

	if (!c->redis)
		return 0;
	if (!(c->redis_url = rq_connect_url_arg((char *)c->redis, &had_password))) {
		fprintf(stderr, "fatal: out of memory\n");
		return -1;
	}
	c->redis = c->redis_url;
	if (had_password)
		rq_log(RQ_LOG_WARN, RQ_CONNECT_PASSWORD_WARNING, NULL);
	return 0;
}

/* --metrics-listen: listen now, so that a bad or taken address stops the
 * worker before it takes any job: 0, or -1 with the exit status in
 * *status (said). */
static int worker_metrics_listen(const worker_cli *c, rq_worker_loop *w, int *status)
{
	rq_error err;

	if (!c->metrics_listen)
		return 0;
	if (rq_worker_metrics_open(&w->metrics, c->metrics_listen, &err) == 0)
		return 0;
	fprintf(stderr, "%s: --metrics-listen: %s\n", err.code == RQ_E_USAGE ? "error" : "fatal",
		err.msg);
	*status = err.code == RQ_E_USAGE ? RQ_OPT_USAGE_STATUS : 128;
	return -1;
}

/* Set up: the endpoint answers from now on (503 until connected). */
static void worker_metrics_announce(const rq_worker_loop *w)
{
	if (w->metrics)
		rq_log(RQ_LOG_INFO, "metrics listening",
		       json_pack("{s:s, s:s}", "address", rq_worker_metrics_address(w->metrics),
				 "path", "/metrics"));
}

/* Connected: the metrics know the queue, the pool and the connections. */
static void worker_metrics_start(rq_worker_loop *w, rq_redis *r, rq_redis *rr)
{
	if (w->metrics)
		rq_worker_metrics_watch(w->metrics, rq_queue_name(w->q), w->tasks.cap, w->pool, r,
					rr);
}

/* The loop with what serves before the worker is connected, the pool on
 * it, the task store: 0, or -1 (said). */
static int worker_open(worker_cli *c, rq_worker_loop *w, long max_deliveries, int *status)
{
	rq_pool_opts hooks = {.intent = rq_tasks_intent,
			      .owns = rq_tasks_owns,
			      .intent_arg = &w->tasks,
			      .done = rq_tasks_done,
			      .after = rq_tasks_after,
			      .done_arg = &w->tasks};

	*status = 128;
	rq_stop_catch();
	if (!(w->loop = hooks.loop = rq_evloop_new()) || rq_worker_loop_watch_early(w) < 0) {
		fprintf(stderr, "fatal: out of memory\n");
		return -1;
	}
	if ((*status = rq_pool_cli_open(
		 &c->pool, w->name, &hooks,
		 WORKER_OWN_FDS + (w->metrics ? RQ_WORKER_METRICS_POLLFDS : 0), &w->pool)) != 0)
		return -1;
	w->tasks.worker = w->name;
	w->tasks.max_deliveries = max_deliveries;
	w->tasks.metrics = w->metrics;
	if (rq_tasks_init(&w->tasks, rq_pool_idle_count(w->pool)) < 0) {
		fprintf(stderr, "fatal: out of memory\n");
		*status = 128;
		return -1;
	}
	return 0;
}

/* Options, the worker's name, logging, the loop, the pool, the task
 * store: 0, or -1 with the exit status in *status. */
static int worker_setup(int argc, char **argv, worker_cli *c, rq_worker_loop *w, int *status)
{
	long vis, maxd, grace;

	if (worker_parse(argc, argv, c, status) < 0)
		return -1;
	*status = RQ_OPT_USAGE_STATUS;
	if (rq_pool_cli_number(c->visibility, 60, 1, 86400, "visibility-timeout", &vis) < 0 ||
	    rq_pool_cli_number(c->max_deliveries, 3, 1, 1000, "max-deliveries", &maxd) < 0 ||
	    rq_pool_cli_number(c->grace, 30, 0, 86400, "grace", &grace) < 0 ||
	    worker_name(c, w) < 0 || worker_metrics_listen(c, w, status) < 0)
		return -1;
	*status = 128;
	if (worker_redis_url(c) < 0)
		return -1;
	w->visibility_ms = vis * 1000;
	w->grace_ms = grace * 1000;
	return worker_open(c, w, maxd, status);
}

int cmd_worker(int argc, char **argv)
{
	worker_cli c;
	rq_worker_loop w;
	rq_redis *r = NULL, *rr = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&w, 0, sizeof(w));
	if (worker_setup(argc, argv, &c, &w, &rc) < 0) {
		worker_free(&w, c.redis_url, r, rr);
		return rc;
	}
	worker_metrics_announce(&w);
	/* keep retrying the first connection: workers may start before Redis */
	if ((rc = worker_connect(&c, &w, &r, &rr)) != 0) {
		worker_free(&w, c.redis_url, r, rr);
		return rc < 0 ? 0 : rc;
	}
	/* from now on a command gives up after a while: the loop must go on
	 * reaping children and beating while Redis is away */
	rq_redis_set_retry(r, 2000);
	rq_redis_set_retry(rr, 2000);
	if (worker_ensure_group(&w) < 0) {
		worker_free(&w, c.redis_url, r, rr);
		return 128;
	}
	if (rq_stop_requested()) { /* while the group could not be made yet */
		rq_log(RQ_LOG_INFO, "worker stopped before it could start", NULL);
		worker_free(&w, c.redis_url, r, rr);
		return 0;
	}
	rq_janitor_start(c.pool.root);
	worker_metrics_start(&w, r, rr);
	w.tasks.q = w.q;
	rq_log(RQ_LOG_INFO, "worker started",
	       json_pack("{s:s, s:s, s:i, s:I, s:b}", "queue", rq_queue_name(w.q), "repo_root",
			 c.pool.root, "jobs", w.tasks.cap, "visibility_s",
			 (json_int_t)(w.visibility_ms / 1000), "kernel_memory_limit",
			 rq_pool_kernel_memory_limit()));
	rc = rq_worker_loop_run(&w);
	worker_shutdown(&w);
	worker_free(&w, c.redis_url, r, rr);
	return rc < 0 ? 128 : 0;
}
