/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's replay.c and builtin/replay.c (Elijah Newren, Christian Couder) */
/*
 * rq_replay: the replay driver. rq_replay_run() is six phases, read top
 * to bottom at the end of this file:
 *   1. start: the options checked, every object read through rq_odb, the
 *      identities, and (several branches with --jobs) the workers forked
 *      early by rq_parallel;
 *   2. resolve: the revisions (rq_revs) and the target, as git does;
 *   3. walk: the commits to replay (rq_walk) and the refs that may move;
 *   4. pick: each commit merged onto its new parent (rq_merge) and written
 *      (rq_commit) into the replay's memory store, in this process or in
 *      independent groups over the workers (rq_parallel);
 *   5. updates: the ref updates as git replay computes them (with
 *      --keep-going, every ref's outcome: rq_outcome);
 *   6. pack: the new objects become one pack (rq_odb_tmpdir, rq_odb_pack);
 *      not for a train's replays (opts->shared), which rq_train packs.
 * The ref updates are applied by the caller (rq_refs).
 */
#include "rq_replay.h"
#include "rq_clock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_commit.h"
#include "rq_mem.h"
#include "rq_odb_mem.h"
#include "rq_odb_tmpdir.h"
#include "rq_odb.h"
#include "rq_oidmap.h"
#include "rq_outcome.h"
#include "rq_parallel.h"
#include "rq_parents.h"
#include "rq_remerge.h"
#include "rq_revs.h"
#include "rq_sha1.h"
#include "rq_sign.h"
#include "rq_testhook.h"
#include "rq_trace.h"
#include "rq_walk.h"

/* Heap a pick is expected to add (objects read and written, merge memory),
 * reserved ahead of the picks (rq_mem_reserve): measured about 13 KiB on
 * the 100k-file corpus. */
#define RQ_RESERVE_PER_PICK ((size_t)12 << 10)

static const char *mode_option(rq_mode mode)
{
	switch (mode) {
	case RQ_MODE_ADVANCE:
		return "--advance";
	case RQ_MODE_REVERT:
		return "--revert";
	default:
		return "--onto";
	}
}

/* Local branches (and a detached HEAD) by the commit they point at. */
typedef struct ref_tip {
	git_oid oid;
	char *ref;
} ref_tip;

typedef struct ref_tips {
	ref_tip *v;
	size_t n, cap;
} ref_tips;

static void tips_free(ref_tips *tips)
{
	for (size_t i = 0; i < tips->n; i++)
		free(tips->v[i].ref);
	free(tips->v);
	memset(tips, 0, sizeof(*tips));
}

