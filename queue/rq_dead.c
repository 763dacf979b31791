/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_dead: dead letters back into the queue (see rq_dead.h). The parts:
 * reading the dead stream; choosing the dead letters of a job; its
 * history; the requeue; a result with its history.
 */
#include "rq_dead.h"
#include "rq_clock.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_group.h"
#include "rq_job.h"

/* dead letters read at a time */
#define RQ_DEAD_CHUNK "1000"

/* ---- reading the dead stream ---- */

static char *dup_reply(const redisReply *r, size_t *len)
{
	char *s = malloc(r->len + 1);

	if (s) {
		memcpy(s, r->str, r->len);
		s[r->len] = '\0';
	}
	if (len)
		*len = r->len;
	return s;
}

/* One entry [sid, [f, v, ...]] into d: 0, or -1 out of memory. */
static int take_entry(const redisReply *e, rq_dead_letter *d)
{
	const redisReply *f = e->element[1];

	snprintf(d->entry, sizeof(d->entry), "%s", e->element[0]->str);
	for (size_t j = 0; f->type == REDIS_REPLY_ARRAY && j + 1 < f->elements; j += 2) {
		const redisReply *k = f->element[j], *v = f->element[j + 1];
		char **to = NULL;
		if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
			continue;
		to = !strcmp(k->str, "id")	 ? &d->id
		     : !strcmp(k->str, "job")	 ? &d->job
		     : !strcmp(k->str, "reason") ? &d->reason
		     : !strcmp(k->str, "result") ? &d->result
						 : NULL;
		if (!to || *to)
			continue;
		if (!(*to = dup_reply(v, to == &d->job ? &d->job_len : NULL)))
			return -1;
	}
	return 0;
}

/* Append the entries of one XRANGE reply; *last: the last entry id. */
static int take_entries(const redisReply *rep, rq_dead_list *l, char last[64], rq_error *err)
{
	rq_dead_letter *v = realloc(l->v, (l->n + rep->elements) * sizeof(*v));

	if (!v && rep->elements)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	l->v = v;
	for (size_t i = 0; i < rep->elements; i++) {
		const redisReply *e = rep->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			return rq_error_set(err, RQ_E_REDIS, "dead letters: unexpected reply");
		memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
		if (take_entry(e, &l->v[l->n++]) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		snprintf(last, 64, "(%s", e->element[0]->str);
	}
	return 0;
}

int rq_dead_read(rq_queue *q, rq_dead_list *out, rq_error *err)
{
	const char *dead = rq_queue_dead_key(q);
	char from[64] = "-";
	redisReply *rep;
	size_t got;

	memset(out, 0, sizeof(*out));
	do {
		rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "XRANGE", dead, from, "+", "COUNT",
				    RQ_DEAD_CHUNK, NULL);
		if (!rep || rep->type != REDIS_REPLY_ARRAY) {
			if (rep)
				rq_error_set(err, RQ_E_REDIS, "cannot read the dead letters: %s",
					     rep->type == REDIS_REPLY_ERROR ? rep->str : "?");
			freeReplyObject(rep);
			rq_dead_list_free(out);
			return -1;
		}
		got = rep->elements;
		if (take_entries(rep, out, from, err) < 0) {
			freeReplyObject(rep);
			rq_dead_list_free(out);
			return -1;
		}
		freeReplyObject(rep);
	} while (got == (size_t)atoi(RQ_DEAD_CHUNK));
	return 0;
}

void rq_dead_list_free(rq_dead_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].job);
		free(l->v[i].reason);
		free(l->v[i].result);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- choosing the dead letters of a job ---- */

/* The string at queue key <kind><id>, or NULL: none (err cleared) or an
 * error (err set). */
static char *get_key(rq_queue *q, const char *kind, const char *id, rq_error *err)
{
	char k[512];
	redisReply *rep;
	char *s = NULL;

	snprintf(k, sizeof(k), "%s%s%s", rq_queue_prefix(q), kind, id);
	rq_error_clear(err);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "GET", k, NULL);
	if (rep && rep->type == REDIS_REPLY_ERROR)
		rq_error_set(err, RQ_E_REDIS, "cannot read %s: %s", k, rep->str);
	else if (rep && rep->type == REDIS_REPLY_STRING && !(s = dup_reply(rep, NULL)))
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	freeReplyObject(rep);
	return s;
}

/* What one requeue takes: the dead letter (chosen), the older ones of
 * the same job, the stored result. */
typedef struct pick {
	const rq_dead_letter *chosen;
	const char **older;
	const rq_dead_letter **older_dl;
	size_t nolder;
	char digest[41];
	char *result; /* stored, NULL: none */
} pick;

/* The newest dead letter of id whose job holds the id (its digest is the
 * claim's; any, when there is no claim), and the older ones with that
 * digest. 0, 1 none (why set), -1 out of memory. */
