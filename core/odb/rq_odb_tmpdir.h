/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_tmpdir: where the objects a replay writes go until its one packfile.
 *
 * rq_odb_tmpdir_open() creates <objects>/replayq-tmp-<pid>@<host>-XXXXXX and gives
 * the repository handle an object database that reads the repository's
 * packs, loose objects and alternates, and writes only to an in-memory
 * store of the replay (rq_odb_mem): no file per object. Forked children of a
 * parallel replay hand their new objects to the parent as part files in
 * the temporary directory (rq_odb_tmpdir_save_part / rq_odb_tmpdir_load_part).
 * rq_odb_tmpdir_finish() packs every new object into one packfile with its
 * index, written in the temporary directory, moves the pack and then the
 * index into objects/pack, removes the temporary directory and gives the
 * repository back its own object database. rq_odb_tmpdir_free() without a
 * finish (conflict, error) removes the directory and everything in it.
 *
 * The directory is named replayq-tmp-<pid>@<host>-XXXXXX. rq_odb_tmpdir_clean_stale()
 * removes those left by killed processes: made on this machine by a process
 * that is gone (at once), or made elsewhere and not modified for max_age
 * seconds (shared storage; a running replay refreshes its directory, see
 * rq_odb_tmpdir_keepalive). A directory whose owner runs is never removed.
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
} rq_odb_tmpdir_stats;

int rq_odb_tmpdir_open(rq_odb_tmpdir **out, git_repository *repo, const rq_odb_opts *objects,
		       rq_error *err);
int rq_odb_tmpdir_finish(rq_odb_tmpdir *od, rq_odb_tmpdir_stats *stats, rq_error *err);
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

/* Returns the number of directories removed, or -1. */
int rq_odb_tmpdir_clean_stale(git_repository *repo, unsigned max_age, rq_error *err);

/* The same for an objects directory given by path (no repository needed). */
int rq_odb_tmpdir_clean_stale_dir(const char *objects_dir, unsigned max_age);

#endif
