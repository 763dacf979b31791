/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_tree at both object formats: the entries of real trees written by git
 * in SHA-1 and SHA-256 repositories (names, canonical modes, ids of 20 and
 * 32 bytes, zero past the width) against `git ls-tree`; a SHA-256 tree read
 * at the SHA-1 width (and the reverse) refused, never misread; git's words
 * for a tree cut inside its last id; and the read through replayq's own
 * reader of the object database (rq_odb_read) at both widths.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_tree.h"

/* A repository of that format with a file, an executable, a symlink and a
 * directory, committed by the installed git (which makes SHA-256
 * repositories too). */
static tu_repo *repo_of(const rq_oid_algo *algo)
{
	tu_repo *r = tu_repo_new(0);

	tu_git(r,
	       "rm -rf .git && git init -q --object-format=%s . && "
	       "printf 'a\\n' >f && printf 'x' >run && chmod +x run && ln -s f link && "
	       "mkdir d && printf 'g\\n' >d/g && git add f run link d && "
	       "git -c maintenance.auto=false commit -q -m one",
	       algo->name);
	return r;
}

/* `git ls-tree` of HEAD's tree, one line per entry, as rq_tree reads it:
 * "<octal mode> <hex id> <name>\n". */
static char *listing_of(const rq_tree *t, const rq_oid_algo *algo)
{
	char *out = calloc(1, 4096), hex[RQ_OID_MAX_HEXSZ + 1];
	rq_tree_entry e;
	size_t pos = 0, n = 0;

	assert_non_null(out);
	while (rq_tree_next(t, &pos, &e)) {
		for (size_t i = algo->rawsz; i < RQ_OID_MAX_RAWSZ; i++)
			assert_int_equal(e.id.id[i], 0); /* zero past the width */
		n += (size_t)snprintf(out + n, 4096 - n, "%06o %s %.*s\n", e.mode,
				      rq_oid_fmt(hex, &e.id, algo), (int)e.len, e.name);
	}
	return out;
}

static void check_format(const rq_oid_algo *algo, const rq_oid_algo *other)
{
	tu_repo *r = repo_of(algo);
	size_t len;
	char *raw = tu_capture_raw(r, &len, "git cat-file tree HEAD^{tree}");
	char *want = tu_capture_raw(r, NULL, "git ls-tree HEAD | sed 's/ [a-z]* / /; s/\t/ /'");
	char *got;
	rq_tree t;
	rq_error err;

	assert_non_null(raw);
	assert_non_null(want);
	assert_int_equal(rq_tree_open_data(&t, algo, raw, len, &err), 0);
	assert_int_equal(t.n, 4);
	got = listing_of(&t, algo);
	assert_string_equal(got, want);
	rq_tree_close(&t);

	/* the other width: the ids do not end where a name starts */
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_data(&t, other, raw, len, &err), -1);
	assert_int_equal(err.code, RQ_E_CORRUPT_OBJECT);

	/* cut inside the last id: git's words */
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_data(&t, algo, raw, len - 1, &err), -1);
	assert_int_equal(err.code, RQ_E_CORRUPT_OBJECT);
	assert_string_equal(err.msg, "too-short tree object");
	free(got);
	free(want);
	free(raw);
	tu_repo_free(r);
}

static void test_sha1_tree(void **state)
{
	(void)state;
	check_format(&rq_oid_sha1, &rq_oid_sha256);
}

static void test_sha256_tree(void **state)
{
	(void)state;
	check_format(&rq_oid_sha256, &rq_oid_sha1);
}

/* Through replayq's reader over the repository's database (rq_odb_read,
 * what the pathspec filter and the merge read with): the same tree at
 * either width, as `git ls-tree` lists it; a missing id and a reader let
 * go of give rq_tree_open_with's errors, nothing kept. */
