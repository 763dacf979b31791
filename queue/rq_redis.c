/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis: hiredis connection handling, reconnects and backoff.
 */
#include "rq_redis.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rq_redis {
	rq_redis_url url;
	rq_redis_opts opts;
	redisContext *c;
	unsigned seed;
	unsigned reconnects;
};

static int copy_part(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

static int parse_int(const char *s, size_t n, int min, int max, int *out)
{
	int v = 0;
	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copy src[0..n) into dst, decoding %XX: -1 too long, -2 a bad escape or a
 * NUL byte. */
static int copy_decoded(char *dst, size_t size, const char *src, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)src[i], hi, lo;
		if (c == '%') {
			if (i + 2 >= n || (hi = hexval(src[i + 1])) < 0 ||
			    (lo = hexval(src[i + 2])) < 0)
				return -2;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return -2;
		if (k + 1 >= size)
			return -1;
		dst[k++] = (char)c;
	}
	dst[k] = '\0';
	return 0;
}

/* user[:password] before the last '@' of the authority, percent-decoded. */
static int parse_credentials(const char *p, size_t n, rq_redis_url *u, rq_error *err)
{
	const char *colon = memchr(p, ':', n);
	int r = copy_decoded(u->user, sizeof(u->user), p, colon ? (size_t)(colon - p) : n);

	if (r == 0 && colon)
		r = copy_decoded(u->password, sizeof(u->password), colon + 1,
				 n - (size_t)(colon - p) - 1);
	if (r == -1)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: credentials too long");
	if (r < 0)
		return rq_error_set(err, RQ_E_USAGE,
				    "bad Redis URL: bad %%-escape in the credentials (write a "
				    "'%%' as %%25, '@' as %%40, '/' as %%2F)");
	return 0;
}

static int parse_unix(const char *url, rq_redis_url *u, rq_error *err)
{
	const char *q = strchr(url + 7, '?');
	size_t n = q ? (size_t)(q - (url + 7)) : strlen(url + 7);

	u->is_unix = 1;
	if (n == 0 || url[7] != '/' || copy_part(u->path, sizeof(u->path), url + 7, n) < 0)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: expected unix:///path");
	if (q &&
	    (strncmp(q, "?db=", 4) != 0 || parse_int(q + 4, strlen(q + 4), 0, 100000, &u->db) < 0))
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: expected ?db=N");
	return 0;
}

/* host[:port] or [ipv6][:port] in p..host_end */
static int parse_host(const char *p, const char *host_end, rq_redis_url *u, rq_error *err)
{
	if (*p == '[') { /* [ipv6]:port */
		const char *rb = memchr(p, ']', (size_t)(host_end - p));
		if (!rb || copy_part(u->host, sizeof(u->host), p + 1, (size_t)(rb - p - 1)) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(host_end - p));
		const char *he = colon ? colon : host_end;
		if (copy_part(u->host, sizeof(u->host), p, (size_t)(he - p)) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
		p = he;
	}
	if (!u->host[0])
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: no host");
	if (*p == ':') {
		if (parse_int(p + 1, (size_t)(host_end - p - 1), 1, 65535, &u->port) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: port");
	} else if (p != host_end) {
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
	}
	return 0;
}

int rq_redis_url_parse(const char *url, rq_redis_url *u, rq_error *err)
{
	const char *p, *at = NULL, *slash, *host_end;

	memset(u, 0, sizeof(*u));
	u->port = 6379;
	if (!url || !*url)
		return rq_error_set(err, RQ_E_USAGE, "empty Redis URL");
	if (!strncmp(url, "unix://", 7))
		return parse_unix(url, u, err);
	if (strncmp(url, "redis://", 8) != 0)
		return rq_error_set(err, RQ_E_USAGE,
				    "bad Redis URL: redis://[user:password@]host:port/db or "
				    "unix:///path");
	p = url + 8;
	slash = strchr(p, '/');
	host_end = slash ? slash : p + strlen(p);
	for (const char *c = p; c < host_end; c++)
		if (*c == '@')
			at = c; /* the last one: a raw '@' in a password still works */
	if (at) {
		if (parse_credentials(p, (size_t)(at - p), u, err) < 0)
			return -1;
		p = at + 1;
	}
	if (parse_host(p, host_end, u, err) < 0)
		return -1;
	if (slash && slash[1] && parse_int(slash + 1, strlen(slash + 1), 0, 100000, &u->db) < 0)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: database number");
	return 0;
}

void rq_redis_url_display(const rq_redis_url *u, char *buf, size_t size)
{
	if (u->is_unix)
		snprintf(buf, size, "unix://%s?db=%d", u->path, u->db);
	else {
		int v6 = strchr(u->host, ':') != NULL;
		if (u->password[0])
			snprintf(buf, size, "redis://%s:***@%s%s%s:%d/%d", u->user, v6 ? "[" : "",
				 u->host, v6 ? "]" : "", u->port, u->db);
		else if (u->user[0])
			snprintf(buf, size, "redis://%s@%s%s%s:%d/%d", u->user, v6 ? "[" : "",
				 u->host, v6 ? "]" : "", u->port, u->db);
		else
			snprintf(buf, size, "redis://%s%s%s:%d/%d", v6 ? "[" : "", u->host,
				 v6 ? "]" : "", u->port, u->db);
	}
}

static struct timeval tv_ms(int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	return tv;
}

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop(rq_redis *r)
{
	if (r->c) {
		redisFree(r->c);
		r->c = NULL;
	}
}

/* The reply of a command that sets the connection up (AUTH, SELECT): 0,
 * or -2 (not worth retrying) with err "<what>: <why>" and the connection
 * dropped. Frees the reply. */
static int setup_reply(rq_redis *r, redisReply *rep, const char *what, rq_error *err)
{
	if (rep && rep->type != REDIS_REPLY_ERROR) {
		freeReplyObject(rep);
		return 0;
	}
	rq_error_set(err, RQ_E_REDIS, "%s: %s", what, rep ? rep->str : r->c->errstr);
	if (rep)
		freeReplyObject(rep);
	drop(r);
	return -2;
}

/* AUTH and SELECT on a new connection: 0, or -2 (see setup_reply). A user
 * without a password still authenticates as that user (an ACL user with
 * nopass; any other gets a clear WRONGPASS). */
static int set_up(rq_redis *r, rq_error *err)
{
	char what[64];
	redisReply *rep;

	if (r->url.password[0] || r->url.user[0]) {
		if (r->url.user[0])
			rep = redisCommand(r->c, "AUTH %s %s", r->url.user, r->url.password);
		else
			rep = redisCommand(r->c, "AUTH %s", r->url.password);
		if (setup_reply(r, rep, "Redis authentication failed", err) < 0)
			return -2;
	}
	if (!r->url.db)
		return 0;
	snprintf(what, sizeof(what), "Redis SELECT %d failed", r->url.db);
	return setup_reply(r, redisCommand(r->c, "SELECT %d", r->url.db), what, err);
}

/* One connection attempt, with AUTH and SELECT: 0, -1 (worth retrying)
 * or -2, err set. */
static int try_connect(rq_redis *r, rq_error *err)
{
	struct timeval tv = tv_ms(r->opts.connect_timeout_ms);

	drop(r);
	if (r->url.is_unix)
		r->c = redisConnectUnixWithTimeout(r->url.path, tv);
	else
		r->c = redisConnectWithTimeout(r->url.host, r->url.port, tv);
	if (!r->c)
		return rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: out of memory");
	if (r->c->err) {
		rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: %s", r->c->errstr);
		drop(r);
		return -1;
	}
	redisSetTimeout(r->c, tv_ms(r->opts.command_timeout_ms));
	return set_up(r, err);
}

static void backoff_sleep(rq_redis *r, int attempt)
{
	long ms = 50L << (attempt < 10 ? attempt : 10);
	if (ms > r->opts.backoff_max_ms)
		ms = r->opts.backoff_max_ms;
	ms = ms / 2 + (long)(rand_r(&r->seed) % (unsigned)(ms / 2 + 1)); /* jitter */
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Connect, retrying within the budget. */
static int ensure(rq_redis *r, long long deadline, rq_error *err)
{
	for (int attempt = 0;; attempt++) {
		int rc;
		if (r->c)
			return 0;
		rc = try_connect(r, err);
		if (rc == 0) {
			if (attempt > 0 || r->reconnects)
				r->reconnects++;
			return 0;
		}
		if (rc == -2)
			return -1;
		if (deadline >= 0 && mono_ms() >= deadline)
			return -1;
		backoff_sleep(r, attempt);
	}
}

int rq_redis_connect(rq_redis **out, const rq_redis_url *url, const rq_redis_opts *opts,
		     rq_error *err)
{
	rq_redis *r = calloc(1, sizeof(*r));
	long long deadline;

	*out = NULL;
	if (!r)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	r->url = *url;
	r->opts.connect_timeout_ms = 2000;
	r->opts.command_timeout_ms = 5000;
	r->opts.retry_ms_max = 30000;
	r->opts.backoff_max_ms = 5000;
	if (opts) {
		if (opts->connect_timeout_ms > 0)
			r->opts.connect_timeout_ms = opts->connect_timeout_ms;
		if (opts->command_timeout_ms > 0)
			r->opts.command_timeout_ms = opts->command_timeout_ms;
		if (opts->retry_ms_max != 0)
			r->opts.retry_ms_max = opts->retry_ms_max;
		if (opts->backoff_max_ms > 0)
			r->opts.backoff_max_ms = opts->backoff_max_ms;
	}
	r->seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	deadline = r->opts.retry_ms_max < 0 ? -1 : mono_ms() + r->opts.retry_ms_max;
	if (ensure(r, deadline, err) < 0) {
		rq_redis_free(r);
		return -1;
	}
	r->reconnects = 0;
	*out = r;
	return 0;
}

void rq_redis_free(rq_redis *r)
{
	if (!r)
		return;
	drop(r);
	memset(r->url.password, 0, sizeof(r->url.password));
	free(r);
}

void rq_redis_set_retry(rq_redis *r, int retry_ms_max)
{
	r->opts.retry_ms_max = retry_ms_max;
}

unsigned rq_redis_reconnects(const rq_redis *r)
{
	return r->reconnects;
}

redisReply *rq_redis_cmd(rq_redis *r, int block_ms, rq_error *err, int argc, const char **argv,
			 const size_t *lens)
{
	long long deadline = r->opts.retry_ms_max < 0 ? -1 : mono_ms() + r->opts.retry_ms_max;

	for (int attempt = 0;; attempt++) {
		redisReply *rep;
		if (ensure(r, deadline, err) < 0)
			return NULL;
		if (block_ms > 0)
			redisSetTimeout(r->c, tv_ms(r->opts.command_timeout_ms + block_ms));
		rep = redisCommandArgv(r->c, argc, argv, lens);
		if (block_ms > 0 && r->c && !r->c->err)
			redisSetTimeout(r->c, tv_ms(r->opts.command_timeout_ms));
		if (rep)
			return rep;
		rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0],
			     r->c ? r->c->errstr : "no connection");
		drop(r);
		if (deadline >= 0 && mono_ms() >= deadline)
			return NULL;
		backoff_sleep(r, attempt);
	}
}

int rq_redis_send(rq_redis *r, rq_error *err, int argc, const char **argv)
{
	long long deadline = r->opts.retry_ms_max < 0 ? -1 : mono_ms() + r->opts.retry_ms_max;
	int done = 0;

	if (ensure(r, deadline, err) < 0)
		return -1;
	if (redisAppendCommandArgv(r->c, argc, argv, NULL) != REDIS_OK)
		goto broken;
	while (!done)
		if (redisBufferWrite(r->c, &done) != REDIS_OK)
			goto broken;
	return 0;
broken:
	rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0], r->c->errstr);
	drop(r);
	return -1;
}

