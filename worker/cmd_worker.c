/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq worker: the job pool over Redis.
 *
 * The parent holds the Redis connections, reads jobs with XREADGROUP,
 * reclaims stalled ones with XAUTOCLAIM, runs each in a forked child
 * (pool.c), stores each result and acknowledges the job in one step, and
 * beats a heartbeat. It never opens a repository itself (worker/janitor
 * cleans the repositories' stale temporary directories at start). The
 * parts: tasks (a stream entry being handled) and storing
 * their results; the pool's callbacks; claiming an entry and running or
 * answering it; the heartbeat; the options; the connections; the event
 * loop; the drain.
 */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cmds.h"
#include "connect.h"
#include "janitor.h"
#include "log.h"
#include "opt.h"
#include "pool.h"
#include "pool_cli.h"
#include "rq_job.h"
#include "rq_queue.h"
#include "rq_result_json.h"
#include "stop.h"
#include "worker_metrics.h"

/* how long past its BLOCK time a read may go unanswered */
#define RQ_WORKER_READ_SLACK_MS 5000

/* The job's reply list, read even from a job that is not valid (its
 * error result goes there too): 0 (*out NULL when it has none, or none
 * that is valid), -1 out of memory. */
static int job_reply_to(const char *text, size_t len, char **out)
{
	json_t *o = json_loadb(text, len, 0, NULL);
	const char *r = json_string_value(json_object_get(o, "reply_to"));
	int valid = r && rq_job_id_valid(r);

	*out = valid ? strdup(r) : NULL;
	json_decref(o);
	return valid && !*out ? -1 : 0;
}

/* ===================== worker (Redis) ===================== */

/* A stream entry being handled: run in a child, answered without a run,
 * or finished with its result waiting to be stored. */
typedef struct task {
	rq_queue_msg msg;
	char *id; /* the name its keys are built from: the checked id, or "!<entry>" */
	char *reply_to;
	long long started;
	struct task *next; /* in the list of results waiting for Redis */
	char *result;
	char *status;
	char *dead_reason;
	int tries;	    /* failed attempts to store its result */
	long long next_try; /* when to try storing again */
	int granted;	    /* an earlier delivery passed the fence: it may be committing */
	int prior_same;	    /* msg.prior is this content's result before a --force */
} task;

/* The worker: its connections, its pool, its timers and its tasks. */
typedef struct worker_state {
	rq_queue *q;	 /* commands: results, intents, heartbeats, claims */
	rq_queue *qread; /* its own connection: the blocking XREADGROUP */
	rq_pool *pool;
	int reading; /* an XREADGROUP is outstanding on qread */
	long long next_beat, next_reclaim, next_read, drain_deadline, read_deadline;
	long grace_ms;
	char name[128];
	long max_deliveries;
	long visibility_ms;
	task *waiting; /* finished, result not stored yet (Redis down) */
	task **running;
	int nrunning_cap;
	unsigned long done_ok, done_conflict, done_error;
	char *redis_url;	    /* --redis, its password blanked in argv */
	rq_worker_metrics *metrics; /* --metrics-listen; NULL: none */
} worker_state;

static void task_free(task *t)
{
	if (!t)
		return;
	rq_queue_msg_clear(&t->msg);
	free(t->id);
	free(t->reply_to);
	free(t->result);
	free(t->status);
	free(t->dead_reason);
	free(t);
}

static void running_add(worker_state *w, task *t)
{
	for (int i = 0; i < w->nrunning_cap; i++)
		if (!w->running[i]) {
			w->running[i] = t;
			return;
		}
}

static int is_running(const worker_state *w, const char *sid)
{
	for (int i = 0; i < w->nrunning_cap; i++)
		if (w->running[i] && !strcmp(w->running[i]->msg.sid, sid))
			return 1;
	return 0;
}

static void running_del(worker_state *w, task *t)
{
	for (int i = 0; i < w->nrunning_cap; i++)
		if (w->running[i] == t)
			w->running[i] = NULL;
}

/* The fields every log line about a task has (see rq_log: best effort). */
static json_t *log_fields(const task *t)
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

/* The status a result's text gives ("ok", "conflict", else "error"). */
static const char *result_status(const char *result)
{
	json_t *r = json_loads(result, 0, NULL);
	const char *st = json_string_value(json_object_get(r, "status"));
	const char *status = !st		       ? "error"
			     : !strcmp(st, "ok")       ? "ok"
			     : !strcmp(st, "conflict") ? "conflict"
						       : "error";

	json_decref(r);
	return status;
}

/* A task settled: log it and count it. */
static void count_done(worker_state *w, const task *t, int duplicate, const char *dead_reason)
{
	json_t *f = log_fields(t), *r = json_loads(t->result, 0, NULL);
	long long ms = t->started ? rq_clock_mono_ms() - t->started : 0;

	json_object_set_new(f, "status", json_string(t->status));
	json_object_set_new(f, "ms", json_integer(ms));
	if (duplicate)
		json_object_set_new(f, "duplicate", json_true());
	if (dead_reason)
		json_object_set_new(f, "dead_letter", json_string(dead_reason));
	add_result_fields(f, r);
	rq_log(RQ_LOG_INFO, "job done", f);
	rq_worker_metrics_job_done(w->metrics, t->status, r, (double)ms / 1000,
				   dead_reason != NULL);
	json_decref(r);
	if (!strcmp(t->status, "ok"))
		w->done_ok++;
	else if (!strcmp(t->status, "conflict"))
		w->done_conflict++;
	else
		w->done_error++;
}

static void log_error(int level, const char *what, const task *t, const rq_error *err)
{
	json_t *f = log_fields(t);
	json_object_set_new(f, "error", json_string(err->msg));
	rq_log(level, what, f);
}

/*
 * Redis refused the result for good (a key of the wrong type, a script
 * error, out of memory): dead-letter the job with the reason, keeping what
 * can be kept. When not even that can be written, the job is left
 * unacknowledged: it comes back after the visibility timeout (past its
 * last delivery only to be dead-lettered again, not run), nothing lost.
 * 0 done with the task, -1 a transient failure (try again later).
 */
static int store_permanent(worker_state *w, task *t, const rq_error *why)
{
	char reason[RQ_ERROR_MSG_MAX + 160];
	rq_error err;
	int rc;

	log_error(RQ_LOG_WARN, "cannot store the result: Redis refused it for good; dead-lettering",
		  t, why);
	snprintf(reason, sizeof(reason), "%s%sthe result could not be stored: %s",
		 t->dead_reason ? t->dead_reason : "", t->dead_reason ? "; " : "", why->msg);
	rc = rq_queue_dead_letter(w->q, &t->msg, t->id, t->result, t->status, t->reply_to, reason,
				  &err);
	if (rc == 0) {
		count_done(w, t, 0, reason);
		return 0;
	}
	if (rc != RQ_QUEUE_PERMANENT)
		return -1;
	json_t *f = log_fields(t);
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
static int store(worker_state *w, task *t)
{
	rq_error err;
	int rc = rq_queue_complete(w->q, &t->msg, t->id, t->result, t->status, t->reply_to,
				   t->dead_reason, &err);

	if (rc == RQ_QUEUE_PERMANENT && store_permanent(w, t, &err) == 0)
		return 0;
	if (rc < 0) {
		long delay = 200L << (t->tries < 5 ? t->tries : 5);
		t->tries++;
		t->next_try = rq_clock_mono_ms() + (delay > 5000 ? 5000 : delay);
		if (rc != RQ_QUEUE_PERMANENT)
			log_error(RQ_LOG_WARN, "cannot store result yet; will retry", t, &err);
		return -1;
	}
	count_done(w, t, rc == 1, t->dead_reason);
	return 0;
}

static void finish_task(worker_state *w, task *t, const char *result, const char *status,
			const char *dead_reason)
{
	t->result = strdup(result);
	t->status = strdup(status);
	t->dead_reason = dead_reason ? strdup(dead_reason) : NULL;
	if (!t->result || !t->status || (dead_reason && !t->dead_reason)) {
		rq_log(RQ_LOG_ERROR, "out of memory storing a result", log_fields(t));
		task_free(t);
		return;
	}
	if (store(w, t) == 0) {
		task_free(t);
		return;
	}
	t->next = w->waiting;
	w->waiting = t;
}

static int on_intent(void *arg, void *ctx, const char *result)
{
	worker_state *w = arg;
	task *t = ctx;
	rq_error err;

	if (rq_queue_set_intent(w->q, t->id, result, &err) != 0) {
		rq_log(RQ_LOG_WARN, "cannot record the intent; the job is left for a retry",
		       json_pack("{s:s}", "error", err.msg));
		return -1;
	}
	return 0;
}

/* Under the child's ref locks: is the job still ours? */
static int on_owns(void *arg, void *ctx)
{
	worker_state *w = arg;
	task *t = ctx;
	rq_error err;
	int r = rq_queue_owns(w->q, &t->msg, t->id, w->name, &err);

	if (r != 1)
		rq_log(RQ_LOG_WARN, "the job is no longer ours: its refs are left as they were",
		       r < 0 ? json_pack("{s:s}", "error", err.msg) : log_fields(t));
	return r;
}

static void on_done(void *arg, void *ctx, const char *result, const char *status, int transient)
{
	worker_state *w = arg;
	task *t = ctx;
	rq_error err;

	running_del(w, t);
	if (!result) {
		rq_log(RQ_LOG_WARN, "job left unacknowledged for a retry", log_fields(t));
		task_free(t);
		return;
	}
	if (transient && (t->msg.deliveries < w->max_deliveries || t->granted)) {
		/* leave it unacknowledged: it comes back after the visibility
		 * timeout; a job whose commit an earlier delivery was granted
		 * waits for that process however often it comes back: it may
		 * still move the refs, so no failure can be final */
		json_t *f = log_fields(t);
		json_object_set_new(f, "result", json_string(result));
		rq_log(RQ_LOG_WARN,
		       t->granted && t->msg.deliveries >= w->max_deliveries
			   ? "job failed; an earlier delivery was granted its commit and may "
			     "still move the refs: it will be retried until that is settled"
			   : "job failed; it will be retried",
		       f);
		if (rq_queue_note_attempt(w->q, t->id, result, &err) < 0)
			rq_log(RQ_LOG_WARN, "cannot record the attempt",
			       json_pack("{s:s}", "error", err.msg));
		rq_worker_metrics_retry(w->metrics, result);
		task_free(t);
		return;
	}
	finish_task(w, t, result, status,
		    transient ? "too many deliveries: the job crashed or timed out each time"
			      : NULL);
}

/* Store the results kept while Redis was away, each when its pause is
 * over; stop at the first that fails again. */
static void flush_waiting(worker_state *w)
{
	task **pp = &w->waiting;
	long long now = rq_clock_mono_ms();

	while (*pp) {
		task *t = *pp;
		if (t->next_try > now) {
			pp = &t->next;
		} else if (store(w, t) == 0) {
			*pp = t->next;
			task_free(t);
		} else {
			return; /* Redis still down */
		}
	}
}

/* The soonest a kept result is to be stored again. */
static long long next_store(const worker_state *w, long long now)
{
	long long next = -1;
	for (const task *t = w->waiting; t; t = t->next)
		if (next < 0 || t->next_try < next)
			next = t->next_try;
	return next < now ? now : next;
}

/* Answer an entry with an error result (no run). */
static void answer_error(worker_state *w, task *t, const char *repo, rq_code code, const char *msg,
			 const char *dead_reason)
{
	char *res = rq_result_error_text(t->id, repo, code, msg, t->msg.deliveries, w->name);

	rq_log(RQ_LOG_WARN, code == RQ_E_INVALID_JOB ? "invalid job" : "job not run",
	       json_pack("{s:s, s:s, s:s}", "job", t->id, "entry", t->msg.sid, "error", msg));
	if (!res) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", log_fields(t));
		task_free(t);
		return;
	}
	finish_task(w, t, res, "error", dead_reason);
	free(res);
}

/*
 * The entry's own id, checked with the job's rules before any key is
 * built from it: 0 when it names the job (t->id set), 1 when it cannot be
 * trusted (missing, invalid, twice, not the job's id: job_id is the
 * job's, "" when unknown) and the entry was answered under "!<entry>".
 */
static int entry_untrusted(worker_state *w, task *t, const char *job_id, const char *repo)
{
	char anon[80], msg[RQ_ERROR_MSG_MAX];

	if (t->msg.id_ok && (!job_id[0] || !strcmp(job_id, t->msg.id))) {
		if ((t->id = strdup(t->msg.id)))
			return 0;
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		task_free(t);
		return 1;
	}
	if (t->msg.id_ok)
		snprintf(msg, sizeof(msg),
			 "stream field 'id' ('%s') differs from the job's id ('%s')", t->msg.id,
			 job_id);
	else
		snprintf(msg, sizeof(msg), "%s", t->msg.problem);
	rq_queue_msg_anon_id(&t->msg, anon, sizeof(anon));
	if (!(t->id = strdup(anon))) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		task_free(t);
		return 1;
	}
	answer_error(w, t, repo, RQ_E_INVALID_JOB, msg, NULL);
	return 1;
}

