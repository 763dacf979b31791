/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refread (one ref of a files repository, read by replayq): every ref
 * read as `git rev-parse --verify` and `git show-ref` read it, in
 * repositories made with git: loose refs, packed-refs only (sorted, and
 * not), a loose ref over a packed one, symbolic refs and chains up to and
 * past git's depth, broken loose refs, a dangling symbolic ref, a linked
 * worktree's own refs (HEAD, refs/bisect/, refs/worktree/) against the
 * shared ones, a bad packed-refs; SHA-256 ids read at 64 digits in a
 * repository of upstream git's `init --object-format=sha256` (skipped
 * with a notice without upstream git: RQ_UPSTREAM_GIT, or
 * /work/shared/upstream-git/git). And rq_refs_apply in a linked worktree
 * writes refs/worktree/ where git reads it.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_refdb_rt.h"
#include "rq_refread.h"
#include "rq_refs.h"
#include "rq_refspace.h"

static char g_up[PATH_MAX]; /* upstream git, "" when absent */
static tu_repo *tmpl;

static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};

	if (tu_group_setup(state) < 0 || !(tmpl = tu_repo_new(0)))
		return -1;
	tu_commit_file(tmpl, "a", "a\n", "one");
	tu_git(tmpl, "git branch side && git tag -a -m t v1 && git tag light");
	tu_commit_file(tmpl, "a", "b\n", "two");
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], g_up) && access(g_up, X_OK))
			g_up[0] = '\0';
	if (!g_up[0])
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the SHA-256 ref test is skipped\n");
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(tmpl);
	return tu_group_teardown(state);
}

static int setup(void **state)
{
	return tu_copy_setup(state, tmpl, "1700000000 +0000");
}

/* What rq_refread_resolve makes of ref with own (NULL: the common one) and
 * common as git directories: the hex digits, "missing", "broken"
 * (RQ_E_BAD_REPO) or "error <code>". */
static char *resolve(const char *common, const char *own, const rq_oid_algo *algo, const char *ref)
{
	static char out[RQ_OID_MAX_HEXSZ + 32];
	rq_refread rd = {rq_fs_opendir(common), rq_fs_opendir(own ? own : common), algo};
	rq_error err;
	rq_oid id;
	int rc;

	assert_true(rd.common >= 0 && rd.own >= 0);
	rc = rq_refread_resolve(&rd, ref, &id, &err);
	if (rc == RQ_REFREAD_FOUND)
		rq_oid_fmt(out, &id, algo);
	else if (rc == RQ_REFREAD_MISSING)
		snprintf(out, sizeof(out), "missing");
	else if (err.code == RQ_E_BAD_REPO)
		snprintf(out, sizeof(out), "broken");
	else
		snprintf(out, sizeof(out), "error %d", (int)err.code);
	close(rd.common);
	close(rd.own);
	return out;
}

/* What git (the program git) says of ref, run in dir: its id, or
 * "missing" when rev-parse --verify fails. */
static char *git_says(tu_repo *r, const char *git, const char *dir, const char *ref)
{
	char *got = tu_capture(r,
			       "cd '%s' && '%s' rev-parse -q --verify '%s^{}' >/dev/null && "
			       "'%s' rev-parse -q --verify '%s' || echo missing",
			       dir, git, ref, git, ref);
	assert_non_null(got);
	return got;
}

/* ref read by rq_refread as git reads it. */
static void same_as_git(tu_repo *r, const char *git, const char *dir, const char *common,
			const char *own, const rq_oid_algo *algo, const char *ref)
{
	char *want = git_says(r, git, dir, ref);
	const char *got = resolve(common, own, algo, ref);

	if (strcmp(want, got))
		fail_msg("%s: git %s, rq_refread %s", ref, want, got);
	free(want);
}

/* Every ref `git show-ref` lists, and HEAD, read as git reads them. */
static void all_as_git(tu_repo *r, const char *git, const rq_oid_algo *algo)
{
	char *list = tu_capture(r, "'%s' show-ref", git), *save = NULL;

	assert_non_null(list);
	for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ' ');
		assert_non_null(name);
		*name++ = '\0';
		assert_string_equal(resolve(r->gitdir, NULL, algo, name), line);
	}
	free(list);
	same_as_git(r, git, r->path, r->gitdir, NULL, algo, "HEAD");
}

