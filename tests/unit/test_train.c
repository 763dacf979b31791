/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_train: merge trains through the library. Rebase cars against git
 * cherry-pick onto the previous car (same committer and date: the ids of
 * git replay), merge cars against git merge-tree --write-tree and git
 * commit-tree; a conflicting car drops out, a skipped one changes
 * nothing, criss-cross merge bases, the options refused before any git
 * work, the cars' refs applied, nothing left behind on error.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_refs.h"
#include "rq_train.h"

#define RQ_DATE "@1700099999 +0000"

static tu_repo *tmpl;
static rq_ident committer;

/*
 * main:  c1 - c2 - m1 (f.txt "main")
 * mr-1:  c2 - a1 (a.txt line 2) - a2 (adds one.txt)
 * mr-2:  c2 - b1 (adds two.txt)
 * mr-3:  c2 - x1 (f.txt "other": conflicts with main)
 * mr-4:  mr-1 - d1 (a.txt line 5)  (stacked on mr-1)
 */
static int group_setup(void **state)
{
	tu_repo *r;

	if (tu_group_setup(state) < 0)
		return -1;
	memset(&committer, 0, sizeof(committer));
	if (rq_ident_set(&committer, TU_COMMITTER_NAME, TU_COMMITTER_EMAIL, NULL) < 0)
		return -1;
	committer.time = 1700099999;
	tmpl = r = tu_repo_new(0);
	tu_commit_file(r, "a.txt", "1\n2\n3\n4\n5\n6\n", "c1");
	tu_commit_file(r, "f.txt", "f\n", "c2");
	tu_git(r, "git branch mr-1 && git branch mr-2 && git branch mr-3");
	tu_commit_file(r, "f.txt", "main\n", "m1");
	tu_git(r, "git checkout -q mr-1");
	tu_commit_file(r, "a.txt", "1\ntwo\n3\n4\n5\n6\n", "a1");
	tu_commit_file(r, "one.txt", "1\n", "a2");
	tu_git(r, "git checkout -q -b mr-4");
	tu_commit_file(r, "a.txt", "1\ntwo\n3\n4\nfive\n6\n", "d1");
	tu_git(r, "git checkout -q mr-2");
	tu_commit_file(r, "two.txt", "2\n", "b1");
	tu_git(r, "git checkout -q mr-3");
	tu_commit_file(r, "f.txt", "other\n", "x1");
	tu_git(r, "git checkout -q main");
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(tmpl);
	tmpl = NULL;
	return tu_group_teardown(state);
}

static int setup(void **state)
{
	return tu_copy_setup(state, tmpl, RQ_DATE);
}

/* Cars named after their branch, each the branch alone. */
typedef struct cars {
	rq_train_car v[8];
	const char *revs[8][1];
	size_t n;
} cars;

static void add_car(cars *c, const char *branch, int skip)
{
	c->revs[c->n][0] = branch;
	c->v[c->n] = (rq_train_car){branch, c->revs[c->n], 1, skip};
	c->n++;
}

static rq_train_opts make_opts(const cars *c, rq_train_method method)
{
	rq_train_opts o;

	memset(&o, 0, sizeof(o));
	o.target = "main";
	o.method = method;
	o.cars = c->v;
	o.ncars = c->n;
	o.committer = &committer;
	return o;
}

static int run(tu_repo *r, const rq_train_opts *o, rq_train_result *res, int want)
{
	rq_error err;
	int rc;

	rq_error_clear(&err);
	rc = rq_train_run(tu_repo_open(r), o, res, &err);
	if (rc != want)
		fail_msg("rq_train_run returned %d, want %d: %s", rc, want, err.msg);
	return rc;
}

static void assert_oid_hex(const rq_oid *id, const char *hex)
{
	if (!hex || strcmp(tu_oid_hex(id), hex))
		fail_msg("%s != %s", tu_oid_hex(id), hex ? hex : "(none)");
}

/* git cherry-pick of main..<branch> onto onto: the commit git replay makes. */
static char *pick_oracle(tu_repo *r, const rq_oid *onto, const char *branch)
{
	return tu_worktree_head(r, tu_oid_hex(onto), "git cherry-pick --allow-empty main..%s",
				branch);
}

