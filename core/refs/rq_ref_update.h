/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ref_update: the ref updates to make, the list core/refs applies
 * (rq_refs), prints (rq_refs_format_updates) and marks (rq_refmark). A
 * replay's result (rq_replay_result) and a job's intent hold one; this
 * header lets core/refs work on them without knowing the replay.
 */
#ifndef RQ_REF_UPDATE_H
#define RQ_REF_UPDATE_H

#include <stddef.h>

#include "rq_oid.h"

typedef struct rq_ref_update {
	char *ref;
	rq_oid old_id; /* zero: the ref must not exist yet */
	rq_oid new_id;
} rq_ref_update;

/* The updates, in order, and the reflog message every one is written with
 * ("replay --onto <id>", "replay --advance <branch>", ...). */
typedef struct rq_ref_updates {
	rq_ref_update *updates;
	size_t nupdates;
	char reflog_msg[300];
	/* the repository's object format, the ids' width in every text form
	 * (update lines, markers, JSON); NULL: SHA-1 */
	const rq_oid_algo *algo;
} rq_ref_updates;

/* The format of u's ids (SHA-1 when unset). */
static inline const rq_oid_algo *rq_ref_updates_algo(const rq_ref_updates *u)
{
	return u->algo ? u->algo : &rq_oid_sha1;
}

#endif