static void test_loose(void **state)
{
	tu_repo *r = *state;

	assert_true(tu_exists(r->gitdir) && !tu_run(r, "test ! -e .git/packed-refs"));
	all_as_git(r, "git", &rq_oid_sha1);
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/none");
	/* git's reading: upper-case digits, white space and more after them */
	tu_git(r, "printf '%%s\\tjunk\\n' $(git rev-parse side | tr a-f A-F) >.git/refs/heads/up");
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/up");
	assert_string_not_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/up"), "missing");
	/* a directory where the ref would be: no ref */
	tu_git(r, "mkdir -p .git/refs/heads/dir/sub");
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/dir"), "missing");
}

static void test_packed(void **state)
{
	tu_repo *r = *state;
	char *side = tu_capture(r, "git rev-parse side");

	for (int i = 0; i < 40; i++)
		tu_git(r, "git update-ref refs/heads/b%02d %s", i * 7 % 40,
		       i % 2 ? "main" : "side");
	tu_git(r,
	       "git pack-refs --all && test ! -e .git/refs/heads/main && "
	       "head -1 .git/packed-refs | grep -q ' sorted' && grep -q '^\\^' .git/packed-refs");
	all_as_git(r, "git", &rq_oid_sha1);
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/b");
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/b40");
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/zzz");
	/* a loose ref over its packed one wins */
	tu_git(r, "git update-ref refs/heads/b07 %s && test -f .git/refs/heads/b07", side);
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/b07"), side);
	all_as_git(r, "git", &rq_oid_sha1);
	/* no "sorted" trait, lines out of order: read line by line */
	tu_git(r,
	       "printf '# pack-refs with: peeled \\n' >x && grep -v '^#' .git/packed-refs | "
	       "grep -v '^\\^' | sort -r >>x && mv x .git/packed-refs && git show-ref >/dev/null");
	all_as_git(r, "git", &rq_oid_sha1);
	free(side);
}

static void test_symbolic(void **state)
{
	tu_repo *r = *state;

	/* l1 -> side, l2 -> l1, ... l6 -> l5: git reads 5 refs at most */
	tu_git(r, "git symbolic-ref refs/heads/l1 refs/heads/side && for i in 2 3 4 5 6; do "
		  "git symbolic-ref refs/heads/l$i refs/heads/l$((i - 1)); done");
	for (int i = 1; i <= 6; i++) {
		char name[32], *want;
		snprintf(name, sizeof(name), "refs/heads/l%d", i);
		if (i <= 4) {
			same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, name);
			continue;
		}
		want = git_says(r, "git", r->path, name);
		assert_string_equal(want, "missing"); /* git: too deep */
		assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, name), "broken");
		free(want);
	}
	assert_string_not_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/l4"), "missing");
	/* through a packed one, and HEAD through a chain */
	tu_git(r, "git pack-refs --all && git symbolic-ref HEAD refs/heads/l2");
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "HEAD");
	/* dangling: no ref */
	tu_git(r, "git symbolic-ref refs/heads/dangling refs/heads/nowhere");
	same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, "refs/heads/dangling");
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/dangling"),
			    "missing");
}

