/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc ("Update
 * transactions", "Compaction") and git's refs/reftable-backend.c (which
 * reflog entries a ref update writes) */
/*
 * rq_rttx: ref updates on a reftable stack, all at once.
 *
 * A transaction takes <dir>/tables.list.lock (O_EXCL; waiting up to
 * lock_timeout_ms, git's reftable.lockTimeout, 100 ms by default), reads
 * the stack again under it, checks every update's old value there, and
 * writes one new table with every ref record and its reflog entries, under
 * one update index. The table is written to "<name>.temp.XXXXXX", fsynced,
 * renamed to its name ("0x<min>-0x<max>-<8 hex>.ref", git's names); then
 * the lock gets the list with the new name appended, is fsynced and
 * renamed over tables.list. So tables.list never names a missing table,
 * and the refs move together or not at all. (git fsyncs the two files
 * only when core.fsync includes "reference"; replayq always does.)
 *
 * Reflog entries are those git writes: for every ref the policy
 * (core.logAllRefUpdates) logs, with the ref's value before (resolved
 * through a symbolic ref) and after, the identity, and the message with
 * its white space collapsed as git does, cut at 2048 bytes and ended with
 * "\n"; for HEAD too when it is a symbolic ref to a ref the transaction
 * moves. An update that changes nothing writes nothing. A deletion writes
 * a tombstone and deletes the ref's reflog (a tombstone per entry).
 *
 * After a transaction, rq_rtcompact_run (auto) restores git's geometric
 * sequence of table sizes (factor 2), as git does after each of its own
 * writes, so that a repository only replayq writes keeps few tables. The
 * lock files, the new table and the list are written by rq_rtfile.
 *
 * Test hook point "refs-written": the new table in place and the new list
 * written into tables.list.lock, right before the rename that publishes
 * it (a transaction's, not a compaction's).
 *
 * Who owns a lock: git's lock files name no owner. Every lock file a
 * transaction or a compaction makes holds its token from the first
 * instant (rq_rtlock), the token being the random part of its tables'
 * names, which a caller may choose (opts.token); the caller is also told
 * the path of every lock file before it is made (note_lock), so that it
 * can write both down first, and whoever finds the lock after the
 * caller's death can tell it from git's (rq_rtlock_owned_at, used by
 * rq_refmark; see docs/refs.md).
 */
#ifndef RQ_RTTX_H
#define RQ_RTTX_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "rq_error.h"
#include "rq_oid.h"
#include "rq_rtstack.h"

/* core.logAllRefUpdates */
enum rq_rttx_log_policy {
	RQ_RTTX_LOG_NONE,   /* false (a bare repository's default): existing reflogs only */
	RQ_RTTX_LOG_NORMAL, /* true: also HEAD, refs/heads/, refs/remotes/, refs/notes/ */
	RQ_RTTX_LOG_ALWAYS  /* always: every ref */
};

/* What an update checks before it moves the ref. */
enum rq_rttx_check {
	RQ_RTTX_ANY,	/* nothing */
	RQ_RTTX_ABSENT, /* the ref must not exist */
	RQ_RTTX_ID,	/* it must hold old_id (zero: must not exist) */
	RQ_RTTX_SYMREF	/* it must be a symbolic ref to old_target */
};

/* Whether an update writes a reflog entry. */
enum rq_rttx_log { RQ_RTTX_LOG_AUTO, RQ_RTTX_LOG_SKIP, RQ_RTTX_LOG_FORCE };

typedef struct rq_rttx_ident {
	const char *name, *email;
	int64_t time;
	int tz; /* minutes east of UTC (libgit2's git_time.offset) */
} rq_rttx_ident;

typedef struct rq_rttx_update {
	const char *name;
	int new_type;		   /* RQ_RTABLE_VAL1, VAL2 (with new_peeled), SYMREF or DELETION */
	rq_oid new_id, new_peeled; /* of the stack's object format */
	const char *new_target;
	int check; /* enum rq_rttx_check */
	rq_oid old_id;
	const char *old_target;
	int log; /* enum rq_rttx_log */
	const rq_rttx_ident *who;
	const char *message;
	int unchanged; /* out: it was at its new value already (nothing written) */
} rq_rttx_update;

typedef struct rq_rttx_opts {
	long lock_timeout_ms; /* 0: git's 100 ms; < 0: no waiting */
	int log_policy;	      /* enum rq_rttx_log_policy */
	int no_auto_compact;
	const char *token; /* 8 hex digits for the new tables' names; NULL: random */
	/* told every lock file's path before it is made; non-zero stops */
	int (*note_lock)(void *arg, const char *path);
	void *note_arg;
} rq_rttx_opts;

typedef struct rq_rttx rq_rttx;

/*
 * Take tables.list.lock and read the stack again under it. 0, or -1 with
 * err set: RQ_E_REF_LOCKED (another process holds the lock past the
 * timeout; the message names the lock file), RQ_E_IO.
 */
int rq_rttx_begin(rq_rttx **out, rq_rtstack *st, const rq_rttx_opts *opts, rq_error *err);

/*
 * Check every update against the stack as it is under the lock and, when
 * all pass, write and publish the one table (then compact, unless told
 * not to). RQ_E_REF_MOVED (git's "cannot lock ref '<ref>': is at <id>
 * but expected <id>" and its kin) when a check fails: nothing is written.
 * The lock is released either way. 0, or -1 with err set.
 */
int rq_rttx_commit(rq_rttx *tx, rq_rttx_update *u, size_t n, rq_error *err);

/* Release the lock if still held, and free. */
void rq_rttx_free(rq_rttx *tx);

/* begin, commit, free. */
int rq_rttx_apply(rq_rtstack *st, rq_rttx_update *u, size_t n, const rq_rttx_opts *opts,
		  rq_error *err);

/* core.logAllRefUpdates of repo (enum rq_rttx_log_policy): "always", a
 * boolean, or unset (a bare repository logs only existing reflogs,
 * another logs branches too). */
int rq_rttx_log_policy(git_repository *repo);

#endif
