/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_outcome: the states of a keep-going replay's commits and the outcome
 * of its refs, on hand-made chains (no repository): skips below a
 * conflict, the ref nearest to a conflict blocks those stacked on it,
 * branches sharing a conflicting commit no ref points at each conflict,
 * a merge commit waits on all of its parents, the states after a parallel
 * replay, the refs at the end.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_outcome.h"

/*
 * Walk order 0..9, parents:
 *   0 <- 1 <- 2 <- 3        (A at 1, B at 3: stacked on A)
 *   0 <- 4                  (C at 4: shares 0)
 *   5 <- 6                  (D at 6)
 *   7, 8 <- nothing         (E at 8, independent; 7 unnamed)
 *   3, 6 <- 9               (F at 9: a merge of B and D)
 */
#define NC 10
static const size_t first[NC + 1] = {0, 0, 1, 2, 3, 4, 4, 5, 5, 5, 7};
static const size_t parents[7] = {0, 1, 2, 0, 5, 3, 6};

static void make(rq_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->n = NC;
	o->first = malloc(sizeof(first));
	o->parents = malloc(sizeof(parents));
	o->state = calloc(NC, 1);
	assert_non_null(o->first);
	assert_non_null(o->parents);
	assert_non_null(o->state);
	memcpy(o->first, first, sizeof(first));
	memcpy(o->parents, parents, sizeof(parents));
}

/* Pick in order, with the commits in `conflicts` conflicting. */
static void pick_all(rq_outcome *o, rq_replay_result *res, const int *conflicts)
{
	rq_oid id;
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
		assert_int_equal(rq_outcome_add_failure(res, i, &id, 0, &c, &err), 0);
	}
}

static void add_refs(rq_outcome *o, rq_replay_result *res)
{
	static const struct {
		const char *ref;
		size_t at;
	} refs[] = {{"A", 1}, {"B", 3}, {"C", 4}, {"D", 6}, {"E", 8}, {"F", 9}};
	rq_oid z;
	rq_error err;

	memset(&z, 0, sizeof(z));
	for (size_t i = 0; i < 6; i++) {
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
	static const int none[NC] = {0};
	(void)state;
	check(none, "A:ok B:ok C:ok D:ok E:ok F:ok");
}

static void test_stacked(void **state)
{
	static const int at2[NC] = {[2] = 1}, at1[NC] = {[1] = 1};
	(void)state;
	/* 2 is B's own commit (above A): B conflicts, A is fine; the merge F
	 * waits on B */
	check(at2, "A:ok B:conflict C:ok D:ok E:ok F:blocked(B@2)");
	/* 1 is A's: B waits on A, and F on A, the nearest to it */
	check(at1, "A:conflict B:blocked(A@1) C:ok D:ok E:ok F:blocked(A@1)");
}

static void test_shared(void **state)
{
	static const int at0[NC] = {[0] = 1}, two[NC] = {[1] = 1, [6] = 1};
	(void)state;
	/* 0 has no ref: A and C each conflict; B waits on A, the nearest */
	check(at0, "A:conflict B:blocked(A@0) C:conflict D:ok E:ok F:blocked(A@0)");
	/* F waits on its first parent that did not replay */
	check(two, "A:conflict B:blocked(A@1) C:ok D:conflict E:ok F:blocked(A@1)");
}

/* A merge whose second parent conflicted waits on it; the merge's own
 * conflict is its own. */
static void test_merge(void **state)
{
	static const int at6[NC] = {[6] = 1}, at9[NC] = {[9] = 1};
	(void)state;
	check(at6, "A:ok B:ok C:ok D:conflict E:ok F:blocked(D@6)");
	check(at9, "A:ok B:ok C:ok D:ok E:ok F:conflict");
}

/* A ref at the end (--advance): it moves only when nothing conflicted. */
static void test_end_ref(void **state)
{
	rq_replay_result res;
	rq_conflicts c = {0};
	rq_oid z;
	rq_error err;

	(void)state;
	memset(&res, 0, sizeof(res));
	memset(&z, 0, sizeof(z));
	assert_int_equal(rq_conflicts_add(&c, "p", RQ_CONFLICT_ADD_ADD), 0);
	assert_int_equal(rq_outcome_add_failure(&res, SIZE_MAX, &z, 0, &c, &err), 0);
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
	    cmocka_unit_test(test_clean),   cmocka_unit_test(test_stacked),
	    cmocka_unit_test(test_shared),  cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_end_ref),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
