/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_ha: the routing of commands to the master that serves them on
 * a Redis Cluster (its slot map) or behind Sentinel (the master it
 * names), with their redirections, whole or in two halves (see
 * rq_redis.h and rq_redis_ha.h).
 */
#include "rq_redis_ha.h"

#include "rq_slot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redirections one command follows at once before it pauses like a
 * transient error (a map that is still changing). */
#define MAX_HOPS 8

/* Where a reply sends a command next: nowhere (it is the answer), to the
 * node a redirection names, or to the same place after a pause. */
enum { HA_DONE, HA_REDIRECT, HA_ASK, HA_PAUSE };

static int past(long long deadline)
{
	return deadline >= 0 && rq_clock_mono_ms() >= deadline;
}

/* --- redis+cluster: the slot map --------------------------------------- */

/* Ask one node for the slot map: 0 loaded, -1, or -2 (refused for good:
 * credentials, or a server without cluster support). */
static int ask_slots(rq_redis *r, const rq_redis_addr *a, rq_error *err)
{
	redisContext *c;
	redisReply *rep;
	int rc = rq_redis_conn_open(r, a, 1, &c, err);

	if (rc < 0)
		return rc;
	rep = redisCommand(c, "CLUSTER SLOTS");
	if (!rep)
		rc = rq_error_set(err, RQ_E_REDIS, "CLUSTER SLOTS on %s:%d failed: %s", a->host,
				  a->port, c->errstr);
	else if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "cluster support disabled")) {
		rq_error_set(err, RQ_E_REDIS,
			     "CLUSTER SLOTS on %s:%d: %s: a redis+cluster:// URL needs a Redis "
			     "Cluster (redis:// for a single server)",
			     a->host, a->port, rep->str);
		rc = -2;
	} else if (rep->type == REDIS_REPLY_ERROR)
		rc = rq_error_set(err, RQ_E_REDIS, "CLUSTER SLOTS on %s:%d: %s", a->host, a->port,
				  rep->str);
	else
		rc = rq_cluster_load(&r->map, rep, a, err);
	if (rep)
		freeReplyObject(rep);
	redisFree(c);
	return rc;
}

/* Add a to the k addresses of v unless it is there. */
static void add_candidate(rq_redis_addr *v, size_t *k, const rq_redis_addr *a)
{
	for (size_t i = 0; i < *k; i++)
		if (rq_cluster_addr_eq(&v[i], a))
			return;
	v[(*k)++] = *a;
}

/* Load the slot map from the nodes of the last one (the node that just
 * failed last), then the seeds: 0, -1 or -2. */
static int cluster_discover(rq_redis *r, rq_error *err)
{
	size_t k = 0, n = r->map.nnodes + (size_t)r->url.nseeds + 1;
	rq_redis_addr *v = malloc(n * sizeof(*v));
	int rc = -1;

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < r->map.nnodes; i++)
		if (!r->lost || !rq_cluster_addr_eq(&r->map.nodes[i].addr, &r->at))
			add_candidate(v, &k, &r->map.nodes[i].addr);
	if (r->lost && r->at.port)
		add_candidate(v, &k, &r->at);
	for (int i = 0; i < r->url.nseeds; i++)
		add_candidate(v, &k, &r->url.seeds[i]);
	for (size_t i = 0; i < k && rc == -1; i++)
		rc = ask_slots(r, &v[i], err);
	free(v);
	if (rc == 0)
		r->stale = 0;
	return rc;
}

/* The master of a slot (-1: any node, the connected one first): 0, -1
 * or -2. */
static int cluster_target(rq_redis *r, int slot, rq_redis_addr *to, rq_error *err)
{
	const rq_cluster_node *n = NULL;
	int rc;

	if (slot < 0 && r->c && !r->stale) {
		*to = r->at;
		return 0;
	}
	if ((r->stale || !r->map.nnodes) && (rc = cluster_discover(r, err)) < 0)
		return rc;
	if (slot >= 0)
		n = rq_cluster_owner(&r->map, slot);
	for (int s = 0; slot < 0 && !n && s < RQ_SLOT_COUNT; s++)
		n = rq_cluster_owner(&r->map, s);
	if (!n) {
		r->stale = 1;
		return rq_error_set(err, RQ_E_REDIS, "Redis Cluster: no node serves slot %d", slot);
	}
	*to = n->addr;
	return 0;
}

/* --- redis+sentinel: the master ----------------------------------------- */

/* Ask one sentinel where the master is: 0 with *to set, 1 it knows no
 * master of that name, or -1. */
