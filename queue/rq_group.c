/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_group: the scripts that put a job in the queue's stream or park it
 * in its group, and pass a group's turn on (see rq_group.h). The parts:
 * the Lua they share; submitting; a worker's gate; passing turns on; the
 * counts.
 */
#include "rq_group.h"

#include "rq_job.h"
#include "rq_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the Lua they share ---- */

/*
 * KEYS[1] is the jobs stream "replayq:{Q}:jobs"; P its prefix, GROUPS the
 * groups hash. A script checks the type of the keys it writes before its
 * first write (want); keys built from P (a job's key, a group's stream)
 * have the queue's hash tag too, so that on a Cluster they are on the
 * script's node. A missing key reads as false in Lua (GET, HGET).
 *   live(entry)        the entry is in the jobs stream (queued or running)
 *   field(f, name)     a field of an entry's flat field list
 *   setjob(id, v, was) job:<id> = v, unless it names another entry than was
 *   advance(g)         the turn of group g passes to its first parked job,
 *                      moved to the tail of the jobs stream; none: idle
 *   turn(g)            "<entry> <id>" that holds g's turn (false: idle),
 *                      passed on first when its entry left the stream
 *   parked(p)          the group and fields of the parked job that the job
 *                      key's value p names, if it is still there
 *   place(g, f, id)    add a job: parked behind its group's turn, or
 *                      queued (and its group's turn when it has one);
 *                      its entry, and 1 when parked
 *   held(p)            {0, where, '', its text} of the job p names (queued,
 *                      running or parked), or nil
 */
#define GROUP_LUA                                                                                  \
	RQ_QUEUE_LUA_WANT                                                                          \
	"local P = string.sub(KEYS[1], 1, #KEYS[1] - 4)\n"                                         \
	"local GROUPS = P .. 'groups'\n"                                                           \
	"local function live(sid)\n"                                                               \
	"  return sid and string.match(sid, '^%d+%-%d+$') ~= nil and\n"                            \
	"    #redis.call('XRANGE', KEYS[1], sid, sid) == 1\n"                                      \
	"end\n"                                                                                    \
	"local function field(f, name)\n"                                                          \
	"  for i = 1, #f - 1, 2 do if f[i] == name then return f[i + 1] end end\n"                 \
	"  return nil\n"                                                                           \
	"end\n"                                                                                    \
	"local function setjob(id, v, was)\n"                                                      \
	"  local k = P .. 'job:' .. id\n"                                                          \
	"  if want(k, 'string') then return end\n"                                                 \
	"  local cur = redis.call('GET', k)\n"                                                     \
	"  if not was or not cur or cur == was then redis.call('SET', k, v) end\n"                 \
	"end\n"                                                                                    \
	"local function advance(g)\n"                                                              \
	"  local gk = P .. 'group:' .. g\n"                                                        \
	"  if want(gk, 'stream') then return end\n"                                                \
	"  while true do\n"                                                                        \
	"    local first = redis.call('XRANGE', gk, '-', '+', 'COUNT', 1)\n"                       \
	"    if #first == 0 then\n"                                                                \
	"      redis.call('HDEL', GROUPS, g)\n"                                                    \
	"      redis.call('DEL', gk)\n"                                                            \
	"      return\n"                                                                           \
	"    end\n"                                                                                \
	"    local gsid, f = first[1][1], first[1][2]\n"                                           \
	"    local id = field(f, 'id')\n"                                                          \
	"    redis.call('XDEL', gk, gsid)\n"                                                       \
	"    if id and field(f, 'job') then\n"                                                     \
	"      local sid = redis.call('XADD', KEYS[1], '*', unpack(f))\n"                          \
	"      redis.call('HSET', GROUPS, g, sid .. ' ' .. id)\n"                                  \
	"      setjob(id, sid, gsid .. ' ' .. g)\n"                                                \
	"      if redis.call('XLEN', gk) == 0 then redis.call('DEL', gk) end\n"                    \
	"      return\n"                                                                           \
	"    end\n"                                                                                \
	"  end\n"                                                                                  \
	"end\n"                                                                                    \
	"local function turn(g)\n"                                                                 \
	"  local h = redis.call('HGET', GROUPS, g)\n"                                              \
	"  if h and not live(string.match(h, '^(%S+)')) then\n"                                    \
	"    advance(g)\n"                                                                         \
	"    h = redis.call('HGET', GROUPS, g)\n"                                                  \
	"  end\n"                                                                                  \
	"  return h\n"                                                                             \
	"end\n"                                                                                    \
	"local function parked(p)\n"                                                               \
	"  local gsid, g = string.match(p or '', '^(%d+%-%d+) (%S+)$')\n"                          \
	"  if not gsid or want(P .. 'group:' .. g, 'stream') then return nil end\n"                \
	"  local e = redis.call('XRANGE', P .. 'group:' .. g, gsid, gsid)\n"                       \
	"  if #e == 1 then return g, e[1][2] end\n"                                                \
	"  return nil\n"                                                                           \
	"end\n"                                                                                    \
	"local function place(g, f, id)\n"                                                         \
	"  if g and g ~= '' and turn(g) then\n"                                                    \
	"    local gsid = redis.call('XADD', P .. 'group:' .. g, '*', unpack(f))\n"                \
	"    setjob(id, gsid .. ' ' .. g, nil)\n"                                                  \
	"    return gsid, 1\n"                                                                     \
	"  end\n"                                                                                  \
	"  local sid = redis.call('XADD', KEYS[1], '*', unpack(f))\n"                              \
	"  if g and g ~= '' then redis.call('HSET', GROUPS, g, sid .. ' ' .. id) end\n"            \
	"  setjob(id, sid, nil)\n"                                                                 \
	"  return sid, 0\n"                                                                        \
	"end\n"                                                                                    \
	"local function held(p)\n"                                                                 \
	"  if live(p) then\n"                                                                      \
	"    return {0, p, '', field(redis.call('XRANGE', KEYS[1], p, p)[1][2], 'job') or ''}\n"   \
	"  end\n"                                                                                  \
	"  local g, f = parked(p)\n"                                                               \
	"  if g then return {0, 'group ' .. g, '', field(f, 'job') or ''} end\n"                   \
	"  return nil\n"                                                                           \
	"end\n"

