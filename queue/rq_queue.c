/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue: Redis Streams queue operations; multi-key steps are Lua
 * scripts so that each is atomic.
 */
#include "rq_queue.h"

#include "rq_job.h"
#include "rq_result_json.h"

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

/* KEYS: jobs result results jobkey stats reply attempts dead intent claim
 *       waiting granted
 * ARGV: group sid id result status ttl maxlen has_reply dead_reason job
 *       lenient reply_prefix
 * Strict: a key of the wrong type fails it before any write. Lenient (the
 * dead letter after a strict failure): such keys are left alone, the dead
 * stream must be usable. The dead letter is the first write, so that a
 * server out of memory refuses it before anything is written. The reply
 * lists of waiting duplicates (keys the script is not given) are read
 * before the first write too: on a cluster slot being migrated, touching
 * such a key fails the script ("non local key"), which must then have
 * written nothing, so that it can be run again on the new node. */
static const char complete_lua[] = RQ_QUEUE_LUA_WANT
    "local lenient = ARGV[11] == '1'\n"
    "local checks = {{2, 'string'}, {3, 'stream'}, {4, 'string'}, {5, 'hash'},\n"
    "  {7, 'hash'}, {9, 'string'}, {10, 'string'}, {11, 'list'}, {12, 'string'}}\n"
    "if ARGV[8] == '1' then table.insert(checks, {6, 'list'}) end\n"
    "if ARGV[9] ~= '' then table.insert(checks, {8, 'stream'}) end\n"
    "local skip = {}\n"
    "for _, c in ipairs(checks) do\n"
    "  local bad = want(KEYS[c[1]], c[2])\n"
    "  if bad then\n"
    "    if not lenient or c[1] == 8 then return redis.error_reply(bad) end\n"
    "    skip[c[1]] = true\n"
    "  end\n"
    "end\n"
    "local function ack()\n"
    "  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "  redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "  if not skip[4] and redis.call('GET', KEYS[4]) == ARGV[2] then\n"
    "    redis.call('DEL', KEYS[4])\n"
    "  end\n"
    "  if not skip[9] then redis.call('DEL', KEYS[9]) end\n"
    "  if not skip[12] then redis.call('DEL', KEYS[12]) end\n"
    "end\n"
    "if not skip[2] and redis.call('EXISTS', KEYS[2]) == 1 then ack() return 0 end\n"
    "local waiters = {}\n"
    "if not skip[11] then\n"
    "  for _, r in ipairs(redis.call('LRANGE', KEYS[11], 0, -1)) do\n"
    "    if string.sub(r, 1, #ARGV[12]) == ARGV[12] and not want(r, 'list') then\n"
    "      table.insert(waiters, r)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if ARGV[9] ~= '' then\n"
    "  if lenient then\n"
    "    redis.call('XADD', KEYS[8], '*', 'id', ARGV[3], 'job', ARGV[10], 'reason', ARGV[9],\n"
    "      'result', ARGV[4])\n"
    "  else\n"
    "    redis.call('XADD', KEYS[8], '*', 'id', ARGV[3], 'job', ARGV[10], 'reason', ARGV[9])\n"
    "  end\n"
    "end\n"
    "if not skip[2] then redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[6]) end\n"
    "if not skip[3] then\n"
    "  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], '*', 'id', ARGV[3], 'status',\n"
    "    ARGV[5], 'result', ARGV[4])\n"
    "end\n"
    "if ARGV[8] == '1' and not skip[6] then\n"
    "  redis.call('RPUSH', KEYS[6], ARGV[4])\n"
    "  redis.call('EXPIRE', KEYS[6], ARGV[6])\n"
    "end\n"
    "if not skip[11] then\n"
    "  for _, r in ipairs(waiters) do\n"
    "    redis.call('RPUSH', r, ARGV[4])\n"
    "    redis.call('EXPIRE', r, ARGV[6])\n"
    "  end\n"
    "  redis.call('DEL', KEYS[11])\n"
    "end\n"
    "if not skip[10] then\n"
    "  local c = redis.call('GET', KEYS[10])\n"
    "  if c and string.sub(c, 1, #ARGV[2] + 1) == ARGV[2] .. ' ' then\n"
    "    redis.call('EXPIRE', KEYS[10], ARGV[6])\n"
    "  end\n"
    "end\n"
    "if not skip[5] then\n"
    "  if ARGV[9] ~= '' then redis.call('HINCRBY', KEYS[5], 'dead', 1) end\n"
    "  redis.call('HINCRBY', KEYS[5], ARGV[5], 1)\n"
    "end\n"
    "if not skip[7] then redis.call('HDEL', KEYS[7], ARGV[3]) end\n"
    "ack()\n"
    "return 1\n";

