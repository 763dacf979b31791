/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics: the registry of Prometheus metrics and its text exposition
 * (see metrics.h). A family keeps its series in an array, found by their
 * rendered label text ('status="error",code="timeout"'), which is also
 * what the exposition writes between the braces.
 */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

/* One series: the label text and the value (histograms: the sum). */
typedef struct series {
	char *labels; /* 'a="b",c="d"', "" when none */
	double value;
	unsigned long long count;    /* histograms: observations */
	unsigned long long *buckets; /* histograms: per bound, not cumulative */
} series;

struct rq_metrics_family {
	char *name, *help;
	rq_metrics_type type;
	double bounds[RQ_METRICS_MAX_BUCKETS];
	size_t nbounds;
	series *series;
	size_t n, cap;
};

struct rq_metrics {
	rq_metrics_family **fams;
	size_t n, cap;
};

/* Room for the label text of a series: every pair's name, '="', its value
 * escaped (two bytes a byte at worst), '"' and ','. */
#define LABELS_MAX (RQ_METRICS_MAX_LABELS * (64 + 2 * RQ_METRICS_MAX_VALUE + 4) + 1)

rq_metrics *rq_metrics_new(void)
{
	return calloc(1, sizeof(rq_metrics));
}

static void family_free(rq_metrics_family *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->series[i].labels);
		free(f->series[i].buckets);
	}
	free(f->series);
	free(f->name);
	free(f->help);
	free(f);
}

void rq_metrics_free(rq_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		family_free(m->fams[i]);
	free(m->fams);
	free(m);
}

/* A metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or, with colon 0, a label
 * name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"), at most 64
 * bytes. */
static int name_valid(const char *s, int colon)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 64 || (s[0] >= '0' && s[0] <= '9') || (!colon && !strncmp(s, "__", 2)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || (colon && c == ':')))
			return 0;
	}
	return 1;
}

static int bounds_valid(rq_metrics_type type, const double *bounds, size_t nbounds)
{
	if (type != RQ_METRICS_HISTOGRAM)
		return nbounds == 0;
	if (nbounds == 0 || nbounds > RQ_METRICS_MAX_BUCKETS || !bounds)
		return 0;
	for (size_t i = 0; i < nbounds; i++)
		if (bounds[i] != bounds[i] || (i > 0 && !(bounds[i] > bounds[i - 1])))
			return 0; /* NaN, or not ascending */
	return 1;
}

rq_metrics_family *rq_metrics_family_add(rq_metrics *m, const char *name, const char *help,
					 rq_metrics_type type, const double *bounds, size_t nbounds)
{
	rq_metrics_family *f, **fams;

	if (!m || !name_valid(name, 1) || !help || strchr(help, '\n') ||
	    !bounds_valid(type, bounds, nbounds))
		return NULL;
	if (!(fams = rq_mem_grow(m->fams, &m->cap, m->n + 1, sizeof(*fams), 16)))
		return NULL;
	m->fams = fams;
	if (!(f = calloc(1, sizeof(*f))))
		return NULL;
	f->name = strdup(name);
	f->help = strdup(help);
	if (!f->name || !f->help) {
		family_free(f);
		return NULL;
	}
	f->type = type;
	f->nbounds = nbounds;
	if (nbounds)
		memcpy(f->bounds, bounds, nbounds * sizeof(*bounds));
	m->fams[m->n++] = f;
	return f;
}

/* A label value as the exposition writes it: \, " and newline escaped;
 * other control bytes and bytes past ASCII (which might not be UTF-8)
 * become '?'. 0, or -1 when it is too long. */
static int put_label_value(char *out, size_t *len, const char *v)
{
	size_t n = strlen(v);

	if (n > RQ_METRICS_MAX_VALUE)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c == '\\' || c == '"' || c == '\n') {
			out[(*len)++] = '\\';
			out[(*len)++] = c == '\n' ? 'n' : (char)c;
		} else {
			out[(*len)++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
		}
	}
	return 0;
}

/* The label text of a series into out (LABELS_MAX bytes): 0, or -1 when
 * the labels are not valid. */
static int labels_text(const rq_metrics_family *f, const char *const *labels, char *out)
{
	size_t len = 0, pairs = 0;

	for (; labels && labels[0]; labels += 2, pairs++) {
		const char *name = labels[0], *value = labels[1];
		if (pairs == RQ_METRICS_MAX_LABELS || !value || !name_valid(name, 0) ||
		    (f->type == RQ_METRICS_HISTOGRAM && !strcmp(name, "le")))
			return -1;
		if (pairs)
			out[len++] = ',';
		memcpy(out + len, name, strlen(name));
		len += strlen(name);
		memcpy(out + len, "=\"", 2);
		len += 2;
		if (put_label_value(out, &len, value) < 0)
			return -1;
		out[len++] = '"';
	}
	out[len] = '\0';
	return 0;
}

/* A new series of f with that label text, or NULL (full, no memory). */
static series *series_new(rq_metrics_family *f, const char *text)
{
	series *a, *s;

	if (f->n == RQ_METRICS_MAX_SERIES)
		return NULL;
	if (!(a = rq_mem_grow(f->series, &f->cap, f->n + 1, sizeof(*a), 8)))
		return NULL;
	f->series = a;
	s = &f->series[f->n];
	memset(s, 0, sizeof(*s));
	if (!(s->labels = strdup(text)))
		return NULL;
	if (f->nbounds && !(s->buckets = calloc(f->nbounds, sizeof(*s->buckets)))) {
		free(s->labels);
		return NULL;
	}
	f->n++;
	return s;
}

