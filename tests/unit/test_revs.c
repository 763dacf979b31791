/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revs: DWIM ref lookup, commit resolution, revision ranges and full
 * ref name validation, checked against git rev-parse / check-ref-format.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2/sys/repository.h>

#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_revs.h"

static tu_repo *repo;

/*
 * main: c1 - c2 - c3 (tag v1 annotated at c2, lw lightweight at c1)
 * side: c1 - s1 ; branch dup at c2 and tag dup at c3 ; orphan: a root
 * refs/remotes/origin/main = c3, refs/remotes/origin/HEAD -> origin/main
 * refs/heads/dangling -> refs/heads/nothing ; ORIG_HEAD = c2
 */
static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	repo = tu_repo_new(0);
	tu_commit_file(repo, "a.txt", "1\n", "c1");
	tu_commit_file(repo, "a.txt", "2\n", "c2");
	tu_commit_file(repo, "a.txt", "3\n", "c3");
	tu_git(repo, "git tag -a v1 -m 'version 1' main~1 && git tag lw main~2 && "
		     "git branch dup main~1 && git tag dup main && "
		     "git branch side main~2 && git checkout -q side");
	tu_commit_file(repo, "b.txt", "s\n", "s1");
	tu_git(repo, "git checkout -q main && "
		     "git update-ref refs/remotes/origin/main main && "
		     "git symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main && "
		     "git symbolic-ref refs/heads/dangling refs/heads/nothing && "
		     "git update-ref ORIG_HEAD main~1 && "
		     "git update-ref refs/heads/orphan "
		     "$(git commit-tree -m orphan $(git mktree </dev/null))");
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(repo);
	repo = NULL;
	return tu_group_teardown(state);
}

static void check_dwim(const char *name, int count, const char *full, const char *target_rev)
{
	char *fullname = (char *)"unset";
	rq_oid oid, want;
	rq_error err;
	int n;

	rq_error_clear(&err);
	n = rq_revs_dwim_ref(tu_repo_open(repo), name, &fullname, &oid, &err);
	if (n != count)
		fail_msg("rq_revs_dwim_ref(%s) = %d, want %d (%s)", name, n, count, err.msg);
	if (!full) {
		assert_null(fullname);
		return;
	}
	assert_non_null(fullname);
	assert_string_equal(fullname, full);
	tu_rev_oid(repo, target_rev, &want);
	assert_string_equal(tu_oid_hex(&oid), tu_oid_hex(&want));
	free(fullname);
}

static void test_dwim_ref(void **state)
{
	rq_oid oid;
	char *full;

	(void)state;
	check_dwim("main", 1, "refs/heads/main", "refs/heads/main");
	check_dwim("heads/main", 1, "refs/heads/main", "refs/heads/main");
	check_dwim("refs/heads/main", 1, "refs/heads/main", "refs/heads/main");
	check_dwim("side", 1, "refs/heads/side", "side");
	/* tags: the target is the tag object for an annotated tag */
	check_dwim("v1", 1, "refs/tags/v1", "refs/tags/v1");
	check_dwim("tags/v1", 1, "refs/tags/v1", "refs/tags/v1");
	check_dwim("lw", 1, "refs/tags/lw", "lw");
	/* HEAD is followed to its branch */
	check_dwim("HEAD", 1, "refs/heads/main", "HEAD");
	/* remotes: X/HEAD followed to what it points at */
	check_dwim("origin", 1, "refs/remotes/origin/main", "refs/remotes/origin/main");
	check_dwim("origin/main", 1, "refs/remotes/origin/main", "refs/remotes/origin/main");
	check_dwim("ORIG_HEAD", 1, "ORIG_HEAD", "main~1");
	/* both a tag and a branch: 2, the tag first (git's rule order) */
	check_dwim("dup", 2, "refs/tags/dup", "refs/tags/dup");
	/* no match */
	check_dwim("nope", 0, NULL, NULL);
	check_dwim("main~1", 0, NULL, NULL);
	check_dwim("", 0, NULL, NULL);
	check_dwim("dangling", 0, NULL, NULL);
	check_dwim("refs/heads/nothing", 0, NULL, NULL);
	/* fullname and oid are optional */
	assert_int_equal(rq_revs_dwim_ref(tu_repo_open(repo), "main", NULL, NULL, NULL), 1);
	assert_int_equal(rq_revs_dwim_ref(tu_repo_open(repo), "dup", NULL, &oid, NULL), 2);
	full = NULL;
	assert_int_equal(rq_revs_dwim_ref(tu_repo_open(repo), "lw", &full, NULL, NULL), 1);
	assert_string_equal(full, "refs/tags/lw");
	free(full);
}

