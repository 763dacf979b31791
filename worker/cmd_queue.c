/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq submit / result / queue: the client side of the Redis queue.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "opts.h"
#include "rq_job.h"
#include "rq_queue.h"

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
	if (!(*copy = rq_redis_arg_take((char *)*url, &had_password))) {
		fputs("fatal: out of memory\n", stderr);
		return -1;
	}
	if (had_password)
		fprintf(stderr, "warning: %s\n", RQ_REDIS_ARG_WARNING);
	*url = *copy;
	return 0;
}

/* Connect for a client command (--redis taken as redis_arg does), the
 * failure printed: 0, or -1. Free *url after. */
static int client_open(const char *redis, const char *queue, char **url, rq_redis **r, rq_queue **q)
{
	rq_error err;

	if (redis_arg(&redis, url) < 0)
		return -1;
	if (rq_open_queue(redis, queue, 10000, r, q, &err) < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		free(*url);
		*url = NULL;
		return -1;
	}
	return 0;
}

static const char submit_usage[] =
    "usage: replayq submit [--redis=URL] [--queue=Q] [--force] [--no-validate]\n"
    "                      [--wait[=SECONDS]] [FILE|-]\n"
    "Enqueues one job (a JSON object) or JSON lines of jobs. Prints the job ids, or\n"
    "with --wait the results as JSON lines; exit 0 when all are ok, 1 if any\n"
    "conflicted, 2 if any failed, was refused or timed out.\n";

typedef struct pending {
	char *id;
	int own_reply; /* the result comes to our reply list */
	int done;
} pending;

/* Read the input: a single JSON object, or JSON lines. */
static json_t *read_jobs(FILE *in, rq_error *err)
{
	json_t *arr = json_array();
	json_error_t jerr;
	char *text = NULL;
	size_t len = 0, cap = 0;
	char buf[65536];
	size_t n;
	json_t *one;

	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nt = realloc(text, cap);
			if (!nt) {
				free(text);
				json_decref(arr);
				rq_error_set(err, RQ_E_NOMEM, "out of memory");
				return NULL;
			}
			text = nt;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	if (!text) {
		json_decref(arr);
		rq_error_set(err, RQ_E_INVALID_JOB, "no job given");
		return NULL;
	}
	text[len] = '\0';
	one = json_loads(text, 0, &jerr);
	if (one && json_is_object(one)) {
		json_array_append_new(arr, one);
		free(text);
		return arr;
	}
	json_decref(one);
	/* JSON lines */
	unsigned long lineno = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		lineno++;
		while (*line == ' ' || *line == '\t' || *line == '\r')
			line++;
		if (!*line)
			continue;
		one = json_loads(line, 0, &jerr);
		if (!one || !json_is_object(one)) {
			json_decref(one);
			json_decref(arr);
			free(text);
			rq_error_set(err, RQ_E_INVALID_JOB, "line %lu is not a JSON object: %s",
				     lineno, jerr.text);
			return NULL;
		}
		json_array_append_new(arr, one);
	}
	free(text);
	return arr;
}

static int status_rank(const char *result)
{
	json_t *o = json_loads(result, 0, NULL);
	const char *s = o ? json_string_value(json_object_get(o, "status")) : NULL;
	int r = !s ? 2 : !strcmp(s, "ok") ? 0 : !strcmp(s, "conflict") ? 1 : 2;
	json_decref(o);
	return r;
}

typedef struct submit_args {
	const char *redis, *queue, *file;
	int force, validate, waiting;
	long wait_s;
} submit_args;

