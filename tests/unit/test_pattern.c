/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pattern: the syntax check against glibc's regcomp itself (each
 * pattern here is small: compiling it costs nothing), for a list of the
 * edge cases and for every short sequence of tricky tokens a fixed
 * generator makes; the expansion and its limit; what a job's pattern may
 * not be (the patterns of a hostile-input review: a back-reference, a
 * repeated sub-expression that matches the empty string, anchors); a job
 * whose pattern is a bomb refused by the job's validation without
 * compiling anything, in the syntax its options give; the probe, which
 * stops a pattern that takes too long or crashes glibc in a process of
 * its own.
 */
#include "testutil.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_job.h"
#include "rq_pattern.h"

/* regcomp and the check agree on pat, as a basic and as an extended
 * expression. */
static void agree(const char *pat)
{
	for (int ere = 0; ere < 2; ere++) {
		regex_t r;
		rq_error err;
		int rc = regcomp(&r, pat, REG_NOSUB | REG_NEWLINE | (ere ? REG_EXTENDED : 0));
		int mine = rq_pattern_check(pat, ere ? 'E' : 0, NULL, &err);
		if (rc == 0)
			regfree(&r);
		if ((rc == 0) != (mine == 0))
			fail_msg("%s '%s': regcomp says %d, the check %s",
				 ere ? "extended" : "basic", pat, rc, mine ? err.msg : "valid");
	}
}

static void test_edge_cases(void **state)
{
	static const char *const pats[] = {"",
					   "a",
					   "a**",
					   "a*\\{2\\}",
					   "a\\{2\\}*",
					   "a\\+*",
					   "a*\\+",
					   "a\\?\\?",
					   "a\\{2\\}\\{2\\}",
					   "\\<*",
					   "\\<\\+",
					   "$*",
					   "a$*",
					   "^*",
					   "^\\{1\\}",
					   "^+",
					   "x\\(*a\\)",
					   "x\\(\\{1\\}\\)",
					   "\\(^*\\)",
					   "a\\|*b",
					   "a|*b",
					   "*a",
					   "+a",
					   "{1}a",
					   "a{1",
					   "a\\{1",
					   "a{x}",
					   "\\(a\\)\\1",
					   "\\1",
					   "a\\w*",
					   "a\\b*",
					   "a\\'*",
					   "\\`*",
					   "\\+a",
					   "\\(\\+a\\)",
					   "a\\|\\+b",
					   "^\\+",
					   "\\<\\?",
					   "a\\{2\\}\\+",
					   "a*\\?*",
					   "a\\?\\{2\\}",
					   "a$\\{2\\}",
					   "a\\(b\\)*\\1",
					   "\\(a\\|b\\)\\{2\\}",
					   "[a",
					   "[]",
					   "[]]",
					   "[^]]",
					   "[a-]",
					   "[-a]",
					   "[--/]",
					   "[[:alpha:]-z]",
					   "[a-[:alpha:]]",
					   "[[.-.]-z]",
					   "[[.a.]-[.c.]]",
					   "[[=a=]-z]",
					   "[z-a]",
					   "[a-a]",
					   "[[.space.]]",
					   "[[:alpha:]",
					   "[[:alpha]",
					   "[[.a]",
					   "[[=a=]]",
					   "[\\]]",
					   "[a\\]",
					   "[[:foo:]]",
					   "\\(a\\)\\(b\\|\\1\\)",
					   "\\(a\\|b\\)\\1",
					   "\\(\\(a\\)\\|b\\)\\2",
					   "\\(\\)\\|\\.\\1",
					   "a\\{0,32768\\}",
					   "a{40000}",
					   "a\\{2,1\\}",
					   "a\\{,2\\}",
					   "a{,2}",
					   "a\\{1,\\}",
					   "a\\{a\\}",
					   "a\\{ 1\\}",
					   "\\",
					   "a\\",
					   "\\(",
					   "\\)",
					   "(",
					   ")",
					   "a)",
					   "\\(\\(\\(a\\)\\)",
					   "t1.(c|e)",
					   "^dup ",
					   "A U Thor",
					   "[[:upper:]-]",
					   "[]-a]"};
	(void)state;
	for (size_t i = 0; i < sizeof(pats) / sizeof(*pats); i++)
		agree(pats[i]);
}

