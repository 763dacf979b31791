/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_reffile (one loose ref and its reflog entries, written by replayq):
 * the ref, its reflog and HEAD's byte for byte as `git update-ref` writes
 * them (an existing ref HEAD points at, a new ref deep in new
 * directories, a ref only in packed-refs); the lock (another's lock, a
 * lock that is a link, a link on the way, an empty or a non-empty
 * directory where the ref goes); the entry's rules; SHA-256 ids at their
 * width; which refs get a reflog; core.fsync as git parses it.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_reffile.h"
#include "rq_rttx.h"

static tu_repo *tmpl;

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0 || !(tmpl = tu_repo_new(0)))
		return -1;
	tu_commit_file(tmpl, "a", "a\n", "one");
	tu_git(tmpl, "git branch side");
	tu_commit_file(tmpl, "a", "b\n", "two");
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

/* The whole file path (NULL when missing), its size in *len. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX * 2];
	char *out;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return rq_fs_read_regular(path, 0, 1 << 20, &out, len) == 1 ? out : NULL;
}

/* name under a and b: the same bytes, or missing in both. */
static void assert_same_file(const char *a, const char *b, const char *name)
{
	size_t la = 0, lb = 0;
	char *x = slurp(a, name, &la), *y = slurp(b, name, &lb);

	if (!x != !y || la != lb || (x && memcmp(x, y, la)))
		fail_msg("%s differs:\n[%.*s]\n[%.*s]", name, (int)la, x ? x : "", (int)lb,
			 y ? y : "");
	free(x);
	free(y);
}

