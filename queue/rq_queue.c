/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue: Redis Streams queue operations; multi-key steps are Lua
 * scripts so that each is atomic.
 */
#include "rq_queue.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rq_queue {
	rq_redis *r;
	char name[65];
	char prefix[96]; /* "replayq:{Q}:" */
	char jobs[128], results[128], dead[128], attempts[128], stats[128], workers[128];
	rq_queue_opts opts;
};

static const char enqueue_lua[] =
    "if ARGV[3] ~= '1' then\n"
    "  if redis.call('EXISTS', KEYS[3]) == 1 then return {0, 'result'} end\n"
    "  local p = redis.call('GET', KEYS[2])\n"
    "  if p then return {0, p} end\n"
    "else\n"
    "  redis.call('DEL', KEYS[3])\n"
    "end\n"
    "local sid = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'job', ARGV[2])\n"
    "redis.call('SET', KEYS[2], sid)\n"
    "redis.call('HINCRBY', KEYS[4], 'submitted', 1)\n"
    "return {1, sid}\n";

/* KEYS: jobs result results jobkey stats reply attempts dead intent
 * ARGV: group sid id result status ttl maxlen has_reply dead_reason job */
static const char complete_lua[] =
    "local function ack()\n"
    "  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "  redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "  if redis.call('GET', KEYS[4]) == ARGV[2] then redis.call('DEL', KEYS[4]) end\n"
    "  redis.call('DEL', KEYS[9])\n"
    "end\n"
    "if redis.call('EXISTS', KEYS[2]) == 1 then ack() return 0 end\n"
    "redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[6])\n"
    "redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], '*', 'id', ARGV[3], 'status', "
    "ARGV[5], 'result', ARGV[4])\n"
    "if ARGV[8] == '1' then\n"
    "  redis.call('RPUSH', KEYS[6], ARGV[4])\n"
    "  redis.call('EXPIRE', KEYS[6], ARGV[6])\n"
    "end\n"
    "if ARGV[9] ~= '' then\n"
    "  redis.call('XADD', KEYS[8], '*', 'id', ARGV[3], 'job', ARGV[10], 'reason', ARGV[9])\n"
    "  redis.call('HINCRBY', KEYS[5], 'dead', 1)\n"
    "end\n"
    "redis.call('HINCRBY', KEYS[5], ARGV[5], 1)\n"
    "redis.call('HDEL', KEYS[7], ARGV[3])\n"
    "ack()\n"
    "return 1\n";

int rq_queue_name_valid(const char *name)
{
	size_t n = 0;
	if (!name || !*name)
		return 0;
	for (; name[n]; n++)
		if (!(isalnum((unsigned char)name[n]) || strchr("._-", name[n])))
			return 0;
	return n <= 64;
}

int rq_queue_open(rq_queue **out, rq_redis *r, const char *name, const rq_queue_opts *opts,
		  rq_error *err)
{
	rq_queue *q;

	*out = NULL;
	if (!rq_queue_name_valid(name))
		return rq_error_set(err, RQ_E_USAGE,
				    "bad queue name '%.80s': 1-64 of [A-Za-z0-9._-]",
				    name ? name : "");
	if (!(q = calloc(1, sizeof(*q))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	q->r = r;
	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->prefix, sizeof(q->prefix), "replayq:{%s}:", name);
	snprintf(q->jobs, sizeof(q->jobs), "%sjobs", q->prefix);
	snprintf(q->results, sizeof(q->results), "%sresults", q->prefix);
	snprintf(q->dead, sizeof(q->dead), "%sdead", q->prefix);
	snprintf(q->attempts, sizeof(q->attempts), "%sattempts", q->prefix);
	snprintf(q->stats, sizeof(q->stats), "%sstats", q->prefix);
	snprintf(q->workers, sizeof(q->workers), "%sworkers", q->prefix);
	q->opts.result_ttl_s = 7 * 24 * 3600;
	q->opts.results_maxlen = 100000;
	if (opts && opts->result_ttl_s > 0)
		q->opts.result_ttl_s = opts->result_ttl_s;
	if (opts && opts->results_maxlen > 0)
		q->opts.results_maxlen = opts->results_maxlen;
	*out = q;
	return 0;
}

void rq_queue_free(rq_queue *q)
{
	free(q);
}

rq_redis *rq_queue_redis(rq_queue *q)
{
	return q->r;
}

const char *rq_queue_name(const rq_queue *q)
{
	return q->name;
}

static void key(const rq_queue *q, char *buf, size_t size, const char *kind, const char *id)
{
	snprintf(buf, size, "%s%s:%s", q->prefix, kind, id);
}

/* A reply that is an error becomes RQ_E_REDIS; frees it. */
static int reply_error(redisReply *rep, rq_error *err, const char *what)
{
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR) {
		rq_error_set(err, RQ_E_REDIS, "%s: %s", what, rep->str);
		freeReplyObject(rep);
		return -1;
	}
	return 0;
}

