/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * claim: from a stream entry to a running job or an answer (see claim.h).
 * The parts: the entry's reply list and its own id; answering without a
 * run; claiming the job id; the intent a child is handed; running or
 * giving up.
 */
#include "claim.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rq_group.h"
#include "rq_job.h"
#include "rq_refproto.h"
#include "rq_result_json.h"
#include "rq_testhook.h"

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

/* Answer an entry with an error result (no run). */
static void answer_error(rq_tasks *ts, rq_task *t, const char *repo, rq_code code, const char *msg,
			 const char *dead_reason)
{
	char *res = rq_result_error_text(t->id, repo, code, msg, t->msg.deliveries, ts->worker);

	rq_log(RQ_LOG_WARN, code == RQ_E_INVALID_JOB ? "invalid job" : "job not run",
	       json_pack("{s:s, s:s, s:s}", "job", t->id, "entry", t->msg.sid, "error", msg));
	if (!res) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry",
		       rq_tasks_log_fields(t));
		rq_task_free(t);
		return;
	}
	rq_tasks_finish(ts, t, res, "error", dead_reason);
	free(res);
}

/*
 * The entry's own id, checked with the job's rules before any key is
 * built from it: 0 when it names the job (t->id set), 1 when it cannot be
 * trusted (missing, invalid, twice, not the job's id: job_id is the
 * job's, "" when unknown) and the entry was answered under "!<entry>".
 */
static int entry_untrusted(rq_tasks *ts, rq_task *t, const char *job_id, const char *repo)
{
	char anon[80], msg[RQ_ERROR_MSG_MAX];

	if (t->msg.id_ok && (!job_id[0] || !strcmp(job_id, t->msg.id))) {
		if ((t->id = strdup(t->msg.id)))
			return 0;
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		rq_task_free(t);
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
		rq_task_free(t);
		return 1;
	}
	answer_error(ts, t, repo, RQ_E_INVALID_JOB, msg, NULL);
	return 1;
}

/* The claim's outcome other than "run it": log it; t is gone after. */
static void claim_settled(rq_tasks *ts, rq_task *t, int r, const char *owner, const rq_error *err)
{
	json_t *f = rq_tasks_log_fields(t);
	char *existing = NULL;
	rq_error e2;

	rq_error_set(&e2, RQ_E_REDIS, "its result is gone");
	json_object_set_new(f, "owner", json_string(owner));
	if (t->group && (r == RQ_QUEUE_CLAIM_DUPLICATE || r == RQ_QUEUE_CLAIM_DIFFERS))
		rq_tasks_release_group(ts, t); /* acknowledged: its group moves on */
	if (r == RQ_QUEUE_CLAIM_DUPLICATE) {
		rq_log(RQ_LOG_INFO, "duplicate job id: answered with the owner's result, not run",
		       f);
	} else if (r == RQ_QUEUE_CLAIM_DIFFERS) {
		rq_log(RQ_LOG_WARN, "duplicate job id with different content: refused, not run", f);
	} else if (r == RQ_QUEUE_CLAIM_RESULT &&
		   rq_queue_result(ts->q, t->id, &existing, &e2) == 0) {
		rq_log(RQ_LOG_INFO, "result exists; acknowledging", f);
		rq_tasks_finish_stored(ts, t, existing, result_status(existing));
		free(existing);
		return;
	} else {
		json_object_set_new(f, "error",
				    json_string(r == RQ_QUEUE_CLAIM_RESULT ? e2.msg : err->msg));
		rq_log(RQ_LOG_WARN, "cannot claim the job id; the job is left for a retry", f);
		/* Redis away or busy: the entry stays pending under this
		 * worker's name, which takes it back once Redis answers */
		if (r == -1)
			ts->own_lost = 1;
	}
	rq_task_free(t);
}

/* The test hold points "claim:<id>" and "claim:<id>@<delivery>": the
 * entry is this worker's (pending under its name), its id not claimed
 * yet (core/base/rq_testhook.h). */
static void hold_before_claim(const rq_task *t)
{
#ifdef RQ_TEST_HOOKS
	char point[RQ_JOB_ID_MAX + 48];

	snprintf(point, sizeof(point), "claim:%s", t->id);
	rq_testhook_hold(point);
	snprintf(point, sizeof(point), "claim:%s@%ld", t->id, t->msg.deliveries);
	rq_testhook_hold(point);
#else
	(void)t;
#endif
}

