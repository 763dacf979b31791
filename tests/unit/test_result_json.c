/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_result_to_json: the JSON result of ok, conflict and error outcomes,
 * and the stable error code names.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_outcome.h"
#include "rq_result_json.h"

#define HEX_A "1111111111111111111111111111111111111111"
#define HEX_B "2222222222222222222222222222222222222222"
#define HEX_C "3333333333333333333333333333333333333333"
#define HEX_D "4444444444444444444444444444444444444444"

static void add_update(rq_replay_result *res, const char *ref, const char *old_hex,
		       const char *new_hex)
{
	rq_ref_update *nv = realloc(res->upd.updates, (res->upd.nupdates + 1) * sizeof(*nv));
	assert_non_null(nv);
	res->upd.updates = nv;
	nv[res->upd.nupdates].ref = strdup(ref);
	assert_non_null(nv[res->upd.nupdates].ref);
	assert_int_equal(
	    rq_oid_parse(&nv[res->upd.nupdates].old_id, &rq_oid_sha1, old_hex, strlen(old_hex)), 0);
	assert_int_equal(
	    rq_oid_parse(&nv[res->upd.nupdates].new_id, &rq_oid_sha1, new_hex, strlen(new_hex)), 0);
	res->upd.nupdates++;
}

static void add_conflict(rq_replay_result *res, const char *path, rq_conflict_kind kind)
{
	rq_conflicts *c = &res->conflicts;
	rq_conflict *nv = realloc(c->v, (c->n + 1) * sizeof(*nv));
	assert_non_null(nv);
	c->v = nv;
	c->cap = c->n + 1;
	nv[c->n].path = strdup(path);
	assert_non_null(nv[c->n].path);
	nv[c->n].kind = kind;
	c->n++;
}

static const char *str_at(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!v || !json_is_string(v))
		fail_msg("\"%s\" is not a string", key);
	return json_string_value(v);
}

static json_int_t int_at(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!v || !json_is_integer(v))
		fail_msg("\"%s\" is not an integer", key);
	return json_integer_value(v);
}

/* The fields every result has. */
static void check_common(json_t *o, const char *status, int applied)
{
	json_t *stats, *ms, *merges;
	static const char *const counts[] = {"commits", "picked", "dropped", "objects",
					     "pack_bytes"};
	static const char *const times[] = {"resolve", "walk", "replay", "pack", "total"};

	assert_non_null(o);
	assert_true(json_is_object(o));
	assert_int_equal(int_at(o, "v"), 1);
	assert_string_equal(str_at(o, "status"), status);
	assert_true(json_is_array(json_object_get(o, "updates")));
	assert_true(json_is_boolean(json_object_get(o, "applied")));
	assert_int_equal(json_is_true(json_object_get(o, "applied")), applied);
	stats = json_object_get(o, "stats");
	assert_true(json_is_object(stats));
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		int_at(stats, counts[i]);
	merges = json_object_get(stats, "merges");
	assert_true(json_is_object(merges));
	int_at(merges, "trivial");
	int_at(merges, "full");
	int_at(merges, "fallback");
	int_at(merges, "similarity_computed");
	int_at(merges, "similarity_reused");
	ms = json_object_get(stats, "ms");
	assert_true(json_is_object(ms));
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		assert_true(json_is_real(json_object_get(ms, times[i])));
	/* "conflict" only with status conflict, "error" only with status error */
	assert_int_equal(json_object_get(o, "conflict") != NULL, !strcmp(status, "conflict"));
	assert_int_equal(json_object_get(o, "error") != NULL, !strcmp(status, "error"));
	/* it serialises and parses back to the same */
	{
		char *text = json_dumps(o, JSON_COMPACT);
		json_t *back;
		json_error_t jerr;
		assert_non_null(text);
		back = json_loads(text, 0, &jerr);
		assert_non_null(back);
		assert_true(json_equal(o, back));
		json_decref(back);
		free(text);
	}
}