/* KEYS: jobs jobkey result stats claim [groups gstream]  ARGV: job force
 * [group]. The id is the rest of the job key after "replayq:{Q}:job:", as
 * long as the jobs key. An ungrouped job's command has 10 arguments, no
 * more (Redis answers an unauthenticated client's longer one with a
 * protocol error instead of NOAUTH; a grouped one's is longer, but submit
 * has met NOAUTH by then, creating the consumer group). Refused:
 * {0, where, the claim's digest, the job's text}; queued: {1, entry,
 * parked}. A --force copy of a job that had a result carries that result
 * and the digest it was for (prior, prior_digest). */
static const char enqueue_lua[] =
    GROUP_LUA "local id = string.sub(KEYS[2], #KEYS[1] + 1)\n"
	      "local g = ARGV[3]\n"
	      "local bad = want(KEYS[1], 'stream') or want(KEYS[2], 'string') or\n"
	      "  want(KEYS[3], 'string') or want(KEYS[4], 'hash') or want(KEYS[5], 'string')\n"
	      "if not bad and g then\n"
	      "  bad = want(GROUPS, 'hash') or want(P .. 'group:' .. g, 'stream')\n"
	      "end\n"
	      "if bad then return redis.error_reply(bad) end\n"
	      "local p = redis.call('GET', KEYS[2])\n"
	      "local c = redis.call('GET', KEYS[5])\n"
	      "local digest = c and string.match(c, ' (%x+)$') or ''\n"
	      "if ARGV[2] ~= '1' then\n"
	      "  if redis.call('EXISTS', KEYS[3]) == 1 then return {0, 'result', digest, ''} end\n"
	      "  if p then return held(p) or {0, p, '', ''} end\n"
	      "end\n"
	      "local h = held(p)\n"
	      "if h then return h end\n"
	      "local f = {'id', id, 'job', ARGV[1]}\n"
	      "if ARGV[2] == '1' then\n"
	      "  local prior = redis.call('GET', KEYS[3])\n"
	      "  redis.call('DEL', KEYS[3], KEYS[5])\n"
	      "  if prior and #digest == 40 then\n"
	      "    f = {'id', id, 'job', ARGV[1], 'prior', prior, 'prior_digest', digest}\n"
	      "  end\n"
	      "end\n"
	      "local sid, waits = place(g, f, id)\n"
	      "redis.call('HINCRBY', KEYS[4], 'submitted', 1)\n"
	      "return {1, sid, waits}\n";

