/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ref_update: the ref updates to make, the list core/refs applies
 * (rq_refs), prints (rq_refs_format_updates) and marks (rq_refmark). A
 * replay's result (rq_replay_result) and a job's intent hold one; this
 * header lets core/refs work on them without knowing the replay.
 */
#ifndef RQ_REF_UPDATE_H
#define RQ_REF_UPDATE_H

#include <git2.h>
#include <stddef.h>

typedef struct rq_ref_update {
	char *ref;
	git_oid old_id; /* zero: the ref must not exist yet */
	git_oid new_id;
} rq_ref_update;

/* The updates, in order, and the reflog message every one is written with
 * ("replay --onto <id>", "replay --advance <branch>", ...). */
typedef struct rq_ref_updates {
	rq_ref_update *updates;
	size_t nupdates;
	char reflog_msg[300];
} rq_ref_updates;

#endif
