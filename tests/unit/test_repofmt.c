/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofmt: a SHA-256 repository is opened as SHA-256 when the switch
 * RQ_REPOFMT_SHA256 is 1 and refused by name when it is 0;
 * compatObjectFormat is refused by name either way; what git itself
 * refuses is refused in git's words and order (a value it cannot read,
 * with its config line, before the version and the unknown extensions);
 * rq_repofmt_print prints those as git does ("error: " then "fatal: ").
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_repofmt.h"

/* git config on the repository's file, run from outside it (git refuses
 * to run inside a repository in a format it refuses) */
#define CFG "git -C / config --file \"$PWD/.git/config\" "

/* rq_repofmt_open of r: its return, the repository freed, err filled. */
static int open_repo(tu_repo *r, rq_error *err)
{
	git_repository *repo = NULL;
	int rc = rq_repofmt_open(&repo, r->path, GIT_REPOSITORY_OPEN_NO_SEARCH, err);

	if (rc == 0)
		assert_ptr_equal(rq_repofmt_algo(repo), &rq_oid_sha256);
	git_repository_free(repo);
	return rc;
}

static void expect_refusal(tu_repo *r, const char *msg)
{
	rq_error err;

	assert_int_equal(open_repo(r, &err), -1);
	assert_int_equal(err.code, RQ_E_UNSUPPORTED_REPO);
	assert_string_equal(err.msg, msg);
}

/* A SHA-256 repository, as the switch says. */
static void test_sha256_by_the_switch(void **state)
{
	tu_repo *r = tu_repo_new(0);
	rq_error err;

	(void)state;
	tu_git(r, "rm -rf .git && git init -q -b main --object-format=sha256 .");
	if (RQ_REPOFMT_SHA256)
		assert_int_equal(open_repo(r, &err), 0);
	else
		expect_refusal(r, "unsupported repository format: extensions.objectFormat=sha256");
	tu_git(r, CFG "extensions.compatObjectFormat sha1");
	expect_refusal(r, RQ_REPOFMT_SHA256
			      ? "unsupported repository format: extensions.compatObjectFormat=sha1"
			      : "unsupported repository format: extensions.objectFormat=sha256");
	tu_repo_free(r);
}

/* git's refusals, in git's order: a value it cannot read first (with the
 * line it ends on), then the version, then extensions it does not know. */
static void test_git_words(void **state)
{
	tu_repo *r = tu_repo_new(0);

	(void)state;
	tu_git(r, CFG "core.repositoryformatversion 1 && " CFG "extensions.foo yes && " CFG
		      "extensions.objectFormat sha512");
	expect_refusal(r, "invalid value for 'extensions.objectformat': 'sha512'\n"
			  "bad config line 8 in file .git/config");
	tu_git(r, CFG "extensions.objectFormat sha1");
	expect_refusal(r, "unknown repository extension found:\n\tfoo");
	tu_git(r, CFG "extensions.bar no");
	expect_refusal(r, "unknown repository extensions found:\n\tfoo\n\tbar");
	tu_git(r, CFG "core.repositoryformatversion 2");
	expect_refusal(r, "Expected git repo version <= 1, found 2");
	tu_git(r, CFG "--unset extensions.foo && " CFG "--unset extensions.bar && " CFG
		      "core.repositoryformatversion 1 && "
		      "printf '[extensions]\\n\\tcompatObjectFormat\\n' >>.git/config");
	expect_refusal(r, "missing value for 'extensions.compatobjectformat'\n"
			  "bad config line 9 in file .git/config");
	tu_repo_free(r);
}

static void check_print(const char *msg, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rq_repofmt_print(f, msg);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_print(void **state)
{
	(void)state;
	check_print(
	    "invalid value for 'extensions.refstorage': 'x'\nbad config line 3 in file ./config",
	    "error: invalid value for 'extensions.refstorage': 'x'\n"
	    "fatal: bad config line 3 in file ./config\n");
	check_print("repo version is 0, but v1-only extension found:\n\tobjectformat",
		    "fatal: repo version is 0, but v1-only extension found:\n\tobjectformat\n");
	check_print("unsupported repository format: extensions.compatObjectFormat=sha256",
		    "fatal: unsupported repository format: extensions.compatObjectFormat=sha256\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_by_the_switch),
	    cmocka_unit_test(test_git_words),
	    cmocka_unit_test(test_print),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
