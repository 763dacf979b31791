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
 * The ref updates are applied by the caller (rq_refs). The picks are in
 * rq_replay_pick.c (in this process) and rq_replay_groups.c (over the
 * workers); the state they share in rq_replay_state.h.
 */
#include "rq_replay.h"
#include "rq_clock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_mem.h"
#include "rq_odb.h"
#include "rq_refdb.h"
#include "rq_replay_groups.h"
#include "rq_replay_pick.h"
#include "rq_replay_state.h"
#include "rq_sha1.h"
#include "rq_sign.h"
#include "rq_trace.h"

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

static void tips_free(ref_tips *tips)
{
	for (size_t i = 0; i < tips->n; i++)
		free(tips->v[i].ref);
	free(tips->v);
	memset(tips, 0, sizeof(*tips));
}

static int tips_add(ref_tips *tips, const char *ref, const rq_oid *oid, rq_error *err)
{
	ref_tip *v = rq_mem_grow(tips->v, &tips->cap, tips->n + 1, sizeof(*v), 32);

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	tips->v = v;
	if (!(tips->v[tips->n].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	tips->v[tips->n].oid = *oid;
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
typedef struct tips_load {
	ref_tips *tips;
	rq_error *err;
} tips_load;

/* A branch as a tip (a symbolic or broken one is none, as in git). */
static int tip_one(const rq_refdb_ref *ref, void *arg)
{
	tips_load *t = arg;

	if (ref->target || ref->broken)
		return 0;
	return tips_add(t->tips, ref->name, &ref->id, t->err);
}

static int load_tips(git_repository *repo, int with_head, ref_tips *tips, rq_error *err)
{
	tips_load t = {tips, err};
	rq_refdb *db;
	char *target = NULL;
	rq_oid head;
	int rc;

	if (rq_refdb_open(&db, repo, err) < 0)
		return -1;
	rc = rq_refdb_each(db, NULL, "refs/heads/*", tip_one, &t, err);
	if (rc < 0)
		rq_refdb_fail(err, "cannot list branches");
	if (rc == 0)
		qsort(tips->v, tips->n, sizeof(*tips->v), cmp_tip_desc);
	/* a detached HEAD: HEAD holds an id */
	if (rc == 0 && with_head && rq_refdb_read(db, "HEAD", &head, &target, err) == 0 &&
	    !target) {
		ref_tip h;
		if (tips_add(tips, "HEAD", &head, err) < 0)
			rc = -1;
		else {
			h = tips->v[tips->n - 1];
			memmove(tips->v + 1, tips->v, (tips->n - 1) * sizeof(*tips->v));
			tips->v[0] = h;
		}
	}
	free(target);
	rq_refdb_free(db);
	return rc;
}

static int is_positive_ref(const rq_revs *revs, const char *ref)
{
	for (size_t i = 0; i < revs->n; i++)
		if (!revs->v[i].negative && revs->v[i].fullref && !strcmp(revs->v[i].fullref, ref))
			return 1;
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

/* How many different commits the positive revisions name. */
static size_t distinct_tips(const rq_revs *revs)
{
	size_t n = 0;

	for (size_t i = 0; i < revs->n; i++) {
		size_t k = 0;
		if (revs->v[i].negative)
			continue;
		while (k < i &&
		       (revs->v[k].negative || !rq_oid_eq(&revs->v[k].oid, &revs->v[i].oid)))
			k++;
		n += k == i;
	}
	return n;
}

static int resolve_target(rq_replay_state *rp)
{
	const rq_replay_opts *o = rp->opts;
	rq_error *err = rp->err;

	if (!rp->revs.npositive)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	if (o->mode == RQ_MODE_ONTO) {
		if (rq_revs_resolve_commit(rp->repo, rp->revs.commits, rp->algo, o->target,
					   &rp->onto, err) < 0) {
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
		 * updates nothing, as in git rq_replay_state */
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
		if (rq_revs_resolve_commit(rp->repo, rp->revs.commits, rp->algo, o->target,
					   &rp->onto, err) < 0)
			return -1;
		if (rp->revs.npositive > 1)
			return rq_error_set(err, RQ_E_USAGE,
					    "'%s' cannot be used with multiple revision ranges "
					    "because the ordering would be ill-defined",
					    mode_option(o->mode));
	}
	return rq_replay_pick_commit_tree(rp, &rp->onto, &rp->onto_tree);
}

/* The refs at walk.commits[i] that move (with --keep-going, whose outcome
 * is listed: they move when the commit replayed). */
static int tip_updates(rq_replay_state *rp, size_t i)
{
	const rq_oid *id = &rp->walk.commits[i]->id, *new_id = &rp->new_ids[i];
	int moves = !rp->kg || rp->outcome.state[i] == RQ_OUTCOME_OK;

	for (size_t t = 0; t < rp->tips.n; t++) {
		const ref_tip *tip = &rp->tips.v[t];
		if (!rq_oid_eq(&tip->oid, id))
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

/* What the revisions and the target resolved to. */
static void resolution_digest(const rq_replay_state *rp, unsigned char out[20])
{
	rq_sha1 h;
	rq_sha1_init(&h);
	rq_sha1_update(&h, rp->onto.id, rp->algo->rawsz);
	for (size_t i = 0; i < rp->revs.n; i++) {
		const rq_rev *r = &rp->revs.v[i];
		unsigned char neg = (unsigned char)r->negative;
		rq_sha1_update(&h, &neg, 1);
		rq_sha1_update(&h, r->oid.id, rp->algo->rawsz);
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
static int final_updates(rq_replay_state *rp, const rq_oid *last)
{
	const char *ref = rp->opts->ref ? rp->opts->ref : rp->branch;
	int moves = !rp->res->nfailed;
	rq_oid old;

	if (!ref) /* with nothing replayed too: the ref goes to onto, as in git */
		return 0;
	if (rp->opts->ref) {
		int r = rq_refdb_lookup(rp->repo, ref, &old, rp->err);
		/* a broken ref reads as none, as git's: the update then fails
		 * to lock it, or prints it from zero */
		if (r == RQ_REFDB_MISSING || (r < 0 && rq_refdb_broken(rp->err)))
			memset(&old, 0, sizeof(old));
		else if (r < 0)
			return rq_refdb_fail(rp->err, "cannot read ref");
	} else {
		old = rp->onto;
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
static int open_objects(rq_replay_state *rp)
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
	if (rq_commits_reopen(rp->revs.commits, rp->repo, rp->err) < 0)
		return -1;
	return rq_sign_attach(rp->odb, rp->opts->sign, rp->err);
}

/* ---- the phases of a replay ---- */

/* The committer (and a revert's author) as they go into commit headers. */
static int set_identities(rq_replay_state *rp)
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
static int fork_workers(rq_replay_state *rp)
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

/* The repository's object format, read once, where the replay writes ids
 * as text (commits, the result, the workers' reports). */
static void set_algo(rq_replay_state *rp, const rq_oid_algo *algo)
{
	rp->algo = algo;
	rp->res->upd.algo = algo;
	rp->commit_cfg.algo = algo;
}

/* The format of the database the repository reads through now. */
static const rq_oid_algo *installed_algo(git_repository *repo)
{
	git_odb *odb = NULL;
	const rq_oid_algo *algo =
	    git_repository_odb(&odb, repo) == 0 ? rq_odb_algo(odb) : &rq_oid_sha1;

	git_odb_free(odb);
	return algo;
}

/* Phase 1: the options, the checked read side, identities, the workers. */
static int start(rq_replay_state *rp)
{
	if (validate(rp->opts, rp->err) < 0)
		return -1;
	rp->kg = rp->opts->keep_going && rp->opts->mode == RQ_MODE_ONTO && !rp->opts->ref;
	if (rp->opts->shared) { /* the train installed the reader and owns the objects */
		set_algo(rp, installed_algo(rp->repo));
		return set_identities(rp);
	}
	/* every read goes through the checking loose reader (rq_odb) */
	if (rq_odb_install(rp->repo, rp->opts->objects, rp->err) < 0)
		return -1;
	set_algo(rp, installed_algo(rp->repo));
	if (set_identities(rp) < 0 || fork_workers(rp) < 0)
		return -1;
	RQ_TRACE_AT("forked");
	return 0;
}

static void set_reflog_message(rq_replay_state *rp)
{
	const rq_replay_opts *o = rp->opts;
	rq_replay_result *res = rp->res;

	if (o->mode == RQ_MODE_ONTO) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rq_oid_fmt(hex, &rp->onto, rp->algo);
		snprintf(res->upd.reflog_msg, sizeof(res->upd.reflog_msg), "replay --onto %s", hex);
	} else {
		/* the branch as the user gave it, as git does */
		snprintf(res->upd.reflog_msg, sizeof(res->upd.reflog_msg), "replay %s %s",
			 mode_option(o->mode), o->target);
	}
}

/* Phase 2: the revisions and the target, resolved as git resolves them. */
static int resolve(rq_replay_state *rp)
{
	unsigned char digest[20];

	if (rq_revs_parse(rp->repo, rp->algo, rp->opts->revisions, rp->opts->nrevisions, &rp->revs,
			  rp->err) < 0)
		return -1;
	rp->commits = rq_commits_cache(rp->revs.commits);
	rp->commit_cfg.commits = rp->commits;
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
static int refuse_merge_revert(rq_replay_state *rp)
{
	for (size_t i = 0; i < rp->walk.n; i++) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		if (rp->walk.commits[i]->nparents < 2)
			continue;
		rq_oid_fmt(hex, &rp->walk.commits[i]->id, rp->algo);
		return rq_error_set(rp->err, RQ_E_MERGE_COMMIT,
				    "commit %s is a merge but no -m option was given.", hex);
	}
	return 0;
}

/* Phase 3: the commits to replay, and the refs that may move. */
static int walk_commits(rq_replay_state *rp)
{
	const rq_replay_opts *o = rp->opts;
	double t = rq_clock_mono_fms();

	if (rq_walk_run(rp->repo, &rp->revs, o->mode == RQ_MODE_REVERT, o->max_commits, &rp->walk,
			rp->err) < 0)
		return -1;
	if (o->mode == RQ_MODE_REVERT && refuse_merge_revert(rp) < 0)
		return -1;
	if (rq_parents_plan(&rp->parents, &rp->revs, &rp->walk, &rp->onto, rp->err) < 0)
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
static int prepare_picks(rq_replay_state *rp)
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
			       &(rq_merger_opts){rp->opts->objects ? rp->opts->objects->root : NULL,
						 rp->algo},
			       rp->err) < 0)
		return -1;
	else /* one parse of a commit per job (the cache outlives the merger) */
		rq_merger_use_commits(rp->merger, rq_commits_cache(rp->revs.commits));
	rp->merges0 = *rq_merger_stats(rp->merger);
	RQ_TRACE_AT("merger");
	return 0;
}

/* Phase 4: every pick, in groups over the workers or in this process.
 * 0 clean, 1 conflict, -1 error. */
static int pick_all(rq_replay_state *rp)
{
	size_t ngroups, *group;
	const rq_merge_stats *ms;
	int r;

	if (prepare_picks(rp) < 0 || rq_replay_groups_plan(rp, &group, &ngroups) < 0)
		return -1;
	r = ngroups > 1 ? rq_replay_groups_pick(rp, group, ngroups) : rq_replay_groups_alone(rp);
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
static int make_updates(rq_replay_state *rp)
{
	rq_replay_result *res = rp->res;

	res->tip = *(rp->walk.n ? &rp->new_ids[rp->walk.n - 1] : &rp->onto);
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
static int write_pack(rq_replay_state *rp)
{
	rq_replay_stats *st = &rp->res->stats;
	double t = rq_clock_mono_fms();
	rq_odb_tmpdir_stats os;

	rq_commits_release(rp->revs.commits);
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

static void replay_init(rq_replay_state *rp, git_repository *repo, const rq_replay_opts *opts,
			rq_replay_result *result, rq_error *err)
{
	memset(result, 0, sizeof(*result));
	memset(rp, 0, sizeof(*rp));
	rp->repo = repo;
	rp->opts = opts;
	rp->res = result;
	rp->err = err;
	set_algo(rp, opts->objects && opts->objects->algo ? opts->objects->algo : &rq_oid_sha1);
	rp->t0 = rq_clock_mono_fms();
	rq_oidmap_init(&rp->map);
	rq_oidmap_init(&rp->ranks);
	git_error_clear(); /* an error left by an earlier call says nothing here */
}

static void replay_end(rq_replay_state *rp, int rc)
{
	/* a worker exits here (the parent meets the same failure) */
	rq_parallel_end(rp->par);
	if (rc < 0 || (rc == 1 && !rp->opts->keep_going))
		rq_replay_result_free_updates(rp->res);
	rq_commits_release(rp->revs.commits);
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
	rq_replay_state rp;
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
		rc = rq_replay_pick_keep_conflict(&rp, SIZE_MAX);
	if (rc == 0)
		rc = make_updates(&rp);
	/* keep-going: a pack when some ref moves; none for a train's rq_replay_state */
	if (rc == 0 && !opts->shared && (!result->nfailed || result->upd.nupdates))
		rc = write_pack(&rp);
	if (rc == 0 && result->nfailed)
		rc = 1;
	replay_end(&rp, rc);
	return rc;
}

const char *const rq_replay_empty_names[] = {"drop", "keep", "abort", NULL};
