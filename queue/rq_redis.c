/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis: the client's API: connect, run a command (whole or in two
 * halves), WAIT for replicas; a redis+cluster or redis+sentinel URL is
 * routed by rq_redis_ha, each connection made by rq_redis_conn (see
 * rq_redis.h).
 */
#include "rq_redis.h"

#include "rq_redis_conn.h"
#include "rq_redis_ha.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* After a WAIT that timed out, writes do not wait for this long: a
 * replica that is gone must not slow every write by the timeout. */
#define WAIT_PAUSE_MS 10000

/* How often the replicas of the connected master are counted again (ROLE),
 * so that a replica that joins after a failover is waited for. */
#define ROLE_EVERY_MS 10000

int rq_redis_wait_replicas(rq_redis *r, rq_error *err)
{
	redisReply *rep;
	int want, rc = 0;

	if (!rq_redis_conn_is_ha(r) || !r->c || r->url.wait_replicas <= 0)
		return 0;
	if (rq_clock_mono_ms() >= r->role_at + ROLE_EVERY_MS && rq_redis_ha_role(r, err) < 0) {
		rq_redis_conn_lost(r);
		return -1;
	}
	want = r->url.wait_replicas < r->replicas ? r->url.wait_replicas : r->replicas;
	if (want <= 0)
		return 0;
	if (r->wait_again_at && rq_clock_mono_ms() < r->wait_again_at) {
		r->unreplicated++; /* not waited for: a replica did not answer lately */
		return 1;
	}
	rep = redisCommand(r->c, "WAIT %d %d", want, r->url.wait_timeout_ms);
	if (!rep) {
		rq_error_set(err, RQ_E_REDIS, "Redis command WAIT failed: %s", r->c->errstr);
		rq_redis_conn_lost(r);
		return -1;
	}
	r->wait_again_at = 0;
	if (rep->type == REDIS_REPLY_INTEGER && rep->integer < want) {
		r->unreplicated++;
		r->wait_again_at = rq_clock_mono_ms() + WAIT_PAUSE_MS;
		rc = 1;
	}
	freeReplyObject(rep); /* an error (not allowed WAIT): nothing to wait for */
	return rc;
}

unsigned rq_redis_redirects(const rq_redis *r)
{
	return r->redirects;
}

unsigned rq_redis_unreplicated(const rq_redis *r)
{
	return r->unreplicated;
}

int rq_redis_connect(rq_redis **out, const rq_redis_url *url, const rq_redis_opts *opts,
		     rq_error *err)
{
	rq_redis *r = calloc(1, sizeof(*r));
	long long deadline;
	int rc;

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
	rq_cluster_init(&r->map);
	r->first_deadline = deadline = rq_redis_conn_deadline(r);
	rc = rq_redis_conn_is_ha(r) ? rq_redis_ha_connect(r, deadline, err)
				    : rq_redis_conn_ensure(r, deadline, err);
	r->first_deadline = -1;
	if (rc < 0) {
		rq_redis_free(r);
		return rc == -2 ? RQ_REDIS_PERMANENT : -1;
	}
	r->reconnects = 0;
	r->redirects = 0;
	*out = r;
	return 0;
}

void rq_redis_free(rq_redis *r)
{
	if (!r)
		return;
	rq_redis_conn_drop(r);
	rq_redis_ha_free_sent(r);
	rq_cluster_free(&r->map);
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
	long long deadline = rq_redis_conn_deadline(r);

	if (rq_redis_conn_is_ha(r))
		return rq_redis_ha_cmd(r, block_ms, err, argc, argv, lens);
	for (int attempt = 0;; attempt++) {
		redisReply *rep;
		if (rq_redis_conn_ensure(r, deadline, err) < 0)
			return NULL;
		if (block_ms > 0)
			redisSetTimeout(r->c,
					rq_redis_conn_tv(r->opts.command_timeout_ms + block_ms));
		rep = redisCommandArgv(r->c, argc, argv, lens);
		if (block_ms > 0 && r->c && !r->c->err)
			redisSetTimeout(r->c, rq_redis_conn_tv(r->opts.command_timeout_ms));
		if (rep)
			return rep;
		rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0],
			     r->c ? r->c->errstr : "no connection");
		rq_redis_conn_drop(r);
		r->lost = 1; /* the next connection is a reconnect */
		if (deadline >= 0 && rq_clock_mono_ms() >= deadline)
			return NULL;
		rq_redis_conn_backoff(r, attempt, deadline);
	}
}

int rq_redis_send(rq_redis *r, rq_error *err, int argc, const char **argv)
{
	long long deadline = rq_redis_conn_deadline(r);
	int done = 0;

	if (rq_redis_conn_is_ha(r)) {
		if (rq_redis_ha_keep_sent(r, argc, argv, err) < 0)
			return -1;
		return rq_redis_ha_write(r, NULL, err);
	}
	if (rq_redis_conn_ensure(r, deadline, err) < 0)
		return -1;
	if (redisAppendCommandArgv(r->c, argc, argv, NULL) != REDIS_OK)
		goto broken;
	while (!done)
		if (redisBufferWrite(r->c, &done) != REDIS_OK)
			goto broken;
	return 0;
broken:
	rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0], r->c->errstr);
	rq_redis_conn_drop(r);
	r->lost = 1;
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
	if (rq_redis_conn_is_ha(r))
		return rq_redis_ha_recv(r, reply, err);
	if (redisBufferRead(r->c) != REDIS_OK || redisGetReplyFromReader(r->c, &rep) != REDIS_OK) {
		rq_error_set(err, RQ_E_REDIS, "Redis read failed: %s", r->c->errstr);
		rq_redis_conn_drop(r);
		r->lost = 1;
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

	if (!msg || rq_redis_conn_has_prefix(msg, rq_redis_conn_non_local_key))
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
	rq_redis_conn_drop(r);
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
