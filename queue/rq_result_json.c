/*
 * rq_result_json: serialise replay results with jansson.
 */
#include "rq_result_json.h"

static json_t *oid_json(const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), oid);
	return json_string(hex);
}

static json_t *stats_json(const rq_replay_stats *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "commits", json_integer((json_int_t)s->commits));
	json_object_set_new(o, "picked", json_integer((json_int_t)s->picked));
	json_object_set_new(o, "dropped", json_integer((json_int_t)s->dropped));
	json_object_set_new(o, "merges",
			    json_pack("{s:I, s:I, s:I}", "trivial", (json_int_t)s->merges_trivial,
				      "full", (json_int_t)s->merges_full, "fallback",
				      (json_int_t)s->merges_fallback));
	json_object_set_new(o, "groups", json_integer((json_int_t)s->groups));
	json_object_set_new(o, "parallel", json_integer((json_int_t)s->parallel));
	json_object_set_new(o, "objects", json_integer((json_int_t)s->objects));
	json_object_set_new(o, "pack_bytes", json_integer((json_int_t)s->pack_bytes));
	json_object_set_new(o, "pack", s->pack_name[0] ? json_string(s->pack_name) : json_null());
	json_object_set_new(o, "ms",
			    json_pack("{s:f, s:f, s:f, s:f, s:f}", "resolve", s->ms_resolve, "walk",
				      s->ms_walk, "replay", s->ms_replay, "pack", s->ms_pack,
				      "total", s->ms_total));
	return o;
}

json_t *rq_result_to_json(const rq_replay_result *res, int rc, const rq_error *err, int applied)
{
	static const rq_replay_result none;
	if (!res)
		res = &none;
	json_t *o = json_object(), *updates = json_array();
	const char *status = rc < 0 ? "error" : rc == 1 ? "conflict" : "ok";

	if (!o || !updates) {
		json_decref(o);
		json_decref(updates);
		return NULL;
	}
	json_object_set_new(o, "v", json_integer(1));
	json_object_set_new(o, "status", json_string(status));
	if (rc == 0) {
		for (size_t i = 0; i < res->nupdates; i++) {
			const rq_ref_update *u = &res->updates[i];
			json_array_append_new(updates, json_pack("{s:s, s:o, s:o}", "ref", u->ref,
								 "old", oid_json(&u->old_id), "new",
								 oid_json(&u->new_id)));
		}
	}
	json_object_set_new(o, "updates", updates);
	json_object_set_new(o, "applied", json_boolean(applied));
	if (rc == 1) {
		json_t *paths = json_array();
		for (size_t i = 0; i < res->conflicts.n; i++)
			json_array_append_new(
			    paths, json_pack("{s:s, s:s}", "path", res->conflicts.v[i].path, "kind",
					     rq_conflict_kind_name(res->conflicts.v[i].kind)));
		json_object_set_new(o, "conflict",
				    json_pack("{s:o, s:o}", "commit",
					      oid_json(&res->conflict_commit), "paths", paths));
	}
	if (rc < 0) {
		json_object_set_new(
		    o, "error",
		    json_pack("{s:s, s:s}", "code", rq_code_name(err->code), "message", err->msg));
	}
	json_object_set_new(o, "stats", stats_json(&res->stats));
	return o;
}
