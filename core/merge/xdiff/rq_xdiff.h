/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xdiff: the two-way line diff under the line merge (internal to
 * core/merge/xdiff/; the tree merge never calls it, it calls rq_xmerge).
 *
 * It computes, for two buffers, the same edit script that git's xdiff
 * computes for a 3-way merge as merge-ort runs it: the histogram algorithm
 * (merge-ort asks ll_merge for XDF_HISTOGRAM_DIFF whatever diff.algorithm
 * says), which hands the regions where every common line is too frequent
 * to the classic Myers diff with xdiff's cost heuristics, then the sliding
 * of change groups (xdl_change_compact, without the indent heuristic, which
 * merges do not use), then the script (xdl_build_script). The algorithms
 * are xdiff's (by Davide Libenzi, the histogram diff by Tay Ray Chuan after
 * JGit); the code is written anew for this project: see README: Credits.
 *
 * Why not libgit2's git_merge_file(): it diffs with Myers only, and Myers
 * and histogram disagree on a few percent of real merges; the result must
 * be git's.
 *
 * Line numbering follows xdiff: a file is an array of records (lines, each
 * with its newline), 0-based in rq_xdiff_change and in the record arrays,
 * 1-based inside the histogram diff (as in xhistogram.c).
 */
#ifndef RQ_XDIFF_H
#define RQ_XDIFF_H

#include <stddef.h>

/* One line of a file: where it is and its class (equal lines, equal class). */
typedef struct rq_xdiff_rec {
	const char *ptr;
	long size;	  /* bytes, the newline included when there is one */
	unsigned long ha; /* class: lines are numbered by first appearance */
} rq_xdiff_rec;

/* One side of a diff (xdiff's xdfile_t). */
typedef struct rq_xdiff_file {
	rq_xdiff_rec *recs;
	long nrec;
	char *rchg_mem;	   /* owns rchg */
	char *rchg;	   /* 1: line changed; rchg[-1] and rchg[nrec] are 0 (sentinels) */
	long dstart, dend; /* the lines left after trimming the common ends */
	/* for the classic diff only: the lines kept by the cleanup, and their classes */
	long *rindex;
	unsigned long *ha;
	long nreff;
} rq_xdiff_file;

/* Both sides of a diff and how often each class occurs in each (xdfenv_t). */
typedef struct rq_xdiff_env {
	rq_xdiff_file f1, f2;
	long *len1, *len2; /* occurrences of each class in f1, in f2 */
	long nclass;
	int has_spans; /* some record holds several lines (rq_xdiff_spans) */
} rq_xdiff_env;

/* One hunk of the script (xdchange_t): chg1 lines at i1 in f1 became chg2
 * lines at i2 in f2. */
typedef struct rq_xdiff_change {
	long i1, i2, chg1, chg2;
} rq_xdiff_change;

/* What rq_xdiff_histogram returns. */
enum {
	RQ_XDIFF_OK = 0,
	RQ_XDIFF_NOMEM = -1,
	/*
	 * The histogram index met a bucket chain of 64 distinct lines: git's
	 * xdiff fails the diff there (and the merge with it), so there is no
	 * result of git's to reproduce.
	 */
	RQ_XDIFF_TOO_COMPLEX = -2
};

/*
 * Diff a (na bytes) against b with the histogram algorithm, slide the
 * change groups, and build the script: *script (malloc'd, *nscript hunks
 * in file order; NULL when there are none) and env (the records of both
 * files, which the script indexes; free with rq_xdiff_env_free). Returns
 * RQ_XDIFF_OK, or RQ_XDIFF_NOMEM / RQ_XDIFF_TOO_COMPLEX with nothing left to
 * free.
 */
int rq_xdiff_histogram(rq_xdiff_env *env, const char *a, long na, const char *b, long nb,
		       rq_xdiff_change **script, size_t *nscript);

/*
 * Byte ranges of a buffer, each taken as one record (a "line" that can only
 * match an equal range): the conflict hunks of a remerge, which a diff must
 * never split (core/merge/rq_remerge.c). Sorted, disjoint, each starting at
 * a line start and ending after a newline (or at the buffer's end).
 */
typedef struct rq_xdiff_spans {
	const long *start, *end;
	size_t n;
} rq_xdiff_spans;

/* rq_xdiff_histogram with the spans of a and of b as single records
 * (NULL: none). */
int rq_xdiff_histogram_spans(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
			     const char *b, long nb, const rq_xdiff_spans *bs,
			     rq_xdiff_change **script, size_t *nscript);

void rq_xdiff_env_free(rq_xdiff_env *env);

#endif
