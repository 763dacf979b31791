/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_train: a merge train in one call (see rq_train.h). The parts, in the
 * order a train meets them: the options; the set-up (the target, the
 * identity, the shared object store and merger); a car by rebase (one
 * rq_replay over the shared store); a car by merge (its merge bases, a
 * virtual base for several, the merge, the merge commit); the cars' refs;
 * the one pack.
 */
#include "rq_train.h"
#include "rq_clock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_buf.h"
#include "rq_reach.h"
#include "rq_commit.h"
#include "rq_mem.h"
#include "rq_odb_mem.h"
#include "rq_odb_tmpdir.h"
#include "rq_commits.h"
#include "rq_refdb.h"
#include "rq_revs.h"
#include "rq_sign.h"
#include "rq_vbase.h"

/* Everything one rq_train_run() call holds. */
typedef struct train {
	git_repository *repo;
	const rq_oid_algo *algo; /* the repository's object format (rq_odb_algo) */
	const rq_train_opts *opts;
	rq_train_result *res;
	rq_error *err;
	rq_replay_shared shared; /* one object store and merger for every car */
	rq_commits *commits;	 /* the train's commits (merge bases, trees) */
	rq_ident committer;
	char ident[2 * RQ_IDENT_FIELD_MAX + 64]; /* the committer line (and a merge's author) */
	char target_short[RQ_TRAIN_PREFIX_MAX];	 /* "main" for refs/heads/main */
	char prefix[RQ_TRAIN_PREFIX_MAX + 64];	 /* the cars' ref prefix */
	rq_oid empty_tree;
	size_t merges_made; /* merge commits written */
	double t0;
} train;

/* ---- names ---- */

int rq_train_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > RQ_TRAIN_NAME_MAX || strstr(name, "..") || name[n - 1] == '.' ||
	    (n >= 5 && !strcmp(name + n - 5, ".lock")))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

int rq_train_prefix_valid(const char *prefix)
{
	char probe[RQ_TRAIN_PREFIX_MAX + 8];
	size_t n = prefix ? strlen(prefix) : 0;

	if (n < 6 || n > RQ_TRAIN_PREFIX_MAX || strncmp(prefix, "refs/", 5) || prefix[n - 1] != '/')
		return 0;
	snprintf(probe, sizeof(probe), "%sx", prefix);
	return rq_revs_refname_valid(probe);
}

const char *rq_train_method_name(rq_train_method method)
{
	return method == RQ_TRAIN_MERGE ? "merge" : "rebase";
}

const char *rq_train_car_status_name(rq_car_status status)
{
	return status == RQ_CAR_OK ? "ok" : status == RQ_CAR_SKIPPED ? "skipped" : "conflict";
}

/* ---- the options ---- */

static int check_cars(const rq_train_opts *o, rq_error *err)
{
	for (size_t k = 0; k < o->ncars; k++) {
		const rq_train_car *c = &o->cars[k];
		if (!rq_train_name_valid(c->name))
			return rq_error_set(err, RQ_E_USAGE,
					    "car %zu: '%.80s' is not a valid car name (1-64 of "
					    "[A-Za-z0-9._-], starting with a letter or digit)",
					    k + 1, c->name ? c->name : "");
		if (!c->nrevisions)
			return rq_error_set(err, RQ_E_NOTHING, "car '%s' names no revision",
					    c->name);
		for (size_t j = 0; j < k; j++)
			if (!strcmp(o->cars[j].name, c->name))
				return rq_error_set(err, RQ_E_USAGE,
						    "car '%s' is in the train twice", c->name);
	}
	return 0;
}