/* Every sequence of up to three tokens (a fixed generator for four). */
static void test_token_sequences(void **state)
{
	static const char *const tok[] = {
	    "a",   "\\(", "\\)", "(",	     ")",	    "\\{1\\}", "\\{1,2\\}", "{1,2}",
	    "{2}", "*",	  "\\+", "\\?",	     "+",	    "?",       "|",	    "\\|",
	    "^",   "$",	  ".",	 "[a-c]",    "[[:alpha:]]", "[z-a]",   "\\1",	    "\\2",
	    "\\w", "\\b", "\\<", "\\{,2\\}", "\\{2,1\\}",   "\\{a\\}", "{",	    "}",
	    "\\{", "\\}", "[",	 "]",	     "\\"};
	const size_t n = sizeof(tok) / sizeof(*tok);
	unsigned seed = 12345;
	char pat[64];
	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++) {
				snprintf(pat, sizeof(pat), "%s%s%s", tok[i], tok[j], tok[k]);
				agree(pat);
			}
	for (int r = 0; r < 20000; r++) {
		pat[0] = '\0';
		for (int t = 0; t < 4; t++) {
			seed = seed * 1103515245u + 12345u;
			strcat(pat, tok[(seed >> 16) % n]);
		}
		agree(pat);
	}
}

static size_t expansion(const char *pat, int syntax)
{
	size_t n = 0;
	rq_pattern_check(pat, syntax, &n, NULL);
	return n;
}

static void test_expansion(void **state)
{
	(void)state;
	assert_int_equal(expansion("abc", 0), 3);
	assert_int_equal(expansion(".\\{0,80\\}", 0), 80);
	assert_int_equal(expansion("\\(ab\\)\\{3\\}c", 0), 7);
	assert_int_equal(expansion("\\(a\\{1,45\\}\\)\\{0,45\\}", 0), 2025);
	/* what can match the empty string counts its repetition's count twice */
	assert_int_equal(expansion("\\(a*\\)\\{0,45\\}", 0), 2025);
	assert_int_equal(expansion("\\(a\\{0,45\\}\\)\\{0,45\\}", 0), RQ_PATTERN_EXPANSION_MAX + 1);
	assert_int_equal(expansion("\\(a\\|\\)\\{0,10\\}", 0), 100);
	assert_int_equal(expansion("a*+", 'E'), 4);
	/* anchors and empty groups count */
	assert_int_equal(expansion("^a$", 'E'), 3);
	assert_int_equal(expansion("\\<a\\>", 0), 3);
	assert_int_equal(expansion("\\(\\)", 0), 1);
	assert_int_equal(expansion("\\(\\<\\)\\{0,45\\}", 0), 2025);
	assert_int_equal(expansion("(a{1,10}){5}", 'E'), 50);
	assert_int_equal(expansion("(a{0,10}){5}", 'E'), 250); /* 5 copies of what matches "" */
	assert_int_equal(expansion("a\\|bc", 0), 3);
	assert_int_equal(expansion("a{0,10}", 0), 7); /* literal braces */
	assert_int_equal(expansion("a\\{2,\\}", 0), 3);
	/* counted no further than the limit, also inside a group left open */
	assert_int_equal(expansion("a\\{0,32767\\}", 0), RQ_PATTERN_EXPANSION_MAX + 1);
	assert_int_equal(expansion("(((a{0,1000}){0,1000}){0,1000}", 'E'),
			 RQ_PATTERN_EXPANSION_MAX + 1);
	assert_int_equal(expansion("a.{0,100000}", 'F'), 12);
}

static void test_bounded(void **state)
{
	rq_error err;
	(void)state;
	assert_int_equal(rq_pattern_bounded("^t1 [a-z]\\{2\\}x*", 0, &err), 0);
	assert_int_equal(rq_pattern_bounded("a\\{0,2048\\}", 0, &err), 0);
	/* the 18-byte bomb, as a basic and as an extended expression */
	assert_int_equal(rq_pattern_bounded("a\\{0,32767\\}", 0, &err), -1);
	assert_int_equal(err.code, RQ_E_USAGE);
	assert_non_null(strstr(err.msg, "too large"));
	assert_int_equal(rq_pattern_bounded("a{0,32767}", 'E', &err), -1);
	assert_int_equal(rq_pattern_bounded("a{0,32767}", 0, &err), 0); /* literal braces */
	assert_int_equal(rq_pattern_bounded("(a{0,100}){0,100}", 'E', &err), -1);
	assert_int_equal(rq_pattern_bounded("a\\{0,2049\\}", 0, &err), -1);
	assert_int_equal(rq_pattern_bounded("a.{0,100000}", 'F', &err), 0);
	/* not valid as a basic expression: its own words */
	assert_int_equal(rq_pattern_bounded("[", 0, &err), -1);
	assert_non_null(strstr(err.msg, "brackets"));
}

static void refused(const char *pat, int syntax, const char *why)
{
	rq_error err;

	if (rq_pattern_bounded(pat, syntax, &err) != -1 || !strstr(err.msg, why))
		fail_msg("'%s' (%c) is not refused as %s", pat, syntax ? syntax : 'G', why);
}

