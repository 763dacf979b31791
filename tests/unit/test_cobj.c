/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cobj (issue 42): commits and tags parsed at the width of SHA-1 and
 * SHA-256 repositories made by upstream git 2.55, compared with git:
 * trees, parents (an octopus of six), the walk's date (`git rev-list
 * --timestamp`), the ident lines and the message (`git cat-file`), odd
 * headers written with `hash-object --literally` (extra headers, gpgsig,
 * encoding, no author, no message, upper-case hex), git's errors for a
 * damaged tree or parent line, the cache (one read per commit, stable
 * pointers), tags peeled as git peels them.
 *
 * Upstream git: RQ_UPSTREAM_GIT, or /work/shared/upstream-git/git; without
 * it every test is skipped with a notice.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_cobj.h"
#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_oid.h"

static char g_up[PATH_MAX];

typedef struct fx {
	tu_repo *r;
	const rq_oid_algo *algo;
	git_odb *odb;
	rq_odb_read *rd;
	size_t reads; /* through counting_read */
} fx;

static fx g_fx[2];

static int counting_read(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
			 rq_odb_read_obj *out)
{
	fx *f = ctx;

	f->reads++;
	return rq_odb_read_into(f->rd, id, alloc, actx, out);
}

/* A history with an octopus merge of six parents, tags (a chain, one of a
 * blob), and commits written by hand. */
static void make_repo(fx *f)
{
	tu_repo *r = f->r;

	tu_git(r,
	       "rm -rf .git && '%s' init -q --template= -b main --object-format=%s . && "
	       "'%s' config maintenance.auto false",
	       g_up, f->algo->name, g_up);
	tu_git(r, "echo a >a && '%s' add a && '%s' commit -q -m base", g_up, g_up);
	for (int i = 0; i < 5; i++)
		tu_git(r,
		       "'%s' checkout -q -b b%d main && echo %d >f%d && '%s' add f%d && "
		       "GIT_COMMITTER_DATE='@%d +0130' '%s' commit -q -m 'side %d'",
		       g_up, i, i, i, g_up, i, 1700000100 + i, g_up, i);
	tu_git(r,
	       "'%s' checkout -q main && '%s' update-ref refs/heads/main $('%s' commit-tree "
	       "b4^{tree} -p main -p b0 -p b1 -p b2 -p b3 -p b4 -m octopus)",
	       g_up, g_up, g_up);
	tu_git(
	    r,
	    "'%s' tag -a -m one t1 HEAD && '%s' -c advice.nestedTag=false tag -a -m two t2 t1 && "
	    "'%s' tag -a -m blob tb $('%s' hash-object -w a)",
	    g_up, g_up, g_up, g_up);
}

static void open_db(fx *f)
{
	rq_error err;

	assert_int_equal(rq_odb_new_at(&f->odb, tu_repo_open(f->r), NULL, f->algo, &err), 0);
	assert_int_equal(rq_odb_read_open(&f->rd, f->odb), 0);
}

static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};
	const char *ext[] = {"objectformat"};
	int rc = tu_group_setup(state);

	g_up[0] = '\0';
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], g_up) && access(g_up, X_OK))
			g_up[0] = '\0';
	if (rc || !g_up[0]) {
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the commit reader tests are skipped\n");
		return rc;
	}
	git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1);
	for (int i = 0; i < 2; i++) {
		g_fx[i].algo = i ? &rq_oid_sha256 : &rq_oid_sha1;
		g_fx[i].r = tu_repo_new(0);
		make_repo(&g_fx[i]);
		open_db(&g_fx[i]);
	}
	return 0;
}

static int group_teardown(void **state)
{
	for (int i = 0; i < 2; i++) {
		rq_odb_read_free(g_fx[i].rd);
		git_odb_free(g_fx[i].odb);
		tu_repo_free(g_fx[i].r);
	}
	return tu_group_teardown(state);
}

static void need_upstream(void)
{
	if (!g_up[0])
		skip();
}

static void rev(fx *f, const char *spec, rq_oid *id)
{
	char *hex = tu_capture(f->r, "'%s' rev-parse --verify -q '%s'", g_up, spec);

	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(id, f->algo, hex, strlen(hex)), 0);
	free(hex);
}

static const char *hex_of(const fx *f, const rq_oid *id)
{
	static char hex[4][RQ_OID_MAX_HEXSZ + 1];
	static int k;

	k = (k + 1) % 4;
	return rq_oid_fmt(hex[k], id, f->algo);
}

/* c as git sees it: "%T %P" (tree, parents), the walk's date, the raw
 * ident lines and the message. */
static void same_as_git(fx *f, const rq_cobj_commit *c)
{
	char h[RQ_OID_MAX_HEXSZ + 1], buf[2048], *git;
	size_t n = 0;

	rq_oid_fmt(h, &c->id, f->algo);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", hex_of(f, &c->tree));
	for (size_t i = 0; i < c->nparents; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s", hex_of(f, &c->parents[i]));
	git = tu_capture(f->r, "'%s' log -1 --format='%%T %%P' %s", g_up, h);
	assert_string_equal(buf, git);
	free(git);
	git = tu_capture(f->r, "'%s' rev-list --timestamp --no-walk %s | cut -d' ' -f1", g_up, h);
	assert_int_equal(c->date, strtoull(git, NULL, 10));
	free(git);
	if (c->committer) {
		git = tu_capture(
		    f->r, "'%s' cat-file commit %s | sed -n 's/^committer //p' | head -1", g_up, h);
		assert_int_equal(strlen(git), c->committer_len);
		assert_memory_equal(git, c->committer, c->committer_len);
		free(git);
	}
	git = tu_capture_raw(f->r, &n, "'%s' cat-file commit %s | sed '1,/^$/d'", g_up, h);
	if (c->message_len)
		assert_memory_equal(git, c->message, c->message_len);
	free(git);
}

static void history(fx *f)
{
	rq_cobj_cache *c = rq_cobj_cache_new(f->algo, counting_read, f);
	const rq_cobj_commit *m, *again, *p;
	rq_error err;
	rq_oid id;

	assert_non_null(c);
	f->reads = 0;
	rev(f, "main", &id);
	assert_int_equal(rq_cobj_get(c, &id, &m, &err), 0);
	assert_int_equal(m->nparents, 6);
	same_as_git(f, m);
	assert_int_equal(m->message_len, strlen("octopus\n"));
	for (size_t i = 0; i < m->nparents; i++) {
		assert_int_equal(rq_cobj_get(c, &m->parents[i], &p, &err), 0);
		same_as_git(f, p);
		if (i)
			assert_int_equal(p->tz, 130);
	}
	assert_int_equal(f->reads, 7);
	assert_int_equal(rq_cobj_get(c, &id, &again, &err), 0);
	assert_ptr_equal(again, m);
	assert_int_equal(f->reads, 7);
	assert_int_equal(rq_cobj_cache_count(c), 7);
	/* not a commit; missing */
	assert_int_equal(rq_cobj_get(c, &m->tree, &p, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	assert_non_null(strstr(err.msg, "is a tree, not a commit"));
	memset(&id, 0, sizeof(id));
	memset(id.id, 0x5a, f->algo->rawsz);
	assert_int_equal(rq_cobj_get(c, &id, &p, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	assert_memory_equal(err.msg, "bad object 5a5a", 15);
	rq_cobj_cache_free(c);
}

static void test_history_sha1(void **state)
{
	(void)state;
	need_upstream();
	history(&g_fx[0]);
}

static void test_history_sha256(void **state)
{
	(void)state;
	need_upstream();
	history(&g_fx[1]);
}

/* A commit written as it is (git hash-object --literally): its id. */
static void write_commit(fx *f, const char *text, rq_oid *id)
{
	char *hex;

	tu_git(f->r, "printf '%%s' '%s' >../c.txt", text);
	hex = tu_capture(f->r, "'%s' hash-object -t commit --literally -w ../c.txt", g_up);
	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(id, f->algo, hex, strlen(hex)), 0);
	free(hex);
}

/* The commit's text with TREE and PARENT replaced by main's tree and
 * main^1's id (upper-cased when upper). */
static void make_text(fx *f, char *out, size_t n, const char *fmt, int upper)
{
	rq_oid t, p;
	char ph[RQ_OID_MAX_HEXSZ + 1];

	rev(f, "main^{tree}", &t);
	rev(f, "main^1", &p);
	rq_oid_fmt(ph, &p, f->algo);
	for (char *s = ph; upper && *s; s++)
		if (*s >= 'a' && *s <= 'f')
			*s = (char)(*s - 'a' + 'A');
	snprintf(out, n, fmt, hex_of(f, &t), ph);
}

static void odd(fx *f)
{
	rq_cobj_cache *c = rq_cobj_cache_new(f->algo, rq_cobj_read_odb, f->rd);
	const rq_cobj_commit *m;
	char text[1024];
	const char *v;
	size_t len;
	rq_error err;
	rq_oid id;

	/* extra headers, a signature, an encoding, upper-case hex */
	make_text(f, text, sizeof(text),
		  "tree %s\nparent %s\nauthor A <a@x> 1700000000 +0000\n"
		  "committer C <c@x> 1700000500 -0700\nencoding ISO-8859-1\nx-custom one\n"
		  "gpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\n"
		  "subject\n\nbody\n",
		  1);
	write_commit(f, text, &id);
	assert_int_equal(rq_cobj_get(c, &id, &m, &err), 0);
	same_as_git(f, m);
	assert_int_equal(m->nparents, 1);
	assert_int_equal(m->tz, -700);
	assert_int_equal(m->encoding_len, 10);
	assert_memory_equal(m->encoding, "ISO-8859-1", 10);
	assert_non_null(v = rq_cobj_header(m, "gpgsig", &len));
	assert_int_equal(
	    len, strlen("-----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----"));
	assert_non_null(v = rq_cobj_header(m, "x-custom", &len));
	assert_int_equal(len, 3);
	assert_null(rq_cobj_header(m, "mergetag", &len));
	assert_int_equal(m->message_len, strlen("subject\n\nbody\n"));
	/* no author: git's walk date is 0; no message */
	make_text(f, text, sizeof(text), "tree %s\nparent %s\ncommitter C <c@x> 1700000500 +0000\n",
		  0);
	write_commit(f, text, &id);
	assert_int_equal(rq_cobj_get(c, &id, &m, &err), 0);
	same_as_git(f, m);
	assert_int_equal(m->date, 0);
	assert_null(m->author);
	assert_int_equal(m->message_len, 0);
	rq_cobj_cache_free(c);
}

static void test_odd_sha1(void **state)
{
	(void)state;
	need_upstream();
	odd(&g_fx[0]);
}

static void test_odd_sha256(void **state)
{
	(void)state;
	need_upstream();
	odd(&g_fx[1]);
}

/* A damaged commit: our error is git's (its stderr says it too). */
static void damaged_one(fx *f, rq_cobj_cache *c, const char *text, const char *what)
{
	const rq_cobj_commit *m;
	char want[256], *git;
	rq_error err;
	rq_oid id;

	write_commit(f, text, &id);
	assert_int_equal(rq_cobj_get(c, &id, &m, &err), -1);
	assert_int_equal(err.code, RQ_E_CORRUPT_OBJECT);
	snprintf(want, sizeof(want), "%s %s", what, hex_of(f, &id));
	assert_string_equal(err.msg, want);
	git = tu_capture(f->r, "'%s' rev-list --no-walk %s 2>&1; true", g_up, hex_of(f, &id));
	assert_non_null(git);
	assert_non_null(strstr(git, want));
	free(git);
}

static void damaged(fx *f)
{
	rq_cobj_cache *c = rq_cobj_cache_new(f->algo, rq_cobj_read_odb, f->rd);
	char text[1024], bad[RQ_OID_MAX_HEXSZ + 1];
	const rq_cobj_commit *m;
	rq_error err;
	rq_oid id;

	memset(bad, 'g', f->algo->hexsz);
	bad[f->algo->hexsz] = '\0';
	snprintf(text, sizeof(text), "tree %s\nauthor A <a@x> 1 +0000\n\nm\n", bad);
	damaged_one(f, c, text, "bad tree pointer in commit");
	snprintf(text, sizeof(text), "tree %.20s\nauthor A <a@x> 1 +0000\n\nm\n", bad);
	damaged_one(f, c, text, "bogus commit object");
	/* (git looks at a parent line only when the commit goes on past
	 * a whole one's length) */
	make_text(f, text, sizeof(text),
		  "tree %s\nparent %.10s\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n"
		  "a message long enough\n",
		  0);
	damaged_one(f, c, text, "bad parents in commit");
	make_text(f, text, sizeof(text), "tree %s\nparent %.10s\nauthor A <a@x> 1 +0000\n\nm\n", 0);
	write_commit(f, text, &id);
	assert_int_equal(rq_cobj_get(c, &id, &m, &err), 0);
	assert_int_equal(m->nparents, 0);
	make_text(f, text, sizeof(text), "tree %s\nparent %s\n", 0);
	damaged_one(f, c, text, "bad parents in commit");
	rq_cobj_cache_free(c);
}

static void test_damaged_sha1(void **state)
{
	(void)state;
	need_upstream();
	damaged(&g_fx[0]);
}

static void test_damaged_sha256(void **state)
{
	(void)state;
	need_upstream();
	damaged(&g_fx[1]);
}

static void peel(fx *f)
{
	rq_cobj_cache *c = rq_cobj_cache_new(f->algo, rq_cobj_read_odb, f->rd);
	rq_oid id, out, want;
	rq_error err;
	char *git;

	rev(f, "t2", &id);
	rev(f, "main", &want);
	assert_int_equal(rq_cobj_peel(c, &id, GIT_OBJECT_COMMIT, "t2", &out, &err), 0);
	assert_true(rq_oid_eq(&out, &want));
	rev(f, "main^{tree}", &want);
	assert_int_equal(rq_cobj_peel(c, &id, GIT_OBJECT_TREE, "t2", &out, &err), 0);
	assert_true(rq_oid_eq(&out, &want));
	rev(f, "main", &id);
	assert_int_equal(rq_cobj_peel(c, &id, GIT_OBJECT_TREE, "main", &out, &err), 0);
	assert_true(rq_oid_eq(&out, &want));
	rev(f, "tb", &id);
	assert_int_equal(rq_cobj_peel(c, &id, GIT_OBJECT_COMMIT, "tb^{commit}", &out, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	git = tu_capture(f->r, "'%s' rev-parse 'tb^{commit}' 2>&1; true", g_up);
	assert_non_null(strstr(git, err.msg));
	assert_string_equal(
	    err.msg, "tb^{commit}: expected commit type, but the object dereferences to blob type");
	free(git);
	rq_cobj_cache_free(c);
}

static void test_peel_sha1(void **state)
{
	(void)state;
	need_upstream();
	peel(&g_fx[0]);
}

static void test_peel_sha256(void **state)
{
	(void)state;
	need_upstream();
	peel(&g_fx[1]);
}

/* Grafts: main grafted onto b0 and b1, b2 a shallow boundary. */
typedef struct grafts {
	rq_oid main, b2, parents[2];
} grafts;

static long graft_of(void *ctx, const rq_oid *id, const rq_oid **parents)
{
	const grafts *g = ctx;

	*parents = g->parents;
	if (rq_oid_eq(id, &g->main))
		return 2;
	return rq_oid_eq(id, &g->b2) ? 0 : -1;
}

/* The parents "%P" git gives rev in repository r. */
static void git_parents(fx *f, tu_repo *r, const char *rev, const rq_cobj_commit *c)
{
	char buf[512] = "", *git = tu_capture(r, "'%s' log -1 --format=%%P %s", g_up, rev);
	size_t n = 0;

	for (size_t i = 0; i < c->nparents; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
				      hex_of(f, &c->parents[i]));
	assert_non_null(git);
	assert_string_equal(buf, git);
	free(git);
}

static void grafted(fx *f)
{
	rq_cobj_cache *c = rq_cobj_cache_new(f->algo, rq_cobj_read_odb, f->rd);
	tu_repo *r = tu_repo_copy(f->r);
	const rq_cobj_commit *m;
	rq_error err;
	grafts g;

	rev(f, "main", &g.main);
	rev(f, "b2", &g.b2);
	rev(f, "b0", &g.parents[0]);
	rev(f, "b1", &g.parents[1]);
	rq_cobj_cache_grafts(c, graft_of, &g);
	tu_git(r, "mkdir -p .git/info && echo %s %s %s >.git/info/grafts && echo %s >.git/shallow",
	       hex_of(f, &g.main), hex_of(f, &g.parents[0]), hex_of(f, &g.parents[1]),
	       hex_of(f, &g.b2));
	assert_int_equal(rq_cobj_get(c, &g.main, &m, &err), 0);
	assert_int_equal(m->nparents, 2);
	git_parents(f, r, "main", m);
	assert_int_equal(rq_cobj_get(c, &g.b2, &m, &err), 0);
	assert_int_equal(m->nparents, 0);
	git_parents(f, r, "b2", m);
	assert_int_equal(rq_cobj_get(c, &g.parents[0], &m, &err), 0);
	assert_int_equal(m->nparents, 1);
	git_parents(f, r, "b0", m);
	tu_repo_free(r);
	rq_cobj_cache_free(c);
}

static void test_grafts(void **state)
{
	(void)state;
	need_upstream();
	grafted(&g_fx[0]);
	grafted(&g_fx[1]);
}

/* The parser alone: a commit of many parents from bytes. */
static void *bump(void *ctx, size_t n)
{
	char **p = ctx;
	void *r = *p;
	*p += (n + 7) & ~(size_t)7;
	return r;
}

static void test_parse_alone(void **state)
{
	static char text[64 * 1024], space[64 * 1024];
	const rq_oid_algo *a = &rq_oid_sha256;
	char *at = space, hex[RQ_OID_MAX_HEXSZ + 1];
	rq_cobj_commit c;
	rq_error err;
	rq_oid id, p;
	size_t n;

	(void)state;
	memset(&id, 0x11, sizeof(id));
	n = (size_t)snprintf(text, sizeof(text), "tree %s\n", rq_oid_fmt(hex, &id, a));
	for (int i = 0; i < 300; i++) {
		memset(&p, 0, sizeof(p));
		memset(p.id, i & 0xff, a->rawsz);
		p.id[0] = (unsigned char)(i >> 8);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "parent %s\n",
				      rq_oid_fmt(hex, &p, a));
	}
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "author A <a@x> 5 +0000\ncommitter C <c@x> 77 +0000\n\nm");
	assert_int_equal(rq_cobj_parse_commit(&c, a, &id, text, n, bump, &at, &err), 0);
	assert_int_equal(c.nparents, 300);
	assert_int_equal(c.parents[299].id[0], 1);
	assert_int_equal(c.parents[299].id[1], 299 & 0xff);
	assert_int_equal(c.date, 77);
	assert_int_equal(c.message_len, 1);
	/* the same bytes read as SHA-1 are damaged */
	assert_int_equal(rq_cobj_parse_commit(&c, &rq_oid_sha1, &id, text, n, bump, &at, &err), -1);
	assert_string_equal(err.msg,
			    "bogus commit object 1111111111111111111111111111111111111111");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_history_sha1), cmocka_unit_test(test_history_sha256),
	    cmocka_unit_test(test_odd_sha1),	 cmocka_unit_test(test_odd_sha256),
	    cmocka_unit_test(test_damaged_sha1), cmocka_unit_test(test_damaged_sha256),
	    cmocka_unit_test(test_peel_sha1),	 cmocka_unit_test(test_peel_sha256),
	    cmocka_unit_test(test_grafts),	 cmocka_unit_test(test_parse_alone),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
