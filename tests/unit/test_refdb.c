/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb (refs and reflogs of either backend, read by replayq): in
 * repositories made by upstream git 2.55 at both object formats and with
 * both ref backends, the iteration (names, ids, symbolic targets, peeled
 * tags; a prefix and a glob), the resolution of HEAD and a symbolic chain,
 * and HEAD's and a branch's reflog are what git itself says
 * (for-each-ref, rev-parse, log -g). A loose ref of the other width is a
 * broken ref; libgit2's ref database with the tripwire fails by name. The
 * upstream-git ones are skipped with a notice without upstream git (RQ_UPSTREAM_GIT,
 * or /work/shared/upstream-git/git).
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_buf.h"
#include "rq_refdb.h"

static char g_up[PATH_MAX]; /* upstream git, "" when absent */

static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};

	if (tu_group_setup(state) < 0)
		return -1;
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], g_up) && access(g_up, X_OK))
			g_up[0] = '\0';
	if (!g_up[0])
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the rq_refdb tests are skipped\n");
	return 0;
}

/* A repository of upstream git in format fmt with refs in refs (files or
 * reftable): two branches, a symbolic ref, an annotated and a light tag,
 * some refs packed, reflogs from commits, a checkout and a reset. */
static tu_repo *made(const char *fmt, const char *refs)
{
	tu_repo *r = tu_repo_new(0);
	const char *g = g_up;

	assert_non_null(r);
	tu_git(r,
	       "rm -rf .git && '%s' init -q -b main --object-format=%s --ref-format=%s . && "
	       "'%s' config maintenance.auto false && echo a >a && '%s' add a && "
	       "'%s' commit -q -m one && '%s' tag -a -m t v1 && '%s' tag light && "
	       "'%s' branch side && '%s' pack-refs --all && echo b >a && '%s' commit -q -am two && "
	       "'%s' checkout -q side && '%s' checkout -q main && '%s' reset -q --hard HEAD~ && "
	       "'%s' symbolic-ref refs/heads/link refs/heads/side && '%s' commit -q --allow-empty "
	       "-m 'three	tabbed'",
	       g, fmt, refs, g, g, g, g, g, g, g, g, g, g, g, g, g);
	return r;
}

static rq_refdb *open_db(tu_repo *r, const rq_oid_algo *algo, int reftable)
{
	rq_refdb *db;
	rq_error err;

	if (rq_refdb_open_dirs(&db, r->gitdir, NULL, algo, reftable, &err) < 0)
		fail_msg("rq_refdb_open_dirs: %s", err.msg);
	return db;
}

typedef struct listing {
	rq_refdb *db;
	rq_buf out;
} listing;

/* "<name> <id> <peeled or nothing>" as for-each-ref's format below. */
static int list_one(const rq_refdb_ref *ref, void *arg)
{
	listing *l = arg;
	char hex[RQ_OID_MAX_HEXSZ + 1], peeled[RQ_OID_MAX_HEXSZ + 1] = "";
	rq_oid id = ref->id;
	rq_error err;

	if (ref->target)
		assert_int_equal(rq_refdb_resolve(l->db, ref->name, &id, NULL, &err), 0);
	if (ref->peeled_known)
		rq_oid_fmt(peeled, &ref->peeled, rq_refdb_algo(l->db));
	rq_buf_str(&l->out, ref->name);
	rq_buf_str(&l->out, " ");
	rq_buf_str(&l->out, rq_oid_fmt(hex, &id, rq_refdb_algo(l->db)));
	rq_buf_str(&l->out, " ");
	rq_buf_str(&l->out, peeled);
	rq_buf_str(&l->out, "\n");
	return 0;
}

/* rq_refdb_each's listing against for-each-ref's (pattern as git takes
 * it; peeled ids only where rq_refdb knows them: compared when known). */