/* r opened as a job opens it: its objects read through rq_odb
 * (rq_odb_install, as rq_replay_run and the worker do), installed again
 * for what the test wrote since. */
static git_repository *job_repo(tu_repo *r)
{
	git_repository *g = tu_repo_open(r);
	rq_error err;

	if (rq_odb_install(g, NULL, &err) != 0)
		fail_msg("rq_odb_install: %s", err.msg);
	return g;
}

/* expr resolved in r as git rev-parse resolves it. */
static void check_resolve_in(tu_repo *r, const char *expr)
{
	rq_oid got, want;
	rq_error err;
	char *hex;

	rq_error_clear(&err);
	if (rq_revs_resolve_commit(job_repo(r), NULL, &rq_oid_sha1, expr, &got, &err) != 0)
		fail_msg("rq_revs_resolve_commit(%s): %s", expr, err.msg);
	/* ":/text" takes the rest as its text: it names a commit already */
	hex = tu_capture(r, "git rev-parse --verify -q '%s%s'", expr,
			 strncmp(expr, ":/", 2) ? "^{commit}" : "");
	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(&want, &rq_oid_sha1, hex, strlen(hex)), 0);
	if (!rq_oid_eq(&got, &want))
		fail_msg("%s: rq %s, git %s", expr, tu_oid_hex(&got), hex);
	free(hex);
}

static void check_resolve(const char *expr)
{
	check_resolve_in(repo, expr);
}

static void check_resolve_fails(const char *expr, rq_code code)
{
	rq_oid got;
	rq_error err;

	rq_error_clear(&err);
	if (rq_revs_resolve_commit(job_repo(repo), NULL, &rq_oid_sha1, expr, &got, &err) != -1)
		fail_msg("rq_revs_resolve_commit(%s) succeeded", expr);
	if (err.code != code)
		fail_msg("rq_revs_resolve_commit(%s): code %s, want %s (%s)", expr,
			 rq_error_code_name(err.code), rq_error_code_name(code), err.msg);
	assert_true(strlen(err.msg) > 0);
}

static void test_resolve_commit(void **state)
{
	char *full, expr[64];

	(void)state;
	check_resolve("main");
	check_resolve("main~1");
	check_resolve("main~2");
	check_resolve("main^");
	check_resolve("main^1");
	check_resolve("main~1^");
	check_resolve("v1");
	check_resolve("v1^{commit}");
	check_resolve("v1~1");
	check_resolve("v1^{}");
	check_resolve("lw");
	check_resolve("HEAD");
	check_resolve("HEAD~2");
	check_resolve("@");
	check_resolve("@~1");
	check_resolve("origin");
	check_resolve("side");
	check_resolve("tags/v1");
	check_resolve("refs/heads/side");
	check_resolve("orphan");
	check_resolve("ORIG_HEAD");

	/* full and abbreviated ids, and the id of an annotated tag */
	full = tu_capture(repo, "git rev-parse main~1");
	assert_non_null(full);
	check_resolve(full);
	for (size_t len = 4; len < 40; len += 7) {
		snprintf(expr, sizeof(expr), "%.*s", (int)len, full);
		check_resolve(expr);
	}
	snprintf(expr, sizeof(expr), "%.10s~1", full);
	check_resolve(expr);
	free(full);
	full = tu_capture(repo, "git rev-parse v1");
	assert_non_null(full);
	check_resolve(full);
	free(full);

	/* unknown names */
	check_resolve_fails("nope", RQ_E_BAD_REVISION);
	check_resolve_fails("main~3", RQ_E_BAD_REVISION);
	check_resolve_fails("main^2", RQ_E_BAD_REVISION);
	check_resolve_fails("0000000000000000000000000000000000000000", RQ_E_BAD_REVISION);
	check_resolve_fails("dangling", RQ_E_BAD_REVISION);
	check_resolve_fails("", RQ_E_BAD_REVISION);
	check_resolve_fails("~1", RQ_E_BAD_REVISION);
	check_resolve_fails("^main", RQ_E_BAD_REVISION);
	check_resolve_fails("main:a.txt", RQ_E_BAD_REVISION);
	check_resolve_fails("main..side", RQ_E_BAD_REVISION);
	/* option-like */
	check_resolve_fails("-x", RQ_E_BAD_REVISION);
	check_resolve_fails("--all", RQ_E_BAD_REVISION);
	/* not commits */
	full = tu_capture(repo, "git rev-parse main:a.txt");
	assert_non_null(full);
	check_resolve_fails(full, RQ_E_BAD_REVISION);
	free(full);
	full = tu_capture(repo, "git rev-parse main^{tree}");
	assert_non_null(full);
	check_resolve_fails(full, RQ_E_BAD_REVISION);
	free(full);
	check_resolve_fails("main^{tree}", RQ_E_BAD_REVISION);
	/* ambiguous ref */
	check_resolve_fails("dup", RQ_E_AMBIGUOUS);
	check_resolve_fails("dup~1", RQ_E_AMBIGUOUS);
	/* the same commit, unambiguously */
	check_resolve("heads/dup");
	check_resolve("tags/dup");
}

