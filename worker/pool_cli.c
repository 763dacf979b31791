/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_cli: the pool's options checked and made into a pool (see
 * pool_cli.h).
 */
#include "pool_cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "rq_confine.h"

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

/* The descriptors open now (/proc/self/fd; 64 when it cannot be read). */
static long fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = -1; /* (the listing's own) */

	if (!d)
		return 64;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2; /* "." and ".." */
}

/* How many jobs fit in limit descriptors, with used taken already. */
static long jobs_fitting(long used, rlim_t limit)
{
	long n = 0;

	if (limit < RQ_POOL_CHILD_FDS)
		return 0;
	while (n < 256 && (rlim_t)(used + rq_pool_fds((int)n + 1)) <= limit)
		n++;
	return n;
}

/*
 * Size the pool to the descriptors the process may open (RLIMIT_NOFILE):
 * those open now, reserve for the command's own use, the pool's for *jobs
 * children (rq_pool_fds), and enough for each child (RQ_POOL_CHILD_FDS).
 * The soft limit is raised to fit when the hard one allows; else a
 * --jobs given is refused (129, said: how many fit), and the default is
 * lowered to what fits.
 */
static int fit_descriptors(const rq_pool_cli *c, int reserve, long *jobs)
{
	struct rlimit rl;
	long used = fds_open() + reserve, fit;
	rlim_t need = (rlim_t)(used + rq_pool_fds((int)*jobs));

	if (need < RQ_POOL_CHILD_FDS)
		need = RQ_POOL_CHILD_FDS;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	fit = jobs_fitting(used, rl.rlim_cur);
	if (!c->jobs && fit > 0) {
		*jobs = fit;
		return 0;
	}
	if (fit)
		fprintf(
		    stderr,
		    "error: --jobs=%ld needs %llu file descriptors, more than the limit of %llu "
		    "(ulimit -n): at most %ld jobs fit\n",
		    *jobs, (unsigned long long)need, (unsigned long long)rl.rlim_cur, fit);
	else
		fprintf(stderr,
			"error: no job fits in the limit of %llu file descriptors (ulimit -n): "
			"%ld are the command's own, each job needs %d more and its process %d\n",
			(unsigned long long)rl.rlim_cur, used, rq_pool_fds(1), RQ_POOL_CHILD_FDS);
	return RQ_OPT_USAGE_STATUS;
}

int rq_pool_cli_open(const rq_pool_cli *c, const char *worker, const rq_pool_opts *hooks,
		     int reserve, rq_pool **pool)
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
	if (fit_descriptors(c, reserve, &jobs) != 0)
		return RQ_OPT_USAGE_STATUS;
	if (c->alternates && strcmp(c->alternates, "root") && strcmp(c->alternates, "any")) {
		fprintf(stderr, "error: --alternates must be root or any, not '%s'\n",
			c->alternates);
		return RQ_OPT_USAGE_STATUS;
	}
	if (c->consolidate && strcmp(c->consolidate, "auto") && strcmp(c->consolidate, "off")) {
		fprintf(stderr, "error: --consolidate must be auto or off, not '%s'\n",
			c->consolidate);
		return RQ_OPT_USAGE_STATUS;
	}
	if (c->repo_scope && strcmp(c->repo_scope, "repo") && strcmp(c->repo_scope, "root")) {
		fprintf(stderr, "error: --repo-scope must be repo or root, not '%s'\n",
			c->repo_scope);
		return RQ_OPT_USAGE_STATUS;
	}
	po = *hooks;
	po.no_consolidate = c->consolidate && !strcmp(c->consolidate, "off");
	if ((status = rq_sign_cli_pool_open(&c->sign, &po.signer)) != 0)
		return status; /* said */
	po.alternates_anywhere = c->alternates && !strcmp(c->alternates, "any");
	po.confine_flags =
	    c->repo_scope && !strcmp(c->repo_scope, "root") ? RQ_CONFINE_ROOT_SCOPE : 0;
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
