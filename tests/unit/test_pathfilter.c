/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pathfilter at both object formats, its trees read through replayq's
 * reader (rq_odb_read): over a linear history whose commits change a
 * file, a nested directory and a directory whose tree is larger than the
 * filter keeps (over 256 KiB), which commits change a pathspec's paths,
 * against `git rev-list HEAD -- <pathspec>`. Each walk runs twice, newest
 * first, as the revision walk calls it (the second from the trees the
 * reader keeps). The reader's kept trees: a tree read twice is handed out
 * from the same bytes, but for the large tree (not kept), read again.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_pathfilter.h"

#define NCOMMITS 8

typedef struct commit {
	char hex[RQ_OID_MAX_HEXSZ + 1];
	rq_oid tree, parent_tree;
	int root;
} commit;

/* A history of NCOMMITS commits in algo's format, newest first into c:
 * a, d/e/c, and big/ (9,000 entries) changed in turn. */
static tu_repo *history(const rq_oid_algo *algo, commit *c)
{
	tu_repo *r = tu_repo_new(0);
	char *log, *line;

	tu_git(r,
	       "rm -rf .git && git init -q --object-format=%s . && mkdir -p d/e && "
	       "echo 0 >a && echo 0 >d/e/c && git add a d && b=$(echo x | git hash-object -w "
	       "--stdin) && for i in $(seq 9000); do printf '100644 blob %%s\\tbig/f%%05d\\n' $b "
	       "$i; done | git update-index --add --index-info && git commit -q -m 0 && "
	       "for i in 1 2 3 4 5 6 7; do case $((i %% 3)) in 0) echo $i >a;; 1) echo $i "
	       ">d/e/c;; 2) echo $i | git update-index --add --cacheinfo 100644,$(echo $i | git "
	       "hash-object -w --stdin),big/f00007;; esac; git add a d && git commit -q -m $i; "
	       "done",
	       algo->name);
	log = tu_capture(r, "git log --format='%%H %%T %%P' HEAD | while read h t p; do "
			    "echo $h $t $(git rev-parse ${p:-$t}^{tree}) ${p:+1}; done");
	line = log;
	for (int i = 0; i < NCOMMITS; i++) {
		char tree[RQ_OID_MAX_HEXSZ + 1], ptree[RQ_OID_MAX_HEXSZ + 1], has_parent[4] = "";
		assert_true(sscanf(line, "%64s %64s %64s %3s", c[i].hex, tree, ptree, has_parent) >=
			    3);
		assert_int_equal(rq_oid_parse(&c[i].tree, algo, tree, strlen(tree)), 0);
		assert_int_equal(rq_oid_parse(&c[i].parent_tree, algo, ptree, strlen(ptree)), 0);
		c[i].root = !has_parent[0];
		line = strchr(line, '\n') + 1;
	}
	free(log);
	return r;
}

/* The commits (hex, newest first) that change path by the filter, each
 * line "<hex>\n", through rd. */
static char *changed(rq_pathfilter *pf, git_repository *g, rq_odb_read *rd, const rq_oid_algo *algo,
		     const commit *c)
{
	char *out = calloc(NCOMMITS, RQ_OID_MAX_HEXSZ + 2);
	rq_error err;

	assert_non_null(out);
	for (int i = 0; i < NCOMMITS; i++) {
		int rc = rq_pathfilter_changes(
		    pf, g, rd, algo, c[i].root ? NULL : &c[i].parent_tree, &c[i].tree, &err);
		assert_int_not_equal(rc, -1);
		if (rc)
			strcat(strcat(out, c[i].hex), "\n");
	}
	return out;
}

/* Tree id read twice through rq_odb_read_trees, the first still open:
 * 1 when the second read handed out the first's bytes (kept), else 0. */
static int kept_twice(rq_odb_read **rd, const rq_oid *id)
{
	rq_tree_reader t = rq_odb_read_trees(rd);
	const unsigned char *d[2];
	size_t len[2];
	git_object_t type[2];
	void *mem[2], *owner[2];
	int same;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(t.read(t.ctx, id, &d[i], &len[i], &type[i], &mem[i], &owner[i]),
				 0);
		assert_int_equal(type[i], GIT_OBJECT_TREE);
	}
	assert_int_equal(len[0], len[1]);
	assert_memory_equal(d[0], d[1], len[0]);
	same = d[0] == d[1];
	for (int i = 0; i < 2; i++)
		t.release(t.ctx, mem[i], owner[i]);
	return same;
}

static void check_format(const rq_oid_algo *algo)
{
	static const char *specs[] = {"d/e", "a", "big/f00007", "big"};
	const char *ext[] = {"objectformat"}; /* libgit2 opens SHA-256 repositories */
	commit c[NCOMMITS];
	tu_repo *r;
	git_repository *g;
	git_odb *odb = NULL;
	rq_odb_read *rd = NULL;
	rq_error err;

	assert_int_equal(git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1), 0);
	r = history(algo, c);
	g = tu_repo_open(r);
	assert_int_equal(rq_odb_new_at(&odb, g, NULL, algo, &err), 0);
	assert_int_equal(rq_odb_read_open(&rd, odb), 0);
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		char *path = (char *)specs[s],
		     *want = tu_capture_raw(r, NULL, "git rev-list HEAD -- %s", path);
		rq_pathfilter *pf;
		assert_int_equal(rq_pathfilter_new(&pf, &path, 1, &err), 0);
		for (int pass = 0; pass < 2; pass++) {
			char *got = changed(pf, g, rd, algo, c);
			assert_string_equal(got, want);
			free(got);
		}
		free(want);
		rq_pathfilter_free(pf);
	}
	/* the newest root tree is kept; big/ (over 256 KiB) is read again */
	assert_int_equal(kept_twice(&rd, &c[0].tree), 1);
	{
		char *hex = tu_capture(r, "git rev-parse %s:big", c[0].hex);
		rq_oid big;
		assert_int_equal(rq_oid_parse(&big, algo, hex, strlen(hex)), 0);
		assert_int_equal(kept_twice(&rd, &big), 0);
		free(hex);
	}
	rq_odb_read_free(rd);
	git_odb_free(odb);
	tu_repo_free(r);
}

static void test_sha1(void **state)
{
	(void)state;
	check_format(&rq_oid_sha1);
}

static void test_sha256(void **state)
{
	(void)state;
	check_format(&rq_oid_sha256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha1),
	    cmocka_unit_test(test_sha256),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