int rq_queue_ensure_group(rq_queue *q, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "XGROUP", "CREATE", q->jobs, RQ_QUEUE_GROUP,
					"0", "MKSTREAM", NULL);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "BUSYGROUP", 9) != 0)
		return reply_error(rep, err, "cannot create the consumer group");
	freeReplyObject(rep);
	return 0;
}

int rq_queue_enqueue(rq_queue *q, const char *id, const char *job, size_t len, int force,
		     char sid[64], rq_error *err)
{
	char jobkey[512], reskey[512];
	const char *argv[] = {"EVAL", enqueue_lua, "4", q->jobs, jobkey,
			      reskey, q->stats,	   id,	job,	 force ? "1" : "0"};
	size_t lens[10];
	redisReply *rep;
	int rc;

	key(q, jobkey, sizeof(jobkey), "job", id);
	key(q, reskey, sizeof(reskey), "result", id);
	for (int i = 0; i < 10; i++)
		lens[i] = strlen(argv[i]);
	lens[8] = len;
	rep = rq_redis_cmd(q->r, 0, err, 10, argv, lens);
	if (reply_error(rep, err, "enqueue failed") < 0)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "enqueue: unexpected reply");
	}
	rc = rep->element[0]->integer == 1 ? 0 : 1;
	snprintf(sid, 64, "%s", rep->element[1]->str ? rep->element[1]->str : "");
	freeReplyObject(rep);
	return rc;
}

static char *dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* Parse stream entries [[sid, [f, v, ...]], ...] into msgs. */
static int parse_entries(redisReply *arr, rq_msg **msgs, size_t *n, rq_error *err)
{
	rq_msg *v;
	size_t k = 0;

	*msgs = NULL;
	*n = 0;
	if (!arr || arr->type != REDIS_REPLY_ARRAY || arr->elements == 0)
		return 0;
	if (!(v = calloc(arr->elements, sizeof(*v))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < arr->elements; i++) {
		redisReply *e = arr->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		rq_msg *m = &v[k++];
		snprintf(m->sid, sizeof(m->sid), "%s", e->element[0]->str);
		m->deliveries = 1;
		redisReply *f = e->element[1];
		if (f->type != REDIS_REPLY_ARRAY)
			continue;
		for (size_t j = 0; j + 1 < f->elements; j += 2) {
			redisReply *fk = f->element[j], *fv = f->element[j + 1];
			if (fk->type != REDIS_REPLY_STRING || fv->type != REDIS_REPLY_STRING)
				continue;
			if (!strcmp(fk->str, "id") && !m->id)
				m->id = dupn(fv->str, fv->len);
			else if (!strcmp(fk->str, "job") && !m->job) {
				m->job = dupn(fv->str, fv->len);
				m->job_len = fv->len;
			}
		}
	}
	*msgs = v;
	*n = k;
	return 0;
}

void rq_msgs_free(rq_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(msgs[i].id);
		free(msgs[i].job);
	}
	free(msgs);
}

/* The reply of an XREADGROUP: the entries it carries (none on a timeout). */
static int read_reply(rq_queue *q, redisReply *rep, rq_msg **msgs, size_t *n, rq_error *err)
{
	int rc = 0;

	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep);
		return rq_queue_ensure_group(q, err);
	}
	if (reply_error(rep, err, "read failed") < 0)
		return -1;
	/* [[stream, [entries]]] or nil on timeout */
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
	    rep->element[0]->type == REDIS_REPLY_ARRAY && rep->element[0]->elements == 2)
		rc = parse_entries(rep->element[0]->element[1], msgs, n, err);
	freeReplyObject(rep);
	return rc;
}

