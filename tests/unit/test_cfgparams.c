/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cfgparams: command-line configuration laid over a repository's:
 * git's key checks, git's quoting both ways, the last value winning over
 * the repository's files, snapshots, and refusals of a bogus environment.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "rq_cfgparams.h"

static tu_repo *repo;

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	repo = tu_repo_new(0);
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(repo);
	repo = NULL;
	return tu_group_teardown(state);
}

static void test_keys_checked_as_git(void **state)
{
	(void)state;
	static const struct {
		const char *arg, *msg;
	} bad[] = {{"foo", "key does not contain a section: foo"},
		   {"=x", "empty config key"},
		   {"a.b.=x", "key does not contain variable name: a.b."},
		   {"a.1b=x", "invalid key: a.1b"},
		   {"a_b.c=x", "invalid key: a_b.c"}};
	rq_error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rq_cfgparams_check(bad[i].arg, &err), -1);
		assert_int_equal(err.code, RQ_E_USAGE);
		assert_string_equal(err.msg, bad[i].msg);
	}
	assert_int_equal(rq_cfgparams_check("a.b=", &err), 0);
	assert_int_equal(rq_cfgparams_check("a.Sub Section.b=x=y", &err), 0);
	assert_int_equal(rq_cfgparams_check("core.bare", &err), 0);
}

static void test_quoting_as_git(void **state)
{
	(void)state;
	char *a = rq_cfgparams_append(NULL, "user.name=it's!");
	char *b = rq_cfgparams_append(a, "core.bare");
	assert_string_equal(a, "'user.name'='it'\\''s'\\!''");
	assert_string_equal(b, "'user.name'='it'\\''s'\\!'' 'core.bare'");
	free(a);
	free(b);
}

/* The value of key as libgit2 reads it through the repository's config. */
static char *get(git_repository *r, const char *key)
{
	git_config *cfg = NULL, *snap = NULL;
	const char *v = NULL;
	char *out = NULL;

	assert_int_equal(git_repository_config(&cfg, r), 0);
	assert_int_equal(git_config_snapshot(&snap, cfg), 0);
	if (git_config_get_string(&v, snap, key) == 0 && v)
		out = strdup(v);
	git_config_free(snap);
	git_config_free(cfg);
	return out;
}

static void test_laid_over_the_repository(void **state)
{
	(void)state;
	rq_error err;
	char *env = NULL, *next, *v;
	const char *args[] = {"user.name=first", "User.Name=it's second", "core.bare",
			      "a.Sub.B=sub"};
	git_repository *r;

	tu_git(repo, "git config user.name fromfile");
	tu_git(repo, "git config user.email file@example.com");
	for (size_t i = 0; i < 4; i++) {
		next = rq_cfgparams_append(env, args[i]);
		free(env);
		env = next;
	}
	r = tu_repo_open(repo);
	assert_int_equal(rq_cfgparams_apply(r, env, &err), 0);
	assert_string_equal(v = get(r, "user.name"), "it's second");
	free(v);
	assert_string_equal(v = get(r, "user.email"), "file@example.com");
	free(v);
	assert_string_equal(v = get(r, "a.Sub.b"), "sub");
	free(v);
	assert_null(get(r, "a.sub.b"));

	free(env);
}

static void test_bogus_environment_refused(void **state)
{
	(void)state;
	rq_error err;
	git_repository *r = tu_repo_open(repo);
	static const char *const bogus[] = {"bogus", "'a.b", "'a.b'='x", "'nosection'='x'"};

	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(rq_cfgparams_apply(r, bogus[i], &err), -1);
		assert_int_equal(err.code, RQ_E_USAGE);
	}
	assert_int_equal(rq_cfgparams_apply(r, "", &err), 0);
	assert_int_equal(rq_cfgparams_apply(r, NULL, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys_checked_as_git),
	    cmocka_unit_test(test_quoting_as_git),
	    cmocka_unit_test(test_laid_over_the_repository),
	    cmocka_unit_test(test_bogus_environment_refused),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
