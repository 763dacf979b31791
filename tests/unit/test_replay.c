/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay: the engine end to end through the library, with git
 * cherry-pick and git revert (same committer) as the oracle for the new
 * commit ids.
 */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_refs.h"
#include "rq_replay.h"

/* The replay's committer: what GIT_COMMITTER_* + RQ_DATE give git. */
#define RQ_DATE "@1700099999 +0100"

static tu_repo *tmpl;
static rq_ident committer;
static rq_oid zero_oid;

/*
 * main:   c1 - c2 - c3            (c3 edits line 1 of a.txt, adds n.txt)
 * topic:       c2 - t1 - t2
 * topic2:      c2 - u1
 * s1:          c2 - x1 ; s2: s1 - y1 (stacked)
 * conf:        c2 - k1 (clean) - k2 (edits line 1 of a.txt: conflict)
 * moddel:      c2 - d1 (deletes a.txt)
 * addadd:      c2 - n1 (adds another n.txt)
 * dupe:        c2 - e1 (the same change as c3)
 * emptyc:      c2 - z1 (an empty commit)
 * mb:          c2 - m1 - merge of topic
 * tag dup and branch dup
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
	committer.tz = 60;

	tmpl = r = tu_repo_new(0);
	tu_commit_file(r, "a.txt", "a1\na2\na3\na4\na5\n", "first");
	tu_commit_file(r, "b.txt", "b\n", "second");
	tu_git(r, "git branch topic && git branch topic2 && git branch s1 && git branch conf && "
		  "git branch moddel && git branch addadd && git branch dupe && "
		  "git branch emptyc && git branch mb");
	tu_tick(r);
	tu_git(r, "printf 'A1\\na2\\na3\\na4\\na5\\n' >a.txt && echo main >n.txt && "
		  "git add -A && git commit -q -m third");

	tu_git(r, "git checkout -q topic");
	tu_commit_file(r, "t.txt", "t1\n", "t1");
	tu_commit_file(r, "t.txt", "t1\nt2\n", "t2\n\nwith a body");
	tu_git(r, "git checkout -q topic2");
	tu_commit_file(r, "u.txt", "u1\n", "u1");
	tu_git(r, "git checkout -q s1");
	tu_commit_file(r, "x.txt", "x1\n", "x1");
	tu_git(r, "git checkout -q -b s2");
	tu_commit_file(r, "y.txt", "y1\n", "y1");
	tu_git(r, "git checkout -q conf");
	tu_commit_file(r, "k.txt", "k1\n", "k1");
	tu_commit_file(r, "a.txt", "X1\na2\na3\na4\na5\n", "k2");
	tu_git(r, "git checkout -q moddel");
	tu_tick(r);
	tu_git(r, "git rm -q a.txt && git commit -q -m d1");
	tu_git(r, "git checkout -q addadd");
	tu_commit_file(r, "n.txt", "other\n", "n1");
	tu_git(r, "git checkout -q dupe");
	tu_tick(r);
	tu_git(r, "printf 'A1\\na2\\na3\\na4\\na5\\n' >a.txt && echo main >n.txt && "
		  "git add -A && git commit -q -m 'same as third'");
	tu_git(r, "git checkout -q emptyc");
	tu_tick(r);
	tu_git(r, "git commit -q --allow-empty -m z1");
	tu_git(r, "git checkout -q mb");
	tu_commit_file(r, "m.txt", "m1\n", "m1");
	tu_tick(r);
	tu_git(r, "git merge -q --no-ff -m merge topic");
	tu_git(r, "git checkout -q main && git tag dup && git branch dup main~1");
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

static rq_replay_opts make_opts(rq_mode mode, const char *target, const char *const *revs,
				size_t nrevs)
{
	rq_replay_opts o;

	memset(&o, 0, sizeof(o));
	o.mode = mode;
	o.target = target;
	o.revisions = revs;
	o.nrevisions = nrevs;
	o.empty = RQ_EMPTY_DROP;
	o.committer = &committer;
	return o;
}

static void objects_dir(tu_repo *r, char *buf, size_t size, const char *sub)
{
	snprintf(buf, size, "%.3000s/objects%s%s", r->gitdir, sub ? "/" : "", sub ? sub : "");
}

static int pack_count(tu_repo *r)
{
	char pack[PATH_MAX];
	objects_dir(r, pack, sizeof(pack), "pack");
	return tu_count_entries(pack, "pack-", ".pack");
}

/* Run; on an unexpected rc, fail with the error. */
static void run(tu_repo *r, const rq_replay_opts *o, rq_replay_result *res, int want_rc)
{
	rq_error err;
	int rc;

	rq_error_clear(&err);
	rc = rq_replay_run(tu_repo_open(r), o, res, &err);
	if (rc != want_rc)
		fail_msg("rq_replay_run returned %d, want %d: %s (%s)", rc, want_rc, err.msg,
			 rq_error_code_name(err.code));
	tu_assert_no_tmpdir(r);
}

static void run_fails(tu_repo *r, const rq_replay_opts *o, rq_code code)
{
	rq_replay_result res;
	rq_error err;
	int packs = pack_count(r), loose = tu_loose_count(r);

	rq_error_clear(&err);
	memset(&res, 0x5a, sizeof(res));
	if (rq_replay_run(tu_repo_open(r), o, &res, &err) != -1)
		fail_msg("rq_replay_run succeeded, want %s", rq_error_code_name(code));
	if (err.code != code)
		fail_msg("code %s, want %s (%s)", rq_error_code_name(err.code),
			 rq_error_code_name(code), err.msg);
	assert_true(strlen(err.msg) > 0);
	assert_int_equal(res.upd.nupdates, 0);
	assert_null(res.upd.updates);
	assert_int_equal(res.conflicted, 0);
	/* nothing new in the repository */
	tu_assert_no_tmpdir(r);
	assert_int_equal(pack_count(r), packs);
	assert_int_equal(tu_loose_count(r), loose);
	rq_replay_result_free(&res);
}

