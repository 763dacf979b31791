/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine_cfg: a repository's configuration read for rq_confine
 * (internal to rq_confine.c; the interface is rq_confine.h) before
 * libgit2 reads it: every file it includes, whatever their conditions,
 * resolves inside the root and is a regular file, or does not exist; and,
 * once libgit2 has opened the repository, what it read is what was read
 * here.
 */
#ifndef RQ_CONFINE_CFG_H
#define RQ_CONFINE_CFG_H

#include <git2.h>
#include <stddef.h>

#include "rq_confine_scope.h"

/* One variable as read from the files before libgit2 reads them. */
typedef struct rq_confine_cfgvar {
	char *name, *value; /* value NULL: a key without '=' */
} rq_confine_cfgvar;

/* The configuration as read here: every file it includes, checked, and
 * every variable of every file. */
typedef struct rq_confine_cfg {
	const rq_confine_scope *c;
	rq_confine_cfgvar *v;
	size_t n, cap;
	int files, depth;
	const char *path; /* the file being read, as libgit2 names it */
} rq_confine_cfg;

/* A config file and, in turn, every file it includes, checked and read
 * into w (w->c: the scope, whose error is set): 0 or -1. */
int rq_confine_cfg_walk(rq_confine_cfg *w, const char *path);
void rq_confine_cfg_free(rq_confine_cfg *w);

/* What libgit2 opened in repo is what was checked in w: the same gitdir
 * and commondir, and no variable w did not read. 0 or -1. */
int rq_confine_cfg_opened_as_checked(rq_confine_cfg *w, git_repository *repo, const char *gitdir,
				     const char *commondir);

#endif