static void test_ok(void **state)
{
	rq_replay_result res;
	json_t *o, *u, *stats;

	(void)state;
	memset(&res, 0, sizeof(res));
	add_update(&res, "refs/heads/topic", HEX_A, HEX_B);
	add_update(&res, "refs/heads/other", "0000000000000000000000000000000000000000", HEX_C);
	res.stats.commits = 7;
	res.stats.picked = 5;
	res.stats.dropped = 2;
	res.stats.merges_trivial = 3;
	res.stats.merges_full = 4;
	res.stats.merges_fallback = 1;
	res.stats.scores_computed = 40;
	res.stats.scores_reused = 160;
	res.stats.objects = 12;
	res.stats.pack_bytes = 5000000000ULL; /* more than 32 bits */
	snprintf(res.stats.pack_name, sizeof(res.stats.pack_name), "pack-%s", HEX_D);
	res.stats.ms_total = 12.5;
	res.stats.ms_walk = 0.25;

	o = rq_result_to_json(&res, 0, NULL, 1);
	check_common(o, "ok", 1);
	u = json_object_get(o, "updates");
	assert_int_equal(json_array_size(u), 2);
	assert_string_equal(str_at(json_array_get(u, 0), "ref"), "refs/heads/topic");
	assert_string_equal(str_at(json_array_get(u, 0), "old"), HEX_A);
	assert_string_equal(str_at(json_array_get(u, 0), "new"), HEX_B);
	assert_int_equal(json_object_size(json_array_get(u, 0)), 3);
	assert_string_equal(str_at(json_array_get(u, 1), "ref"), "refs/heads/other");
	assert_string_equal(str_at(json_array_get(u, 1), "old"),
			    "0000000000000000000000000000000000000000");
	assert_string_equal(str_at(json_array_get(u, 1), "new"), HEX_C);
	stats = json_object_get(o, "stats");
	assert_int_equal(int_at(stats, "commits"), 7);
	assert_int_equal(int_at(stats, "picked"), 5);
	assert_int_equal(int_at(stats, "dropped"), 2);
	assert_int_equal(int_at(stats, "objects"), 12);
	assert_true(int_at(stats, "pack_bytes") == 5000000000LL);
	assert_int_equal(int_at(json_object_get(stats, "merges"), "trivial"), 3);
	assert_int_equal(int_at(json_object_get(stats, "merges"), "full"), 4);
	assert_int_equal(int_at(json_object_get(stats, "merges"), "fallback"), 1);
	assert_int_equal(int_at(json_object_get(stats, "merges"), "similarity_computed"), 40);
	assert_int_equal(int_at(json_object_get(stats, "merges"), "similarity_reused"), 160);
	assert_string_equal(str_at(stats, "pack"), "pack-" HEX_D);
	assert_true(json_real_value(json_object_get(json_object_get(stats, "ms"), "total")) ==
		    12.5);
	assert_true(json_real_value(json_object_get(json_object_get(stats, "ms"), "walk")) == 0.25);
	json_decref(o);

	/* not applied, no pack: "pack" is null */
	res.stats.pack_name[0] = '\0';
	o = rq_result_to_json(&res, 0, NULL, 0);
	check_common(o, "ok", 0);
	assert_true(json_is_null(json_object_get(json_object_get(o, "stats"), "pack")));
	json_decref(o);
	rq_replay_result_free(&res);

	/* nothing to update */
	memset(&res, 0, sizeof(res));
	o = rq_result_to_json(&res, 0, NULL, 0);
	check_common(o, "ok", 0);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	json_decref(o);
}

static void test_conflict(void **state)
{
	static const char *const kinds[] = {"content", "add/add", "modify/delete", "rename",
					    "file/directory"};
	rq_replay_result res;
	json_t *o, *c, *paths;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.conflicted = 1;
	assert_int_equal(rq_oid_parse(&res.conflict_commit, &rq_oid_sha1, HEX_D, strlen(HEX_D)), 0);
	add_conflict(&res, "a.txt", RQ_CONFLICT_CONTENT);
	add_conflict(&res, "dir/n.txt", RQ_CONFLICT_ADD_ADD);
	add_conflict(&res, "gone.c", RQ_CONFLICT_MODIFY_DELETE);
	add_conflict(&res, "moved", RQ_CONFLICT_RENAME);
	add_conflict(&res, "d/f", RQ_CONFLICT_FILE_DIRECTORY);
	add_conflict(&res, "with \"quotes\" and \\ and \xc3\xa9", RQ_CONFLICT_CONTENT);
	res.stats.commits = 3;
	res.stats.picked = 1;

	o = rq_result_to_json(&res, 1, NULL, 0);
	check_common(o, "conflict", 0);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	c = json_object_get(o, "conflict");
	assert_true(json_is_object(c));
	assert_string_equal(str_at(c, "commit"), HEX_D);
	paths = json_object_get(c, "paths");
	assert_true(json_is_array(paths));
	assert_int_equal(json_array_size(paths), 6);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(str_at(json_array_get(paths, i), "path"),
				    res.conflicts.v[i].path);
		assert_string_equal(str_at(json_array_get(paths, i), "kind"), kinds[i]);
		assert_string_equal(rq_conflict_kind_name((rq_conflict_kind)i), kinds[i]);
	}
	assert_string_equal(str_at(json_array_get(paths, 5), "path"),
			    "with \"quotes\" and \\ and \xc3\xa9");
	assert_int_equal(int_at(json_object_get(o, "stats"), "picked"), 1);
	assert_null(json_object_get(c, "merge")); /* a pick's conflict */
	assert_null(json_object_get(c, "hint"));
	json_decref(o);
	/* a merge commit's: marked, with the command that shows its author's work */
	res.conflict_merge = 1;
	add_conflict(&res, "f", RQ_CONFLICT_RESOLUTION);
	o = rq_result_to_json(&res, 1, NULL, 0);
	c = json_object_get(o, "conflict");
	assert_true(json_is_true(json_object_get(c, "merge")));
	assert_string_equal(str_at(c, "hint"), "git show --remerge-diff " HEX_D);
	assert_string_equal(str_at(json_array_get(json_object_get(c, "paths"), 6), "kind"),
			    "resolution");
	json_decref(o);
	rq_replay_result_free(&res);
}