static void read_args(const rq_queue *q, const char *consumer, size_t count, int block_ms,
		      char cnt[32], char blk[32], const char *argv[11])
{
	snprintf(cnt, 32, "%zu", count ? count : 1);
	snprintf(blk, 32, "%d", block_ms);
	argv[0] = "XREADGROUP";
	argv[1] = "GROUP";
	argv[2] = RQ_QUEUE_GROUP;
	argv[3] = consumer;
	argv[4] = "COUNT";
	argv[5] = cnt;
	argv[6] = "BLOCK";
	argv[7] = blk;
	argv[8] = "STREAMS";
	argv[9] = q->jobs;
	argv[10] = ">";
}

int rq_queue_read(rq_queue *q, const char *consumer, size_t count, int block_ms, rq_msg **msgs,
		  size_t *n, rq_error *err)
{
	char cnt[32], blk[32];
	const char *argv[11];
	redisReply *rep;

	*msgs = NULL;
	*n = 0;
	read_args(q, consumer, count, block_ms, cnt, blk, argv);
	rep = rq_redis_cmd(q->r, block_ms, err, 11, argv, NULL);
	if (!rep)
		return -1;
	return read_reply(q, rep, msgs, n, err);
}

int rq_queue_read_send(rq_queue *q, const char *consumer, size_t count, int block_ms, rq_error *err)
{
	char cnt[32], blk[32];
	const char *argv[11];

	read_args(q, consumer, count, block_ms, cnt, blk, argv);
	return rq_redis_send(q->r, err, 11, argv);
}

int rq_queue_read_recv(rq_queue *q, rq_msg **msgs, size_t *n, rq_error *err)
{
	redisReply *rep;
	int r;

	*msgs = NULL;
	*n = 0;
	if ((r = rq_redis_recv(q->r, &rep, err)) <= 0)
		return r < 0 ? -1 : 0;
	return read_reply(q, rep, msgs, n, err) < 0 ? -1 : 1;
}

static long delivery_count(rq_queue *q, const char *sid, rq_error *err)
{
	redisReply *rep =
	    rq_redis_cmdv(q->r, 0, err, "XPENDING", q->jobs, RQ_QUEUE_GROUP, sid, sid, "1", NULL);
	long d = 1;
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 &&
	    rep->element[0]->type == REDIS_REPLY_ARRAY && rep->element[0]->elements == 4)
		d = (long)rep->element[0]->element[3]->integer;
	freeReplyObject(rep);
	return d;
}

int rq_queue_reclaim(rq_queue *q, const char *consumer, long min_idle_ms, size_t count,
		     rq_msg **msgs, size_t *n, rq_error *err)
{
	char idle[32], cnt[32];
	redisReply *rep;
	int rc = 0;

	*msgs = NULL;
	*n = 0;
	snprintf(idle, sizeof(idle), "%ld", min_idle_ms);
	snprintf(cnt, sizeof(cnt), "%zu", count ? count : 1);
	rep = rq_redis_cmdv(q->r, 0, err, "XAUTOCLAIM", q->jobs, RQ_QUEUE_GROUP, consumer, idle,
			    "0-0", "COUNT", cnt, NULL);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep);
		return rq_queue_ensure_group(q, err);
	}
	if (reply_error(rep, err, "reclaim failed") < 0)
		return -1;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2)
		rc = parse_entries(rep->element[1], msgs, n, err);
	freeReplyObject(rep);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		long d = delivery_count(q, (*msgs)[i].sid, err);
		if (d < 0)
			rc = -1;
		else
			(*msgs)[i].deliveries = d;
	}
	return rc;
}

