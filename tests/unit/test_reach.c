/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_reach: merge bases and ancestry on small histories made with git
 * commit-tree (dates chosen: criss-cross, ties of dates, octopus,
 * unrelated histories, clock skew that leaves a base reachable from
 * another), compared with `git merge-base --all` (the same bases in the
 * same order) and `git merge-base --is-ancestor` (every pair).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_cobj.h"
#include "rq_commits.h"
#include "rq_reach.h"

/* the commit cache the reader reads (one per test) */
static rq_commits *commits;

static rq_reach_reader reader(tu_repo *r)
{
	rq_error err;

	rq_commits_free(commits);
	assert_int_equal(rq_commits_open(&commits, tu_repo_open(r), NULL, &err), 0);
	return rq_cobj_reach_reader(rq_commits_cache(commits));
}

static int setup(void **state)
{
	*state = tu_repo_new(0);
	return 0;
}

static int teardown(void **state)
{
	rq_commits_free(commits);
	commits = NULL;
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

/* Commit name (a tag) at date with the parents named in ps ("A B"). */
static void mk(tu_repo *r, const char *name, long date, const char *ps)
{
	char pargs[256] = "", list[128], *tok, *save = NULL;

	snprintf(list, sizeof(list), "%s", ps);
	for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		strcat(pargs, " -p ");
		strcat(pargs, tok);
	}
	tu_git(r,
	       "id=$(GIT_COMMITTER_DATE='%ld +0000' GIT_AUTHOR_DATE='%ld +0000' "
	       "git commit-tree $(git mktree </dev/null) -m %s%s) && git tag %s $id",
	       date, date, name, pargs, name);
}

/* rq_reach_bases(one, twos) as hex lines, and git's answer, compared. */
static void check_bases(tu_repo *r, const char *one, const char *twos)
{
	rq_reach_reader rd = reader(r);
	rq_oid o, t[8], *out = NULL;
	char list[128], *tok, *save = NULL, got[8 * 42 + 1] = "", *want;
	size_t nt = 0, n = 9;
	rq_error err;

	rq_error_clear(&err);
	tu_rev_oid(r, one, &o);
	snprintf(list, sizeof(list), "%s", twos);
	for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		tu_rev_oid(r, tok, &t[nt++]);
	if (rq_reach_bases(&rd, NULL, &o, t, nt, &out, &n, &err) < 0)
		fail_msg("rq_reach_bases(%s, %s): %s", one, twos, err.msg);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(got, "\n");
		strcat(got, tu_oid_hex(&out[i]));
	}
	free(out);
	want = tu_capture(r, "git merge-base --all %s %s", one, twos);
	if (!want) /* no merge base: git exits 1 */
		assert_int_equal(n, 0);
	else
		assert_string_equal(got, want);
	free(want);
}

/* rq_reach_descends against --is-ancestor, every pair of names. */
static void check_ancestry(tu_repo *r, const char *const *names, size_t nn)
{
	rq_reach_reader rd = reader(r);
	rq_error err;

	rq_error_clear(&err);
	for (size_t i = 0; i < nn; i++)
		for (size_t j = 0; j < nn; j++) {
			rq_oid a, b;
			int want, got;
			tu_rev_oid(r, names[i], &a);
			tu_rev_oid(r, names[j], &b);
			want = i != j && tu_run(r, "git merge-base --is-ancestor %s %s", names[j],
						names[i]) == 0;
			got = rq_reach_descends(&rd, &a, &b, &err);
			if (got != want)
				fail_msg("%s descends from %s: %d, git says %d", names[i], names[j],
					 got, want);
		}
}

