/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_wildmatch: git's patterns, as attribute files use them. The cases
 * and their answers were checked with upstream git 2.55's check-attr
 * (a pattern with a '/' matches the path with RQ_WM_PATHNAME, one without
 * matches the basename without it), plus the malformed and hostile ones.
 */
#include "testutil.h"

#include <string.h>

#include "rq_wildmatch.h"

typedef struct wm_case {
	const char *pattern, *text;
	int flags, match;
} wm_case;

static void check_cases(const wm_case *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = rq_wildmatch(v[i].pattern, strlen(v[i].pattern), v[i].text,
				     strlen(v[i].text), v[i].flags);
		if (r != v[i].match)
			fail_msg("'%s' on '%s' (flags %d): %d, want %d", v[i].pattern, v[i].text,
				 v[i].flags, r, v[i].match);
	}
}

static void test_as_git_check_attr(void **state)
{
	const int P = RQ_WM_PATHNAME;
	static const wm_case v[] = {
	    {"*.txt", "a.txt", 0, 1},
	    {"*.txt", "a.txtx", 0, 0},
	    {"d/*.txt", "d/a.txt", P, 1},
	    {"d/*.txt", "d/e/a.txt", P, 0},
	    {"d/**/a.txt", "d/a.txt", P, 1},
	    {"d/**/a.txt", "d/e/f/a.txt", P, 1},
	    {"d/**/a.txt", "x/d/a.txt", P, 0},
	    {"**/a.txt", "a.txt", P, 1},
	    {"**/a.txt", "x/y/a.txt", P, 1},
	    {"d/**", "d/x", P, 1},
	    {"d/**", "d/x/y", P, 1},
	    {"a?c", "abc", 0, 1},
	    {"d/a?c", "d/a/c", P, 0},
	    {"[a-c]x", "bx", 0, 1},
	    {"[a-c]x", "dx", 0, 0},
	    {"[!a-c]x", "dx", 0, 1},
	    {"[!a-c]x", "bx", 0, 0},
	    {"[[:digit:]]x", "5x", 0, 1},
	    {"d/a**b", "d/axb", P, 1},
	    {"d/a**b", "d/a/b", P, 0},
	    {"d*/x", "dd/x", P, 1},
	    {"d*/x", "d/e/x", P, 0},
	    {"a.txt", "a.txt", P, 1},
	    {"**/d/*.c", "x/d/y.c", P, 1},
	    {"a/**/**/b", "a/b", P, 1},
	    {"a/**/**/b", "a/x/y/b", P, 1},
	    {"[]]x", "]x", 0, 1},
	    {"[a-]x", "-x", 0, 1},
	    {"*.TXT", "a.txt", 0, 0},
	};
	(void)state;
	check_cases(v, sizeof(v) / sizeof(v[0]));
}

static void test_quoting_case_and_malformed(void **state)
{
	const int P = RQ_WM_PATHNAME;
	static const wm_case v[] = {
	    {"\\*x", "*x", 0, 1},
	    {"\\*x", "ax", 0, 0},
	    {"*.TXT", "a.txt", RQ_WM_CASEFOLD, 1},
	    {"[A-C]x", "bx", RQ_WM_CASEFOLD, 1},
	    {"*", "a/b", 0, 1},
	    {"*", "a/b", P, 0},
	    {"[a", "[a", 0, 0}, /* an unclosed bracket matches nothing */
	    {"[[:nosuch:]]", "a", 0, 0},
	    {"x\\", "x\\", 0, 0},
	    {"", "", 0, 1},
	    {"", "a", 0, 0},
	};
	(void)state;
	check_cases(v, sizeof(v) / sizeof(v[0]));
}

/* Many stars against a long text that almost matches: a backtracking
 * matcher takes exponential time here; the state set does not. */
static void test_many_stars_stay_linear(void **state)
{
	char pat[200], text[20001];
	size_t k = 0;

	(void)state;
	for (int i = 0; i < 60; i++) {
		pat[k++] = '*';
		pat[k++] = 'a';
	}
	pat[k++] = 'b';
	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(rq_wildmatch(pat, k, text, strlen(text), 0), 0);
	text[sizeof(text) - 2] = 'b';
	assert_int_equal(rq_wildmatch(pat, k, text, strlen(text), 0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_as_git_check_attr),
	    cmocka_unit_test(test_quoting_case_and_malformed),
	    cmocka_unit_test(test_many_stars_stay_linear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
