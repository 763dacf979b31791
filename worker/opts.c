/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * opts: option helpers and queue connection for the subcommands.
 */
#include "opts.h"

#include <errno.h>
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

char *rq_redis_arg_take(char *arg, int *had_password)
{
	char *copy, *p, *end, *at = NULL, *colon;

	*had_password = 0;
	if (!arg || !(copy = strdup(arg)))
		return NULL;
	if (strncmp(arg, "redis://", 8) != 0)
		return copy;
	p = arg + 8;
	end = strchr(p, '/');
	if (!end)
		end = p + strlen(p);
	for (char *c = p; c < end; c++)
		if (*c == '@')
			at = c;
	colon = at ? memchr(p, ':', (size_t)(at - p)) : NULL;
	if (colon && colon + 1 < at) {
		*had_password = 1;
		memset(colon + 1, '*', (size_t)(at - colon - 1));
	}
	return copy;
}

/* The password from REPLAYQ_REDIS_PASSWORD_FILE (its first line) or
 * REPLAYQ_REDIS_PASSWORD: 1 found, 0 none, -1 the file cannot be read. */
static int env_password(char *buf, size_t size, rq_error *err)
{
	const char *file = getenv("REPLAYQ_REDIS_PASSWORD_FILE");
	const char *pw = getenv("REPLAYQ_REDIS_PASSWORD");
	FILE *f;
	size_t n;

	if (!file || !*file) {
		if (!pw || !*pw)
			return 0;
		snprintf(buf, size, "%s", pw);
		return 1;
	}
	if (!(f = fopen(file, "r")))
		return rq_error_set(err, RQ_E_USAGE,
				    "cannot read REPLAYQ_REDIS_PASSWORD_FILE '%s': %s", file,
				    strerror(errno));
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0])
		return rq_error_set(err, RQ_E_USAGE, "REPLAYQ_REDIS_PASSWORD_FILE '%s' is empty",
				    file);
	return 1;
}

int rq_open_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		  rq_error *err)
{
	rq_redis_url u;
	rq_redis_opts o = {0};
	char pw[sizeof(u.password)];
	int got;

	*r = NULL;
	*q = NULL;
	if (!url)
		url = rq_env_or("REPLAYQ_REDIS_URL", "redis://127.0.0.1:6379/0");
	if (!queue)
		queue = rq_env_or("REPLAYQ_QUEUE", "default");
	if (rq_redis_url_parse(url, &u, err) < 0)
		return -1;
	if ((got = env_password(pw, sizeof(pw), err)) < 0)
		return -1;
	if (got)
		memcpy(u.password, pw, sizeof(pw));
	memset(pw, 0, sizeof(pw));
	o.retry_ms_max = retry_ms;
	if (rq_redis_connect(r, &u, &o, err) < 0) {
		memset(u.password, 0, sizeof(u.password));
		return -1;
	}
	memset(u.password, 0, sizeof(u.password));
	if (rq_queue_open(q, *r, queue, NULL, err) < 0) {
		rq_redis_free(*r);
		*r = NULL;
		return -1;
	}
	return 0;
}