/* KEYS: jobs groups gstream jobkey  ARGV: group sid id consumer-group.
 * 0: the entry holds the turn (taken if the group was idle); 1: parked
 * behind the group's jobs, acknowledged and deleted from the stream. */
static const char gate_lua[] =
    GROUP_LUA "local g, sid, id = ARGV[1], ARGV[2], ARGV[3]\n"
	      "local bad = want(KEYS[2], 'hash') or want(KEYS[3], 'stream') or\n"
	      "  want(KEYS[4], 'string')\n"
	      "if bad then return redis.error_reply(bad) end\n"
	      "local h = redis.call('HGET', GROUPS, g)\n"
	      "if h and string.match(h, '^(%S+)') == sid then return 0 end\n"
	      "if not turn(g) then\n"
	      "  redis.call('HSET', GROUPS, g, sid .. ' ' .. id)\n"
	      "  return 0\n"
	      "end\n"
	      "local e = redis.call('XRANGE', KEYS[1], sid, sid)\n"
	      "if #e == 1 then\n"
	      "  local gsid = redis.call('XADD', KEYS[3], '*', unpack(e[1][2]))\n"
	      "  setjob(id, gsid .. ' ' .. g, sid)\n"
	      "end\n"
	      "redis.call('XACK', KEYS[1], ARGV[4], sid)\n"
	      "redis.call('XDEL', KEYS[1], sid)\n"
	      "return 1\n";

/* KEYS: jobs jobkey result stats claim dead [groups gstream]
 * ARGV: job history dead expected-result group older-dead...
 * Requeue a dead letter (entry dead) under its id, with its history, and
 * remove the older dead letters of the same job; refused ({0, why}) when
 * the dead letter is gone, the stored result is not the one expected
 * ("" none), or a job of the id is queued, parked or running. */
static const char requeue_lua[] = GROUP_LUA
    "local id = string.sub(KEYS[2], #KEYS[1] + 1)\n"
    "local g = ARGV[5] ~= '' and ARGV[5] or nil\n"
    "local bad = want(KEYS[1], 'stream') or want(KEYS[2], 'string') or\n"
    "  want(KEYS[3], 'string') or want(KEYS[4], 'hash') or want(KEYS[5], 'string') or\n"
    "  want(KEYS[6], 'stream')\n"
    "if not bad and g then\n"
    "  bad = want(GROUPS, 'hash') or want(P .. 'group:' .. g, 'stream')\n"
    "end\n"
    "if bad then return redis.error_reply(bad) end\n"
    "if #redis.call('XRANGE', KEYS[6], ARGV[3], ARGV[3]) == 0 then return {0, 'gone'} end\n"
    "if (redis.call('GET', KEYS[3]) or '') ~= ARGV[4] then return {0, 'changed'} end\n"
    "if held(redis.call('GET', KEYS[2])) then return {0, 'queued'} end\n"
    "redis.call('DEL', KEYS[3], KEYS[5])\n"
    "for i = 6, #ARGV do redis.call('XDEL', KEYS[6], ARGV[i]) end\n"
    "redis.call('XDEL', KEYS[6], ARGV[3])\n"
    "local sid, waits = place(g, {'id', id, 'job', ARGV[1], 'history', ARGV[2]}, id)\n"
    "redis.call('HINCRBY', KEYS[4], 'requeued', 1)\n"
    "return {1, sid, waits}\n";

/* KEYS: jobs groups  ARGV: group. 1 when the turn passed on. */
static const char release_lua[] = GROUP_LUA "local bad = want(KEYS[2], 'hash')\n"
					    "if bad then return redis.error_reply(bad) end\n"
					    "local before = redis.call('HGET', GROUPS, ARGV[1])\n"
					    "return turn(ARGV[1]) ~= before and 1 or 0\n";

/* KEYS: jobs groups  ARGV: cursor count. {next cursor, turns passed on}. */
static const char sweep_lua[] =
    GROUP_LUA "local bad = want(KEYS[2], 'hash')\n"
	      "if bad then return redis.error_reply(bad) end\n"
	      "local r = redis.call('HSCAN', KEYS[2], ARGV[1], 'COUNT', ARGV[2])\n"
	      "local n = 0\n"
	      "for i = 1, #r[2] - 1, 2 do\n"
	      "  if not live(string.match(r[2][i + 1], '^(%S+)')) then\n"
	      "    advance(r[2][i])\n"
	      "    n = n + 1\n"
	      "  end\n"
	      "end\n"
	      "return {r[1], n}\n";