static void same_list(tu_repo *r, rq_refdb *db, const char *prefix, const char *glob,
		      const char *pattern)
{
	listing l = {.db = db};
	rq_error err;
	char *want = tu_capture(r,
				"'%s' for-each-ref --format='%%(refname) %%(objectname) "
				"%%(*objectname)' %s",
				g_up, pattern);

	assert_int_equal(rq_refdb_each(db, prefix, glob, list_one, &l, &err), 0);
	assert_non_null(want);
	/* the peeled column: git always has it for tags; drop what we lack */
	char *got = l.out.p ? (char *)l.out.p : "";
	size_t n = strlen(got);
	while (n && got[n - 1] == '\n')
		got[--n] = '\0';
	for (char *a = want, *b = got; *a || *b;) {
		char *ea = strchrnul(a, '\n'), *eb = strchrnul(b, '\n');
		int same =
		    (ea - a == eb - b && !memcmp(a, b, (size_t)(ea - a))) ||
		    (eb > b && eb[-1] == ' ' && !strncmp(a, b, (size_t)(eb - b))) ||
		    (ea - a == eb - b - 1 && eb[-1] == ' ' && !strncmp(a, b, (size_t)(ea - a)));
		if (!same)
			fail_msg("git: %.*s\nrq_refdb: %.*s\nall: %s", (int)(ea - a), a,
				 (int)(eb - b), b, got);
		a = *ea ? ea + 1 : ea;
		b = *eb ? eb + 1 : eb;
	}
	free(want);
	free(l.out.p);
}

/* "<new id> <message>" lines of a reflog, newest first. */
static int log_one(const rq_refdb_log *e, void *arg)
{
	listing *l = arg;
	char hex[RQ_OID_MAX_HEXSZ + 1];

	rq_buf_str(&l->out, rq_oid_fmt(hex, &e->new_id, rq_refdb_algo(l->db)));
	rq_buf_str(&l->out, " ");
	rq_buf_str(&l->out, e->message ? e->message : "");
	rq_buf_str(&l->out, "\n");
	assert_true(e->time > 1000000000 && e->email && strchr(e->email, '@'));
	return 0;
}

static void same_log(tu_repo *r, rq_refdb *db, const char *ref)
{
	listing l = {.db = db};
	rq_error err;
	char *want = tu_capture(r, "'%s' log -g --format='%%H %%gs' %s", g_up, ref);

	assert_int_equal(rq_refdb_reflog(db, ref, log_one, &l, &err), 0);
	assert_non_null(l.out.p);
	l.out.p[strlen(l.out.p) - 1] = '\0';
	assert_string_equal(l.out.p, want);
	free(want);
	free(l.out.p);
}

/* A linked worktree: its own HEAD and refs/worktree/ beside the shared
 * refs, as git in the worktree lists and resolves them. */
static void linked(tu_repo *r, const rq_oid_algo *algo, int reftable)
{
	char own[PATH_MAX + 32], wt[PATH_MAX + 8], hex[RQ_OID_MAX_HEXSZ + 1], *want;
	rq_refdb *db;
	rq_oid id;
	rq_error err;

	snprintf(wt, sizeof(wt), "%s/../wt", r->path);
	snprintf(own, sizeof(own), "%s/worktrees/wt", r->gitdir);
	/* (worktree add runs "git": upstream's, which knows reftables) */
	tu_git(r,
	       "PATH=\"$(dirname '%s'):$PATH\" && git worktree add -q -b lw '%s' side && "
	       "cd '%s' && git update-ref refs/worktree/mine HEAD~0",
	       g_up, wt, wt);
	if (rq_refdb_open_dirs(&db, r->gitdir, own, algo, reftable, &err) < 0)
		fail_msg("rq_refdb_open_dirs: %s", err.msg);
	want = tu_capture(r,
			  "cd '%s' && '%s' for-each-ref --format='%%(refname) %%(objectname)' "
			  "refs/worktree/",
			  wt, g_up);
	listing l = {.db = db};
	assert_int_equal(rq_refdb_each(db, "refs/worktree/", NULL, list_one, &l, &err), 0);
	assert_non_null(l.out.p);
	l.out.p[strlen(l.out.p) - 2] = '\0'; /* the empty peeled column */
	assert_string_equal(l.out.p, want);
	free(l.out.p);
	free(want);
	assert_int_equal(rq_refdb_resolve(db, "HEAD", &id, NULL, &err), RQ_REFDB_FOUND);
	want = tu_capture(r, "cd '%s' && '%s' rev-parse HEAD", wt, g_up);
	assert_string_equal(rq_oid_fmt(hex, &id, algo), want);
	free(want);
	rq_refdb_free(db);
}

