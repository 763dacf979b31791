/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb_rt_log: the reflogs of rq_refdb_rt's refs, read from the stack
 * into libgit2's git_reflog, newest entry first as libgit2 keeps them,
 * each entry with its own old id. A backend must build that git_reflog,
 * whose layout libgit2 keeps private: it is libgit2 1.5's, and with
 * another version a read fails with a clear error.
 */
#ifndef RQ_REFDB_RT_LOG_H
#define RQ_REFDB_RT_LOG_H

#include <git2.h>

#include "rq_refdb_rt.h"

/* The backend's reflog_read (libgit2's git_refdb_backend.reflog_read). */
int rq_refdb_rt_log_read(git_reflog **out, git_refdb_backend *_b, const char *refname);

/* 1 when libgit2's git_reflog has the layout rq_refdb_rt_log builds (it
 * checks the reflog of refname, read by libgit2 from a files repository). */
int rq_refdb_rt_log_layout_ok(git_repository *files_repo, const char *refname);

#endif