int rq_queue_complete(rq_queue *q, const rq_msg *m, const char *id, const char *result,
		      const char *status, const char *reply_to, const char *dead_reason,
		      rq_error *err)
{
	char reskey[512], jobkey[512], replykey[512], intentkey[512], ttl[32], maxlen[32];
	const char *argv[24];
	size_t lens[24];
	int argc = 0;
	redisReply *rep;
	int rc;

	key(q, reskey, sizeof(reskey), "result", id);
	key(q, jobkey, sizeof(jobkey), "job", id);
	key(q, replykey, sizeof(replykey), "reply", reply_to ? reply_to : "-");
	key(q, intentkey, sizeof(intentkey), "intent", id);
	snprintf(ttl, sizeof(ttl), "%d", q->opts.result_ttl_s);
	snprintf(maxlen, sizeof(maxlen), "%ld", q->opts.results_maxlen);
	argv[argc++] = "EVAL";
	argv[argc++] = complete_lua;
	argv[argc++] = "9";
	argv[argc++] = q->jobs;
	argv[argc++] = reskey;
	argv[argc++] = q->results;
	argv[argc++] = jobkey;
	argv[argc++] = q->stats;
	argv[argc++] = replykey;
	argv[argc++] = q->attempts;
	argv[argc++] = q->dead;
	argv[argc++] = intentkey;
	argv[argc++] = RQ_QUEUE_GROUP;
	argv[argc++] = m->sid;
	argv[argc++] = id;
	argv[argc++] = result;
	argv[argc++] = status;
	argv[argc++] = ttl;
	argv[argc++] = maxlen;
	argv[argc++] = reply_to ? "1" : "0";
	argv[argc++] = dead_reason ? dead_reason : "";
	argv[argc++] = m->job ? m->job : "";
	for (int i = 0; i < argc; i++)
		lens[i] = strlen(argv[i]);
	if (m->job)
		lens[argc - 1] = m->job_len;
	rep = rq_redis_cmd(q->r, 0, err, argc, argv, lens);
	if (reply_error(rep, err, "storing the result failed") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 0 ? 1 : 0;
	freeReplyObject(rep);
	return rc;
}

/* KEYS: jobs  ARGV: group sid consumer. Reset the idle time of an entry
 * only while this consumer owns it: a worker that was paused must not take
 * back a job another worker has reclaimed. */
static const char keep_lua[] =
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)\n"
    "if #p ~= 1 or p[1][2] ~= ARGV[3] then return 0 end\n"
    "redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')\n"
    "return 1\n";

int rq_queue_keep_claim(rq_queue *q, const char *consumer, const char *sid, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "EVAL", keep_lua, "1", q->jobs,
					RQ_QUEUE_GROUP, sid, consumer, NULL);
	int rc;

	if (reply_error(rep, err, "cannot keep the claim") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	return rc;
}

/* KEYS: jobs result  ARGV: group sid consumer deliveries. 1 when the job
 * has no result and its stream entry is pending with this consumer at this
 * delivery. */
static const char owns_lua[] =
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)\n"
    "if #p ~= 1 or p[1][2] ~= ARGV[3] or tonumber(p[1][4]) ~= tonumber(ARGV[4]) then\n"
    "  return 0\n"
    "end\n"
    "return 1\n";