static int validate(const rq_train_opts *o, rq_error *err)
{
	if (!o->target || !*o->target)
		return rq_error_set(err, RQ_E_USAGE, "a train needs a target branch");
	if (o->method != RQ_TRAIN_REBASE && o->method != RQ_TRAIN_MERGE)
		return rq_error_set(err, RQ_E_USAGE, "unknown train method");
	if (!o->ncars)
		return rq_error_set(err, RQ_E_NOTHING, "a train needs at least one car");
	if (o->ncars > RQ_TRAIN_CARS_MAX)
		return rq_error_set(err, RQ_E_USAGE, "a train takes at most %d cars",
				    RQ_TRAIN_CARS_MAX);
	if (o->ref_prefix && !rq_train_prefix_valid(o->ref_prefix))
		return rq_error_set(err, RQ_E_BAD_REF,
				    "'%.200s' is not a valid ref prefix (refs/.../)",
				    o->ref_prefix);
	if (o->message && (!*o->message || strlen(o->message) > RQ_TRAIN_MESSAGE_MAX))
		return rq_error_set(err, RQ_E_USAGE,
				    "the merge message template must have 1-%d bytes",
				    RQ_TRAIN_MESSAGE_MAX);
	if (o->message && o->method != RQ_TRAIN_MERGE)
		return rq_error_set(err, RQ_E_USAGE, "a message template needs the merge method");
	return check_cars(o, err);
}

/* ---- the set-up ---- */

/* The target: a ref (its full and short names) and its commit. */
static int resolve_target(train *t)
{
	const char *target = t->opts->target, *s;
	char *full = NULL;
	int n = rq_revs_dwim_ref(t->repo, target, &full, NULL, t->err);

	if (n < 0)
		return -1;
	if (n != 1) {
		free(full);
		return n ? rq_error_set(t->err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.",
					target)
			 : rq_error_set(t->err, RQ_E_NOT_A_REF,
					"the train's target '%s' must be a branch", target);
	}
	t->res->target_ref = full;
	if (rq_revs_resolve_commit(t->repo, NULL, t->algo, full, &t->res->base, t->err) < 0)
		return -1;
	t->res->head = t->res->base;
	s = !strncmp(full, "refs/heads/", 11) ? full + 11 : full + 5;
	if (strlen(s) >= sizeof(t->target_short))
		return rq_error_set(t->err, RQ_E_BAD_REF, "the target's name is too long");
	strcpy(t->target_short, s);
	if (t->opts->ref_prefix)
		snprintf(t->prefix, sizeof(t->prefix), "%s", t->opts->ref_prefix);
	else
		snprintf(t->prefix, sizeof(t->prefix), "refs/train/%s/", t->target_short);
	return 0;
}

static int set_identity(train *t)
{
	if (t->opts->committer)
		t->committer = *t->opts->committer;
	else if (rq_ident_default(t->repo, &t->committer, t->err) < 0)
		return -1;
	if (rq_ident_format(&t->committer, t->ident, sizeof(t->ident)) < 0)
		return rq_error_set(t->err, RQ_E_IDENT, "identity too long");
	return 0;
}

/* The checked reader, the target, the identity, the shared object store
 * (with the empty tree, which a merge without a base needs) and merger. */