/* git cherry-pick <range> on a detached <onto>; the new HEAD. */
static void oracle_cherry_pick(tu_repo *r, const char *onto, const char *range, rq_oid *out)
{
	char *hex = tu_worktree_head(r, onto, "git cherry-pick %s", range);
	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(out, &rq_oid_sha1, hex, strlen(hex)), 0);
	free(hex);
}

/* git revert <range> on <onto> with the committer as author; the new HEAD. */
static void oracle_revert(tu_repo *r, const char *onto, const char *range, rq_oid *out)
{
	char *hex = tu_worktree_head(r, onto,
				     "GIT_AUTHOR_NAME=\"$GIT_COMMITTER_NAME\" "
				     "GIT_AUTHOR_EMAIL=\"$GIT_COMMITTER_EMAIL\" "
				     "GIT_AUTHOR_DATE=\"$GIT_COMMITTER_DATE\" "
				     "git revert --no-edit %s",
				     range);
	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(out, &rq_oid_sha1, hex, strlen(hex)), 0);
	free(hex);
}

static void assert_oid_eq(const rq_oid *a, const rq_oid *b)
{
	if (!rq_oid_eq(a, b))
		fail_msg("%s != %s", tu_oid_hex(a), tu_oid_hex(b));
}

static void assert_ref_is(tu_repo *r, const char *ref, const rq_oid *want)
{
	rq_oid cur;
	tu_rev_oid(r, ref, &cur);
	assert_oid_eq(&cur, want);
}

static void test_onto(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	rq_replay_result res;
	rq_oid topic, c3, want;
	char msg[128], pack[2 * PATH_MAX];
	int packs = pack_count(r);

	tu_rev_oid(r, "topic", &topic);
	tu_rev_oid(r, "main", &c3);
	run(r, &o, &res, 0);
	assert_int_equal(res.conflicted, 0);
	assert_int_equal(res.conflicts.n, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/topic");
	assert_oid_eq(&res.upd.updates[0].old_id, &topic);
	snprintf(msg, sizeof(msg), "replay --onto %s", tu_oid_hex(&c3));
	assert_string_equal(res.upd.reflog_msg, msg);
	assert_int_equal(res.stats.commits, 2);
	assert_int_equal(res.stats.picked, 2);
	assert_int_equal(res.stats.dropped, 0);
	/* 2 commits and 2 trees are new; the blobs existed */
	assert_int_equal(res.stats.objects, 4);
	assert_true(res.stats.pack_bytes > 0);
	/* one new pack, the one reported */
	assert_int_equal(pack_count(r), packs + 1);
	objects_dir(r, pack, sizeof(pack), "pack");
	strcat(pack, "/");
	strcat(pack, res.stats.pack_name);
	strcat(pack, ".idx");
	assert_true(tu_exists(pack));
	/* refs are not touched by the run */
	assert_ref_is(r, "refs/heads/topic", &topic);
	/* the new commits are complete and valid */
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	{
		rq_oid pp;
		char expr[64];
		snprintf(expr, sizeof(expr), "%s~2", tu_oid_hex(&res.upd.updates[0].new_id));
		tu_rev_oid(r, expr, &pp);
		assert_oid_eq(&pp, &c3);
	}
	/* the same commit git cherry-pick makes */
	oracle_cherry_pick(r, "main", "main..topic", &want);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);
	assert_null(res.upd.updates);
}

static void test_onto_bare_same_ids(void **state)
{
	tu_repo *r = *state, *bare;
	const char *revs[] = {"main..topic", "main..topic2"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 2);
	rq_replay_result res, res2;
	rq_oid want;

	tu_git(r, "git clone -q --bare . ../bare.git");
	bare = calloc(1, sizeof(*bare));
	assert_non_null(bare);
	snprintf(bare->path, sizeof(bare->path), "%.1000s/bare.git", r->root);
	snprintf(bare->gitdir, sizeof(bare->gitdir), "%.1000s", bare->path);
	bare->bare = 1;
	/* the refs of a bare clone are the local branches */
	run(bare, &o, &res2, 0);
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 2);
	assert_int_equal(res2.upd.nupdates, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(res.upd.updates[i].ref, res2.upd.updates[i].ref);
		assert_oid_eq(&res.upd.updates[i].new_id, &res2.upd.updates[i].new_id);
		assert_oid_eq(&res.upd.updates[i].old_id, &res2.upd.updates[i].old_id);
	}
	oracle_cherry_pick(r, "main", "main..topic2", &want);
	for (size_t i = 0; i < 2; i++)
		if (!strcmp(res.upd.updates[i].ref, "refs/heads/topic2"))
			assert_oid_eq(&res.upd.updates[i].new_id, &want);
	rq_replay_result_free(&res);
	rq_replay_result_free(&res2);
	git_repository_free(bare->repo);
	free(bare); /* its directory is under r->root */
}

static void test_advance(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic"};
	rq_replay_opts o = make_opts(RQ_MODE_ADVANCE, "main", revs, 1);
	rq_replay_result res;
	rq_oid c3, want;

	tu_rev_oid(r, "main", &c3);
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/main");
	assert_oid_eq(&res.upd.updates[0].old_id, &c3);
	assert_string_equal(res.upd.reflog_msg, "replay --advance main"); /* as given */
	oracle_cherry_pick(r, "main", "main..topic", &want);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);

	/* committer NULL: git's sources (here GIT_COMMITTER_* and the date) */
	o.committer = NULL;
	run(r, &o, &res, 0);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);

	/* a single commit given by id, advancing another branch */
	{
		char *t1 = tu_capture(r, "git rev-parse topic~1");
		const char *revs2[] = {"^topic2", t1};
		assert_non_null(t1);
		o = make_opts(RQ_MODE_ADVANCE, "topic2", revs2, 2);
		/* a positive commit id: topic~1 and its ancestors not in topic2 */
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 1);
		assert_string_equal(res.upd.updates[0].ref, "refs/heads/topic2");
		assert_string_equal(res.upd.reflog_msg, "replay --advance topic2");
		oracle_cherry_pick(r, "topic2", "topic2..topic~1", &want);
		assert_oid_eq(&res.upd.updates[0].new_id, &want);
		rq_replay_result_free(&res);
		free(t1);
	}
}