static void test_error(void **state)
{
	rq_replay_result res;
	rq_error err;
	json_t *o, *e;

	(void)state;
	rq_error_set(&err, RQ_E_REF_MOVED, "cannot lock ref '%s': is at %s but expected %s",
		     "refs/heads/topic", HEX_A, HEX_B);
	/* a failed apply after a clean run: the updates are not reported */
	memset(&res, 0, sizeof(res));
	add_update(&res, "refs/heads/topic", HEX_B, HEX_C);
	res.stats.commits = 2;
	o = rq_result_to_json(&res, -1, &err, 0);
	check_common(o, "error", 0);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	e = json_object_get(o, "error");
	assert_true(json_is_object(e));
	assert_string_equal(str_at(e, "code"), "ref_moved");
	assert_string_equal(str_at(e, "message"), err.msg);
	assert_int_equal(json_object_size(e), 2);
	assert_int_equal(int_at(json_object_get(o, "stats"), "commits"), 2);
	json_decref(o);
	rq_replay_result_free(&res);

	/* no result at all: an error before any replay */
	rq_error_set(&err, RQ_E_BAD_REVISION, "ambiguous argument 'x'");
	o = rq_result_to_json(NULL, -1, &err, 0);
	check_common(o, "error", 0);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	assert_string_equal(str_at(json_object_get(o, "error"), "code"), "bad_revision");
	assert_int_equal(int_at(json_object_get(o, "stats"), "commits"), 0);
	assert_true(json_is_null(json_object_get(json_object_get(o, "stats"), "pack")));
	json_decref(o);
}