/* The options of submit: 0, 1 for -h (printed), or an exit status. */
static int submit_parse(int argc, char **argv, submit_args *a)
{
	const char *wait = NULL;

	memset(a, 0, sizeof(*a));
	a->validate = 1;
	a->wait_s = 300;
	for (int k = 1; k < argc; k++) {
		int m;
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			fputs(submit_usage, stdout);
			return 1;
		}
		if (!strcmp(argv[k], "--force")) {
			a->force = 1;
			continue;
		}
		if (!strcmp(argv[k], "--no-validate")) {
			a->validate = 0;
			continue;
		}
		if (!strcmp(argv[k], "--wait")) {
			a->waiting = 1;
			continue;
		}
		if (!strncmp(argv[k], "--wait=", 7)) {
			a->waiting = 1;
			wait = argv[k] + 7;
			continue;
		}
		if ((m = rq_opt_value(argc, argv, &k, "redis", &a->redis)) ||
		    (m = rq_opt_value(argc, argv, &k, "queue", &a->queue))) {
			if (m < 0) {
				fprintf(stderr, "error: option requires a value\n%s", submit_usage);
				return 129;
			}
			continue;
		}
		if (argv[k][0] == '-' && strcmp(argv[k], "-") != 0) {
			fprintf(stderr, "error: unknown option `%s'\n%s", argv[k], submit_usage);
			return 129;
		}
		if (a->file) {
			fprintf(stderr, "error: more than one input file\n%s", submit_usage);
			return 129;
		}
		a->file = argv[k];
	}
	if (wait) {
		char *end;
		a->wait_s = strtol(wait, &end, 10);
		if (!*wait || *end || a->wait_s < 1 || a->wait_s > 86400) {
			fprintf(stderr, "error: --wait takes seconds from 1 to 86400\n");
			return 129;
		}
	}
	return 0;
}

/* The jobs of the input file (or stdin): an array, or NULL (reported). */
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

/*
 * Enqueue one job (its id already valid): validated unless --no-validate,
 * with its submission time and, when waiting, our reply list. 0 queued
 * (*own: its result comes to our list), 1 not queued again (a duplicate:
 * its result is still awaited), 2 refused, -1 fatal (reported).
 */
static int submit_one(rq_queue *q, const submit_args *a, json_t *job, const char *id,
		      const char *reply, int *own)
{
	char sid[64], *text, idbuf[RQ_JOB_ID_MAX + 1];
	rq_job parsed;
	rq_error err;
	int rc;

	*own = 0;
	if (!json_object_get(job, "submitted_at"))
		json_object_set_new(job, "submitted_at", json_integer(rq_wall_ms()));
	if (a->waiting && !json_object_get(job, "reply_to")) {
		json_object_set_new(job, "reply_to", json_string(reply));
		*own = 1;
	}
	if (!(text = json_dumps(job, JSON_COMPACT))) {
		fprintf(stderr, "fatal: out of memory\n");
		return -1;
	}
	if (a->validate && rq_job_parse(text, strlen(text), &parsed, idbuf, &err) < 0) {
		fprintf(stderr, "error: job %s refused: %s: %s\n", id, rq_qerror_name(err.code),
			err.msg);
		free(text);
		return 2;
	}
	if (a->validate)
		rq_job_free(&parsed);
	rc = rq_queue_enqueue(q, id, text, strlen(text), a->force, sid, &err);
	free(text);
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return -1;
	}
	if (rc == 1 && a->force) {
		fprintf(stderr,
			"warning: job %s not queued again: it is still queued or running (--force "
			"reruns a job once it has its result)\n",
			id);
		*own = 0; /* its result goes where the first submission said */
		return 1;
	}
	if (rc == 1) {
		fprintf(stderr, "warning: job %s not queued again: %s (use --force to rerun)\n", id,
			strcmp(sid, "result") ? "it is already queued" : "its result exists");
		*own = 0; /* its result goes where the first submission said */
		return 1;
	}
	if (!a->waiting)
		printf("%s\n", id);
	return 0;
}

/* A result for one of the pending jobs: print it, mark it done. */
static void submit_got(pending *pend, size_t npend, const char *id, const char *res, size_t *left,
		       int *worst)
{
	for (size_t k = 0; id && k < npend; k++)
		if (!pend[k].done && !strcmp(pend[k].id, id)) {
			int rank = status_rank(res);
			pend[k].done = 1;
			(*left)--;
			printf("%s\n", res);
			*worst = *worst > rank ? *worst : rank;
			return;
		}
}

/* Wait for the results of the pending jobs: from our reply list, and by
 * polling the result keys of those whose results go elsewhere. */
