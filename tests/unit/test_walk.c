/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_walk: the commits of a range and their order, checked against
 * `git rev-list --reverse --topo-order` (and without --reverse for
 * newest_first) on generated repositories.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_revs.h"
#include "rq_walk.h"

static int teardown_repo(void **state)
{
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

static int setup(void **state)
{
	*state = tu_repo_new(0);
	return 0;
}

/* Walk args in r; the ids in order, one per line. */
static char *walk_text(tu_repo *r, const char *const *args, size_t nargs, int newest_first,
		       size_t *count)
{
	rq_revs revs;
	rq_walk w;
	rq_error err;
	char *out;

	rq_error_clear(&err);
	if (rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, args, nargs, &revs, &err) != 0)
		fail_msg("rq_revs_parse: %s", err.msg);
	if (rq_walk_run(tu_repo_open(r), &revs, newest_first, 0, &w, &err) != 0)
		fail_msg("rq_walk_run(%s...): %s", args[0], err.msg);
	out = calloc(w.n * 41 + 1, 1);
	assert_non_null(out);
	for (size_t i = 0; i < w.n; i++) {
		if (i)
			strcat(out, "\n");
		char hex[RQ_OID_MAX_HEXSZ + 1];
		strcat(out, rq_oid_fmt(hex, &w.commits[i]->id, &rq_oid_sha1));
	}
	*count = w.n;
	rq_walk_free(&w);
	assert_null(w.commits);
	assert_int_equal(w.n, 0);
	rq_revs_free(&revs);
	return out;
}

typedef struct argset {
	const char *args[4];
	size_t n;
} argset;

/* Append s to the string in buf (size bytes); fails the test if it does not fit. */
static void append(char *buf, size_t size, const char *s)
{
	size_t len = strlen(buf), n = strlen(s);

	assert_true(len + n < size);
	memcpy(buf + len, s, n + 1);
}

static void append_args(char *buf, size_t size, const argset *set)
{
	for (size_t i = 0; i < set->n; i++) {
		assert_null(strchr(set->args[i], '\''));
		append(buf, size, " '");
		append(buf, size, set->args[i]);
		append(buf, size, "'");
	}
}

/*
 * For every set of arguments, both orders of the walk equal git
 * rev-list's (one shell command for all sets). Returns the commit count
 * of the last set.
 */
static size_t check_walks(tu_repo *r, const argset *sets, size_t nsets)
{
	size_t size = nsets * 512 + 1, count = 0;
	char *cmd = calloc(size, 1), *out, *p;

	assert_non_null(cmd);
	for (size_t i = 0; i < nsets; i++)
		for (int newest = 0; newest < 2; newest++) {
			append(cmd, size,
			       newest ? "git rev-list --topo-order"
				      : "git rev-list --reverse --topo-order");
			append_args(cmd, size, &sets[i]);
			append(cmd, size, " && echo == && ");
		}
	append(cmd, size, "true");
	assert_true(strlen(cmd) < size - 1);
	out = tu_capture_raw(r, NULL, "%s", cmd);
	assert_non_null(out);
	p = out;
	for (size_t i = 0; i < nsets; i++)
		for (int newest = 0; newest < 2; newest++) {
			char *end = strstr(p, "==\n"), *ours;
			size_t n;
			assert_non_null(end);
			*end = '\0';
			/* git's output without its last newline */
			if (end > p)
				end[-1] = '\0';
			ours = walk_text(r, sets[i].args, sets[i].n, newest, &n);
			if (strcmp(ours, p) != 0) {
				char args[512] = "";
				append_args(args, sizeof(args), &sets[i]);
				fprintf(stderr, "walk%s (newest_first=%d)\nrq:\n%s\ngit:\n%s\n",
					args, newest, ours, p);
				fail_msg("order differs from git rev-list");
			}
			count = n;
			free(ours);
			p = end + 3;
		}
	free(out);
	free(cmd);
	return count;
}

static size_t check_walk(tu_repo *r, const char *const *args, size_t nargs)
{
	argset set = {{NULL}, nargs};

	assert_true(nargs <= 4);
	for (size_t i = 0; i < nargs; i++)
		set.args[i] = args[i];
	return check_walks(r, &set, 1);
}

#define WALK(r, ...)                                                                               \
	check_walk(r, (const char *const[]){__VA_ARGS__},                                          \
		   sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void check_walk_fails(tu_repo *r, const char *const *args, size_t nargs, size_t max_commits,
			     rq_code code)
{
	rq_revs revs;
	rq_walk w;
	rq_error err;

	assert_int_equal(rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, args, nargs, &revs, NULL), 0);
	rq_error_clear(&err);
	memset(&w, 0x5a, sizeof(w));
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, max_commits, &w, &err), -1);
	if (err.code != code)
		fail_msg("code %s, want %s (%s)", rq_error_code_name(err.code),
			 rq_error_code_name(code), err.msg);
	assert_true(strlen(err.msg) > 0);
	/* the result is left empty */
	assert_null(w.commits);
	assert_int_equal(w.n, 0);
	rq_walk_free(&w);
	rq_revs_free(&revs);
}