/*
 * The forms read from reflogs, the branch configuration and commit
 * messages (rq_revat), against git rev-parse. HEAD's reflog here: main's
 * commits, checkout of side, s1, checkout of main.
 */
static void test_resolve_at_forms(void **state)
{
	(void)state;
	check_resolve("main@{0}");
	check_resolve("main@{1}");
	check_resolve("main@{1}~1");
	check_resolve("main@{2}");
	check_resolve("@{1}");
	check_resolve("HEAD@{1}"); /* HEAD's own reflog, not its branch's */
	check_resolve("HEAD@{2}");
	check_resolve("side@{1}");
	check_resolve("main@{2037-01-01}");
	check_resolve("@{-1}");
	check_resolve("@{-1}~1");
	check_resolve("@{-1}@{1}");
	check_resolve(":/c2");
	check_resolve(":/^c[0-9]");
	check_resolve(":/^c[12]");
	check_resolve("main^{/c1}");
	check_resolve("side^{/^c}");
	check_resolve("v1^{/c1}"); /* a tag: searched from its commit */
	check_resolve_fails("main@{9}", RQ_E_BAD_REVISION);
	check_resolve_fails("@{-9}", RQ_E_BAD_REVISION);
	check_resolve_fails("main@{u}", RQ_E_BAD_REVISION); /* no upstream */
	check_resolve_fails("main@{push}", RQ_E_BAD_REVISION);
	check_resolve_fails("main^{/s1}", RQ_E_BAD_REVISION);
	check_resolve_fails(":/no such message", RQ_E_BAD_REVISION);
	check_resolve_fails(":/^c1$", RQ_E_BAD_REVISION); /* "$": the end of the message only */
	check_resolve_fails("main^{object}", RQ_E_BAD_REVISION);
	tu_git(repo, "git config branch.main.remote . && "
		     "git config branch.main.merge refs/heads/side");
	check_resolve("main@{u}");
	check_resolve("@{upstream}~0");
	check_resolve("HEAD@{u}");
	tu_git(repo, "git config --unset branch.main.remote && "
		     "git config --unset branch.main.merge");
}

/*
 * ":/text" among commits of one date (a script's, an import's): the one
 * git takes, by its order (refs sorted, then HEAD; parents after every
 * commit at least as young), not whichever a date sort puts first.
 */
static void test_search_same_date(void **state)
{
	tu_repo *r = tu_repo_new(0);
	const char *exprs[] = {":/m", ":/m[0-9]", ":/^m[12]", "b^{/m}", "HEAD^{/m}"};

	(void)state;
	tu_git(r, "export GIT_COMMITTER_DATE='@1800000000 +0000' "
		  "GIT_AUTHOR_DATE='@1800000000 +0000' && "
		  "for m in m1 m2 m3; do git commit -q --allow-empty -m $m; done && "
		  "git checkout -q -b b HEAD~2 && "
		  "for m in m4 m5; do git commit -q --allow-empty -m $m; done && "
		  "git tag -a t -m tag HEAD~1 && git checkout -q main && "
		  "git checkout -q -b c HEAD~1 && git commit -q --allow-empty -m m6 && "
		  "git checkout -q main");
	for (size_t i = 0; i < sizeof(exprs) / sizeof(*exprs); i++)
		check_resolve_in(r, exprs[i]);
	tu_repo_free(r);
}

