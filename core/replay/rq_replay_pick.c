/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's replay.c and builtin/replay.c (Elijah Newren, Christian Couder) */
/*
 * rq_replay_pick: the picks of a replay in this process (rq_replay_state.h):
 * each commit merged onto its new parent (rq_merge) and written
 * (rq_commit) into the replay's memory store, a merge commit remerged
 * (rq_remerge), the range in order.
 */
#include "rq_replay_pick.h"

#include <stdlib.h>

#include "rq_odb_mem.h"
#include "rq_reach.h"
#include "rq_remerge.h"
#include "rq_testhook.h"

int rq_replay_pick_commit_tree(rq_replay_state *rp, const rq_oid *commit, rq_oid *tree)
{
	const rq_cobj_commit *c = NULL;

	if (rq_cobj_get(rp->commits, commit, &c, rp->err) < 0)
		return -1;
	*tree = c->tree;
	return 0;
}

static int ensure_empty_tree(rq_replay_state *rp)
{
	rq_oid id;
	if (rq_odb_mem_write(&id, rp->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(rp->err, "cannot write the empty tree");
	return 0;
}

/* The three sides of one pick (a revert swaps base and theirs). */
typedef struct pick_sides {
	const rq_oid *base_tree;	   /* the picked commit's parent's tree; NULL: none */
	const rq_oid *ours_id, *ours_tree; /* where the pick lands */
	rq_oid parent_tree;
	rq_oid kept; /* the parent itself, where it stays (rq_parents) */
} pick_sides;

/* base: the commit's first parent; ours: the new form of that parent when
 * it was replayed, else the target (a revert: the last commit made), or,
 * in a range with merges, the parent itself where rq_parents keeps it. */
static int find_sides(rq_replay_state *rp, size_t i, const rq_oid *last, const rq_oid *last_tree,
		      pick_sides *ps)
{
	const rq_cobj_commit *c = rp->walk.commits[i];
	int have_parent = c->nparents > 0;
	size_t pidx;

	ps->base_tree = NULL;
	if (have_parent) {
		if (rq_replay_pick_commit_tree(rp, &c->parents[0], &ps->parent_tree) < 0)
			return -1;
		ps->base_tree = &ps->parent_tree;
	}
	if (rp->opts->mode == RQ_MODE_REVERT) {
		ps->ours_id = last;
		ps->ours_tree = last_tree;
	} else if (!have_parent && rq_parents_keeps_root(rp->parents, i)) {
		ps->ours_id = NULL; /* a root stays a root */
		ps->ours_tree = &rp->algo->empty_tree;
	} else if (have_parent && rq_oidmap_get(&rp->map, &c->parents[0], &pidx)) {
		ps->ours_id = &rp->new_ids[pidx];
		ps->ours_tree = &rp->new_trees[pidx];
	} else if (have_parent && !rq_parents_onto(rp->parents, i, 0, &c->parents[0])) {
		ps->kept = c->parents[0];
		ps->ours_id = &ps->kept;
		ps->ours_tree = &ps->parent_tree;
	} else {
		ps->ours_id = &rp->onto;
		ps->ours_tree = &rp->onto_tree;
	}
	return 0;
}

/* The tree merge of one pick; 0 clean (*merged), 1 conflict, -1 error. */
static int merge_sides(rq_replay_state *rp, const rq_cobj_commit *c, const pick_sides *ps,
		       const rq_oid *empty, rq_oid *merged)
{
	const rq_oid *pick_tree = &c->tree;
	int rc;

	if (rp->opts->mode == RQ_MODE_REVERT) {
		if (!ps->base_tree && ensure_empty_tree(rp) < 0)
			return -1;
		rc = rq_merger_merge(rp->merger, pick_tree, ps->ours_tree,
				     ps->base_tree ? ps->base_tree : empty, merged,
				     &rp->res->conflicts, rp->err);
	} else {
		rc = rq_merger_merge(rp->merger, ps->base_tree, ps->ours_tree, pick_tree, merged,
				     &rp->res->conflicts, rp->err);
	}
	if (rc == 1) {
		rp->res->conflicted = 1;
		rp->res->conflict_merge = 0;
		rp->res->conflict_commit = c->id;
	}
	return rc;
}

/* A pick that changed something but became empty: 1 dropped (as --empty
 * says), 0 kept, -1 aborted (RQ_E_EMPTY_COMMIT). */
static int drop_empty(rq_replay_state *rp, const rq_cobj_commit *c, const pick_sides *ps,
		      const rq_oid *empty, const rq_oid *merged)
{
	const rq_oid *pick_tree = &c->tree;
	int was_empty = rq_oid_eq(pick_tree, ps->base_tree ? ps->base_tree : empty);

	if (!rq_oid_eq(merged, ps->ours_tree) || was_empty)
		return 0;
	if (rp->opts->empty == RQ_EMPTY_ABORT) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rq_oid_fmt(hex, &c->id, rp->algo);
		return rq_error_set(rp->err, RQ_E_EMPTY_COMMIT, "commit %s became empty", hex);
	}
	return rp->opts->empty == RQ_EMPTY_DROP;
}

/* ---- merge commits (rq_remerge) ---- */

/*
 * Where parent k of commit i goes: its new form when it was replayed, else
 * the new base or itself, as rq_parents decides (the new base whenever
 * the range holds no merge: git replay's rule). *tree: its tree.
 */
static int new_parent(rq_replay_state *rp, size_t i, unsigned k, rq_oid *out, rq_oid *tree)
{
	const rq_oid *p = &rp->walk.commits[i]->parents[k];
	size_t idx;

	if (rq_oidmap_get(&rp->map, p, &idx)) {
		*out = rp->new_ids[idx];
		*tree = rp->new_trees[idx];
		return 0;
	}
	if (rq_parents_onto(rp->parents, i, k, p)) {
		*out = rp->onto;
		*tree = rp->onto_tree;
		return 0;
	}
	*out = *p;
	return rq_replay_pick_commit_tree(rp, p, tree);
}

/* A commit the replay wrote, ranked for rq_remerge's merge bases: its walk
 * index (a commit written twice keeps its first). 0, -1. */
static int written(rq_replay_state *rp, const rq_oid *id, size_t i)
{
	size_t v;

	if (!rq_oidmap_get(&rp->ranks, id, &v) && rq_oidmap_put(&rp->ranks, id, i) < 0)
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* Drop repeated parents (git commit-tree's "duplicate parent ignored"). */
static size_t unique_parents(rq_oid *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && !rq_oid_eq(&v[j], &v[i]))
			j++;
		if (j == k)
			v[k++] = v[i];
	}
	return k;
}

/*
 * A replayed merge that brings nothing: its tree is its first parent's and
 * every other parent is already in the first (rebase-merges skips such a
 * merge: "skip merging an ancestor of HEAD"). 1 when so, 0, -1.
 */
static int merge_became_empty(rq_replay_state *rp, const rq_oid *parents, size_t n,
			      const rq_oid *tree, const rq_oid *first_tree)
{
	if (!rq_oid_eq(tree, first_tree))
		return 0;
	rq_reach_reader rd = rq_cobj_reach_reader(rp->commits);

	for (size_t k = 1; k < n; k++) {
		int r = rq_reach_descends(&rd, &parents[0], &parents[k], rp->err);
		if (r < 0)
			return -1;
		if (!r)
			return 0;
	}
	return 1;
}

/* The merge's new commit (1), or the first parent when it became empty
 * and --empty drops it (0). -1: --empty=abort (RQ_E_EMPTY_COMMIT), or an
 * error. */
static int write_merge(rq_replay_state *rp, size_t i, rq_oid *parents, size_t np,
		       const rq_oid *tree, const rq_oid *first_tree, rq_oid *new_id)
{
	const rq_cobj_commit *c = rp->walk.commits[i];
	int empty = merge_became_empty(rp, parents, np, tree, first_tree), rc;

	if (empty < 0)
		return -1;
	if (empty && rp->opts->empty == RQ_EMPTY_ABORT) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rq_oid_fmt(hex, &c->id, rp->algo);
		return rq_error_set(rp->err, RQ_E_EMPTY_COMMIT, "commit %s became empty", hex);
	}
	if (empty && rp->opts->empty == RQ_EMPTY_DROP) {
		*new_id = parents[0];
		rp->res->stats.dropped++;
		return 0;
	}
	rc = rq_commit_pick_parents(rp->odb, &rp->commit_cfg, &c->id, tree, parents, np,
				    rp->committer, new_id, rp->err);
	if (rc < 0)
		return -1;
	rp->warned[i] = (unsigned char)rc;
	rp->res->stats.picked++;
	return 1;
}