static void make_linear(tu_repo *r, int n)
{
	char msg[32], content[32];
	for (int i = 1; i <= n; i++) {
		snprintf(msg, sizeof(msg), "c%d", i);
		snprintf(content, sizeof(content), "%d\n", i);
		tu_commit_file(r, "f.txt", content, msg);
	}
}

static void test_linear(void **state)
{
	tu_repo *r = *state;
	rq_revs revs;
	rq_walk w;
	git_oid root;
	const char *const all[] = {"main"};

	make_linear(r, 6);
	assert_int_equal(WALK(r, "main"), 6);
	assert_int_equal(WALK(r, "main~3..main"), 3);
	assert_int_equal(WALK(r, "^main~2", "main"), 2);
	assert_int_equal(WALK(r, "main~1..main"), 1);
	assert_int_equal(WALK(r, "main..main~2"), 0);
	assert_int_equal(WALK(r, "main~4", "main~2", "^main~5"), 3);

	/* no negative: the root commit is included, first */
	tu_rev_parse(r, "main~5", &root);
	assert_int_equal(rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, all, 1, &revs, NULL), 0);
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, 0, &w, NULL), 0);
	assert_int_equal(w.n, 6);
	assert_true(rq_oid_eq(&w.commits[0]->id, RQ_GIT_ID(&root)));
	assert_int_equal(w.commits[0]->nparents, 0);
	/* each commit's parent comes right before it */
	for (size_t i = 1; i < w.n; i++)
		assert_true(rq_oid_eq(&w.commits[i]->parents[0], &w.commits[i - 1]->id));
	rq_walk_free(&w);
	/* newest first: the root last */
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 1, 0, &w, NULL), 0);
	assert_int_equal(w.n, 6);
	assert_true(rq_oid_eq(&w.commits[5]->id, RQ_GIT_ID(&root)));
	rq_walk_free(&w);
	rq_revs_free(&revs);
}

static void test_max_commits(void **state)
{
	tu_repo *r = *state;
	const char *const all[] = {"main"};
	const char *const some[] = {"main~2..main"};
	rq_revs revs;
	rq_walk w;

	make_linear(r, 5);
	check_walk_fails(r, all, 1, 4, RQ_E_TOO_MANY_COMMITS);
	check_walk_fails(r, all, 1, 1, RQ_E_TOO_MANY_COMMITS);
	assert_int_equal(rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, all, 1, &revs, NULL), 0);
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, 5, &w, NULL), 0);
	assert_int_equal(w.n, 5);
	rq_walk_free(&w);
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, 0, &w, NULL), 0);
	assert_int_equal(w.n, 5);
	rq_walk_free(&w);
	rq_revs_free(&revs);
	assert_int_equal(rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, some, 1, &revs, NULL), 0);
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, 2, &w, NULL), 0);
	assert_int_equal(w.n, 2);
	rq_walk_free(&w);
	rq_revs_free(&revs);
}

/* Three commits on each of branches a and b from main's base commit. */
static void make_divergent(tu_repo *r, int same_dates)
{
	long t0;

	tu_commit_file(r, "base.txt", "base\n", "base");
	t0 = r->tick;
	tu_git(r, "git branch a && git branch b");
	for (int i = 1; i <= 3; i++) {
		char msg[16], file[16];
		for (int side = 0; side < 2; side++) {
			if (same_dates)
				r->tick = t0; /* every commit one tick after base */
			tu_git(r, "git checkout -q %s", side ? "b" : "a");
			snprintf(msg, sizeof(msg), "%c%d", side ? 'b' : 'a', i);
			snprintf(file, sizeof(file), "%c.txt", side ? 'b' : 'a');
			tu_commit_file(r, file, msg, msg);
		}
	}
	tu_git(r, "git checkout -q main");
	if (same_dates)
		r->tick = t0;
	tu_commit_file(r, "m.txt", "m\n", "m1");
}

static void check_divergent(tu_repo *r)
{
	assert_int_equal(WALK(r, "a", "b", "^main~1"), 6);
	assert_int_equal(WALK(r, "b", "a", "^main~1"), 6);
	assert_int_equal(WALK(r, "main..a", "main..b"), 6);
	assert_int_equal(WALK(r, "a", "b", "^main"), 6);
	assert_int_equal(WALK(r, "a...b"), 6);
	assert_int_equal(WALK(r, "b...a"), 6);
	assert_int_equal(WALK(r, "main...b"), 4);
	assert_int_equal(WALK(r, "a", "b"), 7);
	assert_int_equal(WALK(r, "b", "main", "a"), 8);
	assert_int_equal(WALK(r, "^a", "b"), 3);
	assert_int_equal(WALK(r, "a~1", "b~2", "main", "^a~3"), 4);
}

