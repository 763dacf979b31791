/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb_rt: libgit2's ref database over a reftable stack
 * (git2/sys/refdb_backend.h), so that everything of replayq that reads
 * refs through libgit2 (revision parsing, DWIM, rev-parse's @{-N} and
 * reflog forms, iteration of refs/heads/, HEAD detached or not) works
 * unchanged on a repository with extensions.refStorage = reftable.
 *
 * Refs live in <commondir>/reftable; in a linked worktree its own refs
 * (HEAD, the pseudo-refs, refs/worktree/, refs/bisect/, refs/rewritten/)
 * live in <gitdir>/reftable, as git keeps them. FETCH_HEAD and MERGE_HEAD
 * stay files in the git directory (git writes them so). Iteration yields
 * the refs under refs/, as libgit2's files backend does.
 *
 * Writes: git_reference_create and kin write one table each
 * (rq_rttx_apply). A git_transaction's locks are taken together: the
 * first takes tables.list.lock and reads the stack under it, the commits
 * are gathered, and when the last lock is released (committed or not) the
 * gathered updates are written as one table: the refs of a replay move
 * all at once, each checked against the value it had when locked.
 *
 * Reflogs are read (git_reflog_read), not rewritten: reflog_write, renames
 * and deletions of reflogs, and renames of refs are refused with an
 * error. Reading needs libgit2 1.5 (its git_reflog's layout, which a
 * backend must build and libgit2 keeps private); with another version a
 * reflog read fails with a clear error.
 *
 * The stack is opened at the first ref read, not at installation: a
 * caller checks the repository's paths (rq_confine) first.
 *
 * The tables are read at the repository's object format (given at
 * installation). libgit2 1.5's git_oid holds 20 bytes: in a SHA-256
 * repository every callback that would pass an id to or from libgit2
 * fails with RQ_E_UNSUPPORTED_REPO's message ("libgit2 cannot carry the
 * sha256 object ids of this reftable repository"), never cutting an id;
 * replayq's own readers (rq_rtstack) serve such a repository.
 */
#ifndef RQ_REFDB_RT_H
#define RQ_REFDB_RT_H

#include <git2.h>

#include "rq_error.h"
#include "rq_oid.h"
#include "rq_rtstack.h"

/* Give repo a reftable ref database whose tables hold ids of the object
 * format algo (NULL: SHA-1). 0, or -1 with err set. */
int rq_refdb_rt_install(git_repository *repo, const rq_oid_algo *algo, rq_error *err);

/* 1 when name is one of a worktree's own refs, kept in its own stack in
 * a linked worktree (git's per-worktree refs and pseudo-refs: HEAD,
 * refs/worktree/, refs/bisect/, refs/rewritten/). */
int rq_refdb_rt_worktree_ref(const char *name);

/*
 * For the backend's own files: its iteration (rq_refdb_rt_iter) and its
 * reflogs (rq_refdb_rt_log), which libgit2 calls with the backend.
 */
typedef struct rq_refdb_rt_backend rq_refdb_rt_backend;

/* err as libgit2's error (class reference): GIT_ELOCKED for
 * RQ_E_REF_LOCKED, else -1. */
int rq_refdb_rt_fail(const rq_error *err);
/* msg as libgit2's error (class reference); returns code. */
int rq_refdb_rt_fail_str(int code, const char *msg);

/* Which stack holds *name: 0 the common one, 1 the worktree's own; a
 * "main-worktree/" prefix is taken off *name (the common stack). */
int rq_refdb_rt_which(const rq_refdb_rt_backend *b, const char **name);
/* 1 in a linked worktree (refs of its own in its git directory). */
int rq_refdb_rt_linked(const rq_refdb_rt_backend *b);
/* The stack k, opened at first use, read again when it changed (not
 * while a transaction holds it). 0, or -1 with err set. */
int rq_refdb_rt_stack(rq_refdb_rt_backend *b, int k, rq_rtstack **out, rq_error *err);
/* id as libgit2's: 0, or -1 with err set (RQ_E_UNSUPPORTED_REPO for the
 * ids of a SHA-256 repository). */
int rq_refdb_rt_to_git(git_oid *out, const rq_oid *id, const rq_oid_algo *algo, rq_error *err);
/* libgit2's reference for the record r of name into *out: 0, or -1 with
 * err set (out of memory, or ids libgit2 cannot carry). */
int rq_refdb_rt_make_ref(git_reference **out, const rq_refdb_rt_backend *b, const char *name,
			 const rq_rtstack_ref *r, rq_error *err);

#endif
