/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue: a replay queue on Redis Streams.
 *
 * All keys of queue Q share the hash tag {Q}, so a queue lives on one
 * shard of a Redis Cluster:
 *   replayq:{Q}:jobs          stream of jobs (fields id, job), group "workers"
 *   replayq:{Q}:job:<id>      the stream entry of a job not finished yet
 *   replayq:{Q}:result:<id>   the result (JSON), with a TTL; <id> is "!<entry>" for an
 *                             entry whose own id cannot be trusted (rq_queue_msg_anon_id)
 *   replayq:{Q}:results       stream of results (fields id, status, result), capped
 *   replayq:{Q}:reply:<name>  list a job's result is pushed to ("reply_to")
 *   replayq:{Q}:dead          stream of dead-lettered jobs (id, job, reason[, result])
 *   replayq:{Q}:attempts      hash: job id -> last transient failure (JSON)
 *   replayq:{Q}:intent:<id>   the result of a job about to apply its ref updates
 *   replayq:{Q}:granted:<id>  "<consumer> <delivery>" that passed the fence of its ref
 *                             update: a process that may be committing them (these
 *                             two are written by queue/rq_refproto, the ref-update
 *                             protocol, and deleted with the result here)
 *   replayq:{Q}:claim:<id>    "<entry> <sha1 of the content>": the entry that owns the id
 *   replayq:{Q}:waiting:<id>  reply lists of duplicates waiting for the owner's result
 *   replayq:{Q}:stats         hash of counters (submitted, ok, conflict, error, dead, retried,
 *                             duplicate, requeued)
 *   replayq:{Q}:workers       hash: worker name -> last heartbeat (JSON)
 *   replayq:{Q}:worker:<name> set while a worker is alive (TTL)
 *   replayq:{Q}:groups, replayq:{Q}:group:<G>  a group's turn and its parked jobs (rq_group)
 *
 * A job is acknowledged (XACK, then XDEL) only in the same Lua script that
 * stores its result, so that a job is neither lost nor reported twice: a
 * redelivered job whose result already exists is acknowledged without a
 * second result. Every script checks the type of the keys it writes
 * before its first write, so that it writes all or nothing. On a Redis
 * Cluster or behind Sentinel, the writes a job depends on (queued, result
 * stored, intent, grant) are followed by a WAIT for a replica
 * (rq_redis_wait_replicas).
 */
#ifndef RQ_QUEUE_H
#define RQ_QUEUE_H

#include <jansson.h>
#include <stddef.h>

#include "rq_qerror.h"
#include "rq_queue_msg.h"
#include "rq_redis.h"

#define RQ_QUEUE_GROUP "workers"

typedef struct rq_queue rq_queue;

/* Returned by the calls that store: Redis refused for good (a key of the
 * wrong type, a script error, out of memory: rq_redis_error_permanent),
 * trying the same again is no use. Other failures are -1. */
#define RQ_QUEUE_PERMANENT (-2)

typedef struct rq_queue_opts {
	int result_ttl_s;    /* default 7 days */
	long results_maxlen; /* default 100000 */
} rq_queue_opts;

/* r is borrowed and must outlive the queue; name: 1-64 of
 * [A-Za-z0-9._-] (else RQ_E_USAGE). */
int rq_queue_open(rq_queue **out, rq_redis *r, const char *name, const rq_queue_opts *opts,
		  rq_error *err);
void rq_queue_free(rq_queue *q);
rq_redis *rq_queue_redis(rq_queue *q);
const char *rq_queue_name(const rq_queue *q);

/* Create the stream and the group if missing: 0; 1 when this user may
 * not (NOPERM: a producer-only ACL user, err set); RQ_QUEUE_PERMANENT
 * when no retry can help (no credentials: NOAUTH; a key of the wrong
 * type; a server without streams), err set; -1 on another error (out of
 * memory, loading, ...: a retry may pass). */
int rq_queue_ensure_group(rq_queue *q, rq_error *err);

/*
 * Take the job id for stream entry m before it runs: one id, one run, one
 * result. content: what makes two entries the same job (rq_job_content,
 * or the raw text of a job that does not parse). Returns
 *   RQ_QUEUE_CLAIM_RUN        the entry owns the id: run it (or answer it);
 *   RQ_QUEUE_CLAIM_RESULT     the id has its result already, stored for this
 *                       entry (a redelivery after the store): acknowledge
 *                       it with rq_queue_complete, no second result;
 *   RQ_QUEUE_CLAIM_DUPLICATE  another entry owns the id with the same content:
 *                       this one was answered (the owner's result pushed
 *                       to its reply list, now or when the owner's result
 *                       is stored) and acknowledged; run nothing;
 *   RQ_QUEUE_CLAIM_DIFFERS    another entry owns the id with other content: this
 *                       one was answered with differs_result (an error
 *                       result), dead-lettered and acknowledged;
 * or -1 / RQ_QUEUE_PERMANENT with err set. owner: the owning entry.
 * *same_as_prior: 1 when m carries a prior result (a --force copy) of
 * this very content.
 */