/* KEYS: jobs claim result waiting reply dead stats jobkey
 * ARGV: group sid content ttl has_reply differs_result id job prior_digest
 * The claim is "<entry> <sha1 of the content>". An entry whose id another
 * live entry (or a stored result) owns is answered and acknowledged here:
 * with the result (now, or through the waiting list when it is stored) if
 * its content is the same, else with differs_result and a dead letter. */
static const char claim_lua[] = RQ_QUEUE_LUA_WANT
    "local bad = want(KEYS[2], 'string') or want(KEYS[3], 'string')\n"
    "if bad then return redis.error_reply(bad) end\n"
    "local digest = redis.sha1hex(ARGV[3])\n"
    "local owner, odig\n"
    "local c = redis.call('GET', KEYS[2])\n"
    "if c then owner, odig = string.match(c, '^(%d+%-%d+) (%x+)$') end\n"
    "local hasres = redis.call('EXISTS', KEYS[3]) == 1\n"
    "local same = ARGV[9] ~= '' and ARGV[9] == digest and 1 or 0\n"
    "if owner == ARGV[2] then return {hasres and 1 or 0, owner, same} end\n"
    "if hasres and not owner then return {1, ''} end\n"
    "local live = owner and #redis.call('XRANGE', KEYS[1], owner, owner) == 1\n"
    "if not hasres and not live then\n"
    "  redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. digest, 'EX', ARGV[4])\n"
    "  return {0, ARGV[2], same}\n"
    "end\n"
    "local function push(k, v)\n"
    "  if not want(k, 'list') then\n"
    "    redis.call('RPUSH', k, v)\n"
    "    redis.call('EXPIRE', k, ARGV[4])\n"
    "  end\n"
    "end\n"
    "local stats = not want(KEYS[7], 'hash')\n"
    "if stats then redis.call('HINCRBY', KEYS[7], 'duplicate', 1) end\n"
    "local rc = 2\n"
    "if odig ~= digest then\n"
    "  rc = 3\n"
    "  if ARGV[5] == '1' then push(KEYS[5], ARGV[6]) end\n"
    "  if not want(KEYS[6], 'stream') then\n"
    "    redis.call('XADD', KEYS[6], '*', 'id', ARGV[7], 'job', ARGV[8], 'reason',\n"
    "      'the job id is taken by entry ' .. owner .. ', a job with different content',\n"
    "      'result', ARGV[6])\n"
    "    if stats then redis.call('HINCRBY', KEYS[7], 'dead', 1) end\n"
    "  end\n"
    "elseif ARGV[5] == '1' then\n"
    "  if hasres then push(KEYS[5], redis.call('GET', KEYS[3]))\n"
    "  else push(KEYS[4], KEYS[5]) end\n"
    "end\n"
    "redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "if not want(KEYS[8], 'string') and redis.call('GET', KEYS[8]) == ARGV[2] then\n"
    "  redis.call('DEL', KEYS[8])\n"
    "end\n"
    "return {rc, owner}\n";

/* 1 if name is a valid queue name: 1..64 of [A-Za-z0-9._-]. */
static int name_valid(const char *name)
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
	if (!name_valid(name))
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

void rq_queue_key(const rq_queue *q, char *buf, size_t size, const char *kind, const char *id)
{
	key(q, buf, size, kind, id);
}

const char *rq_queue_jobs_key(const rq_queue *q)
{
	return q->jobs;
}

int rq_queue_result_ttl(const rq_queue *q)
{
	return q->opts.result_ttl_s;
}

/* A reply that is an error becomes RQ_E_REDIS (RQ_QUEUE_PERMANENT when it
 * is one that the same command gets again); frees it. */
int rq_queue_reply_error(redisReply *rep, rq_error *err, const char *what)
{
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR) {
		int permanent = rq_redis_error_permanent(rep->str);
		rq_error_set(err, RQ_E_REDIS, "%s: %s", what, rep->str);
		freeReplyObject(rep);
		return permanent ? RQ_QUEUE_PERMANENT : -1;
	}
	return 0;
}

/* After a write a job depends on (queued, result stored, intent, grant):
 * have it on the master's replicas before going on, where the URL asks
 * for that (rq_redis_wait_replicas). A write WAIT cannot confirm stands on
 * the master alone; if the master dies before its replicas get it, the
 * job is redelivered (a lost result or grant) or was never queued. */
void rq_queue_replicate(rq_queue *q)
{
	rq_error ignored;

	rq_redis_wait_replicas(q->r, &ignored);
}

