/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of worker/metrics, the registry behind the worker's
 * /metrics: the exact exposition text of counters, gauges and histograms
 * (HELP and TYPE lines, cumulative buckets, +Inf, _sum, _count), label
 * values escaped, numbers written whole or in the fewest digits, and the
 * refusals that keep the registry bounded (bad names and labels, a full
 * family, negative counter steps, the wrong type).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

/* The whole exposition of m, as a string the test frees. */
static char *render(const rq_metrics *m)
{
	rq_buf b = {0};

	rq_metrics_render(m, &b);
	assert_false(b.oom);
	return b.p ? b.p : strdup("");
}

static void test_counter_and_gauge(void **state)
{
	rq_metrics *m = rq_metrics_new();
	rq_metrics_family *c =
	    rq_metrics_family_add(m, "x_jobs_total", "Jobs.", RQ_METRICS_COUNTER, NULL, 0);
	rq_metrics_family *g =
	    rq_metrics_family_add(m, "x_running", "Running.", RQ_METRICS_GAUGE, NULL, 0);
	const char *ok[] = {"status", "ok", NULL};
	const char *err[] = {"status", "error", "code", "timeout", NULL};
	char *text;

	(void)state;
	assert_int_equal(rq_metrics_add(c, ok, 1), 0);
	assert_int_equal(rq_metrics_add(c, err, 2), 0);
	assert_int_equal(rq_metrics_add(c, ok, 1), 0);
	assert_int_equal(rq_metrics_set(g, NULL, 2.5), 0);
	assert_int_equal(rq_metrics_add(g, NULL, -1), 0);
	text = render(m);
	assert_string_equal(text, "# HELP x_jobs_total Jobs.\n"
				  "# TYPE x_jobs_total counter\n"
				  "x_jobs_total{status=\"ok\"} 2\n"
				  "x_jobs_total{status=\"error\",code=\"timeout\"} 2\n"
				  "# HELP x_running Running.\n"
				  "# TYPE x_running gauge\n"
				  "x_running 1.5\n");
	free(text);
	rq_metrics_free(m);
}

static void test_histogram(void **state)
{
	static const double b[] = {0.1, 1, 10};
	rq_metrics *m = rq_metrics_new();
	rq_metrics_family *h =
	    rq_metrics_family_add(m, "x_seconds", "Time.", RQ_METRICS_HISTOGRAM, b, 3);
	const char *q[] = {"queue", "a", NULL};
	char *text;

	(void)state;
	assert_int_equal(rq_metrics_observe(h, q, 0.05), 0);
	assert_int_equal(rq_metrics_observe(h, q, 1), 0); /* le is inclusive */
	assert_int_equal(rq_metrics_observe(h, q, 2), 0);
	assert_int_equal(rq_metrics_observe(h, q, 100), 0);
	text = render(m);
	assert_string_equal(text, "# HELP x_seconds Time.\n"
				  "# TYPE x_seconds histogram\n"
				  "x_seconds_bucket{queue=\"a\",le=\"0.1\"} 1\n"
				  "x_seconds_bucket{queue=\"a\",le=\"1\"} 2\n"
				  "x_seconds_bucket{queue=\"a\",le=\"10\"} 3\n"
				  "x_seconds_bucket{queue=\"a\",le=\"+Inf\"} 4\n"
				  "x_seconds_sum{queue=\"a\"} 103.05\n"
				  "x_seconds_count{queue=\"a\"} 4\n");
	free(text);
	rq_metrics_free(m);
}

static void test_escaping(void **state)
{
	rq_metrics *m = rq_metrics_new();
	rq_metrics_family *c =
	    rq_metrics_family_add(m, "x_total", "A \\ help.", RQ_METRICS_COUNTER, NULL, 0);
	const char *odd[] = {"v", "a\"b\\c\nd\x01\xc3\xa9", NULL};
	char *text;

	(void)state;
	assert_int_equal(rq_metrics_touch(c, odd), 0);
	text = render(m);
	assert_string_equal(text, "# HELP x_total A \\\\ help.\n"
				  "# TYPE x_total counter\n"
				  "x_total{v=\"a\\\"b\\\\c\\nd???\"} 0\n");
	free(text);
	rq_metrics_free(m);
}

static void test_refusals(void **state)
{
	static const double down[] = {1, 0.5};
	rq_metrics *m = rq_metrics_new();
	rq_metrics_family *c =
	    rq_metrics_family_add(m, "x_total", "C.", RQ_METRICS_COUNTER, NULL, 0);
	rq_metrics_family *g = rq_metrics_family_add(m, "x_g", "G.", RQ_METRICS_GAUGE, NULL, 0);
	const char *bad_name[] = {"1x", "v", NULL};
	const char *reserved[] = {"__x", "v", NULL};
	const char *five[] = {"a", "1", "b", "2", "c", "3", "d", "4", "e", "5", NULL};
	char value[RQ_METRICS_MAX_VALUE + 2];

	(void)state;
	assert_null(rq_metrics_family_add(m, "bad-name", "x", RQ_METRICS_GAUGE, NULL, 0));
	assert_null(rq_metrics_family_add(m, "x_h", "two\nlines", RQ_METRICS_GAUGE, NULL, 0));
	assert_null(rq_metrics_family_add(m, "x_h", "x", RQ_METRICS_HISTOGRAM, down, 2));
	assert_null(rq_metrics_family_add(m, "x_h", "x", RQ_METRICS_HISTOGRAM, NULL, 0));
	assert_int_equal(rq_metrics_add(c, NULL, -1), -1);
	assert_int_equal(rq_metrics_observe(c, NULL, 1), -1);
	assert_int_equal(rq_metrics_add(c, bad_name, 1), -1);
	assert_int_equal(rq_metrics_add(c, reserved, 1), -1);
	assert_int_equal(rq_metrics_add(c, five, 1), -1);
	memset(value, 'v', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	const char *long_value[] = {"v", value, NULL};
	assert_int_equal(rq_metrics_add(c, long_value, 1), -1);
	assert_int_equal(rq_metrics_add(NULL, NULL, 1), 0);
	for (int i = 0; i < RQ_METRICS_MAX_SERIES; i++) {
		char n[16];
		snprintf(n, sizeof(n), "%d", i);
		const char *l[] = {"n", n, NULL};
		assert_int_equal(rq_metrics_set(g, l, i), 0);
	}
	const char *one_more[] = {"n", "more", NULL};
	const char *known[] = {"n", "7", NULL};
	assert_int_equal(rq_metrics_set(g, one_more, 1), -1); /* full */
	assert_int_equal(rq_metrics_set(g, known, 8), 0);     /* known series still move */
	rq_metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counter_and_gauge),
	    cmocka_unit_test(test_histogram),
	    cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
