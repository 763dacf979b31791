/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_cli: the pool's options checked and made into a pool (see
 * pool_cli.h).
 */
#include "pool_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int rq_pool_cli_number(const char *s, long def, long min, long max, const char *name, long *out)
{
	if (!s) {
		*out = def;
		return 0;
	}
	if (rq_opt_number(s, min, max, out) < 0) {
		fprintf(stderr, "error: --%s must be a number from %ld to %ld\n", name, min, max);
		return -1;
	}
	return 0;
}

int rq_pool_cli_log(const rq_pool_cli *c, const char *def, const char *worker)
{
	if (rq_log_setup(c->log_level ? c->log_level : def, worker) == 0)
		return 0;
	fprintf(stderr, "error: --log-level must be debug, info, warn or error, not '%s'\n",
		c->log_level);
	return RQ_OPT_USAGE_STATUS;
}

/* The number of cores, at most 64. */
static long default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (n > 64 ? 64 : n) : 1;
}

int rq_pool_cli_open(const rq_pool_cli *c, const char *worker, const rq_pool_opts *hooks,
		     rq_pool **pool)
{
	long jobs, mem;
	rq_pool_opts po;
	rq_error err;
	int status;

	if (!c->root) {
		fprintf(stderr, "error: --repo-root (or REPLAYQ_REPO_ROOT) is required\n");
		return RQ_OPT_USAGE_STATUS;
	}
	if (rq_pool_cli_number(c->jobs, default_jobs(), 1, 256, "jobs", &jobs) < 0 ||
	    rq_pool_cli_number(c->memory, 0, 0, 1 << 22, "memory-limit", &mem) < 0)
		return RQ_OPT_USAGE_STATUS;
	if (c->alternates && strcmp(c->alternates, "root") && strcmp(c->alternates, "any")) {
		fprintf(stderr, "error: --alternates must be root or any, not '%s'\n",
			c->alternates);
		return RQ_OPT_USAGE_STATUS;
	}
	memset(&po, 0, sizeof(po));
	if ((status = rq_sign_cli_pool_open(&c->sign, &po.signer)) != 0)
		return status; /* said */
	if (hooks) {
		po.intent = hooks->intent;
		po.owns = hooks->owns;
		po.intent_arg = hooks->intent_arg;
	}
	po.alternates_anywhere = c->alternates && !strcmp(c->alternates, "any");
	po.jobs = (int)jobs;
	po.repo_root = c->root;
	po.memory_limit = (uint64_t)mem * 1024 * 1024;
	po.worker = worker;
	if (rq_pool_new(pool, &po, &err) < 0) {
		rq_sign_free(po.signer);
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	return 0;
}
