/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine: keep a replay's reads and writes inside a directory tree,
 * whatever the repository's own files say.
 *
 * A repository under a worker's root is data, and data can point
 * anywhere: a `.git` file (`gitdir: /elsewhere`), a `commondir` file, a
 * symbolic link for `objects/`, `refs/heads/` or one loose ref, a config
 * `[include] path`. rq_confine_repo() resolves every such path of an
 * opened repository and refuses the repository (RQ_E_BAD_REPO) when one
 * leads outside the root; objects/info/alternates are rq_odb's part.
 * rq_confine_ref() refuses to write a ref (or its reflog) through a
 * symbolic link at all: libgit2 would write through it (git replaces the
 * link), which is how a loose ref pointing at /some/file overwrites it.
 *
 * The checks run on the repository as it is when the job starts; a
 * process that can change the repository's files while a job runs can
 * already do anything those files allow, and is not what this defends
 * against.
 */
#ifndef RQ_CONFINE_H
#define RQ_CONFINE_H

#include <git2.h>

#include "rq_error.h"

/*
 * 0 when the repository's git directory, common directory, objects, refs,
 * logs, packed-refs, HEAD and config (with the files it includes) all
 * resolve inside root (absolute, without symbolic links); else -1 with
 * RQ_E_BAD_REPO naming the path, relative to the repository, and where it
 * leads.
 */
int rq_confine_repo(git_repository *repo, const char *root, rq_error *err);

/* 0 when neither the ref nor its reflog is reached through a symbolic
 * link; else -1 with RQ_E_BAD_REPO. */
int rq_confine_ref(git_repository *repo, const char *name, rq_error *err);

#endif
