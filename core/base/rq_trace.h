/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_trace: with -DRQ_TRACE, one timestamped line per phase of a replay on
 * stderr (the process id, monotonic milliseconds, the phase): where
 * a replay's time goes, worker by worker. Without it, nothing.
 */
#ifndef RQ_TRACE_H
#define RQ_TRACE_H

#ifdef RQ_TRACE
#include <stdio.h>
#include "rq_clock.h"
#include <unistd.h>

#define RQ_TRACE_AT(what)                                                                          \
	fprintf(stderr, "[%d] %9.3f %s\n", (int)getpid(), rq_clock_mono_fms(), what)
#else
#define RQ_TRACE_AT(what) ((void)0)
#endif

#endif
