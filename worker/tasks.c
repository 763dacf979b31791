/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tasks: the worker's task store (see tasks.h). The parts: the tasks and
 * the running set; logging and counting a settled task; storing a
 * result, with a growing pause between tries while Redis is away; the
 * pool's callbacks for a running task.
 */
#include "tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_clock.h"
#include "log.h"
#include "rq_dead.h"
#include "rq_group.h"
#include "rq_refproto.h"
#include "rq_result_json.h"
#include "rq_testhook.h"

/* how soon a held task is tried again when no child ends meanwhile */
#define RQ_TASKS_HELD_RETRY_MS 100

/* ---- the tasks and the running set ---- */

int rq_tasks_init(rq_tasks *ts, int cap)
{
	ts->cap = cap;
	ts->running = calloc((size_t)cap, sizeof(*ts->running));
	return ts->running ? 0 : -1;
}

void rq_tasks_free(rq_tasks *ts)
{
	rq_task *t;

	while ((t = rq_tasks_unhold(ts)))
		rq_task_free(t);
	while ((t = ts->waiting)) {
		ts->waiting = t->next;
		rq_task_free(t);
	}
	free(ts->running);
	ts->running = NULL;
}

rq_task *rq_task_new(rq_queue_msg *m)
{
	rq_task *t = calloc(1, sizeof(*t));

	if (!t) {
		rq_queue_msg_clear(m);
		return NULL;
	}
	t->msg = *m;
	memset(m, 0, sizeof(*m));
	t->started = rq_clock_mono_ms();
	return t;
}

void rq_task_free(rq_task *t)
{
	if (!t)
		return;
	rq_queue_msg_clear(&t->msg);
	free(t->id);
	free(t->reply_to);
	free(t->result);
	free(t->status);
	free(t->dead_reason);
	free(t->group);
	free(t);
}

void rq_tasks_run_add(rq_tasks *ts, rq_task *t)
{
	for (int i = 0; i < ts->cap; i++)
		if (!ts->running[i]) {
			ts->running[i] = t;
			return;
		}
}

int rq_tasks_is_running(const rq_tasks *ts, const char *sid)
{
	for (int i = 0; i < ts->cap; i++)
		if (ts->running[i] && !strcmp(ts->running[i]->msg.sid, sid))
			return 1;
	for (const rq_task *t = ts->held; t; t = t->next)
		if (!strcmp(t->msg.sid, sid))
			return 1;
	return 0;
}

long rq_tasks_entries(const rq_tasks *ts, const char ***out)
{
	size_t n = (size_t)ts->cap, k = 0;
	const rq_task *t;

	*out = NULL;
	for (t = ts->held; t; t = t->next)
		n++;
	for (t = ts->waiting; t; t = t->next)
		n++;
	if (n == 0)
		return 0;
	if (!(*out = calloc(n, sizeof(**out))))
		return -1;
	for (int i = 0; i < ts->cap; i++)
		if (ts->running[i])
			(*out)[k++] = ts->running[i]->msg.sid;
	for (t = ts->held; t; t = t->next)
		(*out)[k++] = t->msg.sid;
	for (t = ts->waiting; t; t = t->next)
		(*out)[k++] = t->msg.sid;
	return (long)k;
}

void rq_tasks_hold(rq_tasks *ts, rq_task *t)
{
	rq_task **pp = &ts->held;

	while (*pp)
		pp = &(*pp)->next;
	t->next = NULL;
	t->holds++;
	*pp = t;
	ts->held_retry = rq_clock_mono_ms() + RQ_TASKS_HELD_RETRY_MS;
}

rq_task *rq_tasks_unhold(rq_tasks *ts)
{
	rq_task *t = ts->held;

	if (t) {
		ts->held = t->next;
		t->next = NULL;
	}
	return t;
}

static void running_del(rq_tasks *ts, rq_task *t)
{
	for (int i = 0; i < ts->cap; i++)
		if (ts->running[i] == t)
			ts->running[i] = NULL;
}

