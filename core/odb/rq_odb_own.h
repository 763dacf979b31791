/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_own: what replayq keeps in a repository's objects directory of
 * its own (core/odb, see rq_odb.h for the family).
 *
 * objects/replayq/ holds files git does not read: the table of the small
 * packs' objects (rq_odb_packtab), a mark for every pack replayq wrote
 * (pack-<hex>.own: only those are ever consolidated and removed by
 * rq_odb_repack), and the consolidation's lock. Every file there is opened
 * through the directory's descriptor, without following a symbolic link,
 * and a new one is created exclusively (a repository can hold anything).
 *
 * A pack being written is kept (pack-<hex>.keep in objects/pack, git's
 * rule: `git repack` and `git gc` leave a kept pack and its objects alone)
 * from before it is moved into place until the refs it was written for
 * have moved (or printed): a `git repack -ad` or `git gc --prune=now`
 * running then would otherwise drop the objects no ref reaches yet. The
 * .keep file names its owner ("replayq <pid> on <host>"), so that a
 * killed process's keep is removed by the next clean-up.
 */
#ifndef RQ_ODB_OWN_H
#define RQ_ODB_OWN_H

#include <stddef.h>

#define RQ_ODB_OWN_DIR	"replayq"
#define RQ_ODB_OWN_MARK ".own"

/* The descriptor of objects/replayq (made when create is set and it is
 * not there), or -1. */
int rq_odb_own_dir(const char *objects, int create);

/* Mark pack name ("pack-<hex>") as replayq's. 0 or -1. */
int rq_odb_own_mark(const char *objects, const char *name);

/* Keep pack name in objects/pack (created before the pack is moved in):
 * 0, 1 when a .keep was there already (not ours: left alone), -1. */
int rq_odb_own_keep(const char *objects, const char *name);
/* Remove the .keep rq_odb_own_keep made (only one this process wrote). */
void rq_odb_own_unkeep(const char *objects, const char *name);

/* 1 when keep_file (in the pack directory fd) is a .keep of replayq's
 * whose owner is gone: on this machine, a process that is not running;
 * elsewhere, not modified for max_age seconds. */
int rq_odb_own_keep_stale_at(int fd, const char *keep_file, unsigned max_age);

/* The prefix of every temporary name replayq makes in a repository
 * (objects/replayq-tmp-<pid>@<host>-XXXXXX, and in objects/pack
 * tmp_replayq-tmp-<pid>@<host>-XXXXXX-pack_XXXXXX and -idx_), and how long
 * another machine's must be left alone (shared storage: a running replay
 * refreshes its directory every minute). */
#define RQ_ODB_OWN_TMP		 "replayq-tmp-"
#define RQ_ODB_OWN_STALE_SECONDS 300

/* Is a temporary name stale (owner: what follows RQ_ODB_OWN_TMP)? Made on
 * this machine by a process that is gone: yes, whatever its age. Made
 * elsewhere (or named the old way, without a host): when older than
 * max_age and its owner is not alive here. */
int rq_odb_own_tmp_stale(const char *owner, long mtime, unsigned max_age);

/* In pack_dir (an open descriptor), remove what killed replays left: the
 * stale temporary files named in tmps (n names), the stale .keep files of
 * ours in keeps (m names) and a pack such a keep held without its index
 * (never seen by a reader). The number removed. */
size_t rq_odb_own_sweep(int pack_dir, char **tmps, size_t n, char **keeps, size_t m);

/* This machine's name, made safe for a file name (at most 64 bytes). */
void rq_odb_own_host(char *out, unsigned long size);

/* How many packs replayq marked (a listing of objects/replayq). */
size_t rq_odb_own_count(const char *objects);

/* The consolidation's lock, objects/replayq/consolidate.lock (own_fd: that
 * directory), taken waiting up to wait_ms for its holder (a consolidation
 * takes milliseconds): 1 taken, 0 still held, -1 failed. One whose owner
 * is gone (a process not running here, or older than
 * RQ_ODB_OWN_STALE_SECONDS) is taken over. */
#define RQ_ODB_OWN_LOCK "consolidate.lock"
int rq_odb_own_lock(int own_fd, unsigned wait_ms);
/* Let it go. */
void rq_odb_own_unlock(int own_fd);

#endif
