/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_conflict: the conflicts a merge reports, one per path, with a stable
 * kind (part of the merge's public API: rq_merge.h includes this header).
 *
 * A list lives in its caller (the replay stops at the first pick that
 * conflicts and reports that pick's list); the merge appends to it. Kept
 * apart from rq_merge.h so that the tree merge's internals (core/merge/ort)
 * can fill a list without depending on the merger above them.
 */
#ifndef RQ_CONFLICT_H
#define RQ_CONFLICT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_oid.h"

typedef enum {
	RQ_CONFLICT_CONTENT,
	RQ_CONFLICT_ADD_ADD,
	RQ_CONFLICT_MODIFY_DELETE,
	RQ_CONFLICT_RENAME,
	RQ_CONFLICT_FILE_DIRECTORY,
	RQ_CONFLICT_RENAME_DELETE, /* renamed on one side, deleted on the other */
	RQ_CONFLICT_RENAME_RENAME, /* renamed differently on the two sides */
	RQ_CONFLICT_DIR_RENAME,	   /* a path moved (or not) by a directory rename */
	RQ_CONFLICT_MODE,	   /* both sides changed the mode differently */
	RQ_CONFLICT_TYPE,	   /* file, symlink, submodule: different kinds */
	/* a replayed merge commit: the resolution its author made of a
	 * conflict no longer applies (core/merge/rq_remerge.h) */
	RQ_CONFLICT_RESOLUTION,
	/* a replayed merge commit whose merge bases would take more inner
	 * merges to merge than a remerge's budget (rq_remerge.h) */
	RQ_CONFLICT_MERGE_BASES,
	RQ_CONFLICT_COUNT
} rq_conflict_kind;

typedef struct rq_conflict {
	char *path;
	rq_conflict_kind kind;
} rq_conflict;

typedef struct rq_conflicts {
	rq_conflict *v;
	size_t n, cap;
} rq_conflicts;

/* One version of a conflicting path (mode 0: absent). */
typedef struct rq_conflict_version {
	rq_oid oid;
	uint32_t mode;
} rq_conflict_version;

/*
 * What a merge that keeps its conflicts (rq_merger_merge_accept) tells of
 * one: the three versions the merge met at the path (base, ours, theirs,
 * after renames moved them there) and what its conflicted tree holds
 * there. textual: the path's only trouble is a text merge, and the result
 * is that text with conflict markers.
 */
typedef struct rq_conflict_detail {
	int textual;
	rq_conflict_version stages[3];
	rq_conflict_version result;
} rq_conflict_detail;

typedef struct rq_conflict_details {
	rq_conflict_detail *v;
	size_t n, cap;
} rq_conflict_details;

/* Append a detail. 0, or -1 out of memory (d unchanged). */
int rq_conflict_details_add(rq_conflict_details *d, const rq_conflict_detail *detail);
void rq_conflict_details_free(rq_conflict_details *d);

/*
 * Stable names: "content", "add/add", "modify/delete", "rename",
 * "file/directory", "rename/delete", "rename/rename", "directory rename",
 * "mode", "distinct types", "resolution", "merge bases" (JSON results and the CLI print them; an
 * unknown kind reads "content").
 */
const char *rq_conflict_kind_name(rq_conflict_kind kind);
/* Append a conflict (path copied). 0, or -1 out of memory (c unchanged). */
int rq_conflicts_add(rq_conflicts *c, const char *path, rq_conflict_kind kind);
/* Free the paths and the array; c is empty afterwards. c may be NULL. */
void rq_conflicts_free(rq_conflicts *c);

#endif