static void test_resolve_ambiguous_prefix(void **state)
{
	tu_repo *r = tu_repo_new(1);
	char *prefix;
	rq_oid oid;
	rq_error err;

	(void)state;
	/* 1500 blobs: some 4-digit prefix is shared (deterministically) */
	tu_git(r, "mkdir ../blobs && i=0 && while [ $i -lt 1500 ]; do echo \"blob $i\" "
		  ">../blobs/$i; i=$((i + 1)); done && "
		  "ls -d ../blobs/* | git hash-object -w --stdin-paths && rm -rf ../blobs");
	prefix = tu_capture(r, "git cat-file --batch-all-objects --batch-check='%%(objectname)' "
			       "| cut -c1-4 | sort | uniq -d | head -n1");
	assert_non_null(prefix);
	assert_int_equal(strlen(prefix), 4);
	/* git agrees it is ambiguous */
	assert_int_not_equal(tu_run(r, "git rev-parse --verify -q %s 2>/dev/null", prefix), 0);
	rq_error_clear(&err);
	assert_int_equal(
	    rq_revs_resolve_commit(job_repo(r), NULL, &rq_oid_sha1, prefix, &oid, &err), -1);
	assert_int_equal(err.code, RQ_E_AMBIGUOUS);
	assert_non_null(strstr(err.msg, prefix));
	free(prefix);
	tu_repo_free(r);
}

/* In a SHA-256 repository made by upstream git, names by id with every
 * suffix resolve as upstream's rev-parse resolves them (the objects read
 * through the job's commits, none through libgit2's 20-byte ids). */
static void test_resolve_sha256(void **state)
{
	const char *up = getenv("RQ_UPSTREAM_GIT"), *ext[] = {"objectformat"};
	static const char *const suffixes[] = {"",     "~1",  "^2",	 "^{commit}", "^0",
					       "^2~1", "^{}", "^{/one}", "^^{commit}"};
	char *head, *tag, cmd[256];
	tu_repo *r;
	git_odb *odb;
	rq_error err;

	(void)state;
	if (!up || access(up, X_OK))
		up = "/work/shared/upstream-git/git";
	if (access(up, X_OK))
		skip();
	git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1);
	r = tu_repo_new(0);
	tu_git(r,
	       "rm -rf .git && G='%s' && $G init -q -b main --object-format=sha256 . && "
	       "$G config maintenance.auto false && echo a >a && $G add a && $G commit -qm one && "
	       "$G checkout -qb side && echo b >b && $G add b && $G commit -qm two && "
	       "$G checkout -q main && echo c >c && $G add c && $G commit -qm three && "
	       "$G merge -q --no-edit side && $G tag -a -m t t1 HEAD",
	       up);
	assert_int_equal(rq_odb_new_at(&odb, tu_repo_open(r), NULL, &rq_oid_sha256, &err), 0);
	assert_int_equal(git_repository_set_odb(tu_repo_open(r), odb), 0);
	git_odb_free(odb);
	snprintf(cmd, sizeof(cmd), "'%s' rev-parse HEAD", up);
	head = tu_capture(r, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "'%s' rev-parse t1", up);
	tag = tu_capture(r, "%s", cmd);
	assert_int_equal(strlen(head), 64);
	for (size_t i = 0; i < 2 * sizeof(suffixes) / sizeof(*suffixes); i++) {
		const char *base = i % 2 ? tag : head, *sfx = suffixes[i / 2];
		char expr[128], hex[RQ_OID_MAX_HEXSZ + 1], *want;
		rq_oid got;
		snprintf(expr, sizeof(expr), "%.*s%s", i % 4 < 2 ? 64 : 9, base, sfx);
		want = tu_capture(r, "'%s' rev-parse --verify -q '%s^{commit}'", up, expr);
		if (!want)
			fail_msg("upstream rev-parse %s", expr);
		rq_error_clear(&err);
		if (rq_revs_resolve_commit(tu_repo_open(r), NULL, &rq_oid_sha256, expr, &got,
					   &err) != 0)
			fail_msg("%s: %s", expr, err.msg);
		assert_string_equal(rq_oid_fmt(hex, &got, &rq_oid_sha256), want);
		free(want);
	}
	free(head);
	free(tag);
	tu_repo_free(r);
}