static void test_broken(void **state)
{
	static const char *const bad[] = {
	    "nonsense\\n", "%.39s\\n", "%sx\\n", "ref: refs/heads/../x\\n", "ref:\\n", "\\n",
	};
	tu_repo *r = *state;
	char *id = tu_capture(r, "git rev-parse main");

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *want;
		tu_git(r, "printf '%s' %s >.git/refs/heads/bad", bad[i], id);
		want = git_says(r, "git", r->path, "refs/heads/bad");
		assert_string_equal(want, "missing"); /* git reads no ref there */
		free(want);
		if (strcmp(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/bad"), "broken"))
			fail_msg("'%s' read as %s", bad[i],
				 resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/bad"));
	}
	/* a bad packed-refs line is an error, not a missing ref */
	tu_git(r, "rm .git/refs/heads/bad && git pack-refs --all && echo junk >>.git/packed-refs");
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/zzz"), "broken");
	tu_git(r, "printf '%s refs/heads/cut' %s >.git/packed-refs", "%s", id);
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/main"), "broken");
	free(id);
}

static void test_worktree(void **state)
{
	static const char *const refs[] = {"HEAD",
					   "refs/bisect/good",
					   "refs/worktree/mine",
					   "refs/heads/main",
					   "refs/heads/side",
					   "refs/heads/wtb"};
	tu_repo *r = *state;
	char wt[PATH_MAX + 8], own[PATH_MAX + 32];

	snprintf(wt, sizeof(wt), "%s/wt", r->root);
	snprintf(own, sizeof(own), "%s/worktrees/wt", r->gitdir);
	tu_git(r,
	       "git worktree add -q -b wtb '%s' side && git update-ref refs/bisect/good main && "
	       "git update-ref refs/worktree/mine main && cd '%s' && "
	       "git update-ref refs/bisect/good side~0 && git update-ref refs/worktree/mine "
	       "side && test -f '%s/refs/bisect/good' && test -f '%s/refs/worktree/mine'",
	       wt, wt, own, own);
	for (size_t i = 0; i < sizeof(refs) / sizeof(*refs); i++) {
		same_as_git(r, "git", wt, r->gitdir, own, &rq_oid_sha1, refs[i]);
		same_as_git(r, "git", r->path, r->gitdir, NULL, &rq_oid_sha1, refs[i]);
	}
	snprintf(wt, sizeof(wt), "%s", resolve(r->gitdir, own, &rq_oid_sha1, "refs/worktree/mine"));
	assert_string_not_equal(wt, resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/worktree/mine"));
}

/* rq_refs_apply in a linked worktree: its refs/worktree/ ref is its own. */
static void test_apply_worktree_ref(void **state)
{
	tu_repo *r = *state;
	char wt[PATH_MAX + 8];
	rq_ident who = {TU_COMMITTER_NAME, TU_COMMITTER_EMAIL, 1700000123, 0};
	char name[] = "refs/worktree/mine";
	rq_ref_update u = {.ref = name};
	rq_ref_updates res = {.updates = &u, .nupdates = 1, .reflog_msg = "replay"};
	git_repository *repo;
	rq_error err;
	char *got;

	snprintf(wt, sizeof(wt), "%s/wt", r->root);
	tu_git(r,
	       "git worktree add -q -b wtb '%s' side && cd '%s' && git update-ref "
	       "refs/worktree/mine side",
	       wt, wt);
	tu_rev_oid(r, "side", &u.old_id);
	tu_rev_oid(r, "main", &u.new_id);
	assert_int_equal(git_repository_open(&repo, wt), 0);
	assert_int_equal(rq_refs_apply(repo, &res, &who, &err), 0);
	git_repository_free(repo);
	got = tu_capture(r, "cd '%s' && git rev-parse refs/worktree/mine", wt);
	assert_string_equal(got, tu_oid_hex(&u.new_id));
	free(got);
	assert_int_not_equal(tu_run(r, "git rev-parse -q --verify refs/worktree/mine"), 0);
}

/* A repository of upstream git's SHA-256 format: 64-digit ids, loose and
 * packed, through a symbolic ref; a SHA-1 reader calls them broken. */
static void test_sha256(void **state)
{
	tu_repo *r = *state;

	if (!g_up[0])
		skip();
	tu_git(r,
	       "rm -rf .git && '%s' init -q --template= -b main --object-format=sha256 . && "
	       "git config maintenance.auto false && "
	       "'%s' add -A && '%s' commit -q -m one && '%s' tag -a -m t v1 && '%s' branch side "
	       "&& '%s' pack-refs --all && echo c >c && '%s' add c && '%s' commit -q -m two && "
	       "'%s' symbolic-ref refs/heads/link refs/heads/side && test -f .git/refs/heads/main",
	       g_up, g_up, g_up, g_up, g_up, g_up, g_up, g_up, g_up);
	all_as_git(r, g_up, &rq_oid_sha256);
	same_as_git(r, g_up, r->path, r->gitdir, NULL, &rq_oid_sha256, "refs/heads/link");
	same_as_git(r, g_up, r->path, r->gitdir, NULL, &rq_oid_sha256, "refs/tags/v1");
	assert_int_equal(strlen(resolve(r->gitdir, NULL, &rq_oid_sha256, "refs/heads/side")), 64);
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/main"), "broken");
	assert_string_equal(resolve(r->gitdir, NULL, &rq_oid_sha1, "refs/heads/side"), "broken");
}

/* One split of a worktree's own refs from the shared ones: the reader,
 * the writer's directories and the reftable stack agree (git's
 * is_per_worktree_ref). */
static void test_own_split(void **state)
{
	static const struct {
		const char *name;
		int own;
	} cases[] = {{"HEAD", 1},
		     {"refs/heads/x", 0},
		     {"refs/worktree/a", 1},
		     {"refs/bisect/b", 1},
		     {"refs/rewritten/c", 1},
		     {"refs/tags/t", 0},
		     {"refs/worktreex/d", 0},
		     {"refs/rewritten", 0}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rq_refread_own(cases[i].name), cases[i].own);
		assert_int_equal(rq_refspace_own_dir(cases[i].name), cases[i].own);
		assert_int_equal(rq_refdb_rt_worktree_ref(cases[i].name), cases[i].own);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_loose, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_packed, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_symbolic, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_broken, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_worktree, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_apply_worktree_ref, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_sha256, setup, tu_copy_teardown),
	    cmocka_unit_test(test_own_split),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