static int ask_sentinel(rq_redis *r, const rq_redis_addr *s, rq_redis_addr *to, rq_error *err)
{
	redisContext *c;
	redisReply *rep, *h, *p;
	int rc = -1;

	if (rq_redis_conn_open(r, s, 0, &c, err) < 0)
		return -1;
	rep = redisCommand(c, "SENTINEL get-master-addr-by-name %s", r->url.master);
	if (!rep)
		rq_error_set(err, RQ_E_REDIS, "sentinel %s:%d: %s", s->host, s->port, c->errstr);
	else if (rep->type == REDIS_REPLY_NIL) {
		rq_error_set(err, RQ_E_REDIS, "sentinel %s:%d knows no master '%s'", s->host,
			     s->port, r->url.master);
		rc = 1;
	} else if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
		   (h = rep->element[0])->type != REDIS_REPLY_STRING ||
		   (p = rep->element[1])->type != REDIS_REPLY_STRING || !h->len ||
		   h->len >= sizeof(to->host) || (to->port = atoi(p->str)) < 1 || to->port > 65535)
		rq_error_set(err, RQ_E_REDIS, "sentinel %s:%d: unexpected reply%s%s", s->host,
			     s->port, rep->type == REDIS_REPLY_ERROR ? ": " : "",
			     rep->type == REDIS_REPLY_ERROR ? rep->str : "");
	else {
		memcpy(to->host, h->str, h->len + 1);
		rc = 0;
	}
	if (rep)
		freeReplyObject(rep);
	redisFree(c);
	return rc;
}

/* The master's address from the first sentinel that knows it: 0, -1, or
 * -2 when none knows it and one at least said it knows no such master (a
 * name that is wrong: sentinels load the masters they watch at start). */
static int sentinel_master(rq_redis *r, rq_redis_addr *to, rq_error *err)
{
	int unknown = 0, rc;
	rq_error said;

	rq_error_clear(&said);
	for (int i = 0; i < r->url.nseeds; i++) {
		if ((rc = ask_sentinel(r, &r->url.seeds[i], to, err)) == 0)
			return 0;
		if (rc == 1 && !unknown++ && err)
			said = *err;
	}
	if (!unknown)
		return -1;
	if (err)
		*err = said;
	return -2;
}

/* ROLE on the connection: 1 a master (its connected replicas noted), 0
 * not a master, 2 not allowed (NOPERM), -1 the connection broke (err). */
int rq_redis_ha_role(rq_redis *r, rq_error *err)
{
	redisReply *rep = redisCommand(r->c, "ROLE");
	int rc = 0;

	if (!rep)
		return rq_error_set(err, RQ_E_REDIS, "ROLE on %s:%d failed: %s", r->at.host,
				    r->at.port, r->c->errstr);
	r->role_at = rq_clock_mono_ms();
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
	    rep->element[0]->type == REDIS_REPLY_STRING &&
	    !strcmp(rep->element[0]->str, "master")) {
		r->replicas = rep->elements >= 3 && rep->element[2]->type == REDIS_REPLY_ARRAY
				  ? (int)rep->element[2]->elements
				  : 0;
		rc = 1;
	} else if (rep->type == REDIS_REPLY_ERROR && rq_redis_conn_has_prefix(rep->str, "NOPERM")) {
		rc = 2;
	}
	freeReplyObject(rep);
	return rc;
}

/* The connected node says it is a master (a user not allowed ROLE takes
 * the sentinels' word for it): 0, or -1. */
static int check_master(rq_redis *r, rq_error *err)
{
	int rc;

	r->replicas = 0;
	if ((rc = rq_redis_ha_role(r, err)) == 0)
		return rq_error_set(err, RQ_E_REDIS, "Redis at %s:%d is not a master (yet)",
				    r->at.host, r->at.port);
	return rc < 0 ? -1 : 0;
}

/* --- both: routing -------------------------------------------------------- */

/* Connect to the node at a (behind Sentinel, only if it is a master): 0,
 * -1 or -2. */
static int ha_open(rq_redis *r, const rq_redis_addr *a, rq_error *err)
{
	redisContext *c;
	int rc;

	rq_redis_conn_drop(r);
	if ((rc = rq_redis_conn_open(r, a, 1, &c, err)) < 0) {
		r->stale = 1;
		return rc;
	}
	r->c = c;
	if (r->at.port && !rq_cluster_addr_eq(&r->at, a) && r->url.kind == RQ_REDIS_SENTINEL)
		r->redirects++; /* a new master */
	r->at = *a;
	r->wait_again_at = 0;
	if (r->url.kind == RQ_REDIS_SENTINEL) {
		if (check_master(r, err) < 0) {
			rq_redis_conn_drop(r);
			r->stale = 1;
			return -1;
		}
		r->stale = 0; /* the master the sentinels named, and it says so */
	}
	if (r->url.kind == RQ_REDIS_CLUSTER) {
		const rq_cluster_node *n = rq_cluster_find(&r->map, a);
		r->replicas = n ? n->replicas : 0;
		r->role_at = rq_clock_mono_ms();
	}
	if (r->lost)
		r->reconnects++;
	r->lost = 0;
	return 0;
}

