/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refproto: ref names written to JSON and read back without loss, the
 * intent's round trip, the rule for when refs move, and where the refs of
 * a stored intent stand (done, to do, moved elsewhere, of no use).
 */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_odb.h"
#include "rq_refproto.h"
#include "rq_refs.h"
#include "rq_repofmt.h"
#include "rq_result_json.h"

#define HEX_A "1111111111111111111111111111111111111111"
#define HEX_B "2222222222222222222222222222222222222222"

/* A name through JSON text and back. */
static char *round_trip(const char *name, char **text)
{
	json_t *v = rq_result_json_refname(name), *back;
	char *out;

	assert_non_null(v);
	*text = json_dumps(v, JSON_ENCODE_ANY);
	assert_non_null(*text);
	back = json_loads(*text, JSON_DECODE_ANY, NULL);
	assert_non_null(back);
	out = rq_result_json_refname_bytes(back);
	json_decref(v);
	json_decref(back);
	return out;
}

static void test_refname_lossless(void **state)
{
	static const char *const names[] = {
	    "refs/heads/main",	 "refs/heads/b\xe9",	  "refs/heads/\xc3\xa9t\xc3\xa9",
	    "refs/heads/a\\x41", "refs/heads/\xff\xfe\\", "refs/heads/\xf0\x9f\x98\x80"};
	char *text, *back;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		back = round_trip(names[i], &text);
		assert_non_null(back);
		assert_string_equal(back, names[i]);
		free(back);
		free(text);
	}
	/* UTF-8 names without a backslash are written as they are */
	back = round_trip("refs/heads/\xc3\xa9t\xc3\xa9", &text);
	assert_string_equal(text, "\"refs/heads/\xc3\xa9t\xc3\xa9\"");
	free(back);
	free(text);
	/* a byte that is not UTF-8, and a backslash, as \xNN */
	back = round_trip("refs/heads/b\xe9\\", &text);
	assert_string_equal(text, "\"refs/heads/b\\\\xE9\\\\x5C\"");
	free(back);
	free(text);
}

static void test_refname_bad(void **state)
{
	static const char *const bad[] = {"refs/heads/a\\", "refs/heads/a\\x4", "refs/heads/a\\y41",
					  "refs/heads/a\\x00", "refs/heads/a\\xG1"};
	json_t *v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = json_string(bad[i]);
		assert_null(rq_result_json_refname_bytes(v));
		json_decref(v);
	}
	assert_null(rq_result_json_refname_bytes(NULL));
	v = json_integer(3);
	assert_null(rq_result_json_refname_bytes(v));
	json_decref(v);
	v = json_string("refs/heads/\\xe9"); /* lower case is read too */
	{
		char *b = rq_result_json_refname_bytes(v);
		assert_string_equal(b, "refs/heads/\xe9");
		free(b);
	}
	json_decref(v);
}

/* An update of ids at algo's width into res. */
static void add_update_at(rq_replay_result *res, const rq_oid_algo *algo, const char *ref,
			  const char *o, const char *n)
{
	rq_ref_update *v = realloc(res->upd.updates, (res->upd.nupdates + 1) * sizeof(*v));
	assert_non_null(v);
	res->upd.updates = v;
	res->upd.algo = algo;
	v += res->upd.nupdates++;
	v->ref = strdup(ref);
	assert_int_equal(rq_oid_parse(&v->old_id, algo, o, strlen(o)), 0);
	assert_int_equal(rq_oid_parse(&v->new_id, algo, n, strlen(n)), 0);
}

static void add_update(rq_replay_result *res, const char *ref, const char *o, const char *n)
{
	add_update_at(res, &rq_oid_sha1, ref, o, n);
}