/* The series of f with those labels, made if new; NULL when refused. */
static series *series_get(rq_metrics_family *f, const char *const *labels)
{
	char text[LABELS_MAX];

	if (labels_text(f, labels, text) < 0)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->series[i].labels, text))
			return &f->series[i];
	return series_new(f, text);
}

int rq_metrics_add(rq_metrics_family *f, const char *const *labels, double v)
{
	series *s;

	if (!f)
		return 0;
	if (f->type == RQ_METRICS_HISTOGRAM || v != v || (f->type == RQ_METRICS_COUNTER && v < 0))
		return -1;
	if (!(s = series_get(f, labels)))
		return -1;
	s->value += v;
	return 0;
}

int rq_metrics_set(rq_metrics_family *f, const char *const *labels, double v)
{
	series *s;

	if (!f)
		return 0;
	if (f->type == RQ_METRICS_HISTOGRAM || v != v || !(s = series_get(f, labels)))
		return -1;
	s->value = v;
	return 0;
}

int rq_metrics_observe(rq_metrics_family *f, const char *const *labels, double v)
{
	series *s;
	size_t i;

	if (!f)
		return 0;
	if (f->type != RQ_METRICS_HISTOGRAM || v != v || !(s = series_get(f, labels)))
		return -1;
	for (i = 0; i < f->nbounds && v > f->bounds[i]; i++)
		;
	if (i < f->nbounds)
		s->buckets[i]++;
	s->count++;
	s->value += v;
	return 0;
}

int rq_metrics_touch(rq_metrics_family *f, const char *const *labels)
{
	if (!f)
		return 0;
	return series_get(f, labels) ? 0 : -1;
}

#define NUMBER_MAX 40

/* A number as the exposition writes it, into s: integers whole, others
 * in the fewest digits that read back the same. */
static void format_number(char s[NUMBER_MAX], double v)
{
	if (isnan(v))
		snprintf(s, NUMBER_MAX, "NaN");
	else if (isinf(v))
		snprintf(s, NUMBER_MAX, "%sInf", v > 0 ? "+" : "-");
	else if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		snprintf(s, NUMBER_MAX, "%lld", (long long)v);
	else if (snprintf(s, NUMBER_MAX, "%.15g", v) > 0 && strtod(s, NULL) != v)
		snprintf(s, NUMBER_MAX, "%.17g", v);
}

static void put_number(rq_buf *b, double v)
{
	char s[NUMBER_MAX];

	format_number(s, v);
	rq_buf_str(b, s);
}

/* name[suffix]{labels[,extra]} (no braces when both are empty) */
static void put_series_name(rq_buf *b, const rq_metrics_family *f, const char *suffix,
			    const char *labels, const char *extra)
{
	rq_buf_str(b, f->name);
	rq_buf_str(b, suffix);
	if (!labels[0] && !extra)
		return;
	rq_buf_str(b, "{");
	rq_buf_str(b, labels);
	if (extra) {
		if (labels[0])
			rq_buf_str(b, ",");
		rq_buf_str(b, extra);
	}
	rq_buf_str(b, "}");
}

/* A histogram series: cumulative buckets, +Inf, _sum, _count. */
static void put_histogram(rq_buf *b, const rq_metrics_family *f, const series *s)
{
	unsigned long long cum = 0;
	char bound[NUMBER_MAX], le[NUMBER_MAX + 8];

	for (size_t i = 0; i <= f->nbounds; i++) {
		if (i < f->nbounds)
			format_number(bound, f->bounds[i]);
		snprintf(le, sizeof(le), "le=\"%s\"", i < f->nbounds ? bound : "+Inf");
		cum += i < f->nbounds ? s->buckets[i] : 0;
		put_series_name(b, f, "_bucket", s->labels, le);
		rq_buf_str(b, " ");
		put_number(b, (double)(i < f->nbounds ? cum : s->count));
		rq_buf_str(b, "\n");
	}
	put_series_name(b, f, "_sum", s->labels, NULL);
	rq_buf_str(b, " ");
	put_number(b, s->value);
	rq_buf_str(b, "\n");
	put_series_name(b, f, "_count", s->labels, NULL);
	rq_buf_str(b, " ");
	put_number(b, (double)s->count);
	rq_buf_str(b, "\n");
}

static const char *type_name(rq_metrics_type t)
{
	return t == RQ_METRICS_COUNTER ? "counter" : t == RQ_METRICS_GAUGE ? "gauge" : "histogram";
}

/* The help text escaped as the format wants it (\\ and \n). */
static void put_help(rq_buf *b, const char *help)
{
	for (const char *p = help; *p; p++)
		rq_buf_add(b, *p == '\\' ? "\\\\" : p, *p == '\\' ? 2 : 1);
}

void rq_metrics_render(const rq_metrics *m, rq_buf *out)
{
	for (size_t i = 0; m && i < m->n; i++) {
		const rq_metrics_family *f = m->fams[i];
		rq_buf_str(out, "# HELP ");
		rq_buf_str(out, f->name);
		rq_buf_str(out, " ");
		put_help(out, f->help);
		rq_buf_str(out, "\n# TYPE ");
		rq_buf_str(out, f->name);
		rq_buf_str(out, " ");
		rq_buf_str(out, type_name(f->type));
		rq_buf_str(out, "\n");
		for (size_t j = 0; j < f->n; j++) {
			if (f->type == RQ_METRICS_HISTOGRAM) {
				put_histogram(out, f, &f->series[j]);
				continue;
			}
			put_series_name(out, f, "", f->series[j].labels, NULL);
			rq_buf_str(out, " ");
			put_number(out, f->series[j].value);
			rq_buf_str(out, "\n");
		}
	}
}
