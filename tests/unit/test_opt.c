/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of worker/opt, the program's one option parser: every form it
 * takes, the errors it prints (stderr captured into a file) and the usage
 * text it makes from the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opt.h"

/* The values one table writes. */
typedef struct values {
	const char *onto, *wait, *redis, *sign;
	int contained, version;
	const char *dir;
} values;

static int take_dir(const char *arg, void *value)
{
	((values *)value)->dir = arg;
	return 0;
}

static values vals;

static const rq_opt table[] = {
    RQ_OPT_STRING("onto", &vals.onto, "<revision>", "replay onto given commit"),
    RQ_OPT_BOOL("contained", &vals.contained, "update all contained branches"),
    RQ_OPT_OPTIONAL("wait", &vals.wait, "<s>", "forever", "wait for the result"),
    RQ_OPT_STRING_ENV("redis", &vals.redis, "<url>", "the Redis URL", "RQ_TEST_OPT_REDIS"),
    RQ_OPT_FLAG("version", &vals.version, "print the version"),
    {.kind = RQ_OPT_KIND_CALLBACK,
     .short_name = 'C',
     .value = &vals,
     .argh = "<path>",
     .help = "run as if started in <path>",
     .callback = take_dir},
    {.kind = RQ_OPT_KIND_OPTIONAL,
     .short_name = 'S',
     .name = "gpg-sign",
     .value = &vals.sign,
     .argh = "<key-id>",
     .bare = "",
     .negatable = 1,
     .help = "sign"},
    RQ_OPT_END,
};

static int author_takes_value(const char *arg)
{
	return !strcmp(arg, "--author");
}

static rq_opt_spec spec(unsigned flags)
{
	rq_opt_spec s = {.usage = "usage: test [<options>] <args>...\n",
			 .opts = table,
			 .footer = "footer line\n",
			 .flags = flags,
			 .help_status = 0,
			 .unknown_takes_value = author_takes_value};
	return s;
}

/* Runs the parser on a NULL-terminated list; stderr goes to *err_text. */
static int parse(unsigned flags, rq_opt_args *args, int *status, char **err_text, ...)
{
	char *argv[32] = {"test"};
	int argc = 1;
	va_list ap;
	va_start(ap, err_text);
	for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	memset(&vals, 0, sizeof(vals));
	fflush(stderr);
	FILE *cap = tmpfile();
	assert_non_null(cap);
	int saved = dup(2);
	dup2(fileno(cap), 2);
	rq_opt_spec s = spec(flags);
	int r = rq_opt_parse(&s, argc, argv, args, status);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	long n = ftell(cap) >= 0 ? (fseek(cap, 0, SEEK_END), ftell(cap)) : 0;
	*err_text = calloc(1, (size_t)n + 1);
	assert_non_null(*err_text);
	rewind(cap);
	assert_int_equal(fread(*err_text, 1, (size_t)n, cap), (size_t)n);
	fclose(cap);
	return r;
}

static void test_values_joined_and_separate(void **state)
{
	(void)state;
	rq_opt_args args;
	int status = -7;
	char *err;
	assert_int_equal(parse(0, &args, &status, &err, "--onto=main", "a..b", "--contained", "-C",
			       "/x", "c", NULL),
			 0);
	assert_string_equal(vals.onto, "main");
	assert_int_equal(vals.contained, 1);
	assert_string_equal(vals.dir, "/x");
	assert_int_equal(args.n, 2);
	assert_string_equal(args.v[0], "a..b");
	assert_string_equal(args.v[1], "c");
	assert_null(args.v[2]);
	assert_string_equal(err, "");
	rq_opt_args_free(&args);
	free(err);

	assert_int_equal(parse(0, &args, &status, &err, "--onto", "topic", "--no-contained", NULL),
			 0);
	assert_string_equal(vals.onto, "topic");
	assert_int_equal(vals.contained, 0);
	assert_int_equal(args.n, 0);
	rq_opt_args_free(&args);
	free(err);
}

static void test_optional_value_only_joined(void **state)
{
	(void)state;
	rq_opt_args args;
	int status;
	char *err;
	assert_int_equal(parse(0, &args, &status, &err, "--wait", "5", NULL), 0);
	assert_string_equal(vals.wait, "forever");
	assert_int_equal(args.n, 1);
	assert_string_equal(args.v[0], "5");
	rq_opt_args_free(&args);
	free(err);
	assert_int_equal(parse(0, &args, &status, &err, "--wait=60", NULL), 0);
	assert_string_equal(vals.wait, "60");
	rq_opt_args_free(&args);
	free(err);
}

