/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofmt: open a repository in a format replayq handles, and say
 * which format it is not.
 *
 * replayq reads SHA-1 repositories with refs stored as files (loose refs
 * and packed-refs, through libgit2) or as reftables (git 3.0's default,
 * extensions.refStorage = reftable, through rq_refdb_rt). libgit2 1.5
 * refuses every extension it does not know; rq_repofmt_open declares
 * refStorage and objectFormat to it (GIT_OPT_SET_EXTENSIONS) and checks
 * their values itself. A repository in another format gets
 * RQ_E_UNSUPPORTED_REPO with a message that names the setting
 * ("unsupported repository format: extensions.objectFormat=sha256"; also
 * for extensions.compatObjectFormat, an unknown refStorage, and an
 * extension libgit2 does not know), where libgit2 alone said "not a git
 * repository". A repository of version 0 that sets an extension git
 * honours only in version 1 is refused in git's words ("repo version is 0,
 * but v1-only extension found:\n\tobjectformat"), where libgit2 opens it.
 */
#ifndef RQ_REPOFMT_H
#define RQ_REPOFMT_H

#include <git2.h>

#include "rq_error.h"
#include "rq_oid.h"

/*
 * git_repository_open_ext(out, path, flags, NULL), then the format check,
 * then the reftable ref database when the repository has one. 0, or -1
 * with err set: RQ_E_UNSUPPORTED_REPO, or RQ_E_BAD_REPO (not a
 * repository: libgit2's message).
 */
int rq_repofmt_open(git_repository **out, const char *path, unsigned int flags, rq_error *err);

/* 1 when an opened repository keeps its refs in reftables
 * (extensions.refStorage = reftable), else 0. */
int rq_repofmt_reftable(git_repository *repo);

/* The object format of a repository rq_repofmt_open accepted (its
 * extensions.objectFormat; SHA-1 when unset, the only one accepted
 * today). For the openers' rq_odb_opts.algo: read once per job. */
const rq_oid_algo *rq_repofmt_algo(git_repository *repo);

#endif
