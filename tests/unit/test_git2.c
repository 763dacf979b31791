/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The libgit2 replayq is linked with. Statically linked (RQ_GIT2_STATIC),
 * its network transports are left out (core/base/rq_git2_nonet.c): local
 * repositories work, an https:// or ssh:// remote fails cleanly with
 * replayq's message, without a crash and without touching the network.
 */
#include "testutil.h"

#include <string.h>

static void try_remote(const char *url, const char *want)
{
	git_remote *remote = NULL;
	const git_error *e;

	assert_int_equal(git_remote_create_anonymous(&remote, NULL, url), 0);
	assert_true(git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL, NULL) < 0);
	e = git_error_last();
	assert_non_null(e);
	if (want)
		assert_non_null(strstr(e->message, want));
	git_remote_free(remote);
}

static void test_local_repository(void **state)
{
	tu_repo *r = tu_repo_new(0);
	git_repository *repo;
	git_oid head;

	(void)state;
	tu_commit_file(r, "a.txt", "hello\n", "first");
	repo = tu_repo_open(r);
	assert_int_equal(git_reference_name_to_id(&head, repo, "HEAD"), 0);
	tu_repo_free(r);
}

static void test_network_transports(void **state)
{
	(void)state;
#ifdef RQ_GIT2_STATIC
	try_remote("https://example.invalid/repo.git", "without TLS");
	try_remote("ssh://git@example.invalid/repo.git", "without SSH");
#else
	(void)try_remote;
	skip(); /* the shared libgit2 has its transports (and would resolve the host) */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_local_repository),
	    cmocka_unit_test(test_network_transports),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