static void open_through_odb(const rq_oid_algo *algo)
{
	tu_repo *r = repo_of(algo);
	char *hex = tu_capture(r, "git rev-parse HEAD^{tree}");
	char *want = tu_capture_raw(r, NULL, "git ls-tree HEAD | sed 's/ [a-z]* / /; s/\t/ /'");
	char *got;
	git_odb *odb = NULL;
	rq_odb_read *rd = NULL;
	rq_tree_reader trees = rq_odb_read_trees(&rd);
	rq_oid id;
	rq_tree t;
	rq_error err;
	const char *ext[] = {"objectformat"}; /* libgit2 opens SHA-256 repositories */

	assert_int_equal(git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1), 0);
	assert_int_equal(rq_oid_parse(&id, algo, hex, strlen(hex)), 0);
	assert_int_equal(rq_odb_new_at(&odb, tu_repo_open(r), NULL, algo, &err), 0);
	assert_int_equal(rq_odb_read_open(&rd, odb), 0);
	assert_int_equal(rq_tree_open_with(&t, &trees, algo, &id, &err), 0);
	assert_int_equal(t.n, 4);
	got = listing_of(&t, algo);
	assert_string_equal(got, want);
	rq_tree_close(&t);

	id.id[algo->rawsz - 1] ^= 1;
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_with(&t, &trees, algo, &id, &err), -1);
	assert_non_null(strstr(err.msg, "cannot read tree: object not found"));
	assert_null(t.rd);
	rq_odb_read_free(rd);
	rd = NULL;
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_with(&t, &trees, algo, &id, &err), -1);
	assert_string_equal(err.msg, "cannot read tree: the object database was closed");
	git_odb_free(odb);
	free(got);
	free(want);
	free(hex);
	tu_repo_free(r);
}

static void test_open_through_odb_sha1(void **state)
{
	(void)state;
	open_through_odb(&rq_oid_sha1);
}

static void test_open_through_odb_sha256(void **state)
{
	(void)state;
	open_through_odb(&rq_oid_sha256);
}

/* A reader that serves one object (raw, of type type) and counts what it
 * hands out and gets back. */
typedef struct one_obj {
	rq_oid id;
	const char *raw;
	size_t len;
	git_object_t type;
	int out; /* read, not yet released */
} one_obj;

static int one_read(void *ctx, const rq_oid *id, const unsigned char **data, size_t *len,
		    git_object_t *type, void **mem, void **owner)
{
	one_obj *o = ctx;
	char *copy;

	if (!rq_oid_eq(id, &o->id)) {
		git_error_set_str(GIT_ERROR_ODB, "object not found - no match for id (x)");
		return GIT_ENOTFOUND;
	}
	assert_non_null(copy = malloc(o->len + 1));
	memcpy(copy, o->raw, o->len);
	*data = (const unsigned char *)copy;
	*len = o->len;
	*type = o->type;
	*mem = copy;
	*owner = o;
	o->out++;
	return 0;
}

static void one_release(void *ctx, void *mem, void *owner)
{
	one_obj *o = ctx;

	assert_ptr_equal(owner, o);
	free(mem);
	o->out--;
}

/* Through a reader (the merge's over core/odb): a SHA-256 tree opened,
 * listed and released; an object that is no tree and one that is missing
 * give rq_tree_open's errors, nothing kept. */
static void test_open_with_reader(void **state)
{
	tu_repo *r = repo_of(&rq_oid_sha256);
	size_t len;
	char *raw = tu_capture_raw(r, &len, "git cat-file tree HEAD^{tree}");
	char *hex = tu_capture(r, "git rev-parse HEAD^{tree}");
	one_obj o = {.raw = raw, .len = len, .type = GIT_OBJECT_TREE};
	rq_tree_reader rd = {one_read, one_release, &o};
	rq_oid other;
	rq_tree t;
	rq_error err;

	(void)state;
	assert_int_equal(rq_oid_parse(&o.id, &rq_oid_sha256, hex, strlen(hex)), 0);
	assert_int_equal(rq_tree_open_with(&t, &rd, &rq_oid_sha256, &o.id, &err), 0);
	assert_int_equal(t.n, 4);
	assert_int_equal(o.out, 1);
	rq_tree_close(&t);
	assert_int_equal(o.out, 0);

	o.type = GIT_OBJECT_BLOB;
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_with(&t, &rd, &rq_oid_sha256, &o.id, &err), -1);
	assert_int_equal(err.code, RQ_E_CORRUPT_OBJECT);
	assert_non_null(strstr(err.msg, "is not a tree"));
	assert_non_null(strstr(err.msg, hex));
	assert_int_equal(o.out, 0);

	other = o.id;
	other.id[31] ^= 1;
	rq_error_clear(&err);
	assert_int_equal(rq_tree_open_with(&t, &rd, &rq_oid_sha256, &other, &err), -1);
	assert_string_equal(err.msg, "cannot read tree: object not found - no match for id (x)");
	rq_tree_close(&t);
	assert_int_equal(o.out, 0);
	free(hex);
	free(raw);
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha1_tree),
	    cmocka_unit_test(test_sha256_tree),
	    cmocka_unit_test(test_open_through_odb_sha1),
	    cmocka_unit_test(test_open_through_odb_sha256),
	    cmocka_unit_test(test_open_with_reader),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
