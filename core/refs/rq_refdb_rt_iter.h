/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb_rt_iter: the iteration of rq_refdb_rt's refs. The refs under
 * refs/ in name order, of the common stack merged with a linked
 * worktree's own (each of its own refs from its stack only), filtered by
 * libgit2's glob as libgit2's files backend does (fnmatch without
 * FNM_PATHNAME: "*" takes '/' too); a glob's prefix before its first
 * special character is sought in the stacks, not scanned for.
 */
#ifndef RQ_REFDB_RT_ITER_H
#define RQ_REFDB_RT_ITER_H

#include <git2.h>

#include "rq_refdb_rt.h"

/* The backend's iterator (libgit2's git_refdb_backend.iterator). */
int rq_refdb_rt_iter_new(git_reference_iterator **out, git_refdb_backend *_b, const char *glob);

#endif
