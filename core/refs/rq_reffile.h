/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_reffile: one loose ref and its reflog entries, written by replayq
 * itself the way git's files backend writes them (the rules of git's
 * refs/files-backend.c; which reflogs get an entry, and the entry's bytes,
 * as libgit2 1.5's refdb_fs.c wrote them for replayq until now), at the
 * width of the repository's object format (issue 42: libgit2 1.5 cannot
 * write a 64-digit id).
 *
 * A ref is locked by creating <ref>.lock with O_EXCL, reached from the
 * git directory that keeps the ref one component at a time without
 * following a symbolic link (rq_fs), the directories on the way made, and
 * an empty directory hierarchy where the ref goes removed first (what a
 * deleted ref's directories leave). The lock gets "<hex>\n" (fsynced when
 * refs are to be: rq_reffile_sync), is renamed over the ref to commit
 * (its directory fsynced too), and is removed when it was not committed.
 * A ref that lives only in packed-refs gets its loose file; packed-refs is
 * left as it is (git does the same: the loose ref wins).
 *
 * A reflog entry is "<old> <new> <name> <<email>> <time> <+hhmm>\t<msg>\n",
 * appended to logs/<ref> (made when missing, never through a link): under
 * the common directory, HEAD's under the repository's own.
 */
#ifndef RQ_REFFILE_H
#define RQ_REFFILE_H

#include <stddef.h>

#include "rq_error.h"
#include "rq_ident.h"
#include "rq_oid.h"

/* One ref's lock. */
typedef struct rq_reffile {
	int dir;     /* the directory that holds the ref, open; -1: none */
	char *path;  /* "<ref>.lock" (malloc'ed) */
	size_t leaf; /* where the last component starts in path */
	size_t len;  /* the ref's length: path without ".lock" */
	int held;    /* the lock file is ours, not renamed yet */
} rq_reffile;

#define RQ_REFFILE_INIT                                                                            \
	{                                                                                          \
		-1, NULL, 0, 0, 0                                                                  \
	}

/* Take ref's lock under base (the git directory that keeps it, open):
 * 0, or -1 with err set: RQ_E_REF_LOCKED when the lock file exists
 * (another process's), RQ_E_IO otherwise (what failed and why; errno
 * too). */
int rq_reffile_lock(rq_reffile *f, int base, const char *ref, rq_error *err);

/* The lock gets id in algo's digits and a newline, fsynced when sync. 0,
 * or -1 with err set (RQ_E_IO). */
int rq_reffile_write(rq_reffile *f, const rq_oid *id, const rq_oid_algo *algo, int sync,
		     rq_error *err);

/* The lock renamed over the ref (its directory fsynced when sync). 0, or
 * -1 with err set (RQ_E_IO); the lock is still held then. */
int rq_reffile_commit(rq_reffile *f, int sync, rq_error *err);

/* The lock removed unless committed, everything let go. Fine on
 * RQ_REFFILE_INIT and twice. */
void rq_reffile_release(rq_reffile *f);

/*
 * The reflog entry of a move from old to new by who with msg (NULL: none),
 * malloc'ed into *out (NUL-terminated, *len bytes). Name and e-mail are
 * trimmed of white space; '<' or '>' in either, or either empty, is
 * RQ_E_IDENT. 0, or -1 with err set.
 */
int rq_reffile_log_entry(char **out, size_t *len, const rq_oid *old, const rq_oid *new_id,
			 const rq_oid_algo *algo, const rq_ident *who, const char *msg,
			 rq_error *err);

/* 1 when ref's reflog lives in the repository's own git directory (HEAD),
 * 0 in the common one. */
int rq_reffile_log_own(const char *ref);

/* 1 when an update of ref gets a reflog entry under policy (the value of
 * rq_rttx_log_policy: core.logAllRefUpdates), exists saying whether its
 * reflog exists already. */
int rq_reffile_logged(int policy, const char *ref, int exists);

/* 1 when logs/<ref> under base exists (not followed), else 0. */
int rq_reffile_log_exists(int base, const char *ref);

/* Append len bytes of line to logs/<ref> under base, fsynced when sync.
 * 0, or -1 with err set (RQ_E_IO). */
int rq_reffile_log_append(int base, const char *ref, const char *line, size_t len, int sync,
			  rq_error *err);

/* What HEAD (in the own git directory, open as own) points at when it is
 * a symbolic ref ("ref: <name>"), malloc'ed; NULL otherwise. */
char *rq_reffile_head_target(int own);

/* 1 when refs are fsynced under this core.fsync value (NULL: unset), as
 * git parses it: a comma-separated list of components, "-" taking one
 * away, "none" clearing; the default has no refs. */
int rq_reffile_fsync_value(const char *core_fsync);

/* 1 when repo's refs are to be fsynced: core.fsync names them (git's
 * rule), or core.fsyncObjectFiles is true (libgit2's, which wrote them
 * until now). */
struct git_repository;
int rq_reffile_sync(struct git_repository *repo);

#endif
