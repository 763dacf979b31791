/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay_state: the state of one rq_replay_run() call, shared by its
 * parts (internal to core/replay/; the replay's entry point is
 * rq_replay.h):
 *
 *   rq_replay.c         the driver: the options, the revisions and the
 *                       target, the walk, the ref updates, the pack (the
 *                       six phases, read top to bottom at its end)
 *   rq_replay_pick.c    the picks in this process: one commit merged onto
 *                       its new parent and written, a merge commit
 *                       remerged, the range in order (with --keep-going,
 *                       past its conflicts)
 *   rq_replay_groups.c  the picks spread over the workers: independent
 *                       groups of commits handed to rq_parallel, or all of
 *                       them in this process when it is not worth it
 */
#ifndef RQ_REPLAY_STATE_H
#define RQ_REPLAY_STATE_H

#include <git2.h>
#include <stddef.h>

#include "rq_commit.h"
#include "rq_error.h"
#include "rq_ident.h"
#include "rq_merge.h"
#include "rq_odb_tmpdir.h"
#include "rq_oidmap.h"
#include "rq_outcome.h"
#include "rq_parallel.h"
#include "rq_parents.h"
#include "rq_replay.h"
#include "rq_revs.h"
#include "rq_walk.h"

/* Local branches (and a detached HEAD) by the commit they point at. */
typedef struct ref_tip {
	rq_oid oid;
	char *ref;
} ref_tip;

typedef struct ref_tips {
	ref_tip *v;
	size_t n, cap;
} ref_tips;

/* Everything one rq_replay_run() call holds. */
typedef struct rq_replay_state {
	git_repository *repo;
	const rq_oid_algo *algo; /* the repository's object format (rq_odb_algo) */
	const rq_replay_opts *opts;
	rq_replay_result *res;
	rq_error *err;
	rq_revs revs;
	rq_walk walk;
	rq_cobj_cache *commits; /* the job's commits (revs.commits' cache) */
	ref_tips tips;		/* --onto: the refs a replay may move, by their commit */
	rq_odb_tmpdir *tmpdir;	/* where the new objects go until the pack */
	rq_merger *merger;
	git_odb *odb;	 /* the repository's, writing into tmpdir's memory store */
	rq_oidmap map;	 /* original commit -> index in new_ids */
	rq_oid *new_ids; /* replayed form of walk.commits[i] */
	rq_oid *new_trees;
	unsigned char *warned; /* walk.commits[i]'s new commit was not UTF-8 (git warns) */
	rq_commit_cfg commit_cfg;
	rq_oid onto, onto_tree;
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
} rq_replay_state;

#endif