int rq_queue_owns(rq_queue *q, const rq_msg *m, const char *id, const char *consumer, rq_error *err)
{
	char rk[512], deliveries[32];
	redisReply *rep;
	int rc;

	key(q, rk, sizeof(rk), "result", id);
	snprintf(deliveries, sizeof(deliveries), "%ld", m->deliveries);
	rep = rq_redis_cmdv(q->r, 0, err, "EVAL", owns_lua, "2", q->jobs, rk, RQ_QUEUE_GROUP,
			    m->sid, consumer, deliveries, NULL);
	if (reply_error(rep, err, "cannot check who owns the job") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	return rc;
}

/* KEYS: intent result  ARGV: intent ttl. A job that has its result
 * already (another worker finished it) gets no intent: 0. */
static const char intent_lua[] = "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
				 "redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])\n"
				 "return 1\n";

int rq_queue_set_intent(rq_queue *q, const char *id, const char *result, rq_error *err)
{
	char k[512], rk[512], ttl[32];
	redisReply *rep;
	int rc;

	key(q, k, sizeof(k), "intent", id);
	key(q, rk, sizeof(rk), "result", id);
	snprintf(ttl, sizeof(ttl), "%d", q->opts.result_ttl_s);
	rep = rq_redis_cmdv(q->r, 0, err, "EVAL", intent_lua, "2", k, rk, result, ttl, NULL);
	if (reply_error(rep, err, "cannot record the intent") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1 ? 0 : 1;
	freeReplyObject(rep);
	if (rc)
		rq_error_set(err, RQ_E_REDIS, "the job has a result already");
	return rc;
}

char *rq_queue_get_intent(rq_queue *q, const char *id, rq_error *err)
{
	char k[512];
	redisReply *rep;
	char *s = NULL;

	key(q, k, sizeof(k), "intent", id);
	rep = rq_redis_cmdv(q->r, 0, err, "GET", k, NULL);
	if (reply_error(rep, err, "cannot read the intent") < 0)
		return NULL;
	if (rep->type == REDIS_REPLY_STRING && !(s = dupn(rep->str, rep->len)))
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	freeReplyObject(rep);
	return s;
}

int rq_queue_note_attempt(rq_queue *q, const char *id, const char *info, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "HSET", q->attempts, id, info, NULL);
	if (reply_error(rep, err, "cannot record the attempt") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "HINCRBY", q->stats, "retried", "1", NULL);
	if (reply_error(rep, err, "cannot count the attempt") < 0)
		return -1;
	freeReplyObject(rep);
	return 0;
}

char *rq_queue_last_attempt(rq_queue *q, const char *id, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "HGET", q->attempts, id, NULL);
	char *s = NULL;
	if (reply_error(rep, err, "cannot read the attempt") < 0)
		return NULL;
	if (rep->type == REDIS_REPLY_STRING)
		s = dupn(rep->str, rep->len);
	freeReplyObject(rep);
	return s;
}

int rq_queue_result(rq_queue *q, const char *id, char **json, rq_error *err)
{
	char reskey[512];
	redisReply *rep;
	int rc = 1;

	*json = NULL;
	key(q, reskey, sizeof(reskey), "result", id);
	rep = rq_redis_cmdv(q->r, 0, err, "GET", reskey, NULL);
	if (reply_error(rep, err, "cannot read the result") < 0)
		return -1;
	if (rep->type == REDIS_REPLY_STRING) {
		if (!(*json = dupn(rep->str, rep->len)))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			rc = 0;
	}
	freeReplyObject(rep);
	return rc;
}

int rq_queue_wait_reply(rq_queue *q, const char *reply_to, int timeout_ms, char **json,
			rq_error *err)
{
	char replykey[512], tmo[32];
	redisReply *rep;
	int rc = 1;

	*json = NULL;
	key(q, replykey, sizeof(replykey), "reply", reply_to);
	snprintf(tmo, sizeof(tmo), "%.3f", timeout_ms / 1000.0);
	rep = rq_redis_cmdv(q->r, timeout_ms, err, "BLPOP", replykey, tmo, NULL);
	if (reply_error(rep, err, "waiting for results failed") < 0)
		return -1;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2) {
		if (!(*json = dupn(rep->element[1]->str, rep->element[1]->len)))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			rc = 0;
	}
	freeReplyObject(rep);
	return rc;
}

int rq_queue_heartbeat(rq_queue *q, const char *worker, const char *info, int ttl_s, rq_error *err)
{
	char alive[512], ttl[32];
	redisReply *rep;

	key(q, alive, sizeof(alive), "worker", worker);
	snprintf(ttl, sizeof(ttl), "%d", ttl_s);
	rep = rq_redis_cmdv(q->r, 0, err, "HSET", q->workers, worker, info, NULL);
	if (reply_error(rep, err, "heartbeat failed") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "SET", alive, "1", "EX", ttl, NULL);
	if (reply_error(rep, err, "heartbeat failed") < 0)
		return -1;
	freeReplyObject(rep);
	return 0;
}

int rq_queue_worker_gone(rq_queue *q, const char *worker, rq_error *err)
{
	char alive[512];
	redisReply *rep;

	key(q, alive, sizeof(alive), "worker", worker);
	rep = rq_redis_cmdv(q->r, 0, err, "DEL", alive, NULL);
	if (reply_error(rep, err, "cannot remove the heartbeat") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "HDEL", q->workers, worker, NULL);
	if (reply_error(rep, err, "cannot remove the heartbeat") < 0)
		return -1;
	freeReplyObject(rep);
	return 0;
}

