/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay_pick: the picks of a replay in this process (internal to
 * core/replay/; see rq_replay_state.h).
 */
#ifndef RQ_REPLAY_PICK_H
#define RQ_REPLAY_PICK_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_replay_state.h"

/* The tree of commit. 0, or -1 with rp->err set. */
int rq_replay_pick_commit_tree(rq_replay_state *rp, const rq_oid *commit, rq_oid *tree);

/* Pick (or revert) walk.commits[i] onto last (its tree: last_tree, for a
 * revert) or its parent's new form: 0 done (the commit map has it), 1
 * conflict, -1 error. */
int rq_replay_pick_one(rq_replay_state *rp, size_t i, const rq_oid *last, const rq_oid *last_tree);

/* Pick every commit, in order. 0 clean, 1 conflict, -1 error; *fail is
 * the index of the failing pick. */
int rq_replay_pick_range(rq_replay_state *rp, size_t *fail);

/* Keep-going: pick every commit whose parent replayed, in order; a
 * conflict is kept (res->failed) and the commits below it are skipped.
 * 0, or -1 on an error (which still stops the replay). */
int rq_replay_pick_range_kg(rq_replay_state *rp);

/* A conflicting pick of a keep-going replay goes to res->failed (its walk
 * index: SIZE_MAX when not known), so that the result stays clean for the
 * next pick. 0 or -1. */
int rq_replay_pick_keep_conflict(rq_replay_state *rp, size_t i);

#endif
