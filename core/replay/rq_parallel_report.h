/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_parallel_report: a worker's report to the parent of a parallel
 * replay, written by the child and read back by the parent (internal to
 * core/replay/; rq_parallel uses it).
 */
#ifndef RQ_PARALLEL_REPORT_H
#define RQ_PARALLEL_REPORT_H

#include <stddef.h>

#include "rq_buf.h"
#include "rq_child.h"
#include "rq_error.h"
#include "rq_merge.h"
#include "rq_parallel.h"

/* What one worker saw: its earliest failed pick (none: fail SIZE_MAX),
 * and with keep-going every conflict (which is no failure then). */
typedef struct rq_parallel_report_failure {
	size_t fail;
	int kind; /* 1 conflict (conf), -1 error (err) */
	rq_conflicts conf;
	rq_error err;
	rq_parallel_kept kept;
} rq_parallel_report_failure;

/* The earliest failure over all reports, and the first other failure. */
typedef struct rq_parallel_report_verdict {
	rq_parallel_report_failure first; /* earliest failed pick; first.kept: this process's own */
	rq_error other;			  /* the first failure that is not a pick's */
	int has_other;
	rq_parallel_counts counts;
	rq_parallel_kept kept; /* the children's keep-going conflicts */
} rq_parallel_report_verdict;

/* Append one message of type to b, its text printf-formatted. */
void rq_parallel_report_fmt(rq_buf *b, char type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* N: every commit the worker picked (did[i] set). */
void rq_parallel_report_picks(rq_buf *b, const rq_parallel_job *job, const unsigned char *did);

/* S: the worker's counts (job->counts). */
void rq_parallel_report_counts(rq_buf *b, const rq_parallel_job *job);

/* C or E: the worker's earliest failed pick (none: nothing), C with its
 * paths. */
void rq_parallel_report_failed(rq_buf *b, const rq_parallel_report_failure *wf);

/* K: a keep-going conflict, each followed by its paths. */
void rq_parallel_report_kept(rq_buf *b, const rq_parallel_report_failure *wf);

/* 1 when the report read so far has ended (its last message is D or X). */
int rq_parallel_report_complete(const rq_child_in *in);

/* Parse one child's report (in) into the verdict; *done: it reported D
 * (it took part and saved its objects). 0, or -1 when it is unreadable. */
int rq_parallel_report_read(const rq_parallel_job *job, rq_parallel_report_verdict *v,
			    rq_child_in *in, int *done);

#endif
