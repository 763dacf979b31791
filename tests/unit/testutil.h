/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil: shared helpers for the cmocka unit tests.
 *
 * Every test program calls tu_group_setup/tu_group_teardown around its
 * tests (cmocka_run_group_tests): they fix the environment so that commit
 * ids are reproducible (identities, dates, HOME without a config, no system
 * config, TZ=UTC), initialise libgit2 with config search paths that point
 * at an empty directory, and shut libgit2 down at the end.
 *
 * Repositories are made with the real git program in a fresh mkdtemp
 * directory under $RQ_TEST_TMP and removed by tu_repo_free.
 */
#ifndef RQ_TESTUTIL_H
#define RQ_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <limits.h>
#include <cmocka.h>

#include <git2.h>

#include "rq_oid.h"

/* The identities and first date every test repository uses. */
#define TU_AUTHOR_NAME	   "A U Thor"
#define TU_AUTHOR_EMAIL	   "author@example.com"
#define TU_COMMITTER_NAME  "C O Mitter"
#define TU_COMMITTER_EMAIL "committer@example.com"
#define TU_EPOCH	   1700000000L

typedef struct tu_repo {
	char root[PATH_MAX];   /* the mkdtemp directory; removed by tu_repo_free */
	char path[PATH_MAX];   /* the repository: its worktree, or the bare directory */
	char gitdir[PATH_MAX]; /* the git directory (path/.git or path) */
	int bare;
	long tick;	      /* the date of the last tu_tick */
	git_repository *repo; /* opened by tu_repo_open, freed by tu_repo_free */
} tu_repo;

/* Group setup/teardown for cmocka_run_group_tests. */
int tu_group_setup(void **state);
int tu_group_teardown(void **state);

/* The per-program scratch directory (HOME of the git commands). */
const char *tu_scratch(void);

/* Create an empty repository (branch main) in a fresh temporary directory. */
tu_repo *tu_repo_new(int bare);
/* A copy (cp -a) of src in a fresh temporary directory. */
tu_repo *tu_repo_copy(const tu_repo *src);
/* Close the repository if open, remove the directory, free. NULL is fine. */
void tu_repo_free(tu_repo *r);
/* A test's fixture over a group's template repository: *state becomes a
 * fresh copy of tmpl, with GIT_COMMITTER_DATE set to date (git commands of
 * an oracle commit as the replay does). tu_copy_teardown frees it. */
int tu_copy_setup(void **state, const tu_repo *tmpl, const char *date);
int tu_copy_teardown(void **state);
/* Open (once) the repository with libgit2; fails the test on error. */
git_repository *tu_repo_open(tu_repo *r);

/*
 * Run a shell command (printf-style) in the repository directory (r NULL:
 * in the scratch directory). Its stdout is discarded, stderr kept. Returns
 * its exit status (-1 if it did not exit normally).
 */
int tu_run(tu_repo *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* tu_run and fail the test unless the status is 0. */
void tu_git(tu_repo *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Run a command and return its stdout (malloc'ed) with trailing white
 * space removed; NULL if the command failed.
 */
char *tu_capture(tu_repo *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, untrimmed, with its length in *len (may be NULL). */
char *tu_capture_raw(tu_repo *r, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rm -rf; 0 on success. */
int tu_rmrf(const char *path);
/* 1 if the path exists (lstat), else 0. */
int tu_exists(const char *path);
/* Number of entries of dir whose names start with prefix and end with suffix. */
int tu_count_entries(const char *dir, const char *prefix, const char *suffix);

/* Advance the author and committer dates of the next git commands by 60s. */
void tu_tick(tu_repo *r);
/* Write path (creating directories) with content, add it and commit (after a tick). */
void tu_commit_file(tu_repo *r, const char *path, const char *content, const char *msg);
/* `git rev-parse --verify <rev>` as an oid; fails the test if it does not resolve. */
void tu_rev_parse(tu_repo *r, const char *rev, git_oid *out);
/* Hex of an oid in a static buffer (one of 4 rotating buffers). */
const char *tu_hex(const git_oid *oid);
/* A libgit2 id as replayq's (rq_oid), in one of 4 rotating buffers. */
const rq_oid *tu_rq_oid(const git_oid *oid);
/* tu_rev_parse as replayq's id (a SHA-1 repository's). */
void tu_rev_oid(tu_repo *r, const char *rev, rq_oid *out);
/* Hex of a SHA-1 rq_oid (one of 4 rotating buffers). */
const char *tu_oid_hex(const rq_oid *oid);
/* rq_odb_mem_write(_like) with libgit2's ids (like may be NULL): the
 * tests that read the objects back through libgit2. */
int tu_mem_write(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type);
int tu_mem_write_like(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type,
		      const git_oid *like);

/* Number of loose objects in the repository (objects/xx/...). */
int tu_loose_count(tu_repo *r);

/*
 * The oracle's commit: a shell command (printf-style: a git command and
 * what it needs) run in a throwaway worktree detached at onto; the
 * worktree's HEAD afterwards (malloc'ed hex), or NULL when the command
 * failed. The worktree is removed whatever happened.
 */
char *tu_worktree_head(tu_repo *r, const char *onto, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fail the test if a replay left a temporary object directory behind. */
void tu_assert_no_tmpdir(tu_repo *r);

#endif
