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
#include "rq_i18n.h"
#include "rq_odb.h"
#include "rq_repofmt.h"

/* git's empty tree in a SHA-1 repository (rq_oid_sha1.empty_tree) */
#define EMPTY_TREE_HEX "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

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
static char *cat_commit(tu_repo *r, const rq_oid *id)
{
	char *raw = tu_capture_raw(r, NULL, "git cat-file commit %s", tu_oid_hex(id));
	assert_non_null(raw);
	return raw;
}

static char *hash_commit(tu_repo *r, const char *text, rq_oid *out)
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
	assert_int_equal(rq_oid_parse(out, &rq_oid_sha1, hex, strlen(hex)), 0);
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
	rq_oid base, tree1, tree2, orig, out;
	git_odb *odb;
	rq_error err;
	char text[4096], want[4096], *raw, *hex;
	const char *committer = TU_COMMITTER_NAME " <" TU_COMMITTER_EMAIL "> 1700001234 -0130";

	tu_commit_file(r, "a.txt", "1\n", "base");
	tu_commit_file(r, "a.txt", "2\n", "second");
	tu_rev_oid(r, "HEAD~1", &base);
	tu_rev_oid(r, "HEAD~1^{tree}", &tree1);
	tu_rev_oid(r, "HEAD^{tree}", &tree2);

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
		 tu_oid_hex(&tree1), tu_oid_hex(&base));
	hex = hash_commit(r, text, &orig);
	free(hex);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);

	rq_error_clear(&err);
	assert_int_equal(rq_commit_pick(odb, NULL, &orig, &tree2, &base, committer, &out, &err), 0);
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
		 tu_oid_hex(&tree2), tu_oid_hex(&base), committer);
	assert_string_equal(raw, want);
	free(raw);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);

	/* parent NULL: a root commit */
	assert_int_equal(rq_commit_pick(odb, NULL, &orig, &tree1, NULL, committer, &out, &err), 0);
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
		rq_oid again;
		assert_int_equal(
		    rq_commit_pick(odb, NULL, &orig, &tree1, NULL, committer, &again, &err), 0);
		assert_true(rq_oid_eq(&again, &out));
	}

	/* not a commit */
	rq_error_clear(&err);
	assert_int_equal(rq_commit_pick(odb, NULL, &tree1, &tree1, NULL, committer, &out, &err),
			 -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	/* missing object */
	{
		rq_oid missing;
		rq_oid_parse(&missing, &rq_oid_sha1, HEX40, strlen(HEX40));
		rq_error_clear(&err);
		assert_int_equal(
		    rq_commit_pick(odb, NULL, &missing, &tree1, NULL, committer, &out, &err), -1);
		assert_int_not_equal(err.code, RQ_OK);
	}
	git_odb_free(odb);
}

/* A plain commit picked onto its own parent with its own committer is itself. */
static void test_pick_identity(void **state)
{
	tu_repo *r = *state;
	rq_oid head, parent, tree, out;
	git_odb *odb;
	char *committer;

	tu_commit_file(r, "a.txt", "1\n", "one");
	tu_commit_file(r, "a.txt", "2\n", "two\n\nwith a body\n");
	tu_rev_oid(r, "HEAD", &head);
	tu_rev_oid(r, "HEAD~1", &parent);
	tu_rev_oid(r, "HEAD^{tree}", &tree);
	committer = tu_capture(r, "git cat-file commit HEAD | sed -n 's/^committer //p'");
	assert_non_null(committer);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	assert_int_equal(rq_commit_pick(odb, NULL, &head, &tree, &parent, committer, &out, NULL),
			 0);
	assert_string_equal(tu_oid_hex(&out), tu_oid_hex(&head));
	git_odb_free(odb);
	free(committer);
}

