/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq submit / result / queue: the client side of the Redis queue.
 *
 * submit reads jobs (one JSON object, or JSON lines), stamps each with its
 * submission time (and, with --wait, a reply list of its own), validates
 * and enqueues it, then with --wait prints the results as they come.
 * result prints stored results; queue prints the operator's views.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_clock.h"
#include "cmds.h"
#include "connect.h"
#include "opt.h"
#include "rq_dead.h"
#include "rq_group.h"
#include "rq_job.h"
#include "rq_queue.h"
#include "rq_queue_view.h"

/* ===================== connecting ===================== */

/*
 * --redis from the command line: a private copy (*copy, to free), with a
 * password in it blanked in argv and warned about. -1 out of memory.
 */
static int redis_arg(const char **url, char **copy)
{
	int had_password = 0;

	*copy = NULL;
	if (!*url)
		return 0;
	if (!(*copy = rq_connect_url_arg((char *)*url, &had_password))) {
		fputs("fatal: out of memory\n", stderr);
		return -1;
	}
	if (had_password)
		fprintf(stderr, "warning: %s\n", RQ_CONNECT_PASSWORD_WARNING);
	*url = *copy;
	return 0;
}

/* Connect for a client command (--redis taken as redis_arg does), the
 * failure printed: 0, or -1. Free *url after. */
static int client_open(const char *redis, const char *queue, const char *timeout, char **url,
		       rq_redis **r, rq_queue **q)
{
	if (redis_arg(&redis, url) < 0)
		return -1;
	if (rq_connect_client(redis, queue, timeout, r, q) < 0) {
		free(*url);
		*url = NULL;
		return -1;
	}
	return 0;
}

/* ===================== submit: the command line ===================== */

static const char submit_synopsis[] =
    "usage: replayq submit [--redis=URL] [--queue=Q] [--connect-timeout=S] [--force]\n"
    "                      [--no-validate] [--wait[=SECONDS]] [FILE|-]\n";

static const char submit_about[] =
    "Enqueues one job (a JSON object) or JSON lines of jobs. Prints the job ids, or\n"
    "with --wait the results as JSON lines; exit 0 when all are ok, 1 if any\n"
    "conflicted, 2 if any failed, was refused or timed out.\n";

typedef struct submit_args {
	const char *redis, *queue, *file, *connect_timeout;
	const char *wait; /* --wait's seconds; NULL: no --wait */
	int force, validate, waiting;
	long wait_s;
	rq_opt opts[7];
	rq_opt_spec spec;
} submit_args;

static void submit_args_init(submit_args *a)
{
	const rq_opt opts[] = {
	    RQ_CLIENT_CONNECT_OPTIONS(&a->redis, &a->queue, &a->connect_timeout),
	    RQ_OPT_BOOL("force", &a->force, "queue a job again once it has its result"),
	    RQ_OPT_BOOL("validate", &a->validate,
			"check each job before it is queued (default; the workers\n"
			"check it anyway)"),
	    RQ_OPT_OPTIONAL("wait", &a->wait, "<seconds>", "300",
			    "print the results as they come, waiting up to <seconds>\n"
			    "(default 300)"),
	    RQ_OPT_END};

	memset(a, 0, sizeof(*a));
	_Static_assert(sizeof(opts) == sizeof(a->opts), "the table fills a->opts exactly");
	memcpy(a->opts, opts, sizeof(opts));
	a->validate = 1;
	a->wait_s = 300;
	a->spec.usage = submit_synopsis;
	a->spec.opts = a->opts;
	a->spec.footer = submit_about;
}

/* The command line of submit: 0, or -1 with the exit status in *status. */
static int submit_parse(int argc, char **argv, submit_args *a, int *status)
{
	submit_args_init(a);
	if (rq_opt_parse_at_most(&a->spec, argc, argv, 1, "more than one input file", &a->file,
				 status) < 0)
		return -1;
	if ((*status = rq_connect_timeout_check(a->connect_timeout)) != 0)
		return -1;
	if ((a->waiting = a->wait != NULL)) {
		if (rq_opt_number(a->wait, 1, 86400, &a->wait_s) < 0) {
			fprintf(stderr, "error: --wait takes seconds from 1 to 86400\n");
			*status = RQ_OPT_USAGE_STATUS;
			return -1;
		}
	}
	return 0;
}

