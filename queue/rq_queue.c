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

const char *rq_queue_prefix(const rq_queue *q)
{
	return q->prefix;
}

const char *rq_queue_jobs_key(const rq_queue *q)
{
	return q->jobs;
}

const char *rq_queue_stats_key(const rq_queue *q)
{
	return q->stats;
}

const char *rq_queue_workers_key(const rq_queue *q)
{
	return q->workers;
}

const char *rq_queue_dead_key(const rq_queue *q)
{
	return q->dead;
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

/* n bytes of s as a C string (malloc'ed; NULL: out of memory). */
char *rq_queue_dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
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
	if (rep->type == REDIS_REPLY_STRING && !(s = rq_queue_dupn(rep->str, rep->len)))
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
		 !(*json = rq_queue_dupn(rep->element[1]->str, rep->element[1]->len)))
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