static json_t *hash_to_json(redisReply *rep, int numbers)
{
	json_t *o = json_object();
	if (rep->type != REDIS_REPLY_ARRAY)
		return o;
	for (size_t i = 0; i + 1 < rep->elements; i += 2) {
		const char *k = rep->element[i]->str, *v = rep->element[i + 1]->str;
		if (!k || !v)
			continue;
		if (numbers)
			json_object_set_new(o, k, json_integer(strtoll(v, NULL, 10)));
		else {
			json_t *parsed = json_loads(v, 0, NULL);
			json_object_set_new(o, k, parsed ? parsed : json_string(v));
		}
	}
	return o;
}

int rq_queue_stats(rq_queue *q, json_t **out, rq_error *err)
{
	redisReply *rep;
	json_t *o = json_object(), *workers;
	const char *wk;
	json_t *wv;

	*out = NULL;
	rep = rq_redis_cmdv(q->r, 0, err, "HGETALL", q->stats, NULL);
	if (reply_error(rep, err, "stats failed") < 0)
		goto fail;
	json_object_set_new(o, "counters", hash_to_json(rep, 1));
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "XLEN", q->jobs, NULL);
	if (reply_error(rep, err, "stats failed") < 0)
		goto fail;
	json_object_set_new(o, "queued", json_integer(rep->integer));
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "XPENDING", q->jobs, RQ_QUEUE_GROUP, NULL);
	if (!rep)
		goto fail;
	json_object_set_new(o, "pending",
			    json_integer(rep->type == REDIS_REPLY_ARRAY && rep->elements > 0
					     ? rep->element[0]->integer
					     : 0));
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "XLEN", q->dead, NULL);
	if (reply_error(rep, err, "stats failed") < 0)
		goto fail;
	json_object_set_new(o, "dead", json_integer(rep->integer));
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "HGETALL", q->workers, NULL);
	if (reply_error(rep, err, "stats failed") < 0)
		goto fail;
	workers = hash_to_json(rep, 0);
	freeReplyObject(rep);
	json_object_foreach(workers, wk, wv)
	{
		char alive[512];
		key(q, alive, sizeof(alive), "worker", wk);
		rep = rq_redis_cmdv(q->r, 0, err, "EXISTS", alive, NULL);
		if (!rep) {
			json_decref(workers);
			goto fail;
		}
		if (json_is_object(wv))
			json_object_set_new(wv, "alive", json_boolean(rep->integer == 1));
		freeReplyObject(rep);
	}
	json_object_set_new(o, "workers", workers);
	*out = o;
	return 0;
fail:
	json_decref(o);
	return -1;
}

int rq_queue_dead_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();

	*out = NULL;
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(q->r, 0, err, "XRANGE", q->dead, "-", "+", "COUNT", cnt, NULL);
	if (reply_error(rep, err, "cannot list dead letters") < 0) {
		json_decref(a);
		return -1;
	}
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
		redisReply *e = rep->element[i];
		json_t *o = json_object();
		json_object_set_new(o, "entry", json_string(e->element[0]->str));
		for (size_t j = 0; j + 1 < e->element[1]->elements; j += 2)
			json_object_set_new(o, e->element[1]->element[j]->str,
					    json_string(e->element[1]->element[j + 1]->str));
		json_array_append_new(a, o);
	}
	freeReplyObject(rep);
	*out = a;
	return 0;
}

int rq_queue_pending_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();

	*out = NULL;
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(q->r, 0, err, "XPENDING", q->jobs, RQ_QUEUE_GROUP, "-", "+", cnt, NULL);
	if (!rep) {
		json_decref(a);
		return -1;
	}
	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep);
		*out = a;
		return 0;
	}
	if (reply_error(rep, err, "cannot list pending jobs") < 0) {
		json_decref(a);
		return -1;
	}
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
		redisReply *e = rep->element[i];
		if (e->elements != 4)
			continue;
		json_array_append_new(
		    a, json_pack("{s:s, s:s, s:I, s:I}", "entry", e->element[0]->str, "consumer",
				 e->element[1]->str, "idle_ms", (json_int_t)e->element[2]->integer,
				 "deliveries", (json_int_t)e->element[3]->integer));
	}
	freeReplyObject(rep);
	*out = a;
	return 0;
}
