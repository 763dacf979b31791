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

#include <stddef.h>

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

/*
 * Stable names: "content", "add/add", "modify/delete", "rename",
 * "file/directory", "rename/delete", "rename/rename", "directory rename",
 * "mode", "distinct types" (JSON results and the CLI print them; an
 * unknown kind reads "content").
 */
const char *rq_conflict_kind_name(rq_conflict_kind kind);
/* Append a conflict (path copied). 0, or -1 out of memory (c unchanged). */
int rq_conflicts_add(rq_conflicts *c, const char *path, rq_conflict_kind kind);
/* Free the paths and the array; c is empty afterwards. c may be NULL. */
void rq_conflicts_free(rq_conflicts *c);

#endif