static void test_code_names(void **state)
{
	static const struct {
		rq_code code;
		const char *name;
	} names[] = {
	    {RQ_OK, "ok"},
	    {RQ_E_USAGE, "usage"},
	    {RQ_E_BAD_REPO, "bad_repo"},
	    {RQ_E_BAD_REVISION, "bad_revision"},
	    {RQ_E_AMBIGUOUS, "ambiguous_ref"},
	    {RQ_E_NOT_A_REF, "not_a_ref"},
	    {RQ_E_BAD_REF, "bad_ref"},
	    {RQ_E_NOTHING, "nothing_to_replay"},
	    {RQ_E_MERGE_COMMIT, "merge_commit"},
	    {RQ_E_EMPTY_COMMIT, "empty_commit"},
	    {RQ_E_TOO_MANY_COMMITS, "too_many_commits"},
	    {RQ_E_IDENT, "no_identity"},
	    {RQ_E_BAD_DATE, "bad_date"},
	    {RQ_E_REF_MOVED, "ref_moved"},
	    {RQ_E_REF_LOCKED, "ref_locked"},
	    {RQ_E_IO, "io"},
	    {RQ_E_GIT, "git"},
	    {RQ_E_NOMEM, "out_of_memory"},
	    {RQ_E_CORRUPT_OBJECT, "corrupt_object"},
	    {RQ_E_CRASHED, "crashed"},
	    {RQ_E_INTERRUPTED, "interrupted"},
	    {RQ_E_INTERNAL, "internal"},
	    {RQ_E_UNSUPPORTED_REPO, "unsupported_repository"},
	    {RQ_E_TREE_TOO_DEEP, "tree_too_deep"},
	    {RQ_E_INVALID_JOB, "invalid_job"},
	    {RQ_E_TIMEOUT, "timeout"},
	    {RQ_E_DEAD, "dead_letter"},
	    {RQ_E_REDIS, "redis"},
	    {RQ_E_SIGN_KEY, "sign_key"},
	    {RQ_E_SIGN_FAILED, "sign_failed"},
	    {RQ_E_SIGN_UNAVAILABLE, "sign_unavailable"},
	};
	rq_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_t *o;
		assert_string_equal(rq_qerror_name(names[i].code), names[i].name);
		/* the core names its own codes and no other */
		assert_string_equal(rq_error_code_name(names[i].code),
				    names[i].code < RQ_E_CORE_END ? names[i].name : "internal");
		if (names[i].code == RQ_OK)
			continue;
		rq_error_set(&err, names[i].code, "message %zu", i);
		o = rq_result_to_json(NULL, -1, &err, 0);
		assert_non_null(o);
		assert_string_equal(str_at(json_object_get(o, "error"), "code"), names[i].name);
		json_decref(o);
	}
	/* every code of every layer has its own snake_case name; unknown codes
	 * are "internal" */
	for (int i = 0; i < RQ_E_QUEUE_END; i++) {
		const char *n = rq_qerror_name(i);
		assert_non_null(n);
		assert_true(strlen(n) > 0);
		assert_int_equal(strspn(n, "abcdefghijklmnopqrstuvwxyz_"), strlen(n));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(n, rq_qerror_name(j));
	}
	assert_string_equal(rq_qerror_name(RQ_E_QUEUE_END), "internal");
	assert_string_equal(rq_error_code_name(RQ_E_CORE_END), "internal");
	assert_string_equal(rq_qerror_name(-1), "internal");
	assert_string_equal(rq_qerror_name(1000), "internal");
}

/* "signed": true on a result that is not an error, never on one. */
static void test_signed_mark(void **state)
{
	rq_error err;
	json_t *ok = rq_result_to_json(NULL, 0, NULL, 0), *bad;
	(void)state;

	rq_error_set(&err, RQ_E_SIGN_FAILED, "gpg failed");
	bad = rq_result_to_json(NULL, -1, &err, 0);
	assert_int_equal(rq_result_set_signed(ok), 0);
	assert_int_equal(rq_result_set_signed(bad), 0);
	assert_int_equal(rq_result_set_signed(NULL), 0);
	assert_true(json_is_true(json_object_get(ok, "signed")));
	assert_null(json_object_get(bad, "signed"));
	json_decref(ok);
	json_decref(bad);
}

