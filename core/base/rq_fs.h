/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_fs: file-system helpers the core and the programs share.
 *
 * rq_fs_rmtree removes a directory tree the way `rm -rf` does, without
 * following a symbolic link: a link inside the tree is removed, never what
 * it points at. The replay's temporary object directory (rq_odb_tmpdir),
 * the worker's clean-up after a killed job and the tests use it.
 */
#ifndef RQ_FS_H
#define RQ_FS_H

/* Remove path and, for a directory, everything in it. A path that does not
 * exist is fine. 0, or -1 when something could not be removed
 * (the rest is removed all the same). */
int rq_fs_rmtree(const char *path);

#endif