/* KEYS: jobs groups. {groups, parked jobs}; writes nothing. */
static const char counts_lua[] =
    GROUP_LUA "if want(KEYS[2], 'hash') then return {0, 0} end\n"
	      "local parked, cur = 0, '0'\n"
	      "repeat\n"
	      "  local r = redis.call('HSCAN', KEYS[2], cur, 'COUNT', 1000)\n"
	      "  cur = r[1]\n"
	      "  for i = 1, #r[2] - 1, 2 do\n"
	      "    local gk = P .. 'group:' .. r[2][i]\n"
	      "    if not want(gk, 'stream') then parked = parked + redis.call('XLEN', gk) end\n"
	      "  end\n"
	      "until cur == '0'\n"
	      "return {redis.call('HLEN', KEYS[2]), parked}\n";

/* ---- keys and replies ---- */

/* The queue's key "replayq:{Q}:<kind><rest>". */
static void qkey(rq_queue *q, char *buf, size_t size, const char *kind, const char *rest)
{
	snprintf(buf, size, "%s%s%s", rq_queue_prefix(q), kind, rest ? rest : "");
}

/* An error reply becomes RQ_E_REDIS (RQ_QUEUE_PERMANENT when the same
 * command would get it again), freed; a missing reply is -1. 0 else. */
static int reply_error(redisReply *rep, rq_error *err, const char *what)
{
	int permanent;

	if (!rep)
		return -1;
	if (rep->type != REDIS_REPLY_ERROR)
		return 0;
	permanent = rq_redis_error_permanent(rep->str);
	rq_error_set(err, RQ_E_REDIS, "%s: %s", what, rep->str);
	freeReplyObject(rep);
	return permanent ? RQ_QUEUE_PERMANENT : -1;
}

/* An integer element of an array reply, or def. */
static long long int_at(const redisReply *rep, size_t i, long long def)
{
	if (rep->type != REDIS_REPLY_ARRAY || i >= rep->elements)
		return def;
	if (rep->element[i]->type == REDIS_REPLY_INTEGER)
		return rep->element[i]->integer;
	if (rep->element[i]->type == REDIS_REPLY_STRING)
		return strtoll(rep->element[i]->str, NULL, 10);
	return def;
}

/* A string element of an array reply ("" when it is none). */
static const char *str_at(const redisReply *rep, size_t i, size_t *len)
{
	*len = 0;
	if (rep->type != REDIS_REPLY_ARRAY || i >= rep->elements ||
	    rep->element[i]->type != REDIS_REPLY_STRING)
		return "";
	*len = rep->element[i]->len;
	return rep->element[i]->str;
}

/* ---- submitting ---- */

/* What holds the id, from a refusal {0, where, digest, job text}: the
 * digest is the claim's, else that of the text. -1 out of memory. */
static int refused(const redisReply *rep, rq_group_stored *stored, char sid[64])
{
	size_t n, dn, tn;
	const char *where = str_at(rep, 1, &n), *digest = str_at(rep, 2, &dn),
		   *text = str_at(rep, 3, &tn);

	snprintf(stored->where, sizeof(stored->where), "%.*s", (int)n, where);
	snprintf(sid, 64, "%.*s", (int)(n < 63 ? n : 63), where);
	stored->digest[0] = '\0';
	if (dn == 40)
		snprintf(stored->digest, sizeof(stored->digest), "%.40s", digest);
	else if (tn && rq_job_digest(text, tn, stored->digest) < 0)
		return -1;
	return 0;
}

/* The reply of the enqueue script: 0 queued, 1 refused, < 0 (freed). */
static int enqueue_reply(redisReply *rep, char sid[64], int *parked, rq_group_stored *stored,
			 rq_error *err)
{
	size_t n;
	const char *s;
	int rc;

	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "enqueue: unexpected reply");
	}
	if (rep->element[0]->integer == 1) {
		s = str_at(rep, 1, &n);
		snprintf(sid, 64, "%.*s", (int)(n < 63 ? n : 63), s);
		*parked = int_at(rep, 2, 0) == 1;
		rc = 0;
	} else if (refused(rep, stored, sid) < 0) {
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	} else {
		rc = 1;
	}
	freeReplyObject(rep);
	return rc;
}