/* Be connected to where a command on slot goes (ask: that node, once):
 * 0, -1 (worth retrying) or -2, err set. */
static int ha_route(rq_redis *r, int slot, const rq_redis_addr *ask, rq_error *err)
{
	rq_redis_addr to;
	int rc;

	if (ask) {
		to = *ask;
	} else if (r->url.kind == RQ_REDIS_SENTINEL) {
		if (r->c && !r->stale)
			return 0;
		rq_redis_conn_drop(r);
		if ((rc = sentinel_master(r, &to, err)) < 0)
			return rc;
	} else if ((rc = cluster_target(r, slot, &to, err)) < 0) {
		return rc;
	}
	if (r->c && rq_cluster_addr_eq(&r->at, &to))
		return 0;
	return ha_open(r, &to, err);
}

/* What a reply means for its command (see HA_*); a MOVED updates the map,
 * an ASK sets *ask. */
static int ha_classify(rq_redis *r, const redisReply *rep, rq_redis_addr *ask)
{
	static const char *const pause[] = {
	    "TRYAGAIN", "LOADING", "MASTERDOWN", "BUSY ", rq_redis_conn_non_local_key, NULL};
	rq_redis_addr to;
	int slot, k;

	if (rep->type != REDIS_REPLY_ERROR)
		return HA_DONE;
	if (r->url.kind == RQ_REDIS_CLUSTER &&
	    (k = rq_cluster_redirect(rep->str, &r->at, &slot, &to)) != RQ_CLUSTER_NO_REDIRECT) {
		r->redirects++;
		if (k == RQ_CLUSTER_ASK) {
			*ask = to;
			return HA_ASK;
		}
		return rq_cluster_set_owner(&r->map, slot, &to) < 0 ? HA_PAUSE : HA_REDIRECT;
	}
	if (rq_redis_conn_has_prefix(rep->str, "UNBLOCKED"))
		return HA_REDIRECT; /* its key moved, or its node turned replica: again */
	if (rq_redis_conn_has_prefix(rep->str, "READONLY") ||
	    rq_redis_conn_has_prefix(rep->str, "CLUSTERDOWN")) {
		r->stale = 1; /* not the master any more, or a map that changes */
		return HA_PAUSE;
	}
	for (int i = 0; pause[i]; i++)
		if (rq_redis_conn_has_prefix(rep->str, pause[i]))
			return HA_PAUSE;
	return HA_DONE;
}

/* Send a command (after ASKING) and read its reply: the reply, or NULL
 * when the connection broke (err set). */
static redisReply *ha_exec(rq_redis *r, int block_ms, int asking, int argc, const char **argv,
			   const size_t *lens, rq_error *err)
{
	void *rep = NULL, *ok = NULL;

	if (block_ms > 0)
		redisSetTimeout(r->c, rq_redis_conn_tv(r->opts.command_timeout_ms + block_ms));
	if ((asking && redisAppendCommand(r->c, "ASKING") != REDIS_OK) ||
	    redisAppendCommandArgv(r->c, argc, argv, lens) != REDIS_OK ||
	    (asking && redisGetReply(r->c, &ok) != REDIS_OK) ||
	    redisGetReply(r->c, &rep) != REDIS_OK) {
		rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0], r->c->errstr);
		if (ok)
			freeReplyObject(ok);
		rq_redis_conn_lost(r);
		return NULL;
	}
	if (ok)
		freeReplyObject(ok);
	if (block_ms > 0)
		redisSetTimeout(r->c, rq_redis_conn_tv(r->opts.command_timeout_ms));
	return rep;
}

/* rq_redis_cmd on a cluster or behind Sentinel: sent where it goes,
 * redirections followed, transient answers retried within the budget. */
redisReply *rq_redis_ha_cmd(rq_redis *r, int block_ms, rq_error *err, int argc, const char **argv,
			    const size_t *lens)
{
	long long deadline = rq_redis_conn_deadline(r);
	int slot = r->url.kind == RQ_REDIS_CLUSTER ? rq_slot_of_command(argc, argv, lens) : -1;
	int asking = 0, hops = 0, attempt = 0, rc, what;
	rq_redis_addr ask;
	redisReply *rep;

	for (;;) {
		rc = ha_route(r, slot, asking ? &ask : NULL, err);
		if (rc == 0 && (rep = ha_exec(r, block_ms, asking, argc, argv, lens, err))) {
			what = ha_classify(r, rep, &ask);
			if (what == HA_DONE)
				return rep;
			asking = what == HA_ASK;
			if (what != HA_PAUSE && ++hops <= MAX_HOPS) {
				freeReplyObject(rep);
				continue;
			}
			if (past(deadline))
				return rep;
			rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0],
				     rep->str);
			freeReplyObject(rep);
		}
		asking = 0;
		if (rc == -2 || past(deadline))
			return NULL;
		rq_redis_conn_backoff(r, attempt++, deadline);
	}
}