int rq_redis_fd(const rq_redis *r)
{
	return r->c ? r->c->fd : -1;
}

int rq_redis_recv(rq_redis *r, redisReply **reply, rq_error *err)
{
	void *rep = NULL;

	*reply = NULL;
	if (!r->c)
		return rq_error_set(err, RQ_E_REDIS, "Redis: no connection");
	if (redisBufferRead(r->c) != REDIS_OK || redisGetReplyFromReader(r->c, &rep) != REDIS_OK) {
		rq_error_set(err, RQ_E_REDIS, "Redis read failed: %s", r->c->errstr);
		drop(r);
		return -1;
	}
	*reply = rep;
	return rep ? 1 : 0;
}

int rq_redis_error_permanent(const char *msg)
{
	/* conditions of the server, not of the command: they pass */
	static const char *const transient[] = {
	    "LOADING", "BUSY",	 "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY",  "MOVED",
	    "ASK",     "NOAUTH", "NOPERM",   "MISCONF",	    "NOREPLICAS", "UNBLOCKED", NULL};
	size_t n = 0;

	if (!msg)
		return 0;
	while (msg[n] && msg[n] != ' ')
		n++;
	for (int i = 0; transient[i]; i++)
		if (strlen(transient[i]) == n && !strncmp(msg, transient[i], n))
			return 0;
	return 1;
}

void rq_redis_disconnect(rq_redis *r)
{
	drop(r);
}

redisReply *rq_redis_cmdv(rq_redis *r, int block_ms, rq_error *err, ...)
{
	const char *argv[64];
	int argc = 0;
	va_list ap;
	const char *s;

	va_start(ap, err);
	while ((s = va_arg(ap, const char *)) && argc < 64)
		argv[argc++] = s;
	va_end(ap);
	return rq_redis_cmd(r, block_ms, err, argc, argv, NULL);
}