/*
 * Replay merge commit walk.commits[i] (rq_remerge): its parents mapped,
 * its tree the remerge's, its commit with all of its new parents. 0 done
 * (the commit map has it), 1 conflict, -1 error.
 */

static int pick_merge(rq_replay_state *rp, size_t i)
{
	const rq_cobj_commit *c = rp->walk.commits[i];
	size_t np = c->nparents;
	rq_oid *v = malloc(2 * np * sizeof(*v)), *orig = v, *nw = v + np, first_tree, tree, id;
	int rc = v ? 0 : rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");

	for (unsigned k = 0; k < np && rc == 0; k++) {
		rq_oid t;
		orig[k] = c->parents[k];
		rc = new_parent(rp, i, k, &nw[k], k ? &t : &first_tree);
	}
	if (rc == 0)
		rc = rq_remerge(rp->merger, rp->repo, &rp->ranks, orig, nw, np, &c->tree, &tree,
				&rp->res->conflicts, rp->err);
	if (rc == 1) {
		rp->res->conflicted = 1;
		rp->res->conflict_merge = 1;
		rp->res->conflict_commit = c->id;
	}
	if (rc == 0 &&
	    (rc = write_merge(rp, i, nw, unique_parents(nw, np), &tree, &first_tree, &id)) == 1)
		rc = written(rp, &id, i);
	if (rc == 0) {
		rp->res->stats.merge_commits++;
		rp->new_ids[i] = id;
		rp->new_trees[i] = tree;
		if (rq_oidmap_put(&rp->map, &c->id, i) < 0)
			rc = rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	}
	free(v);
	return rc;
}

