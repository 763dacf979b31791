/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_conn: one hiredis connection to one node, with AUTH and
 * SELECT; reconnects with backoff and jitter (see rq_redis_conn.h).
 */
#include "rq_redis_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The error of a script that met a key of a slot being migrated (it
 * wrote nothing before: the queue's scripts read such keys first). */
const char rq_redis_conn_non_local_key[] = "ERR Script attempted to access a non local key";

void rq_redis_conn_drop(rq_redis *r)
{
	if (r->c) {
		redisFree(r->c);
		r->c = NULL;
	}
	r->sent.skip = 0;
}

/* The connection broke: drop it; the next one is a reconnect, after the
 * map or the master is asked for again. */
void rq_redis_conn_lost(rq_redis *r)
{
	rq_redis_conn_drop(r);
	r->lost = 1;
	r->stale = 1;
}

/* An error AUTH or SELECT may not get again: the server loading, busy or
 * full of clients. Any other (a refused password or user, a database out
 * of range) is the URL's. */
static int setup_passes(const char *msg)
{
	static const char *const passing[] = {"LOADING ", "BUSY ", "MASTERDOWN ",
					      "ERR max number of clients", NULL};

	for (int i = 0; passing[i]; i++)
		if (rq_redis_conn_has_prefix(msg, passing[i]))
			return 1;
	return 0;
}

/* The reply of a command that sets the connection up (AUTH, SELECT): 0,
 * -1 (no reply, or an error that passes: retry) or -2 (not worth
 * retrying), with err "<what>: <why>". Frees the reply. */
static int setup_reply(redisContext *c, redisReply *rep, const char *what, rq_error *err)
{
	int rc;

	if (rep && rep->type != REDIS_REPLY_ERROR) {
		freeReplyObject(rep);
		return 0;
	}
	rq_error_set(err, RQ_E_REDIS, "%s: %s", what, rep ? rep->str : c->errstr);
	rc = !rep || setup_passes(rep->str) ? -1 : -2;
	if (rep)
		freeReplyObject(rep);
	return rc;
}

/* AUTH and SELECT on a new connection: 0, or -2 (see setup_reply). A user
 * without a password still authenticates as that user (an ACL user with
 * nopass; any other gets a clear WRONGPASS). */
static int set_up(const rq_redis *r, redisContext *c, rq_error *err)
{
	char what[64];
	redisReply *rep;

	if (r->url.password[0] || r->url.user[0]) {
		if (r->url.user[0])
			rep = redisCommand(c, "AUTH %s %s", r->url.user, r->url.password);
		else
			rep = redisCommand(c, "AUTH %s", r->url.password);
		if (setup_reply(c, rep, "Redis authentication failed", err) < 0)
			return -2;
	}
	if (!r->url.db)
		return 0;
	snprintf(what, sizeof(what), "Redis SELECT %d failed", r->url.db);
	return setup_reply(c, redisCommand(c, "SELECT %d", r->url.db), what, err);
}

/* How long one connection attempt may take: the connect timeout, cut to
 * what is left of the first connection's budget (at least 50 ms). */
static int connect_ms(const rq_redis *r)
{
	long long left = r->first_deadline - rq_clock_mono_ms();

	if (r->first_deadline < 0 || left >= r->opts.connect_timeout_ms)
		return r->opts.connect_timeout_ms;
	return left > 50 ? (int)left : 50;
}

/*
 * One connection attempt to a (NULL: the URL's unix socket) with the
 * timeouts, then, with creds, AUTH and SELECT: 0 with *out set, -1 (worth
 * retrying) or -2, err set. A node of a cluster or behind Sentinel is
 * named in the messages.
 */
int rq_redis_conn_open(const rq_redis *r, const rq_redis_addr *a, int creds, redisContext **out,
		       rq_error *err)
{
	struct timeval tv = rq_redis_conn_tv(connect_ms(r));
	redisContext *c = a ? redisConnectWithTimeout(a->host, a->port, tv)
			    : redisConnectUnixWithTimeout(r->url.path, tv);
	int rc;

	*out = NULL;
	if (!c)
		return rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: out of memory");
	if (c->err) {
		if (rq_redis_conn_is_ha(r))
			rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis at %s:%d: %s",
				     a->host, a->port, c->errstr);
		else
			rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: %s", c->errstr);
		redisFree(c);
		return -1;
	}
	redisSetTimeout(c, rq_redis_conn_tv(r->opts.command_timeout_ms));
	if (creds && (rc = set_up(r, c, err)) < 0) {
		redisFree(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* One connection attempt, with AUTH and SELECT: 0, -1 (worth retrying)
 * or -2, err set. */
static int try_connect(rq_redis *r, rq_error *err)
{
	rq_redis_addr a;

	rq_redis_conn_drop(r);
	if (r->url.is_unix)
		return rq_redis_conn_open(r, NULL, 1, &r->c, err);
	snprintf(a.host, sizeof(a.host), "%s", r->url.host);
	a.port = r->url.port;
	return rq_redis_conn_open(r, &a, 1, &r->c, err);
}

/* The pause before another try, never past the budget's deadline (-1:
 * none), so that a budget of 2 s gives up after 2 s, not after the
 * next pause. */
void rq_redis_conn_backoff(rq_redis *r, int attempt, long long deadline)
{
	long ms = 50L << (attempt < 10 ? attempt : 10);
	if (ms > r->opts.backoff_max_ms)
		ms = r->opts.backoff_max_ms;
	ms = ms / 2 + (long)(rand_r(&r->seed) % (unsigned)(ms / 2 + 1)); /* jitter */
	if (deadline >= 0 && deadline - rq_clock_mono_ms() < ms)
		ms = deadline > rq_clock_mono_ms() ? (long)(deadline - rq_clock_mono_ms()) : 0;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Connect, retrying within the budget: 0, -1, or -2 (no retry can
 * help). */
int rq_redis_conn_ensure(rq_redis *r, long long deadline, rq_error *err)
{
	for (int attempt = 0;; attempt++) {
		int rc;
		if (r->c)
			return 0;
		rc = try_connect(r, err);
		if (rc == 0) {
			/* a connection after a broken one, or after failed tries */
			if (attempt > 0 || r->reconnects || r->lost)
				r->reconnects++;
			r->lost = 0;
			return 0;
		}
		if (rc == -2)
			return -2;
		if (deadline >= 0 && rq_clock_mono_ms() >= deadline)
			return -1;
		rq_redis_conn_backoff(r, attempt, deadline);
	}
}