/* The claim's outcome other than "run it": log it; t is gone after. */
static void claim_settled(worker_state *w, task *t, int r, const char *owner, const rq_error *err)
{
	json_t *f = log_fields(t);
	char *existing = NULL;
	rq_error e2;

	rq_error_set(&e2, RQ_E_REDIS, "its result is gone");
	json_object_set_new(f, "owner", json_string(owner));
	if (r == RQ_QUEUE_CLAIM_DUPLICATE) {
		rq_log(RQ_LOG_INFO, "duplicate job id: answered with the owner's result, not run",
		       f);
	} else if (r == RQ_QUEUE_CLAIM_DIFFERS) {
		rq_log(RQ_LOG_WARN, "duplicate job id with different content: refused, not run", f);
	} else if (r == RQ_QUEUE_CLAIM_RESULT &&
		   rq_queue_result(w->q, t->id, &existing, &e2) == 0) {
		rq_log(RQ_LOG_INFO, "result exists; acknowledging", f);
		finish_task(w, t, existing, result_status(existing), NULL);
		free(existing);
		return;
	} else {
		json_object_set_new(f, "error",
				    json_string(r == RQ_QUEUE_CLAIM_RESULT ? e2.msg : err->msg));
		rq_log(RQ_LOG_WARN, "cannot claim the job id; the job is left for a retry", f);
	}
	task_free(t);
}