static void test_revert(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main~2..main"};
	rq_replay_opts o = make_opts(RQ_MODE_REVERT, "main", revs, 1);
	rq_replay_result res;
	rq_oid c1, c2, c3, want, tree, c1tree;
	char *raw, expect[1024], ident[256];

	tu_rev_oid(r, "main~2", &c1);
	tu_rev_oid(r, "main~1", &c2);
	tu_rev_oid(r, "main", &c3);
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/main");
	assert_oid_eq(&res.upd.updates[0].old_id, &c3);
	assert_string_equal(res.upd.reflog_msg, "replay --revert main");
	assert_int_equal(res.stats.picked, 2);
	/* c3 reverted first, then c2: the tree is c1's again */
	{
		char expr[64];
		snprintf(expr, sizeof(expr), "%s^{tree}", tu_oid_hex(&res.upd.updates[0].new_id));
		tu_rev_oid(r, expr, &tree);
		tu_rev_oid(r, "main~2^{tree}", &c1tree);
		assert_oid_eq(&tree, &c1tree);
	}
	/* the last revert: message, author = committer */
	assert_int_equal(rq_ident_format(&committer, ident, sizeof(ident)), 0);
	raw = tu_capture_raw(r, NULL, "git cat-file commit %s",
			     tu_oid_hex(&res.upd.updates[0].new_id));
	assert_non_null(raw);
	snprintf(expect, sizeof(expect),
		 "author %s\ncommitter %s\n\nRevert \"second\"\n\nThis reverts commit %s.\n", ident,
		 ident, tu_oid_hex(&c2));
	assert_non_null(strstr(raw, expect));
	free(raw);
	/* the same commits git revert makes */
	oracle_revert(r, "main", "main~2..main", &want);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);

	/* revert of a revert: Reapply */
	{
		const char *revs2[] = {"main~1..main"};
		char *hex;
		tu_git(r, "git update-ref refs/heads/main %s", tu_oid_hex(&want));
		o = make_opts(RQ_MODE_REVERT, "main", revs2, 1);
		run(r, &o, &res, 0);
		hex = tu_capture(r, "git rev-parse main");
		raw = tu_capture_raw(r, NULL, "git cat-file commit %s | sed '1,/^$/d'",
				     tu_oid_hex(&res.upd.updates[0].new_id));
		assert_non_null(raw);
		snprintf(expect, sizeof(expect), "Reapply \"second\"\n\nThis reverts commit %s.\n",
			 hex);
		assert_string_equal(raw, expect);
		free(raw);
		free(hex);
		rq_replay_result_free(&res);
	}
	(void)c1;
}

static void check_conflict(tu_repo *r, const char *branch, const char *path, rq_conflict_kind kind)
{
	char range[64], tip[64];
	const char *revs[] = {range};
	rq_replay_opts o;
	rq_replay_result res;
	rq_oid conflicting;
	int packs = pack_count(r), loose = tu_loose_count(r);

	snprintf(range, sizeof(range), "main..%s", branch);
	snprintf(tip, sizeof(tip), "%s", branch);
	o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	tu_rev_oid(r, tip, &conflicting);
	run(r, &o, &res, 1);
	assert_int_equal(res.conflicted, 1);
	assert_oid_eq(&res.conflict_commit, &conflicting);
	assert_int_equal(res.conflicts.n, 1);
	assert_string_equal(res.conflicts.v[0].path, path);
	if (res.conflicts.v[0].kind != kind)
		fail_msg("%s: kind %s, want %s", branch,
			 rq_conflict_kind_name(res.conflicts.v[0].kind),
			 rq_conflict_kind_name(kind));
	assert_int_equal(res.upd.nupdates, 0);
	assert_null(res.upd.updates);
	/* nothing left in the repository */
	assert_int_equal(pack_count(r), packs);
	assert_int_equal(tu_loose_count(r), loose);
	/* git conflicts too */
	assert_int_not_equal(tu_run(r,
				    "git worktree add -q --detach ../wt main && "
				    "git -C ../wt cherry-pick %s >/dev/null 2>&1",
				    range),
			     0);
	tu_git(r, "git worktree remove --force ../wt");
	rq_replay_result_free(&res);
	assert_int_equal(res.conflicts.n, 0);
}

static void test_conflicts(void **state)
{
	tu_repo *r = *state;
	rq_replay_result res;

	/* the second commit conflicts; the first was picked */
	check_conflict(r, "conf", "a.txt", RQ_CONFLICT_CONTENT);
	check_conflict(r, "moddel", "a.txt", RQ_CONFLICT_MODIFY_DELETE);
	check_conflict(r, "addadd", "n.txt", RQ_CONFLICT_ADD_ADD);
	{
		const char *revs[] = {"main..conf"};
		rq_replay_opts o = make_opts(RQ_MODE_ADVANCE, "main", revs, 1);
		run(r, &o, &res, 1);
		assert_int_equal(res.stats.commits, 2);
		assert_int_equal(res.stats.picked, 1);
		assert_int_equal(res.upd.nupdates, 0);
		rq_replay_result_free(&res);
	}
}

/* A pick onto a base that renamed the file it edits follows the rename, as git does. */
static void test_rename(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..rt"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	rq_replay_result res;
	rq_oid want;
	char *content;

	tu_git(r, "git checkout -q -b rt main~1");
	tu_commit_file(r, "a.txt", "a1\na2\na3\na4\nA5\n", "edit line 5");
	tu_git(r, "git checkout -q main");
	tu_tick(r);
	tu_git(r, "git mv a.txt moved.txt && git commit -q -m rename");
	setenv("GIT_COMMITTER_DATE", RQ_DATE, 1);
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	content = tu_capture(r, "git show %s:moved.txt", tu_oid_hex(&res.upd.updates[0].new_id));
	assert_non_null(content);
	assert_string_equal(content, "A1\na2\na3\na4\nA5");
	free(content);
	assert_int_not_equal(tu_run(r, "git cat-file -e %s:a.txt 2>/dev/null",
				    tu_oid_hex(&res.upd.updates[0].new_id)),
			     0);
	oracle_cherry_pick(r, "main", "main..rt", &want);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);
}