void rq_tasks_keep_claims(rq_tasks *ts)
{
	rq_error err;
	for (int i = 0; i < ts->cap; i++) {
		rq_task *t = ts->running[i];
		if (!t)
			continue;
		rq_queue_keep_claim(ts->q, ts->worker, t->msg.sid, &err);
	}
	for (rq_task *t = ts->held; t; t = t->next)
		rq_queue_keep_claim(ts->q, ts->worker, t->msg.sid, &err);
}

void rq_tasks_release_held(rq_tasks *ts)
{
	rq_task *t;
	rq_error err;

	while ((t = rq_tasks_unhold(ts))) {
		char *res = rq_result_error_text(t->id, NULL, RQ_E_IO,
						 "the job was never started: no descriptor or "
						 "process could be had for it",
						 t->msg.deliveries, ts->worker);
		if (res && rq_queue_note_attempt(ts->q, t->id, res, &err) < 0)
			rq_log(RQ_LOG_WARN, "cannot record the attempt",
			       json_pack("{s:s}", "error", err.msg));
		free(res);
		rq_log(RQ_LOG_WARN, "job never started, left unacknowledged for another worker",
		       rq_tasks_log_fields(t));
		rq_task_free(t);
	}
}

/* ---- logging and counting ---- */

/* (see rq_log: best effort) */
json_t *rq_tasks_log_fields(const rq_task *t)
{
	return json_pack("{s:s, s:s, s:I}", "job", t->id ? t->id : "", "entry", t->msg.sid,
			 "delivery", (json_int_t)t->msg.deliveries);
}

/* What a log line tells of a result (parsed; NULL: none): its repo,
 * phase times, error code. */
static void add_result_fields(json_t *f, const json_t *r)
{
	json_t *st = json_object_get(r, "stats");
	json_t *e = json_object_get(r, "error");

	if (json_is_string(json_object_get(r, "repo")))
		json_object_set(f, "repo", json_object_get(r, "repo"));
	if (st)
		json_object_set(f, "phases", json_object_get(st, "ms"));
	if (e)
		json_object_set(f, "code", json_object_get(e, "code"));
}

/* A task settled: log it and count it. */
static void count_done(rq_tasks *ts, const rq_task *t, int duplicate, const char *dead_reason)
{
	json_t *f = rq_tasks_log_fields(t), *r = json_loads(t->result, 0, NULL);
	long long ms = t->started ? rq_clock_mono_ms() - t->started : 0;

	json_object_set_new(f, "status", json_string(t->status));
	json_object_set_new(f, "ms", json_integer(ms));
	if (duplicate)
		json_object_set_new(f, "duplicate", json_true());
	if (dead_reason)
		json_object_set_new(f, "dead_letter", json_string(dead_reason));
	add_result_fields(f, r);
	rq_log(RQ_LOG_INFO, "job done", f);
	rq_worker_metrics_job_done(ts->metrics, t->status, r, (double)ms / 1000,
				   dead_reason != NULL);
	json_decref(r);
	if (!strcmp(t->status, "ok"))
		ts->done_ok++;
	else if (!strcmp(t->status, "conflict"))
		ts->done_conflict++;
	else
		ts->done_error++;
}

static void log_error(int level, const char *what, const rq_task *t, const rq_error *err)
{
	json_t *f = rq_tasks_log_fields(t);
	json_object_set_new(f, "error", json_string(err->msg));
	rq_log(level, what, f);
}

/* ---- storing a result ---- */

/*
 * Redis refused the result for good (a key of the wrong type, a script
 * error, out of memory): dead-letter the job with the reason, keeping what
 * can be kept. When not even that can be written, the job is left
 * unacknowledged: it comes back after the visibility timeout (past its
 * last delivery only to be dead-lettered again, not run), nothing lost.
 * 0 done with the task, -1 a transient failure (try again later).
 */