/* --- both: a command in two halves --------------------------------------- */

void rq_redis_ha_free_sent(rq_redis *r)
{
	for (int i = 0; r->sent.argv && i < r->sent.argc; i++)
		free(r->sent.argv[i]);
	free(r->sent.argv);
	free(r->sent.lens);
	memset(&r->sent, 0, sizeof(r->sent));
}

/* Keep a copy of the command for a resend: 0, or -1 out of memory. */
int rq_redis_ha_keep_sent(rq_redis *r, int argc, const char **argv, rq_error *err)
{
	rq_redis_ha_free_sent(r);
	r->sent.argv = calloc((size_t)argc, sizeof(char *));
	r->sent.lens = calloc((size_t)argc, sizeof(size_t));
	if (!r->sent.argv || !r->sent.lens)
		goto oom;
	r->sent.argc = argc;
	for (int i = 0; i < argc; i++) {
		r->sent.lens[i] = strlen(argv[i]);
		if (!(r->sent.argv[i] = strdup(argv[i])))
			goto oom;
	}
	r->sent.slot =
	    r->url.kind == RQ_REDIS_CLUSTER ? rq_slot_of_command(argc, argv, r->sent.lens) : -1;
	return 0;
oom:
	rq_redis_ha_free_sent(r);
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* Write the kept command where it goes (to ask, once, after ASKING),
 * connecting within the budget: 0, or -1 with err set. */
int rq_redis_ha_write(rq_redis *r, const rq_redis_addr *ask, rq_error *err)
{
	long long deadline = rq_redis_conn_deadline(r);

	for (int attempt = 0;; attempt++) {
		int rc = ha_route(r, r->sent.slot, ask, err), done = 0;
		if (rc == 0) {
			r->sent.skip = ask != NULL;
			if ((!ask || redisAppendCommand(r->c, "ASKING") == REDIS_OK) &&
			    redisAppendCommandArgv(r->c, r->sent.argc, (const char **)r->sent.argv,
						   r->sent.lens) == REDIS_OK)
				while (!done && redisBufferWrite(r->c, &done) == REDIS_OK)
					;
			if (done)
				return 0;
			rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s",
				     r->sent.argv[0], r->c->errstr);
			rq_redis_conn_lost(r);
		}
		if (rc == -2 || past(deadline))
			return -1;
		ask = NULL;
		rq_redis_conn_backoff(r, attempt, deadline);
	}
}

/* rq_redis_recv on a cluster or behind Sentinel: a redirection sends
 * the command again where it goes (0: not complete yet). */
int rq_redis_ha_recv(rq_redis *r, redisReply **reply, rq_error *err)
{
	rq_redis_addr ask;
	void *rep = NULL;
	int what;

	if (redisBufferRead(r->c) != REDIS_OK)
		goto broken;
	for (;;) {
		if (redisGetReplyFromReader(r->c, &rep) != REDIS_OK)
			goto broken;
		if (!rep)
			return 0;
		if (!r->sent.skip)
			break;
		r->sent.skip = 0; /* ASKING's +OK */
		freeReplyObject(rep);
	}
	what = ha_classify(r, rep, &ask);
	if (what == HA_DONE || what == HA_PAUSE || ++r->sent.hops > MAX_HOPS) {
		*reply = rep;
		return 1;
	}
	freeReplyObject(rep);
	return rq_redis_ha_write(r, what == HA_ASK ? &ask : NULL, err) < 0 ? -1 : 0;
broken:
	rq_error_set(err, RQ_E_REDIS, "Redis read failed: %s", r->c->errstr);
	rq_redis_conn_lost(r);
	return -1;
}

/* Connect at first within the budget (to any node of a cluster): 0, -1,
 * or -2 (no retry can help). */
int rq_redis_ha_connect(rq_redis *r, long long deadline, rq_error *err)
{
	for (int attempt = 0;; attempt++) {
		int rc = ha_route(r, -1, NULL, err);
		if (rc == 0 || rc == -2)
			return rc;
		if (past(deadline))
			return -1;
		rq_redis_conn_backoff(r, attempt, deadline);
	}
}