static void test_intent_round_trip(void **state)
{
	rq_replay_result res;
	rq_refproto_intent in;
	rq_error err;
	json_t *j;
	char *text;

	(void)state;
	memset(&res, 0, sizeof(res));
	add_update(&res, "refs/heads/b\xe9", HEX_A, HEX_B);
	add_update(&res, "refs/heads/main", HEX_B, HEX_A);
	snprintf(res.upd.reflog_msg, sizeof(res.upd.reflog_msg), "replay --onto %s", HEX_A);
	j = rq_refproto_intent_json(rq_result_to_json(&res, 0, NULL, 1), &res);
	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha1, &in, &err), 0);
	assert_int_equal(in.upd.nupdates, 2);
	assert_string_equal(in.upd.updates[0].ref, "refs/heads/b\xe9");
	assert_true(rq_oid_eq(&in.upd.updates[0].old_id, &res.upd.updates[0].old_id));
	assert_true(rq_oid_eq(&in.upd.updates[1].new_id, &res.upd.updates[1].new_id));
	assert_string_equal(in.upd.reflog_msg, res.upd.reflog_msg);
	assert_null(json_object_get(in.result, "reflog_msg"));
	assert_string_equal(json_string_value(json_object_get(in.result, "status")), "ok");
	assert_false(in.prior);
	rq_refproto_intent_free(&in);
	free(text);
	assert_int_equal(rq_refproto_intent_parse("[1]", &rq_oid_sha1, &in, &err), -1);
	assert_int_equal(
	    rq_refproto_intent_parse("{\"updates\":[{\"ref\":\"x\"}]}", &rq_oid_sha1, &in, &err),
	    -1);
	rq_replay_result_free(&res);
}

/* A SHA-256 result: its JSON, its intent and its update lines carry 64
 * digits; an intent is read back only at the repository's width. */
static void test_intent_sha256(void **state)
{
	static const char a64[] =
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	rq_replay_result res;
	rq_refproto_intent in;
	rq_ref_update *u;
	rq_error err;
	json_t *j;
	char *text, *lines, want[200];

	(void)state;
	memset(&res, 0, sizeof(res));
	res.upd.algo = &rq_oid_sha256;
	assert_non_null(u = calloc(1, sizeof(*u)));
	res.upd.updates = u;
	res.upd.nupdates = 1;
	u->ref = strdup("refs/heads/main");
	memset(u->new_id.id, 0xaa, 32);
	j = rq_refproto_intent_json(rq_result_to_json(&res, 0, NULL, 1), &res);
	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_non_null(strstr(text, a64));
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha1, &in, &err), -1);
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha256, &in, &err), 0);
	assert_true(rq_oid_eq(&in.upd.updates[0].new_id, &u->new_id));
	assert_true(rq_oid_is_zero(&in.upd.updates[0].old_id));
	assert_ptr_equal(in.upd.algo, &rq_oid_sha256);
	rq_refproto_intent_free(&in);
	free(text);
	snprintf(want, sizeof(want), "update refs/heads/main %s %064d\n", a64, 0);
	assert_non_null(lines = rq_refs_format_updates(&res.upd));
	assert_string_equal(lines, want);
	free(lines);
	rq_replay_result_free(&res);
	/* a SHA-1 intent is no SHA-256 one */
	memset(&res, 0, sizeof(res));
	add_update(&res, "refs/heads/main", HEX_A, HEX_B);
	j = rq_refproto_intent_json(rq_result_to_json(&res, 0, NULL, 1), &res);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha256, &in, &err), -1);
	free(text);
	rq_replay_result_free(&res);
}

static void test_applies(void **state)
{
	rq_replay_result res;

	(void)state;
	memset(&res, 0, sizeof(res));
	assert_true(rq_refproto_applies(0, &res, 0));
	assert_false(rq_refproto_applies(1, &res, 1)); /* nothing clean to move */
	assert_false(rq_refproto_applies(-1, &res, 1));
	add_update(&res, "refs/heads/x", HEX_A, HEX_B);
	assert_false(rq_refproto_applies(1, &res, 0));
	assert_true(rq_refproto_applies(1, &res, 1));
	rq_replay_result_free(&res);
}

