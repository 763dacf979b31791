/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_conn: the state of one Redis client (internal to queue/: the
 * API is rq_redis.h) and its connection to one node: opened with the
 * timeouts, AUTH and SELECT, dropped when it breaks, made again with
 * backoff within the retry budget.
 *
 *   rq_redis.c        the API: connect, commands (whole or in two halves),
 *                     the WAIT for replicas; a plain URL goes to its one
 *                     server, the others through rq_redis_ha
 *   rq_redis_conn.c   one connection to one node, and the backoff
 *   rq_redis_ha.c     redis+cluster and redis+sentinel: the slot map, the
 *                     master the sentinels name, the routing of each
 *                     command and its redirections
 */
#ifndef RQ_REDIS_CONN_H
#define RQ_REDIS_CONN_H

#include <hiredis/hiredis.h>
#include <string.h>
#include <sys/time.h>

#include "rq_clock.h"
#include "rq_cluster.h"
#include "rq_redis.h"

/* The command rq_redis_send wrote, kept for a resend after a redirection. */
typedef struct rq_redis_conn_sent {
	int argc;
	char **argv;
	size_t *lens;
	int slot; /* its slot; -1 none */
	int hops; /* redirections followed */
	int skip; /* replies to drop first (ASKING's) */
} rq_redis_conn_sent;

struct rq_redis {
	rq_redis_url url;
	rq_redis_opts opts;
	redisContext *c;
	unsigned seed;
	unsigned reconnects;
	/* redis+cluster and redis+sentinel */
	rq_redis_addr at; /* the node c is connected to */
	int replicas;	  /* its replicas, for WAIT */
	int stale;	  /* ask for the map or the master again before routing */
	int lost;	  /* a connection broke: the next one is a reconnect */
	unsigned redirects, unreplicated;
	long long wait_again_at;  /* after a WAIT that timed out: no WAIT before then */
	long long role_at;	  /* when its replicas were counted */
	long long first_deadline; /* rq_redis_connect's budget, while it runs; else -1 */
	rq_redis_conn_sent sent;
	rq_cluster map; /* redis+cluster */
};

static inline int rq_redis_conn_is_ha(const rq_redis *r)
{
	return r->url.kind == RQ_REDIS_CLUSTER || r->url.kind == RQ_REDIS_SENTINEL;
}

static inline int rq_redis_conn_has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static inline struct timeval rq_redis_conn_tv(int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	return tv;
}

static inline long long rq_redis_conn_deadline(const rq_redis *r)
{
	return r->opts.retry_ms_max < 0 ? -1 : rq_clock_mono_ms() + r->opts.retry_ms_max;
}

/* The error of a script that met a key of a slot being migrated (it
 * wrote nothing before: the queue's scripts read such keys first). */
extern const char rq_redis_conn_non_local_key[];

/* Close the connection (r->c), if any; replies to skip are forgotten. */
void rq_redis_conn_drop(rq_redis *r);
/* The connection broke: drop it; the next one is a reconnect, after the
 * map or the master is asked for again. */
void rq_redis_conn_lost(rq_redis *r);

/*
 * One connection attempt to a (NULL: the URL's unix socket) with the
 * timeouts, then, with creds, AUTH and SELECT: 0 with *out set, -1 (worth
 * retrying) or -2, err set. A node of a cluster or behind Sentinel is
 * named in the messages.
 */
int rq_redis_conn_open(const rq_redis *r, const rq_redis_addr *a, int creds, redisContext **out,
		       rq_error *err);

/* The pause before another try, never past the budget's deadline (-1:
 * none). */
void rq_redis_conn_backoff(rq_redis *r, int attempt, long long deadline);

/* Connect to the URL's server, retrying within the budget: 0, -1, or -2
 * (no retry can help). */
int rq_redis_conn_ensure(rq_redis *r, long long deadline, rq_error *err);

#endif