/*
 * One id, one run, one result: take the id for this entry. 0 go on and
 * run (or answer) it; 1 the entry was settled (a duplicate, a result that
 * exists, a failure) and t is gone.
 */
static int msg_claim(worker_state *w, task *t, const rq_job *job)
{
	char owner[64] = "", msg[RQ_ERROR_MSG_MAX];
	char *content = job ? rq_job_content(job) : NULL, *differs;
	rq_error err;
	int r = -1;

	snprintf(msg, sizeof(msg),
		 "job id '%s' is taken by another job with different content: this one was not run",
		 t->id);
	differs = rq_result_error_text(t->id, job ? job->repo : NULL, RQ_E_INVALID_JOB, msg,
				       t->msg.deliveries, w->name);
	/* a job that does not parse: its text is its content */
	const char *what = content ? content : t->msg.job ? t->msg.job : "";
	if (differs && (content || !job))
		r = rq_queue_claim(w->q, &t->msg, t->id, what, t->reply_to, differs, owner,
				   &t->prior_same, &err);
	else
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	free(content);
	free(differs);
	if (r == RQ_QUEUE_CLAIM_RUN)
		return 0;
	if (r == RQ_QUEUE_PERMANENT) {
		snprintf(msg, sizeof(msg), "cannot claim the job id: %.460s", err.msg);
		answer_error(w, t, job ? job->repo : NULL, RQ_E_REDIS, msg, msg);
		return 1;
	}
	claim_settled(w, t, r, owner, &err);
	return 1;
}