int rq_queue_ensure_group(rq_queue *q, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "XGROUP", "CREATE", q->jobs, RQ_QUEUE_GROUP,
					"0", "MKSTREAM", NULL);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOPERM", 6)) {
		rq_queue_reply_error(rep, err, "cannot create the consumer group");
		return 1;
	}
	/* (NOAUTH passes for a command in general: here the connection was
	 * made without the password the server wants) */
	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOAUTH", 6)) {
		rq_queue_reply_error(rep, err, "cannot create the consumer group");
		return RQ_QUEUE_PERMANENT;
	}
	if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "BUSYGROUP", 9) != 0) {
		/* only a key of the wrong type, or a server without streams, is
		 * for good here: a Redis out of memory refuses the create even
		 * when the group is there, and the workers are what drain it */
		int forever = !strncmp(rep->str, "WRONGTYPE", 9) ||
			      !strncmp(rep->str, "ERR unknown command", 19);
		rq_queue_reply_error(rep, err, "cannot create the consumer group");
		return forever ? RQ_QUEUE_PERMANENT : -1;
	}
	freeReplyObject(rep);
	return 0;
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

void rq_queue_msg_anon_id(const rq_queue_msg *m, char *buf, size_t size)
{
	snprintf(buf, size, "!%s", m->sid);
}

/* What the fields of an entry were, besides what was kept of them. */
typedef struct fields_seen {
	int id_twice, id_nul;
	int id_long;	   /* an "id" too long for a job id: not copied */
	size_t job_big;	   /* the size of a "job" too big for a job: not copied */
	int prior_big;	   /* a "prior" too big: not kept */
	const char *other; /* what else was there */
} fields_seen;

/* Why an entry is not a job, from what its fields were ("" when it is
 * one as far as they go). */
static void entry_problem(rq_queue_msg *m, const fields_seen *f)
{
	m->id_ok = m->id && !f->id_twice && !f->id_nul && rq_job_id_valid(m->id);
	if (!m->id && !f->id_long)
		snprintf(m->problem, sizeof(m->problem), "stream entry has no 'id' field");
	else if (f->id_twice)
		snprintf(m->problem, sizeof(m->problem),
			 "stream entry has two different 'id' fields");
	else if (!m->id_ok)
		snprintf(m->problem, sizeof(m->problem),
			 "stream field 'id' is not a valid job id: 1-128 of [A-Za-z0-9._:@/+-]");
	else if (f->job_big)
		snprintf(m->problem, sizeof(m->problem),
			 "stream field 'job' is %zu bytes: a job is at most %d bytes", f->job_big,
			 RQ_JOB_MAX_BYTES);
	else if (!m->job)
		snprintf(m->problem, sizeof(m->problem), "stream entry has no 'job' field");
	else if (f->other)
		snprintf(m->problem, sizeof(m->problem), "stream entry has %s", f->other);
}

/* 1 when the field's name is key. */
static int field_is(const redisReply *fk, const char *key)
{
	return fk->len == strlen(key) && !strcmp(fk->str, key);
}

/* The entry's "id" field: copied when it can be a job id, else only
 * noted; a second one is the same or not. 0, or -1 out of memory. */
static int take_id(rq_queue_msg *m, const redisReply *fv, fields_seen *f)
{
	if (m->id || f->id_long) {
		f->id_twice |=
		    f->id_long || strlen(m->id) != fv->len || memcmp(m->id, fv->str, fv->len);
		return 0;
	}
	if (fv->len > RQ_JOB_ID_MAX) {
		f->id_long = 1;
		return 0;
	}
	if (!(m->id = dupn(fv->str, fv->len)))
		return -1;
	f->id_nul = strlen(m->id) != fv->len;
	return 0;
}

/*
 * The fields of one entry: "id" and "job", once each (an id repeated alike
 * is one id); what else is there is the entry's problem. Nothing is copied
 * or looked into before its size is checked: an id longer than a job id,
 * a job bigger than RQ_JOB_MAX_BYTES, a prior result bigger than
 * RQ_QUEUE_PRIOR_MAX are not kept (the first two make the entry's
 * problem). 0, or -1 out of memory.
 */
