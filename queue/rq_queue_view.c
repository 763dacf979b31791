/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue_view: a queue's counters, group counts, dead letters and
 * pending entries read as JSON.
 */
#include "rq_queue_view.h"

#include "rq_result_json.h"

#include <stdlib.h>
#include <string.h>

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
	redisReply *rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, cmd, key, arg, NULL);

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
	redisReply *rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "HGETALL", key, NULL);
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
	json_t *workers = hash_of(q, rq_queue_workers_key(q), 0, err), *wv;
	const char *wk;
	long long alive;

	json_object_foreach(workers, wk, wv)
	{
		char k[512];
		rq_queue_key(q, k, sizeof(k), "worker", wk);
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

int rq_queue_view_stats(rq_queue *q, json_t **out, rq_error *err)
{
	long long queued, pending, dead;
	json_t *counters = NULL, *workers = NULL;

	*out = NULL;
	if (!(counters = hash_of(q, rq_queue_stats_key(q), 1, err)) ||
	    count_of(q, "XLEN", rq_queue_jobs_key(q), NULL, 1, &queued, err) < 0 ||
	    count_of(q, "XPENDING", rq_queue_jobs_key(q), RQ_QUEUE_GROUP, 0, &pending, err) < 0 ||
	    count_of(q, "XLEN", rq_queue_dead_key(q), NULL, 1, &dead, err) < 0 ||
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

int rq_queue_view_group_counts(rq_queue *q, long long *pending, long long *lag, rq_error *err)
{
	redisReply *rep =
	    rq_redis_cmdv(rq_queue_redis(q), 0, err, "XINFO", "GROUPS", rq_queue_jobs_key(q), NULL);
	const redisReply *g;
	long long queued;
	int rc = 0;

	if (rq_queue_reply_error(rep, err, "cannot read the group") < 0)
		return -1;
	if (!(g = our_group(rep)) || (*pending = group_field(g, "pending")) < 0)
		rc = rq_error_set(err, RQ_E_REDIS, "no group '%s' on %s", RQ_QUEUE_GROUP,
				  rq_queue_jobs_key(q));
	else if ((*lag = group_field(g, "lag")) < 0 &&
		 count_of(q, "XLEN", rq_queue_jobs_key(q), NULL, 1, &queued, err) == 0)
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

int rq_queue_view_dead_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();
	int bad = !a;

	*out = NULL;
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "XRANGE", rq_queue_dead_key(q), "-", "+",
			    "COUNT", cnt, NULL);
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
		if (!rq_queue_msg_pending_ok(e))
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

int rq_queue_view_pending_list(rq_queue *q, size_t count, json_t **out, rq_error *err)
{
	char cnt[32];
	redisReply *rep;
	json_t *a = json_array();
	int rc = 0;

	*out = NULL;
	if (!a)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	snprintf(cnt, sizeof(cnt), "%zu", count);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "XPENDING", rq_queue_jobs_key(q),
			    RQ_QUEUE_GROUP, "-", "+", cnt, NULL);
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
