/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics: a small registry of Prometheus metrics and their text
 * exposition (format 0.0.4), for the worker's /metrics.
 *
 * A registry holds families (a name, a help line, a type: counter, gauge
 * or histogram with its bucket bounds); a family holds series, one per
 * set of label values, made on first use. Values change only through the
 * calls below; rq_metrics_render writes every family with its # HELP and
 * # TYPE lines, its series in the order they were made, label values
 * escaped (\\, \", \n), histograms as cumulative _bucket lines (le="+Inf"
 * last), _sum and _count.
 *
 * Bounded: a family takes at most RQ_METRICS_MAX_SERIES series and a
 * label value at most RQ_METRICS_MAX_VALUE bytes; past that an update is
 * refused (-1) and changes nothing, so that no input can make the
 * registry grow without end. Nothing here allocates during a render
 * except the text itself. Single-threaded, like the worker's loop.
 */
#ifndef RQ_METRICS_H
#define RQ_METRICS_H

#include <stddef.h>

#include "rq_buf.h"

#define RQ_METRICS_MAX_SERIES  256
#define RQ_METRICS_MAX_LABELS  4
#define RQ_METRICS_MAX_VALUE   128
#define RQ_METRICS_MAX_BUCKETS 32

typedef enum rq_metrics_type {
	RQ_METRICS_COUNTER,
	RQ_METRICS_GAUGE,
	RQ_METRICS_HISTOGRAM,
} rq_metrics_type;

typedef struct rq_metrics rq_metrics;
typedef struct rq_metrics_family rq_metrics_family;

/* A registry, or NULL when out of memory. */
rq_metrics *rq_metrics_new(void);
void rq_metrics_free(rq_metrics *m);

/*
 * Add a family. name: a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*; counters
 * end in _total by convention, the caller's to follow); help: one line;
 * bounds: a histogram's bucket upper bounds, ascending, at most
 * RQ_METRICS_MAX_BUCKETS (+Inf is implied), NULL and 0 for the others.
 * Returns the family (owned by m), or NULL on a bad name or bounds or out
 * of memory.
 */
rq_metrics_family *rq_metrics_family_add(rq_metrics *m, const char *name, const char *help,
					 rq_metrics_type type, const double *bounds,
					 size_t nbounds);

/*
 * The updates. labels: NULL, or a NULL-terminated list of name, value
 * pairs ({"status", "ok", NULL}), at most RQ_METRICS_MAX_LABELS pairs,
 * names valid label names, always in the same order for one series.
 * 0, or -1 when refused (bad labels, a full family, out of memory, a
 * negative or NaN counter increment, the wrong type). f may be NULL
 * (nothing happens, 0).
 *
 * rq_metrics_add: a counter or gauge goes up by v (counters: v >= 0).
 * rq_metrics_set: a gauge, or a counter copied from a total kept
 * elsewhere, takes v.
 * rq_metrics_observe: a histogram counts v in its buckets, its sum and
 * count.
 * rq_metrics_touch: the series exists (at 0) from now on, so that it is
 * exposed before its first event.
 */
int rq_metrics_add(rq_metrics_family *f, const char *const *labels, double v);
int rq_metrics_set(rq_metrics_family *f, const char *const *labels, double v);
int rq_metrics_observe(rq_metrics_family *f, const char *const *labels, double v);
int rq_metrics_touch(rq_metrics_family *f, const char *const *labels);

/* Append the exposition text of every family to out (out->oom set when
 * memory ran out). */
void rq_metrics_render(const rq_metrics *m, rq_buf *out);

/* The content type of that text. */
#define RQ_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