static int parse_fields(rq_queue_msg *m, redisReply *f)
{
	fields_seen seen = {0};

	for (size_t j = 0; j + 1 < f->elements; j += 2) {
		redisReply *fk = f->element[j], *fv = f->element[j + 1];
		if (fk->type != REDIS_REPLY_STRING || fv->type != REDIS_REPLY_STRING)
			continue;
		if (field_is(fk, "id")) {
			if (take_id(m, fv, &seen) < 0)
				return -1;
		} else if (field_is(fk, "job") && !m->job && !seen.job_big) {
			if (fv->len > RQ_JOB_MAX_BYTES)
				seen.job_big = fv->len;
			else if (!(m->job = dupn(fv->str, fv->len)))
				return -1;
			m->job_len = m->job ? fv->len : 0;
		} else if (field_is(fk, "prior") && !m->prior && !seen.prior_big) {
			if (fv->len > RQ_QUEUE_PRIOR_MAX)
				seen.prior_big = 1;
			else if (!(m->prior = dupn(fv->str, fv->len)))
				return -1;
		} else if (field_is(fk, "history") && !m->history &&
			   fv->len <= RQ_QUEUE_PRIOR_MAX) {
			if (!(m->history = dupn(fv->str, fv->len)))
				return -1;
		} else if (field_is(fk, "prior_digest") && fv->len == 40) {
			memcpy(m->prior_digest, fv->str, 40);
			m->prior_digest[40] = '\0';
		} else if (!seen.other) {
			seen.other = field_is(fk, "job")
					 ? "two 'job' fields"
					 : "a field other than 'id', 'job' and 'prior'";
		}
	}
	entry_problem(m, &seen);
	return 0;
}

void rq_queue_msg_clear(rq_queue_msg *m)
{
	free(m->id);
	free(m->job);
	free(m->prior);
	free(m->history);
	memset(m, 0, sizeof(*m));
}

/* Free an array of n messages. */
static void msgs_free(rq_queue_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rq_queue_msg_clear(&msgs[i]);
	free(msgs);
}

/* Parse stream entries [[sid, [f, v, ...]], ...] into msgs. */
static int parse_entries(redisReply *arr, rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	rq_queue_msg *v;
	size_t k = 0;

	*msgs = NULL;
	*n = 0;
	if (!arr || arr->type != REDIS_REPLY_ARRAY || arr->elements == 0)
		return 0;
	if (!(v = calloc(arr->elements, sizeof(*v))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < arr->elements; i++) {
		redisReply *e = arr->element[i];
		rq_queue_msg *m;
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		m = &v[k++];
		snprintf(m->sid, sizeof(m->sid), "%s", e->element[0]->str);
		m->deliveries = 1;
		if (e->element[1]->type != REDIS_REPLY_ARRAY) {
			snprintf(m->problem, sizeof(m->problem), "stream entry has no fields");
		} else if (parse_fields(m, e->element[1]) < 0) {
			/* read but not handled: reclaimed after the visibility timeout */
			msgs_free(v, k);
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
	}
	*msgs = v;
	*n = k;
	return 0;
}

/* The reply of an XREADGROUP: the entries it carries (none on a timeout). */
static int read_reply(rq_queue *q, redisReply *rep, rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	int rc = 0;

	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep);
		return rq_queue_ensure_group(q, err) == 0 ? 0 : -1;
	}
	if (rq_queue_reply_error(rep, err, "read failed") < 0)
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

int rq_queue_read_send(rq_queue *q, const char *consumer, size_t count, int block_ms, rq_error *err)
{
	char cnt[32], blk[32];
	const char *argv[11];

	read_args(q, consumer, count, block_ms, cnt, blk, argv);
	return rq_redis_send(q->r, err, 11, argv);
}

int rq_queue_read_recv(rq_queue *q, rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	redisReply *rep;
	int r;

	*msgs = NULL;
	*n = 0;
	if ((r = rq_redis_recv(q->r, &rep, err)) <= 0)
		return r < 0 ? -1 : 0;
	return read_reply(q, rep, msgs, n, err) < 0 ? -1 : 1;
}

/* An XPENDING entry [id, consumer, idle ms, deliveries], as Redis sends
 * it: 1, else 0. */
static int pending_entry_ok(const redisReply *e)
{
	return e->type == REDIS_REPLY_ARRAY && e->elements == 4 &&
	       e->element[0]->type == REDIS_REPLY_STRING &&
	       e->element[1]->type == REDIS_REPLY_STRING &&
	       e->element[2]->type == REDIS_REPLY_INTEGER &&
	       e->element[3]->type == REDIS_REPLY_INTEGER;
}

/* How often entry sid was delivered (1 when it is no longer pending), or
 * -1 with err set. */
static long delivery_count(rq_queue *q, const char *sid, rq_error *err)
{
	redisReply *rep =
	    rq_redis_cmdv(q->r, 0, err, "XPENDING", q->jobs, RQ_QUEUE_GROUP, sid, sid, "1", NULL);
	long d = 1;

	if (rq_queue_reply_error(rep, err, "reclaim failed") < 0)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements > 1 ||
	    (rep->elements == 1 && !pending_entry_ok(rep->element[0])))
		d = rq_error_set(err, RQ_E_REDIS, "reclaim: unexpected reply to XPENDING");
	else if (rep->elements == 1)
		d = (long)rep->element[0]->element[3]->integer;
	freeReplyObject(rep);
	return d;
}

