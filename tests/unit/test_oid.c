/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oid (object ids of both object formats) and rq_hash (an object's id
 * in either): widths, strict parsing and formatting, prefixes, order, the
 * empty tree and blob, and the ids of real blobs, trees and commits
 * against upstream git 2.55 in SHA-1 and SHA-256 repositories.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_hash.h"
#include "rq_oid.h"
#include "rq_sha256.h"

/*
 * Recorded from upstream git 2.55 (/work/shared/upstream-git/git), outside
 * a repository for SHA-1 and in one made by `git init
 * --object-format=sha256` for SHA-256:
 *   git hash-object -t tree /dev/null
 *   git hash-object -t blob /dev/null
 *   printf 'hello\n' | git hash-object --stdin
 * test_live_ids asks upstream git again when it is there.
 */
#define SHA1_EMPTY_TREE	  "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define SHA1_EMPTY_BLOB	  "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
#define SHA1_HELLO	  "ce013625030ba8dba906f756967f9e9ca394464a"
#define SHA256_EMPTY_TREE "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
#define SHA256_EMPTY_BLOB "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
#define SHA256_HELLO	  "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"

static char upstream[PATH_MAX];

/* Upstream git: RQ_UPSTREAM_GIT, or /work/shared/upstream-git/git. */
static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};

	for (int i = 0; i < 2; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], upstream) && !access(upstream, X_OK))
			return tu_group_setup(state);
	upstream[0] = '\0';
	fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
			"ids recorded from it are checked, not asked again\n");
	return tu_group_setup(state);
}

static const char *fmt(const rq_oid *id, const rq_oid_algo *algo)
{
	static char buf[4][RQ_OID_MAX_HEXSZ + 1];
	static int next;

	return rq_oid_fmt(buf[next++ % 4], id, algo);
}

/* 1 when every byte of id from `from` on is zero. */
static int zero_from(const rq_oid *id, size_t from)
{
	for (size_t i = from; i < RQ_OID_MAX_RAWSZ; i++)
		if (id->id[i])
			return 0;
	return 1;
}

static void test_descriptors(void **state)
{
	(void)state;
	assert_string_equal(rq_oid_sha1.name, "sha1");
	assert_int_equal(rq_oid_sha1.rawsz, 20);
	assert_int_equal(rq_oid_sha1.hexsz, 40);
	assert_string_equal(rq_oid_sha256.name, "sha256");
	assert_int_equal(rq_oid_sha256.rawsz, 32);
	assert_int_equal(rq_oid_sha256.hexsz, 64);
	assert_ptr_equal(rq_oid_algo_by_name("sha1"), &rq_oid_sha1);
	assert_ptr_equal(rq_oid_algo_by_name("sha256"), &rq_oid_sha256);
	/* git refuses extensions.objectFormat=SHA256 ("invalid value") */
	assert_null(rq_oid_algo_by_name("SHA256"));
	assert_null(rq_oid_algo_by_name("sha512"));
	assert_null(rq_oid_algo_by_name(""));
	assert_null(rq_oid_algo_by_name(NULL));
	assert_string_equal(fmt(&rq_oid_sha1.empty_tree, &rq_oid_sha1), SHA1_EMPTY_TREE);
	assert_string_equal(fmt(&rq_oid_sha1.empty_blob, &rq_oid_sha1), SHA1_EMPTY_BLOB);
	assert_string_equal(fmt(&rq_oid_sha256.empty_tree, &rq_oid_sha256), SHA256_EMPTY_TREE);
	assert_string_equal(fmt(&rq_oid_sha256.empty_blob, &rq_oid_sha256), SHA256_EMPTY_BLOB);
	assert_true(zero_from(&rq_oid_sha1.empty_tree, 20));
	assert_true(zero_from(&rq_oid_sha1.empty_blob, 20));
}

/* A full id round-trips in its own width, and only there. */
static void test_parse_widths(void **state)
{
	rq_oid id, keep;

	(void)state;
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, SHA1_HELLO, 40), 0);
	assert_string_equal(fmt(&id, &rq_oid_sha1), SHA1_HELLO);
	assert_true(zero_from(&id, 20));
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, SHA256_HELLO, 64), 0);
	assert_string_equal(fmt(&id, &rq_oid_sha256), SHA256_HELLO);
	keep = id;
	/* a 64-digit string is not a SHA-1 id (libgit2 kept its first 40
	 * digits), a 40-digit string not a SHA-256 id; out is untouched */
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, SHA256_HELLO, 64), -1);
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, SHA256_HELLO, 41), -1);
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, SHA1_HELLO, 39), -1);
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, SHA1_HELLO, 40), -1);
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, SHA256_HELLO, 63), -1);
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, NULL, 64), -1);
	assert_true(rq_oid_eq(&id, &keep));
}

/* Upper case and characters that are not hex digits are refused, at any
 * place. */