/* ===================== submit: reading the jobs ===================== */

/* All that in holds, NUL-terminated (malloc'ed); NULL with err set when
 * it is empty or memory runs out. */
static char *read_all(FILE *in, rq_error *err)
{
	char buf[65536], *text = NULL;
	size_t len = 0, cap = 0, n;

	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (len + n + 1 > cap) {
			char *grown;
			cap = (len + n + 1) * 2;
			if (!(grown = realloc(text, cap))) {
				free(text);
				rq_error_set(err, RQ_E_NOMEM, "out of memory");
				return NULL;
			}
			text = grown;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	if (!text)
		rq_error_set(err, RQ_E_INVALID_JOB, "no job given");
	else
		text[len] = '\0';
	return text;
}

/* Append the JSON object of each non-blank line of text to jobs: 0 or -1
 * (err set). text is cut into lines. */
static int read_lines(char *text, json_t *jobs, rq_error *err)
{
	unsigned long lineno = 0;
	json_error_t jerr;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		json_t *one;
		lineno++;
		while (*line == ' ' || *line == '\t' || *line == '\r')
			line++;
		if (!*line)
			continue;
		one = json_loads(line, 0, &jerr);
		if (!one || !json_is_object(one)) {
			json_decref(one);
			return rq_error_set(err, RQ_E_INVALID_JOB,
					    "line %lu is not a JSON object: %s", lineno, jerr.text);
		}
		if (json_array_append_new(jobs, one) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* The input: a single JSON object, or JSON lines; an array of the jobs,
 * or NULL with err set. */
static json_t *read_jobs(FILE *in, rq_error *err)
{
	char *text = read_all(in, err);
	json_t *jobs = text ? json_array() : NULL, *one;

	if (text && !jobs)
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!jobs) {
		free(text);
		return NULL;
	}
	one = json_loads(text, 0, NULL);
	if (one && json_is_object(one)) {
		if (json_array_append_new(jobs, one) < 0) {
			rq_error_set(err, RQ_E_NOMEM, "out of memory");
			json_decref(jobs);
			jobs = NULL;
		}
	} else {
		json_decref(one);
		if (read_lines(text, jobs, err) < 0) {
			json_decref(jobs);
			jobs = NULL;
		}
	}
	free(text);
	return jobs;
}

/* The jobs of the input file (or stdin): an array, or NULL (reported,
 * the exit status in *status). */
static json_t *submit_read(const submit_args *a, int *status)
{
	FILE *in = stdin;
	json_t *jobs;
	rq_error err;

	if (a->file && strcmp(a->file, "-") && !(in = fopen(a->file, "r"))) {
		fprintf(stderr, "fatal: cannot open '%s': %s\n", a->file, strerror(errno));
		*status = 128;
		return NULL;
	}
	jobs = read_jobs(in, &err);
	if (in != stdin)
		fclose(in);
	if (!jobs) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		*status = 2;
	}
	return jobs;
}

/* ===================== submit: enqueueing ===================== */

/* A job submitted, its result awaited. */
typedef struct pending {
	char *id;
	int own_reply; /* the result comes to our reply list */
	int done;
} pending;

/* The submission state: the queue, our reply list, the jobs awaited and
 * the worst outcome so far (0 ok, 1 conflict, 2 failed). */
typedef struct submission {
	const submit_args *args;
	rq_queue *q;
	char reply[128];
	pending *pend;
	size_t npend, left;
	int worst;
} submission;

/* Stamp a job with its submission time and, when waiting, our reply
 * list (*own then 1): 0, or -1 out of memory. */
static int stamp_job(const submission *s, json_t *job, int *own)
{
	*own = 0;
	if (!json_object_get(job, "submitted_at") &&
	    json_object_set_new(job, "submitted_at", json_integer(rq_clock_wall_ms())) < 0)
		return -1;
	if (s->args->waiting && !json_object_get(job, "reply_to")) {
		if (json_object_set_new(job, "reply_to", json_string(s->reply)) < 0)
			return -1;
		*own = 1;
	}
	return 0;
}

/* A job refused as a duplicate (rq_group_enqueue returned 1): why. */
static void warn_not_queued(const submit_args *a, const char *id, const char *where)
{
	if (a->force)
		fprintf(stderr,
			"warning: job %s not queued again: it is still queued or running (--force "
			"reruns a job once it has its result)\n",
			id);
	else
		fprintf(stderr, "warning: job %s not queued again: %s (use --force to rerun)\n", id,
			strcmp(where, "result") ? "it is already queued" : "its result exists");
}

/*
 * The id is held (a result, or a job queued, parked or running): refused
 * with id_conflict (2) when that job has other content than this one,
 * naming both content digests; else the same job, not queued again (1).
 */
static int not_queued(const submit_args *a, const char *id, const char *text,
		      const rq_group_stored *st)
{
	char mine[41];

	if (st->digest[0] && rq_job_digest(text, strlen(text), mine) == 0 &&
	    strcmp(mine, st->digest)) {
		fprintf(stderr,
			"error: job %s refused: %s: job id '%s' is taken by another job with "
			"different content (%s): content digest %s, this job's %s\n",
			id, rq_qerror_name(RQ_E_ID_CONFLICT), id,
			!strcmp(st->where, "result")	   ? "it has its result"
			: !strncmp(st->where, "group ", 6) ? "it waits in its group"
							   : "it is queued or running",
			st->digest, mine);
		return 2;
	}
	warn_not_queued(a, id, st->where);
	return 1;
}

/* A job's group, when it names one that is valid (NULL: none; the job
 * is refused anyway when it names a bad one). */
static const char *job_group(const json_t *job)
{
	const char *g = json_string_value(json_object_get(job, "group"));
	return g && rq_job_id_valid(g) ? g : NULL;
}

/* Validate (unless --no-validate) and enqueue a job's text: 0 queued, 1
 * not queued again (a duplicate), 2 refused, -1 fatal (reported). */
static int enqueue_text(const submission *s, const char *id, const char *text, const char *group)
{
	char sid[64], idbuf[RQ_JOB_ID_MAX + 1];
	rq_group_stored stored;
	rq_job parsed;
	rq_error err;
	int rc, parked;

	if (s->args->validate) {
		if (rq_job_parse(text, strlen(text), &parsed, idbuf, &err) < 0) {
			fprintf(stderr, "error: job %s refused: %s: %s\n", id,
				rq_qerror_name(err.code), err.msg);
			return 2;
		}
		rq_job_free(&parsed);
	}
	rc = rq_group_enqueue(s->q, id, text, strlen(text), group, s->args->force, sid, &parked,
			      &stored, &err);
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return -1;
	}
	return rc == 1 ? not_queued(s->args, id, text, &stored) : 0;
}