/* The JSON of real runs on a repository. */
static void test_real_runs(void **state)
{
	tu_repo *r = tu_repo_new(0);
	const char *ok_revs[] = {"main..topic"};
	const char *conf_revs[] = {"main..conf"};
	rq_replay_opts o;
	rq_replay_result res;
	rq_error err;
	json_t *j, *u;
	int rc;

	(void)state;
	tu_commit_file(r, "a.txt", "1\n", "one");
	tu_git(r, "git branch topic && git branch conf");
	tu_commit_file(r, "a.txt", "2\n", "two");
	tu_git(r, "git checkout -q topic");
	tu_commit_file(r, "t.txt", "t\n", "t");
	tu_git(r, "git checkout -q conf");
	tu_commit_file(r, "a.txt", "3\n", "three");
	tu_git(r, "git checkout -q main");

	memset(&o, 0, sizeof(o));
	o.mode = RQ_MODE_ONTO;
	o.target = "main";
	o.revisions = ok_revs;
	o.nrevisions = 1;
	rq_error_clear(&err);
	rc = rq_replay_run(tu_repo_open(r), &o, &res, &err);
	assert_int_equal(rc, 0);
	j = rq_result_to_json(&res, rc, &err, 0);
	check_common(j, "ok", 0);
	u = json_object_get(j, "updates");
	assert_int_equal(json_array_size(u), 1);
	assert_string_equal(str_at(json_array_get(u, 0), "ref"), "refs/heads/topic");
	assert_string_equal(str_at(json_array_get(u, 0), "new"),
			    tu_oid_hex(&res.upd.updates[0].new_id));
	assert_string_equal(str_at(json_array_get(u, 0), "old"),
			    tu_oid_hex(&res.upd.updates[0].old_id));
	assert_int_equal(int_at(json_object_get(j, "stats"), "commits"), 1);
	assert_int_equal(int_at(json_object_get(j, "stats"), "picked"), 1);
	assert_string_equal(str_at(json_object_get(j, "stats"), "pack"), res.stats.pack_name);
	json_decref(j);
	rq_replay_result_free(&res);

	o.revisions = conf_revs;
	rc = rq_replay_run(tu_repo_open(r), &o, &res, &err);
	assert_int_equal(rc, 1);
	j = rq_result_to_json(&res, rc, &err, 0);
	check_common(j, "conflict", 0);
	{
		json_t *c = json_object_get(j, "conflict");
		rq_oid conf;
		tu_rev_oid(r, "conf", &conf);
		assert_string_equal(str_at(c, "commit"), tu_oid_hex(&conf));
		assert_int_equal(json_array_size(json_object_get(c, "paths")), 1);
		assert_string_equal(str_at(json_array_get(json_object_get(c, "paths"), 0), "path"),
				    "a.txt");
		assert_string_equal(str_at(json_array_get(json_object_get(c, "paths"), 0), "kind"),
				    "content");
	}
	json_decref(j);
	rq_replay_result_free(&res);

	o.target = "nope";
	rc = rq_replay_run(tu_repo_open(r), &o, &res, &err);
	assert_int_equal(rc, -1);
	j = rq_result_to_json(&res, rc, &err, 0);
	check_common(j, "error", 0);
	assert_string_equal(str_at(json_object_get(j, "error"), "code"), "bad_revision");
	assert_string_equal(str_at(json_object_get(j, "error"), "message"), err.msg);
	json_decref(j);
	rq_replay_result_free(&res);
	tu_repo_free(r);
}

/* A keep-going result: the clean refs' updates with status conflict, and
 * every ref's outcome. */
static void test_keep_going(void **state)
{
	rq_replay_result res;
	rq_conflicts conf = {0};
	rq_oid a, b, c, d;
	rq_error err;
	json_t *o, *refs, *r;

	(void)state;
	memset(&res, 0, sizeof(res));
	rq_oid_parse(&a, &rq_oid_sha1, HEX_A, strlen(HEX_A));
	rq_oid_parse(&b, &rq_oid_sha1, HEX_B, strlen(HEX_B));
	rq_oid_parse(&c, &rq_oid_sha1, HEX_C, strlen(HEX_C));
	rq_oid_parse(&d, &rq_oid_sha1, HEX_D, strlen(HEX_D));
	add_update(&res, "refs/heads/ok", HEX_A, HEX_B);
	assert_int_equal(rq_conflicts_add(&conf, "x.c", RQ_CONFLICT_MODIFY_DELETE), 0);
	assert_int_equal(rq_outcome_add_failure(&res, 3, &c, 0, &conf, &err), 0);
	assert_int_equal(rq_outcome_add_ref(&res, "refs/heads/ok", &a, &b, 1, &err), 0);
	assert_int_equal(rq_outcome_add_ref(&res, "refs/heads/bad", &c, NULL, 3, &err), 0);
	assert_int_equal(rq_outcome_add_ref(&res, "refs/heads/up", &d, NULL, 4, &err), 0);
	res.refs[2].status = RQ_REF_BLOCKED;
	res.refs[2].blocked_by = strdup("refs/heads/bad");
	res.keep_going = 1;
	res.conflicted = 1;
	res.conflict_commit = c;
	add_conflict(&res, "x.c", RQ_CONFLICT_MODIFY_DELETE);

	o = rq_result_to_json(&res, 1, NULL, 1);
	check_common(o, "conflict", 1);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 1);
	refs = json_object_get(o, "refs");
	assert_int_equal(json_array_size(refs), 3);
	r = json_array_get(refs, 0);
	assert_string_equal(str_at(r, "status"), "ok");
	assert_string_equal(str_at(r, "new"), HEX_B);
	assert_null(json_object_get(r, "conflict"));
	r = json_array_get(refs, 1);
	assert_string_equal(str_at(r, "status"), "conflict");
	assert_true(json_is_null(json_object_get(r, "new")));
	assert_string_equal(str_at(json_object_get(r, "conflict"), "commit"), HEX_C);
	assert_string_equal(
	    str_at(json_array_get(json_object_get(json_object_get(r, "conflict"), "paths"), 0),
		   "kind"),
	    "modify/delete");
	r = json_array_get(refs, 2);
	assert_string_equal(str_at(r, "status"), "blocked");
	assert_string_equal(str_at(r, "old"), HEX_D);
	assert_string_equal(str_at(json_object_get(r, "blocked_by"), "ref"), "refs/heads/bad");
	assert_string_equal(str_at(json_object_get(r, "blocked_by"), "commit"), HEX_C);
	json_decref(o);
	/* an error drops the lists; without keep_going there is no "refs" */
	o = rq_result_to_json(&res, -1, NULL, 0);
	assert_null(json_object_get(o, "refs"));
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	json_decref(o);
	res.keep_going = 0;
	o = rq_result_to_json(&res, 1, NULL, 0);
	assert_null(json_object_get(o, "refs"));
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 0);
	json_decref(o);
	rq_replay_result_free(&res);
}