/*
 * One id, one run, one result: take the id for this entry. 0 go on and
 * run (or answer) it; 1 the entry was settled (a duplicate, a result that
 * exists, a failure) and t is gone.
 */
static int msg_claim(rq_tasks *ts, rq_task *t, const rq_job *job)
{
	char owner[64] = "", msg[RQ_ERROR_MSG_MAX], digest[41] = "";
	char *content = job ? rq_job_content(job) : NULL, *differs;
	rq_error err;
	int r = -1;

	hold_before_claim(t);
	if (t->msg.job)
		rq_job_digest(t->msg.job, t->msg.job_len, digest);
	snprintf(msg, sizeof(msg),
		 "job id '%s' is taken by another job with different content: this one (content "
		 "digest %s) was not run",
		 t->id, digest);
	differs = rq_result_error_text(t->id, job ? job->repo : NULL, RQ_E_ID_CONFLICT, msg,
				       t->msg.deliveries, ts->worker);
	/* a job that does not parse: its text is its content */
	const char *what = content ? content : t->msg.job ? t->msg.job : "";
	if (differs && (content || !job))
		r = rq_queue_claim(ts->q, &t->msg, t->id, what, t->reply_to, differs, owner,
				   &t->prior_same, &err);
	else
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	free(content);
	free(differs);
	if (r == RQ_QUEUE_CLAIM_RUN)
		return 0;
	if (r == RQ_QUEUE_PERMANENT) {
		snprintf(msg, sizeof(msg), "cannot claim the job id: %.460s", err.msg);
		answer_error(ts, t, job ? job->repo : NULL, RQ_E_REDIS, msg, msg);
		return 1;
	}
	claim_settled(ts, t, r, owner, &err);
	return 1;
}

/*
 * The intent the child is handed (rq_refproto_stored: an earlier
 * delivery's, t->granted set too, or a --force copy's prior result); 0
 * (*out NULL: none), -1 when it cannot be known now (logged).
 */
static int msg_intent(rq_tasks *ts, rq_task *t, const rq_job *job, char **out)
{
	rq_error err;

	*out = NULL;
	if (!job->ref_update)
		return 0;
	if (rq_refproto_stored(ts->q, &t->msg, t->id, t->prior_same, out, &t->granted, &err) < 0) {
		/* unknown whether an earlier delivery moved refs: not now */
		rq_log(RQ_LOG_WARN, "cannot read the intent; the job is left for a retry",
		       json_pack("{s:s, s:s}", "job", t->id, "error", err.msg));
		return -1;
	}
	return 0;
}

/* A valid job that owns its id: run it in a child; held when the pool
 * cannot start it now (1), else 0. */
static int msg_run(rq_tasks *ts, rq_pool *pool, rq_task *t, rq_job *job)
{
	rq_error err;
	char *intent;
	int spawned;

	if (msg_intent(ts, t, job, &intent) < 0) {
		rq_task_free(t);
		return 0;
	}
	spawned = rq_pool_spawn(pool, job, rq_job_default_time(job, t->msg.sid), t->msg.deliveries,
				intent, t->granted > 0, t, &err);
	free(intent);
	if (spawned == RQ_POOL_BUSY) {
		if (!t->holds)
			rq_log(RQ_LOG_WARN,
			       "cannot start the job now; it is held until it can start",
			       json_pack("{s:s, s:s}", "job", t->id, "error", err.msg));
		rq_tasks_hold(ts, t);
		return 1;
	}
	if (spawned < 0) {
		rq_log(RQ_LOG_ERROR, "cannot start the job; it will be retried",
		       json_pack("{s:s, s:s}", "job", t->id, "error", err.msg));
		rq_task_free(t); /* unacknowledged: reclaimed later */
	} else {
		json_t *f = rq_tasks_log_fields(t);
		json_object_set_new(f, "repo", json_string(job->repo));
		rq_log(RQ_LOG_DEBUG, "job started", f);
		rq_tasks_run_add(ts, t);
	}
	return 0;
}