/* The patterns of the review: each crashed or hung glibc in a job's child,
 * or was refused in the wrong syntax. */
static void test_review_patterns(void **state)
{
	rq_error err;
	(void)state;
	/* back-references: glibc's unfixed stack overflow (CVE-2019-9192) */
	refused("\\(\\)\\(\\1\\1\\)*", 0, "back-reference");
	refused("(a)\\1", 'E', "back-reference");
	refused("\\(a\\)\\1", 0, "back-reference");
	/* a repeated sub-expression that can match the empty string: regcomp
	 * over 100 s, 110 MB; anchors and empty groups count */
	refused("\\(\\(\\(a\\|\\)*\\)\\{0,8\\}\\)\\{0,8\\}", 0, "too large");
	refused("\\<a*++++++++", 'E', "too large");
	refused("\\(\\(a*\\)\\{0,45\\}\\)\\{0,45\\}", 0, "too large");
	refused("\\(a*\\)\\{0,2000\\}", 0, "too large");
	refused("\\(\\)\\{0,32767\\}", 0, "too large");
	refused("\\(\\<\\)\\{0,2048\\}", 0, "too large");
	refused("($){0,2048}", 'E', "too large");
	/* the syntax the job's options give, not always the basic one: an
	 * extended back-reference is valid (refused only as one), and "\\{"
	 * is a brace there */
	assert_int_equal(rq_pattern_check("(a)\\1", 'E', NULL, &err), 0);
	assert_int_equal(rq_pattern_bounded("x\\{y", 'E', &err), 0);
	assert_int_equal(rq_pattern_bounded("x\\{y", 0, &err), -1);
	/* what a repetition of a repetition is, within the limit */
	assert_int_equal(rq_pattern_bounded("\\(\\(\\(a\\|\\)*\\)\\{0,5\\}\\)\\{0,5\\}", 0, &err),
			 0);
}

/* The probe stops a pattern the count lets through that takes too long
 * (regcomp minutes) or crashes glibc (a back-reference in a repeated
 * group), naming it; it takes the others. */
static void test_probe(void **state)
{
	char *slow[] = {"^fix", "\\<a*+++++"}, *crash[] = {"\\(\\)\\(\\1\\1\\)*"};
	char *fine[] = {"^fix", "a\\{0,2048\\}", "[[:alpha:]]*ing$"};
	int ere = REG_NOSUB | REG_NEWLINE | REG_EXTENDED;
	rq_error err;
	(void)state;
	setenv("REPLAYQ_TEST_PATTERN_CPU_MS", "300", 1);
	assert_int_equal(rq_pattern_probe(slow, 2, ere, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	assert_non_null(strstr(err.msg, "'\\<a*+++++'"));
	assert_non_null(strstr(err.msg, "more than 300 ms of CPU"));
	assert_int_equal(rq_pattern_probe(crash, 1, REG_NOSUB | REG_NEWLINE, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	assert_non_null(strstr(err.msg, "crashed"));
	assert_int_equal(rq_pattern_probe(fine, 3, REG_NOSUB | REG_NEWLINE, &err), 0);
	unsetenv("REPLAYQ_TEST_PATTERN_CPU_MS");
}

/* A job with the bomb is refused by its validation (which compiles no
 * pattern: this test would take gigabytes if it did). */
static void test_job_with_a_bomb(void **state)
{
	static const char job_text[] =
	    "{\"v\":1,\"id\":\"bomb\",\"repo\":\"r\",\"mode\":\"onto\",\"target\":\"main\","
	    "\"revisions\":[\"-E\",\"--grep=a{0,32767}\",\"main..topic\"]}";
	static const char brace_text[] =
	    "{\"v\":1,\"id\":\"brace\",\"repo\":\"r\",\"mode\":\"onto\",\"target\":\"main\","
	    "\"revisions\":[\"--grep=x\\\\{y\",\"main..topic\",\"--extended-regexp\"]}";
	char id[RQ_JOB_ID_MAX + 1];
	rq_job job;
	rq_error err;
	(void)state;
	assert_int_equal(rq_job_parse(job_text, strlen(job_text), &job, id, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	assert_non_null(strstr(err.msg, "revisions[1]"));
	assert_non_null(strstr(err.msg, "too large"));
	/* the syntax is the job's, whichever argument says it */
	assert_int_equal(rq_job_parse(brace_text, strlen(brace_text), &job, id, &err), 0);
	rq_job_free(&job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edge_cases),	    cmocka_unit_test(test_token_sequences),
	    cmocka_unit_test(test_expansion),	    cmocka_unit_test(test_bounded),
	    cmocka_unit_test(test_job_with_a_bomb), cmocka_unit_test(test_review_patterns),
	    cmocka_unit_test(test_probe),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
