/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ort_content: the merge of one path's three versions when both sides
 * changed it to the same kind of object (merge-ort's handle_content_merge
 * with merge_3way): the mode, then the content (a text merge through
 * core/merge/xdiff/rq_xmerge, a binary file, a symlink, a submodule).
 */
#ifndef RQ_ORT_CONTENT_H
#define RQ_ORT_CONTENT_H

#include "rq_ort.h"

/* Why a content merge was not clean (bits of *why). */
enum {
	RQ_ORT_CONTENT_CONFLICT = 1, /* both sides changed the content */
	RQ_ORT_CONTENT_BINARY = 2,   /* ... of a binary (or too large) file */
	RQ_ORT_CONTENT_MODE = 4,     /* both sides changed the mode, differently */
	RQ_ORT_CONTENT_OTHER = 8,    /* a case left to the fallback */
	/* a text merge with conflicts: git would write the text with conflict
	 * markers as the result, which is not reproduced */
	RQ_ORT_CONTENT_TEXT = 16,
	/* a remerge's third merge: a conflict where R had one, which the
	 * original merge's author resolved (RQ_CONFLICT_RESOLUTION) */
	RQ_ORT_CONTENT_RESOLUTION = 32
};

/*
 * Merge base, side1 and side2 (the same object kind on both sides; base
 * may be absent or of another kind: a two-way merge then) of the file at
 * path (whose attributes choose the merge driver), found at paths (base's,
 * side 1's, side 2's: the labels of conflict markers name them when they
 * differ; NULL: one path). Sets *result
 * (on a conflict: side1's content, as git does for binary files, symlinks
 * and submodules), *clean, and *why (RQ_ORT_CONTENT_* bits, 0 when clean).
 * A clean text merge writes its blob (or only hashes it once the merge
 * has a conflict). 0, or -1 on error.
 */
int rq_ort_content_merge(rq_ort_merge *merge, const char *path, const rq_ort_stage *base,
			 const rq_ort_stage *side1, const rq_ort_stage *side2,
			 const char *const *paths, rq_ort_stage *result, int *clean, int *why);

#endif