/* Our revisions as git rev-parse prints them ("<hex>" or "^<hex>"), sorted. */
static char *revs_as_text(const rq_revs *revs)
{
	size_t n = revs->n;
	char **lines = calloc(n + 1, sizeof(*lines));
	char *out = calloc(n * 43 + 1, 1);

	assert_non_null(lines);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++) {
		lines[i] = malloc(43);
		assert_non_null(lines[i]);
		snprintf(lines[i], 43, "%s%s", revs->v[i].negative ? "^" : "",
			 tu_oid_hex(&revs->v[i].oid));
	}
	/* insertion sort, bytewise like sort(1) with LC_ALL=C */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
			char *t = lines[j];
			lines[j] = lines[j - 1];
			lines[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, "\n");
		strcat(out, lines[i]);
		free(lines[i]);
	}
	free(lines);
	return out;
}

/* Parse args; compare the set of revisions with git rev-parse's. */
static void parse_like_git(const char *const *args, size_t nargs, rq_revs *revs)
{
	char cmd[1024] = "git rev-parse";
	rq_error err;
	char *ours, *theirs;

	rq_error_clear(&err);
	if (rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, args, nargs, revs, &err) != 0)
		fail_msg("rq_revs_parse(%s...): %s", args[0], err.msg);
	for (size_t i = 0; i < nargs; i++) {
		strcat(cmd, " '");
		strcat(cmd, args[i]);
		strcat(cmd, "'");
	}
	strcat(cmd, " | sort");
	theirs = tu_capture(repo, "%s", cmd);
	assert_non_null(theirs);
	ours = revs_as_text(revs);
	assert_string_equal(ours, theirs);
	free(ours);
	free(theirs);
}

