/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue_msg: stream entries read (XREADGROUP, in two halves) or
 * reclaimed (XAUTOCLAIM) into messages, their fields checked with the
 * job's rules.
 */
#include "rq_queue_msg.h"

#include "rq_job.h"
#include "rq_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (!(m->id = rq_queue_dupn(fv->str, fv->len)))
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
			else if (!(m->job = rq_queue_dupn(fv->str, fv->len)))
				return -1;
			m->job_len = m->job ? fv->len : 0;
		} else if (field_is(fk, "prior") && !m->prior && !seen.prior_big) {
			if (fv->len > RQ_QUEUE_PRIOR_MAX)
				seen.prior_big = 1;
			else if (!(m->prior = rq_queue_dupn(fv->str, fv->len)))
				return -1;
		} else if (field_is(fk, "history") && !m->history &&
			   fv->len <= RQ_QUEUE_PRIOR_MAX) {
			if (!(m->history = rq_queue_dupn(fv->str, fv->len)))
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
	argv[9] = rq_queue_jobs_key(q);
	argv[10] = ">";
}

int rq_queue_msg_read_send(rq_queue *q, const char *consumer, size_t count, int block_ms,
			   rq_error *err)
{
	char cnt[32], blk[32];
	const char *argv[11];

	read_args(q, consumer, count, block_ms, cnt, blk, argv);
	return rq_redis_send(rq_queue_redis(q), err, 11, argv);
}

int rq_queue_msg_read_recv(rq_queue *q, rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	redisReply *rep;
	int r;

	*msgs = NULL;
	*n = 0;
	if ((r = rq_redis_recv(rq_queue_redis(q), &rep, err)) <= 0)
		return r < 0 ? -1 : 0;
	return read_reply(q, rep, msgs, n, err) < 0 ? -1 : 1;
}

/* An XPENDING entry [id, consumer, idle ms, deliveries], as Redis sends
 * it: 1, else 0. */
int rq_queue_msg_pending_ok(const redisReply *e)
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
	redisReply *rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "XPENDING", rq_queue_jobs_key(q),
					RQ_QUEUE_GROUP, sid, sid, "1", NULL);
	long d = 1;

	if (rq_queue_reply_error(rep, err, "reclaim failed") < 0)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements > 1 ||
	    (rep->elements == 1 && !rq_queue_msg_pending_ok(rep->element[0])))
		d = rq_error_set(err, RQ_E_REDIS, "reclaim: unexpected reply to XPENDING");
	else if (rep->elements == 1)
		d = (long)rep->element[0]->element[3]->integer;
	freeReplyObject(rep);
	return d;
}

/* The entries of a reply that claimed them for this consumer (entries:
 * their array in it; rep is freed), with their delivery counts: 0, or -1
 * with err set and nothing handed on (they stay pending, claimed). */
static int claimed_entries(rq_queue *q, redisReply *rep, redisReply *entries, rq_queue_msg **msgs,
			   size_t *n, rq_error *err)
{
	int rc = parse_entries(entries, msgs, n, err);

	freeReplyObject(rep);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		long d = delivery_count(q, (*msgs)[i].sid, err);
		if (d < 0)
			rc = -1;
		else
			(*msgs)[i].deliveries = d;
	}
	if (rc < 0) { /* claimed but not handed on: taken again later */
		msgs_free(*msgs, *n);
		*msgs = NULL;
		*n = 0;
	}
	return rc;
}

/* A reply of XAUTOCLAIM or of the script below; NULL (err set) a failure,
 * with *rc: 0 the group was missing and is made again (nothing claimed),
 * -1 an error. */
static redisReply *claim_reply(rq_queue *q, redisReply *rep, const char *what, int *rc,
			       rq_error *err)
{
	*rc = -1;
	if (!rep)
		return NULL;
	if (rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOGROUP", 7)) {
		freeReplyObject(rep);
		*rc = rq_queue_ensure_group(q, err) == 0 ? 0 : -1;
		return NULL;
	}
	return rq_queue_reply_error(rep, err, what) < 0 ? NULL : rep;
}

int rq_queue_msg_reclaim(rq_queue *q, const char *consumer, long min_idle_ms, size_t count,
			 rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	char idle[32], cnt[32];
	redisReply *rep;
	int rc;

	*msgs = NULL;
	*n = 0;
	snprintf(idle, sizeof(idle), "%ld", min_idle_ms);
	snprintf(cnt, sizeof(cnt), "%zu", count ? count : 1);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "XAUTOCLAIM", rq_queue_jobs_key(q),
			    RQ_QUEUE_GROUP, consumer, idle, "0-0", "COUNT", cnt, NULL);
	if (!(rep = claim_reply(q, rep, "reclaim failed", &rc, err)))
		return rc;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2) {
		freeReplyObject(rep);
		return 0;
	}
	return claimed_entries(q, rep, rep->element[1], msgs, n, err);
}

/*
 * The consumer's own pending entries that are not among the known ones
 * (ARGV[4...]), at most ARGV[3], claimed again by it (XCLAIM: a new
 * delivery, the idle time reset), in one script: an entry another worker
 * reclaimed meanwhile is not this consumer's any more and is left alone.
 * Its first XPENDING looks at count + known entries, so that count
 * unknown ones are among them when there are that many. Entries deleted
 * from the stream meanwhile leave the pending list with the XCLAIM.
 */
static const char own_lua[] =
    "local known = {}\n"
    "for i = 4, #ARGV do known[ARGV[i]] = true end\n"
    "local want = tonumber(ARGV[3])\n"
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', want + #ARGV - 3, ARGV[2])\n"
    "local ids = {}\n"
    "for _, e in ipairs(p) do\n"
    "  if not known[e[1]] and #ids < want then ids[#ids + 1] = e[1] end\n"
    "end\n"
    "if #ids == 0 then return {} end\n"
    "return redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids))\n";

int rq_queue_msg_own(rq_queue *q, const char *consumer, const char *const *known, size_t nknown,
		     size_t count, rq_queue_msg **msgs, size_t *n, rq_error *err)
{
	char cnt[32];
	const char **argv = calloc(nknown + 7, sizeof(*argv));
	redisReply *rep;
	int rc;

	*msgs = NULL;
	*n = 0;
	if (!argv)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	snprintf(cnt, sizeof(cnt), "%zu", count ? count : 1);
	argv[0] = "EVAL";
	argv[1] = own_lua;
	argv[2] = "1";
	argv[3] = rq_queue_jobs_key(q);
	argv[4] = RQ_QUEUE_GROUP;
	argv[5] = consumer;
	argv[6] = cnt;
	if (nknown)
		memcpy(argv + 7, known, nknown * sizeof(*argv));
	rep = rq_redis_cmd(rq_queue_redis(q), 0, err, (int)(nknown + 7), argv, NULL);
	free(argv);
	if (!(rep = claim_reply(q, rep, "cannot take back the worker's own entries", &rc, err)))
		return rc;
	return claimed_entries(q, rep, rep, msgs, n, err);
}