/* Pick (or revert) walk.commits[i]: 0 done (the commit map has it), 1
 * conflict, -1 error. */
int rq_replay_pick_one(rq_replay_state *rp, size_t i, const rq_oid *last, const rq_oid *last_tree)
{
	const rq_cobj_commit *c = rp->walk.commits[i];
	const rq_oid *empty = &rp->algo->empty_tree;
	rq_oid merged, new_id;
	pick_sides ps;
	int rc;

	rq_odb_tmpdir_keepalive(rp->tmpdir, RQ_ODB_TMPDIR_KEEPALIVE_SECONDS);
	if (c->nparents > 1)
		return pick_merge(rp, i);
	if (find_sides(rp, i, last, last_tree, &ps) < 0)
		return -1;
	if ((rc = merge_sides(rp, c, &ps, empty, &merged)) != 0)
		return rc;
	if ((rc = drop_empty(rp, c, &ps, empty, &merged)) < 0)
		return -1;
	if (rc == 1) {
		new_id = *ps.ours_id;
		rp->res->stats.dropped++;
	} else {
		if (rp->opts->mode == RQ_MODE_REVERT)
			rc = rq_commit_revert(rp->odb, &rp->commit_cfg, &c->id, &merged, ps.ours_id,
					      rp->author, rp->committer, &new_id, rp->err);
		else
			rc = rq_commit_pick(rp->odb, &rp->commit_cfg, &c->id, &merged, ps.ours_id,
					    rp->committer, &new_id, rp->err);
		if (rc < 0 || (rp->parents && written(rp, &new_id, i) < 0))
			return -1;
		rp->warned[i] = (unsigned char)rc;
		rp->res->stats.picked++;
	}
	rp->new_ids[i] = new_id;
	rp->new_trees[i] = merged;
	if (rq_oidmap_put(&rp->map, &c->id, i) < 0)
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/*
 * Pick every commit, in order.
 * 0 clean, 1 conflict, -1 error; *fail is the index of the failing pick.
 */
int rq_replay_pick_range(rq_replay_state *rp, size_t *fail)
{
	rq_oid last, last_tree;

	last = rp->onto;
	last_tree = rp->onto_tree;
	if (rp->walk.n)
		rq_testhook_hold("pick");
	for (size_t i = 0; i < rp->walk.n; i++) {
		int r;
		if (rp->opts->cancel && *rp->opts->cancel) {
			*fail = i;
			return rq_error_set(rp->err, RQ_E_INTERRUPTED, "interrupted");
		}
		r = rq_replay_pick_one(rp, i, &last, &last_tree);
		if (r != 0) {
			*fail = i;
			return r;
		}
		last = rp->new_ids[i];
		last_tree = rp->new_trees[i];
	}
	return 0;
}

/* A conflicting pick of a keep-going replay goes to res->failed (its
 * walk index: SIZE_MAX when not known), so that the result stays clean for
 * the next pick. 0 or -1. */
int rq_replay_pick_keep_conflict(rq_replay_state *rp, size_t i)
{
	rq_replay_result *res = rp->res;

	res->conflicted = 0;
	return rq_outcome_add_failure(res, i, &res->conflict_commit, res->conflict_merge,
				      &res->conflicts, rp->err);
}

/*
 * Keep-going: pick every commit whose parent replayed, in order; a
 * conflict is kept (res->failed) and the commits below it are skipped.
 * 0, or -1 on an error (which still stops the replay).
 */
int rq_replay_pick_range_kg(rq_replay_state *rp)
{
	if (rp->walk.n)
		rq_testhook_hold("pick");
	for (size_t i = 0; i < rp->walk.n; i++) {
		int r;
		if (rp->opts->cancel && *rp->opts->cancel)
			return rq_error_set(rp->err, RQ_E_INTERRUPTED, "interrupted");
		if (rq_outcome_skip(&rp->outcome, i))
			continue;
		if ((r = rq_replay_pick_one(rp, i, &rp->onto, &rp->onto_tree)) < 0)
			return -1;
		rq_outcome_mark(&rp->outcome, i, r);
		if (r == 1 && rq_replay_pick_keep_conflict(rp, i) < 0)
			return -1;
	}
	return 0;
}