int rq_queue_reclaim(rq_queue *q, const char *consumer, long min_idle_ms, size_t count,
		     rq_queue_msg **msgs, size_t *n, rq_error *err)
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
		return rq_queue_ensure_group(q, err) == 0 ? 0 : -1;
	}
	if (rq_queue_reply_error(rep, err, "reclaim failed") < 0)
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
	if (rc < 0) { /* claimed but not handed on: reclaimed again later */
		msgs_free(*msgs, *n);
		*msgs = NULL;
		*n = 0;
	}
	return rc;
}

/* The keys of one job id. */
typedef struct jobkeys {
	char result[512], job[512], reply[512], intent[512], claim[512], waiting[512];
	char granted[512];
} jobkeys;

static void job_keys(const rq_queue *q, const char *id, const char *reply_to, jobkeys *k)
{
	key(q, k->result, sizeof(k->result), "result", id);
	key(q, k->job, sizeof(k->job), "job", id);
	key(q, k->reply, sizeof(k->reply), "reply", reply_to ? reply_to : "-");
	key(q, k->intent, sizeof(k->intent), "intent", id);
	key(q, k->claim, sizeof(k->claim), "claim", id);
	key(q, k->waiting, sizeof(k->waiting), "waiting", id);
	key(q, k->granted, sizeof(k->granted), "granted", id);
}

/* A command of C strings but for argv[bin], bin_len bytes (bin -1: none). */
static redisReply *cmd_bin(rq_queue *q, int argc, const char **argv, int bin, size_t bin_len,
			   rq_error *err)
{
	size_t lens[32];

	for (int i = 0; i < argc && i < 32; i++)
		lens[i] = strlen(argv[i]);
	if (bin >= 0 && bin < 32)
		lens[bin] = bin_len;
	return rq_redis_cmd(q->r, 0, err, argc < 32 ? argc : 32, argv, lens);
}

int rq_queue_claim(rq_queue *q, const rq_queue_msg *m, const char *id, const char *content,
		   const char *reply_to, const char *differs_result, char owner[64],
		   int *same_as_prior, rq_error *err)
{
	jobkeys k;
	char ttl[32];
	redisReply *rep;
	int rc;

	job_keys(q, id, reply_to, &k);
	snprintf(ttl, sizeof(ttl), "%d", q->opts.result_ttl_s);
	const char *has_reply = reply_to ? "1" : "0", *job = m->job ? m->job : "";
	const char *a[] = {"EVAL",    claim_lua,      "8",     q->jobs, k.claim,
			   k.result,  k.waiting,      k.reply, q->dead, q->stats,
			   k.job,     RQ_QUEUE_GROUP, m->sid,  content, ttl,
			   has_reply, differs_result, id,      job,	m->prior_digest};
	owner[0] = '\0';
	*same_as_prior = 0;
	rep = cmd_bin(q, 20, a, m->job ? 18 : -1, m->job_len, err);
	if ((rc = rq_queue_reply_error(rep, err, "cannot claim the job id")) < 0)
		return rc;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "claim: unexpected reply");
	}
	rc = (int)rep->element[0]->integer;
	*same_as_prior = rep->elements > 2 && rep->element[2]->type == REDIS_REPLY_INTEGER &&
			 rep->element[2]->integer == 1;
	if (rep->element[1]->type == REDIS_REPLY_STRING)
		snprintf(owner, 64, "%s", rep->element[1]->str);
	freeReplyObject(rep);
	return rc;
}

