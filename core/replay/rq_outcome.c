/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_outcome: the states of a --keep-going replay's commits and the
 * outcome of its refs (see rq_outcome.h for the rules).
 */
#include "rq_outcome.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_oidmap.h"

/* Number the parents of every commit that are in the range (walk order). */
static int fill_parents(rq_outcome *o, const rq_cobj_commit *const *commits, const rq_oidmap *idx,
			rq_error *err)
{
	size_t k = 0, cap = 0;

	for (size_t i = 0; i < o->n; i++) {
		size_t np = commits[i]->nparents;
		o->first[i] = k;
		for (size_t j = 0; j < np; j++) {
			size_t p, *nv;
			if (!rq_oidmap_get(idx, &commits[i]->parents[j], &p))
				continue;
			if (!(nv = rq_mem_grow(o->parents, &cap, k + 1, sizeof(*nv), 64)))
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			o->parents = nv;
			o->parents[k++] = p;
		}
	}
	o->first[o->n] = k;
	return 0;
}

int rq_outcome_init(rq_outcome *o, const rq_cobj_commit *const *commits, size_t n, rq_error *err)
{
	rq_oidmap idx;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->n = n;
	o->first = malloc((n + 1) * sizeof(*o->first));
	o->state = calloc(n + 1, 1);
	if (!o->first || !o->state)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_oidmap_init(&idx);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (rq_oidmap_put(&idx, &commits[i]->id, i) < 0)
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rc == 0)
		rc = fill_parents(o, commits, &idx, err);
	rq_oidmap_free(&idx);
	return rc;
}

void rq_outcome_free(rq_outcome *o)
{
	free(o->first);
	free(o->parents);
	free(o->state);
	memset(o, 0, sizeof(*o));
}

/* The first parent of i in the range that did not replay; SIZE_MAX: none. */
static size_t blocking_parent(const rq_outcome *o, size_t i)
{
	for (size_t k = o->first[i]; k < o->first[i + 1]; k++)
		if (o->state[o->parents[k]] != RQ_OUTCOME_OK)
			return o->parents[k];
	return SIZE_MAX;
}

int rq_outcome_skip(rq_outcome *o, size_t i)
{
	if (blocking_parent(o, i) == SIZE_MAX)
		return 0;
	o->state[i] = RQ_OUTCOME_SKIPPED;
	return 1;
}

void rq_outcome_mark(rq_outcome *o, size_t i, int r)
{
	o->state[i] = r == 0 ? RQ_OUTCOME_OK : RQ_OUTCOME_CONFLICT;
}

