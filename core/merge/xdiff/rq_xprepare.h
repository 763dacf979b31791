/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_xprepare: the preparation of a line diff (git's xprepare.c; internal
 * to core/merge/xdiff/): split both buffers into records and number the
 * distinct lines (see rq_xprepare.c).
 */
#ifndef RQ_XPREPARE_H
#define RQ_XPREPARE_H

#include "rq_xdiff.h"

/*
 * Split both buffers and number the distinct lines in order of first
 * appearance, file 1 first (git's xdl_prepare_env with its classifier).
 * as/bs: the spans of a and of b taken as single records (NULL: none).
 * 0, or -1 out of memory (env freed).
 */
int rq_xprepare_env(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
		    const char *b, long nb, const rq_xdiff_spans *bs);

#endif