static int choose(const rq_dead_list *l, const char *id, const char *claim, pick *p, char *why,
		  size_t why_size)
{
	const char *want = claim ? strrchr(claim, ' ') : NULL;
	char d[41];

	want = want && strlen(want + 1) == 40 ? want + 1 : NULL;
	for (size_t i = l->n; i-- > 0 && !p->chosen;) {
		const rq_dead_letter *e = &l->v[i];
		if (!e->id || !e->job || strcmp(e->id, id))
			continue;
		if (rq_job_digest(e->job, e->job_len, d) < 0)
			return -1;
		if (want && strcmp(d, want)) {
			snprintf(why, why_size,
				 "its dead letter %s is of another job than the one that holds the "
				 "id (id_conflict: content digest %s, the id's %s)",
				 e->entry, d, want);
			continue;
		}
		p->chosen = e;
		memcpy(p->digest, d, sizeof(d));
	}
	if (!p->chosen) {
		if (!why[0])
			snprintf(why, why_size, "no dead letter for job %s", id);
		return 1;
	}
	if (!(p->older = calloc(l->n, sizeof(*p->older))) ||
	    !(p->older_dl = calloc(l->n, sizeof(*p->older_dl))))
		return -1;
	for (size_t i = 0; i < l->n && &l->v[i] != p->chosen; i++) {
		const rq_dead_letter *e = &l->v[i];
		if (!e->id || !e->job || strcmp(e->id, id))
			continue;
		if (rq_job_digest(e->job, e->job_len, d) < 0)
			return -1;
		if (!strcmp(d, p->digest)) {
			p->older_dl[p->nolder] = e;
			p->older[p->nolder++] = e->entry;
		}
	}
	return 0;
}

/* ---- its history ---- */

/* One element of a history: the dead letter, its reason, the result it
 * had (taken; NULL: none). NULL when memory runs out. */
static json_t *history_item(const rq_dead_letter *e, json_t *result, long long now)
{
	json_t *o = json_pack("{s:s, s:s, s:I}", "dead_letter", e->entry, "reason",
			      e->reason ? e->reason : "", "requeued_at", (json_int_t)now);

	if (!o) {
		json_decref(result);
		return NULL;
	}
	if (result && json_object_set_new(o, "result", result) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The history the requeued job carries: the stored result's own, then
 * one element for each dead letter, oldest first, the chosen one with the
 * stored result. Its text (malloc'ed), or NULL out of memory. */
static char *history_text(const pick *p)
{
	json_t *stored = p->result ? json_loads(p->result, 0, NULL) : NULL;
	json_t *h = json_array(), *prev = json_object_get(stored, "history"), *v;
	long long now = rq_clock_wall_ms();
	size_t i;
	int bad = !h;
	char *s;

	json_array_foreach(prev, i, v) bad |= json_array_append(h, v);
	json_object_del(stored, "history");
	for (i = 0; !bad && i < p->nolder; i++) {
		const rq_dead_letter *e = p->older_dl[i];
		json_t *r = e->result ? json_loads(e->result, 0, NULL) : NULL;
		bad |= json_array_append_new(h, history_item(e, r, now));
	}
	if (!stored && p->chosen->result)
		stored = json_loads(p->chosen->result, 0, NULL);
	bad |= json_array_append_new(h, history_item(p->chosen, stored, now));
	s = bad ? NULL : json_dumps(h, JSON_COMPACT);
	json_decref(h);
	return s;
}

/* ---- the requeue ---- */

/* The job's group (malloc'ed), NULL when it has none that is valid. */
static char *job_group(const rq_dead_letter *e)
{
	json_t *o = json_loadb(e->job, e->job_len, 0, NULL);
	const char *g = json_string_value(json_object_get(o, "group"));
	char *s = g && rq_job_id_valid(g) ? strdup(g) : NULL;

	json_decref(o);
	return s;
}

static void pick_free(pick *p)
{
	free(p->older);
	free(p->older_dl);
	free(p->result);
}

/* Requeue what was chosen: 0, 1 refused (why), -1. */
static int requeue_pick(rq_queue *q, const char *id, pick *p, int *parked, char *why,
			size_t why_size, rq_error *err)
{
	char *history = history_text(p), *group = job_group(p->chosen), sid[64], refused[32];
	rq_group_requeue_args r = {id,	      p->chosen->job, p->chosen->job_len,
				   history,   group,	      p->chosen->entry,
				   p->result, p->older,	      p->nolder};
	int rc;

	if (!history)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else
		rc = rq_group_requeue(q, &r, sid, parked, refused, err);
	if (rc == 1)
		snprintf(why, why_size, "%s",
			 !strcmp(refused, "queued") ? "a job of the id is queued or running again"
			 : !strcmp(refused, "gone") ? "its dead letter was removed meanwhile"
						    : "its result changed meanwhile");
	free(history);
	free(group);
	return rc;
}

int rq_dead_requeue(rq_queue *q, const rq_dead_list *l, const char *id, int *parked, char *why,
		    size_t why_size, rq_error *err)
{
	pick p;
	char *claim = get_key(q, "claim:", id, err);
	int rc;

	memset(&p, 0, sizeof(p));
	why[0] = '\0';
	*parked = 0;
	if (!claim && err->code != RQ_OK)
		return -1;
	if (!(p.result = get_key(q, "result:", id, err)) && err->code != RQ_OK) {
		free(claim);
		return -1;
	}
	rc = choose(l, id, claim, &p, why, why_size);
	free(claim);
	if (rc < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (rc == 0)
		rc = requeue_pick(q, id, &p, parked, why, why_size, err);
	pick_free(&p);
	return rc;
}

/* ---- a result with its history ---- */

char *rq_dead_with_history(const char *result, const char *history)
{
	json_t *r = json_loads(result, 0, NULL), *h = json_loads(history, 0, NULL);
	char *s = NULL;

	if (json_is_object(r) && json_is_array(h)) {
		json_object_del(r, "history");
		if (json_object_set(r, "history", h) == 0)
			s = json_dumps(r, JSON_COMPACT);
	} else {
		s = strdup(result);
	}
	json_decref(r);
	json_decref(h);
	return s;
}
