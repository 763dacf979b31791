/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reftables (rq_rtable, rq_rtblock, rq_rtwrite, rq_rtstack, rq_rttx,
 * rq_rtfile, rq_rtcompact, rq_refdb_rt, rq_repofmt) against upstream
 * git 2.55: tables git wrote are read (symbolic refs, annotated tags,
 * tombstones, several tables before a compaction, reflogs, 100,000 refs
 * through the index), tables replayq wrote are read back by git
 * (for-each-ref, reflog, refs verify, fsck), and damaged tables are clear
 * errors (a small fuzzer). Every git command here is upstream git (its
 * directory first on PATH); without it the tests that need it are
 * skipped, with a notice.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rq_oid.h"
#include "rq_refdb_rt.h"
#include "rq_refdb_rt_log.h"
#include "rq_repofmt.h"
#include "rq_rtable.h"
#include "rq_rtstack.h"
#include "rq_rtcompact.h"
#include "rq_rttx.h"
#include "rq_rtlock.h"
#include "rq_rtwrite.h"

static int have_ug;

/* Upstream git: RQ_UPSTREAM_GIT, ../shared/upstream-git/git beside the
 * source tree, or /work/shared/upstream-git/git. */
static int find_upstream(char *out, size_t size)
{
	const char *env = getenv("RQ_UPSTREAM_GIT");
	char here[PATH_MAX];
	const char *cand[3];

	snprintf(here, sizeof(here), "%s", __FILE__);
	*strrchr(here, '/') = '\0';
	strncat(here, "/../../../shared/upstream-git/git", sizeof(here) - strlen(here) - 1);
	cand[0] = env;
	cand[1] = here;
	cand[2] = "/work/shared/upstream-git/git";
	for (int i = 0; i < 3; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], out) && access(out, X_OK) == 0)
			return 1;
	(void)size;
	return 0;
}

/* Upstream git first on PATH (and for the commands it starts). */
static int group_setup(void **state)
{
	char ug[PATH_MAX], bin[PATH_MAX], link[PATH_MAX + 8], path[8192];

	if (tu_group_setup(state) < 0)
		return -1;
	if (!(have_ug = find_upstream(ug, sizeof(ug)))) {
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"reftable tests against it skipped\n");
		return 0;
	}
	snprintf(bin, sizeof(bin), "%s/ubin", tu_scratch());
	snprintf(link, sizeof(link), "%s/git", bin);
	if (mkdir(bin, 0755) < 0 || symlink(ug, link) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin");
	setenv("PATH", path, 1);
	setenv("GIT_EXEC_PATH", bin, 1);
	snprintf(bin, sizeof(bin), "%s/templates", tu_scratch());
	if (mkdir(bin, 0755) < 0)
		return -1;
	setenv("GIT_TEMPLATE_DIR", bin, 1); /* upstream git has none installed */
	return 0;
}

#define NEED_UPSTREAM()                                                                            \
	do {                                                                                       \
		if (!have_ug)                                                                      \
			skip();                                                                    \
	} while (0)

/* A non-bare reftable repository of the object format algo, branch
 * main, no commit. */
static tu_repo *rt_repo_at(const rq_oid_algo *algo)
{
	tu_repo *r = tu_repo_new(0);

	tu_git(r,
	       "rm -rf .git && git init -q -b main --template= --ref-format=reftable "
	       "--object-format=%s .",
	       algo->name);
	return r;
}

static tu_repo *rt_repo(void)
{
	return rt_repo_at(&rq_oid_sha1);
}

/* r's stack, read at the object format algo. */
static rq_rtstack *rt_stack_at(tu_repo *r, const rq_oid_algo *algo)
{
	char dir[PATH_MAX + 16];
	rq_rtstack *st;
	rq_error err;

	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	if (rq_rtstack_open(&st, dir, algo, &err) < 0)
		fail_msg("open stack: %s", err.msg);
	return st;
}

static rq_rtstack *rt_stack(tu_repo *r)
{
	return rt_stack_at(r, &rq_oid_sha1);
}

static git_repository *rt_open(tu_repo *r)
{
	rq_error err;

	if (!r->repo && rq_repofmt_open(&r->repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, &err) < 0)
		fail_msg("rq_repofmt_open: %s", err.msg);
	return r->repo;
}

/* The id git gives rev, of r's object format algo. */
static void oid_at(tu_repo *r, const rq_oid_algo *algo, const char *rev, rq_oid *out)
{
	char *hex = tu_capture(r, "git rev-parse --verify '%s'", rev);

	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(out, algo, hex, strlen(hex)), 0);
	free(hex);
}

static void oid_of(tu_repo *r, const char *rev, rq_oid *out)
{
	oid_at(r, &rq_oid_sha1, rev, out);
}

/* libgit2's id of rev (a SHA-1 repository). */
static void git_oid_of(tu_repo *r, const char *rev, git_oid *out)
{
	rq_oid id;

	oid_of(r, rev, &id);
	assert_int_equal(rq_oid_to_git(out, &id, &rq_oid_sha1), 0);
}

/* An id's hex digits (a static buffer: one at a time). */
static const char *hex_of(const rq_oid *id, const rq_oid_algo *algo)
{
	static char buf[RQ_OID_MAX_HEXSZ + 1];

	return rq_oid_fmt(buf, id, algo);
}

/* The stack's refs under refs/ as "<name> <id>" lines (git for-each-ref's
 * order and form; annotated tags give their own id). */
static char *stack_refs(rq_rtstack *st)
{
	rq_rtstack_iter *it;
	const rq_rtable_ref *r;
	rq_buf b = {0};
	rq_error err;
	int k;

	assert_int_equal(rq_rtstack_refs(&it, st, "refs/", &err), 0);
	while ((k = rq_rtstack_next_ref(it, &r, &err)) == 0) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rq_buf_str(&b, r->name);
		rq_buf_add(&b, " ", 1);
		rq_buf_str(&b, rq_oid_fmt(hex, &r->value, rq_rtstack_algo(st)));
		rq_buf_add(&b, "\n", 1);
	}
	assert_int_equal(k, 1);
	rq_rtstack_iter_free(it);
	while (b.len && b.p[b.len - 1] == '\n')
		b.p[--b.len] = '\0';
	return b.p ? b.p : strdup("");
}

/* A ref's reflog as "<new id> <name> <email> <time> <tz> <message>" lines,
 * newest first. */
static char *stack_reflog(rq_rtstack *st, const char *ref)
{
	rq_rtstack_iter *it;
	const rq_rtable_log *l;
	rq_buf b = {0};
	rq_error err;
	char line[4096];
	int k;

	assert_int_equal(rq_rtstack_logs(&it, st, ref, &err), 0);
	while ((k = rq_rtstack_next_log(it, &l, &err)) == 0) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		size_t ml = strlen(l->message);
		snprintf(line, sizeof(line), "%s %s %s %llu %+05d %.*s\n",
			 rq_oid_fmt(hex, &l->new_id, rq_rtstack_algo(st)), l->name, l->email,
			 (unsigned long long)l->time, l->tz,
			 (int)(ml && l->message[ml - 1] == '\n' ? ml - 1 : ml), l->message);
		rq_buf_str(&b, line);
	}
	assert_int_equal(k, 1);
	rq_rtstack_iter_free(it);
	while (b.len && b.p[b.len - 1] == '\n')
		b.p[--b.len] = '\0';
	return b.p ? b.p : strdup("");
}

static void assert_git_ok(tu_repo *r)
{
	tu_git(r, "git refs verify");
	tu_git(r, "git fsck --no-progress --no-dangling 2>/dev/null");
}

static int count_files(const char *dir)
{
	return tu_count_entries(dir, "", "");
}

/* The type of table i's own record of name (-1: none). */
static int table_type(rq_rtstack *st, size_t i, const char *name)
{
	rq_rtable_iter it;
	rq_rtable_ref ref;
	rq_error err;
	int type = -1;

	rq_rtable_iter_init(&it);
	assert_int_equal(rq_rtable_seek_ref(&it, rq_rtstack_table(st, i), name, &err), 0);
	if (rq_rtable_next_ref(&it, &ref, &err) == 0 && !strcmp(ref.name, name))
		type = ref.type;
	rq_rtable_iter_release(&it);
	return type;
}

/* git's reflog of ref in stack_reflog's form. */
static char *upstream_reflog(tu_repo *r, const char *ref)
{
	return tu_capture(r,
			  "git reflog show --date=raw --format='%%H %%gn %%ge %%gd %%gs' %s | "
			  "sed 's/ [^ ]*@{\\([0-9]*\\) \\([-+][0-9]*\\)} / \\1 \\2 /'",
			  ref);
}

