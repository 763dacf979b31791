/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * opts: option helpers and queue connection for the subcommands.
 */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rq_opt_value(int argc, char **argv, int *i, const char *name, const char **out)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0)
		return 0;
	a += 2;
	if (a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*out = argv[++*i];
	return 1;
}

long long rq_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long rq_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *rq_env_or(const char *var, const char *def)
{
	const char *v = getenv(var);
	return v && *v ? v : def;
}

int rq_open_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		  rq_error *err)
{
	rq_redis_url u;
	rq_redis_opts o = {0};
	const char *pw = getenv("REPLAYQ_REDIS_PASSWORD");

	*r = NULL;
	*q = NULL;
	if (!url)
		url = rq_env_or("REPLAYQ_REDIS_URL", "redis://127.0.0.1:6379/0");
	if (!queue)
		queue = rq_env_or("REPLAYQ_QUEUE", "default");
	if (rq_redis_url_parse(url, &u, err) < 0)
		return -1;
	if (pw && *pw)
		snprintf(u.password, sizeof(u.password), "%s", pw);
	o.retry_ms_max = retry_ms;
	if (rq_redis_connect(r, &u, &o, err) < 0)
		return -1;
	if (rq_queue_open(q, *r, queue, NULL, err) < 0) {
		rq_redis_free(*r);
		*r = NULL;
		return -1;
	}
	return 0;
}