static void test_revs_parse_ranges(void **state)
{
	rq_revs revs;
	rq_oid c1, c3, s1, base;

	(void)state;
	tu_rev_oid(repo, "main~2", &c1);
	tu_rev_oid(repo, "main", &c3);
	tu_rev_oid(repo, "side", &s1);

	/* A..B */
	{
		const char *args[] = {"main~2..main"};
		parse_like_git(args, 1, &revs);
		assert_int_equal(revs.n, 2);
		assert_int_equal(revs.npositive, 1);
		assert_int_equal(revs.nnegative, 1);
		assert_string_equal(revs.v[0].name, "main~2");
		assert_true(revs.v[0].negative);
		assert_true(rq_oid_eq(&revs.v[0].oid, &c1));
		assert_null(revs.v[0].fullref);
		assert_string_equal(revs.v[1].name, "main");
		assert_false(revs.v[1].negative);
		assert_true(rq_oid_eq(&revs.v[1].oid, &c3));
		assert_non_null(revs.v[1].fullref);
		assert_string_equal(revs.v[1].fullref, "refs/heads/main");
		rq_revs_free(&revs);
		assert_int_equal(revs.n, 0);
		assert_null(revs.v);
	}
	/* ^A B */
	{
		const char *args[] = {"^side", "main", "lw"};
		parse_like_git(args, 3, &revs);
		assert_int_equal(revs.n, 3);
		assert_int_equal(revs.npositive, 2);
		assert_int_equal(revs.nnegative, 1);
		assert_string_equal(revs.v[0].name, "side");
		assert_true(revs.v[0].negative);
		assert_string_equal(revs.v[0].fullref, "refs/heads/side");
		assert_true(rq_oid_eq(&revs.v[0].oid, &s1));
		assert_string_equal(revs.v[2].fullref, "refs/tags/lw");
		assert_true(rq_oid_eq(&revs.v[2].oid, &c1));
		rq_revs_free(&revs);
	}
	/* an annotated tag: peeled to its commit, fullref the tag */
	{
		const char *args[] = {"v1", "^v1~1"};
		rq_oid c2, tagobj;
		tu_rev_oid(repo, "v1^{commit}", &c2);
		tu_rev_oid(repo, "v1", &tagobj);
		assert_false(rq_oid_eq(&c2, &tagobj));
		assert_int_equal(
		    rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, args, 2, &revs, NULL), 0);
		assert_int_equal(revs.n, 2);
		assert_true(rq_oid_eq(&revs.v[0].oid, &c2));
		assert_string_equal(revs.v[0].fullref, "refs/tags/v1");
		assert_true(rq_oid_eq(&revs.v[1].oid, &c1));
		assert_true(revs.v[1].negative);
		assert_null(revs.v[1].fullref);
		rq_revs_free(&revs);
	}
	/* A...B: both positive, the merge base negative */
	{
		const char *args[] = {"side...main"};
		parse_like_git(args, 1, &revs);
		assert_int_equal(revs.n, 3);
		assert_int_equal(revs.npositive, 2);
		assert_int_equal(revs.nnegative, 1);
		assert_false(revs.v[0].negative);
		assert_false(revs.v[1].negative);
		assert_string_equal(revs.v[0].fullref, "refs/heads/side");
		assert_string_equal(revs.v[1].fullref, "refs/heads/main");
		assert_true(revs.v[2].negative);
		{
			char *mb = tu_capture(repo, "git merge-base side main");
			assert_non_null(mb);
			assert_int_equal(rq_oid_parse(&base, &rq_oid_sha1, mb, strlen(mb)), 0);
			free(mb);
		}
		assert_true(rq_oid_eq(&revs.v[2].oid, &base));
		assert_true(rq_oid_eq(&base, &c1));
		assert_null(revs.v[2].fullref);
		rq_revs_free(&revs);
	}
	/* A...B without a merge base: no negative */
	{
		const char *args[] = {"orphan...main"};
		parse_like_git(args, 1, &revs);
		assert_int_equal(revs.n, 2);
		assert_int_equal(revs.nnegative, 0);
		rq_revs_free(&revs);
	}
	/* ..B is HEAD..B, A.. is A..HEAD */
	{
		const char *args[] = {"..side"};
		parse_like_git(args, 1, &revs);
		assert_int_equal(revs.n, 2);
		assert_string_equal(revs.v[0].name, "HEAD");
		assert_true(revs.v[0].negative);
		assert_true(rq_oid_eq(&revs.v[0].oid, &c3));
		assert_string_equal(revs.v[0].fullref, "refs/heads/main");
		assert_string_equal(revs.v[1].name, "side");
		rq_revs_free(&revs);
	}
	{
		const char *args[] = {"side.."};
		parse_like_git(args, 1, &revs);
		assert_int_equal(revs.n, 2);
		assert_string_equal(revs.v[0].name, "side");
		assert_true(revs.v[0].negative);
		assert_string_equal(revs.v[1].name, "HEAD");
		assert_false(revs.v[1].negative);
		rq_revs_free(&revs);
	}
	/* fullref only for names that are exactly one ref */
	{
		char *hex = tu_capture(repo, "git rev-parse side");
		const char *args[] = {"main~1", hex, "lw", "origin", "v1^{commit}", "heads/dup"};
		assert_non_null(hex);
		parse_like_git(args, 6, &revs);
		assert_int_equal(revs.n, 6);
		assert_null(revs.v[0].fullref);
		assert_null(revs.v[1].fullref);
		assert_string_equal(revs.v[2].fullref, "refs/tags/lw");
		assert_string_equal(revs.v[3].fullref, "refs/remotes/origin/main");
		assert_null(revs.v[4].fullref);
		assert_string_equal(revs.v[5].fullref, "refs/heads/dup");
		rq_revs_free(&revs);
		free(hex);
	}
	/* no arguments: empty */
	assert_int_equal(rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, NULL, 0, &revs, NULL), 0);
	assert_int_equal(revs.n, 0);
	rq_revs_free(&revs);
}