static void test_errors_print_and_stop_129(void **state)
{
	(void)state;
	/* as git's parse-options: a value error alone; an unknown option
	 * (named without its dashes) with the usage text right after it */
	static const struct {
		const char *arg, *want;
	} cases[] = {
	    {"--onto", "error: option `onto' requires a value\n"},
	    {"--contained=x", "error: option `contained' takes no value\n"},
	    {"-C", "error: switch `C' requires a value\n"},
	    {"--bogus", "error: unknown option `bogus'\nusage: test [<options>] <args>...\n"},
	    {"-x", "error: unknown switch `x'\nusage: test [<options>] <args>...\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rq_opt_args args;
		int status = 0;
		char *err;
		int with_usage = i >= 3;
		assert_int_equal(parse(0, &args, &status, &err, cases[i].arg, NULL), -1);
		assert_int_equal(status, RQ_OPT_USAGE_STATUS);
		if (with_usage ? strncmp(err, cases[i].want, strlen(cases[i].want)) != 0
			       : strcmp(err, cases[i].want) != 0)
			fail_msg("%s: got %s", cases[i].arg, err);
		assert_int_equal(args.n, 0);
		free(err);
	}
}

static void test_dashdash_and_unknown_kept(void **state)
{
	(void)state;
	rq_opt_args args;
	int status;
	char *err;
	assert_int_equal(parse(RQ_OPT_KEEP_UNKNOWN | RQ_OPT_KEEP_DASHDASH, &args, &status, &err,
			       "--branches", "--author", "Bob", "--onto", "m", "--", "--onto",
			       NULL),
			 0);
	assert_string_equal(vals.onto, "m");
	assert_int_equal(args.n, 4);
	assert_string_equal(args.v[0], "--branches");
	assert_string_equal(args.v[1], "--author=Bob");
	assert_string_equal(args.v[2], "--");
	assert_string_equal(args.v[3], "--onto");
	rq_opt_args_free(&args);
	free(err);

	/* without KEEP_DASHDASH, "--" ends the options and is dropped */
	assert_int_equal(parse(0, &args, &status, &err, "--", "--onto", NULL), 0);
	assert_null(vals.onto);
	assert_int_equal(args.n, 1);
	assert_string_equal(args.v[0], "--onto");
	rq_opt_args_free(&args);
	free(err);
}

static void test_stop_at_arg(void **state)
{
	(void)state;
	rq_opt_args args;
	int status;
	char *err;
	assert_int_equal(parse(RQ_OPT_STOP_AT_ARG, &args, &status, &err, "-C", "/r", "replay",
			       "--onto", "x", NULL),
			 0);
	assert_string_equal(vals.dir, "/r");
	assert_null(vals.onto);
	assert_int_equal(args.n, 3);
	assert_string_equal(args.v[0], "replay");
	assert_string_equal(args.v[1], "--onto");
	rq_opt_args_free(&args);
	free(err);
}

static void test_environment_default(void **state)
{
	(void)state;
	rq_opt_args args;
	int status;
	char *err;
	setenv("RQ_TEST_OPT_REDIS", "redis://env:1/", 1);
	assert_int_equal(parse(0, &args, &status, &err, NULL), 0);
	assert_string_equal(vals.redis, "redis://env:1/");
	rq_opt_args_free(&args);
	free(err);
	assert_int_equal(parse(0, &args, &status, &err, "--redis=redis://flag:2/", NULL), 0);
	assert_string_equal(vals.redis, "redis://flag:2/");
	rq_opt_args_free(&args);
	free(err);
	unsetenv("RQ_TEST_OPT_REDIS");
}

/* git's -S[<keyid>] / --gpg-sign[=<keyid>] / --no-gpg-sign: a value only
 * stuck to the letter or joined to the name, the negation NULL, the last
 * one winning. */
static void test_optional_letter_and_negation(void **state)
{
	static const char unset[] = "unset";
	static const struct {
		const char *a, *b, *want;
	} cases[] = {{"-S", NULL, ""},
		     {"-SABCD", NULL, "ABCD"},
		     {"--gpg-sign", NULL, ""},
		     {"--gpg-sign=k y", NULL, "k y"},
		     {"--no-gpg-sign", NULL, NULL},
		     {"-Sk", "--no-gpg-sign", NULL},
		     {"--no-gpg-sign", "-Sk", "k"},
		     {"x", NULL, unset}};
	rq_opt_args args;
	int status;
	char *err;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[4] = {"test", (char *)cases[i].a, (char *)cases[i].b, NULL};
		rq_opt_spec s = spec(0);
		vals.sign = unset;
		assert_int_equal(rq_opt_parse(&s, cases[i].b ? 3 : 2, argv, &args, &status), 0);
		if (cases[i].want)
			assert_string_equal(vals.sign, cases[i].want);
		else
			assert_null(vals.sign);
		rq_opt_args_free(&args);
	}
	/* "-S key": the key is an argument, as in git */
	assert_int_equal(parse(0, &args, &status, &err, "-S", "key", NULL), 0);
	assert_string_equal(vals.sign, "");
	assert_int_equal(args.n, 1);
	rq_opt_args_free(&args);
	free(err);
	assert_int_equal(parse(0, &args, &status, &err, "--no-gpg-sign=k", NULL), -1);
	assert_int_equal(status, 129);
	assert_non_null(strstr(err, "error: option `no-gpg-sign' takes no value"));
	free(err);
	/* a letter with a required value is not stuck */
	assert_int_equal(parse(RQ_OPT_KEEP_UNKNOWN, &args, &status, &err, "-C/x", NULL), 0);
	assert_null(vals.dir);
	assert_string_equal(args.v[0], "-C/x");
	rq_opt_args_free(&args);
	free(err);
}

static void test_usage_text(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	rq_opt_spec s = spec(0);
	rq_opt_usage(&s, out);
	fclose(out);
	assert_non_null(strstr(text, "usage: test [<options>] <args>...\n"));
	assert_non_null(strstr(text, "    --onto <revision>     replay onto given commit\n"));
	assert_non_null(strstr(text, "--[no-]contained"));
	assert_non_null(strstr(text, "-C <path>"));
	assert_non_null(strstr(text, "RQ_TEST_OPT_REDIS"));
	assert_non_null(strstr(text, "footer line\n"));
	assert_non_null(strstr(text, "    -S, --[no-]gpg-sign[=<key-id>]\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values_joined_and_separate),
	    cmocka_unit_test(test_optional_value_only_joined),
	    cmocka_unit_test(test_errors_print_and_stop_129),
	    cmocka_unit_test(test_dashdash_and_unknown_kept),
	    cmocka_unit_test(test_stop_at_arg),
	    cmocka_unit_test(test_environment_default),
	    cmocka_unit_test(test_optional_letter_and_negation),
	    cmocka_unit_test(test_usage_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