int rq_outcome_add_failure(rq_replay_result *res, size_t index, const rq_oid *commit, int merge,
			   rq_conflicts *conf, rq_error *err)
{
	rq_pick_conflict *v =
	    rq_mem_grow(res->failed, &res->failed_cap, res->nfailed + 1, sizeof(*v), 8);

	if (!v) {
		rq_conflicts_free(conf);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	res->failed = v;
	v += res->nfailed++;
	v->index = index;
	v->merge = merge;
	v->commit = *commit;
	v->conflicts = *conf;
	memset(conf, 0, sizeof(*conf));
	return 0;
}

static int cmp_failure(const void *a, const void *b)
{
	size_t x = ((const rq_pick_conflict *)a)->index, y = ((const rq_pick_conflict *)b)->index;
	return x < y ? -1 : x > y;
}

void rq_outcome_settle(rq_outcome *o, rq_replay_result *res)
{
	size_t k = 0;

	if (res->nfailed > 1)
		qsort(res->failed, res->nfailed, sizeof(*res->failed), cmp_failure);
	for (size_t i = 0; i < o->n; i++) {
		if (k < res->nfailed && res->failed[k].index == i) {
			o->state[i] = RQ_OUTCOME_CONFLICT;
			k++;
		} else if (blocking_parent(o, i) != SIZE_MAX) {
			o->state[i] = RQ_OUTCOME_SKIPPED;
		} else {
			o->state[i] = RQ_OUTCOME_OK;
		}
	}
}

int rq_outcome_add_ref(rq_replay_result *res, const char *ref, const rq_oid *old_id,
		       const rq_oid *new_id, size_t at, rq_error *err)
{
	rq_ref_outcome *v = rq_mem_grow(res->refs, &res->refs_cap, res->nrefs + 1, sizeof(*v), 8);

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	res->refs = v;
	v += res->nrefs;
	memset(v, 0, sizeof(*v));
	if (!(v->ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	res->nrefs++;
	v->old_id = *old_id;
	if (new_id)
		v->new_id = *new_id;
	v->status = new_id ? RQ_REF_OK : RQ_REF_CONFLICT;
	v->at = at;
	return 0;
}

/* The entry of res->failed for the pick at walk index i (there is one). */
static size_t failure_of(const rq_replay_result *res, size_t i)
{
	size_t lo = 0, hi = res->nfailed;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (res->failed[mid].index <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A ref that does not move, at walk index at: down its chain of parents
 * (through a merge, its first parent that did not replay) to the
 * conflicting pick; the ref nearest to that pick on the way (first_ref at
 * each walk index, SIZE_MAX: none), if any, blocks it.
 */
static int resolve_one(const rq_outcome *o, rq_replay_result *res, size_t r,
		       const size_t *first_ref, rq_error *err)
{
	rq_ref_outcome *ro = &res->refs[r];
	size_t j = ro->at, owner = SIZE_MAX;

	while (o->state[j] != RQ_OUTCOME_CONFLICT) {
		j = blocking_parent(o, j);
		if (j == SIZE_MAX)
			return rq_error_set(err, RQ_E_INTERNAL, "a skipped commit without a cause");
		if (first_ref[j] != SIZE_MAX)
			owner = first_ref[j];
	}
	ro->failed = failure_of(res, j);
	ro->status = owner == SIZE_MAX ? RQ_REF_CONFLICT : RQ_REF_BLOCKED;
	if (owner != SIZE_MAX && !(ro->blocked_by = strdup(res->refs[owner].ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* Statuses of the refs at walk commits (keep-going picks). */
static int resolve_walk_refs(const rq_outcome *o, rq_replay_result *res, rq_error *err)
{
	size_t *first_ref = malloc((o->n + 1) * sizeof(*first_ref));
	int rc = 0;

	if (!first_ref)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < o->n; i++)
		first_ref[i] = SIZE_MAX;
	for (size_t r = 0; r < res->nrefs; r++)
		if (res->refs[r].at != SIZE_MAX && first_ref[res->refs[r].at] == SIZE_MAX)
			first_ref[res->refs[r].at] = r;
	for (size_t r = 0; r < res->nrefs && rc == 0; r++)
		if (res->refs[r].status != RQ_REF_OK && res->refs[r].at != SIZE_MAX)
			rc = resolve_one(o, res, r, first_ref, err);
	free(first_ref);
	return rc;
}

/* res->conflicts and conflict_commit: a copy of the first failure's. */
static int copy_first(rq_replay_result *res, rq_error *err)
{
	const rq_pick_conflict *f = &res->failed[0];

	rq_conflicts_free(&res->conflicts);
	res->conflicted = 1;
	res->conflict_merge = f->merge;
	res->conflict_commit = f->commit;
	for (size_t k = 0; k < f->conflicts.n; k++)
		if (rq_conflicts_add(&res->conflicts, f->conflicts.v[k].path,
				     f->conflicts.v[k].kind) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

int rq_outcome_resolve(const rq_outcome *o, rq_replay_result *res, rq_error *err)
{
	res->keep_going = 1;
	if (o && resolve_walk_refs(o, res, err) < 0)
		return -1;
	for (size_t r = 0; r < res->nrefs; r++)
		if (res->refs[r].at == SIZE_MAX && res->refs[r].status != RQ_REF_OK)
			res->refs[r].failed = 0; /* the ref at the end: the first conflict */
	return res->nfailed ? copy_first(res, err) : 0;
}

void rq_outcome_result_free(rq_replay_result *res)
{
	for (size_t r = 0; r < res->nrefs; r++) {
		free(res->refs[r].ref);
		free(res->refs[r].blocked_by);
	}
	free(res->refs);
	for (size_t k = 0; k < res->nfailed; k++)
		rq_conflicts_free(&res->failed[k].conflicts);
	free(res->failed);
	res->refs = NULL;
	res->failed = NULL;
	res->nrefs = res->refs_cap = res->nfailed = res->failed_cap = 0;
}

const char *rq_outcome_status_name(rq_ref_status status)
{
	switch (status) {
	case RQ_REF_OK:
		return "ok";
	case RQ_REF_BLOCKED:
		return "blocked";
	default:
		return "conflict";
	}
}