static void test_divergent_equal_dates(void **state)
{
	make_divergent(*state, 1);
	check_divergent(*state);
}

static void test_divergent_different_dates(void **state)
{
	make_divergent(*state, 0);
	check_divergent(*state);
}

static void test_stacked_branches(void **state)
{
	tu_repo *r = *state;

	tu_commit_file(r, "m.txt", "1\n", "m1");
	tu_commit_file(r, "m.txt", "2\n", "m2");
	tu_git(r, "git checkout -q -b s1");
	tu_commit_file(r, "x.txt", "1\n", "x1");
	tu_commit_file(r, "x.txt", "2\n", "x2");
	tu_git(r, "git checkout -q -b s2");
	tu_commit_file(r, "y.txt", "1\n", "y1");
	tu_commit_file(r, "y.txt", "2\n", "y2");
	tu_git(r, "git checkout -q -b s3");
	tu_commit_file(r, "z.txt", "1\n", "z1");
	tu_git(r, "git checkout -q main");
	tu_commit_file(r, "m.txt", "3\n", "m3");
	assert_int_equal(WALK(r, "main..s3"), 5);
	assert_int_equal(WALK(r, "s1", "s2", "s3", "^main"), 5);
	assert_int_equal(WALK(r, "s3", "s1", "^main"), 5);
	assert_int_equal(WALK(r, "^s1", "s3"), 3);
	assert_int_equal(WALK(r, "s1..s3"), 3);
	assert_int_equal(WALK(r, "s3...main"), 6);
	assert_int_equal(WALK(r, "main", "s2"), 7);
}

/* Commits dated before their parents: git's limited walk and its slop. */
static void test_skewed_dates(void **state)
{
	tu_repo *r = *state;

	r->tick = TU_EPOCH + 100000;
	tu_commit_file(r, "m.txt", "1\n", "m1");
	tu_commit_file(r, "m.txt", "2\n", "m2");
	tu_git(r, "git checkout -q -b topic");
	for (int i = 0; i < 10; i++) {
		char msg[16];
		r->tick = TU_EPOCH + 50000 - i * 1000; /* each older than the last */
		snprintf(msg, sizeof(msg), "t%d", i);
		tu_commit_file(r, "t.txt", msg, msg);
	}
	tu_git(r, "git checkout -q main");
	for (int i = 0; i < 8; i++) {
		char msg[16];
		r->tick = TU_EPOCH + 200000 + (i % 3) * 50000 - (i % 2) * 180000;
		snprintf(msg, sizeof(msg), "m%d", i + 3);
		tu_commit_file(r, "m.txt", msg, msg);
	}
	WALK(r, "main..topic");
	WALK(r, "topic..main");
	WALK(r, "topic...main");
	WALK(r, "topic", "main");
	WALK(r, "topic", "^main~3");
	WALK(r, "main~2", "^topic~4");
}

/* The walk of args (with --first-parent when fp): its boundary's size,
 * and whether the commit at rev is in it. */
static size_t boundary_of(tu_repo *r, const char *arg, int fp, const char *rev, int *has)
{
	const char *args[2] = {arg, "--first-parent"};
	git_object *obj = NULL;
	rq_revs revs;
	rq_walk w;
	size_t v, n;

	assert_int_equal(
	    rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, args, fp ? 2 : 1, &revs, NULL), 0);
	assert_int_equal(rq_walk_run(tu_repo_open(r), &revs, 0, 0, &w, NULL), 0);
	assert_int_equal(git_revparse_single(&obj, tu_repo_open(r), rev), 0);
	*has = rq_oidmap_get(&w.boundary, tu_rq_oid(git_object_id(obj)), &v);
	git_object_free(obj);
	n = w.boundary.len;
	rq_walk_free(&w);
	rq_revs_free(&revs);
	return n;
}

/* Merge commits are walked like any other (the replay replays them), in
 * git's order; the boundary lists the excluded parents, and with
 * --first-parent a merge's other parents are not walked. */