static int tips_add(ref_tips *tips, const char *ref, const git_oid *oid, rq_error *err)
{
	ref_tip *v = rq_mem_grow(tips->v, &tips->cap, tips->n + 1, sizeof(*v), 32);

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	tips->v = v;
	if (!(tips->v[tips->n].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&tips->v[tips->n].oid, oid);
	tips->n++;
	return 0;
}

static int cmp_tip_desc(const void *a, const void *b)
{
	return strcmp(((const ref_tip *)b)->ref, ((const ref_tip *)a)->ref);
}

/*
 * git lists a commit's decorations newest-added first, and adds the
 * branches in ref order and a detached HEAD after them: so per commit, a
 * detached HEAD comes first, then the branches in descending name order
 * (as upstream git replay prints them).
 */
static int load_tips(git_repository *repo, int with_head, ref_tips *tips, rq_error *err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	int rc;

	if (git_reference_iterator_glob_new(&it, repo, "refs/heads/*") < 0)
		return rq_error_git(err, "cannot list branches");
	while ((rc = git_reference_next(&ref, it)) == 0) {
		if (git_reference_type(ref) == GIT_REFERENCE_DIRECT &&
		    tips_add(tips, git_reference_name(ref), git_reference_target(ref), err) < 0) {
			git_reference_free(ref);
			git_reference_iterator_free(it);
			return -1;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return rq_error_git(err, "cannot list branches");
	qsort(tips->v, tips->n, sizeof(*tips->v), cmp_tip_desc);
	if (with_head && git_repository_head_detached(repo) == 1) {
		git_oid head;
		ref_tip h;
		if (git_reference_name_to_id(&head, repo, "HEAD") != 0)
			return 0;
		if (tips_add(tips, "HEAD", &head, err) < 0)
			return -1;
		h = tips->v[tips->n - 1];
		memmove(tips->v + 1, tips->v, (tips->n - 1) * sizeof(*tips->v));
		tips->v[0] = h;
	}
	return 0;
}

static int is_positive_ref(const rq_revs *revs, const char *ref)
{
	for (size_t i = 0; i < revs->n; i++)
		if (!revs->v[i].negative && revs->v[i].fullref && !strcmp(revs->v[i].fullref, ref))
			return 1;
	return 0;
}

static int commit_tree(git_repository *repo, const git_oid *commit, git_oid *tree, rq_error *err)
{
	git_commit *c = NULL;
	if (git_commit_lookup(&c, repo, commit) < 0)
		return rq_error_git(err, "cannot read commit");
	git_oid_cpy(tree, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

static int validate(const rq_replay_opts *o, rq_error *err)
{
	if (!o->target) /* an empty one is judged as git does, by resolve_target */
		return rq_error_set(err, RQ_E_USAGE,
				    "exactly one of --onto, --advance, or --revert is required");
	if (o->mode != RQ_MODE_ONTO && o->mode != RQ_MODE_ADVANCE && o->mode != RQ_MODE_REVERT)
		return rq_error_set(err, RQ_E_USAGE, "unknown replay mode");
	if (o->contained && o->mode != RQ_MODE_ONTO)
		return rq_error_set(err, RQ_E_USAGE,
				    "options '%s' and '%s' cannot be used together",
				    mode_option(o->mode), "--contained");
	if (o->ref && o->contained)
		return rq_error_set(err, RQ_E_USAGE,
				    "options '%s' and '%s' cannot be used together", "--ref",
				    "--contained");
	if (o->ref && (!rq_revs_refname_valid(o->ref) || !strncmp(o->ref, "HEAD", 5)))
		return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname",
				    o->ref); /* git's words */
	if (o->empty != RQ_EMPTY_DROP && o->empty != RQ_EMPTY_KEEP && o->empty != RQ_EMPTY_ABORT)
		return rq_error_set(err, RQ_E_USAGE, "unknown empty-commit mode");
	if (!o->nrevisions)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	return 0;
}

/* Everything one rq_replay_run() call holds. */
typedef struct replay {
	git_repository *repo;
	const rq_replay_opts *opts;
	rq_replay_result *res;
	rq_error *err;
	rq_revs revs;
	rq_walk walk;
	ref_tips tips;	       /* --onto: the refs a replay may move, by their commit */
	rq_odb_tmpdir *tmpdir; /* where the new objects go until the pack */
	rq_merger *merger;
	git_odb *odb;	  /* the repository's, writing into tmpdir's memory store */
	rq_oidmap map;	  /* original commit -> index in new_ids */
	git_oid *new_ids; /* replayed form of walk.commits[i] */
	git_oid *new_trees;
	unsigned char *warned; /* walk.commits[i]'s new commit was not UTF-8 (git warns) */
	rq_commit_cfg commit_cfg;
	git_oid onto, onto_tree;
	char *branch; /* --advance/--revert: full name */
	char committer[2 * RQ_IDENT_FIELD_MAX + 64];
	char author[2 * RQ_IDENT_FIELD_MAX + 64]; /* of a revert */
	size_t updates_cap;			  /* room in res->upd.updates */
	rq_parallel *par;	/* the forked workers; NULL: this process replays alone */
	double t0, t_pick;	/* when the call and its picks started (statistics) */
	int kg;			/* keep-going picks: every branch gets its own outcome */
	rq_outcome outcome;	/* with kg: the state of every commit */
	rq_merge_stats merges0; /* the merger's counts before the picks (a train's is shared) */
	rq_parents *parents;	/* where parents outside the range go (NULL: onto) */
	rq_oidmap ranks;	/* the commits written, by walk index (rq_remerge) */
} replay;

/* How many different commits the positive revisions name. */
static size_t distinct_tips(const rq_revs *revs)
{
	size_t n = 0;

	for (size_t i = 0; i < revs->n; i++) {
		size_t k = 0;
		if (revs->v[i].negative)
			continue;
		while (k < i &&
		       (revs->v[k].negative || !git_oid_equal(&revs->v[k].oid, &revs->v[i].oid)))
			k++;
		n += k == i;
	}
	return n;
}

static int resolve_target(replay *rp)
{
	const rq_replay_opts *o = rp->opts;
	rq_error *err = rp->err;

	if (!rp->revs.npositive)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	if (o->mode == RQ_MODE_ONTO) {
		if (rq_revs_resolve_commit(rp->repo, o->target, &rp->onto, err) < 0) {
			if (err->code == RQ_E_BAD_REVISION) /* git's words */
				rq_error_set(err, RQ_E_BAD_REVISION,
					     "'%s' is not a valid commit-ish for --onto",
					     o->target);
			return -1;
		}
		if (o->ref && distinct_tips(&rp->revs) > 1) /* as git: the same tip twice is one */
			return rq_error_set(err, RQ_E_USAGE,
					    "'--ref' cannot be used with multiple revision ranges");
		/* a positive revision that is no ref (an id, X^!) is replayed and
		 * updates nothing, as in git replay */
	} else {
		int n = rq_revs_dwim_ref(rp->repo, o->target, &rp->branch, NULL, err);
		if (n < 0)
			return -1;
		if (n > 1)
			return rq_error_set(err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.",
					    o->target);
		if (n == 0)
			return rq_error_set(err, RQ_E_NOT_A_REF,
					    "argument to %s must be a reference",
					    mode_option(o->mode));
		if (rq_revs_resolve_commit(rp->repo, o->target, &rp->onto, err) < 0)
			return -1;
		if (rp->revs.npositive > 1)
			return rq_error_set(err, RQ_E_USAGE,
					    "'%s' cannot be used with multiple revision ranges "
					    "because the ordering would be ill-defined",
					    mode_option(o->mode));
	}
	return commit_tree(rp->repo, &rp->onto, &rp->onto_tree, err);
}

/* The refs at walk.commits[i] that move (with --keep-going, whose outcome
 * is listed: they move when the commit replayed). */
static int tip_updates(replay *rp, size_t i)
{
	const git_oid *id = git_commit_id(rp->walk.commits[i]), *new_id = &rp->new_ids[i];
	int moves = !rp->kg || rp->outcome.state[i] == RQ_OUTCOME_OK;

	for (size_t t = 0; t < rp->tips.n; t++) {
		const ref_tip *tip = &rp->tips.v[t];
		if (!git_oid_equal(&tip->oid, id))
			continue;
		if (!rp->opts->contained && !is_positive_ref(&rp->revs, tip->ref))
			continue;
		if (moves && rq_replay_result_add_update(rp->res, &rp->updates_cap, tip->ref,
							 new_id, id, rp->err) < 0)
			return -1;
		if (rp->kg && rq_outcome_add_ref(rp->res, tip->ref, id, moves ? new_id : NULL, i,
						 rp->err) < 0)
			return -1;
	}
	return 0;
}

static int ensure_empty_tree(replay *rp)
{
	git_oid id;
	if (rq_odb_mem_write(&id, rp->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(rp->err, "cannot write the empty tree");
	return 0;
}

/* The three sides of one pick (a revert swaps base and theirs). */
typedef struct pick_sides {
	const git_oid *base_tree;	    /* the picked commit's parent's tree; NULL: none */
	const git_oid *ours_id, *ours_tree; /* where the pick lands */
	git_oid parent_tree;
	git_oid kept; /* the parent itself, where it stays (rq_parents) */
} pick_sides;

/* base: the commit's first parent; ours: the new form of that parent when
 * it was replayed, else the target (a revert: the last commit made), or,
 * in a range with merges, the parent itself where rq_parents keeps it. */
static int find_sides(replay *rp, size_t i, const git_oid *last, const git_oid *last_tree,
		      pick_sides *ps)
{
	const git_commit *c = rp->walk.commits[i];
	int have_parent = git_commit_parentcount(c) > 0;
	size_t pidx;

	ps->base_tree = NULL;
	if (have_parent) {
		if (commit_tree(rp->repo, git_commit_parent_id(c, 0), &ps->parent_tree, rp->err) <
		    0)
			return -1;
		ps->base_tree = &ps->parent_tree;
	}
	if (rp->opts->mode == RQ_MODE_REVERT) {
		ps->ours_id = last;
		ps->ours_tree = last_tree;
	} else if (!have_parent && rq_parents_keeps_root(rp->parents, i)) {
		ps->ours_id = NULL; /* a root stays a root */
		git_oid_fromstr(&ps->kept, RQ_EMPTY_TREE_HEX);
		ps->ours_tree = &ps->kept;
	} else if (have_parent && rq_oidmap_get(&rp->map, git_commit_parent_id(c, 0), &pidx)) {
		ps->ours_id = &rp->new_ids[pidx];
		ps->ours_tree = &rp->new_trees[pidx];
	} else if (have_parent && !rq_parents_onto(rp->parents, i, 0, git_commit_parent_id(c, 0))) {
		git_oid_cpy(&ps->kept, git_commit_parent_id(c, 0));
		ps->ours_id = &ps->kept;
		ps->ours_tree = &ps->parent_tree;
	} else {
		ps->ours_id = &rp->onto;
		ps->ours_tree = &rp->onto_tree;
	}
	return 0;
}

/* The tree merge of one pick; 0 clean (*merged), 1 conflict, -1 error. */
static int merge_sides(replay *rp, const git_commit *c, const pick_sides *ps, const git_oid *empty,
		       git_oid *merged)
{
	const git_oid *pick_tree = git_commit_tree_id(c);
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
		git_oid_cpy(&rp->res->conflict_commit, git_commit_id(c));
	}
	return rc;
}

/* A pick that changed something but became empty: 1 dropped (as --empty
 * says), 0 kept, -1 aborted (RQ_E_EMPTY_COMMIT). */
static int drop_empty(replay *rp, const git_commit *c, const pick_sides *ps, const git_oid *empty,
		      const git_oid *merged)
{
	const git_oid *pick_tree = git_commit_tree_id(c);
	int was_empty = git_oid_equal(pick_tree, ps->base_tree ? ps->base_tree : empty);

	if (!git_oid_equal(merged, ps->ours_tree) || was_empty)
		return 0;
	if (rp->opts->empty == RQ_EMPTY_ABORT) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
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
static int new_parent(replay *rp, size_t i, unsigned k, git_oid *out, git_oid *tree)
{
	const git_oid *p = git_commit_parent_id(rp->walk.commits[i], k);
	size_t idx;

	if (rq_oidmap_get(&rp->map, p, &idx)) {
		git_oid_cpy(out, &rp->new_ids[idx]);
		git_oid_cpy(tree, &rp->new_trees[idx]);
		return 0;
	}
	if (rq_parents_onto(rp->parents, i, k, p)) {
		git_oid_cpy(out, &rp->onto);
		git_oid_cpy(tree, &rp->onto_tree);
		return 0;
	}
	git_oid_cpy(out, p);
	return commit_tree(rp->repo, p, tree, rp->err);
}

/* A commit the replay wrote, ranked for rq_remerge's merge bases: its walk
 * index (a commit written twice keeps its first). 0, -1. */
static int written(replay *rp, const git_oid *id, size_t i)
{
	size_t v;

	if (!rq_oidmap_get(&rp->ranks, id, &v) && rq_oidmap_put(&rp->ranks, id, i) < 0)
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* Drop repeated parents (git commit-tree's "duplicate parent ignored"). */
static size_t unique_parents(git_oid *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && !git_oid_equal(&v[j], &v[i]))
			j++;
		if (j == k)
			git_oid_cpy(&v[k++], &v[i]);
	}
	return k;
}

/*
 * A replayed merge that brings nothing: its tree is its first parent's and
 * every other parent is already in the first (rebase-merges skips such a
 * merge: "skip merging an ancestor of HEAD"). 1 when so, 0, -1.
 */
static int merge_became_empty(replay *rp, const git_oid *parents, size_t n, const git_oid *tree,
			      const git_oid *first_tree)
{
	if (!git_oid_equal(tree, first_tree))
		return 0;
	for (size_t k = 1; k < n; k++) {
		int r = git_graph_descendant_of(rp->repo, &parents[0], &parents[k]);
		if (r < 0)
			return rq_error_git(rp->err, "cannot compare commits");
		if (!r)
			return 0;
	}
	return 1;
}

/* The merge's new commit (1), or the first parent when it became empty
 * and --empty drops it (0). -1: --empty=abort (RQ_E_EMPTY_COMMIT), or an
 * error. */
static int write_merge(replay *rp, size_t i, git_oid *parents, size_t np, const git_oid *tree,
		       const git_oid *first_tree, git_oid *new_id)
{
	const git_commit *c = rp->walk.commits[i];
	int empty = merge_became_empty(rp, parents, np, tree, first_tree), rc;

	if (empty < 0)
		return -1;
	if (empty && rp->opts->empty == RQ_EMPTY_ABORT) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
		return rq_error_set(rp->err, RQ_E_EMPTY_COMMIT, "commit %s became empty", hex);
	}
	if (empty && rp->opts->empty == RQ_EMPTY_DROP) {
		git_oid_cpy(new_id, &parents[0]);
		rp->res->stats.dropped++;
		return 0;
	}
	rc = rq_commit_pick_parents(rp->odb, &rp->commit_cfg, git_commit_id(c), tree, parents, np,
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
static int pick_merge(replay *rp, size_t i)
{
	git_commit *c = rp->walk.commits[i];
	size_t np = git_commit_parentcount(c);
	git_oid *v = malloc(2 * np * sizeof(*v)), *orig = v, *nw = v + np, first_tree, tree, id;
	int rc = v ? 0 : rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");

	for (unsigned k = 0; k < np && rc == 0; k++) {
		git_oid t;
		git_oid_cpy(&orig[k], git_commit_parent_id(c, k));
		rc = new_parent(rp, i, k, &nw[k], k ? &t : &first_tree);
	}
	if (rc == 0)
		rc = rq_remerge(rp->merger, rp->repo, &rp->ranks, orig, nw, np,
				git_commit_tree_id(c), &tree, &rp->res->conflicts, rp->err);
	if (rc == 1) {
		rp->res->conflicted = 1;
		rp->res->conflict_merge = 1;
		git_oid_cpy(&rp->res->conflict_commit, git_commit_id(c));
	}
	if (rc == 0 &&
	    (rc = write_merge(rp, i, nw, unique_parents(nw, np), &tree, &first_tree, &id)) == 1)
		rc = written(rp, &id, i);
	if (rc == 0) {
		rp->res->stats.merge_commits++;
		git_oid_cpy(&rp->new_ids[i], &id);
		git_oid_cpy(&rp->new_trees[i], &tree);
		if (rq_oidmap_put(&rp->map, git_commit_id(c), i) < 0)
			rc = rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	}
	free(v);
	return rc;
}

/* Pick (or revert) walk.commits[i]: 0 done (the commit map has it), 1
 * conflict, -1 error. */
static int pick_one(replay *rp, size_t i, const git_oid *last, const git_oid *last_tree)
{
	git_commit *c = rp->walk.commits[i];
	git_oid merged, new_id, empty;
	pick_sides ps;
	int rc;

	rq_odb_tmpdir_keepalive(rp->tmpdir, RQ_ODB_TMPDIR_KEEPALIVE_SECONDS);
	if (git_commit_parentcount(c) > 1)
		return pick_merge(rp, i);
	git_oid_fromstr(&empty, RQ_EMPTY_TREE_HEX);
	if (find_sides(rp, i, last, last_tree, &ps) < 0)
		return -1;
	if ((rc = merge_sides(rp, c, &ps, &empty, &merged)) != 0)
		return rc;
	if ((rc = drop_empty(rp, c, &ps, &empty, &merged)) < 0)
		return -1;
	if (rc == 1) {
		git_oid_cpy(&new_id, ps.ours_id);
		rp->res->stats.dropped++;
	} else {
		if (rp->opts->mode == RQ_MODE_REVERT)
			rc = rq_commit_revert(rp->odb, &rp->commit_cfg, git_commit_id(c), &merged,
					      ps.ours_id, rp->author, rp->committer, &new_id,
					      rp->err);
		else
			rc = rq_commit_pick(rp->odb, &rp->commit_cfg, git_commit_id(c), &merged,
					    ps.ours_id, rp->committer, &new_id, rp->err);
		if (rc < 0 || (rp->parents && written(rp, &new_id, i) < 0))
			return -1;
		rp->warned[i] = (unsigned char)rc;
		rp->res->stats.picked++;
	}
	git_oid_cpy(&rp->new_ids[i], &new_id);
	git_oid_cpy(&rp->new_trees[i], &merged);
	if (rq_oidmap_put(&rp->map, git_commit_id(c), i) < 0)
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/*
 * Pick every commit, in order.
 * 0 clean, 1 conflict, -1 error; *fail is the index of the failing pick.
 */
static int pick_range(replay *rp, size_t *fail)
{
	git_oid last, last_tree;

	git_oid_cpy(&last, &rp->onto);
	git_oid_cpy(&last_tree, &rp->onto_tree);
	if (rp->walk.n)
		rq_testhook_hold("pick");
	for (size_t i = 0; i < rp->walk.n; i++) {
		int r;
		if (rp->opts->cancel && *rp->opts->cancel) {
			*fail = i;
			return rq_error_set(rp->err, RQ_E_INTERRUPTED, "interrupted");
		}
		r = pick_one(rp, i, &last, &last_tree);
		if (r != 0) {
			*fail = i;
			return r;
		}
		git_oid_cpy(&last, &rp->new_ids[i]);
		git_oid_cpy(&last_tree, &rp->new_trees[i]);
	}
	return 0;
}

/* A conflicting pick of a keep-going replay goes to res->failed (its
 * walk index: SIZE_MAX when not known), so that the result stays clean for
 * the next pick. 0 or -1. */
static int keep_conflict(replay *rp, size_t i)
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
static int pick_range_kg(replay *rp)
{
	if (rp->walk.n)
		rq_testhook_hold("pick");
	for (size_t i = 0; i < rp->walk.n; i++) {
		int r;
		if (rp->opts->cancel && *rp->opts->cancel)
			return rq_error_set(rp->err, RQ_E_INTERRUPTED, "interrupted");
		if (rq_outcome_skip(&rp->outcome, i))
			continue;
		if ((r = pick_one(rp, i, &rp->onto, &rp->onto_tree)) < 0)
			return -1;
		rq_outcome_mark(&rp->outcome, i, r);
		if (r == 1 && keep_conflict(rp, i) < 0)
			return -1;
	}
	return 0;
}

/* ---- picking in parallel (rq_parallel) ---- */

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
static size_t compute_groups(replay *rp, size_t *group, rq_error *err)
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
		if (rq_oidmap_put(&idx, git_commit_id(rp->walk.commits[i]), i) < 0) {
			rq_error_set(err, RQ_E_NOMEM, "out of memory");
			k = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		git_commit *c = rp->walk.commits[i];
		for (unsigned j = 0; j < git_commit_parentcount(c); j++) {
			size_t p;
			if (rq_oidmap_get(&idx, git_commit_parent_id(c, j), &p))
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
	replay *rp = arg;
	int r;

	if (rp->kg && rq_outcome_skip(&rp->outcome, i))
		return 2;
	r = pick_one(rp, i, &rp->onto, &rp->onto_tree);
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
static int take_kept(replay *rp, rq_parallel_kept *kept)
{
	int rc = 0;

	for (size_t k = 0; k < kept->n && rc == 0; k++) {
		size_t i = kept->v[k].index;
		rc = rq_outcome_add_failure(rp->res, i, git_commit_id(rp->walk.commits[i]),
					    git_commit_parentcount(rp->walk.commits[i]) > 1,
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
	const replay *rp = arg;
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
static int pick_parallel(replay *rp, const size_t *group, size_t ngroups)
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
		git_oid_cpy(&rp->res->conflict_commit, git_commit_id(rp->walk.commits[out.fail]));
		rp->res->conflict_merge = git_commit_parentcount(rp->walk.commits[out.fail]) > 1;
		rp->res->conflicts = out.conflicts;
	}
	if (r != 0) {
		rq_parallel_end(rp->par);
		rp->par = NULL;
	}
	return r;
}

/* One process after all: the workers are let go (a worker exits here). */
static int pick_alone(replay *rp)
{
	size_t fail = 0;

	rq_parallel_end(rp->par);
	rp->par = NULL;
	rq_mem_reserve(rp->walk.n * RQ_RESERVE_PER_PICK);
	rp->res->stats.parallel = 1;
	return rp->kg ? pick_range_kg(rp) : pick_range(rp, &fail);
}

/* Independent groups, when there are workers and enough commits: *group
 * (the caller frees it) and their number; 0 groups: pick in one process. */
static int plan_groups(replay *rp, size_t **group, size_t *ngroups)
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

/* What the revisions and the target resolved to. */
static void resolution_digest(const replay *rp, unsigned char out[20])
{
	rq_sha1 h;
	rq_sha1_init(&h);
	rq_sha1_update(&h, rp->onto.id, GIT_OID_RAWSZ);
	for (size_t i = 0; i < rp->revs.n; i++) {
		const rq_rev *r = &rp->revs.v[i];
		unsigned char neg = (unsigned char)r->negative;
		rq_sha1_update(&h, &neg, 1);
		rq_sha1_update(&h, r->oid.id, GIT_OID_RAWSZ);
		if (r->fullref)
			rq_sha1_update(&h, r->fullref, strlen(r->fullref) + 1);
	}
	if (rp->branch)
		rq_sha1_update(&h, rp->branch, strlen(rp->branch) + 1);
	rq_sha1_final(&h, out);
}

/* Positive revisions the arguments name, before they are resolved: "A",
 * "A..B" one each, "A...B" two; "^A" none. */
static size_t positive_args(const rq_replay_opts *o)
{
	size_t n = 0;
	for (size_t i = 0; i < o->nrevisions; i++) {
		const char *a = o->revisions[i];
		if (a[0] == '^')
			continue;
		n += strstr(a, "...") ? 2 : 1;
	}
	return n;
}

/* The --ref, --advance or --revert ref (with --keep-going, its outcome:
 * it moves when no pick conflicted). */
static int final_updates(replay *rp, const git_oid *last)
{
	const char *ref = rp->opts->ref ? rp->opts->ref : rp->branch;
	int moves = !rp->res->nfailed;
	git_oid old;

	if (!ref) /* with nothing replayed too: the ref goes to onto, as in git */
		return 0;
	if (rp->opts->ref) {
		int r = git_reference_name_to_id(&old, rp->repo, ref);
		if (r == GIT_ENOTFOUND)
			memset(&old, 0, sizeof(old));
		else if (r < 0)
			return rq_error_git(rp->err, "cannot read ref");
	} else {
		git_oid_cpy(&old, &rp->onto);
	}
	if (rp->opts->keep_going &&
	    rq_outcome_add_ref(rp->res, ref, &old, moves ? last : NULL, SIZE_MAX, rp->err) < 0)
		return -1;
	return moves ? rq_replay_result_add_update(rp->res, &rp->updates_cap, ref, last, &old,
						   rp->err)
		     : 0;
}

/* The temporary object directory and the odb that writes into it (once;
 * a train's replays share the train's). */
static int open_objects(replay *rp)
{
	if (rp->tmpdir)
		return 0;
	if (rp->opts->shared) {
		rp->tmpdir = rp->opts->shared->tmpdir;
		rp->odb = rp->opts->shared->odb;
		return 0;
	}
	if (rq_odb_tmpdir_open(&rp->tmpdir, rp->repo, rp->opts->objects, rp->err) < 0)
		return -1;
	if (git_repository_odb(&rp->odb, rp->repo) < 0)
		return rq_error_git(rp->err, "cannot open the object database");
	return rq_sign_attach(rp->odb, rp->opts->sign, rp->err);
}

/* ---- the phases of a replay ---- */

/* The committer (and a revert's author) as they go into commit headers. */
static int set_identities(replay *rp)
{
	const rq_replay_opts *o = rp->opts;
	const rq_ident *committer = o->committer;
	rq_ident ident;

	if (!committer) {
		if (rq_ident_default(rp->repo, &ident, rp->err) < 0)
			return -1;
		committer = &ident;
	}
	if (rq_ident_format(committer, rp->committer, sizeof(rp->committer)) < 0 ||
	    rq_ident_format(o->author ? o->author : committer, rp->author, sizeof(rp->author)) < 0)
		return rq_error_set(rp->err, RQ_E_IDENT, "identity too long");
	rp->commit_cfg.author = rp->author; /* git's author when the original has none */
	return rq_commit_cfg_load(&rp->commit_cfg, rp->repo, rp->err);
}

/*
 * Several branches and --jobs: the workers are forked now, while the
 * process is small; each resolves and walks itself (that builds caches
 * per process, which copy-on-write sharing made slower: 240 ms instead of
 * 195 ms for 3,000 picks). They share the open repository, its mapped
 * pack indexes and the temporary object directory.
 */
static int fork_workers(replay *rp)
{
	const rq_replay_opts *o = rp->opts;
	int jobs = o->jobs > RQ_MAX_JOBS ? RQ_MAX_JOBS : o->jobs;
	size_t npos = positive_args(o);
	rq_parallel_hooks hooks = {o->child_hook, o->child_hook_arg};

	if (jobs <= 1 || o->mode == RQ_MODE_REVERT || npos <= 1 ||
	    (o->jobs_auto && npos < RQ_PARALLEL_AUTO_MIN_REVS))
		return 0;
	/* the children hand their objects over as part files in it */
	if (open_objects(rp) < 0 || rq_odb_tmpdir_make(rp->tmpdir, rp->err) < 0)
		return -1;
	rq_parallel_fork(&rp->par, npos < (size_t)jobs ? (int)npos : jobs, rp->odb, &hooks);
	return 0;
}

/* Phase 1: the options, the checked read side, identities, the workers. */
static int start(replay *rp)
{
	if (validate(rp->opts, rp->err) < 0)
		return -1;
	rp->kg = rp->opts->keep_going && rp->opts->mode == RQ_MODE_ONTO && !rp->opts->ref;
	if (rp->opts->shared) /* the train installed the reader and owns the objects */
		return set_identities(rp);
	/* every read goes through the checking loose reader (rq_odb) */
	if (rq_odb_install(rp->repo, rp->opts->objects, rp->err) < 0)
		return -1;
	if (set_identities(rp) < 0 || fork_workers(rp) < 0)
		return -1;
	RQ_TRACE_AT("forked");
	return 0;
}

static void set_reflog_message(replay *rp)
{
	const rq_replay_opts *o = rp->opts;
	rq_replay_result *res = rp->res;

	if (o->mode == RQ_MODE_ONTO) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &rp->onto);
		snprintf(res->upd.reflog_msg, sizeof(res->upd.reflog_msg), "replay --onto %s", hex);
	} else {
		/* the branch as the user gave it, as git does */
		snprintf(res->upd.reflog_msg, sizeof(res->upd.reflog_msg), "replay %s %s",
			 mode_option(o->mode), o->target);
	}
}

/* Phase 2: the revisions and the target, resolved as git resolves them. */
static int resolve(replay *rp)
{
	unsigned char digest[20];

	if (rq_revs_parse(rp->repo, rp->opts->revisions, rp->opts->nrevisions, &rp->revs, rp->err) <
	    0)
		return -1;
	RQ_TRACE_AT("parsed");
	if (resolve_target(rp) < 0)
		return -1;
	RQ_TRACE_AT("target");
	if (rp->par) {
		resolution_digest(rp, digest);
		/* a worker that saw other refs: the parent replays without it */
		if (rq_parallel_agree(rp->par, digest) < 0)
			return -1;
	}
	set_reflog_message(rp);
	rp->res->stats.ms_resolve = rq_clock_mono_fms() - rp->t0;
	return 0;
}

/*
 * A revert of a merge commit needs a mainline (git revert -m), which
 * replayq does not take: refused before anything is reverted, in git
 * revert's words (RQ_E_MERGE_COMMIT).
 */
static int refuse_merge_revert(replay *rp)
{
	for (size_t i = 0; i < rp->walk.n; i++) {
		char hex[GIT_OID_HEXSZ + 1];
		if (git_commit_parentcount(rp->walk.commits[i]) < 2)
			continue;
		git_oid_tostr(hex, sizeof(hex), git_commit_id(rp->walk.commits[i]));
		return rq_error_set(rp->err, RQ_E_MERGE_COMMIT,
				    "commit %s is a merge but no -m option was given.", hex);
	}
	return 0;
}

/* Phase 3: the commits to replay, and the refs that may move. */
static int walk_commits(replay *rp)
{
	const rq_replay_opts *o = rp->opts;
	double t = rq_clock_mono_fms();

	if (rq_walk_run(rp->repo, &rp->revs, o->mode == RQ_MODE_REVERT, o->max_commits, &rp->walk,
			rp->err) < 0)
		return -1;
	if (o->mode == RQ_MODE_REVERT && refuse_merge_revert(rp) < 0)
		return -1;
	if (rq_parents_plan(&rp->parents, rp->repo, &rp->revs, &rp->walk, &rp->onto, rp->err) < 0)
		return -1;
	rp->res->stats.commits = rp->walk.n;
	if (o->mode == RQ_MODE_ONTO && !o->ref && !rq_parallel_is_child(rp->par) &&
	    load_tips(rp->repo, o->contained || is_positive_ref(&rp->revs, "HEAD"), &rp->tips,
		      rp->err) < 0)
		return -1;
	rp->res->stats.ms_walk = rq_clock_mono_fms() - t;
	RQ_TRACE_AT("walked");
	return 0;
}

/* Room for the commit map, the object store's write side, the merger. */
static int prepare_picks(replay *rp)
{
	rp->t_pick = rq_clock_mono_fms();
	rp->new_ids = calloc(rp->walk.n + 1, sizeof(*rp->new_ids));
	rp->new_trees = calloc(rp->walk.n + 1, sizeof(*rp->new_trees));
	rp->warned = calloc(rp->walk.n + 1, 1);
	if (!rp->new_ids || !rp->new_trees || !rp->warned)
		return rq_error_set(rp->err, RQ_E_NOMEM, "out of memory");
	if (rp->kg && rq_outcome_init(&rp->outcome, rp->walk.commits, rp->walk.n, rp->err) < 0)
		return -1;
	if (open_objects(rp) < 0)
		return -1;
	if (rp->opts->shared)
		rp->merger = rp->opts->shared->merger;
	else if (rq_merger_new(&rp->merger, rp->repo,
			       rp->opts->objects ? rp->opts->objects->root : NULL, rp->err) < 0)
		return -1;
	rp->merges0 = *rq_merger_stats(rp->merger);
	RQ_TRACE_AT("merger");
	return 0;
}

/* Phase 4: every pick, in groups over the workers or in this process.
 * 0 clean, 1 conflict, -1 error. */
static int pick_all(replay *rp)
{
	size_t ngroups, *group;
	const rq_merge_stats *ms;
	int r;

	if (prepare_picks(rp) < 0 || plan_groups(rp, &group, &ngroups) < 0)
		return -1;
	r = ngroups > 1 ? pick_parallel(rp, group, ngroups) : pick_alone(rp);
	/* this process's merges (the workers' came with their reports) */
	ms = rq_merger_stats(rp->merger);
	rp->res->stats.merges_trivial += ms->trivial - rp->merges0.trivial;
	rp->res->stats.merges_full += ms->full - rp->merges0.full;
	rp->res->stats.merges_fallback += ms->fallback - rp->merges0.fallback;
	rp->res->stats.scores_computed += ms->scores_computed - rp->merges0.scores_computed;
	rp->res->stats.scores_reused += ms->scores_reused - rp->merges0.scores_reused;
	rp->res->stats.groups = ngroups ? ngroups : 1;
	for (size_t i = 0; i < rp->walk.n; i++)
		rp->res->stats.not_utf8 += rp->warned[i];
	free(group);
	return r;
}

/* Phase 5: the ref updates, as git replay computes them; with
 * --keep-going, every ref's outcome. */
static int make_updates(replay *rp)
{
	rq_replay_result *res = rp->res;

	git_oid_cpy(&res->tip, rp->walk.n ? &rp->new_ids[rp->walk.n - 1] : &rp->onto);
	if (rp->opts->mode == RQ_MODE_ONTO && !rp->opts->ref)
		for (size_t i = 0; i < rp->walk.n; i++)
			if (tip_updates(rp, i) < 0)
				return -1;
	if (final_updates(rp, &res->tip) < 0)
		return -1;
	if (rp->opts->keep_going &&
	    rq_outcome_resolve(rp->kg ? &rp->outcome : NULL, res, rp->err) < 0)
		return -1;
	rp->res->stats.ms_replay = rq_clock_mono_fms() - rp->t_pick;
	RQ_TRACE_AT("updates");
	return 0;
}

/* Phase 6: the new objects become one pack in objects/pack. */
static int write_pack(replay *rp)
{
	rq_replay_stats *st = &rp->res->stats;
	double t = rq_clock_mono_fms();
	rq_odb_tmpdir_stats os;

	git_odb_free(rp->odb);
	rp->odb = NULL;
	if (rq_odb_tmpdir_finish(rp->tmpdir, &os, rp->err) < 0)
		return -1;
	st->objects = os.objects;
	st->pack_bytes = os.pack_bytes;
	memcpy(st->pack_name, os.pack_name, sizeof(os.pack_name));
	st->ms_pack = rq_clock_mono_fms() - t;
	RQ_TRACE_AT("packed");
	return 0;
}

static void replay_init(replay *rp, git_repository *repo, const rq_replay_opts *opts,
			rq_replay_result *result, rq_error *err)
{
	memset(result, 0, sizeof(*result));
	memset(rp, 0, sizeof(*rp));
	rp->repo = repo;
	rp->opts = opts;
	rp->res = result;
	rp->err = err;
	rp->t0 = rq_clock_mono_fms();
	rq_oidmap_init(&rp->map);
	rq_oidmap_init(&rp->ranks);
	git_error_clear(); /* an error left by an earlier call says nothing here */
}

static void replay_end(replay *rp, int rc)
{
	/* a worker exits here (the parent meets the same failure) */
	rq_parallel_end(rp->par);
	if (rc < 0 || (rc == 1 && !rp->opts->keep_going))
		rq_replay_result_free_updates(rp->res);
	if (!rp->opts->shared) {
		git_odb_free(rp->odb);
		rq_odb_tmpdir_free(rp->tmpdir);
		rq_merger_free(rp->merger);
	}
	rq_outcome_free(&rp->outcome);
	rq_oidmap_free(&rp->map);
	rq_oidmap_free(&rp->ranks);
	rq_parents_free(rp->parents);
	free(rp->new_ids);
	free(rp->new_trees);
	free(rp->warned);
	rq_commit_cfg_free(&rp->commit_cfg);
	free(rp->branch);
	tips_free(&rp->tips);
	rq_walk_free(&rp->walk);
	rq_revs_free(&rp->revs);
	rp->res->stats.ms_total = rq_clock_mono_fms() - rp->t0;
}

int rq_replay_run(git_repository *repo, const rq_replay_opts *opts, rq_replay_result *result,
		  rq_error *err)
{
	replay rp;
	int rc;

	replay_init(&rp, repo, opts, result, err);
	rc = start(&rp);
	if (rc == 0)
		rc = resolve(&rp);
	if (rc == 0)
		rc = walk_commits(&rp);
	if (rc == 0)
		rc = pick_all(&rp);	 /* 1: a conflict */
	if (rc == 1 && opts->keep_going) /* one branch (not kg): its conflict kept */
		rc = keep_conflict(&rp, SIZE_MAX);
	if (rc == 0)
		rc = make_updates(&rp);
	/* keep-going: a pack when some ref moves; none for a train's replay */
	if (rc == 0 && !opts->shared && (!result->nfailed || result->upd.nupdates))
		rc = write_pack(&rp);
	if (rc == 0 && result->nfailed)
		rc = 1;
	replay_end(&rp, rc);
	return rc;
}

const char *const rq_replay_empty_names[] = {"drop", "keep", "abort", NULL};