static void submit_wait(rq_queue *q, const submit_args *a, pending *pend, size_t npend,
			const char *reply, int *worst)
{
	long long deadline = rq_mono_ms() + a->wait_s * 1000;
	size_t left = npend;
	rq_error err;

	while (left && rq_mono_ms() < deadline) {
		char *res = NULL;
		json_t *o;
		for (size_t k = 0; k < npend; k++)
			if (!pend[k].done && !pend[k].own_reply &&
			    rq_queue_result(q, pend[k].id, &res, &err) == 0) {
				submit_got(pend, npend, pend[k].id, res, &left, worst);
				free(res);
			}
		if (!left)
			break;
		int w = rq_queue_wait_reply(q, reply, 500, &res, &err);
		if (w < 0)
			fprintf(stderr, "warning: %s\n", err.msg);
		if (w != 0)
			continue;
		o = json_loads(res, 0, NULL);
		submit_got(pend, npend, o ? json_string_value(json_object_get(o, "id")) : NULL, res,
			   &left, worst);
		json_decref(o);
		free(res);
		fflush(stdout);
	}
	for (size_t k = 0; k < npend; k++)
		if (!pend[k].done) {
			fprintf(stderr, "error: no result for job %s within %lds\n", pend[k].id,
				a->wait_s);
			*worst = 2;
		}
}

/* Enqueue every job; the ones queued (or already there) are pending. */
static int submit_all(rq_queue *q, const submit_args *a, json_t *jobs, const char *reply,
		      pending *pend, size_t *npend)
{
	json_t *job;
	size_t i;
	int worst = 0;

	json_array_foreach(jobs, i, job)
	{
		const char *id = json_string_value(json_object_get(job, "id"));
		int own, rc;
		if (!id || !rq_job_id_valid(id)) {
			fprintf(stderr,
				"error: job %zu: field 'id' is required: 1-128 of "
				"[A-Za-z0-9._:@/+-]\n",
				i + 1);
			worst = 2;
			continue;
		}
		if ((rc = submit_one(q, a, job, id, reply, &own)) < 0)
			return 2;
		if (rc == 2 || (rc == 1 && !a->waiting))
			worst = 2;
		if (rc == 2)
			continue;
		if (!(pend[*npend].id = strdup(id))) {
			fprintf(stderr, "fatal: out of memory\n");
			return 2;
		}
		pend[*npend].own_reply = own;
		(*npend)++;
	}
	return worst;
}

int cmd_submit(int argc, char **argv)
{
	submit_args a;
	rq_redis *r = NULL;
	rq_queue *q = NULL;
	rq_error err;
	json_t *jobs;
	size_t npend = 0;
	pending *pend = NULL;
	char reply[128], *url = NULL;
	int worst = 0;

	if ((worst = submit_parse(argc, argv, &a)) != 0)
		return worst == 1 ? 0 : worst;
	if (!(jobs = submit_read(&a, &worst)))
		return worst;
	/* the group is the workers' business: a producer that may not create
	 * it (NOPERM) still submits, and a group created later reads from 0 */
	if (client_open(a.redis, a.queue, &url, &r, &q) < 0 || rq_queue_ensure_group(q, &err) < 0) {
		if (q)
			fprintf(stderr, "fatal: %s\n", err.msg);
		json_decref(jobs);
		rq_queue_free(q);
		rq_redis_free(r);
		free(url);
		return 2;
	}
	snprintf(reply, sizeof(reply), "submit-%ld-%lld", (long)getpid(), rq_wall_ms());
	if (!(pend = calloc(json_array_size(jobs) + 1, sizeof(*pend)))) {
		fprintf(stderr, "fatal: out of memory\n");
		worst = 2;
	} else {
		worst = submit_all(q, &a, jobs, reply, pend, &npend);
	}
	if (a.waiting && pend)
		submit_wait(q, &a, pend, npend, reply, &worst);
	for (size_t k = 0; k < npend; k++)
		free(pend[k].id);
	free(pend);
	json_decref(jobs);
	rq_queue_free(q);
	rq_redis_free(r);
	free(url);
	return worst;
}