/*
 * Enqueue one job (its id already valid), stamped. 0 queued (*own: its
 * result comes to our list), 1 not queued again (a duplicate: its result
 * is still awaited, from where the first submission said), 2 refused, -1
 * fatal (reported).
 */
static int submit_one(const submission *s, json_t *job, const char *id, int *own)
{
	char *text;
	int rc;

	if (stamp_job(s, job, own) < 0 || !(text = json_dumps(job, JSON_COMPACT))) {
		fprintf(stderr, "fatal: out of memory\n");
		return -1;
	}
	rc = enqueue_text(s, id, text, job_group(job));
	free(text);
	if (rc == 1)
		*own = 0;
	if (rc == 0 && !s->args->waiting)
		printf("%s\n", id);
	return rc;
}

/* Enqueue every job; the ones queued (or already there) are pending. 0,
 * or -1 on a fatal error (reported). */
static int submit_all(submission *s, json_t *jobs)
{
	json_t *job;
	size_t i;

	json_array_foreach(jobs, i, job)
	{
		const char *id = json_string_value(json_object_get(job, "id"));
		int own, rc;
		if (!id || !rq_job_id_valid(id)) {
			fprintf(stderr,
				"error: job %zu: field 'id' is required: 1-128 of "
				"[A-Za-z0-9._:@/+-]\n",
				i + 1);
			s->worst = 2;
			continue;
		}
		if ((rc = submit_one(s, job, id, &own)) < 0)
			return -1;
		if (rc == 2 || (rc == 1 && !s->args->waiting))
			s->worst = 2;
		if (rc == 2)
			continue;
		if (!(s->pend[s->npend].id = strdup(id))) {
			fprintf(stderr, "fatal: out of memory\n");
			return -1;
		}
		s->pend[s->npend++].own_reply = own;
	}
	return 0;
}

