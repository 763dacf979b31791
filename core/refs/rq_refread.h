/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refread: one ref of a files repository read by replayq itself, the
 * way git's files backend reads it, at the width of the repository's
 * object format (issue 42: libgit2 1.5 calls a loose ref of 64 digits
 * "corrupted" and silently misses it in packed-refs). The read half of
 * rq_reffile.
 *
 * A ref is its loose file, else its line in packed-refs. The loose file
 * holds exactly hexsz hex digits then the end or white space (anything
 * else is a broken ref), or "ref: <target>" (a symbolic ref; a symbolic
 * link whose target starts with "refs/" is one too, as git still reads
 * it). A directory where the ref would be, or a missing one, sends the
 * read to packed-refs: an optional "# pack-refs with: ..." header, then
 * "<hex> <name>" lines, each maybe followed by a "^<hex>" peeled line;
 * searched by halves when the header says "sorted", else line by line.
 *
 * The worktree's own refs (HEAD and the other names outside refs/,
 * refs/bisect/, refs/worktree/, refs/rewritten/) are read from its own git
 * directory, the others and packed-refs from the common one. Every file
 * is reached without following a link (rq_fs).
 */
#ifndef RQ_REFREAD_H
#define RQ_REFREAD_H

#include "rq_error.h"
#include "rq_oid.h"

/* git's limit on the symbolic refs followed (its SYMREF_MAXDEPTH): the
 * fifth read still finding a symbolic ref fails. */
#define RQ_REFREAD_MAXDEPTH 5

/* Where to read, and at which width. */
typedef struct rq_refread {
	int common; /* the common git directory, open */
	int own;    /* the repository's own git directory, open (common's fd
		       in a main worktree) */
	const rq_oid_algo *algo;
} rq_refread;

/* rq_refread_raw and rq_refread_resolve's answers besides -1. */
#define RQ_REFREAD_FOUND   0
#define RQ_REFREAD_MISSING 1

/* 1 when ref lives in the repository's own git directory (a worktree's
 * own ref), 0 in the common one: git's split (refs.c). */
int rq_refread_own(const char *ref);

/*
 * The ref itself, not followed: RQ_REFREAD_FOUND with its id in *id and
 * *target NULL, or a symbolic ref's target in *target (malloc'ed);
 * RQ_REFREAD_MISSING; or -1 with err set (RQ_E_BAD_REPO: a broken ref, a
 * bad packed-refs; RQ_E_IO: a file that cannot be read; RQ_E_NOMEM).
 */
int rq_refread_raw(const rq_refread *r, const char *ref, rq_oid *id, char **target, rq_error *err);

/*
 * The id ref resolves to, symbolic refs followed up to
 * RQ_REFREAD_MAXDEPTH reads: RQ_REFREAD_FOUND (*id), RQ_REFREAD_MISSING
 * (no such ref, or a symbolic ref to none), or -1 with err set (as
 * rq_refread_raw; a symbolic ref to a bad name or too deep a chain is
 * RQ_E_BAD_REPO).
 */
int rq_refread_resolve(const rq_refread *r, const char *ref, rq_oid *id, rq_error *err);

/* 1 when err is a read's "reference broken": a loose file that holds no
 * ref (not "ref: <name>", not an id of the repository's width: in a
 * SHA-256 repository a 40-digit id is one), which git reads as a broken
 * ref (REF_ISBROKEN); else 0. */
int rq_refread_is_broken(const rq_error *err);

#endif