static int store_permanent(rq_tasks *ts, rq_task *t, const rq_error *why)
{
	char reason[RQ_ERROR_MSG_MAX + 160];
	rq_error err;
	int rc;

	log_error(RQ_LOG_WARN, "cannot store the result: Redis refused it for good; dead-lettering",
		  t, why);
	snprintf(reason, sizeof(reason), "%s%sthe result could not be stored: %s",
		 t->dead_reason ? t->dead_reason : "", t->dead_reason ? "; " : "", why->msg);
	rc = rq_queue_dead_letter(ts->q, &t->msg, t->id, t->result, t->status, t->reply_to, reason,
				  &err);
	if (rc == 0) {
		count_done(ts, t, 0, reason);
		rq_tasks_release_group(ts, t);
		return 0;
	}
	if (rc != RQ_QUEUE_PERMANENT)
		return -1;
	json_t *f = rq_tasks_log_fields(t);
	json_object_set_new(f, "error", json_string(err.msg));
	json_object_set_new(f, "result", json_string(t->result));
	rq_log(RQ_LOG_ERROR,
	       "neither the result nor a dead letter can be stored: the job is left "
	       "unacknowledged until Redis takes them",
	       f);
	return 0;
}

/*
 * Try to store a finished task's result: 0 done with the task (stored, or
 * settled by store_permanent), -1 kept for a later try (Redis away), with
 * a growing pause between tries.
 */
static int store(rq_tasks *ts, rq_task *t)
{
	rq_error err;
	int rc = rq_queue_complete(ts->q, &t->msg, t->id, t->result, t->status, t->reply_to,
				   t->dead_reason, &err);

	if (rc == RQ_QUEUE_PERMANENT && store_permanent(ts, t, &err) == 0)
		return 0;
	if (rc < 0) {
		long delay = 200L << (t->tries < 5 ? t->tries : 5);
		t->tries++;
		t->next_try = rq_clock_mono_ms() + (delay > 5000 ? 5000 : delay);
		if (rc != RQ_QUEUE_PERMANENT)
			log_error(RQ_LOG_WARN, "cannot store result yet; will retry", t, &err);
		return -1;
	}
	count_done(ts, t, rc == 1, t->dead_reason);
	rq_tasks_release_group(ts, t);
	return 0;
}

void rq_tasks_release_group(rq_tasks *ts, const rq_task *t)
{
	rq_error err;

	if (t->group && rq_group_release(ts->q, t->group, &err) < 0) {
		json_t *f = rq_tasks_log_fields(t);
		json_object_set_new(f, "group", json_string(t->group));
		json_object_set_new(f, "error", json_string(err.msg));
		rq_log(RQ_LOG_WARN, "cannot pass the group's turn on; the sweep will", f);
	}
}

/* rq_tasks_finish; made: a result of this worker's (not one stored). */
static void finish(rq_tasks *ts, rq_task *t, const char *result, const char *status,
		   const char *dead_reason, int made)
{
	/* a dead letter requeued: its result keeps its history */
	t->result = t->msg.history ? rq_dead_with_history(result, t->msg.history) : strdup(result);
	t->status = strdup(status);
	t->dead_reason = dead_reason ? strdup(dead_reason) : NULL;
	if (!t->result || !t->status || (dead_reason && !t->dead_reason)) {
		rq_log(RQ_LOG_ERROR, "out of memory storing a result", rq_tasks_log_fields(t));
		rq_task_free(t);
		return;
	}
	if (made) /* the suite's schema check */
		rq_testhook_doc("result", "ok", t->result, strlen(t->result), NULL);
	if (store(ts, t) == 0) {
		rq_task_free(t);
		return;
	}
	t->next = ts->waiting;
	ts->waiting = t;
}

void rq_tasks_finish(rq_tasks *ts, rq_task *t, const char *result, const char *status,
		     const char *dead_reason)
{
	finish(ts, t, result, status, dead_reason, 1);
}

void rq_tasks_finish_stored(rq_tasks *ts, rq_task *t, const char *result, const char *status)
{
	finish(ts, t, result, status, NULL, 0);
}

void rq_tasks_flush(rq_tasks *ts)
{
	rq_task **pp = &ts->waiting;
	long long now = rq_clock_mono_ms();

	while (*pp) {
		rq_task *t = *pp;
		if (t->next_try > now) {
			pp = &t->next;
		} else if (store(ts, t) == 0) {
			*pp = t->next;
			rq_task_free(t);
		} else {
			return; /* Redis still down */
		}
	}
}