/* The stack's refs and reflogs are git's, and every table is sound. */
static void assert_reads_as_git(tu_repo *r, rq_rtstack *st)
{
	char *want = tu_capture(r, "git for-each-ref --format='%%(refname) %%(objectname)'");
	char *got = stack_refs(st);
	rq_error err;

	assert_string_equal(got, want);
	free(want);
	free(got);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "refs/heads/keep" : "HEAD";
		want = upstream_reflog(r, name);
		got = stack_reflog(st, name);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	for (size_t i = 0; i < rq_rtstack_ntables(st); i++)
		assert_int_equal(rq_rtable_verify(rq_rtstack_table(st, i), &err), 0);
}

/* The whole file at path (malloc'ed), its length in *len. */
static uint8_t *read_bytes(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *p;
	FILE *f = fopen(path, "rbe");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &sb), 0);
	p = malloc((size_t)sb.st_size + 1);
	assert_non_null(p);
	*len = fread(p, 1, (size_t)sb.st_size, f);
	assert_int_equal(*len, (size_t)sb.st_size);
	fclose(f);
	return p;
}

/* Every record of table i of st (refs and logs, deletions too) written
 * again by rq_rtwrite, with the table's update indexes and format: git's
 * bytes, byte for byte. */
static void assert_rewrites_as_git(rq_rtstack *st, size_t i)
{
	const rq_rtable *t = rq_rtstack_table(st, i);
	rq_rtwrite *w = rq_rtwrite_new(NULL, rq_rtstack_algo(st), rq_rtable_min_update_index(t),
				       rq_rtable_max_update_index(t));
	char path[PATH_MAX + 300];
	rq_rtable_iter it;
	rq_rtable_ref ref;
	rq_rtable_log log;
	rq_buf out = {0};
	rq_error err;
	uint8_t *git;
	size_t len, at = 0;
	int k;

	assert_non_null(w);
	rq_rtable_iter_init(&it);
	assert_int_equal(rq_rtable_seek_ref(&it, t, "", &err), 0);
	while ((k = rq_rtable_next_ref(&it, &ref, &err)) == 0)
		assert_int_equal(rq_rtwrite_add_ref(w, &ref, &err), 0);
	assert_int_equal(k, 1);
	assert_int_equal(rq_rtable_seek_log(&it, t, "", UINT64_MAX, &err), 0);
	while ((k = rq_rtable_next_log(&it, &log, &err)) == 0)
		assert_int_equal(rq_rtwrite_add_log(w, &log, &err), 0);
	assert_int_equal(k, 1);
	rq_rtable_iter_release(&it);
	assert_int_equal(rq_rtwrite_finish(w, &out, &err), 0);
	rq_rtwrite_free(w);
	snprintf(path, sizeof(path), "%s/%s", rq_rtstack_dir(st), rq_rtable_name(t));
	git = read_bytes(path, &len);
	while (at < len && at < out.len && git[at] == (uint8_t)out.p[at])
		at++;
	if (at != len || out.len != len)
		fail_msg("%s: %zu bytes rewritten as %zu, first difference at %zu",
			 rq_rtable_name(t), len, out.len, at);
	free(git);
	free(out.p);
}

/* Tables git wrote in a repository of the format algo, several before a
 * compaction: HEAD a symbolic ref, an annotated tag with its peeled id, a
 * branch deleted in a newer table than the one that made it, reflogs
 * with their identities and zones; each written again byte for byte;
 * then the same after git pack-refs (one table). */
