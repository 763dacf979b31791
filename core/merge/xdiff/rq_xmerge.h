/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xmerge: the 3-way merge of one text file, the line merge of the tree
 * merge (core/merge/ort/rq_ort_content.c is its one caller).
 *
 * It gives the result git's merge-ort gets from ll_merge() -> xdl_merge()
 * with the settings merge-ort hard-codes: the histogram diff (rq_xdiff.h),
 * level XDL_MERGE_ZEALOUS, the conflict style of merge.conflictStyle, no
 * whitespace options, the built-in text or union driver (the path's merge
 * attribute, core/merge/ort/rq_attr.h). rq_xmerge() gives a clean result
 * only; rq_xmerge_union() the union driver's, never a conflict;
 * rq_xmerge_marked() also writes a conflict as git writes it, with
 * conflict markers (the remerge of a merge commit keeps its conflicts,
 * core/merge/rq_remerge.c); rq_xmerge_remerge() is the merge that carries a
 * merge's resolution, where conflict hunks are never split.
 */
#ifndef RQ_XMERGE_H
#define RQ_XMERGE_H

#include <stddef.h>

/*
 * merge.conflictStyle. Beyond the shape of conflicted text, it changes what
 * conflicts: overlapping changes that end in the same text on both sides,
 * without being the same change of the same base lines, are resolved by
 * git's conflict refinement with the default style only; with diff3 and
 * zdiff3 the base must be shown, and they conflict.
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

/* The conflict markers of a marked merge: their labels (NULL: a marker
 * without a label, as git writes it) and length. */
typedef struct rq_xmerge_marks {
	const char *ours, *base, *theirs;
	int size; /* characters of each marker; 0: git's 7 */
} rq_xmerge_marks;

/*
 * rq_xmerge, and on RQ_XMERGE_CONFLICT the text with conflict markers in
 * *out, as xdl_fill_merge_buffer writes it after xdl_merge refined the
 * conflicts for the style (merge: split where the two sides agree, and
 * conflicts at most 3 lines apart joined; zdiff3: the lines both sides
 * start or end with moved out; diff3: as found).
 */
rq_xmerge_result rq_xmerge_marked(const char *base, size_t nbase, const char *ours, size_t nours,
				  const char *theirs, size_t ntheirs, rq_xmerge_style style,
				  const rq_xmerge_marks *marks, char **out, size_t *outlen);

/*
 * The merge of a remerge (core/merge/rq_remerge.c): base and ours may be
 * texts written by rq_xmerge_marked with marks (base_marked, ours_marked):
 * each of their conflict hunks, from its "<<<<<<<" line to its ">>>>>>>"
 * line, is one record of the diffs, so that it is taken or replaced whole,
 * never split. On RQ_XMERGE_CLEAN, *kept is 1 when a conflict hunk of ours
 * is in the result (the merge did not resolve it). favor_union: the union
 * driver's merge (as rq_xmerge_union).
 */
rq_xmerge_result rq_xmerge_remerge(const char *base, size_t nbase, int base_marked,
				   const char *ours, size_t nours, int ours_marked,
				   const char *theirs, size_t ntheirs, rq_xmerge_style style,
				   int favor_union, const rq_xmerge_marks *marks, char **out,
				   size_t *outlen, int *kept);

/* git's buffer_is_binary(): a NUL in the first 8000 bytes. Both the line
 * merge's caller and the rename similarity use it, as git does. */
int rq_xmerge_buffer_is_binary(const char *buf, size_t n);

#endif