long long rq_tasks_next_store(const rq_tasks *ts)
{
	long long next = -1;
	for (const rq_task *t = ts->waiting; t; t = t->next)
		if (next < 0 || t->next_try < next)
			next = t->next_try;
	return next;
}

void rq_tasks_settle(rq_tasks *ts)
{
	for (int i = 0; i < 50 && ts->waiting; i++) {
		for (rq_task *t = ts->waiting; t; t = t->next)
			t->next_try = 0; /* no pause now: the grace is short */
		rq_tasks_flush(ts);
		if (ts->waiting) {
			struct timespec pause = {0, 100 * 1000000L};
			nanosleep(&pause, NULL);
		}
	}
	while (ts->waiting) { /* could not store: left unacknowledged, redelivered later */
		rq_task *t = ts->waiting;
		ts->waiting = t->next;
		rq_task_free(t);
	}
}

/* ---- the pool's callbacks ---- */

int rq_tasks_intent(void *arg, void *ctx, const char *result)
{
	rq_tasks *ts = arg;
	rq_task *t = ctx;
	rq_error err;

	if (rq_refproto_record(ts->q, t->id, result, &err) != 0) {
		rq_log(RQ_LOG_WARN, "cannot record the intent; the job is left for a retry",
		       json_pack("{s:s}", "error", err.msg));
		return -1;
	}
	return 0;
}

/* Under the child's ref locks: is the job still ours? */
int rq_tasks_owns(void *arg, void *ctx)
{
	rq_tasks *ts = arg;
	rq_task *t = ctx;
	rq_error err;
	int r = rq_refproto_fence(ts->q, &t->msg, t->id, ts->worker, &err);

	if (r != 1)
		rq_log(RQ_LOG_WARN, "the job is no longer ours: its refs are left as they were",
		       r < 0 ? json_pack("{s:s}", "error", err.msg) : rq_tasks_log_fields(t));
	return r;
}

/* A failed delivery left for a retry (transient, below max-deliveries or
 * granted): it comes back after the visibility timeout. */
static void retry_later(rq_tasks *ts, rq_task *t, const char *result)
{
	json_t *f = rq_tasks_log_fields(t);
	rq_error err;

	/* a job whose commit an earlier delivery was granted waits for that
	 * process however often it comes back: it may still move the refs,
	 * so no failure can be final */
	json_object_set_new(f, "result", json_string(result));
	rq_log(RQ_LOG_WARN,
	       t->granted && t->msg.deliveries >= ts->max_deliveries
		   ? "job failed; an earlier delivery was granted its commit and may "
		     "still move the refs: it will be retried until that is settled"
		   : "job failed; it will be retried",
	       f);
	if (rq_queue_note_attempt(ts->q, t->id, result, &err) < 0)
		rq_log(RQ_LOG_WARN, "cannot record the attempt",
		       json_pack("{s:s}", "error", err.msg));
	rq_worker_metrics_retry(ts->metrics, result);
	rq_task_free(t);
}

void rq_tasks_done(void *arg, void *ctx, const char *result, const char *status, int transient)
{
	rq_tasks *ts = arg;
	rq_task *t = ctx;

	running_del(ts, t);
	ts->held_retry = rq_clock_mono_ms(); /* a held task may start (once a slot is free) */
	if (!result) {
		rq_log(RQ_LOG_WARN, "job left unacknowledged for a retry", rq_tasks_log_fields(t));
		rq_task_free(t);
		return;
	}
	if (transient && (t->msg.deliveries < ts->max_deliveries || t->granted)) {
		retry_later(ts, t, result);
		return;
	}
	rq_tasks_finish(ts, t, result, status,
			transient ? "too many deliveries: the job crashed or timed out each time"
				  : NULL);
}

void rq_tasks_after(void *arg, const char *outcome)
{
	rq_tasks *ts = arg;

	rq_worker_metrics_consolidation(ts->metrics, outcome);
}

void rq_tasks_dropped(void *arg, void *ctx)
{
	rq_tasks *ts = arg;
	rq_task *t = ctx;

	running_del(ts, t);
	rq_log(RQ_LOG_WARN, "job left unacknowledged for another worker", rq_tasks_log_fields(t));
	rq_task_free(t);
}