/* A repository with branches x and y at two commits. */
static void test_intent_todo(void **state)
{
	tu_repo *r = tu_repo_new(0);
	char *c1, *c2;
	rq_replay_result res, todo;
	rq_refproto_intent in;
	rq_error err;
	json_t *j;
	char *text;

	(void)state;
	tu_commit_file(r, "a", "1", "one");
	c1 = tu_capture(r, "git rev-parse HEAD");
	tu_commit_file(r, "a", "2", "two");
	c2 = tu_capture(r, "git rev-parse HEAD");
	tu_git(r, "git branch x %s && git branch $(printf 'y\\351') %s", c2, c1);
	memset(&res, 0, sizeof(res));
	add_update(&res, "refs/heads/x", c1, c2);     /* done */
	add_update(&res, "refs/heads/y\xe9", c1, c2); /* to do */
	j = rq_refproto_intent_json(rq_result_to_json(&res, 0, NULL, 1), &res);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha1, &in, &err), 0);
	assert_int_equal(rq_refproto_intent_todo(tu_repo_open(r), &in, &todo, &err), 1);
	assert_int_equal(todo.upd.nupdates, 1);
	assert_string_equal(todo.upd.updates[0].ref, "refs/heads/y\xe9");
	free(todo.upd.updates);
	/* x elsewhere: moved, named */
	tu_git(r, "git branch -f x main~1 && git commit -q --allow-empty -m three");
	tu_git(r, "git branch -f x main");
	assert_int_equal(rq_refproto_intent_todo(tu_repo_open(r), &in, &todo, &err), -1);
	assert_int_equal(err.code, RQ_E_REF_MOVED);
	assert_non_null(strstr(err.msg, "refs/heads/x"));
	rq_refproto_intent_free(&in);
	free(text);
	free(c1);
	free(c2);
	rq_replay_result_free(&res);
	tu_repo_free(r);
}

/* A SHA-256 repository (upstream git's), opened as the worker opens it
 * (rq_repofmt_open, rq_odb_install at its width): a stored intent's refs
 * are read and its new commits found at 64 digits; one ref done, one to
 * do. */
static void test_intent_todo_sha256(void **state)
{
	const char *env = getenv("RQ_UPSTREAM_GIT");
	char up[PATH_MAX], *c1, *c2, *text;
	tu_repo *r;
	git_repository *repo;
	rq_odb_opts opts = {.algo = &rq_oid_sha256};
	rq_replay_result res, todo;
	rq_refproto_intent in;
	rq_error err;
	json_t *j;

	(void)state;
	if (!realpath(env && *env ? env : "/work/shared/upstream-git/git", up) || access(up, X_OK))
		skip();
	r = tu_repo_new(0);
	tu_git(r,
	       "rm -rf .git && '%s' init -q -b main --object-format=sha256 . && "
	       "'%s' config maintenance.auto false && "
	       "'%s' commit -q --allow-empty -m one && '%s' branch x && '%s' branch y && "
	       "'%s' commit -q --allow-empty -m two",
	       up, up, up, up, up, up);
	c1 = tu_capture(r, "'%s' rev-parse x", up);
	c2 = tu_capture(r, "'%s' rev-parse main", up);
	tu_git(r, "'%s' branch -f x main", up);
	assert_int_equal(rq_repofmt_open(&repo, r->path, 0, &err), 0);
	assert_int_equal(rq_odb_install(repo, &opts, &err), 0);
	memset(&res, 0, sizeof(res));
	add_update_at(&res, &rq_oid_sha256, "refs/heads/x", c1, c2); /* done */
	add_update_at(&res, &rq_oid_sha256, "refs/heads/y", c1, c2); /* to do */
	j = rq_refproto_intent_json(rq_result_to_json(&res, 0, NULL, 1), &res);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_int_equal(rq_refproto_intent_parse(text, &rq_oid_sha256, &in, &err), 0);
	assert_int_equal(rq_refproto_intent_todo(repo, &in, &todo, &err), 1);
	assert_int_equal(todo.upd.nupdates, 1);
	assert_string_equal(todo.upd.updates[0].ref, "refs/heads/y");
	free(todo.upd.updates);
	rq_refproto_intent_free(&in);
	git_repository_free(repo);
	free(text);
	free(c1);
	free(c2);
	rq_replay_result_free(&res);
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refname_lossless),  cmocka_unit_test(test_refname_bad),
	    cmocka_unit_test(test_intent_round_trip), cmocka_unit_test(test_intent_sha256),
	    cmocka_unit_test(test_applies),	      cmocka_unit_test(test_intent_todo),
	    cmocka_unit_test(test_intent_todo_sha256)};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