static const char result_usage[] = "usage: replayq result [--redis=URL] [--queue=Q] ID...\n";

int cmd_result(int argc, char **argv)
{
	const char *redis = NULL, *queue = NULL;
	const char **ids = calloc((size_t)argc + 1, sizeof(*ids));
	char *url = NULL;
	rq_redis *r = NULL;
	rq_queue *q = NULL;
	rq_error err;
	int missing = 0, nids = 0;

	if (!ids) {
		fputs("fatal: out of memory\n", stderr);
		return 128;
	}
	for (int k = 1; k < argc; k++) {
		int m;
		if ((m = rq_opt_value(argc, argv, &k, "redis", &redis)) ||
		    (m = rq_opt_value(argc, argv, &k, "queue", &queue))) {
			if (m < 0) {
				fputs(result_usage, stderr);
				free(ids);
				return 129;
			}
			continue;
		}
		if (argv[k][0] == '-') {
			fprintf(stderr, "error: unknown option `%s'\n%s", argv[k], result_usage);
			free(ids);
			return 129;
		}
		ids[nids++] = argv[k];
	}
	if (!nids) {
		fputs(result_usage, stderr);
		free(ids);
		return 129;
	}
	if (client_open(redis, queue, &url, &r, &q) < 0) {
		free(ids);
		return 128;
	}
	for (int k = 0; k < nids; k++) {
		char *res = NULL;
		int g = rq_queue_result(q, ids[k], &res, &err);
		if (g < 0) {
			fprintf(stderr, "fatal: %s\n", err.msg);
			missing = 128;
			break;
		}
		if (g == 1) {
			fprintf(stderr, "error: no result for job %s\n", ids[k]);
			missing = 1;
			continue;
		}
		printf("%s\n", res);
		free(res);
	}
	free(ids);
	free(url);
	rq_queue_free(q);
	rq_redis_free(r);
	return missing;
}

static const char queue_usage[] =
    "usage: replayq queue [--redis=URL] [--queue=Q] stats|dead|pending [--count=N]\n";

int cmd_queue(int argc, char **argv)
{
	const char *redis = NULL, *queue = NULL, *what = NULL, *count = "100";
	char *url = NULL;
	rq_redis *r = NULL;
	rq_queue *q = NULL;
	rq_error err;
	json_t *out = NULL;
	int rc;

	for (int k = 1; k < argc; k++) {
		int m;
		if ((m = rq_opt_value(argc, argv, &k, "redis", &redis)) ||
		    (m = rq_opt_value(argc, argv, &k, "queue", &queue)) ||
		    (m = rq_opt_value(argc, argv, &k, "count", &count))) {
			if (m < 0) {
				fputs(queue_usage, stderr);
				return 129;
			}
			continue;
		}
		if (argv[k][0] == '-' || what) {
			fprintf(stderr, "error: unexpected `%s'\n%s", argv[k], queue_usage);
			return 129;
		}
		what = argv[k];
	}
	if (!what || (strcmp(what, "stats") && strcmp(what, "dead") && strcmp(what, "pending"))) {
		fputs(queue_usage, stderr);
		return 129;
	}
	long n = strtol(count, NULL, 10);
	if (n < 1 || n > 100000) {
		fputs("error: --count must be from 1 to 100000\n", stderr);
		return 129;
	}
	if (client_open(redis, queue, &url, &r, &q) < 0)
		return 128;
	if (!strcmp(what, "stats"))
		rc = rq_queue_stats(q, &out, &err);
	else if (!strcmp(what, "dead"))
		rc = rq_queue_dead_list(q, (size_t)n, &out, &err);
	else
		rc = rq_queue_pending_list(q, (size_t)n, &out, &err);
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
	} else {
		char *s = json_dumps(out, JSON_INDENT(2));
		if (s) {
			printf("%s\n", s);
		} else {
			fprintf(stderr, "fatal: out of memory\n");
			rc = -1;
		}
		free(s);
	}
	json_decref(out);
	rq_queue_free(q);
	rq_redis_free(r);
	free(url);
	return rc < 0 ? 128 : 0;
}