static void test_errors(void **state)
{
	tu_repo *r = *state;
	rq_replay_opts o;
	char *hex = tu_capture(r, "git rev-parse topic");
	char range[100];

	assert_non_null(hex);
	snprintf(range, sizeof(range), "main..%s", hex);
	{
		/* positive revisions that are no refs: replayed, nothing to update
		 * (git replay prints nothing either) */
		const char *revs[] = {range};
		rq_replay_result res;
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 0);
		rq_replay_result_free(&res);
		const char *revs2[] = {"main..topic~1"};
		o = make_opts(RQ_MODE_ONTO, "main", revs2, 1);
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 0);
		rq_replay_result_free(&res);
	}
	{
		const char *revs[] = {"main..topic"};
		/* the branch to advance must be a ref */
		o = make_opts(RQ_MODE_ADVANCE, "main~1", revs, 1);
		run_fails(r, &o, RQ_E_NOT_A_REF);
		o = make_opts(RQ_MODE_REVERT, hex, revs, 1);
		run_fails(r, &o, RQ_E_NOT_A_REF);
		o = make_opts(RQ_MODE_ADVANCE, "dup", revs, 1);
		run_fails(r, &o, RQ_E_AMBIGUOUS);
		/* invalid --ref */
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		o.ref = "refs/heads/bad..name";
		run_fails(r, &o, RQ_E_BAD_REF);
		o.ref = "topic";
		run_fails(r, &o, RQ_E_BAD_REF);
		o.ref = "HEAD";
		run_fails(r, &o, RQ_E_BAD_REF);
		o.ref = "refs/heads/x.lock";
		run_fails(r, &o, RQ_E_BAD_REF);
		/* option combinations */
		o = make_opts(RQ_MODE_ADVANCE, "main", revs, 1);
		o.contained = 1;
		run_fails(r, &o, RQ_E_USAGE);
		o = make_opts(RQ_MODE_REVERT, "main", revs, 1);
		o.contained = 1;
		run_fails(r, &o, RQ_E_USAGE);
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		o.contained = 1;
		o.ref = "refs/heads/topic";
		run_fails(r, &o, RQ_E_USAGE);
		o = make_opts(RQ_MODE_ONTO, NULL, revs, 1);
		run_fails(r, &o, RQ_E_USAGE);
		/* an empty --onto is no commit (git: "'' is not a valid commit-ish") */
		o = make_opts(RQ_MODE_ONTO, "", revs, 1);
		run_fails(r, &o, RQ_E_BAD_REVISION);
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		o.empty = (rq_empty)7;
		run_fails(r, &o, RQ_E_USAGE);
		/* no revisions */
		o = make_opts(RQ_MODE_ONTO, "main", revs, 0);
		run_fails(r, &o, RQ_E_NOTHING);
		/* bad target, too many commits */
		o = make_opts(RQ_MODE_ONTO, "nope", revs, 1);
		run_fails(r, &o, RQ_E_BAD_REVISION);
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		o.max_commits = 1;
		run_fails(r, &o, RQ_E_TOO_MANY_COMMITS);
	}
	{
		const char *revs[] = {"main..topic", "main..topic2"};
		o = make_opts(RQ_MODE_ADVANCE, "main", revs, 2);
		run_fails(r, &o, RQ_E_USAGE);
		o.ref = NULL;
		o.mode = RQ_MODE_ONTO;
		o.ref = "refs/heads/topic";
		run_fails(r, &o, RQ_E_USAGE);
	}
	{
		const char *revs[] = {"nope..topic"};
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		run_fails(r, &o, RQ_E_BAD_REVISION);
	}
	{
		const char *revs[] = {"^main"};
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		run_fails(r, &o, RQ_E_NOTHING);
	}
	{
		/* a revert of a merge needs a mainline: refused, as git revert
		 * without -m (a rebase of it replays it) */
		const char *revs[] = {"main..mb"};
		o = make_opts(RQ_MODE_REVERT, "mb", revs, 1);
		run_fails(r, &o, RQ_E_MERGE_COMMIT);
	}
	{
		/* a pick that becomes empty, with empty=abort */
		const char *revs[] = {"main..dupe"};
		o = make_opts(RQ_MODE_ADVANCE, "main", revs, 1);
		o.empty = RQ_EMPTY_ABORT;
		run_fails(r, &o, RQ_E_EMPTY_COMMIT);
	}
	{
		/* no identity */
		const char *revs[] = {"main..topic"};
		o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
		o.committer = NULL;
		unsetenv("GIT_COMMITTER_NAME");
		unsetenv("GIT_COMMITTER_EMAIL");
		run_fails(r, &o, RQ_E_IDENT);
		setenv("GIT_COMMITTER_NAME", TU_COMMITTER_NAME, 1);
		setenv("GIT_COMMITTER_EMAIL", TU_COMMITTER_EMAIL, 1);
		setenv("GIT_COMMITTER_DATE", "not a date", 1);
		run_fails(r, &o, RQ_E_BAD_DATE);
		setenv("GIT_COMMITTER_DATE", RQ_DATE, 1);
	}
	free(hex);
}