/* ===================== submit: waiting ===================== */

static int status_rank(const char *result)
{
	json_t *o = json_loads(result, 0, NULL);
	const char *st = o ? json_string_value(json_object_get(o, "status")) : NULL;
	int r = !st ? 2 : !strcmp(st, "ok") ? 0 : !strcmp(st, "conflict") ? 1 : 2;

	json_decref(o);
	return r;
}

/* A result for one of the pending jobs: print it, mark it done. */
static void submit_got(submission *s, const char *id, const char *res)
{
	for (size_t k = 0; k < s->npend; k++)
		if (!s->pend[k].done && !strcmp(s->pend[k].id, id)) {
			int rank = status_rank(res);
			s->pend[k].done = 1;
			s->left--;
			printf("%s\n", res);
			s->worst = s->worst > rank ? s->worst : rank;
			return;
		}
}

/* Poll the result keys of the pending jobs whose results go elsewhere. */
static void poll_results(submission *s)
{
	rq_error err;

	for (size_t k = 0; k < s->npend; k++) {
		char *res = NULL;
		if (!s->pend[k].done && !s->pend[k].own_reply &&
		    rq_queue_result(s->q, s->pend[k].id, &res, &err) == 0) {
			submit_got(s, s->pend[k].id, res);
			free(res);
		}
	}
}

/* Take one result from our reply list, waiting up to half a second. */
static void take_reply(submission *s)
{
	char *res = NULL;
	rq_error err;
	json_t *o;
	int w = rq_queue_wait_reply(s->q, s->reply, 500, &res, &err);

	if (w < 0)
		fprintf(stderr, "warning: %s\n", err.msg);
	if (w != 0)
		return;
	o = json_loads(res, 0, NULL);
	if (o && json_is_string(json_object_get(o, "id")))
		submit_got(s, json_string_value(json_object_get(o, "id")), res);
	else
		fprintf(stderr, "warning: a result that cannot be read: %.200s\n", res);
	json_decref(o);
	free(res);
	fflush(stdout);
}

/* Wait for the results of the pending jobs: from our reply list, and by
 * polling the result keys of those whose results go elsewhere. */
static void submit_wait(submission *s)
{
	long long deadline = rq_clock_mono_ms() + s->args->wait_s * 1000;

	s->left = s->npend;
	while (s->left && rq_clock_mono_ms() < deadline) {
		poll_results(s);
		if (s->left)
			take_reply(s);
	}
	for (size_t k = 0; k < s->npend; k++)
		if (!s->pend[k].done) {
			fprintf(stderr, "error: no result for job %s within %lds\n", s->pend[k].id,
				s->args->wait_s);
			s->worst = 2;
		}
}

/* ===================== submit ===================== */

/* Connect and make sure the group exists: 0, or -1 (reported). The group
 * is the workers' business: a producer that may not create it (NOPERM)
 * still submits, and a group created later reads from 0. */
static int submit_open(const submit_args *a, char **url, rq_redis **r, rq_queue **q)
{
	rq_error err;

	if (client_open(a->redis, a->queue, a->connect_timeout, url, r, q) < 0)
		return -1;
	if (rq_queue_ensure_group(*q, &err) < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return -1;
	}
	return 0;
}

int cmd_submit(int argc, char **argv)
{
	submit_args a;
	submission s;
	rq_redis *r = NULL;
	json_t *jobs;
	char *url = NULL;
	int status;

	if (submit_parse(argc, argv, &a, &status) < 0)
		return status;
	if (!(jobs = submit_read(&a, &status)))
		return status;
	memset(&s, 0, sizeof(s));
	s.args = &a;
	snprintf(s.reply, sizeof(s.reply), "submit-%ld-%lld", (long)getpid(), rq_clock_wall_ms());
	if (submit_open(&a, &url, &r, &s.q) < 0) {
		s.worst = 2;
	} else if (!(s.pend = calloc(json_array_size(jobs) + 1, sizeof(*s.pend)))) {
		fprintf(stderr, "fatal: out of memory\n");
		s.worst = 2;
	} else {
		if (submit_all(&s, jobs) < 0)
			s.worst = 2;
		if (a.waiting) /* for the jobs queued, even after a failure */
			submit_wait(&s);
	}
	for (size_t k = 0; k < s.npend; k++)
		free(s.pend[k].id);
	free(s.pend);
	json_decref(jobs);
	rq_queue_free(s.q);
	rq_redis_free(r);
	free(url);
	return s.worst;
}

