/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xclassic: the classic (Myers) line diff with xdiff's heuristics
 * (git's xdiffi.c; internal to core/merge/xdiff/), which the histogram diff
 * falls back to for regions where every common line is too frequent (see
 * rq_xclassic.c).
 */
#ifndef RQ_XCLASSIC_H
#define RQ_XCLASSIC_H

#include "rq_xdiff.h"

/*
 * xdl_do_diff() for the Myers algorithm on two buffers (as/bs: their spans,
 * as for rq_xdiff_histogram_spans): prepare env, with trimming and cleanup,
 * and mark the changed lines in it. 0, or -1 out of memory (env freed).
 */
int rq_xclassic_diff(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
		     const char *b, long nb, const rq_xdiff_spans *bs);

#endif
