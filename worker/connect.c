/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * connect: a command's Redis connection and queue, from its flags and
 * the environment (see connect.h).
 */
#include "connect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An environment variable, or def when it is unset or empty. */
static const char *env_or(const char *var, const char *def)
{
	const char *v = getenv(var);
	return v && *v ? v : def;
}

char *rq_connect_url_arg(char *arg, int *had_password)
{
	char *copy, *p, *end, *at = NULL, *colon;

	*had_password = 0;
	if (!arg || !(copy = strdup(arg)))
		return NULL;
	if (!rq_redis_url_scheme_len(arg))
		return copy;
	/* the authority, as rq_redis_url_parse finds it */
	p = arg + rq_redis_url_scheme_len(arg);
	end = strncmp(arg, "redis://", 8) ? p + strcspn(p, "/?") : strchr(p, '/');
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

int rq_connect_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		     rq_error *err)
{
	rq_redis_url u;
	rq_redis_opts o = {0};
	char pw[sizeof(u.password)];
	int got, rc;

	*r = NULL;
	*q = NULL;
	if (!url)
		url = env_or("REPLAYQ_REDIS_URL", "redis://127.0.0.1:6379/0");
	if (!queue)
		queue = env_or("REPLAYQ_QUEUE", "default");
	if (rq_redis_url_parse(url, &u, err) < 0)
		return RQ_REDIS_PERMANENT;
	if ((got = env_password(pw, sizeof(pw), err)) < 0)
		return RQ_REDIS_PERMANENT;
	if (got)
		memcpy(u.password, pw, sizeof(pw));
	memset(pw, 0, sizeof(pw));
	o.retry_ms_max = retry_ms;
	rc = rq_redis_connect(r, &u, &o, err);
	memset(u.password, 0, sizeof(u.password));
	if (rc < 0)
		return rc;
	if (rq_queue_open(q, *r, queue, NULL, err) < 0) {
		rq_redis_free(*r);
		*r = NULL;
		/* a queue name that cannot work; out of memory may pass */
		return err->code == RQ_E_USAGE ? RQ_REDIS_PERMANENT : -1;
	}
	return 0;
}

int rq_connect_client(const char *url, const char *queue, const char *timeout, rq_redis **r,
		      rq_queue **q)
{
	long secs = RQ_CONNECT_TIMEOUT_S;
	rq_error err;
	int rc;

	*r = NULL;
	*q = NULL;
	if (rq_connect_timeout_check(timeout) != 0)
		return -1;
	if (timeout)
		rq_opt_number(timeout, 1, 3600, &secs);
	rc = rq_connect_queue(url, queue, (int)secs * 1000, r, q, &err);
	if (rc == RQ_REDIS_PERMANENT) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr,
			"fatal: %s (gave up after %ld s; wait longer with --connect-timeout or "
			"REPLAYQ_CONNECT_TIMEOUT)\n",
			err.msg, secs);
		return -1;
	}
	rq_redis_set_retry(*r, 10000);
	return 0;
}

int rq_connect_timeout_check(const char *timeout)
{
	long secs;

	if (!timeout || rq_opt_number(timeout, 1, 3600, &secs) == 0)
		return 0;
	fprintf(stderr, "error: --connect-timeout takes seconds from 1 to 3600\n");
	return RQ_OPT_USAGE_STATUS;
}