int rq_group_enqueue(rq_queue *q, const char *id, const char *job, size_t len, const char *group,
		     int force, char sid[64], int *parked, rq_group_stored *stored, rq_error *err)
{
	char jobs[128], jobkey[512], reskey[512], stats[128], claim[512], groups[128], gkey[512];
	const char *a[13] = {"EVAL", enqueue_lua, group ? "7" : "5", jobs, jobkey, reskey,
			     stats,  claim};
	size_t lens[13];
	int argc = 8, rc;
	redisReply *rep;

	qkey(q, jobs, sizeof(jobs), "jobs", NULL);
	qkey(q, jobkey, sizeof(jobkey), "job:", id);
	qkey(q, reskey, sizeof(reskey), "result:", id);
	qkey(q, stats, sizeof(stats), "stats", NULL);
	qkey(q, claim, sizeof(claim), "claim:", id);
	qkey(q, groups, sizeof(groups), "groups", NULL);
	qkey(q, gkey, sizeof(gkey), "group:", group);
	if (group) {
		a[argc++] = groups;
		a[argc++] = gkey;
	}
	a[argc++] = job;
	a[argc++] = force ? "1" : "0";
	if (group)
		a[argc++] = group;
	for (int i = 0; i < argc; i++)
		lens[i] = a[i] == job ? len : strlen(a[i]);
	*parked = 0;
	memset(stored, 0, sizeof(*stored));
	rep = rq_redis_cmd(rq_queue_redis(q), 0, err, argc, a, lens);
	if ((rc = reply_error(rep, err, "enqueue failed")) < 0 ||
	    (rc = enqueue_reply(rep, sid, parked, stored, err)) != 0)
		return rc;
	rq_redis_wait_replicas(rq_queue_redis(q), err);
	return 0;
}

/* The arguments of a requeue: EVAL, the script, the key count, the keys,
 * then ARGV; lens set. The number of arguments, or -1 out of memory. */
static int requeue_argv(rq_queue *q, const rq_group_requeue_args *r, char keys[8][512],
			const char ***argv, size_t **lens)
{
	static const char *const kinds[] = {"jobs",   "job:", "result:", "stats",
					    "claim:", "dead", "groups",	 "group:"};
	int nkeys = r->group ? 8 : 6, argc = 3 + nkeys + 5 + (int)r->nolder, k = 0;

	*argv = calloc((size_t)argc, sizeof(**argv));
	*lens = calloc((size_t)argc, sizeof(**lens));
	if (!*argv || !*lens)
		return -1;
	for (int i = 0; i < nkeys; i++)
		qkey(q, keys[i], 512, kinds[i],
		     i == 1 || i == 2 || i == 4 ? r->id
		     : i == 7			? r->group
						: NULL);
	(*argv)[k++] = "EVAL";
	(*argv)[k++] = requeue_lua;
	(*argv)[k++] = r->group ? "8" : "6";
	for (int i = 0; i < nkeys; i++)
		(*argv)[k++] = keys[i];
	(*argv)[k++] = r->job;
	(*argv)[k++] = r->history;
	(*argv)[k++] = r->dead;
	(*argv)[k++] = r->result ? r->result : "";
	(*argv)[k++] = r->group ? r->group : "";
	for (size_t i = 0; i < r->nolder; i++)
		(*argv)[k++] = r->older[i];
	for (int i = 0; i < argc; i++)
		(*lens)[i] = (*argv)[i] == r->job ? r->job_len : strlen((*argv)[i]);
	return argc;
}

