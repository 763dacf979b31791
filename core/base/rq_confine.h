/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine: keep a replay's reads and writes inside a directory tree,
 * whatever the repository's own files say.
 *
 * A repository under a worker's root is data, and data can point
 * anywhere: a `.git` file (`gitdir: /elsewhere`), a `commondir` file, a
 * symbolic link for `objects/`, `refs/heads/` or one loose ref, a config
 * `[include] path`. rq_confine_open() decides what libgit2 would read at
 * open before it reads it (the config includes above all: libgit2 follows
 * them while it opens the repository); rq_confine_repo() then resolves
 * every other such path of the opened repository and refuses the
 * repository (RQ_E_BAD_REPO) when one leads outside the root;
 * objects/info/alternates are rq_odb's part.
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
 * Open the repository at path (a directory inside root, resolved), held
 * to root from before libgit2 reads any of its files: what libgit2 reads
 * while it finds and opens a repository is read here first and must
 * resolve inside root and be a regular file (<path>/.git and the
 * directory its "gitdir: " names, the commondir files, the config with
 * every file it includes, whatever the include's condition, as libgit2
 * reads config syntax: rq_gitconfig). Once open, the repository must be
 * where it was checked, hold no configuration variable that was not read
 * here (a file read differently is refused, never used), and pass
 * rq_confine_repo. open (NULL: git_repository_open_ext without search)
 * opens it once those checks pass, and may name its own error (a format
 * replayq cannot handle). 0 with *out, or -1 with RQ_E_BAD_REPO or the
 * opener's error (*out NULL).
 */
typedef int (*rq_confine_opener)(git_repository **out, const char *path, rq_error *err);
int rq_confine_open(git_repository **out, const char *path, const char *root,
		    rq_confine_opener open, rq_error *err);

/*
 * 0 when the repository's git directory, common directory, objects, refs,
 * logs, packed-refs and HEAD all resolve inside root (absolute, without symbolic links); else -1
 * with RQ_E_BAD_REPO naming the path, relative to the repository, and where it leads.
 */
int rq_confine_repo(git_repository *repo, const char *root, rq_error *err);

/* 0 when neither the ref nor its reflog is reached through a symbolic
 * link; else -1 with RQ_E_BAD_REPO. */
int rq_confine_ref(git_repository *repo, const char *name, rq_error *err);

#endif