/* git merge-tree --write-tree + git commit-tree, as the train's merge. */
static char *merge_oracle(tu_repo *r, const rq_oid *onto, const char *branch)
{
	return tu_capture(r,
			  "t=$(git merge-tree --write-tree %s %s) && "
			  "GIT_AUTHOR_NAME=\"$GIT_COMMITTER_NAME\" "
			  "GIT_AUTHOR_EMAIL=\"$GIT_COMMITTER_EMAIL\" "
			  "GIT_AUTHOR_DATE=\"$GIT_COMMITTER_DATE\" "
			  "git commit-tree $t -p %s -p %s -m \"Merge branch '%s' into main\"",
			  tu_oid_hex(onto), branch, tu_oid_hex(onto), branch, branch);
}

/* The train of test_rebase and test_merge: mr-1, mr-3 (it conflicts with
 * mr-1), mr-2, mr-4 (mr-1's commits and one more), run by method (1: a
 * car conflicted); *main_id: main, the train's target. */
static void four_cars(tu_repo *r, cars *c, rq_train_method method, rq_train_result *res,
		      rq_oid *main_id)
{
	rq_train_opts o;

	add_car(c, "mr-1", 0);
	add_car(c, "mr-3", 0);
	add_car(c, "mr-2", 0);
	add_car(c, "mr-4", 0);
	o = make_opts(c, method);
	run(r, &o, res, 1);
	tu_rev_oid(r, "main", main_id);
}

static void test_rebase(void **state)
{
	tu_repo *r = *state;
	cars c = {0};
	rq_train_result res;
	rq_oid main_id;
	char *want;

	four_cars(r, &c, RQ_TRAIN_REBASE, &res, &main_id);
	assert_int_equal(res.cars[0].status, RQ_CAR_OK);
	assert_int_equal(res.cars[1].status, RQ_CAR_CONFLICT);
	assert_int_equal(res.cars[2].status, RQ_CAR_OK);
	assert_int_equal(res.cars[3].status, RQ_CAR_OK);
	want = pick_oracle(r, &main_id, "mr-1");
	assert_oid_hex(&res.cars[0].commit, want);
	free(want);
	/* mr-3 conflicted: mr-2 goes onto mr-1's result */
	assert_true(rq_oid_eq(&res.cars[2].onto, &res.cars[0].commit));
	assert_string_equal(res.cars[1].conflicts.v[0].path, "f.txt");
	want = pick_oracle(r, &res.cars[0].commit, "mr-2");
	assert_oid_hex(&res.cars[2].commit, want);
	free(want);
	/* mr-4 holds mr-1's commits: dropped as already there */
	assert_int_equal(res.cars[3].commits, 3);
	assert_int_equal(res.cars[3].dropped, 2);
	assert_int_equal(res.cars[3].picked, 1);
	assert_true(rq_oid_eq(&res.head, &res.cars[3].commit));
	/* the first conflict is the train's; the updates are the cars' refs */
	assert_int_equal(res.replay.conflicted, 1);
	assert_int_equal(res.replay.upd.nupdates, 3);
	assert_string_equal(res.replay.upd.updates[1].ref, "refs/train/main/mr-2");
	/* every pick is one merge, counted once (breaking the chain of renames
	 * between cars is none: the counts were negative when it was taken off) */
	assert_int_equal(res.replay.stats.merges_trivial + res.replay.stats.merges_full, 7);
	assert_int_equal(res.replay.stats.merges_trivial, 0);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	rq_train_result_free(&res);
}

static void test_merge(void **state)
{
	tu_repo *r = *state;
	cars c = {0};
	rq_train_opts o;
	rq_train_result res;
	rq_oid main_id;
	char *want;

	four_cars(r, &c, RQ_TRAIN_MERGE, &res, &main_id);
	want = merge_oracle(r, &main_id, "mr-1");
	assert_oid_hex(&res.cars[0].commit, want);
	free(want);
	assert_int_equal(res.cars[1].status, RQ_CAR_CONFLICT);
	want = merge_oracle(r, &res.cars[0].commit, "mr-2");
	assert_oid_hex(&res.cars[2].commit, want);
	free(want);
	want = merge_oracle(r, &res.cars[2].commit, "mr-4");
	assert_oid_hex(&res.cars[3].commit, want);
	free(want);
	assert_int_equal(res.cars[0].merge_bases, 1);
	assert_int_equal(res.replay.stats.picked, 3); /* three merge commits */
	assert_int_equal(res.replay.stats.merges_trivial + res.replay.stats.merges_full, 4);
	rq_train_result_free(&res);
	/* a car already in the previous result: nothing to add */
	c.n = 0;
	add_car(&c, "mr-4", 0);
	add_car(&c, "mr-1", 0);
	o = make_opts(&c, RQ_TRAIN_MERGE);
	run(r, &o, &res, 0);
	assert_int_equal(res.cars[1].up_to_date, 1);
	assert_true(rq_oid_eq(&res.cars[1].commit, &res.cars[0].commit));
	rq_train_result_free(&res);
}