int rq_group_requeue(rq_queue *q, const rq_group_requeue_args *r, char sid[64], int *parked,
		     char why[32], rq_error *err)
{
	char keys[8][512];
	const char **argv = NULL;
	size_t *lens = NULL, n;
	redisReply *rep = NULL;
	int argc = requeue_argv(q, r, keys, &argv, &lens), rc;

	*parked = 0;
	why[0] = '\0';
	if (argc < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else
		rep = rq_redis_cmd(rq_queue_redis(q), 0, err, argc, argv, lens);
	free(argv);
	free(lens);
	if (argc < 0 || (rc = reply_error(rep, err, "cannot requeue the job")) < 0)
		return rc;
	if (rep->type != REDIS_REPLY_ARRAY || int_at(rep, 0, -1) < 0) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "requeue: unexpected reply");
	}
	const char *s = str_at(rep, 1, &n);
	rc = int_at(rep, 0, -1) == 1 ? 0 : 1;
	if (rc == 0) {
		snprintf(sid, 64, "%.*s", (int)(n < 63 ? n : 63), s);
		*parked = int_at(rep, 2, 0) == 1;
	} else {
		snprintf(why, 32, "%.*s", (int)(n < 31 ? n : 31), s);
	}
	freeReplyObject(rep);
	if (rc == 0)
		rq_redis_wait_replicas(rq_queue_redis(q), err);
	return rc;
}

/* ---- a worker's gate ---- */

int rq_group_gate(rq_queue *q, const rq_queue_msg *m, const char *id, const char *group,
		  rq_error *err)
{
	char jobs[128], groups[128], gkey[512], jobkey[512];
	redisReply *rep;
	int rc;

	qkey(q, jobs, sizeof(jobs), "jobs", NULL);
	qkey(q, groups, sizeof(groups), "groups", NULL);
	qkey(q, gkey, sizeof(gkey), "group:", group);
	qkey(q, jobkey, sizeof(jobkey), "job:", id);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", gate_lua, "4", jobs, groups, gkey,
			    jobkey, group, m->sid, id, RQ_QUEUE_GROUP, NULL);
	if ((rc = reply_error(rep, err, "cannot check the job's group")) < 0)
		return rc;
	if (rep->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "group gate: unexpected reply");
	}
	rc = rep->integer == 1;
	freeReplyObject(rep);
	if (rc)
		rq_redis_wait_replicas(rq_queue_redis(q), err);
	return rc;
}

/* ---- passing turns on ---- */

int rq_group_release(rq_queue *q, const char *group, rq_error *err)
{
	char jobs[128], groups[128];
	redisReply *rep;
	int rc;

	qkey(q, jobs, sizeof(jobs), "jobs", NULL);
	qkey(q, groups, sizeof(groups), "groups", NULL);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", release_lua, "2", jobs, groups,
			    group, NULL);
	if (reply_error(rep, err, "cannot pass the group's turn on") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	if (rc)
		rq_redis_wait_replicas(rq_queue_redis(q), err);
	return rc;
}

int rq_group_sweep(rq_queue *q, char cursor[32], int count, rq_error *err)
{
	char jobs[128], groups[128], cnt[32];
	redisReply *rep;
	size_t n;
	const char *next;
	long long passed;

	qkey(q, jobs, sizeof(jobs), "jobs", NULL);
	qkey(q, groups, sizeof(groups), "groups", NULL);
	snprintf(cnt, sizeof(cnt), "%d", count);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", sweep_lua, "2", jobs, groups, cursor,
			    cnt, NULL);
	if (reply_error(rep, err, "cannot sweep the groups") < 0)
		return -1;
	next = str_at(rep, 0, &n);
	passed = int_at(rep, 1, -1);
	if (passed < 0 || !n || n > 31) {
		freeReplyObject(rep);
		return rq_error_set(err, RQ_E_REDIS, "group sweep: unexpected reply");
	}
	snprintf(cursor, 32, "%.*s", (int)n, next);
	freeReplyObject(rep);
	if (passed)
		rq_redis_wait_replicas(rq_queue_redis(q), err);
	return (int)passed;
}

/* ---- the counts ---- */

int rq_group_counts(rq_queue *q, long long *groups, long long *parked, rq_error *err)
{
	char jobs[128], gk[128];
	redisReply *rep;

	qkey(q, jobs, sizeof(jobs), "jobs", NULL);
	qkey(q, gk, sizeof(gk), "groups", NULL);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", counts_lua, "2", jobs, gk, NULL);
	if (reply_error(rep, err, "cannot count the groups") < 0)
		return -1;
	*groups = int_at(rep, 0, -1);
	*parked = int_at(rep, 1, -1);
	freeReplyObject(rep);
	if (*groups < 0 || *parked < 0)
		return rq_error_set(err, RQ_E_REDIS, "group counts: unexpected reply");
	return 0;
}
