/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_train: a merge train in one call. A train lines up candidates (cars)
 * for a target branch; car k is candidate k applied on top of the cars
 * before it that went in cleanly, so that CI can test each car's result.
 *
 * Each car is a name and revisions: a range (`main..mr-17`, `^main mr-17`)
 * or a branch alone (`mr-17`, read as `<target>..mr-17`), naming one tip.
 * The method is the train's:
 *   - RQ_TRAIN_REBASE: the car's commits replayed onto the previous car's
 *     result, as `git replay --onto <previous> <range>` does (rq_replay,
 *     with the train's shared object store and merger);
 *   - RQ_TRAIN_MERGE: one merge commit, as `git merge --no-ff` would make
 *     it server side: first parent the previous car's result, second the
 *     car's tip, its tree the three-way merge with their merge base, the
 *     message from a template ("Merge branch '{name}' into {target}"),
 *     author and committer the train's committer. Several merge bases
 *     (criss-cross histories) are merged pairwise into a virtual base
 *     first, oldest first, as merge-ort's recursive merge does (the inner
 *     merges with their own merge bases, recursively); the result is what
 *     `git merge-tree --write-tree` gives. A tip already in the previous
 *     result adds nothing (git's "Already up to date"): the car's result is
 *     the previous one; a tip with no history in common with it is refused
 *     ("refusing to merge unrelated histories", as git merge).
 * A car that conflicts drops out (its paths reported) and the next car
 * goes onto the last good one; a car marked skip is reported as skipped
 * and changes nothing, so a train re-formed without a car equals the same
 * train with that car skipped, and cars that come out the same (same
 * inputs, same committer and date) keep their commit ids.
 *
 * One call: the repository opened once (by the caller), one temporary
 * object directory and one merger for every car (so the merge's caches
 * carry from car to car; renames remembered along a chain of picks are
 * forgotten at each car, as separate upstream calls would), one pack at
 * the end. Each car that went in gets an update of the ref <prefix><name>
 * (default prefix refs/train/<target>/), in car order, in result->replay
 * (apply with rq_refs_apply, print with rq_refs_format_updates).
 *
 * Several merge bases are merged into a virtual base as merge-ort does
 * (core/merge/rq_vbase.h, shared with the replay of merge commits): an
 * inner merge that conflicts keeps its conflicts in the virtual base, as
 * git's does. Where the tree merge cannot make an inner merge itself (it
 * would hand it to libgit2) or a history needs more than
 * RQ_VBASE_INNER_MAX inner merges, the car is a conflict of kind "merge
 * bases" at the top level.
 *
 * Returns 0 (every car that is not skipped went in), 1 (some car
 * conflicted: the others' results and updates are there) or -1 with err
 * set (nothing is left in the repository).
 */
#ifndef RQ_TRAIN_H
#define RQ_TRAIN_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_ident.h"
#include "rq_odb.h"
#include "rq_replay.h"

typedef enum { RQ_TRAIN_REBASE, RQ_TRAIN_MERGE } rq_train_method;

#define RQ_TRAIN_CARS_MAX    200
#define RQ_TRAIN_NAME_MAX    64
#define RQ_TRAIN_MESSAGE_MAX 1024
#define RQ_TRAIN_DEFAULT_MSG "Merge branch '{name}' into {target}"
#define RQ_TRAIN_PREFIX_MAX  200

typedef struct rq_train_car {
	const char *name; /* rq_train_name_valid */
	const char *const *revisions;
	size_t nrevisions;
	int skip; /* removed from the train: reported as skipped */
} rq_train_car;

typedef struct rq_train_opts {
	const char *target; /* the target branch (a ref) */
	rq_train_method method;
	const rq_train_car *cars;
	size_t ncars;
	const char *ref_prefix;	   /* NULL: refs/train/<target>/ */
	int no_refs;		   /* no ref per car */
	const char *message;	   /* merge: the template ({name}, {target}); NULL: the default */
	rq_empty empty;		   /* rebase: commits that become empty */
	const rq_ident *committer; /* NULL: git's usual sources */
	size_t max_commits;	   /* per car; 0: no limit */
	const volatile int *cancel;
	const rq_odb_opts *objects;
	struct rq_sign *sign; /* signs every new commit, merges too (rq_sign.h); NULL: none */
} rq_train_opts;

typedef enum { RQ_CAR_OK, RQ_CAR_CONFLICT, RQ_CAR_SKIPPED } rq_car_status;

typedef struct rq_car_result {
	char *name;
	rq_car_status status;
	rq_oid commit;		/* ok: the car's result */
	rq_oid onto;		/* the result it was built on (the target's commit for the first) */
	rq_oid tip;		/* the candidate's tip */
	rq_oid conflict_commit; /* conflict: the commit whose pick (rebase) or merge conflicted */
	int conflict_merge;	/* rebase: that commit is a merge (see rq_remerge.h) */
	rq_conflicts conflicts;
	size_t commits, picked, dropped; /* rebase: the car's commits */
	size_t merge_bases;		 /* merge: how many (2 or more: a virtual base) */
	int up_to_date;			 /* merge: the tip was in the previous result */
	char *ref;			 /* ok with refs: the car's ref */
} rq_car_result;

typedef struct rq_train_result {
	rq_car_result *cars; /* one per car, in order */
	size_t ncars;
	rq_train_method method;
	char *target_ref; /* the target's full name */
	rq_oid base;	  /* the target's commit */
	rq_oid head;	  /* the last good car's result (base: none) */
	/* the cars' ref updates and reflog message, the first conflicting car's
	 * conflict, the statistics of the whole train */
	rq_replay_result replay;
} rq_train_result;

int rq_train_run(git_repository *repo, const rq_train_opts *opts, rq_train_result *result,
		 rq_error *err);
void rq_train_result_free(rq_train_result *result);

/* 1 when a car name is 1-64 of [A-Za-z0-9._-], starting with a letter or
 * digit, without "..", not ending in "." or ".lock". */
int rq_train_name_valid(const char *name);
/* 1 when a ref prefix is "refs/...", ends in '/' and makes valid refs. */
int rq_train_prefix_valid(const char *prefix);
/* "rebase", "merge"; "ok", "conflict", "skipped". */
const char *rq_train_method_name(rq_train_method method);
const char *rq_train_car_status_name(rq_car_status status);

#endif
