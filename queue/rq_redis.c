/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis: hiredis connection handling, reconnects and backoff; the
 * routing of commands to the master that serves them on a Redis Cluster
 * or behind Sentinel (see rq_redis.h).
 */
#include "rq_redis.h"
#include "rq_clock.h"

#include "rq_cluster.h"
#include "rq_slot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Redirections one command follows at once before it pauses like a
 * transient error (a map that is still changing). */
#define MAX_HOPS 8

/* After a WAIT that timed out, writes do not wait for this long: a
 * replica that is gone must not slow every write by the timeout. */
#define WAIT_PAUSE_MS 10000

/* How often the replicas of the connected master are counted again (ROLE),
 * so that a replica that joins after a failover is waited for. */
#define ROLE_EVERY_MS 10000

/* The command rq_redis_send wrote, kept for a resend after a redirection. */
typedef struct sent_cmd {
	int argc;
	char **argv;
	size_t *lens;
	int slot; /* its slot; -1 none */
	int hops; /* redirections followed */
	int skip; /* replies to drop first (ASKING's) */
} sent_cmd;

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
	sent_cmd sent;
	rq_cluster map; /* redis+cluster */
};

/* Where a reply sends a command next: nowhere (it is the answer), to the
 * node a redirection names, or to the same place after a pause. */
enum { HA_DONE, HA_REDIRECT, HA_ASK, HA_PAUSE };

static int is_ha(const rq_redis *r)
{
	return r->url.kind == RQ_REDIS_CLUSTER || r->url.kind == RQ_REDIS_SENTINEL;
}

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The error of a script that met a key of a slot being migrated (it
 * wrote nothing before: the queue's scripts read such keys first). */
static const char non_local_key[] = "ERR Script attempted to access a non local key";

static struct timeval tv_ms(int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	return tv;
}

static long long deadline_of(const rq_redis *r)
{
	return r->opts.retry_ms_max < 0 ? -1 : rq_clock_mono_ms() + r->opts.retry_ms_max;
}

static int past(long long deadline)
{
	return deadline >= 0 && rq_clock_mono_ms() >= deadline;
}

static void drop(rq_redis *r)
{
	if (r->c) {
		redisFree(r->c);
		r->c = NULL;
	}
	r->sent.skip = 0;
}

/* The connection broke: drop it; the next one is a reconnect, after the
 * map or the master is asked for again. */
static void lost(rq_redis *r)
{
	drop(r);
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
		if (has_prefix(msg, passing[i]))
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
static int open_conn(const rq_redis *r, const rq_redis_addr *a, int creds, redisContext **out,
		     rq_error *err)
{
	struct timeval tv = tv_ms(connect_ms(r));
	redisContext *c = a ? redisConnectWithTimeout(a->host, a->port, tv)
			    : redisConnectUnixWithTimeout(r->url.path, tv);
	int rc;

	*out = NULL;
	if (!c)
		return rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: out of memory");
	if (c->err) {
		if (is_ha(r))
			rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis at %s:%d: %s",
				     a->host, a->port, c->errstr);
		else
			rq_error_set(err, RQ_E_REDIS, "cannot connect to Redis: %s", c->errstr);
		redisFree(c);
		return -1;
	}
	redisSetTimeout(c, tv_ms(r->opts.command_timeout_ms));
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

	drop(r);
	if (r->url.is_unix)
		return open_conn(r, NULL, 1, &r->c, err);
	snprintf(a.host, sizeof(a.host), "%s", r->url.host);
	a.port = r->url.port;
	return open_conn(r, &a, 1, &r->c, err);
}

/* The pause before another try, never past the budget's deadline (-1:
 * none), so that a budget of 2 s gives up after 2 s, not after the
 * next pause. */
static void backoff_sleep(rq_redis *r, int attempt, long long deadline)
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
static int ensure(rq_redis *r, long long deadline, rq_error *err)
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
		backoff_sleep(r, attempt, deadline);
	}
}

/* --- redis+cluster: the slot map --------------------------------------- */

/* Ask one node for the slot map: 0 loaded, -1, or -2 (refused for good:
 * credentials, or a server without cluster support). */