static void test_empty_modes(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..dupe"};
	rq_replay_opts o = make_opts(RQ_MODE_ADVANCE, "main", revs, 1);
	rq_replay_result res;
	rq_oid c3, c3tree, tree, parent, want;
	char expr[64];

	tu_rev_oid(r, "main", &c3);
	tu_rev_oid(r, "main^{tree}", &c3tree);
	/* drop: main stays where it is */
	o.empty = RQ_EMPTY_DROP;
	run(r, &o, &res, 0);
	assert_int_equal(res.stats.dropped, 1);
	assert_int_equal(res.stats.picked, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_oid_eq(&res.upd.updates[0].new_id, &c3);
	assert_oid_eq(&res.upd.updates[0].old_id, &c3);
	rq_replay_result_free(&res);
	/* keep: an empty commit on main */
	o.empty = RQ_EMPTY_KEEP;
	run(r, &o, &res, 0);
	assert_int_equal(res.stats.dropped, 0);
	assert_int_equal(res.stats.picked, 1);
	snprintf(expr, sizeof(expr), "%s^{tree}", tu_oid_hex(&res.upd.updates[0].new_id));
	tu_rev_oid(r, expr, &tree);
	assert_oid_eq(&tree, &c3tree);
	snprintf(expr, sizeof(expr), "%s^", tu_oid_hex(&res.upd.updates[0].new_id));
	tu_rev_oid(r, expr, &parent);
	assert_oid_eq(&parent, &c3);
	oracle_cherry_pick(r, "main", "--keep-redundant-commits main..dupe", &want);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);

	/* a commit that was empty to begin with is kept, even with abort */
	{
		const char *revs2[] = {"main..emptyc"};
		o = make_opts(RQ_MODE_ADVANCE, "main", revs2, 1);
		o.empty = RQ_EMPTY_ABORT;
		run(r, &o, &res, 0);
		assert_int_equal(res.stats.picked, 1);
		assert_int_equal(res.stats.dropped, 0);
		oracle_cherry_pick(r, "main", "--allow-empty main..emptyc", &want);
		assert_oid_eq(&res.upd.updates[0].new_id, &want);
		rq_replay_result_free(&res);
	}
}

static void test_contained(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..s2"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	rq_replay_result res;
	rq_oid s1, s2, want, parent;
	char expr[64];

	tu_rev_oid(r, "s1", &s1);
	tu_rev_oid(r, "s2", &s2);
	oracle_cherry_pick(r, "main", "main..s2", &want);
	/* without --contained: only the positive ref */
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/s2");
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);
	/* with it: every branch in the range, in replay order */
	o.contained = 1;
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 2);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/s1");
	assert_string_equal(res.upd.updates[1].ref, "refs/heads/s2");
	assert_oid_eq(&res.upd.updates[0].old_id, &s1);
	assert_oid_eq(&res.upd.updates[1].old_id, &s2);
	assert_oid_eq(&res.upd.updates[1].new_id, &want);
	snprintf(expr, sizeof(expr), "%s^", tu_oid_hex(&want));
	tu_rev_oid(r, expr, &parent);
	assert_oid_eq(&res.upd.updates[0].new_id, &parent);
	rq_replay_result_free(&res);
	/* two positive refs: both updated */
	{
		const char *revs2[] = {"main..s2", "main..s1"};
		o = make_opts(RQ_MODE_ONTO, "main", revs2, 2);
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 2);
		assert_string_equal(res.upd.updates[0].ref, "refs/heads/s1");
		assert_string_equal(res.upd.updates[1].ref, "refs/heads/s2");
		rq_replay_result_free(&res);
	}
}

static void test_apply(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	rq_replay_result res;
	rq_error err;
	rq_oid newid;
	char *s, ident[600];

	run(r, &o, &res, 0);
	rq_error_clear(&err);
	assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), 0);
	newid = res.upd.updates[0].new_id;
	assert_ref_is(r, "refs/heads/topic", &newid);
	/* the reflog entry: message and identity */
	s = tu_capture(r, "git reflog show -n1 --format=%%gs refs/heads/topic");
	assert_non_null(s);
	assert_string_equal(s, res.upd.reflog_msg);
	free(s);
	s = tu_capture(r, "git reflog show -n1 --format='%%gn <%%ge>' refs/heads/topic");
	assert_non_null(s);
	snprintf(ident, sizeof(ident), "%s <%s>", committer.name, committer.email);
	assert_string_equal(s, ident);
	free(s);
	s = tu_capture(r, "git reflog show -n1 --format=%%H refs/heads/topic");
	assert_non_null(s);
	assert_string_equal(s, tu_oid_hex(&newid));
	free(s);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);

	/* applying again (a retried job): the ref already holds its new value */
	{
		char *before =
		    tu_capture(r, "git reflog show --format='%%H %%gs' refs/heads/topic");
		char *after;
		rq_error_clear(&err);
		assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), 0);
		assert_ref_is(r, "refs/heads/topic", &newid);
		after = tu_capture(r, "git reflog show --format='%%H %%gs' refs/heads/topic");
		/* left alone: no second reflog entry */
		assert_non_null(before);
		assert_non_null(after);
		assert_string_equal(before, after);
		free(before);
		free(after);
	}
	/* a ref moved elsewhere after the run: refused, left where it is */
	{
		rq_oid c1;
		tu_rev_oid(r, "main~2", &c1);
		tu_git(r, "git update-ref refs/heads/topic %s", tu_oid_hex(&c1));
		rq_error_clear(&err);
		assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), -1);
		assert_int_equal(err.code, RQ_E_REF_MOVED);
		assert_non_null(strstr(err.msg, "refs/heads/topic"));
		assert_ref_is(r, "refs/heads/topic", &c1);
	}
	rq_replay_result_free(&res);

	/* no updates: nothing to do */
	memset(&res, 0, sizeof(res));
	assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), 0);
}