/* A train: its cars, ok, conflicting and skipped. */
static void test_train(void **state)
{
	rq_train_result res;
	json_t *o, *cars, *car;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.method = RQ_TRAIN_MERGE;
	res.target_ref = strdup("refs/heads/main");
	res.ncars = 3;
	res.cars = calloc(3, sizeof(*res.cars));
	assert_non_null(res.cars);
	rq_oid_parse(&res.base, &rq_oid_sha1, HEX_A, strlen(HEX_A));
	rq_oid_parse(&res.head, &rq_oid_sha1, HEX_B, strlen(HEX_B));
	res.cars[0] = (rq_car_result){.name = strdup("mr-1"),
				      .status = RQ_CAR_OK,
				      .ref = strdup("refs/train/main/mr-1"),
				      .merge_bases = 2};
	rq_oid_parse(&res.cars[0].commit, &rq_oid_sha1, HEX_B, strlen(HEX_B));
	rq_oid_parse(&res.cars[0].onto, &rq_oid_sha1, HEX_A, strlen(HEX_A));
	rq_oid_parse(&res.cars[0].tip, &rq_oid_sha1, HEX_C, strlen(HEX_C));
	res.cars[1] = (rq_car_result){.name = strdup("mr-2"), .status = RQ_CAR_CONFLICT};
	rq_oid_parse(&res.cars[1].conflict_commit, &rq_oid_sha1, HEX_D, strlen(HEX_D));
	assert_int_equal(rq_conflicts_add(&res.cars[1].conflicts, "f", RQ_CONFLICT_CONTENT), 0);
	res.cars[2] = (rq_car_result){.name = strdup("mr-3"), .status = RQ_CAR_SKIPPED};
	add_update(&res.replay, "refs/train/main/mr-1", "0000000000000000000000000000000000000000",
		   HEX_B);
	res.replay.conflicted = 1;
	add_conflict(&res.replay, "f", RQ_CONFLICT_CONTENT);

	o = rq_result_train_to_json(&res, 1, NULL, 1);
	check_common(o, "conflict", 1);
	assert_int_equal(json_array_size(json_object_get(o, "updates")), 1);
	assert_string_equal(str_at(json_object_get(o, "train"), "method"), "merge");
	assert_string_equal(str_at(json_object_get(o, "train"), "head"), HEX_B);
	cars = json_object_get(o, "cars");
	assert_int_equal(json_array_size(cars), 3);
	car = json_array_get(cars, 0);
	assert_string_equal(str_at(car, "status"), "ok");
	assert_string_equal(str_at(car, "commit"), HEX_B);
	assert_string_equal(str_at(car, "ref"), "refs/train/main/mr-1");
	assert_int_equal(int_at(car, "merge_bases"), 2);
	car = json_array_get(cars, 1);
	assert_string_equal(str_at(car, "status"), "conflict");
	assert_string_equal(str_at(json_object_get(car, "conflict"), "commit"), HEX_D);
	assert_null(json_object_get(car, "commit"));
	car = json_array_get(cars, 2);
	assert_string_equal(str_at(car, "status"), "skipped");
	assert_null(json_object_get(car, "tip"));
	json_decref(o);
	o = rq_result_train_to_json(&res, -1, NULL, 0);
	assert_null(json_object_get(o, "cars"));
	json_decref(o);
	rq_train_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok),		cmocka_unit_test(test_conflict),
	    cmocka_unit_test(test_error),	cmocka_unit_test(test_code_names),
	    cmocka_unit_test(test_signed_mark), cmocka_unit_test(test_real_runs),
	    cmocka_unit_test(test_keep_going),	cmocka_unit_test(test_train),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
