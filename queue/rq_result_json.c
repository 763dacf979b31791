/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_result_json: serialise replay results with jansson.
 */
#include "rq_result_json.h"
#include "rq_oid.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_outcome.h"
#include "rq_train.h"

/* Length of a valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xE0) == 0xC0)
		len = 2, cp = p[0] & 0x1F;
	else if ((p[0] & 0xF0) == 0xE0)
		len = 3, cp = p[0] & 0x0F;
	else if ((p[0] & 0xF8) == 0xF0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

/* n bytes as a JSON string, each byte that is not part of valid UTF-8
 * (and each backslash, with backslash set) as the text \\xNN. */
static json_t *escaped(const char *s, size_t n, int backslash)
{
	json_t *j;
	size_t o = 0;
	char *out;

	if ((!backslash || !memchr(s, '\\', n)) && (j = json_stringn(s, n)))
		return j;
	if (n > (SIZE_MAX - 1) / 4 || !(out = malloc(n * 4 + 1)))
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq((const unsigned char *)s + i, n - i);
		if (k && !(backslash && s[i] == '\\')) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			o += (size_t)sprintf(out + o, "\\x%02X", (unsigned char)s[i]);
			i++;
		}
	}
	j = json_stringn(out, o);
	free(out);
	return j;
}

json_t *rq_result_json_bytesn(const char *s, size_t n)
{
	return escaped(s, n, 0);
}

json_t *rq_result_json_refname(const char *name)
{
	return escaped(name, strlen(name), 1);
}

char *rq_result_json_refname_bytes(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), o = 0, i;
	char *out;

	if (!s || memchr(s, '\0', n) || !(out = malloc(n + 1)))
		return NULL;
	for (i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (n - i < 4 || s[i + 1] != 'x' || (hi = rq_oid_hex_digit(s[i + 2])) < 0 ||
		    (lo = rq_oid_hex_digit(s[i + 3])) < 0 || (hi | lo) == 0)
			break;
		out[o++] = (char)(hi << 4 | lo);
		i += 3;
	}
	out[o] = '\0';
	if (i < n) {
		free(out);
		return NULL;
	}
	return out;
}

/* A C string as rq_result_json_bytesn makes it (NULL: null): paths and
 * messages need not be UTF-8. */
static json_t *bytes_json(const char *s)
{
	return s ? rq_result_json_bytesn(s, strlen(s)) : json_null();
}

/* A ref name, without loss (NULL: null). */
static json_t *ref_json(const char *s)
{
	return s ? rq_result_json_refname(s) : json_null();
}

/* An id as hex of the result's format (rq_ref_updates.algo). */
static json_t *oid_json(const rq_oid *oid, const rq_oid_algo *algo)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];
	return json_string(rq_oid_fmt(hex, oid, algo));
}

/* v when every part of it went in (bad 0), else NULL (v freed). */
static json_t *whole(json_t *v, int bad)
{
	if (!bad)
		return v;
	json_decref(v);
	return NULL;
}

