/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rtlock: the lock files of a reftable directory (tables.list.lock, a
 * table's "<name>.lock"), made so that the writer who made one can be told
 * from its content, and what a gone writer left behind.
 *
 * git's lock files name no owner: git makes them empty (O_EXCL) and writes
 * into tables.list.lock the new list it then renames over tables.list. A
 * replayq writer that is given a token (8 hex digits, the random part of
 * its tables' names) makes its lock with that token in it from the first
 * instant: the content "replayq <token>\n" is written to a file of its own
 * ("<lock>-<token>.temp"), which is then hard-linked to the lock's name (a
 * link, like O_EXCL, fails when the name exists) and removed. So a lock
 * that holds that line, or a list naming a table with the token that
 * tables.list does not name (killed after writing the new list, before the
 * rename that publishes it), is that writer's; an empty lock, or any other
 * content, is someone else's (git's, another writer's) and is never judged
 * to be ours. No clock and no window of time are involved.
 *
 * On a file system without hard links the lock is made with O_EXCL and
 * then filled: a writer killed between the two leaves an empty lock that
 * stays (as git's own would).
 */
#ifndef RQ_RTLOCK_H
#define RQ_RTLOCK_H

/*
 * Make the lock file path (absent: EEXIST otherwise) holding the line of
 * token: its descriptor (read-write, at the end of that line), or -1 with
 * errno set.
 */
int rq_rtlock_create(const char *path, const char *token);

/* 1 when the lock file leaf of the reftable directory dir (reached without
 * following a link) is the one a writer with token made: it holds token's
 * line, or a list naming a table with token that tables.list does not. */
int rq_rtlock_owned_at(int dir, const char *leaf, const char *token);

/* rq_rtlock_owned_at for a path. */
int rq_rtlock_owned(const char *path, const char *token);

/* Remove what a gone writer with token left in the reftable directory dir:
 * its tables that tables.list does not name (written, never published),
 * their temporary files, and a lock's temporary file. The number removed. */
int rq_rtlock_drop_unpublished_at(int dir, const char *token);

#endif