static void test_apply_ref_moved(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic", "main..topic2"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 2);
	rq_replay_result res;
	rq_error err;
	rq_oid c1, first_old;
	char refs_heads[PATH_MAX + 16], *log_before, *log_after;

	tu_rev_oid(r, "main~2", &c1);
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 2);
	/* another writer moves the last ref after the run */
	tu_git(r, "git update-ref %s %s", res.upd.updates[1].ref, tu_oid_hex(&c1));
	first_old = res.upd.updates[0].old_id;
	log_before = tu_capture(r, "git reflog show --format=%%H%%gs %s", res.upd.updates[0].ref);
	assert_non_null(log_before);
	rq_error_clear(&err);
	assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), -1);
	assert_int_equal(err.code, RQ_E_REF_MOVED);
	assert_non_null(strstr(err.msg, res.upd.updates[1].ref));
	/* nothing changed: the first ref and its reflog as they were */
	assert_ref_is(r, res.upd.updates[0].ref, &first_old);
	assert_ref_is(r, res.upd.updates[1].ref, &c1);
	log_after = tu_capture(r, "git reflog show --format=%%H%%gs %s", res.upd.updates[0].ref);
	assert_non_null(log_after);
	assert_string_equal(log_before, log_after);
	free(log_before);
	free(log_after);
	/* and no lock left behind */
	snprintf(refs_heads, sizeof(refs_heads), "%s/refs/heads", r->gitdir);
	assert_int_equal(tu_count_entries(refs_heads, "", ".lock"), 0);
	rq_replay_result_free(&res);

	/* a ref that must not exist, created meanwhile */
	{
		const char *revs2[] = {"main..topic"};
		o = make_opts(RQ_MODE_ONTO, "main", revs2, 1);
		o.ref = "refs/heads/fresh";
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 1);
		assert_oid_eq(&res.upd.updates[0].old_id, &zero_oid);
		tu_git(r, "git branch fresh main");
		rq_error_clear(&err);
		assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), -1);
		assert_int_equal(err.code, RQ_E_REF_MOVED);
		rq_replay_result_free(&res);
	}
	/* a ref another process holds locked: ref_locked (worth a retry), the
	 * lock left to its owner */
	{
		const char *revs3[] = {"main..topic"};
		char lock[PATH_MAX + 32];
		FILE *f;
		o = make_opts(RQ_MODE_ONTO, "main", revs3, 1);
		run(r, &o, &res, 0);
		snprintf(lock, sizeof(lock), "%s/refs/heads/topic.lock", r->gitdir);
		assert_non_null(f = fopen(lock, "w"));
		fclose(f);
		rq_error_clear(&err);
		assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, &err), -1);
		assert_int_equal(err.code, RQ_E_REF_LOCKED);
		assert_int_equal(tu_exists(lock), 1);
		unlink(lock);
		rq_replay_result_free(&res);
	}
}

static void test_ref_option(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 1);
	rq_replay_result res;
	rq_oid want, topic;
	char *text, expect[256];

	oracle_cherry_pick(r, "main", "main..topic", &want);
	(void)topic;
	/* a new ref: old is zero, and apply creates it */
	o.ref = "refs/heads/rebased";
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	assert_string_equal(res.upd.updates[0].ref, "refs/heads/rebased");
	assert_oid_eq(&res.upd.updates[0].old_id, &zero_oid);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	text = rq_refs_format_updates(&res.upd);
	assert_non_null(text);
	snprintf(expect, sizeof(expect),
		 "update refs/heads/rebased %s 0000000000000000000000000000000000000000\n",
		 tu_oid_hex(&want));
	assert_string_equal(text, expect);
	free(text);
	assert_int_equal(rq_refs_apply(tu_repo_open(r), &res.upd, &committer, NULL), 0);
	assert_ref_is(r, "refs/heads/rebased", &want);
	rq_replay_result_free(&res);
	/* an existing ref: old is its current value, whatever the range */
	o.ref = "refs/heads/topic2";
	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 1);
	tu_rev_oid(r, "topic2", &topic);
	assert_oid_eq(&res.upd.updates[0].old_id, &topic);
	assert_oid_eq(&res.upd.updates[0].new_id, &want);
	rq_replay_result_free(&res);
}

static void test_format_updates(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic", "main..s2"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 2);
	rq_replay_result res;
	char *text, expect[2048] = "";

	run(r, &o, &res, 0);
	assert_int_equal(res.upd.nupdates, 2);
	for (size_t i = 0; i < res.upd.nupdates; i++) {
		char line[400];
		snprintf(line, sizeof(line), "update %s %s %s\n", res.upd.updates[i].ref,
			 tu_oid_hex(&res.upd.updates[i].new_id),
			 tu_oid_hex(&res.upd.updates[i].old_id));
		strcat(expect, line);
	}
	text = rq_refs_format_updates(&res.upd);
	assert_non_null(text);
	assert_string_equal(text, expect);
	/* git update-ref --stdin takes it as it is */
	{
		char path[PATH_MAX + 16];
		FILE *f;
		snprintf(path, sizeof(path), "%s/updates", r->root);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		tu_git(r, "git update-ref --stdin <'%s'", path);
		for (size_t i = 0; i < res.upd.nupdates; i++)
			assert_ref_is(r, res.upd.updates[i].ref, &res.upd.updates[i].new_id);
	}
	free(text);
	rq_replay_result_free(&res);
	/* no updates: an empty string */
	memset(&res, 0, sizeof(res));
	text = rq_refs_format_updates(&res.upd);
	assert_non_null(text);
	assert_string_equal(text, "");
	free(text);
	/* freeing an empty result, or NULL, is fine */
	rq_replay_result_free(&res);
	rq_replay_result_free(NULL);
}

/* Five independent branches p0..p4 of three commits each, from main~1. */
static void make_parallel_branches(tu_repo *r)
{
	for (int b = 0; b < 5; b++)
		tu_git(r, "git branch p%d main~1", b);
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 5; b++) {
			char file[16], msg[16], content[16];
			snprintf(file, sizeof(file), "p%d.txt", b);
			snprintf(msg, sizeof(msg), "p%d-%d", b, i);
			snprintf(content, sizeof(content), "%d\n", i);
			tu_git(r, "git checkout -q p%d", b);
			tu_commit_file(r, file, content, msg);
		}
	tu_git(r, "git checkout -q main");
	setenv("GIT_COMMITTER_DATE", RQ_DATE, 1);
}

static void assert_same_updates(const rq_replay_result *a, const rq_replay_result *b)
{
	assert_int_equal(a->upd.nupdates, b->upd.nupdates);
	for (size_t i = 0; i < a->upd.nupdates; i++) {
		assert_string_equal(a->upd.updates[i].ref, b->upd.updates[i].ref);
		assert_oid_eq(&a->upd.updates[i].old_id, &b->upd.updates[i].old_id);
		assert_oid_eq(&a->upd.updates[i].new_id, &b->upd.updates[i].new_id);
	}
}