static void test_revert_commit(void **state)
{
	tu_repo *r = *state;
	rq_oid head, tree, out;
	git_odb *odb;
	rq_error err;
	char want[2048], *raw;
	const char *committer = "Rev Erter <rev@example.com> 1700009999 +0100";

	tu_commit_file(r, "a.txt", "1\n", "one");
	tu_commit_file(r, "a.txt", "2\n", "Revert \"something\"\n\nbody\n");
	tu_rev_oid(r, "HEAD", &head);
	tu_rev_oid(r, "HEAD~1^{tree}", &tree);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	rq_error_clear(&err);
	assert_int_equal(
	    rq_commit_revert(odb, NULL, &head, &tree, &head, committer, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	snprintf(want, sizeof(want),
		 "tree %s\nparent %s\nauthor %s\ncommitter %s\n\n"
		 "Reapply \"something\"\n\nThis reverts commit %s.\n",
		 tu_oid_hex(&tree), tu_oid_hex(&head), committer, committer, tu_oid_hex(&head));
	assert_string_equal(raw, want);
	free(raw);
	/* a root revert */
	assert_int_equal(
	    rq_commit_revert(odb, NULL, &head, &tree, NULL, committer, committer, &out, &err), 0);
	raw = cat_commit(r, &out);
	assert_null(strstr(raw, "parent "));
	free(raw);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	/* not a commit */
	rq_error_clear(&err);
	assert_int_equal(
	    rq_commit_revert(odb, NULL, &tree, &tree, NULL, committer, committer, &out, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_REVISION);
	git_odb_free(odb);
}

/* ---- git's encodings and UTF-8 check (rq_i18n) ---- */

static void check_fix(const char *in, int want_rc, const char *want)
{
	rq_buf b = {0};
	rq_buf_str(&b, in);
	assert_int_equal(rq_i18n_utf8_fix(&b), want_rc);
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.p, want, b.len);
	free(b.p);
}

static void test_utf8_fix(void **state)
{
	(void)state;
	check_fix("plain \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 1,
		  "plain \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
	check_fix("\xf4\x8f\xbf\xbd", 1, "\xf4\x8f\xbf\xbd"); /* U+10FFFD */
	/* Latin-1 bytes become their UTF-8 form */
	check_fix("caf\xe9", 0, "caf\xc3\xa9");
	/* overlong, surrogate, past U+10FFFF, non-characters, cut short: each
	 * byte taken as Latin-1 */
	check_fix("\xc0\xaf", 0, "\xc3\x80\xc2\xaf");
	check_fix("\xed\xa0\x80", 0, "\xc3\xad\xc2\xa0\xc2\x80");
	check_fix("\xf4\x90\x80\x80", 0, "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80");
	check_fix("\xef\xbf\xbe", 0, "\xc3\xaf\xc2\xbf\xc2\xbe");
	check_fix("\xef\xb7\x90", 0, "\xc3\xaf\xc2\xb7\xc2\x90");
	check_fix("x\xe6\x97", 0, "x\xc3\xa6\xc2\x97");
}

static void test_encoding_names(void **state)
{
	size_t n;
	char *out;

	(void)state;
	assert_true(rq_i18n_is_utf8(NULL));
	assert_true(rq_i18n_is_utf8("utf8"));
	assert_true(rq_i18n_is_utf8("Utf-8"));
	assert_false(rq_i18n_is_utf8("latin-1"));
	assert_true(rq_i18n_same("UTF-16BE", "utf16be"));
	assert_true(rq_i18n_same("iso-8859-1", "ISO-8859-1"));
	assert_true(rq_i18n_same(NULL, "UTF8"));
	assert_false(rq_i18n_same("ISO-8859-1", "latin-1"));
	out = rq_i18n_reencode("caf\xe9", 4, "UTF-8", "latin-1", &n); /* git's fallback name */
	assert_non_null(out);
	assert_int_equal(n, 5);
	assert_string_equal(out, "caf\xc3\xa9");
	free(out);
	assert_null(rq_i18n_reencode("x", 1, "UTF-8", "no-such-encoding", &n));
	assert_null(rq_i18n_reencode("\xe6\x97", 2, "ISO-8859-1", "UTF-8", &n)); /* cut short */
	out = rq_i18n_reencode("\xff\xfeh\0i\0", 6, "UTF-8", "UTF-16LE-BOM", &n);
	assert_non_null(out);
	assert_string_equal(out, "hi");
	free(out);
}

/* A commit object from raw bytes (NUL bytes and all), as old tools wrote them. */
static void hash_raw(tu_repo *r, const char *text, size_t len, rq_oid *out)
{
	char path[PATH_MAX + 16], *hex;
	FILE *f;

	snprintf(path, sizeof(path), "%s/raw.txt", r->root);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	hex = tu_capture(r, "git hash-object -t commit -w --literally --stdin <'%s'", path);
	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(out, &rq_oid_sha1, hex, strlen(hex)), 0);
	free(hex);
}

/* Pick (or revert: author set) raw onto the empty tree with cfg: the new
 * commit's text after its committer line, and the return code in *rc. */
static char *pick_raw(tu_repo *r, git_odb *odb, const rq_commit_cfg *cfg, const char *raw,
		      size_t len, const char *author, int *rc)
{
	rq_oid orig, tree, out;
	rq_error err;
	char *text, *after;

	hash_raw(r, raw, len, &orig);
	tree = rq_oid_sha1.empty_tree;
	rq_error_clear(&err);
	*rc = author ? rq_commit_revert(odb, cfg, &orig, &tree, NULL, author, "C <c@x> 2 +0000",
					&out, &err)
		     : rq_commit_pick(odb, cfg, &orig, &tree, NULL, "C <c@x> 2 +0000", &out, &err);
	assert_true(*rc >= 0);
	text = tu_capture_raw(r, NULL, "git cat-file commit %s", tu_oid_hex(&out));
	assert_non_null(text);
	after = strdup(strstr(text, "\nauthor ") + 1);
	free(text);
	return after;
}

#define TREE_LINE "tree " EMPTY_TREE_HEX "\n"

static void test_pick_encodings(void **state)
{
	tu_repo *r = *state;
	git_odb *odb;
	char *got;
	int rc;
	rq_commit_cfg latin = {"ISO-8859-1", NULL, &rq_oid_sha1, NULL};
	static const char iso[] = TREE_LINE "author D\xe9j\xe0 <d@x> 1 +0000\n"
					    "committer C <c@x> 1 +0000\nencoding iso-8859-1\n"
					    "change-id I1\n\ncaf\xe9\n";
	static const char bare[] = TREE_LINE "author David K\xe5gedal <d@x> 1 +0000\n"
					     "committer C <c@x> 1 +0000\n\nr\xe9sum\xe9\n";
	static const char nul[] = TREE_LINE "author A <a@x> 1 +0000\n"
					    "committer C <c@x> 1 +0000\n\nbefore\0after\n";

	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	/* re-encoded from the header's encoding, the header dropped */
	got = pick_raw(r, odb, NULL, iso, sizeof(iso) - 1, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(got, "author D\xc3\xa9j\xc3\xa0 <d@x> 1 +0000\n"
				 "committer C <c@x> 2 +0000\nchange-id I1\n\ncaf\xc3\xa9\n");
	free(got);
	/* the revert keeps the extra header and says the subject in UTF-8 */
	got = pick_raw(r, odb, NULL, iso, sizeof(iso) - 1, "R <r@x> 3 +0000", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(got, "\nchange-id I1\n\nRevert \"caf\xc3\xa9\"\n"));
	free(got);
	/* Latin-1 bytes without a header: converted, and git warns (1) */
	got = pick_raw(r, odb, NULL, bare, sizeof(bare) - 1, NULL, &rc);
	assert_int_equal(rc, 1);
	assert_string_equal(got, "author David K\xc3\xa5gedal <d@x> 1 +0000\n"
				 "committer C <c@x> 2 +0000\n\nr\xc3\xa9sum\xc3\xa9\n");
	free(got);
	/* i18n.commitEncoding=ISO-8859-1: written in it, with its header */
	got = pick_raw(r, odb, &latin, iso, sizeof(iso) - 1, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(got, "author D\xe9j\xe0 <d@x> 1 +0000\ncommitter C <c@x> 2 +0000\n"
				 "encoding ISO-8859-1\nchange-id I1\n\ncaf\xe9\n");
	free(got);
	/* git reads the original as a C string: the message ends at a NUL */
	got = pick_raw(r, odb, NULL, nul, sizeof(nul) - 1, NULL, &rc);
	assert_string_equal(got, "author A <a@x> 1 +0000\ncommitter C <c@x> 2 +0000\n\nbefore");
	free(got);
	git_odb_free(odb);
}

/* Header fields as git's read_commit_extra_header_lines() takes them. */
static void test_pick_odd_headers(void **state)
{
	tu_repo *r = *state;
	git_odb *odb;
	char *got;
	int rc;
	static const char odd[] = TREE_LINE "author First <f@x> 1 +0000\n"
					    " author continued\n"
					    "author Second <s@x> 1 +0000\n"
					    "committer C <c@x> 1 +0000\n"
					    "gpgsig sig\n"
					    " sig continued\n"
					    "note \n"
					    "x-multi a\n"
					    " b\n"
					    " \n"
					    "\n"
					    "\f\n \t\nSubject\n";
	rq_commit_cfg author = {NULL, "Now <n@x> 5 +0000", &rq_oid_sha1, NULL};
	static const char noauthor[] = TREE_LINE "committer C <c@x> 1 +0000\n\nm\n";

	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	/* the first author line only; signatures and standard fields with their
	 * continuation lines dropped; the rest written again; \f is no blank */
	got = pick_raw(r, odb, NULL, odd, sizeof(odd) - 1, NULL, &rc);
	assert_string_equal(got, "author First <f@x> 1 +0000\ncommitter C <c@x> 2 +0000\n"
				 "note \nx-multi a\n b\n \n\n\f\n \t\nSubject\n");
	free(got);
	/* no author line: git's current author */
	got = pick_raw(r, odb, &author, noauthor, sizeof(noauthor) - 1, NULL, &rc);
	assert_string_equal(got, "author Now <n@x> 5 +0000\ncommitter C <c@x> 2 +0000\n\nm\n");
	free(got);
	git_odb_free(odb);
}

/* The ids of a commit's lines take its format's width (rq_commit_merge's
 * algo; a pick's rq_commit_cfg.algo), and the database says its format. */
static void test_formats(void **state)
{
	tu_repo *r = *state;
	git_repository *repo = tu_repo_open(r);
	rq_odb_opts opts = {.algo = &rq_oid_sha256};
	rq_oid tree, parent, out;
	git_odb *odb = NULL, *plain = NULL;
	git_odb_object *obj = NULL;
	git_oid g;
	char want[300];
	rq_error err;

	memset(tree.id, 0x11, 32);
	memset(parent.id, 0x22, 32);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(rq_commit_merge(odb, &rq_oid_sha256, &tree, &parent, 1, "A <a@x> 1 +0000",
					 "C <c@x> 2 +0000", "m", &out, &err),
			 0);
	assert_int_equal(rq_oid_to_git(&g, &out, &rq_oid_sha1), 0);
	assert_int_equal(git_odb_read(&obj, odb, &g), 0);
	snprintf(want, sizeof(want),
		 "tree %s\nparent %s\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 2 +0000\n\nm\n",
		 "1111111111111111111111111111111111111111111111111111111111111111",
		 "2222222222222222222222222222222222222222222222222222222222222222");
	assert_int_equal(git_odb_object_size(obj), strlen(want));
	assert_memory_equal(git_odb_object_data(obj), want, strlen(want));
	git_odb_object_free(obj);
	git_odb_free(odb);
	/* the format a database was made with; SHA-1 for any other */
	assert_ptr_equal(rq_repofmt_algo(repo), &rq_oid_sha1);
	assert_int_equal(rq_odb_new(&odb, repo, &opts, &err), 0);
	assert_ptr_equal(rq_odb_algo(odb), &rq_oid_sha256);
	git_odb_free(odb);
	assert_int_equal(rq_odb_new(&odb, repo, NULL, &err), 0);
	assert_ptr_equal(rq_odb_algo(odb), &rq_oid_sha1);
	git_odb_free(odb);
	assert_int_equal(git_odb_new(&plain), 0);
	assert_ptr_equal(rq_odb_algo(plain), &rq_oid_sha1);
	git_odb_free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revert_message),
	    cmocka_unit_test_setup_teardown(test_revert_message_like_git, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_extra_headers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_identity, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_revert_commit, setup, teardown),
	    cmocka_unit_test(test_utf8_fix),
	    cmocka_unit_test(test_encoding_names),
	    cmocka_unit_test_setup_teardown(test_pick_encodings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_odd_headers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
