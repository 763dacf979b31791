/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xmerge: the 3-way merge of one text file, the line merge of the tree
 * merge (core/merge/ort/rq_ort_content.c is its one caller).
 *
 * It gives the result git's merge-ort gets from ll_merge() -> xdl_merge()
 * with the settings merge-ort hard-codes: the histogram diff (rq_xdiff.h),
 * level XDL_MERGE_ZEALOUS, the conflict style of merge.conflictStyle, no
 * whitespace options, no merge driver. Only a clean result is produced: a
 * conflict is reported without the text with conflict markers that git
 * would write, because replayq stops a replay at a conflict and never
 * commits one.
 */
#ifndef RQ_XMERGE_H
#define RQ_XMERGE_H

#include <stddef.h>

/*
 * merge.conflictStyle. Only clean results are written, so the style matters
 * only where it changes what conflicts: overlapping changes that end in the
 * same text on both sides, without being the same change of the same base
 * lines, are resolved by git's conflict refinement with the default style
 * only; with diff3 and zdiff3 the base must be shown, and they conflict.
 */
typedef enum {
	RQ_XMERGE_STYLE_MERGE = 0,
	RQ_XMERGE_STYLE_DIFF3 = 1,
	RQ_XMERGE_STYLE_ZDIFF3 = 2
} rq_xmerge_style;

/* What rq_xmerge returns. */
typedef enum {
	RQ_XMERGE_CLEAN = 0,	/* *out holds the merged text */
	RQ_XMERGE_CONFLICT = 1, /* some change of one side overlaps the other's */
	RQ_XMERGE_NOMEM = -1,	/* out of memory */
	/*
	 * A histogram diff met a bucket chain of 64 distinct lines (or its
	 * change groups went out of step): git's xdiff fails there and its
	 * merge reports an error, so there is no result to reproduce. The
	 * tree merge hands such a pick to its fallback.
	 */
	RQ_XMERGE_TOO_COMPLEX = -2
} rq_xmerge_result;

/*
 * Merge ours and theirs (each a version of base). On RQ_XMERGE_CLEAN *out
 * is the merged text (malloc'd, never NULL, *outlen bytes); on any other
 * result *out is NULL and *outlen 0.
 */
rq_xmerge_result rq_xmerge(const char *base, size_t nbase, const char *ours, size_t nours,
			   const char *theirs, size_t ntheirs, rq_xmerge_style style, char **out,
			   size_t *outlen);

/*
 * The union merge (the merge attribute's built-in "union" driver: xdl_merge
 * with XDL_MERGE_FAVOR_UNION): as rq_xmerge, but where the sides clash the
 * result has both, ours' lines then theirs' (after git's refinement of the
 * conflicts for the style). Never RQ_XMERGE_CONFLICT.
 */
rq_xmerge_result rq_xmerge_union(const char *base, size_t nbase, const char *ours, size_t nours,
				 const char *theirs, size_t ntheirs, rq_xmerge_style style,
				 char **out, size_t *outlen);

/* git's buffer_is_binary(): a NUL in the first 8000 bytes. Both the line
 * merge's caller and the rename similarity use it, as git does. */
int rq_xmerge_buffer_is_binary(const char *buf, size_t n);

#endif
