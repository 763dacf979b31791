/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq run: the worker's pool without Redis. Jobs come as JSON lines
 * from a file or stdin, each runs in a forked child (pool.c) as soon as
 * one is free, and each result is printed as a line on stdout as it
 * comes; a job with a group waits for the job of its group before it (in
 * the input's order, one at a time, as on a queue). Exit status: 0 all
 * ok, 1 a conflict, 2 an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "evloop.h"
#include "opt.h"
#include "pool.h"
#include "pool_cli.h"
#include "rq_job.h"
#include "rq_result_json.h"
#include "rq_testhook.h"
#include "stop.h"

/* the descriptors run opens for itself besides those open at its start
 * and the pool's: the input file, and one at a time for a moment */
#define RUN_OWN_FDS 2

/* What run has printed so far, and the groups of the jobs running. */
typedef struct run_state {
	int any_conflict, any_error;
	unsigned long n;
	char **groups; /* one a running job of a group (its ctx), NULL where free */
	size_t ngroups;
} run_state;

/* 1 while a job of group g runs. */
static int group_running(const run_state *c, const char *g)
{
	for (size_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] && !strcmp(c->groups[i], g))
			return 1;
	return 0;
}

/* A job of group g starts: its group's copy (the job's ctx, freed when
 * it is done), or NULL out of memory. */
static char *group_start(run_state *c, const char *g)
{
	char **grown, *copy = strdup(g);
	size_t i = 0;

	while (copy && i < c->ngroups && c->groups[i])
		i++;
	if (copy && i == c->ngroups) {
		if (!(grown = realloc(c->groups, (c->ngroups + 1) * sizeof(*grown)))) {
			free(copy);
			return NULL;
		}
		c->groups = grown;
		c->ngroups++;
	}
	if (copy)
		c->groups[i] = copy;
	return copy;
}

static void group_done(run_state *c, char *ctx)
{
	for (size_t i = 0; ctx && i < c->ngroups; i++)
		if (c->groups[i] == ctx)
			c->groups[i] = NULL;
	free(ctx);
}

