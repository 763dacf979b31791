/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refs: a replay's ref updates, applied all checked before any is written, or
 * formatted as `git replay` prints them (`git update-ref --stdin` lines).
 */
#ifndef RQ_REFS_H
#define RQ_REFS_H

#include <git2.h>

#include "rq_error.h"
#include "rq_ident.h"
#include "rq_replay.h"

/*
 * Apply every update: each ref is locked and its current value checked
 * against old_id (RQ_E_REF_MOVED if it moved; RQ_E_REF_LOCKED when
 * another live process holds its lock) before the first is written; then
 * they are committed one by one, in order, each with a reflog entry
 * (result->reflog_msg) by committer. Nothing is changed unless every check
 * passes. A ref that already holds its new value is left alone, without a
 * reflog entry (a retried job whose update was applied before). A process
 * killed between two commits leaves the refs before it moved and the rest
 * at their old values, each with its lock (which rq_refs_clean_stale
 * removes); a retry that knows the update (a worker's intent) finishes it.
 * Test hook points, in order: "refs-start", "refs-locking" (after the
 * first lock of several), "refs-locked", "refs-fenced" (after may_commit
 * said yes), "refs-committed" (after the first commit of several),
 * "refs-done".
 */
int rq_refs_apply(git_repository *repo, const rq_replay_result *result, const rq_ident *committer,
		  rq_error *err);

/*
 * The same, asking may_commit (when not NULL) once every ref is locked and
 * checked, right before the commit: anything but 0 releases the locks and
 * moves nothing (RQ_E_INTERRUPTED). A caller that may have lost its right
 * to move the refs (a worker whose job went to another) checks it there,
 * under the locks.
 */
int rq_refs_apply_checked(git_repository *repo, const rq_replay_result *result,
			  const rq_ident *committer, int (*may_commit)(void *arg), void *arg,
			  rq_error *err);

/*
 * rq_refs_apply writes down, before its first lock, which locks it is
 * about to hold: <commondir>/replayq-refs-<pid>@<host>, one "<ref> <new
 * id>" a line, removed when it is done. rq_refs_clean_stale (called by
 * rq_refs_apply first, under the same per-repository guard) removes the
 * locks of such a marker whose process is dead on this machine: lock files
 * made after the marker, empty or holding the id the marker names for that
 * ref. A lock held by a live process, by another machine's replayq or by
 * another program stays.
 */
void rq_refs_clean_stale(git_repository *repo);

/* "update <ref> <new> <old>\n" lines; malloc'ed, NULL when out of memory. */
char *rq_refs_format_updates(const rq_replay_result *result);

#endif