/* rq_queue_complete, strict; or lenient for rq_queue_dead_letter. */
static int complete(rq_queue *q, const rq_queue_msg *m, const char *id, const char *result,
		    const char *status, const char *reply_to, const char *dead_reason, int lenient,
		    rq_error *err)
{
	jobkeys k;
	char replyprefix[128], ttl[32], maxlen[32];
	redisReply *rep;
	int rc;

	job_keys(q, id, reply_to, &k);
	key(q, replyprefix, sizeof(replyprefix), "reply", "");
	snprintf(ttl, sizeof(ttl), "%d", q->opts.result_ttl_s);
	snprintf(maxlen, sizeof(maxlen), "%ld", q->opts.results_maxlen);
	const char *has_reply = reply_to ? "1" : "0", *job = m->job ? m->job : "";
	const char *dead = dead_reason ? dead_reason : "", *mode = lenient ? "1" : "0";
	const char *a[] = {"EVAL",  complete_lua, "12",	      q->jobs,	      k.result,	 q->results,
			   k.job,   q->stats,	  k.reply,    q->attempts,    q->dead,	 k.intent,
			   k.claim, k.waiting,	  k.granted,  RQ_QUEUE_GROUP, m->sid,	 id,
			   result,  status,	  ttl,	      maxlen,	      has_reply, dead,
			   job,	    mode,	  replyprefix};
	rep = cmd_bin(q, 27, a, m->job ? 24 : -1, m->job_len, err);
	if ((rc = rq_queue_reply_error(rep, err, "storing the result failed")) < 0)
		return rc;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 0 ? 1 : 0;
	freeReplyObject(rep);
	rq_queue_replicate(q);
	return rc;
}

int rq_queue_complete(rq_queue *q, const rq_queue_msg *m, const char *id, const char *result,
		      const char *status, const char *reply_to, const char *dead_reason,
		      rq_error *err)
{
	return complete(q, m, id, result, status, reply_to, dead_reason, 0, err);
}

int rq_queue_dead_letter(rq_queue *q, const rq_queue_msg *m, const char *id, const char *result,
			 const char *status, const char *reply_to, const char *reason,
			 rq_error *err)
{
	int rc = complete(q, m, id, result, status, reply_to, reason, 1, err);
	return rc < 0 ? rc : 0;
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

	if (rq_queue_reply_error(rep, err, "cannot keep the claim") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	return rc;
}

/* The string a command answered (malloc'ed), or NULL: nil (err cleared)
 * or an error (err set). Frees the reply. */
char *rq_queue_string_reply(redisReply *rep, rq_error *err, const char *what)
{
	char *s = NULL;

	if (rq_queue_reply_error(rep, err, what) < 0)
		return NULL;
	rq_error_clear(err);
	if (rep->type == REDIS_REPLY_STRING && !(s = dupn(rep->str, rep->len)))
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	freeReplyObject(rep);
	return s;
}

int rq_queue_note_attempt(rq_queue *q, const char *id, const char *info, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "HSET", q->attempts, id, info, NULL);
	if (rq_queue_reply_error(rep, err, "cannot record the attempt") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "HINCRBY", q->stats, "retried", "1", NULL);
	if (rq_queue_reply_error(rep, err, "cannot count the attempt") < 0)
		return -1;
	freeReplyObject(rep);
	return 0;
}

char *rq_queue_last_attempt(rq_queue *q, const char *id, rq_error *err)
{
	return rq_queue_string_reply(rq_redis_cmdv(q->r, 0, err, "HGET", q->attempts, id, NULL),
				     err, "cannot read the attempt");
}

int rq_queue_result(rq_queue *q, const char *id, char **json, rq_error *err)
{
	char reskey[512];

	key(q, reskey, sizeof(reskey), "result", id);
	*json = rq_queue_string_reply(rq_redis_cmdv(q->r, 0, err, "GET", reskey, NULL), err,
				      "cannot read the result");
	return *json ? 0 : err->code != RQ_OK ? -1 : 1;
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
	if (rq_queue_reply_error(rep, err, "waiting for results failed") < 0)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY && rep->type != REDIS_REPLY_NIL)
		rc =
		    rq_error_set(err, RQ_E_REDIS, "waiting for results: unexpected reply to BLPOP");
	else if (rep->type == REDIS_REPLY_ARRAY &&
		 (rep->elements != 2 || rep->element[1]->type != REDIS_REPLY_STRING))
		rc =
		    rq_error_set(err, RQ_E_REDIS, "waiting for results: unexpected reply to BLPOP");
	else if (rep->type == REDIS_REPLY_ARRAY &&
		 !(*json = dupn(rep->element[1]->str, rep->element[1]->len)))
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (rep->type == REDIS_REPLY_ARRAY)
		rc = 0;
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
	if (rq_queue_reply_error(rep, err, "heartbeat failed") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "SET", alive, "1", "EX", ttl, NULL);
	if (rq_queue_reply_error(rep, err, "heartbeat failed") < 0)
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
	if (rq_queue_reply_error(rep, err, "cannot remove the heartbeat") < 0)
		return -1;
	freeReplyObject(rep);
	rep = rq_redis_cmdv(q->r, 0, err, "HDEL", q->workers, worker, NULL);
	if (rq_queue_reply_error(rep, err, "cannot remove the heartbeat") < 0)
		return -1;
	freeReplyObject(rep);
	return 0;
}