static void check(const char *fmt, const char *refs)
{
	const rq_oid_algo *algo = strcmp(fmt, "sha1") ? &rq_oid_sha256 : &rq_oid_sha1;
	int reftable = !strcmp(refs, "reftable");
	tu_repo *r;
	rq_refdb *db;
	rq_oid id;
	char *full, hex[RQ_OID_MAX_HEXSZ + 1], *want;
	rq_error err;

	if (!g_up[0])
		skip();
	r = made(fmt, refs);
	db = open_db(r, algo, reftable);
	same_list(r, db, NULL, NULL, "");
	same_list(r, db, "refs/tags/", NULL, "refs/tags/");
	same_list(r, db, NULL, "refs/heads/*", "'refs/heads/*'");
	assert_int_equal(rq_refdb_resolve(db, "HEAD", &id, &full, &err), RQ_REFDB_FOUND);
	assert_string_equal(full, "refs/heads/main");
	free(full);
	want = tu_capture(r, "'%s' rev-parse HEAD", g_up);
	assert_string_equal(rq_oid_fmt(hex, &id, algo), want);
	free(want);
	assert_int_equal(rq_refdb_resolve(db, "refs/heads/nope", &id, NULL, &err),
			 RQ_REFDB_MISSING);
	same_log(r, db, "HEAD");
	same_log(r, db, "refs/heads/main");
	rq_refdb_free(db);
	linked(r, algo, reftable);
	tu_repo_free(r);
}

static void test_sha1_files(void **state)
{
	(void)state;
	check("sha1", "files");
}

static void test_sha256_files(void **state)
{
	(void)state;
	check("sha256", "files");
}

static void test_sha1_reftable(void **state)
{
	(void)state;
	check("sha1", "reftable");
}

static void test_sha256_reftable(void **state)
{
	(void)state;
	check("sha256", "reftable");
}

/* A loose ref read at the other width is broken, not padded or cut. */
static void test_other_width(void **state)
{
	tu_repo *r;
	rq_refdb *db;
	rq_oid id;
	rq_error err;

	(void)state;
	if (!g_up[0])
		skip();
	r = made("sha256", "files");
	db = open_db(r, &rq_oid_sha1, 0);
	assert_int_equal(rq_refdb_resolve(db, "HEAD", &id, NULL, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	rq_refdb_free(db);
	tu_repo_free(r);
}

/* libgit2's ref database replaced by the tripwire: every read fails
 * naming the reason, none finds nothing. */
static void test_tripwire(void **state)
{
	tu_repo *r = tu_repo_new(0);
	git_repository *repo;
	git_reference *ref = NULL;
	git_reference_iterator *it = NULL;
	git_reflog *log = NULL;
	git_oid id;
	rq_error err;

	(void)state;
	tu_commit_file(r, "a", "a\n", "one");
	repo = tu_repo_open(r);
	assert_int_equal(git_reference_name_to_id(&id, repo, "HEAD"), 0);
	assert_int_equal(rq_refdb_tripwire_install(repo, &err), 0);
	assert_true(git_reference_lookup(&ref, repo, "refs/heads/main") < 0);
	assert_string_equal(git_error_last()->message, "libgit2 has no SHA-256");
	assert_true(git_reference_name_to_id(&id, repo, "HEAD") < 0);
	assert_int_not_equal(git_reference_name_to_id(&id, repo, "HEAD"), GIT_ENOTFOUND);
	assert_true(git_reference_iterator_new(&it, repo) < 0);
	assert_true(git_reflog_read(&log, repo, "HEAD") < 0);
	assert_string_equal(git_error_last()->message, "libgit2 has no SHA-256");
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha1_files),	  cmocka_unit_test(test_sha256_files),
	    cmocka_unit_test(test_sha1_reftable), cmocka_unit_test(test_sha256_reftable),
	    cmocka_unit_test(test_other_width),	  cmocka_unit_test(test_tripwire),
	};
	return cmocka_run_group_tests(tests, group_setup, tu_group_teardown);
}
