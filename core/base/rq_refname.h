/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refname: ref names judged by git's rules (`git check-ref-format`),
 * not libgit2's: libgit2 1.5 takes a DEL (0x7f) in a name, which git
 * refuses, and a ref name read from a file replayq did not write (a lock
 * marker) must be judged before it names any path.
 *
 * The rules, after git's refs.c (check_refname_format, flags 0): the name
 * is made of components split by '/', at least two; no component is
 * empty, starts with '.' or ends with ".lock"; no ASCII control character
 * (below 0x20, or 0x7f), space, '~', '^', ':', '?', '*', '[' or '\'; no
 * ".." and no "@{"; the name does not end with '.' and is not "@".
 */
#ifndef RQ_REFNAME_H
#define RQ_REFNAME_H

/* 1 when git's `check-ref-format` takes name (without --allow-onelevel),
 * else 0. */
int rq_refname_format_ok(const char *name);

/* 1 when name is a ref a replay may lock: "HEAD", or a name under
 * "refs/" that rq_refname_format_ok takes. */
int rq_refname_lockable(const char *name);

/* 1 when name is under one of the prefixes whose refs each worktree keeps
 * for itself (git's is_per_worktree_ref: refs/worktree/, refs/bisect/,
 * refs/rewritten/); names outside refs/ (HEAD, pseudo-refs) are the
 * worktree's own too, which the callers decide by their own rules. */
int rq_refname_worktree_prefix(const char *name);

#endif
