/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oidmap (the front end of rq_hindex): put/get/overwrite,
 * growth, collisions, missing keys, insertion order, deletion.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "rq_oidmap.h"

/* A real SHA-1 id: the hash of "key <i>" as a blob. */
static void key_of(size_t i, rq_oid *out)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "key %zu", i);
	git_oid g;
	assert_int_equal(git_odb_hash(&g, buf, (size_t)n, GIT_OBJECT_BLOB), 0);
	rq_oid_from_git(out, &g);
}

/* Ids that share their first 8 bytes (the map's hash): all collide. */
static void colliding_key(size_t i, rq_oid *out)
{
	memset(out, 0, sizeof(*out));
	memset(out->id, 0xab, 8);
	out->id[16] = (unsigned char)(i >> 8);
	out->id[17] = (unsigned char)i;
	out->id[19] = 1;
}

static void test_empty_map(void **state)
{
	rq_oidmap m;
	rq_oid k;
	size_t v = 77;

	(void)state;
	rq_oidmap_init(&m);
	assert_int_equal(m.len, 0);
	key_of(1, &k);
	assert_int_equal(rq_oidmap_get(&m, &k, &v), 0);
	assert_int_equal(v, 77);
	rq_oidmap_free(&m);
	/* free twice (after the memset) and free of an empty map are fine */
	rq_oidmap_free(&m);
	assert_null(m.keys);
	assert_int_equal(m.cap, 0);
}

static void test_put_get_overwrite(void **state)
{
	rq_oidmap m;
	rq_oid a, b, c;
	size_t v = 0;

	(void)state;
	rq_oidmap_init(&m);
	key_of(1, &a);
	key_of(2, &b);
	key_of(3, &c);
	assert_int_equal(rq_oidmap_put(&m, &a, 10), 0);
	assert_int_equal(rq_oidmap_put(&m, &b, 20), 0);
	assert_int_equal(m.len, 2);
	assert_int_equal(rq_oidmap_get(&m, &a, &v), 1);
	assert_int_equal(v, 10);
	assert_int_equal(rq_oidmap_get(&m, &b, &v), 1);
	assert_int_equal(v, 20);
	/* NULL val: presence only */
	assert_int_equal(rq_oidmap_get(&m, &a, NULL), 1);
	/* missing key: 0 and *val untouched */
	v = 999;
	assert_int_equal(rq_oidmap_get(&m, &c, &v), 0);
	assert_int_equal(v, 999);
	/* overwrite keeps len */
	assert_int_equal(rq_oidmap_put(&m, &a, 11), 0);
	assert_int_equal(m.len, 2);
	assert_int_equal(rq_oidmap_get(&m, &a, &v), 1);
	assert_int_equal(v, 11);
	assert_int_equal(rq_oidmap_get(&m, &b, &v), 1);
	assert_int_equal(v, 20);
	/* value 0 and SIZE_MAX are stored as given */
	assert_int_equal(rq_oidmap_put(&m, &c, 0), 0);
	v = 5;
	assert_int_equal(rq_oidmap_get(&m, &c, &v), 1);
	assert_int_equal(v, 0);
	assert_int_equal(rq_oidmap_put(&m, &c, SIZE_MAX), 0);
	assert_int_equal(rq_oidmap_get(&m, &c, &v), 1);
	assert_true(v == SIZE_MAX);
	assert_int_equal(m.len, 3);
	rq_oidmap_free(&m);
}

static void test_growth(void **state)
{
	const size_t n = 20000;
	rq_oidmap m;
	rq_oid k;
	size_t v;

	(void)state;
	rq_oidmap_init(&m);
	for (size_t i = 0; i < n; i++) {
		key_of(i, &k);
		assert_int_equal(rq_oidmap_put(&m, &k, i * 3), 0);
		assert_int_equal(m.len, i + 1);
	}
	/* the index is a power of two and at most half full */
	assert_true(m.index.nslot >= 2 * n);
	assert_int_equal(m.index.nslot & (m.index.nslot - 1), 0);
	assert_int_equal(m.index.n, n);
	/* entries stay in insertion order */
	key_of(n / 3, &k);
	assert_true(rq_oid_eq(&m.keys[n / 3], &k));
	for (size_t i = 0; i < n; i++) {
		key_of(i, &k);
		v = 0;
		assert_int_equal(rq_oidmap_get(&m, &k, &v), 1);
		assert_int_equal(v, i * 3);
	}
	/* keys never put are missing */
	for (size_t i = n; i < n + 2000; i++) {
		key_of(i, &k);
		assert_int_equal(rq_oidmap_get(&m, &k, &v), 0);
	}
	/* overwrite every other one after growth */
	for (size_t i = 0; i < n; i += 2) {
		key_of(i, &k);
		assert_int_equal(rq_oidmap_put(&m, &k, i), 0);
	}
	assert_int_equal(m.len, n);
	for (size_t i = 0; i < n; i++) {
		key_of(i, &k);
		assert_int_equal(rq_oidmap_get(&m, &k, &v), 1);
		assert_int_equal(v, i % 2 ? i * 3 : i);
	}
	rq_oidmap_free(&m);
}

static void test_collisions(void **state)
{
	const size_t n = 3000;
	rq_oidmap m;
	rq_oid k;
	size_t v;

	(void)state;
	rq_oidmap_init(&m);
	for (size_t i = 0; i < n; i++) {
		colliding_key(i, &k);
		assert_int_equal(rq_oidmap_put(&m, &k, i + 1), 0);
	}
	assert_int_equal(m.len, n);
	for (size_t i = 0; i < n; i++) {
		colliding_key(i, &k);
		assert_int_equal(rq_oidmap_get(&m, &k, &v), 1);
		assert_int_equal(v, i + 1);
	}
	/* same hash, never inserted */
	colliding_key(n + 5, &k);
	assert_int_equal(rq_oidmap_get(&m, &k, &v), 0);
	/* overwrite inside the probe chain */
	colliding_key(n / 2, &k);
	assert_int_equal(rq_oidmap_put(&m, &k, 42), 0);
	assert_int_equal(m.len, n);
	assert_int_equal(rq_oidmap_get(&m, &k, &v), 1);
	assert_int_equal(v, 42);
	rq_oidmap_free(&m);
}

/* SHA-256 ids that differ only past the 20th byte are different keys. */
static void test_sha256_width(void **state)
{
	rq_oidmap m;
	rq_oid a, b;
	size_t v = 0;

	(void)state;
	rq_oidmap_init(&m);
	memset(&a, 0x5c, sizeof(a));
	b = a;
	b.id[31] = 0x5d;
	assert_int_equal(rq_oidmap_put(&m, &a, 1), 0);
	assert_int_equal(rq_oidmap_get(&m, &b, &v), 0);
	assert_int_equal(rq_oidmap_put(&m, &b, 2), 0);
	assert_int_equal(m.len, 2);
	assert_int_equal(rq_oidmap_get(&m, &a, &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(rq_oidmap_get(&m, &b, &v), 1);
	assert_int_equal(v, 2);
	rq_oidmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_map),	 cmocka_unit_test(test_put_get_overwrite),
	    cmocka_unit_test(test_growth),	 cmocka_unit_test(test_collisions),
	    cmocka_unit_test(test_sha256_width),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