static void test_parse_strict(void **state)
{
	const char *bad[] = {"g", "G", "A", "F", " ", "\0", "-", "x", ":"};
	char s[RQ_OID_MAX_HEXSZ + 1];
	rq_oid id;

	(void)state;
	for (size_t b = 0; b < sizeof(bad) / sizeof(*bad); b++)
		for (size_t at = 0; at < 64; at += 21) {
			memcpy(s, SHA256_HELLO, 65);
			s[at] = bad[b][0];
			assert_int_equal(rq_oid_parse(&id, &rq_oid_sha256, s, 64), -1);
			if (at < 40)
				assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, s, 40), -1);
			assert_int_equal(rq_oid_parse_prefix(&id, &rq_oid_sha256, s, at + 1), -1);
		}
	memcpy(s, SHA1_HELLO, 41);
	s[0] = 'C'; /* the same id in upper case: refused */
	assert_int_equal(rq_oid_parse(&id, &rq_oid_sha1, s, 40), -1);
}

static void test_prefix(void **state)
{
	rq_oid full, p;

	(void)state;
	assert_int_equal(rq_oid_parse(&full, &rq_oid_sha256, SHA256_HELLO, 64), 0);
	for (size_t n = RQ_OID_MIN_PREFIX; n <= 64; n++) {
		assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha256, SHA256_HELLO, n), 0);
		assert_true(rq_oid_has_prefix(&full, &p, n));
		assert_true(zero_from(&p, (n + 1) / 2));
		if (n % 2) /* an odd last digit: the high half of its byte */
			assert_int_equal(p.id[n / 2] & 0x0f, 0);
	}
	/* "2cf8d" (odd) matches, "2cf8e" does not, nor "2cf9" */
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha256, "2cf8e", 5), 0);
	assert_false(rq_oid_has_prefix(&full, &p, 5));
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha256, "2cf9", 4), 0);
	assert_false(rq_oid_has_prefix(&full, &p, 4));
	/* too short, too long for the width; in SHA-256 40 digits are a prefix */
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha1, "ce0", 3), -1);
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha1, SHA256_HELLO, 41), -1);
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha1, SHA1_HELLO, 40), 0);
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha256, SHA256_HELLO, 40), 0);
	assert_true(rq_oid_has_prefix(&full, &p, 40));
	assert_int_equal(rq_oid_parse_prefix(&p, &rq_oid_sha256, SHA256_HELLO "0", 65), -1);
}

static void test_compare(void **state)
{
	rq_oid a, b, z = {{0}};
	unsigned char raw[32];
	git_oid g;

	(void)state;
	assert_true(rq_oid_is_zero(&z));
	assert_false(rq_oid_is_zero(&rq_oid_sha1.empty_tree));
	memset(raw, 0xee, sizeof(raw));
	rq_oid_from_raw(&a, &rq_oid_sha1, raw); /* bytes 20.. zeroed */
	assert_true(zero_from(&a, 20));
	rq_oid_from_raw(&b, &rq_oid_sha256, raw);
	assert_false(rq_oid_eq(&a, &b));
	assert_true(rq_oid_cmp(&a, &b) < 0);
	/* the order of SHA-1 ids is the order of their 20 bytes */
	assert_int_equal(rq_oid_parse(&a, &rq_oid_sha1, SHA1_EMPTY_TREE, 40), 0);
	assert_int_equal(rq_oid_parse(&b, &rq_oid_sha1, SHA1_EMPTY_BLOB, 40), 0);
	assert_true(rq_oid_cmp(&a, &b) < 0 && rq_oid_cmp(&b, &a) > 0);
	assert_int_equal(rq_oid_cmp(&a, &rq_oid_sha1.empty_tree), 0);
	assert_true(rq_oid_eq(&a, &rq_oid_sha1.empty_tree));
	/* libgit2's ids: SHA-1 only */
	assert_int_equal(rq_oid_to_git(&g, &a, &rq_oid_sha1), 0);
	assert_string_equal(git_oid_tostr_s(&g), SHA1_EMPTY_TREE);
	rq_oid_from_git(&b, &g);
	assert_true(rq_oid_eq(&a, &b));
	assert_int_equal(rq_oid_to_git(&g, &rq_oid_sha256.empty_tree, &rq_oid_sha256), -1);
}