/*
 * A copy of a job submitted with --force after the same job had its
 * result: when that result moved refs, the child is handed it as an
 * intent marked "already_applied", and if every ref is still where it
 * put them, that is the answer (nothing is replayed again on refs it
 * moved); otherwise the job replays anew. 0 (*out NULL when it is of no
 * use), -1 out of memory.
 */
static int prior_intent(const char *prior, char **out)
{
	json_t *o = prior ? json_loads(prior, 0, NULL) : NULL;
	const char *status = json_string_value(json_object_get(o, "status"));
	int rc = 0;

	*out = NULL;
	if (o && status && !strcmp(status, "ok") && json_is_true(json_object_get(o, "applied")) &&
	    json_array_size(json_object_get(o, "updates")) &&
	    (json_object_set_new(o, "already_applied", json_true()) < 0 ||
	     !(*out = json_dumps(o, JSON_COMPACT))))
		rc = -1;
	json_decref(o);
	return rc;
}

/*
 * The intent the child is handed: an earlier delivery's (t->granted set
 * too), or a --force copy's prior result; 0 (*out NULL: none), -1 when it
 * cannot be known now (logged).
 */
static int msg_intent(worker_state *w, task *t, const rq_job *job, char **out)
{
	rq_error err;

	rq_error_clear(&err);
	*out = job->ref_update && t->msg.deliveries > 1 ? rq_queue_get_intent(w->q, t->id, &err)
							: NULL;
	if (*out && (t->granted = rq_queue_granted(w->q, t->id, &err)) < 0) {
		free(*out);
		*out = NULL;
	}
	if (!*out && err.code == RQ_OK && job->ref_update && t->prior_same &&
	    prior_intent(t->msg.prior, out) < 0)
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	if (!*out && err.code != RQ_OK) {
		/* unknown whether an earlier delivery moved refs: not now */
		rq_log(RQ_LOG_WARN, "cannot read the intent; the job is left for a retry",
		       json_pack("{s:s, s:s}", "job", t->id, "error", err.msg));
		return -1;
	}
	return 0;
}

/* A valid job that owns its id: run it in a child. */
static void msg_run(worker_state *w, task *t, rq_job *job)
{
	rq_error err;
	char *intent;
	int spawned;

	if (msg_intent(w, t, job, &intent) < 0) {
		task_free(t);
		return;
	}
	spawned = rq_pool_spawn(w->pool, job, rq_job_default_time(job, t->msg.sid),
				t->msg.deliveries, intent, t, &err);
	free(intent);
	if (spawned < 0) {
		rq_log(RQ_LOG_ERROR, "cannot start the job; it will be retried",
		       json_pack("{s:s, s:s}", "job", t->id, "error", err.msg));
		task_free(t); /* unacknowledged: reclaimed later */
	} else {
		json_t *f = log_fields(t);
		json_object_set_new(f, "repo", json_string(job->repo));
		rq_log(RQ_LOG_DEBUG, "job started", f);
		running_add(w, t);
	}
}

