/*
 * rq_replay: the replay driver. Resolves the revisions and the target,
 * walks the commits, picks each one with a tree merge, writes the new
 * commits into a temporary object directory, packs them, and computes the
 * ref updates the way git replay does.
 */
#include "rq_replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_commit.h"
#include "rq_objdir.h"
#include "rq_oidmap.h"
#include "rq_revs.h"
#include "rq_walk.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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
typedef struct deco {
	git_oid oid;
	char *ref;
} deco;

typedef struct decos {
	deco *v;
	size_t n, cap;
} decos;

static void decos_free(decos *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].ref);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static int decos_add(decos *d, const char *ref, const git_oid *oid, rq_error *err)
{
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 32;
		deco *nv = realloc(d->v, ncap * sizeof(*nv));
		if (!nv)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		d->v = nv;
		d->cap = ncap;
	}
	if (!(d->v[d->n].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&d->v[d->n].oid, oid);
	d->n++;
	return 0;
}

static int cmp_deco_desc(const void *a, const void *b)
{
	return strcmp(((const deco *)b)->ref, ((const deco *)a)->ref);
}

/*
 * git lists a commit's branch decorations newest-added first, and adds
 * them in ref order: so per commit, branches come in descending name
 * order. A detached HEAD comes after them.
 */
