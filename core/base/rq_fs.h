/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_fs: file-system helpers the core and the programs share.
 *
 * Inside a repository a symbolic link is data, and data can point
 * anywhere: every file replayq creates, writes or removes there is reached
 * from a directory the caller confined (an open descriptor: the common
 * directory, the objects directory) one component at a time, none of them
 * followed when it is a symbolic link (openat with O_NOFOLLOW). A link met
 * on the way is an error (ELOOP or ENOTDIR), never a way out.
 *
 * rq_fs_rmtree removes a directory tree the way `rm -rf` does, in the same
 * way: a link inside the tree is removed, never what it points at, and a
 * directory swapped for a link while it runs is not entered.
 */
#ifndef RQ_FS_H
#define RQ_FS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The directory path, opened for the *at calls below (path is followed as
 * given: the caller confined it). A descriptor, or -1 with errno. */
int rq_fs_opendir(const char *path);

/*
 * The directory that holds the last component of name, reached from
 * dirfd one component at a time without following a link; *leaf points
 * at that last component inside name. name is relative and each of its
 * components is neither empty nor "." nor "..". A new descriptor (to
 * close), or -1 with errno (EINVAL: a bad name; ELOOP or ENOTDIR: a
 * symbolic link on the way).
 */
int rq_fs_parent_at(int dirfd, const char *name, const char **leaf);

/* The same, making the directories on the way that do not exist (never
 * through a link either). */
int rq_fs_parent_make_at(int dirfd, const char *name, const char **leaf);

/* openat() of name under dirfd as rq_fs_parent_at reaches it, the last
 * component not followed either (O_NOFOLLOW and O_CLOEXEC added). */
int rq_fs_open_at(int dirfd, const char *name, int flags, mode_t mode);

/* Remove name (one component) under dirfd and, for a directory,
 * everything in it, following no link. 0, or -1 (the rest is removed all
 * the same). Trees deeper than 64 levels are left. */
int rq_fs_rmtree_at(int dirfd, const char *name);

/* rq_fs_rmtree_at of path's last component under its directory. A path
 * that does not exist is fine. */
int rq_fs_rmtree(const char *path);

/*
 * Open path to read a regular file from it: O_NONBLOCK (a FIFO never
 * blocks the opening), O_NOFOLLOW unless follow, then fstat'ed into *st
 * (NULL: not wanted). A descriptor, or -1 with errno: ENOENT, ELOOP (a
 * symbolic link, when not followed), RQ_FS_ENOTREG (a FIFO, a directory,
 * a device or a socket), or open's.
 */
#define RQ_FS_ENOTREG 4095 /* an errno value no system call sets */
int rq_fs_open_regular(const char *path, int follow, struct stat *st);

/*
 * The whole regular file path (at most max bytes, else errno EFBIG) as
 * rq_fs_open_regular opens it, into *out (malloc'ed, NUL-terminated, *len
 * bytes). 1 read, 0 it does not exist (ENOENT or ENOTDIR), -1 with errno.
 */
int rq_fs_read_regular(const char *path, int follow, size_t max, char **out, size_t *len);

/*
 * Map the whole regular file path (1 to max bytes) read-only, opened as
 * rq_fs_open_regular opens it: 0 with *p and *len (munmap them), or -1 with
 * errno (ENOENT: it does not exist; EFBIG: over max; EINVAL: empty).
 */
int rq_fs_map_regular(const char *path, int follow, size_t max, const unsigned char **p,
		      size_t *len);

/* Write all n bytes of p to fd, through short writes and EINTR: 0, or -1
 * with errno set (ENOSPC when a write took nothing). */
int rq_fs_write_all(int fd, const void *p, size_t n);

/* What errno e means for rq_fs_open_regular and rq_fs_read_regular:
 * strerror(e), or "not a regular file ..." or "too large". */
const char *rq_fs_strerror(int e);

#endif