static json_t *stats_json(const rq_replay_stats *s)
{
	json_t *o = json_object();
	int bad = !o;

	bad |= json_object_set_new(o, "commits", json_integer((json_int_t)s->commits));
	bad |= json_object_set_new(o, "picked", json_integer((json_int_t)s->picked));
	bad |= json_object_set_new(o, "dropped", json_integer((json_int_t)s->dropped));
	bad |= json_object_set_new(o, "not_utf8", json_integer((json_int_t)s->not_utf8));
	bad |= json_object_set_new(o, "merge_commits", json_integer((json_int_t)s->merge_commits));
	bad |= json_object_set_new(
	    o, "merges",
	    json_pack("{s:I, s:I, s:I, s:I, s:I}", "trivial", (json_int_t)s->merges_trivial, "full",
		      (json_int_t)s->merges_full, "fallback", (json_int_t)s->merges_fallback,
		      "similarity_computed", (json_int_t)s->scores_computed, "similarity_reused",
		      (json_int_t)s->scores_reused));
	bad |= json_object_set_new(o, "groups", json_integer((json_int_t)s->groups));
	bad |= json_object_set_new(o, "parallel", json_integer((json_int_t)s->parallel));
	bad |= json_object_set_new(o, "objects", json_integer((json_int_t)s->objects));
	bad |= json_object_set_new(o, "pack_bytes", json_integer((json_int_t)s->pack_bytes));
	bad |= json_object_set_new(o, "pack",
				   s->pack_name[0] ? json_string(s->pack_name) : json_null());
	bad |= json_object_set_new(o, "ms",
				   json_pack("{s:f, s:f, s:f, s:f, s:f}", "resolve", s->ms_resolve,
					     "walk", s->ms_walk, "replay", s->ms_replay, "pack",
					     s->ms_pack, "total", s->ms_total));
	return whole(o, bad);
}

json_t *rq_result_json_updates(const rq_replay_result *res)
{
	const rq_oid_algo *algo = rq_ref_updates_algo(&res->upd);
	json_t *updates = json_array();
	int bad = !updates;

	for (size_t i = 0; !bad && i < res->upd.nupdates; i++) {
		const rq_ref_update *u = &res->upd.updates[i];
		bad |= json_array_append_new(updates,
					     json_pack("{s:o, s:o, s:o}", "ref", ref_json(u->ref),
						       "old", oid_json(&u->old_id, algo), "new",
						       oid_json(&u->new_id, algo)));
	}
	return whole(updates, bad);
}

/* {"commit": <id>, "paths": [{"path", "kind"}]}, and for a merge commit
 * "merge": true with the command that shows what its author did by hand
 * ("hint"); NULL when memory runs out. */
static json_t *conflict_json(const rq_oid *commit, const rq_oid_algo *algo, int merge,
			     const rq_conflicts *conflicts)
{
	json_t *paths = json_array(), *o;
	char hex[RQ_OID_MAX_HEXSZ + 1], hint[RQ_OID_MAX_HEXSZ + 32];
	int bad = !paths;

	for (size_t i = 0; !bad && i < conflicts->n; i++)
		bad |= json_array_append_new(
		    paths, json_pack("{s:o, s:s}", "path", bytes_json(conflicts->v[i].path), "kind",
				     rq_conflict_kind_name(conflicts->v[i].kind)));
	if (!whole(paths, bad))
		return NULL;
	o = json_pack("{s:o, s:o}", "commit", oid_json(commit, algo), "paths", paths);
	if (!o || !merge)
		return o;
	rq_oid_fmt(hex, commit, algo);
	snprintf(hint, sizeof(hint), "git show --remerge-diff %s", hex);
	bad = json_object_set_new(o, "merge", json_true());
	bad |= json_object_set_new(o, "hint", json_string(hint));
	return whole(o, bad);
}

/* One ref of a keep-going replay: ok with its new id, or its conflict, or
 * the ref and commit it waits on. */
static json_t *ref_outcome_json(const rq_replay_result *res, const rq_ref_outcome *r)
{
	const rq_pick_conflict *f = r->status != RQ_REF_OK ? &res->failed[r->failed] : NULL;
	const rq_oid_algo *algo = res ? rq_ref_updates_algo(&res->upd) : &rq_oid_sha1;
	json_t *o = json_pack("{s:o, s:s, s:o, s:o}", "ref", ref_json(r->ref), "status",
			      rq_outcome_status_name(r->status), "old", oid_json(&r->old_id, algo),
			      "new", f ? json_null() : oid_json(&r->new_id, algo));
	int bad = !o;

	if (f && r->status == RQ_REF_CONFLICT)
		bad |= json_object_set_new(
		    o, "conflict", conflict_json(&f->commit, algo, f->merge, &f->conflicts));
	if (f && r->status == RQ_REF_BLOCKED)
		bad |= json_object_set_new(o, "blocked_by",
					   json_pack("{s:o, s:o}", "ref", ref_json(r->blocked_by),
						     "commit", oid_json(&f->commit, algo)));
	return whole(o, bad);
}