static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* jobs > 1: the same updates as a sequential run. */
static void test_parallel(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..p0", "main..p1", "main..p2", "main..p3", "main..p4"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	rq_replay_result seq, par;
	rq_oid want;

	make_parallel_branches(r);
	o.jobs = 1;
	run(r, &o, &seq, 0);
	assert_int_equal(seq.stats.commits, 15);
	assert_int_equal(seq.stats.parallel, 1);
	assert_int_equal(seq.upd.nupdates, 5);
	o.jobs = 4;
	run(r, &o, &par, 0);
	assert_no_children();
	assert_int_equal(par.stats.commits, 15);
	assert_int_equal(par.stats.picked, 15);
	assert_int_equal(par.stats.groups, 5);
	assert_int_equal(par.stats.parallel, 4);
	assert_same_updates(&seq, &par);
	assert_string_equal(seq.upd.reflog_msg, par.upd.reflog_msg);
	/* more jobs than groups */
	rq_replay_result_free(&par);
	o.jobs = 64;
	run(r, &o, &par, 0);
	assert_no_children();
	assert_int_equal(par.stats.parallel, 5);
	assert_same_updates(&seq, &par);
	rq_replay_result_free(&par);
	/* and git agrees */
	oracle_cherry_pick(r, "main", "main..p3", &want);
	for (size_t i = 0; i < seq.upd.nupdates; i++)
		if (!strcmp(seq.upd.updates[i].ref, "refs/heads/p3"))
			assert_oid_eq(&seq.upd.updates[i].new_id, &want);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	rq_replay_result_free(&seq);
}

/* jobs > 1: the same conflict, or the same error, as a sequential run. */
static void test_parallel_conflict(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..p0", "main..p1", "main..conf", "main..p2", "main..p3"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	rq_replay_result seq, par;
	rq_error e1, e2;

	make_parallel_branches(r);
	o.jobs = 1;
	run(r, &o, &seq, 1);
	o.jobs = 4;
	run(r, &o, &par, 1);
	assert_no_children();
	assert_oid_eq(&seq.conflict_commit, &par.conflict_commit);
	assert_int_equal(seq.conflicts.n, par.conflicts.n);
	for (size_t i = 0; i < seq.conflicts.n; i++) {
		assert_string_equal(seq.conflicts.v[i].path, par.conflicts.v[i].path);
		assert_int_equal(seq.conflicts.v[i].kind, par.conflicts.v[i].kind);
	}
	assert_int_equal(par.upd.nupdates, 0);
	rq_replay_result_free(&seq);
	rq_replay_result_free(&par);

	/* an error in one group */
	{
		const char *revs2[] = {"main..p0", "main..p1", "main..dupe", "main..p2"};
		o = make_opts(RQ_MODE_ONTO, "main", revs2, 4);
		o.empty = RQ_EMPTY_ABORT;
		o.jobs = 1;
		rq_error_clear(&e1);
		assert_int_equal(rq_replay_run(tu_repo_open(r), &o, &seq, &e1), -1);
		o.jobs = 3;
		rq_error_clear(&e2);
		assert_int_equal(rq_replay_run(tu_repo_open(r), &o, &par, &e2), -1);
		assert_no_children();
		tu_assert_no_tmpdir(r);
		assert_int_equal(e1.code, RQ_E_EMPTY_COMMIT);
		assert_int_equal(e2.code, RQ_E_EMPTY_COMMIT);
		assert_string_equal(e1.msg, e2.msg);
		assert_int_equal(par.upd.nupdates, 0);
		rq_replay_result_free(&seq);
		rq_replay_result_free(&par);
	}
}

/* In a forked worker: one revision names another branch, as if a ref had
 * moved between the parent's and the worker's reads. */
static void move_a_ref(unsigned worker, void *arg)
{
	(void)worker;
	memcpy(arg, "main..p3", 9);
}

/* A worker that resolved the revisions differently takes no group: the
 * parent replays everything, with the same result as a sequential run. */
static void test_parallel_child_disagrees(void **state)
{
	tu_repo *r = *state;
	char last[16] = "main..p4";
	const char *revs[] = {"main..p0", "main..p1", "main..p2", "main..p3", last};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	rq_replay_result seq, par;

	make_parallel_branches(r);
	o.jobs = 1;
	run(r, &o, &seq, 0);
	o.jobs = 3;
	o.child_hook = move_a_ref;
	o.child_hook_arg = last;
	run(r, &o, &par, 0);
	assert_no_children();
	tu_assert_no_tmpdir(r);
	assert_string_equal(last, "main..p4"); /* the parent's own copy */
	assert_int_equal(par.stats.commits, 15);
	assert_int_equal(par.stats.picked, 15);
	assert_same_updates(&seq, &par);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	rq_replay_result_free(&seq);
	rq_replay_result_free(&par);
}

/* In a forked worker: files can no longer grow (as on a full disk), so its
 * part file cannot be written. */
static void no_file_writes(unsigned worker, void *arg)
{
	struct rlimit rl = {0, 0};
	(void)worker;
	(void)arg;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &rl);
}

/* A worker that cannot hand its objects over fails the replay with an I/O
 * error and leaves nothing behind; when a pick conflicts too, the conflict
 * is the result, as with --jobs=1. */