static void read_upstream_tables(const rq_oid_algo *algo)
{
	rq_rtstack_ref ref = {0};
	rq_oid tag, peeled;
	rq_rtstack *st;
	rq_error err;
	int made = -1, deleted = -1;
	tu_repo *r;

	r = rt_repo_at(algo);
	setenv("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false", 1);
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git tag -a -m 'a tag' v1 && git branch gone && git branch keep");
	tu_commit_file(r, "a", "2\n", "two");
	tu_git(r, "git checkout -q keep && git checkout -q main && git branch -D gone");
	tu_git(r, "GIT_COMMITTER_DATE='@1700000999 -0730' git update-ref -m 'odd  zone' "
		  "refs/heads/keep HEAD");
	unsetenv("GIT_TEST_REFTABLE_AUTOCOMPACTION");
	st = rt_stack_at(r, algo);
	assert_true(rq_rtstack_ntables(st) >= 5);
	assert_int_equal(rq_rtstack_read(st, "HEAD", &ref, &err), 1);
	assert_int_equal(ref.type, RQ_RTABLE_SYMREF);
	assert_string_equal(ref.target.p, "refs/heads/main");
	oid_at(r, algo, "v1", &tag);
	oid_at(r, algo, "v1^{}", &peeled);
	assert_int_equal(rq_rtstack_read(st, "refs/tags/v1", &ref, &err), 1);
	assert_int_equal(ref.type, RQ_RTABLE_VAL2);
	assert_true(rq_oid_eq(&ref.value, &tag) && rq_oid_eq(&ref.peeled, &peeled));
	/* the tombstone in the newest tables hides the branch an older one has */
	assert_int_equal(rq_rtstack_read(st, "refs/heads/gone", &ref, &err), 0);
	for (size_t i = 0; i < rq_rtstack_ntables(st); i++) {
		int type = table_type(st, i, "refs/heads/gone");
		if (type == RQ_RTABLE_VAL1 && made < 0)
			made = (int)i;
		if (type == RQ_RTABLE_DELETION)
			deleted = (int)i;
	}
	assert_true(made >= 0 && deleted > made);
	assert_reads_as_git(r, st);
	for (size_t i = 0; i < rq_rtstack_ntables(st); i++)
		assert_rewrites_as_git(st, i);
	tu_git(r, "git pack-refs --all");
	assert_int_equal(rq_rtstack_reload(st, 0, &err), 0);
	assert_int_equal(rq_rtstack_ntables(st), 1);
	assert_reads_as_git(r, st);
	assert_rewrites_as_git(st, 0);
	rq_rtstack_ref_release(&ref);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

static void test_read_upstream_tables(void **state)
{
	(void)state;
	NEED_UPSTREAM();
	read_upstream_tables(&rq_oid_sha1);
}

/* The same in a SHA-256 repository: version 2 tables, hash id "s256",
 * 32-byte ids in ref and log records. */
static void test_read_upstream_sha256(void **state)
{
	(void)state;
	NEED_UPSTREAM();
	read_upstream_tables(&rq_oid_sha256);
}

static int count_refs(void *arg, const rq_rtable_ref *ref)
{
	(void)ref;
	(*(size_t *)arg)++;
	return 0;
}

/* A seek through the table's index and restart points reads few records:
 * refs b000000.. found, and a missing name placed between two. */
static void check_lookups(const rq_rtable *t, size_t nrefs)
{
	rq_rtable_iter it;
	rq_rtable_ref ref;
	rq_error err;
	char name[64];
	size_t worst = 0;

	rq_rtable_iter_init(&it);
	for (size_t i = 0; i < nrefs; i += 97) {
		size_t before = it.nread;
		snprintf(name, sizeof(name), "refs/heads/b%06zu", i);
		assert_int_equal(rq_rtable_seek_ref(&it, t, name, &err), 0);
		assert_int_equal(rq_rtable_next_ref(&it, &ref, &err), 0);
		assert_string_equal(ref.name, name);
		if (it.nread - before > worst)
			worst = it.nread - before;
	}
	snprintf(name, sizeof(name), "refs/heads/b%06zux", nrefs / 2);
	assert_int_equal(rq_rtable_seek_ref(&it, t, name, &err), 0);
	assert_int_equal(rq_rtable_next_ref(&it, &ref, &err), 0);
	snprintf(name, sizeof(name), "refs/heads/b%06zu", nrefs / 2 + 1);
	assert_string_equal(ref.name, name);
	/* binary searches: a few dozen records, where a scan reads 50,000 */
	assert_true(worst < 80);
	rq_rtable_iter_release(&it);
}

/* 100,000 refs git wrote and packed into one table: iterated, looked up
 * through the index, found by object id. */
static void test_read_upstream_100k(void **state)
{
	rq_rtstack_iter *it;
	const rq_rtable_ref *ref;
	rq_rtstack *st;
	rq_error err;
	rq_oid head;
	size_t n = 0;
	int k;

	(void)state;
	NEED_UPSTREAM();
	tu_repo *r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "awk -v c=$(git rev-parse HEAD) 'BEGIN { for (i = 0; i < 100000; i++) "
		  "printf \"create refs/heads/b%%06d %%s\\n\", i, c }' | git update-ref --stdin && "
		  "git pack-refs --all");
	oid_of(r, "HEAD", &head);
	st = rt_stack(r);
	assert_int_equal(rq_rtstack_ntables(st), 1);
	assert_int_equal(rq_rtable_verify(rq_rtstack_table(st, 0), &err), 0);
	assert_int_equal(rq_rtstack_refs(&it, st, "refs/heads/", &err), 0);
	while ((k = rq_rtstack_next_ref(it, &ref, &err)) == 0)
		n++;
	assert_int_equal(k, 1);
	assert_int_equal(n, 100001);
	rq_rtstack_iter_free(it);
	n = 0;
	assert_int_equal(rq_rtstack_refs(&it, st, "refs/heads/b0999", &err), 0);
	while (rq_rtstack_next_ref(it, &ref, &err) == 0)
		n++;
	assert_int_equal(n, 100);
	rq_rtstack_iter_free(it);
	check_lookups(rq_rtstack_table(st, 0), 100000);
	n = 0;
	assert_int_equal(rq_rtable_refs_for(rq_rtstack_table(st, 0), &head, count_refs, &n, &err),
			 0);
	assert_int_equal(n, 100001);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

static const rq_rttx_ident who = {"Re Player", "replay@example.com", 1800000000, -450};

static rq_rttx_update upd(const char *name, int type, const rq_oid *id, int check,
			  const rq_oid *old)
{
	rq_rttx_update u;

	memset(&u, 0, sizeof(u));
	u.name = name;
	u.new_type = type;
	if (id)
		u.new_id = *id;
	u.check = check;
	if (old)
		u.old_id = *old;
	u.who = &who;
	u.message = "moved  by\nreplayq ";
	return u;
}

static const rq_rttx_opts normal = {.log_policy = RQ_RTTX_LOG_NORMAL};

/* r's reflogs of main and HEAD are those git writes in twin (r before
 * the update) when it moves main from c2 to c1 with the same identity. */
static void assert_logs_as_git(tu_repo *r, tu_repo *twin, const rq_oid *c1, const rq_oid *c2)
{
	char *want, *got, h1[RQ_OID_MAX_HEXSZ + 1], h2[RQ_OID_MAX_HEXSZ + 1];

	tu_git(twin,
	       "GIT_COMMITTER_NAME='Re Player' GIT_COMMITTER_EMAIL=replay@example.com "
	       "GIT_COMMITTER_DATE='@1800000000 -0730' "
	       "git update-ref -m \"$(printf 'moved  by\\nreplayq ')\" refs/heads/main %s %s",
	       rq_oid_fmt(h1, c1, &rq_oid_sha1), rq_oid_fmt(h2, c2, &rq_oid_sha1));
	for (int i = 0; i < 2; i++) {
		const char *ref = i ? "HEAD" : "refs/heads/main";
		want = upstream_reflog(twin, ref);
		got = upstream_reflog(r, ref);
		assert_string_equal(got, want);
		assert_non_null(
		    strstr(got, "Re Player replay@example.com 1800000000 -0730 moved by replayq"));
		free(want);
		free(got);
	}
}

/* One transaction: a branch made, one moved, one deleted (its reflog with
 * it), a tag made; git reads it all back and finds the repository sound,
 * and the reflog entry is the one git writes for the same update. */
static void test_write_read_by_upstream(void **state)
{
	rq_oid c1, c2;
	char h1[RQ_OID_MAX_HEXSZ + 1], h2[RQ_OID_MAX_HEXSZ + 1];
	rq_rttx_update u[4];
	rq_rtstack *st;
	rq_error err;
	char *want, *got;
	tu_repo *r, *twin;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git branch old");
	tu_commit_file(r, "a", "2\n", "two");
	oid_of(r, "HEAD~", &c1);
	oid_of(r, "HEAD", &c2);
	twin = tu_repo_copy(r);
	st = rt_stack(r);
	u[0] = upd("refs/heads/new", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ABSENT, NULL);
	u[1] = upd("refs/heads/main", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ID, &c2);
	u[2] = upd("refs/heads/old", RQ_RTABLE_DELETION, NULL, RQ_RTTX_ID, &c1);
	u[3] = upd("refs/tags/t", RQ_RTABLE_VAL1, &c2, RQ_RTTX_ABSENT, NULL);
	if (rq_rttx_apply(st, u, 4, &normal, &err) < 0)
		fail_msg("%s", err.msg);
	want = tu_capture(r,
			  "printf '%%s\\n' 'refs/heads/main %s' 'refs/heads/new %s' "
			  "'refs/tags/t %s'",
			  rq_oid_fmt(h1, &c1, &rq_oid_sha1), h1, rq_oid_fmt(h2, &c2, &rq_oid_sha1));
	got = tu_capture(r, "git for-each-ref --format='%%(refname) %%(objectname)'");
	assert_string_equal(got, want);
	free(want);
	free(got);
	assert_git_ok(r);
	assert_int_equal(tu_run(r, "git reflog exists refs/heads/old"), 1);
	assert_int_equal(tu_run(r, "git reflog exists refs/tags/t"), 1);
	assert_logs_as_git(r, twin, &c1, &c2);
	rq_rtstack_free(st);
	tu_repo_free(twin);
	tu_repo_free(r);
}

/* The newest table of r's stack, as bytes. */
static uint8_t *newest_table(tu_repo *r, size_t *len)
{
	char *name = tu_capture(r, "tail -1 .git/reftable/tables.list"), path[PATH_MAX + 300];
	uint8_t *p;

	snprintf(path, sizeof(path), "%s/reftable/%s", r->gitdir, name);
	p = read_bytes(path, len);
	free(name);
	return p;
}

/*
 * The same updates in one transaction, by replayq in r and by git in its
 * twin (update-ref --stdin, the same identity, time and message; no
 * automatic compaction on either side): a branch made, one moved (HEAD's
 * reflog with it), one deleted (its reflog too), a tag, an annotated tag
 * (with its peeled id). The two new tables are the same bytes; so are
 * the stacks compacted into one (rq_rtcompact, git pack-refs); and git
 * finds the repository sound.
 */
static void write_as_git(const rq_oid_algo *algo)
{
	rq_oid c1, c2, tag;
	char h1[RQ_OID_MAX_HEXSZ + 1], h2[RQ_OID_MAX_HEXSZ + 1], ht[RQ_OID_MAX_HEXSZ + 1];
	rq_rttx_opts o = normal;
	rq_rttx_update u[5];
	rq_rtstack *st;
	rq_error err;
	uint8_t *mine, *theirs;
	size_t ml, tl;
	tu_repo *r, *twin;

	r = rt_repo_at(algo);
	setenv("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false", 1);
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git branch old");
	tu_commit_file(r, "a", "2\n", "two");
	tu_git(r, "git tag -a -m 'a tag' gone");
	oid_at(r, algo, "gone", &tag);
	tu_git(r, "git tag -d gone");
	oid_at(r, algo, "HEAD~", &c1);
	oid_at(r, algo, "HEAD", &c2);
	twin = tu_repo_copy(r);
	rq_oid_fmt(h1, &c1, algo);
	rq_oid_fmt(h2, &c2, algo);
	rq_oid_fmt(ht, &tag, algo);
	tu_git(twin,
	       "printf 'create refs/heads/new %s\\nupdate refs/heads/main %s %s\\n"
	       "delete refs/heads/old %s\\ncreate refs/tags/t %s\\ncreate refs/tags/ann %s\\n' | "
	       "GIT_COMMITTER_NAME='Re Player' GIT_COMMITTER_EMAIL=replay@example.com "
	       "GIT_COMMITTER_DATE='@1800000000 -0730' "
	       "git update-ref -m \"$(printf 'moved  by\\nreplayq ')\" --stdin",
	       h1, h1, h2, h1, h2, ht);
	unsetenv("GIT_TEST_REFTABLE_AUTOCOMPACTION");
	st = rt_stack_at(r, algo);
	u[0] = upd("refs/heads/new", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ABSENT, NULL);
	u[1] = upd("refs/heads/main", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ID, &c2);
	u[2] = upd("refs/heads/old", RQ_RTABLE_DELETION, NULL, RQ_RTTX_ID, &c1);
	u[3] = upd("refs/tags/t", RQ_RTABLE_VAL1, &c2, RQ_RTTX_ABSENT, NULL);
	u[4] = upd("refs/tags/ann", RQ_RTABLE_VAL2, &tag, RQ_RTTX_ABSENT, NULL);
	u[4].new_peeled = c2;
	o.no_auto_compact = 1;
	if (rq_rttx_apply(st, u, 5, &o, &err) < 0)
		fail_msg("%s", err.msg);
	mine = newest_table(r, &ml);
	theirs = newest_table(twin, &tl);
	assert_int_equal(ml, tl);
	assert_memory_equal(mine, theirs, ml);
	free(mine);
	free(theirs);
	/* all the tables compacted into one: git pack-refs's bytes */
	assert_int_equal(rq_rtcompact_run(st, &o, 1, &err), 0);
	tu_git(twin, "git pack-refs --all");
	assert_int_equal(rq_rtstack_ntables(st), 1);
	mine = newest_table(r, &ml);
	theirs = newest_table(twin, &tl);
	assert_int_equal(ml, tl);
	assert_memory_equal(mine, theirs, ml);
	assert_git_ok(r);
	free(mine);
	free(theirs);
	rq_rtstack_free(st);
	tu_repo_free(twin);
	tu_repo_free(r);
}

static void test_write_as_git(void **state)
{
	(void)state;
	NEED_UPSTREAM();
	write_as_git(&rq_oid_sha1);
}

static void test_write_as_git_sha256(void **state)
{
	(void)state;
	NEED_UPSTREAM();
	write_as_git(&rq_oid_sha256);
}

/* Symbolic refs written: made, moved with their old target checked (a
 * wrong one refused), HEAD moved with the reflog entry git writes. */
static void test_write_symrefs(void **state)
{
	rq_rttx_update u;
	rq_rtstack *st;
	rq_error err;
	char *want, *got;
	tu_repo *r, *twin;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git branch side");
	twin = tu_repo_copy(r);
	st = rt_stack(r);
	u = upd("refs/heads/alias", RQ_RTABLE_SYMREF, NULL, RQ_RTTX_ABSENT, NULL);
	u.new_target = "refs/heads/main";
	assert_int_equal(rq_rttx_apply(st, &u, 1, &normal, &err), 0);
	got = tu_capture(r, "git symbolic-ref refs/heads/alias && git rev-parse alias");
	want = tu_capture(r, "echo refs/heads/main && git rev-parse main");
	assert_string_equal(got, want);
	free(got);
	free(want);
	u = upd("HEAD", RQ_RTABLE_SYMREF, NULL, RQ_RTTX_SYMREF, NULL);
	u.old_target = "refs/heads/nope";
	u.new_target = "refs/heads/side";
	assert_int_equal(rq_rttx_apply(st, &u, 1, &normal, &err), -1);
	assert_non_null(strstr(err.msg, "verifying symref target: 'HEAD': is at refs/heads/main"));
	u.old_target = "refs/heads/main";
	assert_int_equal(rq_rttx_apply(st, &u, 1, &normal, &err), 0);
	tu_git(twin, "GIT_COMMITTER_NAME='Re Player' GIT_COMMITTER_EMAIL=replay@example.com "
		     "GIT_COMMITTER_DATE='@1800000000 -0730' "
		     "git symbolic-ref -m 'moved by replayq' HEAD refs/heads/side");
	want = upstream_reflog(twin, "HEAD");
	got = upstream_reflog(r, "HEAD");
	assert_string_equal(got, want);
	free(got);
	free(want);
	tu_git(r, "test \"$(git symbolic-ref HEAD)\" = refs/heads/side");
	assert_git_ok(r);
	rq_rtstack_free(st);
	tu_repo_free(twin);
	tu_repo_free(r);
}

/* The bytes of a file (malloc'ed), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 16);

	if (f && buf)
		buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return buf;
}

static void assert_same_file(const char *path, const char *was)
{
	char *now = slurp(path);

	assert_string_equal(now, was);
	free(now);
}

/* Every old value is checked under the lock and all move or none: one
 * that moved leaves tables.list and the directory as they were; a lock
 * another process holds is an error that names it, and is left alone. */
static void test_atomic_and_locked(void **state)
{
	char dir[PATH_MAX + 16], list[PATH_MAX + 32], lock[PATH_MAX + 40], *before;
	rq_rtstack_ref ref = {0};
	rq_oid c1, c2;
	rq_rttx_update u[2];
	rq_rtstack *st;
	rq_error err;
	int files;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_commit_file(r, "a", "2\n", "two");
	oid_of(r, "HEAD~", &c1);
	oid_of(r, "HEAD", &c2);
	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	snprintf(list, sizeof(list), "%s/tables.list", dir);
	snprintf(lock, sizeof(lock), "%s/tables.list.lock", dir);
	st = rt_stack(r);
	before = slurp(list);
	files = count_files(dir);
	u[0] = upd("refs/heads/a", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ABSENT, NULL);
	u[1] = upd("refs/heads/main", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ID, &c1); /* it is at c2 */
	assert_int_equal(rq_rttx_apply(st, u, 2, &normal, &err), -1);
	assert_int_equal(err.code, RQ_E_REF_MOVED);
	assert_non_null(strstr(err.msg, "cannot lock ref 'refs/heads/main': is at "));
	assert_same_file(list, before);
	assert_int_equal(count_files(dir), files);
	assert_int_equal(rq_rtstack_read(st, "refs/heads/a", &ref, &err), 0);
	/* another process's lock */
	tu_git(r, "touch '%s'", lock);
	u[1] = upd("refs/heads/main", RQ_RTABLE_VAL1, &c1, RQ_RTTX_ID, &c2);
	assert_int_equal(rq_rttx_apply(st, u, 2, &normal, &err), -1);
	assert_int_equal(err.code, RQ_E_REF_LOCKED);
	assert_non_null(strstr(err.msg, "tables.list.lock"));
	assert_true(tu_exists(lock));
	assert_same_file(list, before);
	unlink(lock);
	assert_int_equal(rq_rttx_apply(st, u, 2, &normal, &err), 0);
	assert_int_equal(rq_rtstack_read(st, "refs/heads/a", &ref, &err), 1);
	assert_int_equal(rq_rtstack_read(st, "refs/heads/main", &ref, &err), 1);
	assert_true(rq_oid_eq(&ref.value, &c1));
	assert_git_ok(r);
	free(before);
	rq_rtstack_ref_release(&ref);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

/* One ref a transaction, 40 times: the automatic compaction keeps a few
 * tables (git's geometric sequence); without it there is one more table
 * each time; a full compaction leaves one table and nothing else. */
static void test_compaction(void **state)
{
	char dir[PATH_MAX + 16], name[64];
	rq_rttx_opts off = normal;
	rq_oid c;
	rq_rttx_update u;
	rq_rtstack *st;
	rq_error err;
	char *refs;
	size_t n;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	oid_of(r, "HEAD", &c);
	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	st = rt_stack(r);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "refs/heads/c%02d", i);
		u = upd(name, RQ_RTABLE_VAL1, &c, RQ_RTTX_ABSENT, NULL);
		assert_int_equal(rq_rttx_apply(st, &u, 1, &normal, &err), 0);
		assert_true(rq_rtstack_ntables(st) <= 7);
	}
	off.no_auto_compact = 1;
	n = rq_rtstack_ntables(st);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "refs/heads/d%02d", i);
		u = upd(name, RQ_RTABLE_VAL1, &c, RQ_RTTX_ABSENT, NULL);
		assert_int_equal(rq_rttx_apply(st, &u, 1, &off, &err), 0);
	}
	assert_int_equal(rq_rtstack_ntables(st), n + 10);
	refs = tu_capture(r, "git for-each-ref refs/heads | wc -l");
	assert_string_equal(refs, "51");
	free(refs);
	assert_int_equal(rq_rtcompact_run(st, &normal, 1, &err), 0);
	assert_int_equal(rq_rtstack_ntables(st), 1);
	assert_int_equal(count_files(dir), 2); /* tables.list and the table: no lock, no temp */
	refs = tu_capture(r, "git for-each-ref refs/heads | wc -l");
	assert_string_equal(refs, "51");
	free(refs);
	assert_git_ok(r);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

