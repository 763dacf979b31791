/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_objdir: where the objects a replay writes go until its one packfile.
 *
 * rq_objdir_open() creates <objects>/replayq-tmp-<pid>@<host>-XXXXXX and gives
 * the repository handle an object database that reads the repository's
 * packs, loose objects and alternates, and writes only to an in-memory
 * store of the replay (rq_memodb): no file per object. Forked children of a
 * parallel replay hand their new objects to the parent as part files in
 * the temporary directory (rq_objdir_save_part / rq_objdir_load_part).
 * rq_objdir_finish() packs every new object into one packfile with its
 * index, written in the temporary directory, moves the pack and then the
 * index into objects/pack, removes the temporary directory and gives the
 * repository back its own object database. rq_objdir_free() without a
 * finish (conflict, error) removes the directory and everything in it.
 *
 * The directory is named replayq-tmp-<pid>@<host>-XXXXXX. rq_objdir_clean_stale()
 * removes those left by killed processes: made on this machine by a process
 * that is gone (at once), or made elsewhere and not modified for max_age
 * seconds (shared storage; a running replay refreshes its directory, see
 * rq_objdir_keepalive). A directory whose owner runs is never removed.
 */
#ifndef RQ_OBJDIR_H
#define RQ_OBJDIR_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb.h"

typedef struct rq_objdir rq_objdir;

typedef struct rq_objdir_stats {
	size_t objects;	     /* objects written by the replay */
	uint64_t pack_bytes; /* size of the packfile */
	char pack_name[96];  /* "pack-<hex>" or "" when nothing was written */
} rq_objdir_stats;

int rq_objdir_open(rq_objdir **out, git_repository *repo, const rq_odb_opts *objects,
		   rq_error *err);
int rq_objdir_finish(rq_objdir *od, rq_objdir_stats *stats, rq_error *err);
void rq_objdir_free(rq_objdir *od);
/* The number of new objects held so far (a mark for rq_objdir_save_part). */
size_t rq_objdir_mark(const rq_objdir *od);
/* Compress the objects added since `mark` (pack entries; trees as deltas
 * against earlier trees of the same range), ahead of the pack. */
int rq_objdir_encode(rq_objdir *od, size_t mark, rq_error *err);
/* In a forked child: write the objects added since `mark` to the part file
 * number idx in the temporary directory (complete, or not there at all). */
int rq_objdir_save_part(rq_objdir *od, size_t mark, unsigned idx, rq_error *err);
/* In the parent: take the objects of part file idx (then removed). */
int rq_objdir_load_part(rq_objdir *od, unsigned idx, rq_error *err);

/*
 * Refresh the directory's modification time when `every` seconds or more
 * have passed since it was made or last refreshed: a replay that runs for
 * longer than another machine's max_age (shared storage) keeps its
 * directory. Cheap to call often (a clock read).
 */
void rq_objdir_keepalive(rq_objdir *od, unsigned every);
/* How often a replay refreshes it (clean-ups elsewhere wait 300 s). */
#define RQ_OBJDIR_KEEPALIVE_SECONDS 60

/* The temporary directory's path (for tests and logs). */
const char *rq_objdir_path(const rq_objdir *od);

/* Returns the number of directories removed, or -1. */
int rq_objdir_clean_stale(git_repository *repo, unsigned max_age, rq_error *err);

/* The same for an objects directory given by path (no repository needed). */
int rq_objdir_clean_stale_dir(const char *objects_dir, unsigned max_age);

/* Remove a directory tree (no symlinks followed). 0 or -1 (errno set). */
int rq_objdir_rmtree(const char *path);

#endif