/* o[key] = v, the key being any bytes (shown as rq_result_json_bytesn
 * shows them); takes v (may be NULL: out of memory). 0, or -1 out of
 * memory. */
static int set_bytes(json_t *o, const redisReply *key, json_t *v)
{
	json_t *k = rq_result_json_bytesn(key->str, key->len);
	int rc = -1;

	if (k && v)
		rc = json_object_setn_new(o, json_string_value(k), json_string_length(k), v);
	else
		json_decref(v);
	json_decref(k);
	return rc;
}

/* A hash reply as an object: numbers, or JSON values (a string, its bytes
 * shown safely, when a value does not parse). NULL when memory runs out. */
static json_t *hash_to_json(redisReply *rep, int numbers)
{
	json_t *o = json_object();
	int bad = !o;

	for (size_t i = 0; !bad && rep->type == REDIS_REPLY_ARRAY && i + 1 < rep->elements;
	     i += 2) {
		const redisReply *k = rep->element[i], *v = rep->element[i + 1];
		json_t *parsed;
		if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
			continue;
		parsed = numbers ? json_integer(strtoll(v->str, NULL, 10))
				 : json_loadb(v->str, v->len, 0, NULL);
		bad |= set_bytes(o, k, parsed ? parsed : rq_result_json_bytesn(v->str, v->len));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One command's integer reply (or the first element of an array reply:
 * XPENDING's summary), 0 when it is neither. strict: an error reply fails
 * it; else it counts as 0 (XPENDING before the group exists). 0, or -1
 * with err set. */
static int count_of(rq_queue *q, const char *cmd, const char *key, const char *arg, int strict,
		    long long *out, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, cmd, key, arg, NULL);

	if (!rep || (strict && rq_queue_reply_error(rep, err, "stats failed") < 0))
		return -1;
	*out = rep->type == REDIS_REPLY_INTEGER ? rep->integer
	       : rep->type == REDIS_REPLY_ARRAY && rep->elements > 0 &&
		       rep->element[0]->type == REDIS_REPLY_INTEGER
		   ? rep->element[0]->integer
		   : 0;
	freeReplyObject(rep);
	return 0;
}

/* A hash as an object (hash_to_json); NULL with err set. */
static json_t *hash_of(rq_queue *q, const char *key, int numbers, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "HGETALL", key, NULL);
	json_t *o;

	if (rq_queue_reply_error(rep, err, "stats failed") < 0)
		return NULL;
	o = hash_to_json(rep, numbers);
	freeReplyObject(rep);
	if (!o)
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return o;
}

/* The workers' heartbeats, each marked alive or not; NULL with err set. */
static json_t *workers_json(rq_queue *q, rq_error *err)
{
	json_t *workers = hash_of(q, q->workers, 0, err), *wv;
	const char *wk;
	long long alive;

	json_object_foreach(workers, wk, wv)
	{
		char k[512];
		key(q, k, sizeof(k), "worker", wk);
		if (count_of(q, "EXISTS", k, NULL, 0, &alive, err) < 0) {
			json_decref(workers);
			return NULL;
		}
		if (json_is_object(wv) &&
		    json_object_set_new(wv, "alive", json_boolean(alive)) < 0) {
			json_decref(workers);
			rq_error_set(err, RQ_E_NOMEM, "out of memory");
			return NULL;
		}
	}
	return workers;
}

int rq_queue_stats(rq_queue *q, json_t **out, rq_error *err)
{
	long long queued, pending, dead;
	json_t *counters = NULL, *workers = NULL;

	*out = NULL;
	if (!(counters = hash_of(q, q->stats, 1, err)) ||
	    count_of(q, "XLEN", q->jobs, NULL, 1, &queued, err) < 0 ||
	    count_of(q, "XPENDING", q->jobs, RQ_QUEUE_GROUP, 0, &pending, err) < 0 ||
	    count_of(q, "XLEN", q->dead, NULL, 1, &dead, err) < 0 ||
	    !(workers = workers_json(q, err))) {
		json_decref(counters);
		return -1;
	}
	*out = json_pack("{s:o, s:I, s:I, s:I, s:o}", "counters", counters, "queued",
			 (json_int_t)queued, "pending", (json_int_t)pending, "dead",
			 (json_int_t)dead, "workers", workers);
	if (!*out)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* The integer after the field name in one group's flat list; -1 when it
 * is missing or nil (Redis cannot tell the lag after some deletions). */
static long long group_field(const redisReply *g, const char *name)
{
	for (size_t i = 0; i + 1 < g->elements; i += 2)
		if (g->element[i]->type == REDIS_REPLY_STRING && !strcmp(g->element[i]->str, name))
			return g->element[i + 1]->type == REDIS_REPLY_INTEGER
				   ? g->element[i + 1]->integer
				   : -1;
	return -1;
}

/* The queue's group in an XINFO GROUPS reply, or NULL. */
static const redisReply *our_group(const redisReply *rep)
{
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
		const redisReply *g = rep->element[i];
		for (size_t j = 0; g->type == REDIS_REPLY_ARRAY && j + 1 < g->elements; j += 2)
			if (g->element[j]->type == REDIS_REPLY_STRING &&
			    !strcmp(g->element[j]->str, "name") &&
			    g->element[j + 1]->type == REDIS_REPLY_STRING &&
			    !strcmp(g->element[j + 1]->str, RQ_QUEUE_GROUP))
				return g;
	}
	return NULL;
}