static void test_merge_commit(void **state)
{
	tu_repo *r = *state;
	int has;

	tu_commit_file(r, "m.txt", "1\n", "m1");
	tu_git(r, "git checkout -q -b feature");
	tu_commit_file(r, "f.txt", "1\n", "f1");
	tu_git(r, "git checkout -q main");
	tu_commit_file(r, "m.txt", "2\n", "m2");
	tu_tick(r);
	tu_git(r, "git merge -q --no-ff -m merge feature");
	tu_commit_file(r, "m.txt", "3\n", "m3");
	tu_git(r, "git checkout -q -b topic");
	tu_commit_file(r, "t.txt", "1\n", "t1");

	assert_int_equal(WALK(r, "main~1..main"), 1);
	assert_int_equal(WALK(r, "main..topic"), 1);
	assert_int_equal(WALK(r, "^main~1", "topic"), 2);
	assert_int_equal(WALK(r, "main~1^1..topic"), 4);
	assert_int_equal(WALK(r, "feature..main"), 3);
	assert_true(WALK(r, "main") >= 5);
	/* m2..topic: f1's parent m1 and the merge's first parent m2 */
	assert_int_equal(boundary_of(r, "main~1^1..topic", 0, "main~1^1", &has), 2);
	assert_true(has);
	boundary_of(r, "main~1^1..topic", 0, "feature^", &has);
	assert_true(has);
	/* --first-parent: f1 is not walked, m1 is no boundary */
	assert_int_equal(boundary_of(r, "main~1^1..topic", 1, "main~1^1", &has), 1);
	assert_true(has);
	/* more commits than allowed */
	{
		const char *a[] = {"main"};
		check_walk_fails(r, a, 1, 2, RQ_E_TOO_MANY_COMMITS);
	}
}

/* A deterministic pseudo-random history of single-parent commits. */
static unsigned long rng_state;

static unsigned rng(unsigned n)
{
	rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)((rng_state >> 33) % n);
}

/*
 * Make ncommits commits with git fast-import: each the child of a random
 * earlier one (or, now and then, a new root), dated in a narrow window so
 * that many dates are equal and many are older than their parents; then
 * nbranch branches r0.. at random recent commits.
 */
static void make_random_history(tu_repo *r, int seed, int ncommits, int nbranch)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/stream", r->root);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 1; i <= ncommits; i++) {
		long date = TU_EPOCH + (long)rng(8) * 60 + (long)(i / 10) * 60;
		char msg[32];
		int n = snprintf(msg, sizeof(msg), "s%d c%d\n", seed, i);
		fprintf(f, "reset refs/gen/s%d/c%d\ncommit refs/gen/s%d/c%d\nmark :%d\n", seed, i,
			seed, i, i);
		fprintf(f, "committer C O Mitter <committer@example.com> %ld +0000\n", date);
		fprintf(f, "data %d\n%s", n, msg);
		if (i > 1 && rng(10) != 0)
			fprintf(f, "from :%u\n", 1 + rng((unsigned)i - 1));
		fprintf(f, "\n");
	}
	for (int b = 0; b < nbranch; b++)
		fprintf(f, "reset refs/heads/r%d\nfrom :%u\n\n", b,
			(unsigned)ncommits - rng((unsigned)ncommits / 2));
	assert_int_equal(fclose(f), 0);
	tu_git(r, "git fast-import --quiet --force <'%s'", path);
}

static void test_random_histories(void **state)
{
	tu_repo *r = *state;
	enum { NCOMMITS = 150, NBRANCH = 12, NCASES = 10 };

	for (int seed = 1; seed <= 4; seed++) {
		argset sets[NCASES * 4];
		char names[NCASES * 4][4][32];
		size_t ns = 0;

		rng_state = (unsigned long)seed * 977;
		make_random_history(r, seed, NCOMMITS, NBRANCH);
		for (int k = 0; k < NCASES; k++) {
			unsigned b1 = rng(NBRANCH), b2 = rng(NBRANCH), b3 = rng(NBRANCH),
				 b4 = rng(NBRANCH);
			snprintf(names[ns][0], 32, "r%u", b1);
			snprintf(names[ns][1], 32, "^r%u", b2);
			sets[ns].n = 2;
			ns++;
			snprintf(names[ns][0], 32, "r%u", b1);
			snprintf(names[ns][1], 32, "r%u", b3);
			snprintf(names[ns][2], 32, "^r%u", b2);
			sets[ns].n = 3;
			ns++;
			snprintf(names[ns][0], 32, "r%u...r%u", b3, b4);
			sets[ns].n = 1;
			ns++;
			snprintf(names[ns][0], 32, "r%u", b4);
			snprintf(names[ns][1], 32, "r%u", b1);
			sets[ns].n = 2;
			ns++;
		}
		for (size_t i = 0; i < ns; i++)
			for (size_t j = 0; j < sets[i].n; j++)
				sets[i].args[j] = names[i][j];
		check_walks(r, sets, ns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_linear, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_max_commits, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_divergent_equal_dates, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_divergent_different_dates, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_stacked_branches, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_skewed_dates, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_merge_commit, setup, teardown_repo),
	    cmocka_unit_test_setup_teardown(test_random_histories, setup, teardown_repo),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