/* Fail unless the command's output (trimmed) is want. */
static void assert_output(tu_repo *r, const char *cmd, const char *want)
{
	char *got = tu_capture(r, "%s", cmd);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static rq_ident who(void)
{
	rq_ident w = {TU_COMMITTER_NAME, TU_COMMITTER_EMAIL, 1700000123, 90};
	return w;
}

/* What rq_refs does for one update of r: lock, write, reflog entries (the
 * ref's, HEAD's when HEAD points at it), rename. */
static void rq_update(tu_repo *r, const char *ref, const char *oldhex, const char *newhex,
		      const char *msg)
{
	int base = rq_fs_opendir(r->gitdir);
	rq_reffile f = RQ_REFFILE_INIT;
	rq_ident w = who();
	rq_oid o, n;
	rq_error err;
	char *entry, *head;
	size_t len;

	assert_true(base >= 0);
	assert_int_equal(rq_oid_parse(&o, &rq_oid_sha1, oldhex, strlen(oldhex)), 0);
	assert_int_equal(rq_oid_parse(&n, &rq_oid_sha1, newhex, strlen(newhex)), 0);
	assert_int_equal(rq_reffile_lock(&f, base, ref, &err), 0);
	assert_int_equal(rq_reffile_write(&f, &n, &rq_oid_sha1, 1, &err), 0);
	assert_int_equal(rq_reffile_log_entry(&entry, &len, &o, &n, &rq_oid_sha1, &w, msg, &err),
			 0);
	assert_int_equal(rq_reffile_log_append(base, ref, entry, len, 0, &err), 0);
	if ((head = rq_reffile_head_target(base)) && !strcmp(head, ref))
		assert_int_equal(rq_reffile_log_append(base, "HEAD", entry, len, 0, &err), 0);
	assert_int_equal(rq_reffile_commit(&f, 1, &err), 0);
	rq_reffile_release(&f);
	free(head);
	free(entry);
	close(base);
}

/* The same update by git update-ref in g and by rq_update in r; then the
 * ref, its reflog and HEAD's compared byte for byte. */
static void both(tu_repo *g, tu_repo *r, const char *ref, const char *old, const char *new_id)
{
	const char *msg = "replay --onto 0123abc";
	char log[PATH_MAX + 32];

	tu_git(g, "GIT_COMMITTER_DATE='1700000123 +0130' git update-ref -m '%s' %s %s %s", msg, ref,
	       new_id, old);
	rq_update(r, ref, old, new_id, msg);
	snprintf(log, sizeof(log), "%s/logs/%s", r->gitdir, ref);
	assert_true(tu_exists(log)); /* (compared below: not missing in both) */
	snprintf(log, sizeof(log), "logs/%s", ref);
	assert_same_file(g->gitdir, r->gitdir, log);
	assert_same_file(g->gitdir, r->gitdir, "logs/HEAD");
	assert_same_file(g->gitdir, r->gitdir, "packed-refs");
	assert_same_file(g->gitdir, r->gitdir, ref);
	snprintf(log, sizeof(log), "%s/refs/heads", r->gitdir);
	assert_int_equal(tu_count_entries(log, "", ".lock"), 0);
}

static void test_same_as_git(void **state)
{
	tu_repo *r = *state, *g = tu_repo_copy(r);
	char main_hex[41], side_hex[41];
	git_oid id;
	char *packed;

	tu_rev_parse(r, "main", &id);
	snprintf(main_hex, sizeof(main_hex), "%s", tu_hex(&id));
	tu_rev_parse(r, "side", &id);
	snprintf(side_hex, sizeof(side_hex), "%s", tu_hex(&id));
	/* HEAD points at main: main's reflog and HEAD's */
	both(g, r, "refs/heads/main", main_hex, side_hex);
	/* a new ref, its directories and reflog new too */
	both(g, r, "refs/heads/new/deep/er", "0000000000000000000000000000000000000000", main_hex);
	/* a ref only in packed-refs: its loose file, packed-refs left as it was */
	tu_git(g, "git pack-refs --all");
	tu_git(r, "git pack-refs --all");
	packed = tu_capture(r, "cat .git/packed-refs");
	both(g, r, "refs/heads/side", side_hex, main_hex);
	assert_output(r, "cat .git/packed-refs", packed);
	free(packed);
	assert_int_equal(tu_run(r, "git fsck --no-progress 2>&1 | grep -q ."), 1);
	tu_repo_free(g);
}

/* Another's lock, a lock that is a link, a link on the way: nothing taken,
 * nothing written, the lock and the link's target left alone. */
static void test_lock_refused(void **state)
{
	tu_repo *r = *state;
	rq_reffile f = RQ_REFFILE_INIT;
	int base = rq_fs_opendir(r->gitdir);
	rq_error err;
	char path[PATH_MAX * 2];

	tu_git(r, "echo theirs >.git/refs/heads/main.lock");
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/main", &err), -1);
	assert_int_equal(err.code, RQ_E_REF_LOCKED);
	rq_reffile_release(&f);
	assert_output(r, "cat .git/refs/heads/main.lock", "theirs");
	/* a lock that is a link to a file outside: taken as another's */
	tu_git(r, "echo outside >../out && ln -s \"$PWD/../out\" .git/refs/heads/side.lock");
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/side", &err), -1);
	assert_int_equal(err.code, RQ_E_REF_LOCKED);
	rq_reffile_release(&f);
	assert_output(r, "cat ../out", "outside");
	/* a link on the way to the ref: refused, nothing made behind it */
	tu_git(r, "mkdir ../elsewhere && ln -s \"$PWD/../elsewhere\" .git/refs/heads/via");
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/via/x", &err), -1);
	assert_int_equal(err.code, RQ_E_IO);
	rq_reffile_release(&f);
	snprintf(path, sizeof(path), "%s/../elsewhere", r->path);
	assert_int_equal(tu_count_entries(path, "", ""), 0);
	close(base);
}

/* An empty directory hierarchy where the ref goes is removed (a deleted
 * ref's leftovers); a non-empty one stays and the lock is refused. A lock
 * not committed is removed. */
static void test_lock_directories(void **state)
{
	tu_repo *r = *state;
	rq_reffile f = RQ_REFFILE_INIT;
	int base = rq_fs_opendir(r->gitdir);
	rq_error err;
	rq_oid id;

	rq_oid_from_raw(&id, &rq_oid_sha1, (const unsigned char *)"0123456789abcdefghij");
	tu_git(r, "mkdir -p .git/refs/heads/gone/a/b .git/refs/heads/full/a");
	tu_git(r, "echo x >.git/refs/heads/full/a/f");
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/gone", &err), 0);
	assert_int_equal(rq_reffile_write(&f, &id, &rq_oid_sha1, 0, &err), 0);
	assert_int_equal(rq_reffile_commit(&f, 0, &err), 0);
	rq_reffile_release(&f);
	assert_output(r, "cat .git/refs/heads/gone", "303132333435363738396162636465666768696a");
	/* a non-empty directory: no lock taken (nothing to fail after it) */
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/full", &err), -1);
	assert_int_equal(err.code, RQ_E_IO);
	assert_non_null(strstr(err.msg, "non-empty directory 'refs/heads/full' blocking"));
	rq_reffile_release(&f);
	assert_int_equal(tu_run(r, "test -f .git/refs/heads/full/a/f"), 0);
	assert_int_equal(tu_run(r, "test -e .git/refs/heads/full.lock"), 1);
	/* released without a commit: no lock left, the ref as it was */
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/main", &err), 0);
	assert_int_equal(rq_reffile_write(&f, &id, &rq_oid_sha1, 0, &err), 0);
	rq_reffile_release(&f);
	rq_reffile_release(&f);
	assert_int_equal(tu_run(r, "test -e .git/refs/heads/main.lock"), 1);
	assert_int_equal(tu_run(r, "git rev-parse --verify -q main >/dev/null"), 0);
	close(base);
}

static void assert_entry(const char *msg, const rq_ident *w, const char *want)
{
	rq_oid o, n;
	rq_error err;
	char *e;
	size_t len;

	memset(&o, 0, sizeof(o));
	rq_oid_from_raw(&n, &rq_oid_sha1,
			(const unsigned char *)"\x01\x02\x03\x04\x05\x06\x07"
					       "\x08\x09\x0a\x0b\x0c\x0d\x0e"
					       "\x0f\x10\x11\x12\x13\x14");
	assert_int_equal(rq_reffile_log_entry(&e, &len, &o, &n, &rq_oid_sha1, w, msg, &err), 0);
	assert_int_equal(len, strlen(e));
	assert_string_equal(e, want);
	free(e);
}

/* The entry's bytes as libgit2 wrote them: the zone's sign, no tab
 * without a message, newlines in the message made spaces, trailing white
 * space dropped, name and e-mail trimmed; an identity with '<' or empty
 * refused. */
static void test_log_entry(void **state)
{
	rq_ident w = {" Bot ", "bot@example.com", 1800000000, -90}, bad = w;
	const char *ids = "0000000000000000000000000000000000000000 "
			  "0102030405060708090a0b0c0d0e0f1011121314";
	char want[400];
	rq_error err;
	char *e;
	size_t len;
	rq_oid z;

	(void)state;
	snprintf(want, sizeof(want), "%s Bot <bot@example.com> 1800000000 -0130\tgo\n", ids);
	assert_entry("go", &w, want);
	snprintf(want, sizeof(want), "%s Bot <bot@example.com> 1800000000 -0130\n", ids);
	assert_entry(NULL, &w, want);
	w.tz = 0;
	snprintf(want, sizeof(want), "%s Bot <bot@example.com> 1800000000 +0000\ta b c\n", ids);
	assert_entry("a\nb\nc \n\n", &w, want);
	memset(&z, 0, sizeof(z));
	snprintf(bad.name, sizeof(bad.name), "a<b");
	assert_int_equal(rq_reffile_log_entry(&e, &len, &z, &z, &rq_oid_sha1, &bad, "m", &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	snprintf(bad.name, sizeof(bad.name), "  ");
	assert_int_equal(rq_reffile_log_entry(&e, &len, &z, &z, &rq_oid_sha1, &bad, "m", &err), -1);
	assert_null(e);
}

/* SHA-256: the lock holds 64 digits and a newline, the entry two 64-digit
 * ids (what libgit2 1.5 cannot write). */
static void test_sha256_width(void **state)
{
	tu_repo *r = *state;
	rq_reffile f = RQ_REFFILE_INIT;
	int base = rq_fs_opendir(r->gitdir);
	const char *hex = "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4";
	rq_ident w = who();
	rq_error err;
	rq_oid id, z;
	char *e, *got;
	size_t len;

	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, hex, 64), 0);
	memset(&z, 0, sizeof(z));
	assert_int_equal(rq_reffile_lock(&f, base, "refs/heads/wide", &err), 0);
	assert_int_equal(rq_reffile_write(&f, &id, &rq_oid_sha256, 0, &err), 0);
	assert_int_equal(rq_reffile_commit(&f, 0, &err), 0);
	rq_reffile_release(&f);
	got = slurp(r->gitdir, "refs/heads/wide", &len);
	assert_int_equal(len, 65);
	assert_memory_equal(got, hex, 64);
	assert_int_equal(got[64], '\n');
	free(got);
	assert_int_equal(rq_reffile_log_entry(&e, &len, &z, &id, &rq_oid_sha256, &w, "m", &err), 0);
	assert_int_equal(strspn(e, "0"), 64);
	assert_memory_equal(e + 65, hex, 64);
	assert_int_equal(e[129], ' ');
	free(e);
	close(base);
}

/* Which updates get a reflog entry (core.logAllRefUpdates, libgit2's
 * rules), whether a reflog exists, what HEAD points at. */
static void test_which_reflogs(void **state)
{
	tu_repo *r = *state;
	int base = rq_fs_opendir(r->gitdir);
	char *head;

	assert_true(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "refs/heads/x", 0));
	assert_true(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "refs/remotes/o/x", 0));
	assert_true(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "refs/notes/x", 0));
	assert_true(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "HEAD", 0));
	assert_false(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "refs/tags/x", 0));
	assert_true(rq_reffile_logged(RQ_RTTX_LOG_NORMAL, "refs/tags/x", 1));
	assert_true(rq_reffile_logged(RQ_RTTX_LOG_ALWAYS, "refs/tags/x", 0));
	assert_false(rq_reffile_logged(RQ_RTTX_LOG_NONE, "refs/heads/x", 1));
	assert_true(rq_reffile_log_own("HEAD"));
	assert_false(rq_reffile_log_own("refs/bisect/x"));
	assert_true(rq_reffile_log_exists(base, "refs/heads/main"));
	assert_false(rq_reffile_log_exists(base, "refs/heads/nothere"));
	tu_git(r, "mkdir -p .git/logs/refs/heads/dir");
	assert_false(rq_reffile_log_exists(base, "refs/heads/dir"));
	assert_non_null(head = rq_reffile_head_target(base));
	assert_string_equal(head, "refs/heads/main");
	free(head);
	tu_git(r, "git checkout -q --detach");
	assert_null(rq_reffile_head_target(base));
	close(base);
}