int rq_queue_group_counts(rq_queue *q, long long *pending, long long *lag, rq_error *err)
{
	redisReply *rep = rq_redis_cmdv(q->r, 0, err, "XINFO", "GROUPS", q->jobs, NULL);
	const redisReply *g;
	long long queued;
	int rc = 0;

	if (rq_queue_reply_error(rep, err, "cannot read the group") < 0)
		return -1;
	if (!(g = our_group(rep)) || (*pending = group_field(g, "pending")) < 0)
		rc = rq_error_set(err, RQ_E_REDIS, "no group '%s' on %s", RQ_QUEUE_GROUP, q->jobs);
	else if ((*lag = group_field(g, "lag")) < 0 &&
		 count_of(q, "XLEN", q->jobs, NULL, 1, &queued, err) == 0)
		*lag = queued > *pending ? queued - *pending : 0;
	freeReplyObject(rep);
	return rc;
}

/* One dead letter: its entry id and its fields (their bytes shown
 * safely: a job's text need not be UTF-8). NULL when memory runs out. */
static json_t *dead_entry_json(const redisReply *e)
{
	const redisReply *f;
	json_t *o;
	int bad;

	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
		return json_object(); /* not an entry: nothing to show */
	f = e->element[1];
	if (!(o = json_object()))
		return NULL;
	bad = json_object_set_new(o, "entry",
				  rq_result_json_bytesn(e->element[0]->str, e->element[0]->len));
	for (size_t j = 0; !bad && j + 1 < f->elements; j += 2)
		if (f->element[j]->type == REDIS_REPLY_STRING &&
		    f->element[j + 1]->type == REDIS_REPLY_STRING)
			bad |= set_bytes(
			    o, f->element[j],
			    rq_result_json_bytesn(f->element[j + 1]->str, f->element[j + 1]->len));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int rq_queue_dead_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();
	int bad = !a;

	*out = NULL;
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(q->r, 0, err, "XRANGE", q->dead, "-", "+", "COUNT", cnt, NULL);
	if (rq_queue_reply_error(rep, err, "cannot list dead letters") < 0) {
		json_decref(a);
		return -1;
	}
	for (size_t i = 0; !bad && rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++)
		bad |= json_array_append_new(a, dead_entry_json(rep->element[i]));
	freeReplyObject(rep);
	if (bad) {
		json_decref(a);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	*out = a;
	return 0;
}

/* The pending entries of an XPENDING reply, appended to a: 0, or -1 with
 * err set (an entry that is not one, or out of memory). */
static int pending_entries(const redisReply *rep, json_t *a, rq_error *err)
{
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
		const redisReply *e = rep->element[i];
		if (!pending_entry_ok(e))
			return rq_error_set(
			    err, RQ_E_REDIS,
			    "cannot list pending jobs: unexpected reply to XPENDING");
		if (json_array_append_new(
			a, json_pack("{s:o, s:o, s:I, s:I}", "entry",
				     rq_result_json_bytesn(e->element[0]->str, e->element[0]->len),
				     "consumer",
				     rq_result_json_bytesn(e->element[1]->str, e->element[1]->len),
				     "idle_ms", (json_int_t)e->element[2]->integer, "deliveries",
				     (json_int_t)e->element[3]->integer)) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

int rq_queue_pending_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();
	int rc = 0;

	*out = NULL;
	if (!a)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(q->r, 0, err, "XPENDING", q->jobs, RQ_QUEUE_GROUP, "-", "+", cnt, NULL);
	if (rep && rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep); /* no group yet: nothing is pending */
	} else if (rq_queue_reply_error(rep, err, "cannot list pending jobs") < 0) {
		rc = -1;
	} else {
		rc = pending_entries(rep, a, err);
		freeReplyObject(rep);
	}
	if (rc < 0)
		json_decref(a);
	else
		*out = a;
	return rc;
}
