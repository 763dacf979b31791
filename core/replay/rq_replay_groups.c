/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay_groups: the picks of a replay spread over its workers
 * (rq_replay_state.h): the commits cut into independent groups, handed to
 * rq_parallel, their outcome taken back; or, with too few commits or a
 * single group, every pick in this process.
 */
#include "rq_replay_groups.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_replay_pick.h"

/* Heap a pick is expected to add (objects read and written, merge memory),
 * reserved ahead of the picks (rq_mem_reserve): measured about 13 KiB on
 * the 100k-file corpus. */
#define RQ_RESERVE_PER_PICK ((size_t)12 << 10)

static size_t uf_find(size_t *p, size_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/*
 * Groups: a commit is in its parents' group when they are replayed too, so
 * a stacked branch goes with the branch below it and a merge joins the
 * groups of its parents. Returns the number of groups; group[i] numbers
 * them from 0 in order of appearance.
 */
static size_t compute_groups(rq_replay_state *rp, size_t *group, rq_error *err)
{
	size_t n = rp->walk.n, k = 0;
	size_t *uf = malloc((n + 1) * sizeof(*uf)), *label = malloc((n + 1) * sizeof(*label));
	rq_oidmap idx;

	rq_oidmap_init(&idx);
	if (!uf || !label) {
		free(uf);
		free(label);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		uf[i] = i;
		label[i] = SIZE_MAX;
		if (rq_oidmap_put(&idx, &rp->walk.commits[i]->id, i) < 0) {
			rq_error_set(err, RQ_E_NOMEM, "out of memory");
			k = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const rq_cobj_commit *c = rp->walk.commits[i];
		for (size_t j = 0; j < c->nparents; j++) {
			size_t p;
			if (rq_oidmap_get(&idx, &c->parents[j], &p))
				uf[uf_find(uf, i)] = uf_find(uf, p);
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = uf_find(uf, i);
		if (label[r] == SIZE_MAX)
			label[r] = k++;
		group[i] = label[r];
	}
out:
	rq_oidmap_free(&idx);
	free(uf);
	free(label);
	return k;
}

/* One commit of a group, for rq_parallel: its conflict or error is
 * handed over, so that this process's result stays clean for the next.
 * Keep-going: 2 for a commit below a conflict (not picked). */
static int pick_in_group(void *arg, size_t i, rq_conflicts *conf, rq_error *err)
{
	rq_replay_state *rp = arg;
	int r;

	if (rp->kg && rq_outcome_skip(&rp->outcome, i))
		return 2;
	r = rq_replay_pick_one(rp, i, &rp->onto, &rp->onto_tree);
	if (rp->kg && r >= 0)
		rq_outcome_mark(&rp->outcome, i, r);
	if (r == 1) {
		*conf = rp->res->conflicts;
		memset(&rp->res->conflicts, 0, sizeof(rp->res->conflicts));
		rp->res->conflicted = 0;
	} else if (r < 0) {
		*err = *rp->err;
		rq_error_clear(rp->err);
	}
	return r;
}

/* Keep-going: every worker's conflicts into res->failed, and the state of
 * every commit from them. 0 or -1. */
static int take_kept(rq_replay_state *rp, rq_parallel_kept *kept)
{
	int rc = 0;

	for (size_t k = 0; k < kept->n && rc == 0; k++) {
		size_t i = kept->v[k].index;
		rc = rq_outcome_add_failure(rp->res, i, &rp->walk.commits[i]->id,
					    rp->walk.commits[i]->nparents > 1,
					    &kept->v[k].conflicts, rp->err);
	}
	rq_parallel_kept_free(kept);
	if (rc == 0)
		rq_outcome_settle(&rp->outcome, rp->res);
	return rc;
}

/* A worker's counts for its report: its picks and its merger's. */
static void own_counts(void *arg, rq_parallel_counts *out)
{
	const rq_replay_state *rp = arg;
	const rq_merge_stats *ms = rq_merger_stats(rp->merger);

	out->picked = rp->res->stats.picked;
	out->dropped = rp->res->stats.dropped;
	out->merge_commits = rp->res->stats.merge_commits;
	out->merges_trivial = ms->trivial;
	out->merges_full = ms->full;
	out->merges_fallback = ms->fallback;
	out->scores_computed = ms->scores_computed;
	out->scores_reused = ms->scores_reused;
}

static void add_counts(rq_replay_stats *st, const rq_parallel_counts *c)
{
	st->picked += c->picked;
	st->dropped += c->dropped;
	st->merge_commits += c->merge_commits;
	st->merges_trivial += c->merges_trivial;
	st->merges_full += c->merges_full;
	st->merges_fallback += c->merges_fallback;
	st->scores_computed += c->scores_computed;
	st->scores_reused += c->scores_reused;
}

/* The groups, picked by this process and its workers. In a worker this does
 * not return. 0 clean, 1 conflict, -1 error. */
int rq_replay_groups_pick(rq_replay_state *rp, const size_t *group, size_t ngroups)
{
	size_t workers = (size_t)rq_parallel_workers(rp->par);
	rq_parallel_job job = {
	    .n = rp->walk.n,
	    .group = group,
	    .ngroups = ngroups,
	    .pick = pick_in_group,
	    .counts = own_counts,
	    .arg = rp,
	    .new_ids = rp->new_ids,
	    .new_trees = rp->new_trees,
	    .algo = rp->algo,
	    .warned = rp->warned,
	    .tmpdir = rp->tmpdir,
	    .cancel = rp->opts->cancel,
	    .keep_going = rp->kg,
	};
	rq_parallel_outcome out;
	int r;

	rq_mem_reserve(rp->walk.n / workers * RQ_RESERVE_PER_PICK);
	r = rq_parallel_run(rp->par, &job, &out, rp->err);
	add_counts(&rp->res->stats, &out.children);
	if (r != 0 && out.fail < rp->walk.n) /* picks after the first failure: none */
		memset(rp->warned + out.fail, 0, rp->walk.n - out.fail);
	rp->res->stats.parallel = ngroups < workers ? ngroups : workers;
	if (r == 0 && rp->kg && take_kept(rp, &out.kept) < 0)
		r = -1;
	if (r == 1) {
		rp->res->conflicted = 1;
		rp->res->conflict_commit = rp->walk.commits[out.fail]->id;
		rp->res->conflict_merge = rp->walk.commits[out.fail]->nparents > 1;
		rp->res->conflicts = out.conflicts;
	}
	if (r != 0) {
		rq_parallel_end(rp->par);
		rp->par = NULL;
	}
	return r;
}

/* One process after all: the workers are let go (a worker exits here). */
int rq_replay_groups_alone(rq_replay_state *rp)
{
	size_t fail = 0;

	rq_parallel_end(rp->par);
	rp->par = NULL;
	rq_mem_reserve(rp->walk.n * RQ_RESERVE_PER_PICK);
	rp->res->stats.parallel = 1;
	return rp->kg ? rq_replay_pick_range_kg(rp) : rq_replay_pick_range(rp, &fail);
}

/* Independent groups, when there are workers and enough commits: *group
 * (the caller frees it) and their number; 0 groups: pick in one process. */
int rq_replay_groups_plan(rq_replay_state *rp, size_t **group, size_t *ngroups)
{
	const rq_replay_opts *o = rp->opts;
	size_t min = o->jobs_auto ? RQ_PARALLEL_AUTO_MIN : RQ_PARALLEL_MIN_COMMITS;

	*group = NULL;
	*ngroups = 0;
	if (!rp->par || rp->walk.n < min)
		return 0;
	if (!(*group = malloc(rp->walk.n * sizeof(**group))))
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	if (!(*ngroups = compute_groups(rp, *group, rp->err))) {
		free(*group);
		*group = NULL;
		return -1;
	}
	return 0;
}
