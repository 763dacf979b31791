/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xhistogram: the histogram line diff (git's xhistogram.c, after JGit;
 * internal to core/merge/xdiff/), the algorithm merge-ort diffs with (see
 * rq_xhistogram.c).
 */
#ifndef RQ_XHISTOGRAM_H
#define RQ_XHISTOGRAM_H

#include "rq_xdiff.h"

/*
 * Diff lines line1.. (count1, 1-based) of env's file 1 against line2..
 * (count2) of its file 2 (env prepared by rq_xprepare_env), marking the
 * changed lines. 0, RQ_XDIFF_NOMEM or RQ_XDIFF_TOO_COMPLEX.
 */
int rq_xhistogram_diff(rq_xdiff_env *env, long line1, long count1, long line2, long count2);

#endif
