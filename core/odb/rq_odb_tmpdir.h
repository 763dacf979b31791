/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_tmpdir: a replay's temporary object directory, where the objects
 * it writes go until its one pack (core/odb, see rq_odb.h for the family).
 *
 * rq_odb_tmpdir_open() makes the owner marker
 * <objects>/replayq-tmp-<pid>@<host>.<token>.owner (core/base/rq_owner:
 * flocked for as long as the process and the children it forks live),
 * names <objects>/replayq-tmp-<pid>@<host>.<token> after it, and gives
 * the repository handle an object database (rq_odb) that reads
 * the repository's packs, loose objects and alternates, and writes only to
 * the replay's memory store (rq_odb_mem): no file per object. The
 * directory itself is only made when a parallel replay needs it
 * (rq_odb_tmpdir_make, before the fork): its forked children hand their
 * new objects to the parent as part files there (rq_odb_tmpdir_save_part /
 * _load_part). rq_odb_tmpdir_finish() writes every new object into one
 * pack with its index (rq_odb_pack), straight into objects/pack under
 * temporary names (tmp_replayq-tmp-<pid>@<host>.<token>-pack_XXXXXX, then
 * -idx_), renames the pack and then the index, removes the directory if
 * it was made and gives the repository back its own object database. The
 * pack is marked as replayq's (rq_odb_own: only such packs are ever
 * consolidated) and, when the options ask, kept until the refs moved.
 * rq_odb_tmpdir_free() without a finish (conflict, error) removes the
 * directory and everything in it.
 *
 * rq_odb_tmpdir_clean_stale() removes what killed processes left: the
 * directory and the temporary pack files of every owner marker whose
 * flock can be taken (its owner is gone), then the marker; what has no
 * marker (made by a replayq before markers) as before: made on this
 * machine by a process that is gone (at once), or made elsewhere and not
 * modified for max_age seconds (shared storage; a running replay refreshes
 * its directory, see rq_odb_tmpdir_keepalive). One rule for all of it,
 * rq_odb_own_tmp_stale, which the listing of objects/pack (rq_odb_packset)
 * and a consolidation (rq_odb_repack) follow too; a .keep of replayq's
 * goes when its flock can be taken (rq_odb_own). What a running process
 * owns is never removed.
 */
#ifndef RQ_ODB_TMPDIR_H
#define RQ_ODB_TMPDIR_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb.h"

typedef struct rq_odb_tmpdir rq_odb_tmpdir;

typedef struct rq_odb_tmpdir_stats {
	size_t objects;	     /* objects written by the replay */
	uint64_t pack_bytes; /* size of the packfile */
	char pack_name[96];  /* "pack-<hex>" or "" when nothing was written */
	int kept;	     /* the pack has a .keep of this process's (opts' keep_pack) */
} rq_odb_tmpdir_stats;

/*
 * Name the directory (not made yet) and give repo the replay's object
 * database: reads as opts says (rq_odb; NULL: no root), writes into memory. repo must outlive
 * the directory. 0, or -1 with err set (nothing left behind).
 */
int rq_odb_tmpdir_open(rq_odb_tmpdir **out, git_repository *repo, const rq_odb_opts *opts,
		       rq_error *err);
/* Make the directory now (a parallel replay, before its fork: the part
 * files go there; its compressors then sleep when idle instead of polling,
 * rq_odb_mem_no_poll). Made once; 0, or -1 with err set. */
int rq_odb_tmpdir_make(rq_odb_tmpdir *od, rq_error *err);
/*
 * The new objects as one pack in objects/pack (none when no object was
 * written), stats filled; then the directory is removed and repo has its
 * own object database back. 0, or -1 with err set (no pack moved in; the
 * directory stays until rq_odb_tmpdir_free).
 */
int rq_odb_tmpdir_finish(rq_odb_tmpdir *od, rq_odb_tmpdir_stats *stats, rq_error *err);
/* Give repo its own object database back and remove the directory, if
 * still there, with everything in it. NULL: nothing. */
void rq_odb_tmpdir_free(rq_odb_tmpdir *od);
/* The number of new objects held so far (a mark for rq_odb_tmpdir_save_part). */
size_t rq_odb_tmpdir_mark(const rq_odb_tmpdir *od);
/* Compress the objects added since `mark` (pack entries; trees as deltas
 * against earlier trees of the same range), ahead of the pack. */
int rq_odb_tmpdir_encode(rq_odb_tmpdir *od, size_t mark, rq_error *err);
/* In a forked child: write the objects added since `mark` to the part file
 * number idx in the temporary directory (complete, or not there at all). */
int rq_odb_tmpdir_save_part(rq_odb_tmpdir *od, size_t mark, unsigned idx, rq_error *err);
/* In the parent: take the objects of part file idx (then removed). */
int rq_odb_tmpdir_load_part(rq_odb_tmpdir *od, unsigned idx, rq_error *err);

/*
 * Refresh the directory's modification time when `every` seconds or more
 * have passed since it was made or last refreshed: a replay that runs for
 * longer than another machine's max_age (shared storage) keeps its
 * directory. Cheap to call often (a clock read).
 */
void rq_odb_tmpdir_keepalive(rq_odb_tmpdir *od, unsigned every);
/* How often a replay refreshes it (clean-ups elsewhere wait 300 s). */
#define RQ_ODB_TMPDIR_KEEPALIVE_SECONDS 60

/* The temporary directory's path (for tests and logs). */
const char *rq_odb_tmpdir_path(const rq_odb_tmpdir *od);

/* What gone owners' markers stand for, and the temporary directories in
 * objects/ (the pack directory's other temporary files and stale .keep
 * files go with the replay's listing of its packs, rq_odb_packset).
 * Returns the number removed, or -1. */
int rq_odb_tmpdir_clean_stale(git_repository *repo, unsigned max_age, rq_error *err);

/* All of it for an objects directory given by path (no repository needed):
 * the directories, the pack directory's temporary files, stale .keep files
 * of replayq's. */
int rq_odb_tmpdir_clean_stale_dir(const char *objects_dir, unsigned max_age);

/* The same for an objects directory open as objects (a descriptor, kept):
 * nothing below it is reached through a symbolic link (objects/pack
 * neither), and what is removed is removed with rq_fs_rmtree_at. */
int rq_odb_tmpdir_clean_stale_at(int objects, unsigned max_age);

/* The refs moved (or will not): the .keep this process made for pack
 * name (a replay's with keep_pack) goes. name "" or NULL: nothing. */
void rq_odb_tmpdir_release(git_repository *repo, const char *name);

#endif