/* Every ref's outcome, in update order. */
static json_t *refs_json(const rq_replay_result *res)
{
	json_t *refs = json_array();
	int bad = !refs;

	for (size_t i = 0; !bad && i < res->nrefs; i++)
		bad |= json_array_append_new(refs, ref_outcome_json(res, &res->refs[i]));
	return whole(refs, bad);
}

json_t *rq_result_to_json(const rq_replay_result *res, int rc, const rq_error *err, int applied)
{
	static const rq_replay_result none;
	const rq_oid_algo *algo = rq_ref_updates_algo(res ? &res->upd : &none.upd);
	json_t *o = json_object();
	const char *status = rc < 0 ? "error" : rc == 1 ? "conflict" : "ok";
	int bad = !o;

	if (!res)
		res = &none;
	bad |= json_object_set_new(o, "v", json_integer(1));
	bad |= json_object_set_new(o, "status", json_string(status));
	/* keep-going: the clean refs' updates whatever the status */
	bad |= json_object_set_new(
	    o, "updates",
	    rc == 0 || (rc == 1 && res->keep_going) ? rq_result_json_updates(res) : json_array());
	bad |= json_object_set_new(o, "applied", json_boolean(applied));
	if (rc >= 0 && res->keep_going)
		bad |= json_object_set_new(o, "refs", refs_json(res));
	if (rc == 1)
		bad |= json_object_set_new(o, "conflict",
					   conflict_json(&res->conflict_commit, algo,
							 res->conflict_merge, &res->conflicts));
	if (rc < 0)
		bad |= json_object_set_new(
		    o, "error",
		    json_pack("{s:s, s:o}", "code", err ? rq_qerror_name(err->code) : "internal",
			      "message", bytes_json(err ? err->msg : "unknown error")));
	bad |= json_object_set_new(o, "stats", stats_json(&res->stats));
	return whole(o, bad);
}

static json_t *maintain_json(const rq_odb_repack_stats *st)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b}", "packs_before",
			 (json_int_t)st->packs_before, "packs_after", (json_int_t)st->packs_after,
			 "bytes_before", (json_int_t)st->bytes_before, "bytes_after",
			 (json_int_t)st->bytes_after, "replayq_packs_before",
			 (json_int_t)st->own_before, "replayq_packs_after",
			 (json_int_t)st->own_after, "merged", (json_int_t)st->merged, "objects",
			 (json_int_t)st->objects, "pack",
			 st->pack_name[0] ? json_string(st->pack_name) : json_null(), "pack_bytes",
			 (json_int_t)st->pack_bytes, "busy", st->busy);
}

json_t *rq_result_maintain_to_json(const rq_odb_repack_stats *st, int rc, const rq_error *err)
{
	json_t *o = json_object();
	int bad = !o;

	bad |= json_object_set_new(o, "v", json_integer(1));
	bad |= json_object_set_new(o, "status", json_string(rc < 0 ? "error" : "ok"));
	bad |= json_object_set_new(o, "updates", json_array());
	bad |= json_object_set_new(o, "applied", json_false());
	if (rc < 0)
		bad |= json_object_set_new(
		    o, "error",
		    json_pack("{s:s, s:o}", "code", err ? rq_qerror_name(err->code) : "internal",
			      "message", bytes_json(err ? err->msg : "unknown error")));
	else
		bad |= json_object_set_new(o, "maintain", maintain_json(st));
	return whole(o, bad);
}

int rq_result_set_signed(json_t *o)
{
	const char *status = json_string_value(json_object_get(o, "status"));

	if (!o || !status || !strcmp(status, "error"))
		return 0;
	return json_object_set_new(o, "signed", json_true()) < 0 ? -1 : 0;
}

