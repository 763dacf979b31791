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
#include "rq_ref_update.h"

/*
 * Apply every update: each ref is locked and its current value checked
 * against old_id (RQ_E_REF_MOVED if it moved; RQ_E_REF_LOCKED when
 * another process holds its lock) before the first is written. Nothing is
 * changed unless every check passes: first every ref's name (git's rules,
 * RQ_E_BAD_REF), its path (no symbolic link, RQ_E_BAD_REPO) and, for a ref
 * to create, that nothing stands in its way (rq_refs_check_creatable). A
 * ref that already holds its new value is left alone, without a reflog
 * entry (a retried job whose update was applied before).
 *
 * What holds once the checks passed depends on the ref storage:
 *  - files (loose refs and packed-refs): the refs are committed one by
 *    one, in order, each by rq_reffile (its lock file renamed over the
 *    ref, after its reflog entry). A
 *    process killed between two commits leaves the refs before it moved
 *    and the rest at their old values, each with its lock; a failure
 *    between two commits leaves the same, without the locks (the error
 *    says how many moved). Nothing is half-applied in the sense that
 *    matters to a job: its intent names every update, and the next
 *    delivery finishes them (queue/rq_refproto); a command-line replay
 *    gets the error and the locks are removed by the next run
 *    (rq_refs_clean_stale).
 *  - reftable: every ref and its reflog entry go into one new table,
 *    published by one rename of tables.list: all at once or none.
 */
int rq_refs_apply(git_repository *repo, const rq_ref_updates *result, const rq_ident *committer,
		  rq_error *err);

/*
 * Why an update did not happen, for a caller that may try again (a job's
 * "on_ref_moved": "retry", a ref_locked retried after a short pause).
 */
typedef enum rq_refs_verdict {
	RQ_REFS_APPLIED,      /* every ref holds its new id */
	RQ_REFS_MOVED,	      /* a ref is neither at its old nor at its new id: only a
			       * replay from the refs as they are now can go on */
	RQ_REFS_LOCKED_LIVE,  /* a lock held by a process that lives: try again soon */
	RQ_REFS_LOCKED_DEAD,  /* a lock whose owner (a replayq process) is gone: the
			       * next clean-up removes it; try again at once */
	RQ_REFS_LOCKED_OTHER, /* a lock no replayq process of this machine claims
			       * (git's, another program's, another machine's) */
	RQ_REFS_FAILED	      /* anything else (err says what) */
} rq_refs_verdict;

/* What a caller asks of rq_refs_apply_fenced and learns from it. */
typedef struct rq_refs_fence {
	/* asked once every ref is locked and checked, right before the
	 * commit: 0 lets it commit; anything else releases the locks and
	 * moves nothing (RQ_E_INTERRUPTED). NULL: commit. A caller that may
	 * have lost its right to move the refs (a worker whose job went to
	 * another) checks it there, under the locks. */
	int (*may_commit)(void *arg);
	void *arg;
	/* out: the fence was passed (a failure after it may have moved some
	 * refs: moved says how many, on the files backend); atomic: the
	 * commit moves every ref or none (reftable), so that a failure after
	 * the fence moved none */
	int passed;
	size_t moved;
	int atomic;
	rq_refs_verdict verdict; /* out */
} rq_refs_fence;

/* rq_refs_apply with a fence (NULL: none). 0, or -1 with err set and
 * fence->verdict saying why. */
int rq_refs_apply_fenced(git_repository *repo, const rq_ref_updates *result,
			 const rq_ident *committer, rq_refs_fence *fence, rq_error *err);

/*
 * Test hook points of an update, in order: "refs-start", "refs-locking"
 * (files: after the first lock of several), "refs-locked", "refs-fenced"
 * (after may_commit said yes), "refs-committed" (files: after the first
 * commit of several), "refs-written" (reftable: the table and the new
 * list written, right before the rename that publishes them, rq_rttx),
 * "refs-done".
 */

/*
 * rq_refs_apply writes down, before its first lock, which locks it is
 * about to hold, in a marker whose flock it holds until it is done
 * (rq_refmark). rq_refs_clean_stale (which rq_refs_apply also does first,
 * under the same per-repository guard) removes the locks a gone owner
 * left: see rq_refmark.h for which, and how a marker is read without
 * letting it name a file anywhere else.
 */
void rq_refs_clean_stale(git_repository *repo);

/*
 * 0 when every ref of result that does not exist yet (old id zero) can be
 * created as git would create it; else -1 with RQ_E_BAD_REF in git's
 * words: an existing ref (loose or packed) is one of its leading
 * directories ("'refs/heads/main' exists; cannot create
 * 'refs/heads/main/sub'"), or lies beneath it (refs/heads/team/x for
 * refs/heads/team; refs/heads/main for refs/heads), or a non-empty
 * directory is in its way, or two of them are one inside the other.
 * rq_refs_apply checks it before any lock; a job checks it in print mode
 * too.
 */
int rq_refs_check_creatable(git_repository *repo, const rq_ref_updates *result, rq_error *err);

/* "update <ref> <new> <old>\n" lines; malloc'ed, NULL when out of memory. */
char *rq_refs_format_updates(const rq_ref_updates *result);

#endif