/* A skipped car changes nothing: the train equals the one without it. */
static void test_skip(void **state)
{
	tu_repo *r = *state;
	cars with = {0}, without = {0};
	rq_train_opts o;
	rq_train_result a, b;

	add_car(&with, "mr-1", 0);
	add_car(&with, "mr-2", 1);
	add_car(&with, "mr-4", 0);
	add_car(&without, "mr-1", 0);
	add_car(&without, "mr-4", 0);
	for (int m = 0; m < 2; m++) {
		o = make_opts(&with, (rq_train_method)m);
		run(r, &o, &a, 0);
		o = make_opts(&without, (rq_train_method)m);
		run(r, &o, &b, 0);
		assert_int_equal(a.cars[1].status, RQ_CAR_SKIPPED);
		assert_true(rq_oid_eq(&a.cars[0].commit, &b.cars[0].commit));
		assert_true(rq_oid_eq(&a.cars[2].commit, &b.cars[1].commit));
		assert_int_equal(a.replay.upd.nupdates, 2);
		rq_train_result_free(&a);
		rq_train_result_free(&b);
	}
}

/* main and side merge each other: two merge bases, a virtual one. */
static void test_criss_cross(void **state)
{
	tu_repo *r = *state;
	cars c = {0};
	rq_train_opts o;
	rq_train_result res;
	rq_oid main_id;
	char *want;

	tu_git(r, "git checkout -q -b side mr-2 && git merge -q --no-edit mr-1 && "
		  "git checkout -q -b other mr-1 && git merge -q --no-edit mr-2 && "
		  "git checkout -q main && git merge -q --no-edit other");
	tu_git(r, "git checkout -q side");
	tu_commit_file(r, "a.txt", "1\ntwo\n3\n4\n5\nsix\n", "side six");
	tu_git(r, "git checkout -q main");
	setenv("GIT_COMMITTER_DATE", RQ_DATE, 1); /* the oracle commits as the train does */
	add_car(&c, "side", 0);
	o = make_opts(&c, RQ_TRAIN_MERGE);
	run(r, &o, &res, 0);
	assert_int_equal(res.cars[0].merge_bases, 2);
	tu_rev_oid(r, "main", &main_id);
	want = merge_oracle(r, &main_id, "side");
	assert_oid_hex(&res.cars[0].commit, want);
	free(want);
	rq_train_result_free(&res);
}