/* ===================== result ===================== */

static const char result_synopsis[] =
    "usage: replayq result [--redis=URL] [--queue=Q] [--connect-timeout=S] ID...\n";

/* Print the stored result of each id: 0 all found, 1 one missing, 128
 * Redis failed. */
static int print_results(rq_queue *q, const rq_opt_args *ids)
{
	rq_error err;
	int missing = 0;

	for (size_t k = 0; k < ids->n; k++) {
		char *res = NULL;
		int g = rq_queue_result(q, ids->v[k], &res, &err);
		if (g < 0) {
			fprintf(stderr, "fatal: %s\n", err.msg);
			return 128;
		}
		if (g == 1) {
			fprintf(stderr, "error: no result for job %s\n", ids->v[k]);
			missing = 1;
			continue;
		}
		printf("%s\n", res);
		free(res);
	}
	return missing;
}

int cmd_result(int argc, char **argv)
{
	const char *redis = NULL, *queue = NULL, *timeout = NULL;
	const rq_opt opts[] = {RQ_CLIENT_CONNECT_OPTIONS(&redis, &queue, &timeout), RQ_OPT_END};
	const rq_opt_spec spec = {.usage = result_synopsis, .opts = opts};
	rq_opt_args ids;
	char *url = NULL;
	rq_redis *r = NULL;
	rq_queue *q = NULL;
	int status;

	if (rq_opt_parse(&spec, argc, argv, &ids, &status) < 0)
		return status;
	if (!ids.n)
		status = rq_opt_usage_error(&spec, "no job id given");
	else if ((status = rq_connect_timeout_check(timeout)) != 0)
		;
	else if (client_open(redis, queue, timeout, &url, &r, &q) < 0)
		status = 128;
	else
		status = print_results(q, &ids);
	rq_opt_args_free(&ids);
	free(url);
	rq_queue_free(q);
	rq_redis_free(r);
	return status;
}

/* ===================== queue ===================== */

static const char queue_synopsis[] =
    "usage: replayq queue [--redis=URL] [--queue=Q] [--connect-timeout=S]\n"
    "                     stats|dead|pending [--count=N]\n"
    "   or: replayq queue [--redis=URL] [--queue=Q] [--connect-timeout=S]\n"
    "                     retry ID...|--all-dead\n";

