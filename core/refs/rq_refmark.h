/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refmark: who holds a repository's ref locks, and the clean-up of the
 * locks a killed replayq process left.
 *
 * Before its first lock, a process that updates refs writes down which
 * locks it is about to take, in its marker
 * <commondir>/replayq-refs-<pid>@<host>.<token>.owner, on which it holds
 * an flock until it is done (core/base/rq_owner): one line a lock,
 *   "<ref> <new id>"         a loose ref's lock (<ref>.lock; a ref name
 *                            never ends in ".lock");
 *   "<path>.lock <token>"    a lock file by its path under the common
 *                            directory (reftable/tables.list.lock, a
 *                            table's lock), whose tables are named with
 *                            token.
 * Those steps, and the clean-up, run under a per-repository guard: an
 * flock on <commondir>/replayq-refs.guard, held from the clean-up until
 * every lock is taken, so that no cleaner judges a lock another process is
 * taking right then.
 *
 * The clean-up (rq_refmark_guard) removes the locks of every marker whose
 * owner is gone (its flock can be taken): those the owner made. A loose
 * ref's lock is the owner's when it was made after the marker and either
 * is empty within a minute of it (killed between taking and writing) or
 * holds the ref's new id, unless the marker ends with "- released" (every
 * lock renamed or let go: one there now is someone else's). A reftable
 * lock is the owner's when it holds the owner's token (rq_rtlock: from the
 * instant it exists, so its content alone decides); the tables and
 * temporary files with the token that tables.list does not name
 * (written, never published) go too. A lock of a live process, or one no
 * marker claims (git's, another program's), stays. A marker named the old
 * way (pid@host, no token, written by a replayq before flocks) is judged
 * as it was then: its owner is gone when it ran on this host and no such
 * process lives.
 *
 * A marker is the repository's data: each name in it is checked (a ref
 * name by git's rules, a path as components under the common directory)
 * before it names a file, and every file is reached from the git
 * directories without following a symbolic link (rq_fs_open_at); a guard
 * or marker that is a link, a FIFO or a directory is RQ_E_BAD_REPO.
 */
#ifndef RQ_REFMARK_H
#define RQ_REFMARK_H

#include <git2.h>

#include "rq_error.h"
#include "rq_owner.h"
#include "rq_ref_update.h"

#define RQ_REFMARK_PREFIX "replayq-refs-"

typedef struct rq_refmark {
	int common, own;	 /* the common and the own git directory, open */
	char *common_path;	 /* the common directory's path, no '/' at its end */
	int guard;		 /* the guard while held, else -1 */
	rq_owner mark;		 /* this process's marker (fd -1: none yet) */
	const rq_oid_algo *algo; /* the repository's format: ids in markers, locks */
} rq_refmark;

/* The git directories of repo, opened. 0, or -1 with err set. */
int rq_refmark_open(rq_refmark *m, git_repository *repo, rq_error *err);

/* The marker removed (if any), the guard let go, the directories closed. */
void rq_refmark_close(rq_refmark *m);

/* Take the guard (waiting for it) and clean what gone owners left. 0, or
 * -1 with err set (RQ_E_BAD_REPO: the guard is not a regular file). */
int rq_refmark_guard(rq_refmark *m, rq_error *err);
void rq_refmark_unguard(rq_refmark *m);

/* Write down the loose-ref locks of res's updates ("<ref> <new id>"),
 * making the marker. 0, or -1 with err set. */
int rq_refmark_refs(rq_refmark *m, const rq_ref_updates *res, rq_error *err);

/* Write down the lock file path (absolute, inside the common directory)
 * whose tables are named with this marker's token, making the marker. 0,
 * or -1 with err set. */
int rq_refmark_lockfile(rq_refmark *m, const char *path, rq_error *err);

/* Write down that every lock written down so far was let go: a gone
 * owner's marker that says so has no lock left to remove (a lock there
 * now is someone else's). */
void rq_refmark_released(rq_refmark *m);

/* The marker's token (8 hex digits), the marker made if need be: NULL
 * with err set when it cannot be. */
const char *rq_refmark_token(rq_refmark *m, rq_error *err);

/* Who holds a lock, as the markers of the other processes say (key: a
 * ref name, or a lock's path under the common directory). */
enum { RQ_REFMARK_NOBODY, RQ_REFMARK_LIVE, RQ_REFMARK_GONE };
int rq_refmark_holder(rq_refmark *m, const char *key);

/* The path of a lock under the common directory, for a key: path must
 * lie inside it; NULL otherwise (a pointer into path). */
const char *rq_refmark_rel(const rq_refmark *m, const char *path);

#endif