void rq_claim_start_held(rq_tasks *ts, rq_pool *pool)
{
	rq_task *t;
	rq_job job;
	rq_error err;

	while (rq_pool_idle_count(pool) > 0 && (t = rq_tasks_unhold(ts))) {
		int held;
		/* it parsed when it was held: it parses again */
		if (rq_job_parse(t->msg.job, t->msg.job_len, &job, NULL, &err) < 0) {
			rq_task_free(t); /* left for a retry */
			continue;
		}
		held = msg_run(ts, pool, t, &job);
		rq_job_free(&job);
		if (held)
			return;
	}
}

/* Too many deliveries (it crashed or timed out each time): dead letter;
 * but a ref update whose commit an earlier delivery was granted runs
 * again (it finishes from the intent, or waits for that process). */
static void msg_give_up(rq_tasks *ts, rq_pool *pool, rq_task *t, rq_job *job)
{
	rq_error err;
	int granted = job->ref_update ? rq_refproto_granted(ts->q, t->id, &err) : 0;

	if (granted != 0) {
		if (granted > 0)
			msg_run(ts, pool, t, job);
		else
			rq_task_free(t); /* unknown: left for a retry */
		return;
	}
	char *last = rq_queue_last_attempt(ts->q, t->id, &err);
	char *res = last ? last
			 : rq_result_error_text(t->id, NULL, RQ_E_CRASHED,
						"the worker running the job died",
						t->msg.deliveries, ts->worker);

	if (!res) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry",
		       rq_tasks_log_fields(t));
		rq_task_free(t);
		return;
	}
	rq_tasks_finish(ts, t, res, "error", "too many deliveries");
	free(res);
}

/* A job of a group: 0 it holds the group's turn, run it; 1 it was parked
 * behind the group's running job, or left for a retry (t is gone). */
static int msg_group_wait(rq_tasks *ts, rq_task *t)
{
	rq_error err;
	int r = rq_group_gate(ts->q, &t->msg, t->id, t->group, &err);
	json_t *f;

	if (r == 0)
		return 0;
	f = rq_tasks_log_fields(t);
	json_object_set_new(f, "group", json_string(t->group));
	if (r == 1) {
		rq_log(RQ_LOG_INFO, "a job of its group runs: parked behind it", f);
	} else {
		json_object_set_new(f, "error", json_string(err.msg));
		rq_log(RQ_LOG_WARN, "cannot check the job's group; the job is left for a retry", f);
		if (r == -1) /* taken back once Redis answers (as in claim_settled) */
			ts->own_lost = 1;
	}
	rq_task_free(t);
	return 1;
}

void rq_claim_handle(rq_tasks *ts, rq_pool *pool, rq_queue_msg *m)
{
	rq_task *t = rq_task_new(m);
	rq_job job;
	rq_error err;
	char idbuf[RQ_JOB_ID_MAX + 1] = "";
	int parsed = 0;

	/* (the queue keeps no job past RQ_JOB_MAX_BYTES: nothing bigger is
	 * parsed, not even for its reply list) */
	if (!t || (t->msg.job && t->msg.job_len <= RQ_JOB_MAX_BYTES &&
		   job_reply_to(t->msg.job, t->msg.job_len, &t->reply_to) < 0)) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		rq_task_free(t);
		return;
	}
	if (t->msg.job)
		parsed = rq_job_parse(t->msg.job, t->msg.job_len, &job, idbuf, &err) == 0;
	if (parsed && job.group && !(t->group = strdup(job.group))) {
		rq_log(RQ_LOG_ERROR, "out of memory; the job is left for a retry", NULL);
		rq_task_free(t);
	} else if (entry_untrusted(ts, t, parsed ? job.id : idbuf, parsed ? job.repo : NULL) ||
		   msg_claim(ts, t, parsed ? &job : NULL)) {
		/* answered, or left for a retry */
	} else if (t->msg.problem[0] || !parsed) {
		/* never to run, however often delivered: its answer is final */
		answer_error(ts, t, parsed ? job.repo : NULL,
			     t->msg.problem[0] ? RQ_E_INVALID_JOB : err.code,
			     t->msg.problem[0] ? t->msg.problem : err.msg, NULL);
	} else if (t->group && msg_group_wait(ts, t)) {
		/* parked behind its group's running job, or left for a retry */
	} else if (t->msg.deliveries > ts->max_deliveries) {
		msg_give_up(ts, pool, t, &job);
	} else {
		msg_run(ts, pool, t, &job);
	}
	if (parsed)
		rq_job_free(&job);
}