enum {
	RQ_QUEUE_CLAIM_RUN = 0,
	RQ_QUEUE_CLAIM_RESULT,
	RQ_QUEUE_CLAIM_DUPLICATE,
	RQ_QUEUE_CLAIM_DIFFERS
};
int rq_queue_claim(rq_queue *q, const rq_queue_msg *m, const char *id, const char *content,
		   const char *reply_to, const char *differs_result, char owner[64],
		   int *same_as_prior, rq_error *err);

/*
 * Store the result and acknowledge in one step, all or nothing: the keys
 * it writes are checked for their type first, and one of the wrong type
 * fails it before anything is written (RQ_QUEUE_PERMANENT, naming the
 * key). status: "ok", "conflict" or "error". dead_reason non-NULL: also
 * append the job to the dead stream. The result also goes to the reply
 * lists of the duplicates waiting for it. Returns 0 stored, 1 a result
 * existed (only acknowledged).
 */
int rq_queue_complete(rq_queue *q, const rq_queue_msg *m, const char *id, const char *result,
		      const char *status, const char *reply_to, const char *dead_reason,
		      rq_error *err);

/*
 * After rq_queue_complete failed for good: dead-letter the job with its
 * reason and its result, store what can be stored (keys of the wrong type
 * are left alone) and acknowledge it. The dead stream must be usable:
 * else nothing is written (RQ_QUEUE_PERMANENT). Returns 0 or < 0.
 */
int rq_queue_dead_letter(rq_queue *q, const rq_queue_msg *m, const char *id, const char *result,
			 const char *status, const char *reply_to, const char *reason,
			 rq_error *err);

/* Keep a running job's claim fresh, only while this consumer owns it:
 * 1 kept, 0 not ours any more, -1 error. */
int rq_queue_keep_claim(rq_queue *q, const char *consumer, const char *sid, rq_error *err);

/* Record a transient failure (crash, timeout) for a later retry. */
int rq_queue_note_attempt(rq_queue *q, const char *id, const char *info, rq_error *err);
/* The last transient failure of a job, or NULL: none (err cleared) or
 * an error (err set). */
char *rq_queue_last_attempt(rq_queue *q, const char *id, rq_error *err);

/* 0 found (*json malloc'ed), 1 no result, -1 error. */
int rq_queue_result(rq_queue *q, const char *id, char **json, rq_error *err);
/* Wait for results pushed to a reply list (BLPOP); 0 got one, 1 timeout. */
int rq_queue_wait_reply(rq_queue *q, const char *reply_to, int timeout_ms, char **json,
			rq_error *err);

int rq_queue_heartbeat(rq_queue *q, const char *worker, const char *info, int ttl_s, rq_error *err);
int rq_queue_worker_gone(rq_queue *q, const char *worker, rq_error *err);

/*
 * For the modules that keep keys of a job beside the queue's own
 * (queue/rq_refproto) and those that read the queue's streams and hashes
 * (queue/rq_queue_msg, queue/rq_queue_view): the key
 * "replayq:{Q}:<kind>:<id>" into buf; the keys of the jobs stream, the
 * stats, the workers' heartbeats and the dead letters; the result TTL in
 * seconds; a reply checked (an error reply becomes RQ_E_REDIS,
 * RQ_QUEUE_PERMANENT when the same command would get it again; the reply
 * is freed then; NULL: err set already); the string a reply holds
 * (malloc'ed; NULL: nil, err cleared, or an error, err set; the reply is
 * freed); a WAIT for the replicas after a write a job depends on; n bytes
 * of s as a C string (malloc'ed; NULL: out of memory).
 */
void rq_queue_key(const rq_queue *q, char *buf, size_t size, const char *kind, const char *id);
/* "replayq:{Q}:", the start of every key of the queue. */
const char *rq_queue_prefix(const rq_queue *q);
const char *rq_queue_jobs_key(const rq_queue *q);
const char *rq_queue_stats_key(const rq_queue *q);
const char *rq_queue_workers_key(const rq_queue *q);
const char *rq_queue_dead_key(const rq_queue *q);
int rq_queue_result_ttl(const rq_queue *q);
int rq_queue_reply_error(redisReply *rep, rq_error *err, const char *what);
char *rq_queue_string_reply(redisReply *rep, rq_error *err, const char *what);
void rq_queue_replicate(rq_queue *q);
char *rq_queue_dupn(const char *s, size_t n);

/* Lua: want(key, type) is nil when the key is missing or of that type,
 * else a WRONGTYPE message naming it. Each script checks the keys it writes
 * before its first write, so that it writes all or nothing. */
#define RQ_QUEUE_LUA_WANT                                                                          \
	"local function want(k, t)\n"                                                              \
	"  local x = redis.call('TYPE', k).ok\n"                                                   \
	"  if x == 'none' or x == t then return nil end\n"                                         \
	"  return 'WRONGTYPE ' .. k .. ' holds a ' .. x .. ', not a ' .. t\n"                      \
	"end\n"

#endif