static void check_parse_fails(const char *const *args, size_t nargs, rq_code code)
{
	rq_revs revs;
	rq_error err;

	memset(&revs, 0x5a, sizeof(revs));
	rq_error_clear(&err);
	if (rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, args, nargs, &revs, &err) != -1)
		fail_msg("rq_revs_parse(%s) succeeded", args[nargs - 1]);
	if (err.code != code)
		fail_msg("rq_revs_parse(%s): code %s, want %s (%s)", args[nargs - 1],
			 rq_error_code_name(err.code), rq_error_code_name(code), err.msg);
	/* left empty */
	assert_int_equal(revs.n, 0);
	assert_null(revs.v);
	assert_int_equal(revs.npositive, 0);
	assert_int_equal(revs.nnegative, 0);
	rq_revs_free(&revs);
}

static void test_revs_parse_errors(void **state)
{
	(void)state;
	{
		const char *a[] = {"-x"};
		check_parse_fails(a, 1, RQ_E_USAGE);
	}
	{
		const char *a[] = {"main", "--simplify-by-decoration"};
		check_parse_fails(a, 2, RQ_E_USAGE);
	}
	{
		const char *a[] = {"main", "side", "nope"};
		check_parse_fails(a, 3, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"nope..main"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"main..nope"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"main...nope"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"^"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"main..side..main"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"^main..side"};
		check_parse_fails(a, 1, RQ_E_BAD_REVISION);
	}
	{
		const char *a[] = {"main", "dup..main"};
		check_parse_fails(a, 2, RQ_E_AMBIGUOUS);
	}
	{
		const char *a[] = {"^dup"};
		check_parse_fails(a, 1, RQ_E_AMBIGUOUS);
	}
}

/*
 * With 16 names or more, all refs are read once (a ref set) instead of
 * every DWIM candidate being looked up: each revision, its id and its full
 * ref name are what the same argument alone (looked up) gives.
 */
static void test_revs_parse_many(void **state)
{
	char *hex = tu_capture(repo, "git rev-parse side");
	const char *args[] = {"main~2..main",
			      "^side",
			      "main",
			      "lw",
			      "v1",
			      "^v1~1",
			      "..side",
			      "main~1",
			      hex,
			      "origin",
			      "v1^{commit}",
			      "heads/dup",
			      "@",
			      "HEAD",
			      "refs/heads/main",
			      "side",
			      "orphan",
			      "tags/v1",
			      "ORIG_HEAD",
			      "origin/HEAD",
			      "remotes/origin/main",
			      "side~1"};
	size_t nargs = sizeof(args) / sizeof(args[0]), k = 0;
	rq_revs all;
	rq_error aerr;

	(void)state;
	assert_non_null(hex);
	assert_true(nargs >= 16);
	rq_error_clear(&aerr);
	if (rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, args, nargs, &all, &aerr) != 0)
		fail_msg("rq_revs_parse: %s", aerr.msg);
	for (size_t i = 0; i < nargs; i++) {
		rq_revs one;
		rq_error err;
		rq_error_clear(&err);
		if (rq_revs_parse(tu_repo_open(repo), &rq_oid_sha1, &args[i], 1, &one, &err) != 0)
			fail_msg("rq_revs_parse(%s): %s", args[i], err.msg);
		for (size_t j = 0; j < one.n; j++, k++) {
			assert_true(k < all.n);
			assert_string_equal(one.v[j].name, all.v[k].name);
			assert_int_equal(one.v[j].negative, all.v[k].negative);
			assert_string_equal(tu_oid_hex(&one.v[j].oid), tu_oid_hex(&all.v[k].oid));
			if (!one.v[j].fullref)
				assert_null(all.v[k].fullref);
			else
				assert_string_equal(one.v[j].fullref, all.v[k].fullref);
		}
		rq_revs_free(&one);
	}
	assert_int_equal(k, all.n);
	/* spot checks */
	assert_string_equal(all.v[3].fullref, "refs/heads/main"); /* main */
	assert_string_equal(all.v[5].fullref, "refs/tags/v1");	  /* v1 */
	/* "@" alone is HEAD, as in git (upstream replay updates its branch) */
	assert_string_equal(all.v[14].fullref, "refs/heads/main"); /* @ */
	assert_string_equal(all.v[15].fullref, "refs/heads/main"); /* HEAD */
	rq_revs_free(&all);
	free(hex);
}

/*
 * A...B with three merge bases of one date: the negatives in git's order
 * (as git rev-parse lists them), which libgit2's merge bases did not give.
 */
