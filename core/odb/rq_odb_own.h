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
 * .keep file says whose it is ("replayq <pid>@<host>", rq_owner_id, for
 * people), and its maker holds an flock on it until it removes it, as an
 * owner marker (core/base/rq_owner): a .keep of replayq's whose flock can
 * be taken is a killed process's, removed by the next clean-up, whatever
 * PID namespace or host made it. objects/replayq/consolidate.lock is held
 * the same way.
 *
 * Temporary names (objects/replayq-tmp-<pid>@<host>.<token>, in
 * objects/pack tmp_replayq-tmp-<pid>@<host>.<token>-pack_XXXXXX and
 * -idx_) stand for an owner marker
 * objects/replayq-tmp-<pid>@<host>.<token>.owner that their maker holds
 * while they may be there (rq_odb_own_tmp_begin); one staleness rule
 * (rq_odb_own_tmp_stale) serves every clean-up: the janitor's, a replay's
 * start, the listing of objects/pack, a consolidation.
 */
#ifndef RQ_ODB_OWN_H
#define RQ_ODB_OWN_H

#include <stddef.h>

#include "rq_error.h"
#include "rq_owner.h"

#define RQ_ODB_OWN_DIR	"replayq"
#define RQ_ODB_OWN_MARK ".own"

/* The descriptor of objects/replayq (made when create is set and it is
 * not there), or -1. */
int rq_odb_own_dir(const char *objects, int create);

/* Mark pack name ("pack-<hex>") as replayq's. 0 or -1. */
int rq_odb_own_mark(const char *objects, const char *name);

/* Keep pack name in objects/pack (created before the pack is moved in),
 * its flock held by this process until rq_odb_own_unkeep: 0, 1 when a
 * .keep was there already (not ours: left alone), -1. */
int rq_odb_own_keep(const char *objects, const char *name);
/* Remove the .keep rq_odb_own_keep made (only one this process holds). */
void rq_odb_own_unkeep(const char *objects, const char *name);

/* Make file in dir (O_EXCL, no link followed) as a held file: flocked,
 * then "replayq <pid>@<host>" written. The descriptor (close it after
 * removing the file), or -1 with errno (EEXIST: there already). */
int rq_odb_own_hold_at(int dir, const char *file);

/* Is file (in dir) a held file of replayq's whose owner is gone (its
 * flock free)? 1: yes, *fd the file, open and locked: remove it, then
 * close *fd. 0: its owner lives. -1: not replayq's (no such file, a link,
 * another tool's content or none yet). */
int rq_odb_own_held_gone(int dir, const char *file, int *fd);

/* 1 when keep_file (in the pack directory fd) is a .keep of replayq's
 * whose owner is gone; it is then removed. */
int rq_odb_own_keep_drop_stale(int fd, const char *keep_file);

/* The prefix of every temporary name replayq makes in a repository, and
 * how long another machine's may be left alone when it has no marker
 * (made by a replayq before markers; a running replay of those refreshed
 * its directory every minute). */
#define RQ_ODB_OWN_TMP		 "replayq-tmp-"
#define RQ_ODB_OWN_STALE_SECONDS 300

/* Make and hold an owner marker in objects (its descriptor in o->dir, its
 * name less ".owner" in base: the name of what it stands for). 0, or -1
 * with err set. */
int rq_odb_own_tmp_begin(rq_owner *o, const char *objects, char *base, size_t size, rq_error *err);
/* Remove the marker and close its directory (what it stood for is gone
 * or moved in). Nothing when there is none. */
void rq_odb_own_tmp_end(rq_owner *o);

/* Is name (a temporary directory in objects, or with pack a temporary
 * file of objects/pack less its "tmp_") stale? With its owner marker: when the
 * marker's flock can be taken (its owner is gone). Without one (named
 * before markers): made on this machine by a process that is gone, at
 * once; made elsewhere, when older than max_age and its pid is not alive
 * here. */
int rq_odb_own_tmp_stale(int objects, const char *name, int pack, long mtime, unsigned max_age);

/* Every owner marker of objects whose owner is gone, with what it stood
 * for (its directory, its temporary files in objects/pack). The number of
 * those removed. */
int rq_odb_own_tmp_clean_gone(int objects);

/* In pack_dir (an open descriptor; objects, the objects directory's, for
 * the markers), remove what killed replays left: the stale temporary
 * files named in tmps (n names), the stale .keep files of ours in keeps
 * (m names) and a pack such a keep held without its index (never seen by
 * a reader). The number removed. */
size_t rq_odb_own_sweep(int objects, int pack_dir, char **tmps, size_t n, char **keeps, size_t m);

/* What a listing of a pack directory found for rq_odb_own_sweep: the
 * names of temporary files of ours and of .keep files. */
typedef struct rq_odb_own_leftovers {
	char **tmps, **keeps;
	size_t ntmps, nkeeps, tmps_cap, keeps_cap;
} rq_odb_own_leftovers;

/* Note a directory entry's name when it is a leftover of either kind (an
 * out-of-memory only loses it from this sweep). */
void rq_odb_own_leftover(rq_odb_own_leftovers *l, const char *name);

/* rq_odb_own_sweep of what l noted in pack_dir (objects_dir: the objects
 * directory's path, where the markers are; pack_dir -1: nothing swept),
 * then l emptied. */
void rq_odb_own_leftovers_sweep(rq_odb_own_leftovers *l, const char *objects_dir, int pack_dir);

/* How many packs replayq marked (a listing of objects/replayq). */
size_t rq_odb_own_count(const char *objects);

/* The consolidation's lock, objects/replayq/consolidate.lock (own_fd: that
 * directory), held by its flock while this process consolidates (*lock:
 * its descriptor), taken waiting up to wait_ms for its holder (a
 * consolidation takes milliseconds): 1 taken, 0 still held, -1 failed.
 * One whose owner is gone (its flock free, whatever PID namespace or host
 * made it), or empty and older than RQ_ODB_OWN_STALE_SECONDS, is taken
 * over. */
#define RQ_ODB_OWN_LOCK "consolidate.lock"
int rq_odb_own_lock(int own_fd, unsigned wait_ms, int *lock);
/* Let it go: removed, then its flock released. */
void rq_odb_own_unlock(int own_fd, int lock);

#endif