/* rq_hash_object of the recorded objects; a type that is no object's. */
static void test_hash_recorded(void **state)
{
	rq_oid id;

	(void)state;
	assert_int_equal(rq_hash_object(&rq_oid_sha1, GIT_OBJECT_TREE, "", 0, &id), 0);
	assert_true(rq_oid_eq(&id, &rq_oid_sha1.empty_tree));
	assert_int_equal(rq_hash_object(&rq_oid_sha256, GIT_OBJECT_TREE, "", 0, &id), 0);
	assert_true(rq_oid_eq(&id, &rq_oid_sha256.empty_tree));
	assert_int_equal(rq_hash_object(&rq_oid_sha1, GIT_OBJECT_BLOB, NULL, 0, &id), 0);
	assert_true(rq_oid_eq(&id, &rq_oid_sha1.empty_blob));
	assert_int_equal(rq_hash_object(&rq_oid_sha256, GIT_OBJECT_BLOB, NULL, 0, &id), 0);
	assert_true(rq_oid_eq(&id, &rq_oid_sha256.empty_blob));
	assert_int_equal(rq_hash_object(&rq_oid_sha1, GIT_OBJECT_BLOB, "hello\n", 6, &id), 0);
	assert_string_equal(fmt(&id, &rq_oid_sha1), SHA1_HELLO);
	assert_int_equal(rq_hash_object(&rq_oid_sha256, GIT_OBJECT_BLOB, "hello\n", 6, &id), 0);
	assert_string_equal(fmt(&id, &rq_oid_sha256), SHA256_HELLO);
	assert_int_equal(rq_hash_object(&rq_oid_sha256, GIT_OBJECT_OFS_DELTA, "x", 1, &id), -1);
	assert_int_equal(rq_hash_object(&rq_oid_sha1, GIT_OBJECT_ANY, "x", 1, &id), -1);
	git_error_clear();
}

/* SHA-256 itself, in pieces across nettle's 64-byte blocks (FIPS 180-2's
 * two-block example). */
static void test_sha256_pieces(void **state)
{
	static const char msg[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const char want[] =
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
	unsigned char out[32];
	rq_oid id;
	rq_sha256 s;

	(void)state;
	for (size_t cut = 0; cut <= 56; cut += 7) {
		rq_sha256_init(&s);
		rq_sha256_update(&s, msg, cut);
		rq_sha256_update(&s, msg + cut, 56 - cut);
		rq_sha256_final(&s, out);
		rq_oid_from_raw(&id, &rq_oid_sha256, out);
		assert_string_equal(fmt(&id, &rq_oid_sha256), want);
	}
}

/* What upstream git says of an object of repository r (its type, raw
 * content), checked against rq_hash_object in the format algo. */
static void check_object(tu_repo *r, const rq_oid_algo *algo, const char *rev, git_object_t type)
{
	char *want = tu_capture(r, "%s rev-parse %s", upstream, rev), *data;
	size_t len;
	rq_oid id;

	assert_non_null(want);
	assert_int_equal(strlen(want), algo->hexsz);
	data = tu_capture_raw(r, &len, "%s cat-file %s %s", upstream, git_object_type2string(type),
			      rev);
	assert_non_null(data);
	assert_int_equal(rq_hash_object(algo, type, data, len, &id), 0);
	assert_string_equal(fmt(&id, algo), want);
	free(want);
	free(data);
}

/* A repository of that format made by upstream git with one commit: its
 * blob, tree, commit and the empty tree and blob, as upstream hashes them. */
static void live_ids(const rq_oid_algo *algo)
{
	tu_repo *r = tu_repo_new(0);
	char *empty;

	tu_git(r,
	       "rm -rf .git && %s init -q --template= --object-format=%s . && "
	       "printf 'hello\\n' >f && mkdir d && printf 'x' >d/g && %s add f d && "
	       "%s -c maintenance.auto=false commit -q -m 'one\n\nbody'",
	       upstream, algo->name, upstream, upstream);
	check_object(r, algo, "HEAD:f", GIT_OBJECT_BLOB);
	check_object(r, algo, "HEAD^{tree}", GIT_OBJECT_TREE);
	check_object(r, algo, "HEAD:d", GIT_OBJECT_TREE);
	check_object(r, algo, "HEAD", GIT_OBJECT_COMMIT);
	empty = tu_capture(r, "%s hash-object -t tree /dev/null", upstream);
	assert_string_equal(empty, fmt(&algo->empty_tree, algo));
	free(empty);
	empty = tu_capture(r, "%s hash-object -t blob /dev/null", upstream);
	assert_string_equal(empty, fmt(&algo->empty_blob, algo));
	free(empty);
	tu_repo_free(r);
}

static void test_live_ids(void **state)
{
	(void)state;
	if (!upstream[0])
		skip();
	live_ids(&rq_oid_sha1);
	live_ids(&rq_oid_sha256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_descriptors),	  cmocka_unit_test(test_parse_widths),
	    cmocka_unit_test(test_parse_strict),  cmocka_unit_test(test_prefix),
	    cmocka_unit_test(test_compare),	  cmocka_unit_test(test_hash_recorded),
	    cmocka_unit_test(test_sha256_pieces), cmocka_unit_test(test_live_ids),
	};
	return cmocka_run_group_tests(tests, group_setup, tu_group_teardown);
}