static void test_revs_symmetric_many_bases(void **state)
{
	tu_repo *r = tu_repo_new(0);
	const char *args[] = {"M2...M1"};
	char got[5 * 43 + 1] = "", *want;
	rq_revs revs;
	rq_error err;

	(void)state;
	tu_git(r, "mk() { n=$1 d=$2; shift 2; id=$(GIT_COMMITTER_DATE=\"$d +0000\" "
		  "git commit-tree $(git mktree </dev/null) -m $n \"$@\") && git tag $n $id; } && "
		  "mk A 1700000000 && mk B 1700000200 -p A && mk C 1700000200 -p A && "
		  "mk D 1700000200 -p A && mk M1 1700000400 -p B -p C -p D && "
		  "mk M2 1700000400 -p D -p B -p C");
	rq_error_clear(&err);
	if (rq_revs_parse(tu_repo_open(r), &rq_oid_sha1, args, 1, &revs, &err) != 0)
		fail_msg("rq_revs_parse(M2...M1): %s", err.msg);
	for (size_t i = 0; i < revs.n; i++) {
		if (!revs.v[i].negative)
			continue;
		if (*got)
			strcat(got, "\n");
		strcat(got, "^");
		strcat(got, tu_oid_hex(&revs.v[i].oid));
	}
	want = tu_capture(r, "git rev-parse M2...M1 | grep '^\\^'");
	assert_non_null(want);
	assert_int_equal(revs.nnegative, 3);
	assert_string_equal(got, want);
	free(want);
	rq_revs_free(&revs);
	tu_repo_free(r);
}

static void test_refname_is_valid_full(void **state)
{
	static const char *const names[] = {"refs/heads/main",
					    "refs/heads/a/b/c",
					    "refs/tags/v1.0",
					    "refs/x",
					    "refs/heads/a..b",
					    "refs/heads/x.lock",
					    "refs/heads/",
					    "refs/heads/a b",
					    "refs/heads/a~1",
					    "refs/heads/a^",
					    "refs/heads/a:b",
					    "refs/heads/a?",
					    "refs/heads/a*",
					    "refs/heads/a[",
					    "refs/heads/.dot",
					    "refs/heads/a/",
					    "refs/heads//a",
					    "refs/heads/a\\b",
					    "refs/heads/a@{1}",
					    "refs/heads/a.",
					    "refs/heads/\x01"
					    "a",
					    "refs/heads/a\tb",
					    "refs/heads/-dash",
					    "refs/heads/@",
					    "refs/heads/a@b"};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int ours = rq_revs_refname_valid(names[i]);
		int git = tu_run(repo, "git check-ref-format '%s'", names[i]) == 0;
		if (ours != git)
			fail_msg("'%s': rq %d, git check-ref-format %d", names[i], ours, git);
	}
	/*
	 * Not checked: "refs/heads/a\x7f" (DEL). git check-ref-format refuses
	 * it, libgit2 1.5 (and so rq_revs_refname_valid) accepts it; see the
	 * report.
	 */
	assert_int_equal(rq_revs_refname_valid("refs/heads/main"), 1);
	assert_int_equal(rq_revs_refname_valid("refs/heads/a..b"), 0);
	assert_int_equal(rq_revs_refname_valid("HEAD"), 1);
	/* not fully qualified */
	assert_int_equal(rq_revs_refname_valid("main"), 0);
	assert_int_equal(rq_revs_refname_valid("heads/main"), 0);
	assert_int_equal(rq_revs_refname_valid("FETCH_HEAD"), 0);
	assert_int_equal(rq_revs_refname_valid("ref/heads/main"), 0);
	assert_int_equal(rq_revs_refname_valid(""), 0);
	assert_int_equal(rq_revs_refname_valid(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dwim_ref),
	    cmocka_unit_test(test_resolve_commit),
	    cmocka_unit_test(test_resolve_at_forms),
	    cmocka_unit_test(test_search_same_date),
	    cmocka_unit_test(test_resolve_ambiguous_prefix),
	    cmocka_unit_test(test_resolve_sha256),
	    cmocka_unit_test(test_revs_parse_ranges),
	    cmocka_unit_test(test_revs_parse_errors),
	    cmocka_unit_test(test_revs_parse_many),
	    cmocka_unit_test(test_revs_symmetric_many_bases),
	    cmocka_unit_test(test_refname_is_valid_full),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