/* 30,000 refs in one transaction: one table with a ref index in two
 * levels, obj blocks and a log index, which git reads. */
static void test_write_30k(void **state)
{
	enum { N = 30000 };
	rq_rttx_update *u = calloc(N, sizeof(*u));
	char *names = malloc((size_t)N * 24), *out;
	rq_oid c;
	rq_rtstack *st;
	rq_error err;
	size_t n = 0;
	tu_repo *r;

	(void)state;
	assert_non_null(u);
	assert_non_null(names);
	if (!have_ug) {
		free(u);
		free(names);
		skip();
	}
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	oid_of(r, "HEAD", &c);
	for (int i = 0; i < N; i++) {
		snprintf(names + (size_t)i * 24, 24, "refs/heads/b%06d", i);
		u[i] = upd(names + (size_t)i * 24, RQ_RTABLE_VAL1, &c, RQ_RTTX_ABSENT, NULL);
	}
	st = rt_stack(r);
	if (rq_rttx_apply(st, u, N, &normal, &err) < 0)
		fail_msg("%s", err.msg);
	out = tu_capture(r, "git for-each-ref refs/heads | wc -l");
	assert_string_equal(out, "30001");
	free(out);
	out = tu_capture(r, "git rev-parse b014321 && git reflog -1 --format=%%gs b029999");
	assert_non_null(strstr(out, hex_of(&c, &rq_oid_sha1)));
	assert_non_null(strstr(out, "moved by replayq"));
	free(out);
	tu_git(r, "git refs verify");
	for (size_t i = 0; i < rq_rtstack_ntables(st); i++) {
		assert_int_equal(rq_rtable_verify(rq_rtstack_table(st, i), &err), 0);
		if (rq_rtable_size(rq_rtstack_table(st, i)) > 500000)
			check_lookups(rq_rtstack_table(st, i), N);
	}
	assert_int_equal(rq_rtable_refs_for(rq_rtstack_table(st, rq_rtstack_ntables(st) - 1), &c,
					    count_refs, &n, &err),
			 0);
	assert_true(n >= N);
	rq_rtstack_free(st);
	tu_repo_free(r);
	free(u);
	free(names);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A made-up id of the format algo. */
static void fake_id_at(rq_oid *id, const rq_oid_algo *algo, uint64_t k)
{
	memset(id, 0, sizeof(*id));
	for (size_t i = 0; i < algo->rawsz; i++)
		id->id[i] = (unsigned char)(mix(k * 31 + (uint64_t)i) >> 24);
}

static void fake_id(rq_oid *id, uint64_t k)
{
	fake_id_at(id, &rq_oid_sha1, k);
}

/* A table in memory: nrefs refs (ids from a pool of npool, every 7th an
 * annotated tag, every 50th a symbolic ref), nlogs reflog entries, small
 * blocks so that every section has several and an index. */
static void build_table_at(rq_buf *out, const rq_oid_algo *algo, int nrefs, int npool, int nlogs,
			   uint32_t block)
{
	rq_rtwrite_opts o = {.block_size = block};
	rq_rtwrite *w = rq_rtwrite_new(&o, algo, 1, 9);
	char name[64];
	rq_error err;

	assert_non_null(w);
	for (int i = 0; i < nrefs; i++) {
		rq_rtable_ref r = {0};
		snprintf(name, sizeof(name), "refs/x/%05d", i);
		r.name = name;
		r.update_index = 1 + (uint64_t)(i % 9);
		r.type = i % 50 == 49 ? RQ_RTABLE_SYMREF
			 : i % 7 == 3 ? RQ_RTABLE_VAL2
				      : RQ_RTABLE_VAL1;
		fake_id_at(&r.value, algo, (uint64_t)(i % npool));
		fake_id_at(&r.peeled, algo, (uint64_t)((i + 1) % npool));
		r.target = "refs/x/00000";
		assert_int_equal(rq_rtwrite_add_ref(w, &r, &err), 0);
	}
	for (int i = 0; i < nlogs; i++) {
		rq_rtable_log l = {0};
		snprintf(name, sizeof(name), "refs/x/%05d", i / 3);
		l.refname = name;
		l.update_index = 9 - (uint64_t)(i % 3);
		l.type = i % 11 == 5 ? RQ_RTABLE_LOG_DELETION : RQ_RTABLE_LOG_UPDATE;
		fake_id_at(&l.new_id, algo, (uint64_t)i);
		l.name = "N";
		l.email = "n@x";
		l.time = 1700000000 + (uint64_t)i;
		l.tz = -130;
		l.message = i % 5 ? "a message\n" : "";
		assert_int_equal(rq_rtwrite_add_log(w, &l, &err), 0);
	}
	assert_int_equal(rq_rtwrite_finish(w, out, &err), 0);
	rq_rtwrite_free(w);
}

static void build_table(rq_buf *out, int nrefs, int npool, int nlogs, uint32_t block)
{
	build_table_at(out, &rq_oid_sha1, nrefs, npool, nlogs, block);
}

typedef struct namelist {
	char v[64][32];
	int n;
} namelist;

static int collect(void *arg, const rq_rtable_ref *ref)
{
	namelist *ns = arg;

	if (ns->n < 64)
		snprintf(ns->v[ns->n++], 32, "%s", ref->name);
	return 0;
}

/* The refs of an id through the obj blocks are those a scan finds, with
 * ids of the format algo. */
static void obj_index(const rq_oid_algo *algo)
{
	rq_buf b = {0};
	rq_rtable *t;
	rq_rtable_iter it;
	rq_rtable_ref ref;
	rq_error err;
	int found = 0;

	build_table_at(&b, algo, 5000, 1500, 0, 256);
	assert_int_equal(rq_rtable_open_mem(&t, b.p, b.len, "mem", algo, &err), 0);
	assert_int_equal(rq_rtable_verify(t, &err), 0);
	rq_rtable_iter_init(&it);
	for (int k = 0; k < 1500; k += 37) {
		namelist via = {0}, scan = {0};
		rq_oid id;
		fake_id_at(&id, algo, (uint64_t)k);
		assert_int_equal(rq_rtable_refs_for(t, &id, collect, &via, &err), 0);
		assert_int_equal(rq_rtable_seek_ref(&it, t, "", &err), 0);
		while (rq_rtable_next_ref(&it, &ref, &err) == 0)
			if ((ref.type == RQ_RTABLE_VAL1 || ref.type == RQ_RTABLE_VAL2) &&
			    (rq_oid_eq(&ref.value, &id) ||
			     (ref.type == RQ_RTABLE_VAL2 && rq_oid_eq(&ref.peeled, &id))))
				collect(&scan, &ref);
		found += via.n;
		assert_int_equal(via.n, scan.n);
		for (int i = 0; i < via.n; i++)
			assert_string_equal(via.v[i], scan.v[i]);
	}
	assert_true(found > 100);
	rq_rtable_iter_release(&it);
	rq_rtable_free(t);
	free(b.p);
}

static void test_obj_index(void **state)
{
	(void)state;
	obj_index(&rq_oid_sha1);
	obj_index(&rq_oid_sha256);
}

/* A table whose header names the hash id, its footer's copy too, the CRC
 * made right: then only the hash id is wrong. */
static void set_hash_id(rq_buf *b, const char *id)
{
	size_t body = b->len - 72;
	uint32_t crc;

	memcpy(b->p + 24, id, 4);
	memcpy(b->p + body + 24, id, 4);
	crc = (uint32_t)crc32(0, (const uint8_t *)b->p + body, 68);
	for (int i = 0; i < 4; i++)
		b->p[b->len - 4 + i] = (char)(crc >> (24 - 8 * i));
}

static void expect_refused(const rq_buf *b, const rq_oid_algo *algo, const char *what)
{
	rq_rtable *t = NULL;
	rq_error err;

	assert_int_equal(rq_rtable_open_mem(&t, b->p, b->len, "t.ref", algo, &err), -1);
	assert_null(t);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	if (!strstr(err.msg, what))
		fail_msg("'%s' does not say '%s'", err.msg, what);
}

/* A table of one object format is refused in a repository of the other,
 * naming both: version 1 (SHA-1) read as SHA-256, "s256" read as SHA-1,
 * from memory and from a stack git wrote; an unknown hash id is damage. */
static void test_format_mismatch(void **state)
{
	rq_buf b1 = {0}, b2 = {0};
	char dir[PATH_MAX + 16];
	rq_rtstack *st = NULL;
	rq_rtable *t;
	rq_error err;
	tu_repo *r;

	(void)state;
	build_table_at(&b1, &rq_oid_sha1, 50, 20, 10, 256);
	build_table_at(&b2, &rq_oid_sha256, 50, 20, 10, 256);
	assert_memory_equal(b1.p, "REFT\1", 5);
	assert_memory_equal(b2.p, "REFT\2", 5);
	assert_memory_equal(b2.p + 24, "s256", 4);
	expect_refused(&b1, &rq_oid_sha256,
		       "holds object ids of the format sha1 (version 1), but the repository's "
		       "object format is sha256");
	expect_refused(&b2, &rq_oid_sha1,
		       "holds object ids of the format sha256, but the repository's object "
		       "format is sha1");
	assert_int_equal(rq_rtable_open_mem(&t, b2.p, b2.len, "t.ref", &rq_oid_sha256, &err), 0);
	assert_int_equal(rq_rtable_verify(t, &err), 0);
	rq_rtable_free(t);
	set_hash_id(&b2, "sha1");
	expect_refused(&b2, &rq_oid_sha256, "format sha1, but");
	set_hash_id(&b2, "md5!");
	expect_refused(&b2, &rq_oid_sha256, "is damaged: unknown hash id 6d643521");
	free(b1.p);
	free(b2.p);
	if (!have_ug)
		skip();
	r = rt_repo_at(&rq_oid_sha256);
	tu_commit_file(r, "a", "1\n", "one");
	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	assert_int_equal(rq_rtstack_open(&st, dir, &rq_oid_sha1, &err), -1);
	assert_null(st);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	assert_non_null(
	    strstr(err.msg, "format sha256, but the repository's object format is sha1"));
	tu_repo_free(r);
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	assert_int_equal(rq_rtstack_open(&st, dir, &rq_oid_sha256, &err), -1);
	assert_non_null(strstr(err.msg, "format sha1 (version 1), but the repository's object "
					"format is sha256"));
	tu_repo_free(r);
}

/* Read all one can of a table; errors are fine, crashes and loops not. */
static int read_around(const uint8_t *p, size_t len)
{
	rq_rtable *t;
	rq_rtable_iter it;
	rq_rtable_ref ref;
	rq_rtable_log log;
	rq_error err;
	rq_oid id;
	size_t n = 0;
	int ok;

	if (rq_rtable_open_mem(&t, p, len, "fuzz", &rq_oid_sha1, &err) < 0) {
		assert_true(err.code == RQ_E_BAD_REPO || err.code == RQ_E_NOMEM);
		return 0;
	}
	ok = rq_rtable_verify(t, &err) == 0;
	rq_rtable_iter_init(&it);
	if (rq_rtable_seek_ref(&it, t, "refs/x/00150", &err) == 0)
		while (n++ < 5 && rq_rtable_next_ref(&it, &ref, &err) == 0)
			;
	if (rq_rtable_seek_ref(&it, t, "", &err) == 0)
		while (rq_rtable_next_ref(&it, &ref, &err) == 0)
			n++;
	if (rq_rtable_seek_log(&it, t, "refs/x/00020", UINT64_MAX, &err) == 0)
		while (rq_rtable_next_log(&it, &log, &err) == 0)
			n++;
	fake_id(&id, 42);
	rq_rtable_refs_for(t, &id, count_refs, &n, &err);
	rq_rtable_iter_release(&it);
	rq_rtable_free(t);
	return ok ? 1 : 2;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* A little fuzzing: bytes of the body changed, the file cut short, the
 * footer's positions changed (with a CRC that matches again). Every
 * outcome is a table read or a clear error. */
static void test_fuzz(void **state)
{
	rq_buf b = {0};
	uint8_t *copy;
	uint64_t seed = 37;
	int outcome[3] = {0, 0, 0};

	(void)state;
	build_table(&b, 400, 100, 300, 512);
	assert_int_equal(read_around((const uint8_t *)b.p, b.len), 1);
	copy = malloc(b.len);
	assert_non_null(copy);
	for (int round = 0; round < 1500; round++) {
		size_t len = b.len, body = b.len - 68;
		uint32_t crc;
		memcpy(copy, b.p, b.len);
		seed = mix(seed);
		if (round % 10 == 9) {
			len = seed % b.len;
		} else if (round % 10 == 8) {
			put64(copy + body + 24 + 8 * (seed % 5), mix(seed) % (b.len + 64));
			crc = (uint32_t)crc32(0, copy + body, 64); /* the CRC made right */
			for (int i = 0; i < 4; i++)
				copy[b.len - 4 + i] = (uint8_t)(crc >> (24 - 8 * i));
		} else {
			for (uint64_t k = 0; k <= seed % 4; k++) {
				uint64_t x = mix(seed + k);
				copy[x % body] = (uint8_t)(x >> 40);
			}
		}
		outcome[read_around(copy, len)]++;
	}
	/* it went both ways: tables refused at the start, tables read with
	 * damage found on the way */
	assert_true(outcome[0] > 50 && outcome[2] > 50);
	free(copy);
	free(b.p);
}

/* git's varint (that of ofs-delta) at p: its length. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	tmp[9] = v & 0x7f;
	for (n = 1; v >>= 7; n++)
		tmp[9 - n] = (uint8_t)(0x80 | (--v & 0x7f));
	memcpy(p, tmp + 10 - n, n);
	return n;
}

/*
 * A table of one ref block whose keys each take the whole key before and
 * add a byte (refs/heads/a, refs/heads/aa, ...; n + 1 tombstones, one
 * restart point), as a hostile table can: each key cost its whole length
 * to read, the block's keys the square of their number; a key past
 * RQ_RTABLE_KEY_MAX is damage.
 */
static uint8_t *growing_keys(size_t n, uint64_t max_ui, size_t *len)
{
	static const char base[] = "refs/heads/a";
	size_t cap = 24 + 4 + 16 + 6 * n + 5 + 68, at = 28, blen, crc_at;
	uint8_t *b = calloc(1, cap);
	uint32_t crc;

	assert_non_null(b);
	memcpy(b, "REFT\1\0\0\0", 8);
	put64(b + 8, 1);
	put64(b + 16, max_ui);
	at += put_varint(b + at, 0);
	at += put_varint(b + at, (sizeof(base) - 1) << 3);
	memcpy(b + at, base, sizeof(base) - 1);
	at += sizeof(base) - 1;
	at += put_varint(b + at, 0);
	for (size_t i = 0; i < n; i++) {
		at += put_varint(b + at, sizeof(base) - 1 + i);
		at += put_varint(b + at, 1 << 3);
		b[at++] = 'a';
		at += put_varint(b + at, 0);
	}
	memcpy(b + at, "\0\0\x1c\0\1", 5); /* one restart, at the first record */
	blen = at + 5;
	b[24] = 'r';
	for (int i = 0; i < 3; i++)
		b[25 + i] = (uint8_t)(blen >> (16 - 8 * i));
	memcpy(b + blen, b, 24); /* the footer: the header, no sections, the CRC */
	crc_at = blen + 24 + 40;
	crc = (uint32_t)crc32(0, b + blen, 64);
	for (int i = 0; i < 4; i++)
		b[crc_at + i] = (uint8_t)(crc >> (24 - 8 * i));
	*len = crc_at + 4;
	return b;
}

/* Read every ref of a table: the count, or -1 with err. */
static long read_all_refs(const uint8_t *p, size_t len, rq_error *err)
{
	rq_rtable *t;
	rq_rtable_iter it;
	rq_rtable_ref ref;
	long n = 0;
	int k = 0;

	assert_int_equal(rq_rtable_open_mem(&t, p, len, "keys", &rq_oid_sha1, err), 0);
	rq_rtable_iter_init(&it);
	if (rq_rtable_seek_ref(&it, t, "", err) < 0)
		k = -1;
	while (k == 0 && (k = rq_rtable_next_ref(&it, &ref, err)) == 0)
		n++;
	rq_rtable_iter_release(&it);
	rq_rtable_free(t);
	return k < 0 ? -1 : n;
}

/* Keys that grow a byte a record: read in time linear in the block (a key
 * is built in place), up to RQ_RTABLE_KEY_MAX; a longer one is damage. A
 * table whose update index is 2^64-1 is damage too (the next would wrap). */
static void test_hostile_keys(void **state)
{
	size_t len;
	uint8_t *b;
	rq_error err;
	rq_rtable *t;

	(void)state;
	b = growing_keys(60000, 1, &len);
	assert_int_equal(read_all_refs(b, len, &err), 60001);
	free(b);
	b = growing_keys(RQ_RTABLE_KEY_MAX, 1, &len);
	assert_int_equal(read_all_refs(b, len, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	if (!strstr(err.msg, "key of 65537 bytes"))
		fail_msg("%s", err.msg);
	free(b);
	b = growing_keys(1, UINT64_MAX, &len);
	assert_int_equal(rq_rtable_open_mem(&t, b, len, "wrap", &rq_oid_sha1, &err), -1);
	if (!strstr(err.msg, "2^64-1"))
		fail_msg("%s", err.msg);
	free(b);
}

/* A table of reflog records only (a compaction of log changes writes
 * one): its first log block shares the file header's block. */
static void test_log_only_table(void **state)
{
	rq_buf b = {0};
	rq_rtable *t;
	rq_rtable_iter it;
	rq_rtable_log log;
	rq_rtable_ref ref;
	rq_error err;
	int n = 0, k;

	(void)state;
	build_table(&b, 0, 1, 90, 256);
	assert_int_equal(rq_rtable_open_mem(&t, b.p, b.len, "logs", &rq_oid_sha1, &err), 0);
	assert_int_equal(rq_rtable_verify(t, &err), 0);
	rq_rtable_iter_init(&it);
	assert_int_equal(rq_rtable_seek_ref(&it, t, "", &err), 0);
	assert_int_equal(rq_rtable_next_ref(&it, &ref, &err), 1);
	assert_int_equal(rq_rtable_seek_log(&it, t, "refs/x/00007", UINT64_MAX, &err), 0);
	while ((k = rq_rtable_next_log(&it, &log, &err)) == 0 &&
	       !strcmp(log.refname, "refs/x/00007"))
		n++;
	assert_int_equal(k, 0);
	assert_int_equal(n, 3);
	rq_rtable_iter_release(&it);
	rq_rtable_free(t);
	free(b.p);
}

static void assert_rev(git_repository *repo, const char *spec, tu_repo *r, const char *as)
{
	git_object *o;
	git_oid want;

	if (git_revparse_single(&o, repo, spec) < 0)
		fail_msg("%s: %s", spec, git_error_last()->message);
	git_oid_of(r, as, &want);
	assert_true(git_oid_equal(git_object_id(o), &want));
	git_object_free(o);
}

static char *glob_names(git_repository *repo, const char *glob)
{
	git_reference_iterator *it;
	const char *name;
	rq_buf b = {0};

	assert_int_equal(glob ? git_reference_iterator_glob_new(&it, repo, glob)
			      : git_reference_iterator_new(&it, repo),
			 0);
	while (git_reference_next_name(&name, it) == 0) {
		rq_buf_str(&b, name);
		rq_buf_add(&b, " ", 1);
	}
	git_reference_iterator_free(it);
	return b.p ? b.p : strdup("");
}

/* What replayq asks of libgit2, on a reftable repository: HEAD, DWIM,
 * rev-parse's @{-N} and reflog forms, peeled tags, iteration. */
static void test_backend_reads(void **state)
{
	git_repository *repo;
	git_reference *ref;
	char *names;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git tag -a -m 'a tag' v1 && git checkout -q -b topic");
	tu_commit_file(r, "b", "1\n", "two");
	tu_git(r, "git checkout -q main && echo \"$(git rev-parse topic)\" >.git/FETCH_HEAD");
	repo = rt_open(r);
	assert_int_equal(git_reference_lookup(&ref, repo, "HEAD"), 0);
	assert_int_equal(git_reference_type(ref), GIT_REFERENCE_SYMBOLIC);
	assert_string_equal(git_reference_symbolic_target(ref), "refs/heads/main");
	git_reference_free(ref);
	assert_int_equal(git_repository_head_detached(repo), 0);
	assert_int_equal(git_reference_dwim(&ref, repo, "topic"), 0);
	assert_string_equal(git_reference_name(ref), "refs/heads/topic");
	git_reference_free(ref);
	assert_rev(repo, "@{-1}", r, "topic");
	assert_rev(repo, "topic@{1}", r, "topic~");
	assert_rev(repo, "v1^{}", r, "main");
	assert_rev(repo, "FETCH_HEAD", r, "topic");
	assert_int_equal(git_reference_lookup(&ref, repo, "refs/heads/nope"), GIT_ENOTFOUND);
	names = glob_names(repo, "refs/heads/*");
	assert_string_equal(names, "refs/heads/main refs/heads/topic ");
	free(names);
	names = glob_names(repo, NULL);
	assert_string_equal(names, "refs/heads/main refs/heads/topic refs/tags/v1 ");
	free(names);
	tu_git(r, "git checkout -q --detach main");
	assert_int_equal(git_repository_head_detached(repo), 1);
	tu_repo_free(r);
}

/* Swap main and topic in one git_transaction. */
static void swap(git_repository *repo, const git_oid *c1, const git_oid *c2)
{
	git_transaction *tx;
	git_signature *sig;

	assert_int_equal(git_signature_new(&sig, "Re Player", "replay@example.com", 1800000000, 90),
			 0);
	assert_int_equal(git_transaction_new(&tx, repo), 0);
	assert_int_equal(git_transaction_lock_ref(tx, "refs/heads/main"), 0);
	assert_int_equal(git_transaction_lock_ref(tx, "refs/heads/topic"), 0);
	assert_int_equal(git_transaction_set_target(tx, "refs/heads/main", c1, sig, "swap"), 0);
	assert_int_equal(git_transaction_set_target(tx, "refs/heads/topic", c2, sig, "swap"), 0);
	assert_int_equal(git_transaction_commit(tx), 0);
	git_transaction_free(tx);
	git_signature_free(sig);
}

/* libgit2 writes: a transaction's refs in one table (one update index,
 * HEAD's reflog too), create refusing an existing ref, deletion. */
static void test_backend_writes(void **state)
{
	rq_rtstack_ref a = {0}, b = {0};
	git_repository *repo;
	git_reference *ref;
	git_oid c1, c2;
	rq_oid r1, r2;
	rq_rtstack *st;
	rq_error err;
	char *log;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git branch topic");
	tu_commit_file(r, "a", "2\n", "two");
	git_oid_of(r, "HEAD~", &c1);
	git_oid_of(r, "HEAD", &c2);
	rq_oid_from_git(&r1, &c1);
	rq_oid_from_git(&r2, &c2);
	repo = rt_open(r);
	swap(repo, &c1, &c2);
	st = rt_stack(r);
	assert_int_equal(rq_rtstack_read(st, "refs/heads/main", &a, &err), 1);
	assert_int_equal(rq_rtstack_read(st, "refs/heads/topic", &b, &err), 1);
	assert_true(rq_oid_eq(&a.value, &r1) && rq_oid_eq(&b.value, &r2));
	assert_true(a.update_index == b.update_index);
	log = tu_capture(r, "git reflog -1 --date=raw --format='%%gn %%gd %%gs' HEAD");
	assert_string_equal(log, "Re Player HEAD@{1800000000 +0130} swap");
	free(log);
	assert_int_equal(git_reference_create(&ref, repo, "refs/heads/main", &c2, 0, "x"),
			 GIT_EEXISTS);
	assert_int_equal(
	    git_reference_create_matching(&ref, repo, "refs/heads/main", &c2, 1, &c2, "x"),
	    GIT_EMODIFIED);
	assert_int_equal(git_reference_create(&ref, repo, "refs/heads/made", &c2, 0, "made"), 0);
	git_reference_free(ref);
	assert_int_equal(git_reference_remove(repo, "refs/heads/topic"), 0);
	assert_int_equal(git_reference_has_log(repo, "refs/heads/topic"), 0);
	log = tu_capture(r, "git for-each-ref --format='%%(refname)' refs/heads");
	assert_string_equal(log, "refs/heads/made\nrefs/heads/main");
	free(log);
	assert_git_ok(r);
	rq_rtstack_ref_release(&a);
	rq_rtstack_ref_release(&b);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

static void expect_no_sha256(int rc)
{
	const git_error *e = git_error_last();

	assert_true(rc < 0);
	if (!e || !strstr(e->message, "libgit2 cannot carry the sha256 object ids"))
		fail_msg("'%s'", e ? e->message : "(no error)");
}

/* libgit2 over a SHA-256 reftable repository: what needs no id works (a
 * symbolic HEAD, existence), every id to or from libgit2 is refused by
 * name (lookup, iteration, reflog, writes), nothing is misread or
 * written. */
static void test_backend_sha256(void **state)
{
	static const char *ext[] = {"refstorage", "objectformat"};
	git_reference_iterator *it;
	git_repository *repo;
	git_reference *ref;
	git_reflog *log;
	git_oid any;
	rq_error err;
	char *before, *after;
	int exists = 0;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo_at(&rq_oid_sha256);
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git tag -a -m 'a tag' v1");
	before = tu_capture(r, "git for-each-ref && ls .git/reftable");
	assert_int_equal(git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 2), 0);
	assert_int_equal(
	    git_repository_open_ext(&repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL), 0);
	assert_int_equal(rq_refdb_rt_install(repo, &rq_oid_sha256, &err), 0);
	assert_int_equal(git_reference_lookup(&ref, repo, "HEAD"), 0);
	assert_string_equal(git_reference_symbolic_target(ref), "refs/heads/main");
	git_reference_free(ref);
	assert_int_equal(git_reference_name_is_valid(&exists, "refs/heads/main"), 0);
	expect_no_sha256(git_reference_lookup(&ref, repo, "refs/heads/main"));
	expect_no_sha256(git_reference_lookup(&ref, repo, "refs/tags/v1"));
	assert_int_equal(git_reference_iterator_new(&it, repo), 0);
	expect_no_sha256(git_reference_next(&ref, it));
	git_reference_iterator_free(it);
	expect_no_sha256(git_reflog_read(&log, repo, "refs/heads/main"));
	memset(&any, 7, sizeof(any));
	/* (libgit2 would look the id up in its own odb first, in vain) */
	assert_int_equal(git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0), 0);
	expect_no_sha256(git_reference_create(&ref, repo, "refs/heads/x", &any, 0, "x"));
	expect_no_sha256(git_reference_create(&ref, repo, "refs/heads/main", &any, 1, "x"));
	assert_int_equal(git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 1), 0);
	after = tu_capture(r, "git for-each-ref && ls .git/reftable");
	assert_string_equal(after, before);
	git_repository_free(repo);
	free(before);
	free(after);
	tu_repo_free(r);
}

/* The git_reflog rq_refdb_rt builds has the layout of libgit2's own. */
static void test_reflog_layout(void **state)
{
	tu_repo *r = tu_repo_new(0);

	(void)state;
	tu_commit_file(r, "a", "1\n", "one");
	tu_commit_file(r, "a", "2\n", "two");
	assert_int_equal(rq_refdb_rt_log_layout_ok(tu_repo_open(r), "refs/heads/main"), 1);
	tu_repo_free(r);
}

static void expect_unsupported(tu_repo *r, const char *setting)
{
	git_repository *repo = NULL;
	rq_error err;

	assert_int_equal(rq_repofmt_open(&repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, &err), -1);
	assert_null(repo);
	assert_int_equal(err.code, RQ_E_UNSUPPORTED_REPO);
	assert_string_equal(rq_error_code_name(err.code), "unsupported_repository");
	if (!strstr(err.msg, setting))
		fail_msg("'%s' does not name %s", err.msg, setting);
}

/* A format replayq does not handle is named, not "not a git repository". */
static void test_unsupported_formats(void **state)
{
	git_repository *repo = NULL;
	rq_error err;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
#if !RQ_REPOFMT_SHA256 /* rq_repofmt.h's switch */
	r = tu_repo_new(0);
	tu_git(r, "rm -rf .git && git init -q --object-format=sha256 .");
	expect_unsupported(r, "unsupported repository format: extensions.objectFormat=sha256");
	tu_repo_free(r);
#endif
	r = rt_repo();
	tu_git(r, "git config extensions.compatObjectFormat sha256");
	expect_unsupported(r, "extensions.compatObjectFormat=sha256");
	tu_git(r, "git config --unset extensions.compatObjectFormat && "
		  "git config extensions.refStorage bogus");
	expect_unsupported(r, "invalid value for 'extensions.refstorage': 'bogus'\n"
			      "bad config line ");
	tu_repo_free(r);
	r = tu_repo_new(0);
	tu_commit_file(r, "a", "1\n", "one");
	assert_int_equal(rq_repofmt_open(&repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, &err), 0);
	git_repository_free(repo); /* a files repository opens as before */
	tu_git(r, "git config core.repositoryformatversion 1 && "
		  "git config extensions.worktreeConfig true");
	expect_unsupported(r, "extensions.worktreeConfig=true");
	tu_git(r, "rm -rf .git");
	assert_int_equal(rq_repofmt_open(&repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	tu_repo_free(r);
}

static void expect_stack_error(tu_repo *r, const char *what)
{
	char dir[PATH_MAX + 16];
	rq_rtstack *st = NULL;
	rq_error err;

	snprintf(dir, sizeof(dir), "%s/reftable", r->gitdir);
	assert_int_equal(rq_rtstack_open(&st, dir, &rq_oid_sha1, &err), -1);
	assert_null(st);
	assert_int_equal(err.code, RQ_E_BAD_REPO);
	if (!strstr(err.msg, what))
		fail_msg("'%s' does not say '%s'", err.msg, what);
}

/* tables.list and the tables are data: a name out of the directory, a
 * missing table, a table through a symbolic link, a cut table are errors
 * that say so; through libgit2 a lookup fails, cleanly. */
static void test_hostile_stack(void **state)
{
	git_reference *ref;
	git_repository *repo;
	char *table;
	tu_repo *r;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	tu_git(r, "git pack-refs --all");
	table = tu_capture(r, "cat .git/reftable/tables.list");
	tu_git(
	    r,
	    "cp .git/reftable/tables.list saved && echo ../../config >.git/reftable/tables.list");
	expect_stack_error(r, "names a table '../../config'");
	tu_git(r, "echo 0x000000000001-0x000000000009-00000000.ref >.git/reftable/tables.list");
	expect_stack_error(r, "which does not exist");
	tu_git(r,
	       "cp saved .git/reftable/tables.list && cd .git/reftable && mv %s real && "
	       "ln -s real %s",
	       table, table);
	expect_stack_error(r, "is a symbolic link");
	tu_git(r, "cd .git/reftable && rm %s && head -c 50 real >%s", table, table);
	expect_stack_error(r, "is damaged");
	repo = rt_open(r);
	assert_true(git_reference_lookup(&ref, repo, "refs/heads/main") < 0);
	assert_non_null(strstr(git_error_last()->message, "is damaged"));
	free(table);
	tu_repo_free(r);
}

typedef struct noted {
	char path[8][PATH_MAX];
	int n;
} noted;

static int note(void *arg, const char *path)
{
	noted *nt = arg;

	assert_false(tu_exists(path)); /* told before it is made */
	if (nt->n < 8)
		snprintf(nt->path[nt->n++], PATH_MAX, "%s", path);
	return 0;
}

/* A caller told of every lock file first, who named its tables, can
 * recognise a lock it left when killed by its content alone: the token's
 * line from the instant the lock exists, or a list naming its table that
 * tables.list does not; never an empty lock (git's, just made) or
 * another's. What it wrote and never published goes. */
static void test_lock_owned(void **state)
{
	char lock[PATH_MAX + 40], *list, *line;
	rq_rttx_opts o = normal;
	noted nt = {0};
	rq_oid c;
	rq_rttx_update u;
	rq_rtstack *st;
	rq_error err;
	tu_repo *r;
	int dir;

	(void)state;
	NEED_UPSTREAM();
	r = rt_repo();
	tu_commit_file(r, "a", "1\n", "one");
	oid_of(r, "HEAD", &c);
	snprintf(lock, sizeof(lock), "%s/reftable/tables.list.lock", r->gitdir);
	st = rt_stack(r);
	o.token = "0badf00d";
	o.note_lock = note;
	o.note_arg = &nt;
	o.no_auto_compact = 1;
	u = upd("refs/heads/x", RQ_RTABLE_VAL1, &c, RQ_RTTX_ABSENT, NULL);
	assert_int_equal(rq_rttx_apply(st, &u, 1, &o, &err), 0);
	assert_int_equal(nt.n, 1);
	assert_string_equal(nt.path[0], lock);
	list = tu_capture(r, "tail -1 .git/reftable/tables.list");
	assert_non_null(strstr(list, "-0badf00d.ref"));
	/* the lock as it is from its first instant, taken by a writer with the
	 * token: its line, and nothing left beside it */
	assert_true((dir = rq_rtlock_create(lock, "0badf00d")) >= 0);
	close(dir);
	line = tu_capture(
	    r, "cat .git/reftable/tables.list.lock; ls .git/reftable | grep -c temp || :");
	assert_string_equal(line, "replayq 0badf00d\n0");
	assert_int_equal(rq_rtlock_create(lock, "12345678"), -1); /* held */
	assert_int_equal(errno, EEXIST);
	assert_int_equal(rq_rtlock_owned(lock, "0badf00d"), 1);
	assert_int_equal(rq_rtlock_owned(lock, "12345678"), 0);
	/* as a kill right before the rename would leave it: a list naming the
	 * token's table that is published already is no proof (a later
	 * writer's list names it too); one it never published is */
	tu_git(r, "cp .git/reftable/tables.list '%s'", lock);
	assert_int_equal(rq_rtlock_owned(lock, "0badf00d"), 0);
	tu_git(r, "echo 0x000000000009-0x000000000009-0badf00d.ref >>'%s'", lock);
	tu_git(r,
	       "cd .git/reftable && cp tables.list 0x000000000009-0x000000000009-0badf00d.ref && "
	       ": >0x000000000009-0x000000000009-0badf00d.temp.abcdef && "
	       ": >tables.list.lock-0badf00d.temp");
	assert_int_equal(rq_rtlock_owned(lock, "0badf00d"), 1);
	assert_int_equal(rq_rtlock_owned(lock, "12345678"), 0);
	/* an empty lock (git's, or a process's right after O_EXCL) is nobody's */
	tu_git(r, ": >'%s'", lock);
	assert_int_equal(rq_rtlock_owned(lock, "0badf00d"), 0);
	unlink(lock);
	assert_int_equal(rq_rtlock_owned(lock, "0badf00d"), 0);
	/* what the token's writer left unpublished goes; its published table stays */
	dir = open(rq_rtstack_dir(st), O_RDONLY | O_DIRECTORY);
	assert_int_equal(rq_rtlock_drop_unpublished_at(dir, "12345678"), 0);
	assert_int_equal(rq_rtlock_drop_unpublished_at(dir, "0badf00d"), 3);
	close(dir);
	free(line);
	line = tu_capture(r, "ls .git/reftable | grep -c 0badf00d");
	assert_string_equal(line, "1");
	free(line);
	free(list);
	rq_rtstack_free(st);
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_upstream_tables),
	    cmocka_unit_test(test_read_upstream_sha256),
	    cmocka_unit_test(test_read_upstream_100k),
	    cmocka_unit_test(test_write_read_by_upstream),
	    cmocka_unit_test(test_write_as_git),
	    cmocka_unit_test(test_write_as_git_sha256),
	    cmocka_unit_test(test_write_symrefs),
	    cmocka_unit_test(test_atomic_and_locked),
	    cmocka_unit_test(test_compaction),
	    cmocka_unit_test(test_write_30k),
	    cmocka_unit_test(test_obj_index),
	    cmocka_unit_test(test_format_mismatch),
	    cmocka_unit_test(test_fuzz),
	    cmocka_unit_test(test_log_only_table),
	    cmocka_unit_test(test_hostile_keys),
	    cmocka_unit_test(test_backend_reads),
	    cmocka_unit_test(test_backend_writes),
	    cmocka_unit_test(test_backend_sha256),
	    cmocka_unit_test(test_reflog_layout),
	    cmocka_unit_test(test_unsupported_formats),
	    cmocka_unit_test(test_hostile_stack),
	    cmocka_unit_test(test_lock_owned),
	};
	return cmocka_run_group_tests(tests, group_setup, tu_group_teardown);
}