/* B and C merged both ways (M1, M2): two bases. */
static void criss_cross(tu_repo *r, long bdate, long cdate)
{
	static const char *const names[] = {"A", "B", "C", "M1", "M2", "X", "Y"};

	mk(r, "A", TU_EPOCH, "");
	mk(r, "B", bdate, "A");
	mk(r, "C", cdate, "A");
	mk(r, "M1", TU_EPOCH + 400, "B C");
	mk(r, "M2", TU_EPOCH + 400, "C B");
	mk(r, "X", TU_EPOCH + 500, "M1");
	mk(r, "Y", TU_EPOCH + 500, "M2");
	check_bases(r, "X", "Y");
	check_bases(r, "Y", "X");
	check_bases(r, "M1", "M2");
	check_bases(r, "X", "M2 C");
	check_bases(r, "A", "X");
	check_bases(r, "X", "X");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

static void test_criss_cross(void **state)
{
	criss_cross(*state, TU_EPOCH + 200, TU_EPOCH + 300);
}

static void test_criss_cross_older_first(void **state)
{
	criss_cross(*state, TU_EPOCH + 300, TU_EPOCH + 200);
}

/* Both bases of one date: their order is the order the walk found them. */
static void test_criss_cross_same_date(void **state)
{
	criss_cross(*state, TU_EPOCH + 200, TU_EPOCH + 200);
}

static void test_octopus(void **state)
{
	static const char *const names[] = {"A", "B", "C", "D", "O", "E", "P"};
	tu_repo *r = *state;

	mk(r, "A", TU_EPOCH, "");
	mk(r, "B", TU_EPOCH + 200, "A");
	mk(r, "C", TU_EPOCH + 210, "A");
	mk(r, "D", TU_EPOCH + 220, "A");
	mk(r, "O", TU_EPOCH + 300, "B C D");
	mk(r, "E", TU_EPOCH + 310, "B");
	mk(r, "P", TU_EPOCH + 300, "D C");
	check_bases(r, "O", "E");
	check_bases(r, "E", "C D");
	check_bases(r, "O", "P");
	check_bases(r, "P", "O");
	check_bases(r, "E", "P");
	check_bases(r, "B", "C D E");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

static void test_unrelated(void **state)
{
	static const char *const names[] = {"A", "B", "U", "V"};
	tu_repo *r = *state;

	mk(r, "A", TU_EPOCH, "");
	mk(r, "B", TU_EPOCH + 100, "A");
	mk(r, "U", TU_EPOCH + 50, "");
	mk(r, "V", TU_EPOCH + 150, "U");
	check_bases(r, "B", "V");
	check_bases(r, "V", "A");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

/* Three bases of one date, merged in different orders on each side. */
static void test_three_bases_same_date(void **state)
{
	static const char *const names[] = {"A", "B", "C", "D", "M1", "M2", "M3"};
	tu_repo *r = *state;

	mk(r, "A", TU_EPOCH, "");
	mk(r, "B", TU_EPOCH + 200, "A");
	mk(r, "C", TU_EPOCH + 200, "A");
	mk(r, "D", TU_EPOCH + 200, "A");
	mk(r, "M1", TU_EPOCH + 400, "B C D");
	mk(r, "M2", TU_EPOCH + 400, "D B C");
	mk(r, "M3", TU_EPOCH + 400, "C D B");
	check_bases(r, "M1", "M2");
	check_bases(r, "M2", "M1");
	check_bases(r, "M3", "M1");
	check_bases(r, "M1", "M2 M3");
	check_bases(r, "M3", "M2 M1");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

/*
 * Clock skew: X is an ancestor of Y (Y -> Z -> X) but newer. The walk
 * takes X first, Y second, and stops before Y's staleness reaches X:
 * both are candidates, and the redundant X must go.
 */
static void test_base_reachable_from_base(void **state)
{
	static const char *const names[] = {"R", "X", "Z", "Y", "T1", "T2"};
	tu_repo *r = *state;

	mk(r, "R", TU_EPOCH, "");
	mk(r, "X", TU_EPOCH + 500, "R");
	mk(r, "Z", TU_EPOCH + 90, "X");
	mk(r, "Y", TU_EPOCH + 100, "Z");
	mk(r, "T1", TU_EPOCH + 600, "Y X");
	mk(r, "T2", TU_EPOCH + 600, "X Y");
	check_bases(r, "T1", "T2");
	check_bases(r, "T2", "T1");
	check_bases(r, "T1", "X Y");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

/*
 * Clock skew again: P (newer) is found after S, through older commits;
 * git lists the bases newest first all the same.
 */
static void test_found_after_an_older_base(void **state)
{
	static const char *const names[] = {"A", "P", "S", "Q1", "Q2", "T1", "T2"};
	tu_repo *r = *state;

	mk(r, "A", TU_EPOCH, "");
	mk(r, "P", TU_EPOCH + 300, "A");
	mk(r, "S", TU_EPOCH + 200, "A");
	mk(r, "Q1", TU_EPOCH + 100, "P");
	mk(r, "Q2", TU_EPOCH + 100, "P");
	mk(r, "T1", TU_EPOCH + 600, "Q1 S");
	mk(r, "T2", TU_EPOCH + 600, "S Q2");
	check_bases(r, "T1", "T2");
	check_bases(r, "T2", "T1");
	check_ancestry(r, names, sizeof(names) / sizeof(*names));
}

/* The replay's ranks change the walk, never the bases or their order. */
static void test_ranks(void **state)
{
	tu_repo *r = *state;
	rq_reach_reader rd;
	rq_oid x, y, m1, *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	rq_oidmap ranks;
	rq_error err;

	criss_cross(r, TU_EPOCH + 200, TU_EPOCH + 200);
	rd = reader(r);
	rq_error_clear(&err);
	tu_rev_oid(r, "X", &x);
	tu_rev_oid(r, "Y", &y);
	tu_rev_oid(r, "M1", &m1);
	rq_oidmap_init(&ranks);
	assert_int_equal(rq_oidmap_put(&ranks, &m1, 0), 0);
	assert_int_equal(rq_oidmap_put(&ranks, &x, 1), 0);
	assert_int_equal(rq_reach_bases(&rd, &ranks, &x, &y, 1, &a, &na, &err), 0);
	assert_int_equal(rq_reach_bases(&rd, NULL, &x, &y, 1, &b, &nb, &err), 0);
	assert_int_equal(na, 2);
	assert_int_equal(nb, 2);
	assert_memory_equal(a, b, 2 * sizeof(*a));
	free(a);
	free(b);
	rq_oidmap_free(&ranks);
}

static void test_missing_commit(void **state)
{
	tu_repo *r = *state;
	rq_reach_reader rd;
	rq_oid a, bad, *out = NULL;
	size_t n = 0;
	rq_error err;

	mk(r, "A", TU_EPOCH, "");
	rd = reader(r);
	rq_error_clear(&err);
	tu_rev_oid(r, "A", &a);
	assert_int_equal(
	    rq_oid_parse(&bad, &rq_oid_sha1, "1111111111111111111111111111111111111111", 40), 0);
	assert_int_equal(rq_reach_bases(&rd, NULL, &a, &bad, 1, &out, &n, &err), -1);
	assert_null(out);
	assert_int_equal(rq_reach_descends(&rd, &bad, &a, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_criss_cross, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_criss_cross_older_first, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_criss_cross_same_date, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_octopus, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_three_bases_same_date, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unrelated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_base_reachable_from_base, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_found_after_an_older_base, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ranks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_commit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