/* Too many deliveries (it crashed or timed out each time): dead letter;
 * but a ref update whose commit an earlier delivery was granted runs
 * again (it finishes from the intent, or waits for that process). */
static void msg_give_up(worker_state *w, task *t, rq_job *job)
{
	rq_error err;
	int granted = job && job->ref_update ? rq_queue_granted(w->q, t->id, &err) : 0;

	if (granted != 0) {
		if (granted > 0)
			msg_run(w, t, job);
		else
			task_free(t); /* unknown: left for a retry */
		return;
	}
	char *last = rq_queue_last_attempt(w->q, t->id, &err);
	char *res = last ? last
			 : rq_result_error_text(t->id, NULL, RQ_E_CRASHED,
						"the worker running the job died",
						t->msg.deliveries, w->name);

	if (!res) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", log_fields(t));
		task_free(t);
		return;
	}
	finish_task(w, t, res, "error", "too many deliveries");
	free(res);
}

/* A message just read or reclaimed: run it, or answer it without running. */
static void handle_msg(worker_state *w, rq_queue_msg *m)
{
	task *t = calloc(1, sizeof(*t));
	rq_job job;
	rq_error err;
	char idbuf[RQ_JOB_ID_MAX + 1] = "";
	int parsed = 0;

	if (!t) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		rq_queue_msg_clear(m);
		return;
	}
	t->msg = *m;
	memset(m, 0, sizeof(*m));
	t->started = rq_clock_mono_ms();
	if (t->msg.job && job_reply_to(t->msg.job, t->msg.job_len, &t->reply_to) < 0) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		task_free(t);
		return;
	}
	if (t->msg.job)
		parsed = rq_job_parse(t->msg.job, t->msg.job_len, &job, idbuf, &err) == 0;
	if (entry_untrusted(w, t, parsed ? job.id : idbuf, parsed ? job.repo : NULL) ||
	    msg_claim(w, t, parsed ? &job : NULL)) {
		/* answered, or left for a retry */
	} else if (t->msg.deliveries > w->max_deliveries) {
		msg_give_up(w, t, parsed && !t->msg.problem[0] ? &job : NULL);
	} else if (t->msg.problem[0] || !parsed) {
		answer_error(w, t, parsed ? job.repo : NULL,
			     t->msg.problem[0] ? RQ_E_INVALID_JOB : err.code,
			     t->msg.problem[0] ? t->msg.problem : err.msg, NULL);
	} else {
		msg_run(w, t, &job);
	}
	if (parsed)
		rq_job_free(&job);
}

/* Reset the idle time of the jobs we run, so no one reclaims them. */
static void keep_claims(worker_state *w)
{
	rq_error err;
	for (int i = 0; i < w->nrunning_cap; i++) {
		task *t = w->running[i];
		if (!t)
			continue;
		rq_queue_keep_claim(w->q, w->name, t->msg.sid, &err);
	}
}

static void heartbeat(worker_state *w, int ttl)
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
		      "running", rq_pool_running(w->pool), "ok", (json_int_t)w->done_ok, "conflict",
		      (json_int_t)w->done_conflict, "error", (json_int_t)w->done_error);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!s)
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	if (!s || rq_queue_heartbeat(w->q, w->name, s, ttl, &err) < 0)
		rq_log(RQ_LOG_WARN, "heartbeat failed", json_pack("{s:s}", "error", err.msg));
	free(s);
	keep_claims(w);
}

static void drop_running(void *arg, void *ctx)
{
	worker_state *w = arg;
	task *t = ctx;
	running_del(w, t);
	rq_log(RQ_LOG_WARN, "job left unacknowledged for another worker", log_fields(t));
	task_free(t);
}

/* ===================== options ===================== */

/* The options of worker. */
typedef struct worker_cli {
	const char *redis, *queue, *name, *visibility, *max_deliveries, *grace, *metrics_listen;
	rq_pool_cli pool;
} worker_cli;

