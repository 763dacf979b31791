/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_commit: revert messages and the raw text of picked and reverted
 * commits.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_commit.h"

#define HEX40 "0123456789abcdef0123456789abcdef01234567"

static int setup(void **state)
{
	*state = tu_repo_new(0);
	return 0;
}

static int teardown(void **state)
{
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

static void check_revert_msg(const char *msg, const char *want)
{
	char *got = rq_commit_revert_message(msg, strlen(msg), HEX40);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_revert_message(void **state)
{
	char *got;

	(void)state;
	check_revert_msg("subject\n\nbody line\n",
			 "Revert \"subject\"\n\nThis reverts commit " HEX40 ".\n");
	check_revert_msg("subject", "Revert \"subject\"\n\nThis reverts commit " HEX40 ".\n");
	check_revert_msg("", "Revert \"\"\n\nThis reverts commit " HEX40 ".\n");
	/* a revert of a revert is a reapply */
	check_revert_msg("Revert \"add feature\"\n\nThis reverts commit " HEX40 ".\n",
			 "Reapply \"add feature\"\n\nThis reverts commit " HEX40 ".\n");
	/* a revert of a reapply is a plain revert */
	check_revert_msg("Reapply \"add feature\"\n",
			 "Revert \"Reapply \"add feature\"\"\n\nThis reverts commit " HEX40 ".\n");
	/* deeper nesting is left alone */
	check_revert_msg("Revert \"Revert \"x\"\"\n",
			 "Revert \"Revert \"Revert \"x\"\"\"\n\nThis reverts commit " HEX40 ".\n");
	/* only the exact prefix counts */
	check_revert_msg("Revert x\n", "Revert \"Revert x\"\n\nThis reverts commit " HEX40 ".\n");
	check_revert_msg("revert \"x\"\n",
			 "Revert \"revert \"x\"\"\n\nThis reverts commit " HEX40 ".\n");
	check_revert_msg("Revert \"", "Reapply \"\n\nThis reverts commit " HEX40 ".\n");
	/* len is honoured: the message need not end with a NUL */
	got = rq_commit_revert_message("short subjectXXXX", 13, "abc");
	assert_non_null(got);
	assert_string_equal(got, "Revert \"short subject\"\n\nThis reverts commit abc.\n");
	free(got);
	got = rq_commit_revert_message("line one\nline two", 17, "abc");
	assert_non_null(got);
	assert_string_equal(got, "Revert \"line one\"\n\nThis reverts commit abc.\n");
	free(got);
}

/* git revert (2.39, before "Reapply") writes the same message. */
static void test_revert_message_like_git(void **state)
{
	tu_repo *r = *state;
	static const char *const subjects[] = {"add a file", "Revert x", "Reapply \"y\"",
					       "with \"quotes\" inside"};

	for (size_t i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
		char content[16], *hex, *theirs, *ours;
		snprintf(content, sizeof(content), "%zu\n", i);
		tu_commit_file(r, "f.txt", content, subjects[i]);
		hex = tu_capture(r, "git rev-parse HEAD");
		assert_non_null(hex);
		tu_tick(r);
		tu_git(r, "git revert --no-edit HEAD");
		/* the raw message: everything after the header */
		theirs = tu_capture_raw(r, NULL, "git cat-file commit HEAD | sed '1,/^$/d'");
		assert_non_null(theirs);
		ours = rq_commit_revert_message(subjects[i], strlen(subjects[i]), hex);
		assert_non_null(ours);
		assert_string_equal(ours, theirs);
		free(ours);
		free(theirs);
		free(hex);
	}
}

/* The raw text of a commit, as git cat-file prints it. */
static char *cat_commit(tu_repo *r, const git_oid *id)
{
	char *raw = tu_capture_raw(r, NULL, "git cat-file commit %s", tu_hex(id));
	assert_non_null(raw);
	return raw;
}

static char *hash_commit(tu_repo *r, const char *text, git_oid *out)
{
	char path[PATH_MAX + 16], *hex;
	FILE *f;

	snprintf(path, sizeof(path), "%s/commit.txt", r->root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	hex = tu_capture(r, "git hash-object -t commit -w --stdin <'%s'", path);
	assert_non_null(hex);
	assert_int_equal(git_oid_fromstr(out, hex), 0);
	return hex;
}

#define SIG                                                                                        \
	"gpgsig -----BEGIN PGP SIGNATURE-----\n"                                                   \
	" \n"                                                                                      \
	" iQEzBAABCAAdFiEEexampleexampleexampleexampleexampleAAoJEExample\n"                       \
	" =abcd\n"                                                                                 \
	" -----END PGP SIGNATURE-----\n"

static void test_pick_extra_headers(void **state)
{
	tu_repo *r = *state;
	git_oid base, tree1, tree2, orig, out;
	git_odb *odb;
	rq_error err;
	char text[4096], want[4096], *raw, *hex;
	const char *committer = TU_COMMITTER_NAME " <" TU_COMMITTER_EMAIL "> 1700001234 -0130";

	tu_commit_file(r, "a.txt", "1\n", "base");
	tu_commit_file(r, "a.txt", "2\n", "second");
	tu_rev_parse(r, "HEAD~1", &base);
	tu_rev_parse(r, "HEAD~1^{tree}", &tree1);
	tu_rev_parse(r, "HEAD^{tree}", &tree2);

	/* an original with a signature, extra headers and leading blank lines */
	snprintf(text, sizeof(text),
		 "tree %s\n"
		 "parent %s\n"
		 "author Orig Author <orig@example.com> 1600000000 +0200\n"
		 "committer Orig Committer <oc@example.com> 1600000100 +0200\n"
		 "x-extra first line\n"
		 " continued line\n" SIG "x-after value\n"
		 "gpgsig-sha256 -----BEGIN PGP SIGNATURE-----\n"
		 " xyz\n"
		 " -----END PGP SIGNATURE-----\n"
		 "\n"
		 "\n"
		 "  \n"
		 "Subject line\n\nBody  \n\n",
		 tu_hex(&tree1), tu_hex(&base));
	hex = hash_commit(r, text, &orig);
	free(hex);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);

	rq_error_clear(&err);
	assert_int_equal(rq_commit_pick(odb, &orig, &tree2, &base, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	snprintf(want, sizeof(want),
		 "tree %s\n"
		 "parent %s\n"
		 "author Orig Author <orig@example.com> 1600000000 +0200\n"
		 "committer %s\n"
		 "x-extra first line\n"
		 " continued line\n"
		 "x-after value\n"
		 "\n"
		 "Subject line\n\nBody  \n\n",
		 tu_hex(&tree2), tu_hex(&base), committer);
	assert_string_equal(raw, want);
	free(raw);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);

	/* parent NULL: a root commit */
	assert_int_equal(rq_commit_pick(odb, &orig, &tree1, NULL, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	assert_non_null(strstr(raw, "x-after value\n"));
	assert_null(strstr(raw, "parent "));
	assert_null(strstr(raw, "gpgsig"));
	assert_int_equal(strncmp(raw, "tree ", 5), 0);
	assert_non_null(strstr(raw, "\nauthor Orig Author <orig@example.com> 1600000000 +0200\n"
				    "committer "));
	free(raw);

	/* the same inputs give the same id */
	{
		git_oid again;
		assert_int_equal(rq_commit_pick(odb, &orig, &tree1, NULL, committer, &again, &err),
				 0);
		assert_true(git_oid_equal(&again, &out));
	}

	/* not a commit */
	rq_error_clear(&err);
	assert_int_equal(rq_commit_pick(odb, &tree1, &tree1, NULL, committer, &out, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	/* missing object */
	{
		git_oid missing;
		git_oid_fromstr(&missing, HEX40);
		rq_error_clear(&err);
		assert_int_equal(rq_commit_pick(odb, &missing, &tree1, NULL, committer, &out, &err),
				 -1);
		assert_int_not_equal(err.code, RQ_OK);
	}
	git_odb_free(odb);
}

/* A plain commit picked onto its own parent with its own committer is itself. */
static void test_pick_identity(void **state)
{
	tu_repo *r = *state;
	git_oid head, parent, tree, out;
	git_odb *odb;
	char *committer;

	tu_commit_file(r, "a.txt", "1\n", "one");
	tu_commit_file(r, "a.txt", "2\n", "two\n\nwith a body\n");
	tu_rev_parse(r, "HEAD", &head);
	tu_rev_parse(r, "HEAD~1", &parent);
	tu_rev_parse(r, "HEAD^{tree}", &tree);
	committer = tu_capture(r, "git cat-file commit HEAD | sed -n 's/^committer //p'");
	assert_non_null(committer);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	assert_int_equal(rq_commit_pick(odb, &head, &tree, &parent, committer, &out, NULL), 0);
	assert_string_equal(tu_hex(&out), tu_hex(&head));
	git_odb_free(odb);
	free(committer);
}

static void test_revert_commit(void **state)
{
	tu_repo *r = *state;
	git_oid head, tree, out;
	git_odb *odb;
	rq_error err;
	char want[2048], *raw;
	const char *committer = "Rev Erter <rev@example.com> 1700009999 +0100";

	tu_commit_file(r, "a.txt", "1\n", "one");
	tu_commit_file(r, "a.txt", "2\n", "Revert \"something\"\n\nbody\n");
	tu_rev_parse(r, "HEAD", &head);
	tu_rev_parse(r, "HEAD~1^{tree}", &tree);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	rq_error_clear(&err);
	assert_int_equal(
	    rq_commit_revert(odb, &head, &tree, &head, committer, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	snprintf(want, sizeof(want),
		 "tree %s\nparent %s\nauthor %s\ncommitter %s\n\n"
		 "Reapply \"something\"\n\nThis reverts commit %s.\n",
		 tu_hex(&tree), tu_hex(&head), committer, committer, tu_hex(&head));
	assert_string_equal(raw, want);
	free(raw);
	/* a root revert */
	assert_int_equal(
	    rq_commit_revert(odb, &head, &tree, NULL, committer, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	assert_null(strstr(raw, "parent "));
	free(raw);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	/* not a commit */
	rq_error_clear(&err);
	assert_int_equal(
	    rq_commit_revert(odb, &tree, &tree, NULL, committer, committer, &out, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	git_odb_free(odb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revert_message),
	    cmocka_unit_test_setup_teardown(test_revert_message_like_git, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_extra_headers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_identity, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_revert_commit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
