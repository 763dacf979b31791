/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_replay_groups: the picks of a replay spread over its workers
 * (internal to core/replay/; see rq_replay_state.h).
 */
#ifndef RQ_REPLAY_GROUPS_H
#define RQ_REPLAY_GROUPS_H

#include <stddef.h>

#include "rq_replay_state.h"

/* Independent groups, when there are workers and enough commits: *group
 * (the caller frees it) and their number; 0 groups: pick in one process.
 * 0, or -1 with rp->err set. */
int rq_replay_groups_plan(rq_replay_state *rp, size_t **group, size_t *ngroups);

/* The groups, picked by this process and its workers. In a worker this
 * does not return. 0 clean, 1 conflict, -1 error. */
int rq_replay_groups_pick(rq_replay_state *rp, const size_t *group, size_t ngroups);

/* One process after all: the workers are let go (a worker exits here) and
 * every commit is picked here. 0 clean, 1 conflict, -1 error. */
int rq_replay_groups_alone(rq_replay_state *rp);

#endif