static const char worker_synopsis[] =
    "usage: replayq worker [--redis=URL] [--queue=Q] --repo-root=DIR [--jobs=N] [--name=ID]\n"
    "                      [--visibility-timeout=S] [--max-deliveries=N] [--grace=S]\n"
    "                      [--memory-limit=MB] [--alternates=root|any]\n"
    "                      [--log-level=debug|info|warn|error] [--metrics-listen=HOST:PORT]\n";

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
static void worker_pause(worker_state *w, long ms)
{
	struct pollfd pfd[1 + RQ_WORKER_METRICS_POLLFDS];
	long long now = rq_clock_mono_ms(), end = now + ms;

	for (; now < end && !rq_stop_requested(); now = rq_clock_mono_ms()) {
		int timeout = (int)(end - now), n = 0;
		pfd[n++] = (struct pollfd){.fd = rq_stop_fd(), .events = POLLIN};
		n += rq_worker_metrics_pollfds(w->metrics, pfd + n, RQ_WORKER_METRICS_POLLFDS,
					       &timeout);
		if (poll(pfd, (nfds_t)n, timeout) > 0 && (pfd[0].revents & POLLIN))
			rq_stop_drain();
		rq_worker_metrics_process(w->metrics, pfd + 1, n - 1);
	}
}

/*
 * The two connections, retried until Redis answers: each failed attempt is
 * logged, the wait between them grows to 5 s (the metrics endpoint served
 * meanwhile), and SIGTERM/SIGINT stop the worker at once (-1). A URL that
 * cannot work (it does not parse, the password or the database is
 * refused, a redis+cluster:// server without cluster support:
 * RQ_REDIS_PERMANENT) is fatal at once (128).
 */
static int worker_connect(const worker_cli *o, worker_state *w, rq_redis **r, rq_redis **rr)
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
static void worker_free(worker_state *w, rq_redis *r, rq_redis *rr)
{
	rq_pool_free(w->pool);
	rq_queue_free(w->q);
	rq_queue_free(w->qread);
	rq_redis_free(r);
	rq_redis_free(rr);
	free(w->running);
	free(w->redis_url);
	rq_worker_metrics_free(w->metrics);
}

/* Create the group, waiting for a server that is not ready yet (the
 * metrics endpoint served meanwhile); -1 on an error no wait can fix
 * (not allowed, authentication, a key of the wrong type). */
static int worker_ensure_group(worker_state *w)
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

/* Jobs idle past the visibility timeout in any consumer: claim and run. */
static void worker_reclaim(worker_state *w, long long now)
{
	rq_queue_msg *msgs = NULL;
	size_t n = 0;
	rq_error err;

	w->next_reclaim = now + (w->visibility_ms / 2 > 1000 ? w->visibility_ms / 2 : 1000);
	if (rq_queue_reclaim(w->q, w->name, w->visibility_ms, (size_t)rq_pool_idle_count(w->pool),
			     &msgs, &n, &err) < 0) {
		rq_log(RQ_LOG_WARN, "reclaim failed", json_pack("{s:s}", "error", err.msg));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (is_running(w, msgs[i].sid)) { /* ours, still running */
			rq_queue_msg_clear(&msgs[i]);
			continue;
		}
		rq_log(RQ_LOG_INFO, "reclaimed a stalled job",
		       json_pack("{s:s, s:I}", "entry", msgs[i].sid, "delivery",
				 (json_int_t)msgs[i].deliveries));
		handle_msg(w, &msgs[i]);
	}
	free(msgs);
}

/* Start a read for as many jobs as there are free slots. It blocks on the
 * server no longer than until the next reclaim is due. */
static void worker_send_read(worker_state *w, long long now)
{
	rq_error err;
	long long block = w->next_reclaim - now;

	if (block < 1)
		block = 1;
	if (block > 1000)
		block = 1000;
	if (rq_queue_read_send(w->qread, w->name, (size_t)rq_pool_idle_count(w->pool), (int)block,
			       &err) < 0) {
		rq_log(RQ_LOG_WARN, "read failed", json_pack("{s:s}", "error", err.msg));
		w->next_read = now + 200;
		return;
	}
	w->reading = 1;
	/* a connection gone silent (no FIN) must not stall the reads for good */
	w->read_deadline = now + block + RQ_WORKER_READ_SLACK_MS;
}

/* The read's socket is readable: take the reply when it is complete. */
static void worker_recv_read(worker_state *w)
{
	rq_queue_msg *msgs = NULL;
	size_t n = 0;
	rq_error err;
	int r = rq_queue_read_recv(w->qread, &msgs, &n, &err);

	if (r == 0)
		return;
	w->reading = 0;
	if (r < 0) {
		rq_log(RQ_LOG_WARN, "read failed", json_pack("{s:s}", "error", err.msg));
		w->next_read = rq_clock_mono_ms() + 200;
		return;
	}
	for (size_t i = 0; i < n; i++)
		handle_msg(w, &msgs[i]);
	free(msgs);
}

/* Timers: the heartbeat (with the claim refresh), the drain, the reclaim,
 * the next read. 1 when the loop is over. */
