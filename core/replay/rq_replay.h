/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay: replay commits onto a new base without a worktree or index.
 *
 * This is the engine's one entry point, modelled on git's replay: it takes
 * an opened repository, revision arguments and options, replays the
 * selected commits (rebase with RQ_MODE_ONTO, cherry-pick with
 * RQ_MODE_ADVANCE, revert with RQ_MODE_REVERT) and fills a result with the
 * ref updates to make. It never prints, never exits and never touches a
 * worktree, the index or a ref: rq_refs_apply() applies the updates (all
 * locked and checked before the first moves; see rq_refs.h for what holds
 * on each ref storage), rq_refs_format_updates() writes them as
 * `update <ref> <new> <old>` lines for `git update-ref --stdin`.
 *
 * New objects go to a temporary object directory and become one packfile
 * in objects/pack before rq_replay_run() returns 0; on conflict or error
 * nothing new is left in the repository.
 *
 * With opts->jobs > 1, commits that fall into independent groups (branches
 * that share no commit to replay) are replayed by forked children that
 * share the opened repository, its mapped packs and the temporary object
 * directory; the parent gathers their commit maps. Output, commit ids and
 * the conflict reported are those of a sequential run. A child that dies
 * fails the whole replay (RQ_E_CRASHED) and no child is left running.
 * Children end with _exit(); nothing else in the library exits.
 *
 * With opts->keep_going (--keep-going), a conflict does not stop the
 * replay: every commit whose parent replayed is picked, a commit whose
 * parent conflicted or was skipped is skipped, and the result lists every
 * conflicting pick (result->failed) and the outcome of every ref
 * (result->refs: ok, conflict, or blocked behind another ref's conflict);
 * result->updates holds the clean refs' updates only, and the pack holds
 * every object the replay wrote (rq_outcome.h).
 *
 * With opts->shared (a train, rq_train), the replay writes into the
 * caller's object store with the caller's merger and packs nothing: the
 * caller does, once, for all its replays.
 *
 * Returns 0 (clean), 1 (conflict: result->conflict filled, no updates;
 * with keep_going: the clean refs' updates are there) or -1 with err set.
 */
#ifndef RQ_REPLAY_H
#define RQ_REPLAY_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_ident.h"
#include "rq_merge.h"
#include "rq_odb.h"
#include "rq_odb_tmpdir.h"
#include "rq_replay_result.h"

typedef enum { RQ_MODE_ONTO, RQ_MODE_ADVANCE, RQ_MODE_REVERT } rq_mode;

typedef enum { RQ_EMPTY_DROP, RQ_EMPTY_KEEP, RQ_EMPTY_ABORT } rq_empty;

/* The names of rq_empty's values in its order ("drop", "keep", "abort"),
 * then NULL: what --empty and a job's "empty" take and say. */
extern const char *const rq_replay_empty_names[];

/*
 * What the replays of a train share (rq_train): the temporary object
 * directory, the odb that writes into it, and the merger (its caches). A
 * replay given one neither opens, packs nor frees them, forks no worker,
 * and installs no object database of its own.
 */
typedef struct rq_replay_shared {
	rq_odb_tmpdir *tmpdir;
	git_odb *odb;
	rq_merger *merger;
} rq_replay_shared;

typedef struct rq_replay_opts {
	rq_mode mode;
	const char *target; /* --onto commit-ish, or the --advance/--revert branch */
	int contained;	    /* --contained (RQ_MODE_ONTO only) */
	const char *ref;    /* --ref: fully qualified ref that receives the result */
	const char *const *revisions;
	size_t nrevisions;
	rq_empty empty;
	const rq_ident *committer; /* NULL: git's usual sources (rq_ident_default) */
	/* the current author: a revert's (git revert's), and a pick's whose
	 * original has no author line after re-encoding; NULL: the committer */
	const rq_ident *author;
	size_t max_commits; /* 0: no limit */
	int jobs;	    /* forked children for independent groups (<= 1: none) */
	int jobs_auto;	    /* jobs is a default: see RQ_PARALLEL_AUTO_MIN (rq_parallel.h) */
	const volatile int *cancel; /* set (by a signal handler) to stop at the next pick */
	const rq_odb_opts *objects; /* how objects are read (rq_odb); NULL: no root */
	int keep_going;		    /* --keep-going: every branch gets its own outcome */
	rq_replay_shared *shared;   /* a train's object store and merger; NULL: own */
	struct rq_sign *sign;	    /* signs every new commit (rq_sign.h); NULL: none */
	/* tests: runs in each forked worker (1..jobs-1) right after the fork,
	 * before it resolves the revisions */
	void (*child_hook)(unsigned worker, void *arg);
	void *child_hook_arg;
} rq_replay_opts;

int rq_replay_run(git_repository *repo, const rq_replay_opts *opts, rq_replay_result *result,
		  rq_error *err);

#endif
