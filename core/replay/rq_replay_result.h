/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay_result: what a replay (rq_replay_run) gives back: the ref
 * updates to make (rq_ref_updates, which core/refs applies), the conflict
 * that stopped it, its statistics and, with --keep-going, every ref's
 * outcome and every conflicting pick (rq_outcome fills them).
 */
#ifndef RQ_REPLAY_RESULT_H
#define RQ_REPLAY_RESULT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_merge.h"
#include "rq_ref_update.h"

/* A ref's outcome with --keep-going. */
typedef enum {
	RQ_REF_OK,	 /* replayed: its update is in result->upd */
	RQ_REF_CONFLICT, /* one of its own commits conflicted */
	RQ_REF_BLOCKED	 /* stacked on (or sharing commits with) a ref that conflicted */
} rq_ref_status;

/* A pick that conflicted, with --keep-going. */
typedef struct rq_pick_conflict {
	size_t index;  /* in the walk (replay order) */
	rq_oid commit; /* the original commit */
	int merge;     /* it is a merge commit (rq_remerge) */
	rq_conflicts conflicts;
} rq_pick_conflict;

typedef struct rq_ref_outcome {
	char *ref;
	rq_ref_status status;
	rq_oid old_id;
	rq_oid new_id;	  /* zero unless RQ_REF_OK */
	size_t at;	  /* the walk index of the commit it points at (SIZE_MAX: the end) */
	size_t failed;	  /* conflict, blocked: the pick it waits on, in result->failed */
	char *blocked_by; /* blocked: the ref that owns that pick */
} rq_ref_outcome;

typedef struct rq_replay_stats {
	size_t commits;	      /* commits in the range */
	size_t picked;	      /* new commits written */
	size_t dropped;	      /* picks that became empty and were dropped */
	size_t merge_commits; /* merge commits replayed (written or dropped) */
	size_t merges_trivial, merges_full, merges_fallback;
	size_t scores_computed, scores_reused; /* rename similarity scores */
	size_t groups;			       /* independent groups of commits */
	size_t parallel;		       /* children that replayed them (1: in process) */
	size_t not_utf8; /* new commits whose bytes were not UTF-8 (converted; git warns) */
	size_t objects;	 /* new objects */
	uint64_t pack_bytes;
	char pack_name[96];
	double ms_resolve, ms_walk, ms_replay, ms_pack, ms_total;
} rq_replay_stats;

typedef struct rq_replay_result {
	rq_ref_updates upd; /* the updates and their reflog message (rq_refs applies them) */
	int conflicted;
	rq_oid conflict_commit; /* the commit whose pick conflicted */
	int conflict_merge;	/* it is a merge commit: see rq_remerge.h */
	rq_conflicts conflicts;
	rq_replay_stats stats;
	rq_oid tip; /* the new form of the last commit replayed (the new base: none) */
	/* with keep_going: every ref's outcome, in update order, and every
	 * conflicting pick, in replay order (the first is also in conflict_*) */
	int keep_going;
	rq_ref_outcome *refs;
	size_t nrefs, refs_cap;
	rq_pick_conflict *failed;
	size_t nfailed, failed_cap;
} rq_replay_result;

/* Add the update of ref (new_id over old_id) to r->upd; cap is its room.
 * 0, or -1 with err set. */
int rq_replay_result_add_update(rq_replay_result *r, size_t *cap, const char *ref,
				const rq_oid *new_id, const rq_oid *old_id, rq_error *err);
/* Free r's updates and leave it with none (a replay that failed). */
void rq_replay_result_free_updates(rq_replay_result *r);
void rq_replay_result_free(rq_replay_result *result);

#endif