static int worker_timers(worker_state *w, long long now)
{
	if (rq_stop_requested() && !w->drain_deadline) {
		w->drain_deadline = now + w->grace_ms;
		if (w->reading) { /* abandoned: what it may have got is reclaimed later */
			rq_redis_disconnect(rq_queue_redis(w->qread));
			w->reading = 0;
		}
		rq_log(RQ_LOG_INFO, "draining",
		       json_pack("{s:i, s:I}", "running", rq_pool_running(w->pool), "grace_s",
				 (json_int_t)(w->grace_ms / 1000)));
	}
	if (w->drain_deadline && (rq_pool_running(w->pool) == 0 || now >= w->drain_deadline))
		return 1;
	if (w->reading && now >= w->read_deadline) {
		rq_log(RQ_LOG_WARN, "read failed",
		       json_pack("{s:s}", "error", "no answer in time"));
		rq_redis_disconnect(rq_queue_redis(w->qread));
		w->reading = 0;
	}
	if (now >= w->next_beat) {
		heartbeat(w, (int)(w->visibility_ms / 1000 > 10 ? w->visibility_ms / 1000 : 10));
		/* often enough that no one reclaims a job we run */
		w->next_beat = now + (w->visibility_ms / 3 < 2000 ? w->visibility_ms / 3 : 2000);
	}
	rq_worker_metrics_read_queue(w->metrics, w->q, now);
	flush_waiting(w);
	if (w->drain_deadline || w->waiting || w->reading || rq_pool_idle_count(w->pool) == 0)
		return 0;
	if (now >= w->next_reclaim)
		worker_reclaim(w, now);
	if (rq_pool_idle_count(w->pool) > 0 && now >= w->next_read)
		worker_send_read(w, now);
	return 0;
}

/* How long the loop may wait: until the nearest timer. */
static int worker_timeout(const worker_state *w, long long now)
{
	long long next = w->next_beat;

	if (w->drain_deadline && w->drain_deadline < next)
		next = w->drain_deadline;
	if (w->waiting && next_store(w, now) < next)
		next = next_store(w, now); /* a result to store while Redis is away */
	/* not reading with a free slot: a failed read waits before the next */
	if (!w->drain_deadline && !w->reading && !w->waiting && rq_pool_idle_count(w->pool) > 0 &&
	    w->next_read < next)
		next = w->next_read;
	if (w->reading && w->read_deadline < next)
		next = w->read_deadline;
	return next > now ? (int)(next - now) : 0;
}

/*
 * The event loop: one poll on the signal pipe, the read's socket and every
 * child's pipe and pidfd, with the nearest timer (a job's deadline, the
 * next memory check, the heartbeat, the reclaim, the drain) as its timeout,
 * so that a deadline is acted on when it falls, whatever Redis is doing.
 */
static void worker_loop(worker_state *w)
{
	int cap = 2 * w->nrunning_cap + 2 + RQ_WORKER_METRICS_POLLFDS;
	struct pollfd *pfd = calloc((size_t)cap, sizeof(*pfd));

	if (!pfd) {
		rq_log(RQ_LOG_ERROR, "out of memory", NULL);
		return;
	}
	for (;;) {
		long long now = rq_clock_mono_ms();
		int n = 0, timeout, rd = -1, m0;
		if (worker_timers(w, now))
			break;
		timeout = worker_timeout(w, rq_clock_mono_ms());
		pfd[n++] = (struct pollfd){.fd = rq_stop_fd(), .events = POLLIN};
		if (w->reading && rq_redis_fd(rq_queue_redis(w->qread)) >= 0) {
			rd = n;
			pfd[n++] = (struct pollfd){.fd = rq_redis_fd(rq_queue_redis(w->qread)),
						   .events = POLLIN};
		}
		n += rq_pool_pollfds(w->pool, pfd + n, cap - n, &timeout);
		m0 = n; /* the metrics endpoint's, last */
		n += rq_worker_metrics_pollfds(w->metrics, pfd + n, cap - n, &timeout);
		if (poll(pfd, (nfds_t)n, timeout) > 0) {
			if (pfd[0].revents & POLLIN)
				rq_stop_drain();
			if (rd >= 0 && pfd[rd].revents)
				worker_recv_read(w);
		}
		rq_pool_process(w->pool, on_done, w);
		rq_worker_metrics_process(w->metrics, pfd + m0, n - m0);
	}
	free(pfd);
}