static void print_result(run_state *c, const char *result, const char *status)
{
	rq_testhook_doc("result", "ok", result, strlen(result), NULL); /* the suite's schemas */
	fputs(result, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	c->n++;
	if (!strcmp(status, "conflict"))
		c->any_conflict = 1;
	else if (strcmp(status, "ok"))
		c->any_error = 1;
}

/* The error result of a job that did not run. */
static void print_error_result(run_state *c, const char *id, const char *repo, const rq_error *err)
{
	char *res = rq_result_error_text(id, repo, err->code, err->msg, 1, "local");

	if (res) {
		print_result(c, res, "error");
		free(res);
		return;
	}
	fprintf(stderr, "error: out of memory: no result for job %s (%s)\n", id, err->msg);
	c->any_error = 1;
}

static void on_run_done(void *arg, void *ctx, const char *result, const char *status, int transient)
{
	(void)transient;
	group_done(arg, ctx);
	if (result) {
		print_result(arg, result, status);
	} else { /* to be left for a retry: run has none */
		fprintf(stderr, "error: a job ended without a result\n");
		((run_state *)arg)->any_error = 1;
	}
}

static const char run_synopsis[] =
    "usage: replayq run --repo-root=DIR [--jobs=N] [--memory-limit=MB] [--alternates=root|any]\n"
    "                   [--repo-scope=repo|root] [--consolidate=auto|off]\n"
    "                   [--log-level=debug|info|warn|error]\n"
    "                   [--sign-key=KEY] [--sign-format=ssh|openpgp|x509] [--sign-agent] "
    "[FILE|-]\n";

static const char run_about[] =
    "Runs JSON-lines jobs from FILE (or stdin) and prints one result per line.\n";

/* The command line of run: 0, or -1 with the exit status in *status. */
static int run_parse(int argc, char **argv, rq_pool_cli *c, const char **file, int *status)
{
	const rq_opt opts[] = {RQ_POOL_CLI_OPTIONS(c), RQ_OPT_END};
	const rq_opt_spec spec = {.usage = run_synopsis, .opts = opts, .footer = run_about};

	return rq_opt_parse_at_most(&spec, argc, argv, 1, "more than one input file", file, status);
}

/* One line of input: its job started (once a child is free), or its error
 * result printed. */
static void run_line(rq_evloop *loop, rq_pool *pool, run_state *c, char *line, size_t len,
		     unsigned long lineno)
{
	char idbuf[RQ_JOB_ID_MAX + 1], fallback[64], *group = NULL;
	rq_job job;
	rq_error err;
	int r;

	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len == 0)
		return;
	if (rq_job_parse(line, len, &job, idbuf, &err) < 0) {
		snprintf(fallback, sizeof(fallback), "line-%lu", lineno);
		print_error_result(c, idbuf[0] ? idbuf : fallback, NULL, &err);
		return;
	}
	while (job.group && group_running(c, job.group)) /* its group's job before it */
		rq_evloop_turn(loop, 100);
	if (job.group && !(group = group_start(c, job.group))) {
		rq_error_set(&err, RQ_E_NOMEM, "out of memory");
		print_error_result(c, job.id, job.repo, &err);
		rq_job_free(&job);
		return;
	}
	for (;;) {
		while (rq_pool_idle_count(pool) == 0)
			rq_evloop_turn(loop, 100);
		r = rq_pool_spawn(pool, &job, rq_job_default_time(&job, NULL), 1, NULL, 0, group,
				  &err);
		/* no descriptor or process now: held until a child ends */
		if (r != RQ_POOL_BUSY || rq_pool_running(pool) == 0)
			break;
		rq_evloop_turn(loop, 100);
	}
	if (r != 0) {
		group_done(c, group);
		print_error_result(c, job.id, job.repo, &err);
	}
	rq_job_free(&job);
}

/* Run every job of in (until a stop is requested), then wait for the
 * last: the exit status. */
static int run_jobs(rq_evloop *loop, rq_pool *pool, run_state *c, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;

	rq_stop_catch();
	while (!rq_stop_requested() && (len = getline(&line, &cap, in)) >= 0)
		run_line(loop, pool, c, line, (size_t)len, ++lineno);
	while (rq_pool_running(pool))
		rq_evloop_turn(loop, 100);
	free(line);
	for (size_t i = 0; i < c->ngroups; i++)
		free(c->groups[i]);
	free(c->groups);
	return c->any_error ? 2 : c->any_conflict ? 1 : 0;
}

int cmd_run(int argc, char **argv)
{
	rq_pool_cli c;
	run_state st = {0};
	rq_pool_opts hooks = {.done = on_run_done, .done_arg = &st};
	const char *file;
	rq_pool *pool = NULL;
	FILE *in = stdin;
	int status;

	memset(&c, 0, sizeof(c));
	if (run_parse(argc, argv, &c, &file, &status) < 0)
		return status;
	if ((status = rq_pool_cli_log(&c, "warn", "local")) != 0)
		return status;
	if (!(hooks.loop = rq_evloop_new())) {
		fprintf(stderr, "fatal: out of memory\n");
		return 128;
	}
	if ((status = rq_pool_cli_open(&c, "local", &hooks, RUN_OWN_FDS, &pool)) != 0 ||
	    (file && strcmp(file, "-") && !(in = fopen(file, "r")))) {
		if (!status)
			fprintf(stderr, "fatal: cannot open '%s': %s\n", file, strerror(errno));
		rq_pool_free(pool);
		rq_evloop_free(hooks.loop);
		return status ? status : 128;
	}
	status = run_jobs(hooks.loop, pool, &st, in);
	if (in != stdin)
		fclose(in);
	rq_pool_free(pool);
	rq_evloop_free(hooks.loop);
	return status;
}