char *rq_result_error_text(const char *id, const char *repo, rq_code code, const char *msg,
			   long attempt, const char *worker)
{
	rq_error e;
	json_t *o;
	char *s = NULL;
	int bad;

	rq_error_set(&e, code, "%s", msg);
	if (!(o = rq_result_to_json(NULL, -1, &e, 0)))
		return NULL;
	bad = json_object_set_new(o, "id", json_string(id ? id : ""));
	if (repo)
		bad |= json_object_set_new(o, "repo", json_string(repo));
	bad |= json_object_set_new(o, "attempt", json_integer(attempt));
	bad |= json_object_set_new(o, "worker", json_string(worker ? worker : ""));
	if (!bad)
		s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(o);
	return s;
}

/* One car: its status, what it was built on, its tip, and its result,
 * ref and counts, or its conflict. */
static json_t *car_json(const rq_train_result *res, const rq_car_result *c)
{
	const rq_oid_algo *algo = rq_ref_updates_algo(&res->replay.upd);
	json_t *o =
	    json_pack("{s:o, s:s, s:o}", "name", bytes_json(c->name), "status",
		      rq_train_car_status_name(c->status), "onto", oid_json(&c->onto, algo));
	int bad = !o;

	if (c->status == RQ_CAR_SKIPPED)
		return o;
	if (!rq_oid_is_zero(&c->tip))
		bad |= json_object_set_new(o, "tip", oid_json(&c->tip, algo));
	if (c->status == RQ_CAR_OK) {
		bad |= json_object_set_new(o, "commit", oid_json(&c->commit, algo));
		bad |= json_object_set_new(o, "ref", ref_json(c->ref));
	} else {
		bad |= json_object_set_new(
		    o, "conflict",
		    conflict_json(&c->conflict_commit, algo, c->conflict_merge, &c->conflicts));
	}
	if (res->method == RQ_TRAIN_REBASE)
		bad |= json_object_set_new(o, "commits", json_integer((json_int_t)c->commits)) |
		       json_object_set_new(o, "picked", json_integer((json_int_t)c->picked)) |
		       json_object_set_new(o, "dropped", json_integer((json_int_t)c->dropped));
	else
		bad |= json_object_set_new(o, "merge_bases",
					   json_integer((json_int_t)c->merge_bases)) |
		       json_object_set_new(o, "up_to_date", json_boolean(c->up_to_date));
	return whole(o, bad);
}

/* The train: its target, method, base and head, and every car. */
static int train_fields(json_t *o, const rq_train_result *res)
{
	const rq_oid_algo *algo = rq_ref_updates_algo(&res->replay.upd);
	json_t *cars = json_array();
	int bad = !cars;

	for (size_t k = 0; !bad && k < res->ncars; k++)
		bad |= json_array_append_new(cars, car_json(res, &res->cars[k]));
	if (!whole(cars, bad))
		return -1;
	bad |= json_object_set_new(
	    o, "train",
	    json_pack("{s:o, s:s, s:o, s:o}", "target", ref_json(res->target_ref), "method",
		      rq_train_method_name(res->method), "base", oid_json(&res->base, algo), "head",
		      oid_json(&res->head, algo)));
	bad |= json_object_set_new(o, "cars", cars);
	return bad ? -1 : 0;
}

json_t *rq_result_train_to_json(const rq_train_result *res, int rc, const rq_error *err,
				int applied)
{
	json_t *o = rq_result_to_json(res ? &res->replay : NULL, rc, err, applied);
	int bad = !o;

	if (!o || rc < 0 || !res)
		return o;
	/* the cars that went in have their updates whatever the status */
	if (rc == 1)
		bad |= json_object_set_new(o, "updates", rq_result_json_updates(&res->replay));
	bad |= train_fields(o, res) < 0;
	return whole(o, bad);
}
