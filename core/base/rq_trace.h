/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_trace: with -DRQ_TRACE, one timestamped line per phase of a replay on
 * stderr (the process id, CLOCK_MONOTONIC milliseconds, the phase): where
 * a replay's time goes, worker by worker. Without it, nothing.
 */
#ifndef RQ_TRACE_H
#define RQ_TRACE_H

#ifdef RQ_TRACE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline double rq_trace_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define RQ_TRACE_AT(what) fprintf(stderr, "[%d] %9.3f %s\n", (int)getpid(), rq_trace_ms(), what)
#else
#define RQ_TRACE_AT(what) ((void)0)
#endif

#endif