/* stats with the groups' counts: 0, or -1 with err set */
static int stats_view(rq_queue *q, json_t **out, rq_error *err)
{
	long long groups, parked;

	if (rq_queue_view_stats(q, out, err) < 0)
		return -1;
	if (rq_group_counts(q, &groups, &parked, err) < 0 ||
	    json_object_set_new(*out, "groups", json_integer(groups)) < 0 ||
	    json_object_set_new(*out, "parked", json_integer(parked)) < 0) {
		json_decref(*out);
		*out = NULL;
		return err->code != RQ_OK ? -1 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* The view asked for, printed as JSON: 0, or 128 (reported). */
static int print_view(rq_queue *q, const char *what, long count)
{
	json_t *out = NULL;
	rq_error err;
	char *s;
	int rc;

	rq_error_clear(&err);
	if (!strcmp(what, "stats"))
		rc = stats_view(q, &out, &err);
	else if (!strcmp(what, "dead"))
		rc = rq_queue_view_dead_list(q, (size_t)count, &out, &err);
	else
		rc = rq_queue_view_pending_list(q, (size_t)count, &out, &err);
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	s = json_dumps(out, JSON_INDENT(2));
	json_decref(out);
	if (!s) {
		fprintf(stderr, "fatal: out of memory\n");
		return 128;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

/* Requeue one job from its dead letters: 0 (its id printed), 1 not
 * (warned), 128 Redis failed (reported). */
static int retry_one(rq_queue *q, const rq_dead_list *l, const char *id)
{
	char why[RQ_ERROR_MSG_MAX];
	rq_error err;
	int parked, rc = rq_dead_requeue(q, l, id, &parked, why, sizeof(why), &err);

	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	if (rc == 1) {
		fprintf(stderr, "warning: job %s not requeued: %s\n", id, why);
		return 1;
	}
	printf("%s\n", id);
	return 0;
}

/* queue retry: the jobs named (ids), or every dead-lettered one (all),
 * each once. 0 all requeued, 1 one was not, 128 Redis failed. */
static int retry_dead(rq_queue *q, const rq_opt_args *ids, int all)
{
	rq_dead_list l;
	rq_error err;
	json_t *seen = json_object();
	int status = 0;

	if (!seen || rq_dead_read(q, &l, &err) < 0) {
		fprintf(stderr, "fatal: %s\n", seen ? err.msg : "out of memory");
		json_decref(seen);
		return 128;
	}
	for (size_t i = 0; status < 128 && i < (all ? l.n : ids->n - 1); i++) {
		const char *id = all ? l.v[i].id : ids->v[i + 1];
		int rc;
		if (!id || json_object_get(seen, id))
			continue; /* (an entry without an id is no job to requeue) */
		json_object_set_new(seen, id, json_true());
		if ((rc = retry_one(q, &l, id)) > status)
			status = rc;
	}
	fflush(stdout);
	rq_dead_list_free(&l);
	json_decref(seen);
	return status;
}

/* The view or action named on the command line, --count and --all-dead:
 * 0, or 129 (said). */
static int queue_check(const rq_opt_spec *spec, const rq_opt_args *rest, const char *count, int all,
		       long *n)
{
	const char *what = rest->n ? rest->v[0] : NULL;

	if (!what)
		return rq_opt_usage_error(spec, "no view given (stats, dead, pending or retry)");
	if (strcmp(what, "stats") && strcmp(what, "dead") && strcmp(what, "pending") &&
	    strcmp(what, "retry"))
		return rq_opt_usage_error(spec, "unknown view `%s' (stats, dead, pending or retry)",
					  what);
	if (strcmp(what, "retry") && rest->n > 1)
		return rq_opt_usage_error(spec, "unexpected `%s'", rest->v[1]);
	if (strcmp(what, "retry") && all)
		return rq_opt_usage_error(spec, "--all-dead goes with retry");
	if (!strcmp(what, "retry") && all == (rest->n > 1))
		return rq_opt_usage_error(spec, "retry takes job ids or --all-dead (one of them)");
	for (size_t i = 1; i < rest->n; i++)
		if (!rq_job_id_valid(rest->v[i]))
			return rq_opt_usage_error(spec, "bad job id `%s'", rest->v[i]);
	if (rq_opt_number(count, 1, 100000, n) < 0) {
		fputs("error: --count must be from 1 to 100000\n", stderr);
		return RQ_OPT_USAGE_STATUS;
	}
	return 0;
}

int cmd_queue(int argc, char **argv)
{
	const char *redis = NULL, *queue = NULL, *count = "100", *timeout = NULL;
	int all = 0;
	const rq_opt opts[] = {
	    RQ_CLIENT_CONNECT_OPTIONS(&redis, &queue, &timeout),
	    RQ_OPT_STRING("count", &count, "<n>", "how many entries dead and pending list (100)"),
	    RQ_OPT_BOOL("all-dead", &all, "retry: requeue every dead-lettered job"), RQ_OPT_END};
	const rq_opt_spec spec = {.usage = queue_synopsis, .opts = opts};
	rq_opt_args rest;
	char *url = NULL;
	rq_redis *r = NULL;
	rq_queue *q = NULL;
	long n = 0;
	int status;

	if (rq_opt_parse(&spec, argc, argv, &rest, &status) < 0)
		return status;
	if ((status = queue_check(&spec, &rest, count, all, &n)) == 0 &&
	    (status = rq_connect_timeout_check(timeout)) == 0) {
		if (client_open(redis, queue, timeout, &url, &r, &q) < 0)
			status = 128;
		else if (!strcmp(rest.v[0], "retry"))
			status = retry_dead(q, &rest, all);
		else
			status = print_view(q, rest.v[0], n);
	}
	rq_opt_args_free(&rest);
	rq_queue_free(q);
	rq_redis_free(r);
	free(url);
	return status;
}
