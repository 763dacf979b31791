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
 * directory its "gitdir:" names, read as libgit2 reads it; in each git
 * directory libgit2 looks at, its commondir, gitdir and HEAD files; the
 * config with every file it includes, whatever the include's condition,
 * as libgit2 reads config syntax: rq_gitconfig). The repository's own
 * directories stay inside it: its git and common directories resolve
 * inside path, or path is a linked worktree's git directory
 * (<common>/worktrees/<name>) and its main repository is the scope; HEAD,
 * objects, refs, logs, packed-refs, reftable too (with
 * RQ_CONFINE_ROOT_SCOPE, anywhere inside root). Once open, the repository
 * must be where it was checked, hold no configuration variable that was
 * not read here (a file read differently is refused, never used), and
 * pass the checks of rq_confine_repo within its scope. open (NULL:
 * git_repository_open_ext without search) opens it once those checks
 * pass, and may name its own error (a format replayq cannot handle). 0
 * with *out, or -1 with RQ_E_BAD_REPO or the opener's error (*out NULL).
 */
typedef int (*rq_confine_opener)(git_repository **out, const char *path, rq_error *err);
#define RQ_CONFINE_ROOT_SCOPE 1u /* a repository's directories may be anywhere in root */
int rq_confine_open(git_repository **out, const char *path, const char *root, unsigned flags,
		    rq_confine_opener open, rq_error *err);

/*
 * 0 when the repository's git directory, common directory, objects, refs,
 * logs, packed-refs, reftable and HEAD all resolve inside within
 * (absolute, without symbolic links), and nothing that is read there can
 * block or lead elsewhere: every entry of refs/, logs/, objects/,
 * objects/pack/, objects/info/ and the ref files at the top of the git
 * directories (HEAD, packed-refs, *_HEAD) is a directory, a regular file
 * or a symbolic link to a regular file inside within (no FIFO, socket or
 * device), and the reftable directory, tables.list and the tables are no
 * symbolic links. Else -1 with RQ_E_BAD_REPO naming the path, relative to
 * the repository, and what is wrong with it.
 */
int rq_confine_repo(git_repository *repo, const char *within, rq_error *err);

/* The objects directory dir's part of rq_confine_repo (an alternate's,
 * which rq_odb follows): its entries, pack/'s and info/'s pass the same
 * checks within within ("/": anywhere). 0 or -1 with RQ_E_BAD_REPO. */
int rq_confine_objects(const char *dir, const char *within, rq_error *err);

/* 0 when neither the ref nor its reflog is reached through a symbolic
 * link, nor written in a reftable directory that is one; else -1 with
 * RQ_E_BAD_REPO. */
int rq_confine_ref(git_repository *repo, const char *name, rq_error *err);

/*
 * The common directory of the git directory gitdir, into out (PATH_MAX,
 * not gitdir's own buffer: out is written while gitdir is read):
 * what its commondir file names, read the one way replayq reads it (the
 * job's check before libgit2 opens the repository, and the format's
 * diagnosis after libgit2 refused to): a regular file (no FIFO: it cannot
 * block) of at most 4 KiB whose text is an absolute path or one starting
 * with "./" or "../", relative to gitdir, with no control byte and no
 * trailing space before its line end (the only text git and libgit2 1.5
 * read alike: libgit2 trims \v and \f too, and takes other relative
 * paths from the current directory). 1 with out, 0 when there is no
 * commondir file (out: gitdir), -1 with RQ_E_BAD_REPO.
 */
int rq_confine_commondir(const char *gitdir, char *out, rq_error *err);

#endif