/* core.fsync as git parses it: refs are in when a component that holds
 * them is named (by a prefix of its name), whatever is taken away. */
static void test_fsync_value(void **state)
{
	(void)state;
	assert_false(rq_reffile_fsync_value(NULL));
	assert_false(rq_reffile_fsync_value(""));
	assert_false(rq_reffile_fsync_value("none"));
	assert_false(rq_reffile_fsync_value("objects,pack,index"));
	assert_false(rq_reffile_fsync_value("-reference"));
	assert_true(rq_reffile_fsync_value("reference"));
	assert_true(rq_reffile_fsync_value("ref"));
	assert_true(rq_reffile_fsync_value("pack, committed"));
	assert_true(rq_reffile_fsync_value("all,-reference"));
	assert_true(rq_reffile_fsync_value("-reference,reference"));
	assert_true(rq_reffile_fsync_value("added"));
	assert_true(rq_reffile_fsync_value("reference,none"));
	assert_false(rq_reffile_fsync_value("pack,-,reference"));
	assert_false(rq_reffile_fsync_value("reference-x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_same_as_git, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_lock_refused, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_lock_directories, setup, tu_copy_teardown),
	    cmocka_unit_test(test_log_entry),
	    cmocka_unit_test_setup_teardown(test_sha256_width, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_which_reflogs, setup, tu_copy_teardown),
	    cmocka_unit_test(test_fsync_value),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
