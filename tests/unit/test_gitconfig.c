/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_gitconfig: config files read as libgit2 reads them, with libgit2
 * itself as the oracle (the files it opens are the ones that count): the
 * same variables, names and values, for texts that use every corner of the
 * syntax (comments, quotes, escapes, continuations, long lines, subsection
 * headers, a header and a variable on one line), and a refusal wherever
 * libgit2 refuses.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_buf.h"
#include "rq_gitconfig.h"

/* "name=value" (or "name" for no value) a line, sorted: the readings. */
typedef struct reading {
	char **v;
	size_t n;
} reading;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add(reading *r, const char *name, const char *value)
{
	size_t len = strlen(name) + (value ? strlen(value) + 1 : 0) + 1;
	char *s = malloc(len);

	assert_non_null(s);
	snprintf(s, len, "%s%s%s", name, value ? "=" : "", value ? value : "");
	r->v = realloc(r->v, (r->n + 1) * sizeof(*r->v));
	assert_non_null(r->v);
	r->v[r->n++] = s;
}

static int ours_var(const char *name, const char *value, void *arg)
{
	add(arg, name, value);
	return 0;
}

static void reading_free(reading *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* libgit2's reading of text (written to a file): 0, or -1 refused. */
static int libgit2_reads(const char *text, size_t len, reading *out)
{
	char path[PATH_MAX];
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/sample.cfg", tu_scratch());
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	rc = git_config_open_ondisk(&cfg, path);
	if (rc == 0) {
		assert_int_equal(git_config_iterator_new(&it, cfg), 0);
		while (git_config_next(&e, it) == 0)
			add(out, e->name, e->value);
		git_config_iterator_free(it);
	}
	git_config_free(cfg);
	git_error_clear();
	return rc < 0 ? -1 : 0;
}

/* Both read text alike: both refuse it, or both give the same variables. */
static void same_reading(const char *text)
{
	reading ours = {0}, theirs = {0};
	size_t line;
	const char *why;
	int a = rq_gitconfig_parse(text, strlen(text), ours_var, &ours, &line, &why);
	int b = libgit2_reads(text, strlen(text), &theirs);

	if ((a < 0) != (b < 0))
		fail_msg("%s: rq_gitconfig %s, libgit2 %s", text, a < 0 ? "refuses" : "reads",
			 b < 0 ? "refuses" : "reads");
	if (ours.n > 1)
		qsort(ours.v, ours.n, sizeof(*ours.v), cmp_str);
	if (theirs.n > 1)
		qsort(theirs.v, theirs.n, sizeof(*theirs.v), cmp_str);
	if (a == 0) {
		assert_int_equal(ours.n, theirs.n);
		for (size_t i = 0; i < ours.n; i++)
			assert_string_equal(ours.v[i], theirs.v[i]);
	}
	reading_free(&ours);
	reading_free(&theirs);
}

static void test_like_libgit2(void **state)
{
	static const char *const texts[] = {
	    "[core]\n\tbare = false\n[user]\n\tname = A U Thor\n",
	    "[a]\nk = v ; c\nk2 = \"v;x\" # c\nk3 = v#x\n",
	    "[a]\nk = a\"b c\"d\n",
	    "[a]\nk = one \\\n two\n",
	    "[a]\nk = x\\\n; only a comment\ny\n",
	    "[a]\nk = x\\",
	    "[a]\nk = \"x ; \\\ny\" ; z\n",
	    "[Sec \"Sub.Case\"]\nKey = v\n[sec.old]\nk=1\n",
	    "[a] k = v\n[b]k2\n[c \"d\"] path = /x ;c\n",
	    "[a \"x\\\"y\\\\z\"]\nk=v\n",
	    "\xef\xbb\xbfk=v\n[a]\nb\n",
	    "[a]\r\nk = v\r\n\r\n",
	    "[a]\nk = a\tb  c\t\n",
	    "[a]\nk-1 = v\n9x = y\n",
	    "[a]\nk =\nk2 = \"\"\nk3\n",
	    "[a]\nk = \"a\\\"#b\" #c\n",
	    "[a]\nk = a\\\\\"b;c\"\n",
	    "[a]\nk = \\n\\t\\b\\\\\n",
	    "[includeIf \"gitdir:/x/\"]\npath = /nonexistent/y\n[include]\n\tpath = "
	    "/nonexistent/z\n",
	    "[include]\n\tdummy = x[core]\n\tpath = /nonexistent/w\n",
	    "   \n\t\n; c\n# c\n[a]\n  ; c\n  k = v\n",
	    "[a]\nk = v \\\n\n\nw\n",
	    "[a]\nk = \"v\\\n w\"\n",
	    "[a]\n\tk = v\\\n\\\n\\\nw\n",
	    /* refused by both */
	    "[a\nk=v\n",
	    "[a \"x]\n",
	    "[a]\nk = v\\q\n",
	    "[a]\n=v\n",
	    "[a]\nk v\n",
	    "[a b]\n",
	    "[]\n",
	    "[a\"b\"]\n",
	    "[a \"b\" ]\n",
	    "[a]\nk.x = v\n",
	};
	char big[20000];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++)
		same_reading(texts[i]);
	/* a line far over 4096 bytes, the header after it on the same line */
	snprintf(big, sizeof(big), "[include]\n\tdummy = ");
	memset(big + strlen(big), 'A', 12000);
	snprintf(big + strlen(big), sizeof(big) - strlen(big), "[core]\n\tpath = /nonexistent/l\n");
	same_reading(big);
}

/* Random texts of the syntax's tokens (a fixed seed): 3000 of them read
 * alike. */
static void test_random_like_libgit2(void **state)
{
	static const char *const tok[] = {"[a]", "[A \"b C\"]", "[inc.x]", "k",	 "Path", " = ",
					  "=",	 "\"",		"\\",	   "\n", ";",	 "#",
					  " ",	 "\t",		"x",	   "[",	 "]",	 "\\\n",
					  "\\n", "\r",		"-",	   ".",	 "\\\""};
	unsigned seed = 12345;
	char text[512];

	(void)state;
	for (int i = 0; i < 3000; i++) {
		size_t len = 0;
		int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 24;
		for (int k = 0; k < n; k++) {
			const char *t = tok[((seed = seed * 1103515245u + 12345u) >> 16) %
					    (sizeof(tok) / sizeof(*tok))];
			if (len + strlen(t) + 1 >= sizeof(text))
				break;
			memcpy(text + len, t, strlen(t));
			len += strlen(t);
		}
		text[len] = '\0';
		same_reading(text);
	}
}

static void test_includes(void **state)
{
	(void)state;
	assert_true(rq_gitconfig_is_include("include.path"));
	assert_true(rq_gitconfig_is_include("includeif.gitdir:/x/.path"));
	assert_true(rq_gitconfig_is_include("includeif.onbranch:main.path"));
	assert_false(rq_gitconfig_is_include("include.x.path"));
	assert_false(rq_gitconfig_is_include("includeif.path"));
	assert_false(rq_gitconfig_is_include("user.path"));
}

static void test_nul_refused(void **state)
{
	static const char text[] = "[a]\nk = v\n[b]\nx = y\0z\n";
	reading r = {0};
	const char *why;
	size_t line;

	(void)state;
	assert_int_equal(rq_gitconfig_parse(text, sizeof(text) - 1, ours_var, &r, &line, &why), -1);
	assert_int_equal(line, 4);
	reading_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_like_libgit2),
	    cmocka_unit_test(test_random_like_libgit2),
	    cmocka_unit_test(test_includes),
	    cmocka_unit_test(test_nul_refused),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