static void test_parallel_child_cannot_write(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..p0", "main..p1", "main..p2", "main..p3", "main..p4"};
	const char *crevs[] = {"main..p0", "main..p1", "main..conf", "main..p2", "main..p3"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	rq_replay_result seq, par;
	rq_error e;

	make_parallel_branches(r);
	o.jobs = 2;
	o.child_hook = no_file_writes;
	rq_error_clear(&e);
	assert_int_equal(rq_replay_run(tu_repo_open(r), &o, &par, &e), -1);
	assert_int_equal(e.code, RQ_E_IO);
	assert_int_equal(par.upd.nupdates, 0);
	assert_no_children();
	tu_assert_no_tmpdir(r);
	rq_replay_result_free(&par);

	o = make_opts(RQ_MODE_ONTO, "main", crevs, 5);
	o.jobs = 1;
	run(r, &o, &seq, 1);
	for (int j = 2; j <= 4; j++) {
		o.jobs = j;
		o.child_hook = no_file_writes;
		run(r, &o, &par, 1);
		assert_no_children();
		tu_assert_no_tmpdir(r);
		assert_oid_eq(&seq.conflict_commit, &par.conflict_commit);
		assert_int_equal(seq.conflicts.n, par.conflicts.n);
		rq_replay_result_free(&par);
	}
	rq_replay_result_free(&seq);
}

/* A cancel flag already set stops the replay before its first pick. */
static void test_cancel(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..p0", "main..p1", "main..p2", "main..p3", "main..p4"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	volatile int cancel = 1;

	make_parallel_branches(r);
	o.cancel = &cancel;
	o.jobs = 1;
	run_fails(r, &o, RQ_E_INTERRUPTED);
	o.jobs = 4;
	run_fails(r, &o, RQ_E_INTERRUPTED);
	assert_no_children();
	/* cleared: it runs */
	cancel = 0;
	{
		rq_replay_result res;
		run(r, &o, &res, 0);
		assert_int_equal(res.upd.nupdates, 5);
		rq_replay_result_free(&res);
	}
}

/* The outcome of ref name in a keep-going result (fails when absent). */
static const rq_ref_outcome *outcome_of(const rq_replay_result *res, const char *name)
{
	for (size_t i = 0; i < res->nrefs; i++)
		if (!strcmp(res->refs[i].ref, name))
			return &res->refs[i];
	fail_msg("no outcome for %s", name);
	return NULL;
}

static void assert_same_outcome(const rq_replay_result *a, const rq_replay_result *b)
{
	assert_same_updates(a, b);
	assert_int_equal(a->nrefs, b->nrefs);
	assert_int_equal(a->nfailed, b->nfailed);
	for (size_t i = 0; i < a->nrefs; i++) {
		assert_string_equal(a->refs[i].ref, b->refs[i].ref);
		assert_int_equal(a->refs[i].status, b->refs[i].status);
		assert_int_equal(a->refs[i].failed, b->refs[i].failed);
	}
	for (size_t k = 0; k < a->nfailed; k++) {
		assert_oid_eq(&a->failed[k].commit, &b->failed[k].commit);
		assert_int_equal(a->failed[k].conflicts.n, b->failed[k].conflicts.n);
	}
}

/* --keep-going: the clean branches replay, the conflicting one and the one
 * stacked on it are reported; jobs=4 gives the same outcome. */
static void test_keep_going(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..p0", "main..conf", "main..cs", "main..p1", "main..s2"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 5);
	rq_replay_result seq, par;
	const rq_ref_outcome *ro;
	rq_oid k2, want;

	make_parallel_branches(r);
	tu_git(r, "git checkout -q -b cs conf && echo c >cs.txt && git add cs.txt && "
		  "git commit -q -m cs && git checkout -q main");
	tu_rev_oid(r, "conf", &k2);
	o.keep_going = 1;
	o.jobs = 1;
	run(r, &o, &seq, 1);
	assert_int_equal(seq.keep_going, 1);
	assert_int_equal(seq.nfailed, 1);
	assert_oid_eq(&seq.failed[0].commit, &k2);
	assert_oid_eq(&seq.conflict_commit, &k2); /* the first, in the old field too */
	assert_string_equal(seq.conflicts.v[0].path, "a.txt");
	assert_int_equal(seq.upd.nupdates, 3); /* p0, p1, s2 (s1 is not named) */
	ro = outcome_of(&seq, "refs/heads/conf");
	assert_int_equal(ro->status, RQ_REF_CONFLICT);
	ro = outcome_of(&seq, "refs/heads/cs");
	assert_int_equal(ro->status, RQ_REF_BLOCKED);
	assert_string_equal(ro->blocked_by, "refs/heads/conf");
	assert_true(rq_oid_is_zero(&ro->new_id));
	ro = outcome_of(&seq, "refs/heads/p1");
	assert_int_equal(ro->status, RQ_REF_OK);
	oracle_cherry_pick(r, "main", "main..p1", &want);
	assert_oid_eq(&ro->new_id, &want);
	o.jobs = 4;
	run(r, &o, &par, 1);
	assert_no_children();
	assert_true(par.stats.parallel > 1);
	assert_same_outcome(&seq, &par);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	rq_replay_result_free(&seq);
	rq_replay_result_free(&par);
}

/* --keep-going without a conflict is the plain replay; with one branch
 * (--advance) its ref is the conflict; an error still fails the replay. */
static void test_keep_going_modes(void **state)
{
	tu_repo *r = *state;
	const char *revs[] = {"main..topic", "main..topic2"}, *one[] = {"main..conf"},
		   *dupe[] = {"main..p0", "main..dupe"};
	rq_replay_opts o = make_opts(RQ_MODE_ONTO, "main", revs, 2);
	rq_replay_result a, b;

	run(r, &o, &a, 0);
	o.keep_going = 1;
	run(r, &o, &b, 0);
	assert_same_updates(&a, &b);
	assert_int_equal(b.nrefs, 2);
	assert_int_equal(b.refs[0].status, RQ_REF_OK);
	rq_replay_result_free(&a);
	rq_replay_result_free(&b);
	o = make_opts(RQ_MODE_ADVANCE, "main", one, 1);
	o.keep_going = 1;
	run(r, &o, &a, 1);
	assert_int_equal(a.nrefs, 1);
	assert_string_equal(a.refs[0].ref, "refs/heads/main");
	assert_int_equal(a.refs[0].status, RQ_REF_CONFLICT);
	assert_int_equal(a.upd.nupdates, 0);
	rq_replay_result_free(&a);
	make_parallel_branches(r);
	o = make_opts(RQ_MODE_ONTO, "main", dupe, 2);
	o.keep_going = 1;
	o.empty = RQ_EMPTY_ABORT;
	run_fails(r, &o, RQ_E_EMPTY_COMMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_onto, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_onto_bare_same_ids, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_advance, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_revert, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_conflicts, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_rename, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_empty_modes, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_contained, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_apply, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_apply_ref_moved, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_ref_option, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_format_updates, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_parallel, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_parallel_conflict, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_parallel_child_disagrees, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_parallel_child_cannot_write, setup,
					    tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_cancel, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_keep_going, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_keep_going_modes, setup, tu_copy_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
