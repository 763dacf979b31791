/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_outcome: the states of a keep-going replay's commits and the outcome
 * of its refs, on hand-made chains (no repository): skips below a
 * conflict, the ref nearest to a conflict blocks those stacked on it,
 * branches sharing a conflicting commit no ref points at each conflict,
 * the states after a parallel replay, the refs at the end.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_outcome.h"

/*
 * Walk order 0..8, parents:
 *   0 <- 1 <- 2 <- 3        (A at 1, B at 3: stacked on A)
 *   0 <- 4                  (C at 4: shares 0)
 *   5 <- 6                  (D at 6)
 *   7, 8 <- nothing         (E at 8, independent; 7 unnamed)
 */
static const size_t parents[9] = {SIZE_MAX, 0, 1, 2, 0, SIZE_MAX, 5, SIZE_MAX, SIZE_MAX};

static void make(rq_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 9;
	o->parent = malloc(sizeof(parents));
	o->state = calloc(9, 1);
	assert_non_null(o->parent);
	assert_non_null(o->state);
	memcpy(o->parent, parents, sizeof(parents));
}

/* Pick in order, with the commits in `conflicts` conflicting. */
static void pick_all(rq_outcome *o, rq_replay_result *res, const int *conflicts)
{
	git_oid id;
	rq_error err;

	memset(&id, 0, sizeof(id));
	for (size_t i = 0; i < o->n; i++) {
		rq_conflicts c = {0};
		if (rq_outcome_skip(o, i))
			continue;
		rq_outcome_mark(o, i, conflicts[i]);
		if (!conflicts[i])
			continue;
		id.id[0] = (unsigned char)i;
		assert_int_equal(rq_conflicts_add(&c, "p", RQ_CONFLICT_CONTENT), 0);
		assert_int_equal(rq_outcome_add_failure(res, i, &id, &c, &err), 0);
	}
}

static void add_refs(rq_outcome *o, rq_replay_result *res)
{
	static const struct {
		const char *ref;
		size_t at;
	} refs[] = {{"A", 1}, {"B", 3}, {"C", 4}, {"D", 6}, {"E", 8}};
	git_oid z;
	rq_error err;

	memset(&z, 0, sizeof(z));
	for (size_t i = 0; i < 5; i++) {
		int ok = o->state[refs[i].at] == RQ_OUTCOME_OK;
		assert_int_equal(
		    rq_outcome_add_ref(res, refs[i].ref, &z, ok ? &z : NULL, refs[i].at, &err), 0);
	}
	assert_int_equal(rq_outcome_resolve(o, res, &err), 0);
}

static const char *summary(const rq_replay_result *res)
{
	static char buf[256];
	size_t n = 0;

	for (size_t i = 0; i < res->nrefs; i++) {
		const rq_ref_outcome *r = &res->refs[i];
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s:%s", i ? " " : "", r->ref,
				      rq_outcome_status_name(r->status));
		if (r->status == RQ_REF_BLOCKED)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "(%s@%d)", r->blocked_by,
					      (int)res->failed[r->failed].index);
	}
	return buf;
}

static void check(const int *conflicts, const char *want)
{
	rq_outcome o;
	rq_replay_result res;

	memset(&res, 0, sizeof(res));
	make(&o);
	pick_all(&o, &res, conflicts);
	add_refs(&o, &res);
	assert_string_equal(summary(&res), want);
	/* the same states again from the failures alone (a parallel replay):
	 * settle must rebuild every commit's state the picks gave */
	unsigned char picked[16];
	assert_true(o.n <= sizeof(picked));
	memcpy(picked, o.state, o.n);
	memset(o.state, 0, o.n);
	rq_outcome_settle(&o, &res);
	assert_memory_equal(o.state, picked, o.n);
	rq_replay_result_free(&res);
	rq_outcome_free(&o);
}

static void test_clean(void **state)
{
	static const int none[9] = {0};
	(void)state;
	check(none, "A:ok B:ok C:ok D:ok E:ok");
}

static void test_stacked(void **state)
{
	static const int at2[9] = {[2] = 1}, at1[9] = {[1] = 1};
	(void)state;
	/* 2 is B's own commit (above A): B conflicts, A is fine */
	check(at2, "A:ok B:conflict C:ok D:ok E:ok");
	/* 1 is A's: B waits on A */
	check(at1, "A:conflict B:blocked(A@1) C:ok D:ok E:ok");
}

static void test_shared(void **state)
{
	static const int at0[9] = {[0] = 1}, two[9] = {[1] = 1, [6] = 1};
	(void)state;
	/* 0 has no ref: A and C each conflict; B waits on A, the nearest */
	check(at0, "A:conflict B:blocked(A@0) C:conflict D:ok E:ok");
	check(two, "A:conflict B:blocked(A@1) C:ok D:conflict E:ok");
}

/* A ref at the end (--advance): it moves only when nothing conflicted. */
static void test_end_ref(void **state)
{
	rq_replay_result res;
	rq_conflicts c = {0};
	git_oid z;
	rq_error err;

	(void)state;
	memset(&res, 0, sizeof(res));
	memset(&z, 0, sizeof(z));
	assert_int_equal(rq_conflicts_add(&c, "p", RQ_CONFLICT_ADD_ADD), 0);
	assert_int_equal(rq_outcome_add_failure(&res, SIZE_MAX, &z, &c, &err), 0);
	assert_int_equal(rq_outcome_add_ref(&res, "refs/heads/rel", &z, NULL, SIZE_MAX, &err), 0);
	assert_int_equal(rq_outcome_resolve(NULL, &res, &err), 0);
	assert_int_equal(res.refs[0].status, RQ_REF_CONFLICT);
	assert_int_equal(res.refs[0].failed, 0);
	assert_int_equal(res.conflicted, 1);
	assert_int_equal(res.conflicts.n, 1);
	assert_int_equal(res.conflicts.v[0].kind, RQ_CONFLICT_ADD_ADD);
	rq_replay_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clean),
	    cmocka_unit_test(test_stacked),
	    cmocka_unit_test(test_shared),
	    cmocka_unit_test(test_end_ref),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
