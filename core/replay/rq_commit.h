/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_commit: write the replayed form of a commit.
 *
 * A pick keeps the original's author line, extra headers (signatures
 * "gpgsig" and "gpgsig-sha256" dropped) and message (leading blank lines
 * dropped) byte for byte, with a new tree, parent and committer, so that
 * the same inputs give the same ids as `git replay` and `git cherry-pick`.
 * A revert gets git's revert message and the committer as author. A
 * merge (a merge train's car) is written from its parts, as `git
 * commit-tree -p <first> -p <second> -m <message>` writes it.
 */
#ifndef RQ_COMMIT_H
#define RQ_COMMIT_H

#include <git2.h>

#include "rq_error.h"

/*
 * committer: the identity line without the "committer " prefix.
 * parent NULL: a root commit.
 */
int rq_commit_pick(git_odb *odb, const git_oid *orig, const git_oid *tree, const git_oid *parent,
		   const char *committer, git_oid *out, rq_error *err);

/* The same with the given parents, in order: a replayed merge commit. */
int rq_commit_pick_parents(git_odb *odb, const git_oid *orig, const git_oid *tree,
			   const git_oid *parents, size_t nparents, const char *committer,
			   git_oid *out, rq_error *err);

/* author: the revert's author line (git revert's: the current author). */
int rq_commit_revert(git_odb *odb, const git_oid *orig, const git_oid *tree, const git_oid *parent,
		     const char *author, const char *committer, git_oid *out, rq_error *err);

/*
 * A commit with the given parents (in order), identity lines (without
 * the "author "/"committer " prefix) and message (a newline is added when
 * it does not end with one, as git commit-tree -m does).
 */
int rq_commit_merge(git_odb *odb, const git_oid *tree, const git_oid *parents, size_t nparents,
		    const char *author, const char *committer, const char *message, git_oid *out,
		    rq_error *err);

/*
 * The revert message for a commit message: 'Revert "<subject>"' (or
 * 'Reapply "<...>"' for a revert of a revert), a blank line, and
 * "This reverts commit <hex>.". Returns malloc'ed text or NULL.
 */
char *rq_commit_revert_message(const char *message, size_t len, const char *hex);

#endif