/* Options refused before any git work, with their codes. */
static void test_refused(void **state)
{
	tu_repo *r = *state;
	cars c = {0};
	rq_train_opts o;
	rq_train_result res;
	rq_error err;
	struct {
		const char *target, *prefix, *message;
		int method;
		rq_code code;
	} cases[] = {
	    {"main", "refs/x", NULL, 0, RQ_E_BAD_REF},
	    {"main", NULL, "msg", RQ_TRAIN_REBASE, RQ_E_USAGE},
	    {"", NULL, NULL, 0, RQ_E_USAGE},
	    {"nosuch", NULL, NULL, 0, RQ_E_NOT_A_REF},
	    {"HEAD~1", NULL, NULL, 0, RQ_E_NOT_A_REF},
	};

	add_car(&c, "mr-1", 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = make_opts(&c, (rq_train_method)cases[i].method);
		o.target = cases[i].target;
		o.ref_prefix = cases[i].prefix;
		o.message = cases[i].message;
		rq_error_clear(&err);
		assert_int_equal(rq_train_run(tu_repo_open(r), &o, &res, &err), -1);
		if (err.code != cases[i].code)
			fail_msg("case %zu: %s (%s)", i, rq_error_code_name(err.code), err.msg);
		rq_train_result_free(&res);
	}
	/* no car; a car twice; a bad name; a car with two tips */
	o = make_opts(&c, RQ_TRAIN_REBASE);
	o.ncars = 0;
	assert_int_equal(rq_train_run(tu_repo_open(r), &o, &res, &err), -1);
	assert_int_equal(err.code, RQ_E_NOTHING);
	rq_train_result_free(&res);
	add_car(&c, "mr-1", 0);
	o = make_opts(&c, RQ_TRAIN_MERGE);
	assert_int_equal(rq_train_run(tu_repo_open(r), &o, &res, &err), -1);
	assert_non_null(strstr(err.msg, "twice"));
	rq_train_result_free(&res);
	{
		const char *two[] = {"mr-1", "mr-2"};
		rq_train_car car = {"both", two, 2, 0};
		o.cars = &car;
		o.ncars = 1;
		for (int m = 0; m < 2; m++) {
			o.method = (rq_train_method)m;
			assert_int_equal(rq_train_run(tu_repo_open(r), &o, &res, &err), -1);
			assert_non_null(strstr(err.msg, "one tip"));
			rq_train_result_free(&res);
		}
	}
	/* a tip with no history in common: refused, as git merge does */
	tu_git(r, "git checkout -q --orphan lonely && git rm -rqf . && echo x >x.txt && "
		  "git add x.txt && git commit -q -m lonely && git checkout -q main");
	{
		const char *lone[] = {"lonely"};
		rq_train_car car = {"lonely", lone, 1, 0};
		o = make_opts(&c, RQ_TRAIN_MERGE);
		o.cars = &car;
		o.ncars = 1;
		assert_int_equal(rq_train_run(tu_repo_open(r), &o, &res, &err), -1);
		assert_non_null(
		    strstr(err.msg, "car 'lonely': refusing to merge unrelated histories"));
		rq_train_result_free(&res);
	}
	tu_assert_no_tmpdir(r);
}

/* The cars' refs, applied; a prefix; none. */
static void test_refs(void **state)
{
	tu_repo *r = *state;
	cars c = {0};
	rq_train_opts o;
	rq_train_result res;
	rq_error err;
	rq_oid got;

	add_car(&c, "mr-1", 0);
	add_car(&c, "mr-2", 0);
	o = make_opts(&c, RQ_TRAIN_MERGE);
	o.ref_prefix = "refs/ci/train-7/";
	run(r, &o, &res, 0);
	assert_string_equal(res.replay.upd.updates[0].ref, "refs/ci/train-7/mr-1");
	assert_true(rq_oid_is_zero(&res.replay.upd.updates[0].old_id));
	rq_error_clear(&err);
	assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.replay.upd, &committer, &err), 0);
	tu_rev_oid(r, "refs/ci/train-7/mr-2", &got);
	assert_true(rq_oid_eq(&got, &res.cars[1].commit));
	assert_string_equal(res.replay.upd.reflog_msg, "train --merge main");
	rq_train_result_free(&res);
	o.no_refs = 1;
	run(r, &o, &res, 0);
	assert_int_equal(res.replay.upd.nupdates, 0);
	assert_null(res.cars[0].ref);
	rq_train_result_free(&res);
}

static void test_names(void **state)
{
	static const char *const good[] = {"mr-17", "a", "A.b_c-9", "x.lockx", "1"};
	static const char *const bad[] = {"",
					  "-x",
					  ".x",
					  "a..b",
					  "x.",
					  "x.lock",
					  "a/b",
					  "a b",
					  "_x",
					  "0123456789012345678901234567890123456789"
					  "012345678901234567890123456789"};
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(rq_train_name_valid(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rq_train_name_valid(bad[i]))
			fail_msg("'%s' accepted", bad[i]);
	assert_false(rq_train_name_valid(NULL));
	assert_true(rq_train_prefix_valid("refs/train/main/"));
	assert_false(rq_train_prefix_valid("refs/train/main"));
	assert_false(rq_train_prefix_valid("heads/x/"));
	assert_false(rq_train_prefix_valid("refs/a..b/"));
	assert_false(rq_train_prefix_valid("refs/"));
	assert_string_equal(rq_train_method_name(RQ_TRAIN_MERGE), "merge");
	assert_string_equal(rq_train_car_status_name(RQ_CAR_SKIPPED), "skipped");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_rebase, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_merge, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_skip, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_criss_cross, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_refs, setup, tu_copy_teardown),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