/* After the loop: kill what still runs, store what can be stored. */
static void worker_shutdown(worker_state *w)
{
	rq_error err;

	rq_pool_kill_all(w->pool, drop_running, w);
	for (int i = 0; i < 50 && w->waiting; i++) {
		for (task *t = w->waiting; t; t = t->next)
			t->next_try = 0; /* no pause now: the grace is short */
		flush_waiting(w);
		if (w->waiting) {
			struct timespec ts = {0, 100 * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	while (w->waiting) { /* could not store: left unacknowledged, redelivered later */
		task *t = w->waiting;
		w->waiting = t->next;
		task_free(t);
	}
	rq_queue_worker_gone(w->q, w->name, &err);
	rq_log(RQ_LOG_INFO, "worker stopped",
	       json_pack("{s:I, s:I, s:I}", "ok", (json_int_t)w->done_ok, "conflict",
			 (json_int_t)w->done_conflict, "error", (json_int_t)w->done_error));
}

/* The worker's name (--name, else <host>-<pid>) and logging: 0, or -1
 * said. */
static int worker_name(const worker_cli *c, worker_state *w)
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

/* --redis, its password blanked in argv (and warned about): 0, or -1 out
 * of memory (said). */
static int worker_redis_url(worker_cli *c, worker_state *w)
{
	int had_password;

	if (!c->redis)
		return 0;
	if (!(w->redis_url = rq_connect_url_arg((char *)c->redis, &had_password))) {
		fprintf(stderr, "fatal: out of memory\n");
		return -1;
	}
	c->redis = w->redis_url;
	if (had_password)
		rq_log(RQ_LOG_WARN, RQ_CONNECT_PASSWORD_WARNING, NULL);
	return 0;
}

/* --metrics-listen: listen now, so that a bad or taken address stops the
 * worker before it takes any job: 0, or -1 with the exit status in
 * *status (said). */
static int worker_metrics_listen(const worker_cli *c, worker_state *w, int *status)
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
static void worker_metrics_announce(const worker_state *w)
{
	if (w->metrics)
		rq_log(RQ_LOG_INFO, "metrics listening",
		       json_pack("{s:s, s:s}", "address", rq_worker_metrics_address(w->metrics),
				 "path", "/metrics"));
}

/* Connected: the metrics know the queue, the pool and the connections. */
static void worker_metrics_start(worker_state *w, rq_redis *r, rq_redis *rr)
{
	if (w->metrics)
		rq_worker_metrics_watch(w->metrics, rq_queue_name(w->q), w->nrunning_cap, w->pool,
					r, rr);
}

/* Options, the worker's name, logging, the pool, the list of running
 * tasks: 0, or -1 with the exit status in *status. */
static int worker_setup(int argc, char **argv, worker_cli *c, worker_state *w, int *status)
{
	rq_pool_opts hooks = {.intent = on_intent, .owns = on_owns, .intent_arg = w};
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
	if (worker_redis_url(c, w) < 0)
		return -1;
	w->max_deliveries = maxd;
	w->visibility_ms = vis * 1000;
	w->grace_ms = grace * 1000;
	if ((*status = rq_pool_cli_open(&c->pool, w->name, &hooks, &w->pool)) != 0)
		return -1;
	w->nrunning_cap = rq_pool_idle_count(w->pool);
	if (!(w->running = calloc((size_t)w->nrunning_cap, sizeof(*w->running)))) {
		fprintf(stderr, "fatal: out of memory\n");
		*status = 128;
		return -1;
	}
	return 0;
}

int cmd_worker(int argc, char **argv)
{
	worker_cli c;
	worker_state w;
	rq_redis *r = NULL, *rr = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&w, 0, sizeof(w));
	if (worker_setup(argc, argv, &c, &w, &rc) < 0) {
		worker_free(&w, r, rr);
		return rc;
	}
	rq_stop_catch();
	worker_metrics_announce(&w);
	/* keep retrying the first connection: workers may start before Redis */
	if ((rc = worker_connect(&c, &w, &r, &rr)) != 0) {
		worker_free(&w, r, rr);
		return rc < 0 ? 0 : rc;
	}
	/* from now on a command gives up after a while: the loop must go on
	 * reaping children and beating while Redis is away */
	rq_redis_set_retry(r, 2000);
	rq_redis_set_retry(rr, 2000);
	if (worker_ensure_group(&w) < 0) {
		worker_free(&w, r, rr);
		return 128;
	}
	if (rq_stop_requested()) { /* while the group could not be made yet */
		rq_log(RQ_LOG_INFO, "worker stopped before it could start", NULL);
		worker_free(&w, r, rr);
		return 0;
	}
	rq_janitor_start(c.pool.root);
	worker_metrics_start(&w, r, rr);
	rq_log(RQ_LOG_INFO, "worker started",
	       json_pack("{s:s, s:s, s:i, s:I, s:b}", "queue", rq_queue_name(w.q), "repo_root",
			 c.pool.root, "jobs", w.nrunning_cap, "visibility_s",
			 (json_int_t)(w.visibility_ms / 1000), "kernel_memory_limit",
			 rq_pool_kernel_memory_limit()));
	worker_loop(&w);
	worker_shutdown(&w);
	worker_free(&w, r, rr);
	return 0;
}
