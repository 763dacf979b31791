/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine_scope: the judgement of one path for rq_confine (internal to
 * rq_confine.c and rq_confine_cfg.c; the interface is rq_confine.h): where
 * it resolves, against the root or the directory the repository's own
 * files stay inside (its scope), and a file read only when it resolves
 * inside the root and is a regular file. Messages name paths relative to
 * a base directory. Each check returns 0, or -1 with the scope's error
 * set (RQ_E_BAD_REPO, RQ_E_NOMEM).
 */
#ifndef RQ_CONFINE_SCOPE_H
#define RQ_CONFINE_SCOPE_H

#include <limits.h>
#include <stddef.h>

#include "rq_error.h"

typedef struct rq_confine_scope {
	const char *root;
	size_t rootlen;
	/* the directory the repository's own files stay inside: its own
	 * directory (or a linked worktree's main repository), the root until
	 * that is known, or with RQ_CONFINE_ROOT_SCOPE */
	const char *scope;
	size_t scopelen;
	const char *base; /* the directory messages name paths relative to */
	rq_error *err;
	char scopebuf[PATH_MAX];
} rq_confine_scope;

/* real (resolved) is dir (len bytes) or under it. */
int rq_confine_scope_under(const char *dir, size_t len, const char *real);

/* How messages name c's scope: "the repository root", "the repository". */
const char *rq_confine_scope_name(const rq_confine_scope *c);

/* path as messages show it: relative to c's base when under it. */
const char *rq_confine_scope_shown(const rq_confine_scope *c, const char *path);

/* path resolves inside the scope (a path that does not exist is inside). */
int rq_confine_scope_check(const rq_confine_scope *c, const char *path);

/* A path that may not exist yet: its nearest existing directory is inside
 * the root; what names it in messages. */
int rq_confine_scope_check_maybe(const rq_confine_scope *c, const char *path, const char *what);

/* A file libgit2 reads, read here first (at most max bytes, into *out,
 * NUL-terminated, *len bytes): 1 read, 0 it does not exist, -1 err set. */
int rq_confine_scope_read(const rq_confine_scope *c, const char *path, size_t max, char **out,
			  size_t *len, const char *what);

#endif