static int load_decorations(git_repository *repo, int with_head, decos *d, rq_error *err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	int rc;

	if (git_reference_iterator_glob_new(&it, repo, "refs/heads/*") < 0)
		return rq_error_git(err, "cannot list branches");
	while ((rc = git_reference_next(&ref, it)) == 0) {
		if (git_reference_type(ref) == GIT_REFERENCE_DIRECT &&
		    decos_add(d, git_reference_name(ref), git_reference_target(ref), err) < 0) {
			git_reference_free(ref);
			git_reference_iterator_free(it);
			return -1;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return rq_error_git(err, "cannot list branches");
	qsort(d->v, d->n, sizeof(*d->v), cmp_deco_desc);
	if (with_head && git_repository_head_detached(repo) == 1) {
		git_oid head;
		if (git_reference_name_to_id(&head, repo, "HEAD") == 0 &&
		    decos_add(d, "HEAD", &head, err) < 0)
			return -1;
	}
	return 0;
}

static int add_update(rq_replay_result *r, size_t *cap, const char *ref, const git_oid *new_id,
		      const git_oid *old_id, rq_error *err)
{
	if (r->nupdates == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		rq_ref_update *nv = realloc(r->updates, ncap * sizeof(*nv));
		if (!nv)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		r->updates = nv;
		*cap = ncap;
	}
	if (!(r->updates[r->nupdates].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&r->updates[r->nupdates].new_id, new_id);
	git_oid_cpy(&r->updates[r->nupdates].old_id, old_id);
	r->nupdates++;
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
	if (!o->target || !*o->target)
		return rq_error_set(err, RQ_E_USAGE, "option --onto or --advance is mandatory");
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
	if (o->ref && (!rq_refname_is_valid_full(o->ref) || !strncmp(o->ref, "HEAD", 5)))
		return rq_error_set(err, RQ_E_BAD_REF,
				    "'%s' is not a valid fully qualified ref name", o->ref);
	if (o->empty != RQ_EMPTY_DROP && o->empty != RQ_EMPTY_KEEP && o->empty != RQ_EMPTY_ABORT)
		return rq_error_set(err, RQ_E_USAGE, "unknown empty-commit mode");
	if (!o->nrevisions)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	return 0;
}

typedef struct state {
	git_repository *repo;
	const rq_replay_opts *opts;
	rq_replay_result *res;
	rq_error *err;
	rq_revs revs;
	rq_walk walk;
	decos decos;
	rq_objdir *objdir;
	rq_merger *merger;
	git_odb *odb;
	rq_oidmap map;	  /* original commit -> index in new_ids */
	git_oid *new_ids; /* replayed form of walk.commits[i] */
	git_oid *new_trees;
	git_oid onto, onto_tree;
	char *branch; /* --advance/--revert: full name */
	char committer[2 * RQ_IDENT_FIELD_MAX + 64];
	size_t ucap;
} state;

static int resolve_target(state *s)
{
	const rq_replay_opts *o = s->opts;
	rq_error *err = s->err;

	if (!s->revs.npositive)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	if (o->mode == RQ_MODE_ONTO) {
		if (rq_resolve_commit(s->repo, o->target, &s->onto, err) < 0)
			return -1;
		if (o->ref && s->revs.npositive > 1)
			return rq_error_set(
			    err, RQ_E_USAGE,
			    "--ref with --onto needs exactly one positive revision");
		if (!o->ref)
			for (size_t i = 0; i < s->revs.n; i++)
				if (!s->revs.v[i].negative && !s->revs.v[i].fullref)
					return rq_error_set(
					    err, RQ_E_NOT_A_REF,
					    "all positive revisions given must be references");
	} else {
		int n = rq_dwim_ref(s->repo, o->target, &s->branch, NULL, err);
		if (n < 0)
			return -1;
		if (n > 1)
			return rq_error_set(err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.",
					    o->target);
		if (n == 0)
			return rq_error_set(err, RQ_E_NOT_A_REF,
					    "argument to %s must be a reference",
					    mode_option(o->mode));
		if (rq_resolve_commit(s->repo, o->target, &s->onto, err) < 0)
			return -1;
		if (s->revs.npositive > 1)
			return rq_error_set(
			    err, RQ_E_USAGE,
			    "cannot %s target with multiple sources because ordering "
			    "would be ill-defined",
			    o->mode == RQ_MODE_REVERT ? "revert onto" : "advance");
	}
	return commit_tree(s->repo, &s->onto, &s->onto_tree, err);
}

static int decorate_updates(state *s, const git_commit *c, const git_oid *new_id)
{
	const git_oid *id = git_commit_id(c);

	for (size_t i = 0; i < s->decos.n; i++) {
		const deco *d = &s->decos.v[i];
		if (!git_oid_equal(&d->oid, id))
			continue;
		if (!s->opts->contained && !is_positive_ref(&s->revs, d->ref))
			continue;
		if (add_update(s->res, &s->ucap, d->ref, new_id, id, s->err) < 0)
			return -1;
	}
	return 0;
}

static int ensure_empty_tree(state *s)
{
	git_oid id;
	if (git_odb_write(&id, s->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(s->err, "cannot write the empty tree");
	return 0;
}

/* Pick (or revert) walk.commits[i]; 1 on conflict. */
static int pick_one(state *s, size_t i, const git_oid *last, const git_oid *last_tree)
{
	git_commit *c = s->walk.commits[i];
	const git_oid *pick_tree = git_commit_tree_id(c);
	git_oid parent_tree, merged, new_id, empty;
	const git_oid *base_id, *base_tree = NULL, *ours_id, *ours_tree;
	int have_parent = git_commit_parentcount(c) > 0, rc;
	size_t pidx;

	git_oid_fromstr(&empty, RQ_EMPTY_TREE_HEX);
	if (have_parent) {
		base_id = git_commit_parent_id(c, 0);
		if (commit_tree(s->repo, base_id, &parent_tree, s->err) < 0)
			return -1;
		base_tree = &parent_tree;
	}
	if (s->opts->mode == RQ_MODE_REVERT) {
		ours_id = last;
		ours_tree = last_tree;
	} else if (have_parent && rq_oidmap_get(&s->map, git_commit_parent_id(c, 0), &pidx)) {
		ours_id = &s->new_ids[pidx];
		ours_tree = &s->new_trees[pidx];
	} else {
		ours_id = &s->onto;
		ours_tree = &s->onto_tree;
	}

	if (s->opts->mode == RQ_MODE_REVERT) {
		if (!base_tree && ensure_empty_tree(s) < 0)
			return -1;
		rc =
		    rq_merger_merge(s->merger, pick_tree, ours_tree, base_tree ? base_tree : &empty,
				    &merged, &s->res->conflicts, s->err);
	} else {
		rc = rq_merger_merge(s->merger, base_tree, ours_tree, pick_tree, &merged,
				     &s->res->conflicts, s->err);
	}
	if (rc < 0)
		return -1;
	if (rc == 1) {
		s->res->conflicted = 1;
		git_oid_cpy(&s->res->conflict_commit, git_commit_id(c));
		return 1;
	}

	int was_empty = git_oid_equal(pick_tree, base_tree ? base_tree : &empty);
	if (git_oid_equal(&merged, ours_tree) && !was_empty) {
		if (s->opts->empty == RQ_EMPTY_ABORT) {
			char hex[GIT_OID_HEXSZ + 1];
			git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
			return rq_error_set(s->err, RQ_E_EMPTY_COMMIT, "commit %s became empty",
					    hex);
		}
		if (s->opts->empty == RQ_EMPTY_DROP) {
			git_oid_cpy(&new_id, ours_id);
			s->res->stats.dropped++;
			goto mapped;
		}
	}
	if (s->opts->mode == RQ_MODE_REVERT)
		rc = rq_commit_revert(s->odb, git_commit_id(c), &merged, ours_id, s->committer,
				      &new_id, s->err);
	else
		rc = rq_commit_pick(s->odb, git_commit_id(c), &merged, ours_id, s->committer,
				    &new_id, s->err);
	if (rc < 0)
		return -1;
	s->res->stats.picked++;
mapped:
	git_oid_cpy(&s->new_ids[i], &new_id);
	git_oid_cpy(&s->new_trees[i], &merged);
	if (rq_oidmap_put(&s->map, git_commit_id(c), i) < 0)
		return rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
	if (s->opts->mode == RQ_MODE_ONTO && !s->opts->ref)
		return decorate_updates(s, c, &new_id);
	return 0;
}

static int final_updates(state *s, const git_oid *last)
{
	const char *ref = s->opts->ref ? s->opts->ref : s->branch;
	git_oid old;

	if (!s->walk.n || !ref)
		return 0;
	if (s->opts->ref) {
		int r = git_reference_name_to_id(&old, s->repo, ref);
		if (r == GIT_ENOTFOUND)
			memset(&old, 0, sizeof(old));
		else if (r < 0)
			return rq_error_git(s->err, "cannot read ref");
	} else {
		git_oid_cpy(&old, &s->onto);
	}
	return add_update(s->res, &s->ucap, ref, last, &old, s->err);
}

static void free_updates(rq_replay_result *r)
{
	for (size_t i = 0; i < r->nupdates; i++)
		free(r->updates[i].ref);
	free(r->updates);
	r->updates = NULL;
	r->nupdates = 0;
}

int rq_replay_run(git_repository *repo, const rq_replay_opts *opts, rq_replay_result *result,
		  rq_error *err)
{
	state s;
	rq_ident ident;
	const rq_ident *committer = opts->committer;
	double t0 = now_ms(), t;
	git_oid last, last_tree;
	int rc = -1;

	memset(result, 0, sizeof(*result));
	memset(&s, 0, sizeof(s));
	s.repo = repo;
	s.opts = opts;
	s.res = result;
	s.err = err;
	rq_oidmap_init(&s.map);

	if (validate(opts, err) < 0)
		goto out;
	if (!committer) {
		if (rq_ident_default(repo, &ident, err) < 0)
			goto out;
		committer = &ident;
	}
	if (rq_ident_format(committer, s.committer, sizeof(s.committer)) < 0) {
		rq_error_set(err, RQ_E_IDENT, "committer identity too long");
		goto out;
	}
	if (rq_revs_parse(repo, opts->revisions, opts->nrevisions, &s.revs, err) < 0)
		goto out;
	if (resolve_target(&s) < 0)
		goto out;
	if (opts->mode == RQ_MODE_ONTO) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &s.onto);
		snprintf(result->reflog_msg, sizeof(result->reflog_msg), "replay --onto %s", hex);
	} else {
		snprintf(result->reflog_msg, sizeof(result->reflog_msg), "replay %s %s",
			 mode_option(opts->mode), s.branch);
	}
	t = now_ms();
	result->stats.ms_resolve = t - t0;

	if (rq_walk_run(repo, &s.revs, opts->mode == RQ_MODE_REVERT, opts->max_commits, &s.walk,
			err) < 0)
		goto out;
	result->stats.commits = s.walk.n;
	if (opts->mode == RQ_MODE_ONTO && !opts->ref &&
	    load_decorations(repo, opts->contained, &s.decos, err) < 0)
		goto out;
	result->stats.ms_walk = now_ms() - t;
	t = now_ms();

	s.new_ids = calloc(s.walk.n + 1, sizeof(*s.new_ids));
	s.new_trees = calloc(s.walk.n + 1, sizeof(*s.new_trees));
	if (!s.new_ids || !s.new_trees) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	if (rq_objdir_open(&s.objdir, repo, err) < 0)
		goto out;
	if (git_repository_odb(&s.odb, repo) < 0) {
		rq_error_git(err, "cannot open the object database");
		goto out;
	}
	if (rq_merger_new(&s.merger, repo, err) < 0)
		goto out;

	git_oid_cpy(&last, &s.onto);
	git_oid_cpy(&last_tree, &s.onto_tree);
	for (size_t i = 0; i < s.walk.n; i++) {
		int r = pick_one(&s, i, &last, &last_tree);
		if (r < 0)
			goto out;
		if (r == 1) {
			free_updates(result);
			rc = 1;
			goto out;
		}
		git_oid_cpy(&last, &s.new_ids[i]);
		git_oid_cpy(&last_tree, &s.new_trees[i]);
	}
	if (final_updates(&s, &last) < 0)
		goto out;
	{
		const rq_merge_stats *ms = rq_merger_stats(s.merger);
		result->stats.merges_trivial = ms->trivial;
		result->stats.merges_full = ms->full;
		result->stats.merges_fallback = ms->fallback;
	}
	result->stats.ms_replay = now_ms() - t;
	t = now_ms();
	{
		rq_objdir_stats os;
		git_odb_free(s.odb);
		s.odb = NULL;
		if (rq_objdir_finish(s.objdir, &os, err) < 0)
			goto out;
		result->stats.objects = os.objects;
		result->stats.pack_bytes = os.pack_bytes;
		memcpy(result->stats.pack_name, os.pack_name, sizeof(os.pack_name));
	}
	result->stats.ms_pack = now_ms() - t;
	rc = 0;
out:
	if (rc < 0)
		free_updates(result);
	if (s.merger && rc != 0) {
		const rq_merge_stats *ms = rq_merger_stats(s.merger);
		result->stats.merges_trivial = ms->trivial;
		result->stats.merges_full = ms->full;
		result->stats.merges_fallback = ms->fallback;
	}
	git_odb_free(s.odb);
	rq_objdir_free(s.objdir);
	rq_merger_free(s.merger);
	rq_oidmap_free(&s.map);
	free(s.new_ids);
	free(s.new_trees);
	free(s.branch);
	decos_free(&s.decos);
	rq_walk_free(&s.walk);
	rq_revs_free(&s.revs);
	result->stats.ms_total = now_ms() - t0;
	return rc;
}

void rq_replay_result_free(rq_replay_result *result)
{
	if (!result)
		return;
	free_updates(result);
	rq_conflicts_free(&result->conflicts);
}