static int ask_slots(rq_redis *r, const rq_redis_addr *a, rq_error *err)
{
	redisContext *c;
	redisReply *rep;
	int rc = open_conn(r, a, 1, &c, err);

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

	if (open_conn(r, s, 0, &c, err) < 0)
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
static int ask_role(rq_redis *r, rq_error *err)
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
	} else if (rep->type == REDIS_REPLY_ERROR && has_prefix(rep->str, "NOPERM")) {
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
	if ((rc = ask_role(r, err)) == 0)
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

	drop(r);
	if ((rc = open_conn(r, a, 1, &c, err)) < 0) {
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
			drop(r);
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
		drop(r);
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
	static const char *const pause[] = {"TRYAGAIN", "LOADING",     "MASTERDOWN",
					    "BUSY ",	non_local_key, NULL};
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
	if (has_prefix(rep->str, "UNBLOCKED"))
		return HA_REDIRECT; /* its key moved, or its node turned replica: again */
	if (has_prefix(rep->str, "READONLY") || has_prefix(rep->str, "CLUSTERDOWN")) {
		r->stale = 1; /* not the master any more, or a map that changes */
		return HA_PAUSE;
	}
	for (int i = 0; pause[i]; i++)
		if (has_prefix(rep->str, pause[i]))
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
		redisSetTimeout(r->c, tv_ms(r->opts.command_timeout_ms + block_ms));
	if ((asking && redisAppendCommand(r->c, "ASKING") != REDIS_OK) ||
	    redisAppendCommandArgv(r->c, argc, argv, lens) != REDIS_OK ||
	    (asking && redisGetReply(r->c, &ok) != REDIS_OK) ||
	    redisGetReply(r->c, &rep) != REDIS_OK) {
		rq_error_set(err, RQ_E_REDIS, "Redis command %s failed: %s", argv[0], r->c->errstr);
		if (ok)
			freeReplyObject(ok);
		lost(r);
		return NULL;
	}
	if (ok)
		freeReplyObject(ok);
	if (block_ms > 0)
		redisSetTimeout(r->c, tv_ms(r->opts.command_timeout_ms));
	return rep;
}

/* rq_redis_cmd on a cluster or behind Sentinel: sent where it goes,
 * redirections followed, transient answers retried within the budget. */
static redisReply *ha_cmd(rq_redis *r, int block_ms, rq_error *err, int argc, const char **argv,
			  const size_t *lens)
{
	long long deadline = deadline_of(r);
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
		backoff_sleep(r, attempt++, deadline);
	}
}

/* --- both: a command in two halves --------------------------------------- */

static void free_sent(rq_redis *r)
{
	for (int i = 0; r->sent.argv && i < r->sent.argc; i++)
		free(r->sent.argv[i]);
	free(r->sent.argv);
	free(r->sent.lens);
	memset(&r->sent, 0, sizeof(r->sent));
}

/* Keep a copy of the command for a resend: 0, or -1 out of memory. */
static int keep_sent(rq_redis *r, int argc, const char **argv, rq_error *err)
{
	free_sent(r);
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
	free_sent(r);
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* Write the kept command where it goes (to ask, once, after ASKING),
 * connecting within the budget: 0, or -1 with err set. */
static int ha_write(rq_redis *r, const rq_redis_addr *ask, rq_error *err)
{
	long long deadline = deadline_of(r);

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
			lost(r);
		}
		if (rc == -2 || past(deadline))
			return -1;
		ask = NULL;
		backoff_sleep(r, attempt, deadline);
	}
}

/* rq_redis_recv on a cluster or behind Sentinel: a redirection sends
 * the command again where it goes (0: not complete yet). */
static int ha_recv(rq_redis *r, redisReply **reply, rq_error *err)
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
	return ha_write(r, what == HA_ASK ? &ask : NULL, err) < 0 ? -1 : 0;
broken:
	rq_error_set(err, RQ_E_REDIS, "Redis read failed: %s", r->c->errstr);
	lost(r);
	return -1;
}

/* Connect at first within the budget (to any node of a cluster): 0, -1,
 * or -2 (no retry can help). */
static int ha_connect(rq_redis *r, long long deadline, rq_error *err)
{
	for (int attempt = 0;; attempt++) {
		int rc = ha_route(r, -1, NULL, err);
		if (rc == 0 || rc == -2)
			return rc;
		if (past(deadline))
			return -1;
		backoff_sleep(r, attempt, deadline);
	}
}

int rq_redis_wait_replicas(rq_redis *r, rq_error *err)
{
	redisReply *rep;
	int want, rc = 0;

	if (!is_ha(r) || !r->c || r->url.wait_replicas <= 0)
		return 0;
	if (rq_clock_mono_ms() >= r->role_at + ROLE_EVERY_MS && ask_role(r, err) < 0) {
		lost(r);
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
		lost(r);
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

/* --- the API ---------------------------------------------------------------- */

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
	r->first_deadline = deadline = deadline_of(r);
	rc = is_ha(r) ? ha_connect(r, deadline, err) : ensure(r, deadline, err);
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
	drop(r);
	free_sent(r);
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
	long long deadline = deadline_of(r);

	if (is_ha(r))
		return ha_cmd(r, block_ms, err, argc, argv, lens);
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
		r->lost = 1; /* the next connection is a reconnect */
		if (deadline >= 0 && rq_clock_mono_ms() >= deadline)
			return NULL;
		backoff_sleep(r, attempt, deadline);
	}
}

int rq_redis_send(rq_redis *r, rq_error *err, int argc, const char **argv)
{
	long long deadline = deadline_of(r);
	int done = 0;

	if (is_ha(r)) {
		if (keep_sent(r, argc, argv, err) < 0)
			return -1;
		return ha_write(r, NULL, err);
	}
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
	if (is_ha(r))
		return ha_recv(r, reply, err);
	if (redisBufferRead(r->c) != REDIS_OK || redisGetReplyFromReader(r->c, &rep) != REDIS_OK) {
		rq_error_set(err, RQ_E_REDIS, "Redis read failed: %s", r->c->errstr);
		drop(r);
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

	if (!msg || has_prefix(msg, non_local_key))
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