static int set_up(train *t)
{
	rq_replay_shared *sh = &t->shared;

	if (validate(t->opts, t->err) < 0 || rq_odb_install(t->repo, t->opts->objects, t->err) < 0)
		return -1;
	if (git_repository_odb(&sh->odb, t->repo) < 0)
		return rq_error_git(t->err, "cannot open the object database");
	t->algo = rq_odb_algo(sh->odb); /* as installed: read once */
	t->res->replay.upd.algo = t->algo;
	git_odb_free(sh->odb); /* taken again once the replay's store is in */
	sh->odb = NULL;
	if (resolve_target(t) < 0 || set_identity(t) < 0 ||
	    rq_odb_tmpdir_open(&sh->tmpdir, t->repo, t->opts->objects, t->err) < 0)
		return -1;
	if (git_repository_odb(&sh->odb, t->repo) < 0)
		return rq_error_git(t->err, "cannot open the object database");
	if (rq_sign_attach(sh->odb, t->opts->sign, t->err) < 0) /* cars' picks and merges */
		return -1;
	if (rq_commits_open(&t->commits, t->repo, t->algo, t->err) < 0)
		return -1;
	if (rq_odb_mem_write(&t->empty_tree, sh->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(t->err, "cannot write the empty tree");
	if (rq_merger_new(
		&sh->merger, t->repo,
		&(rq_merger_opts){t->opts->objects ? t->opts->objects->root : NULL, t->algo},
		t->err) < 0)
		return -1;
	rq_merger_use_commits(sh->merger, rq_commits_cache(t->commits)); /* freed after it */
	t->res->ncars = t->opts->ncars;
	if (!(t->res->cars = calloc(t->opts->ncars + 1, sizeof(*t->res->cars))))
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	snprintf(t->res->replay.upd.reflog_msg, sizeof(t->res->replay.upd.reflog_msg),
		 "train --%s %s", rq_train_method_name(t->opts->method), t->opts->target);
	return 0;
}

/*
 * Each car's merges start afresh, as a separate `git replay` or `git
 * merge-tree` would: renames remembered along the previous car's chain
 * of picks must not reach it.
 */
static int break_chain(train *t)
{
	rq_merger_forget_renames(t->shared.merger);
	return 0;
}

/* ---- the cars ---- */

/* The car's revisions, with a branch alone read as <target>..<branch>:
 * *argv (to free, not its strings) and *n. */
static int car_revisions(train *t, const rq_train_car *c, char *neg, const char ***argv, size_t *n)
{
	const char *r0 = c->revisions[0];
	int alone = c->nrevisions == 1 && r0[0] != '^' && r0[0] != '-' && !strstr(r0, "..") &&
		    !strstr(r0, "^!") && !strstr(r0, "^@") && !strstr(r0, "^-");

	*n = c->nrevisions + (size_t)alone;
	if (!(*argv = calloc(*n + 1, sizeof(**argv))))
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	neg[0] = '^';
	rq_oid_fmt(neg + 1, &t->res->base, t->algo);
	if (alone)
		(*argv)[0] = neg;
	for (size_t i = 0; i < c->nrevisions; i++)
		(*argv)[i + (size_t)alone] = c->revisions[i];
	return 0;
}

/* The car's one tip (its positive revisions must name one commit). */
static int car_tip(train *t, const rq_train_car *c, rq_oid *tip)
{
	rq_revs revs;
	size_t found = 0;

	if (rq_revs_parse(t->repo, t->algo, c->revisions, c->nrevisions, &revs, t->err) < 0)
		return -1;
	for (size_t i = 0; i < revs.n; i++) {
		if (revs.v[i].negative || (found && rq_oid_eq(tip, &revs.v[i].oid)))
			continue;
		*tip = revs.v[i].oid;
		found++;
	}
	rq_revs_free(&revs);
	if (found != 1)
		return rq_error_set(t->err, RQ_E_USAGE,
				    "car '%s' must name one tip (its revisions name %zu)", c->name,
				    found);
	return 0;
}

static void car_ref(const train *t, const rq_train_car *c, char *out, size_t size)
{
	snprintf(out, size, "%s%s", t->prefix, c->name);
}

/* A replay's conflict (rebase) becomes the car's. */
static void take_conflict(rq_car_result *car, rq_replay_result *r, const rq_oid *commit)
{
	car->status = RQ_CAR_CONFLICT;
	car->conflict_commit = *commit;
	car->conflict_merge = r->conflict_merge;
	car->conflicts = r->conflicts;
	memset(&r->conflicts, 0, sizeof(r->conflicts));
}

/* The engine's message for a car naming several tips, in the train's words. */
static int rebase_error(train *t, const rq_train_car *c)
{
	if (t->err->code == RQ_E_USAGE && strstr(t->err->msg, "multiple revision ranges"))
		return rq_error_set(t->err, RQ_E_USAGE, "car '%s' must name one tip", c->name);
	return -1;
}

/* A car by rebase: its commits replayed onto the previous result, as
 * `git replay --onto <previous> <range>` would. 0 ok, 1 conflict, -1. */
static int rebase_car(train *t, const rq_train_car *c, rq_car_result *car)
{
	char onto[RQ_OID_MAX_HEXSZ + 1], neg[RQ_OID_MAX_HEXSZ + 2], ref[RQ_TRAIN_PREFIX_MAX + 80];
	rq_replay_opts o = {.mode = RQ_MODE_ONTO, .target = onto, .ref = ref, .jobs = 1};
	rq_replay_result r;
	const char **argv = NULL;
	int rc;

	rq_oid_fmt(onto, &t->res->head, t->algo);
	car_ref(t, c, ref, sizeof(ref));
	if (car_tip(t, c, &car->tip) < 0 || car_revisions(t, c, neg, &argv, &o.nrevisions) < 0 ||
	    break_chain(t) < 0) {
		free(argv);
		return -1;
	}
	o.revisions = argv;
	o.empty = t->opts->empty;
	o.committer = &t->committer;
	o.max_commits = t->opts->max_commits;
	o.cancel = t->opts->cancel;
	o.objects = t->opts->objects;
	o.shared = &t->shared;
	rc = rq_replay_run(t->repo, &o, &r, t->err);
	free(argv);
	car->commits = r.stats.commits;
	car->picked = r.stats.picked;
	car->dropped = r.stats.dropped;
	if (rc == 0)
		car->commit = r.tip;
	else if (rc == 1)
		take_conflict(car, &r, &r.conflict_commit);
	rq_replay_result_free(&r);
	return rc < 0 ? rebase_error(t, c) : rc;
}

/* ---- a car by merge ---- */

static int tree_of(train *t, const rq_oid *commit, rq_oid *tree)
{
	const rq_cobj_commit *c = NULL;

	if (rq_cobj_get(rq_commits_cache(t->commits), commit, &c, t->err) < 0)
		return -1;
	*tree = c->tree;
	return 0;
}

/* One merge of trees with its own chain of renames: 0 clean, 1 conflict
 * (conf filled), -1. */
static int merge_trees(train *t, const rq_oid *base, const rq_oid *ours, const rq_oid *theirs,
		       rq_oid *out, rq_conflicts *conf)
{
	if (break_chain(t) < 0)
		return -1;
	return rq_merger_merge(t->shared.merger, base, ours, theirs, out, conf, t->err);
}

/* The tree to merge the car's tip into the previous result against: their
 * merge base's, a virtual one for several (core/merge/rq_vbase.h, as
 * merge-ort makes it), the empty tree for none; *nbases: how many. 0, 1
 * (a conflict: no virtual base, conf says why), -1. */
static int car_base(train *t, rq_car_result *car, rq_oid *base, rq_conflicts *conf)
{
	rq_vbase vb = {t->shared.merger, NULL, &t->empty_tree, 0, t->err};
	int rc = rq_vbase_tree(&vb, &car->onto, 1, &car->tip, base, NULL, &car->merge_bases);

	if (rc <= 0)
		return rc;
	if (rq_conflicts_add(conf, "", RQ_CONFLICT_MERGE_BASES) < 0)
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	return 1;
}

/* The merge message: the template with {name} and {target} filled in
 * (malloc'ed; NULL: out of memory). */
static char *merge_message(const train *t, const rq_train_car *c)
{
	const char *p = t->opts->message ? t->opts->message : RQ_TRAIN_DEFAULT_MSG;
	rq_buf b = {0};

	while (*p) {
		if (!strncmp(p, "{name}", 6)) {
			rq_buf_str(&b, c->name);
			p += 6;
		} else if (!strncmp(p, "{target}", 8)) {
			rq_buf_str(&b, t->target_short);
			p += 8;
		} else {
			rq_buf_add(&b, p++, 1);
		}
	}
	rq_buf_add(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* The merge commit of a clean car: parents the previous result and the tip. */
static int write_merge(train *t, const rq_train_car *c, const rq_oid *tree, rq_car_result *car)
{
	rq_oid parents[2];
	char *msg = merge_message(t, c);
	int rc;

	if (!msg)
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	parents[0] = car->onto;
	parents[1] = car->tip;
	rc = rq_commit_merge(t->shared.odb, t->algo, tree, parents, 2, t->ident, t->ident, msg,
			     &car->commit, t->err);
	free(msg);
	t->merges_made += rc == 0;
	return rc;
}

/* A car by merge, as `git merge --no-ff <tip>` onto the previous result
 * (git merge-tree --write-tree, then git commit-tree). 0 ok, 1 conflict, -1. */
static int merge_car(train *t, const rq_train_car *c, rq_car_result *car)
{
	rq_reach_reader rd = rq_cobj_reach_reader(rq_commits_cache(t->commits));
	rq_oid base, ours, theirs, tree;
	rq_conflicts conf = {0};
	int rc;

	if (car_tip(t, c, &car->tip) < 0)
		return -1;
	rc = rq_oid_eq(&car->tip, &car->onto)
		 ? 1
		 : rq_reach_descends(&rd, &car->onto, &car->tip, t->err);
	if (rc < 0)
		return -1;
	if (rc) {
		car->up_to_date = 1; /* git: "Already up to date." */
		car->commit = car->onto;
		return 0;
	}
	if ((rc = car_base(t, car, &base, &conf)) < 0 || tree_of(t, &car->onto, &ours) < 0 ||
	    tree_of(t, &car->tip, &theirs) < 0) {
		rq_conflicts_free(&conf);
		return -1;
	}
	if (!car->merge_bases) /* git merge and git merge-tree's words */
		return rq_error_set(t->err, RQ_E_USAGE, "refusing to merge unrelated histories");
	if (rc == 0)
		rc = merge_trees(t, &base, &ours, &theirs, &tree, &conf);
	if (rc == 1) {
		car->status = RQ_CAR_CONFLICT;
		car->conflict_commit = car->tip;
		car->conflicts = conf;
		return 1;
	}
	rq_conflicts_free(&conf);
	return rc < 0 ? -1 : write_merge(t, c, &tree, car);
}

/* ---- the train ---- */

/* Car k onto the last good result; it becomes the last good one when it
 * goes in. 0 ok or skipped, 1 conflict, -1. */
static int run_car(train *t, size_t k)
{
	const rq_train_car *c = &t->opts->cars[k];
	rq_car_result *car = &t->res->cars[k];
	int rc;

	car->onto = t->res->head;
	if (!(car->name = strdup(c->name)))
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	if (c->skip) {
		car->status = RQ_CAR_SKIPPED;
		return 0;
	}
	if (t->opts->cancel && *t->opts->cancel)
		return rq_error_set(t->err, RQ_E_INTERRUPTED, "interrupted");
	rc = t->opts->method == RQ_TRAIN_MERGE ? merge_car(t, c, car) : rebase_car(t, c, car);
	if (rc < 0 && strncmp(t->err->msg, "car '", 5) && t->err->code != RQ_E_NOMEM &&
	    t->err->code != RQ_E_INTERRUPTED) { /* which car failed the train */
		char msg[RQ_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", t->err->msg);
		rq_error_set(t->err, t->err->code, "car '%s': %s", c->name, msg);
	}
	if (rc == 0) {
		car->status = RQ_CAR_OK;
		t->res->head = car->commit;
	}
	return rc;
}

/* car k's update into r: its ref's old value as db reads it now (zero:
 * it does not exist yet). 0, or -1. */
static int car_update(train *t, rq_refdb *db, size_t k, size_t *cap)
{
	rq_car_result *car = &t->res->cars[k];
	char ref[RQ_TRAIN_PREFIX_MAX + 80];
	rq_oid old = {{0}};
	int rc;

	car_ref(t, &t->opts->cars[k], ref, sizeof(ref));
	if (!(car->ref = strdup(ref)))
		return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
	rc = rq_refdb_resolve(db, ref, &old, NULL, t->err);
	if (rc < 0)
		return rq_refdb_fail(t->err, "cannot read ref");
	if (rc == RQ_REFDB_MISSING)
		memset(&old, 0, sizeof(old));
	return rq_replay_result_add_update(&t->res->replay, cap, ref, &car->commit, &old, t->err);
}

/* The ref of every car that went in, in car order (one ref database for
 * them all). */
static int car_updates(train *t)
{
	rq_refdb *db = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t k = 0; rc == 0 && k < t->res->ncars && !t->opts->no_refs; k++) {
		if (t->res->cars[k].status != RQ_CAR_OK)
			continue;
		if (!db && rq_refdb_open(&db, t->repo, t->err) < 0)
			rc = rq_refdb_fail(t->err, "cannot read ref");
		else
			rc = car_update(t, db, k, &cap);
	}
	rq_refdb_free(db);
	return rc;
}

/* The whole train's statistics: the cars' commits, the merges (the
 * merger's counts: breaking a chain of renames is no merge), the merge
 * commits among the commits written. */
static void train_stats(train *t, double t_cars)
{
	rq_replay_stats *st = &t->res->replay.stats;
	const rq_merge_stats *ms = rq_merger_stats(t->shared.merger);

	for (size_t k = 0; k < t->res->ncars; k++) {
		st->commits += t->res->cars[k].commits;
		st->picked += t->res->cars[k].picked;
		st->dropped += t->res->cars[k].dropped;
	}
	st->picked += t->merges_made;
	st->merges_trivial = ms->trivial;
	st->merges_full = ms->full;
	st->merges_fallback = ms->fallback;
	st->scores_computed = ms->scores_computed;
	st->scores_reused = ms->scores_reused;
	st->groups = t->res->ncars;
	st->parallel = 1;
	st->ms_replay = rq_clock_mono_fms() - t_cars;
}

/* The one pack, when some car went in (else nothing stays behind). */
static int write_pack(train *t)
{
	rq_replay_stats *st = &t->res->replay.stats;
	rq_odb_tmpdir_stats os;
	int any = 0;
	double t1 = rq_clock_mono_fms();

	for (size_t k = 0; k < t->res->ncars; k++)
		any |= t->res->cars[k].status == RQ_CAR_OK;
	if (!any)
		return 0;
	rq_commits_release(t->commits);
	git_odb_free(t->shared.odb);
	t->shared.odb = NULL;
	if (rq_odb_tmpdir_finish(t->shared.tmpdir, &os, t->err) < 0)
		return -1;
	st->objects = os.objects;
	st->pack_bytes = os.pack_bytes;
	memcpy(st->pack_name, os.pack_name, sizeof(os.pack_name));
	st->ms_pack = rq_clock_mono_fms() - t1;
	return 0;
}

/* The first conflicting car's conflict, also as the train's (a copy). */
static int first_conflict(train *t)
{
	rq_replay_result *r = &t->res->replay;

	for (size_t k = 0; k < t->res->ncars; k++) {
		const rq_car_result *car = &t->res->cars[k];
		if (car->status != RQ_CAR_CONFLICT)
			continue;
		r->conflicted = 1;
		r->conflict_commit = car->conflict_commit;
		r->conflict_merge = car->conflict_merge;
		for (size_t i = 0; i < car->conflicts.n; i++)
			if (rq_conflicts_add(&r->conflicts, car->conflicts.v[i].path,
					     car->conflicts.v[i].kind) < 0)
				return rq_error_set(t->err, RQ_E_NOMEM, "out of memory");
		return 1;
	}
	return 0;
}

/* Every car in order; 0, or -1 (a car's error stops the train). */
static int run_cars(train *t)
{
	double t1 = rq_clock_mono_fms();

	t->res->replay.stats.ms_resolve = t1 - t->t0;
	for (size_t k = 0; k < t->opts->ncars; k++)
		if (run_car(t, k) < 0)
			return -1;
	train_stats(t, t1);
	return 0;
}

int rq_train_run(git_repository *repo, const rq_train_opts *opts, rq_train_result *result,
		 rq_error *err)
{
	train t;
	int rc;

	memset(result, 0, sizeof(*result));
	memset(&t, 0, sizeof(t));
	t.repo = repo;
	t.opts = opts;
	t.res = result;
	t.err = err;
	t.t0 = rq_clock_mono_fms();
	result->method = opts->method;
	git_error_clear();
	rc = set_up(&t);
	if (rc == 0)
		rc = run_cars(&t);
	if (rc == 0)
		rc = car_updates(&t);
	if (rc == 0)
		rc = write_pack(&t);
	if (rc == 0)
		rc = first_conflict(&t);
	git_odb_free(t.shared.odb);
	rq_odb_tmpdir_free(t.shared.tmpdir);
	rq_merger_free(t.shared.merger);
	rq_commits_free(t.commits); /* after the merger that reads through it */
	result->replay.stats.ms_total = rq_clock_mono_fms() - t.t0;
	return rc;
}

void rq_train_result_free(rq_train_result *result)
{
	if (!result)
		return;
	for (size_t k = 0; k < result->ncars && result->cars; k++) {
		rq_conflicts_free(&result->cars[k].conflicts);
		free(result->cars[k].ref);
		free(result->cars[k].name);
	}
	free(result->cars);
	free(result->target_ref);
	rq_replay_result_free(&result->replay);
	memset(result, 0, sizeof(*result));
}
