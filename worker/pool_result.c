/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_result: the result of a pool child's job (see pool_result.h).
 */
#include "pool_result.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "jobrun.h"
#include "rq_result_json.h"

/* The error result the parent writes for a job that gave none in time. */
static char *slot_error(const rq_pool *p, const rq_pool_slot *s, rq_code code, const char *msg,
			long long overrun)
{
	char *text = rq_result_error_text(s->id, s->repo, code, msg, s->attempt, p->worker), *out;
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	int bad = 0;

	if (!j)
		return text;
	if (code == RQ_E_TIMEOUT) {
		bad |= json_object_set_new(j, "timeout_ms", json_integer(s->timeout_ms));
		bad |= json_object_set_new(j, "overrun_ms", json_integer(overrun));
	}
	if (s->over_memory)
		bad |=
		    json_object_set_new(j, "rss_bytes", json_integer((json_int_t)s->rss_at_kill));
	/* out of memory for the details: the result without them */
	out = bad ? NULL : json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	if (!out)
		return text;
	free(text);
	return out;
}

/* Why a child past its deadline stopped, into msg: its overrun. */
static long long timeout_message(const rq_pool_slot *s, int sig, char *msg, size_t size)
{
	long long at = s->killed_at ? s->killed_at : s->exited_at;
	long long overrun = at > s->deadline ? at - s->deadline : 0;

	snprintf(msg, size,
		 "the job ran past its deadline of %lld ms (by %lld ms) and was killed%s",
		 s->timeout_ms, overrun,
		 s->timed_out	  ? ""
		 : sig == SIGALRM ? " by its own deadline timer"
				  : " by its CPU time limit");
	return overrun;
}

/* Why a child that gave no usable result stopped, as an error result. */
static char *slot_failure(const rq_pool *p, rq_pool_slot *s, int *transient)
{
	char msg[256];
	rq_code code = RQ_E_CRASHED;
	long long overrun = 0;
	int sig = WIFSIGNALED(s->wstatus) ? WTERMSIG(s->wstatus) : 0;

	if (s->over_memory) {
		code = RQ_E_NOMEM;
		snprintf(msg, sizeof(msg),
			 "the job used %llu MiB, more than its memory limit of %llu MiB, and was "
			 "killed",
			 (unsigned long long)(s->rss_at_kill >> 20),
			 (unsigned long long)(p->opts.memory_limit >> 20));
	} else if (s->timed_out || sig == SIGALRM || sig == SIGXCPU) {
		code = RQ_E_TIMEOUT;
		overrun = timeout_message(s, sig, msg, sizeof(msg));
	} else if (sig) {
		snprintf(msg, sizeof(msg), "the process running the job died of signal %d (%s)",
			 sig, strsignal(sig));
	} else if (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == RQ_JOBRUN_EXIT_NOMEM) {
		code = RQ_E_NOMEM;
		snprintf(msg, sizeof(msg), "the job ran out of memory");
	} else {
		snprintf(msg, sizeof(msg), "the process running the job exited with status %d",
			 WIFEXITED(s->wstatus) ? WEXITSTATUS(s->wstatus) : -1);
	}
	*transient = code == RQ_E_CRASHED || code == RQ_E_TIMEOUT;
	rq_pool_clean_objdir(p, s); /* also after a memory kill: SIGKILL cleans nothing */
	return slot_error(p, s, code, msg, overrun);
}

/* A result that came after the deadline: the job did not finish in time.
 * Not when it was already moving refs (committed, or applied without
 * asking): then the result is what happened, and it stands. */
static char *late_result(const rq_pool *p, rq_pool_slot *s, json_t *j, long long finished)
{
	char msg[256];
	long long overrun = finished - s->deadline;

	if (s->committed || overrun <= 0 || json_is_true(json_object_get(j, "applied")))
		return NULL;
	snprintf(msg, sizeof(msg),
		 "the job finished %lld ms past its deadline of %lld ms; its result was discarded",
		 overrun, s->timeout_ms);
	s->discarded = 1; /* its objects removed once it exits */
	return slot_error(p, s, RQ_E_TIMEOUT, msg, overrun);
}

/* The result a child sent, parsed (NULL: none usable), however it ended
 * or before it ends; *json its text and *finished the child's clock when
 * it sent it. */
static json_t *report_result(const rq_pool_slot *s, const char **json, long long *finished)
{
	rq_child_msg m;
	json_t *j;

	*json = NULL;
	if (!rq_pool_slot_msg(s, RQ_JOBRUN_MSG_RESULT, &m) ||
	    !(*json = rq_jobrun_payload_json(m.data, finished)))
		return NULL;
	j = json_loads(*json, 0, NULL);
	if (j && !json_is_string(json_object_get(j, "status"))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The result j (text json, finished at the child's clock) as done gets
 * it: its text, *status and *transient; NULL out of memory. Takes j. */
static char *sent_text(const rq_pool *p, rq_pool_slot *s, json_t *j, const char *json,
		       long long finished, const char **status, int *transient)
{
	const char *code;
	char *result;

	*status = "error";
	*transient = 0;
	if ((result = late_result(p, s, j, finished))) {
		*transient = 1;
	} else {
		code = json_string_value(json_object_get(json_object_get(j, "error"), "code"));
		*status = json_string_value(json_object_get(j, "status"));
		result = strdup(json);
		/* a ref locked by a live process: the job is worth a retry */
		*transient = code && !strcmp(code, "ref_locked");
	}
	/* (not a pointer into j, which goes now) */
	*status = !strcmp(*status, "ok")	 ? "ok"
		  : !strcmp(*status, "conflict") ? "conflict"
						 : "error";
	json_decref(j);
	return result;
}

/* The result of a reaped child that was not published: the one it sent
 * if it exited 0, else the error result of how it ended; *status and
 * *transient as done gets them. NULL: out of memory. */
char *rq_pool_result_of(const rq_pool *p, rq_pool_slot *s, const char **status, int *transient)
{
	long long finished = 0;
	const char *json = NULL;
	json_t *j = WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == 0
			? report_result(s, &json, &finished)
			: NULL;

	*status = "error";
	if (!j)
		return slot_failure(p, s, transient);
	return sent_text(p, s, j, json, finished, status, transient);
}

/*
 * The child's report is in: its result, whole, the last message of the
 * job (jobrun.h). done gets it now, once, while the child may still work
 * on (its consolidation); the slot stays busy until the child is reaped.
 * Not for a child the parent killed or refused: how it ended decides, at
 * the reap.
 */
void rq_pool_result_publish(rq_pool *p, rq_pool_slot *s)
{
	long long finished = 0;
	const char *json, *status;
	char *result;
	int transient;
	json_t *j;

	if (s->published || s->aborted || s->timed_out || s->over_memory ||
	    !(j = report_result(s, &json, &finished)))
		return;
	s->published = 1;
	result = sent_text(p, s, j, json, finished, &status, &transient);
	rq_child_in_drop(&s->report);
	/* out of memory for its result: the job is left for a retry */
	p->opts.done(p->opts.done_arg, s->ctx, result, result ? status : "error",
		     result ? transient : 1);
	free(result);
}

/* The error result a child that stopped part-way sent (NULL: none). */
char *rq_pool_result_stopped(const rq_pool_slot *s)
{
	long long finished;
	const char *json;
	rq_child_msg m;

	if (!rq_pool_slot_msg(s, RQ_JOBRUN_MSG_STOPPED, &m) ||
	    !(json = rq_jobrun_payload_json(m.data, &finished)))
		return NULL;
	return strdup(json);
}
