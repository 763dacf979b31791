/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_mem: the new objects of a replay, held in memory (core/odb, see
 * rq_odb.h for the family).
 *
 * An object database backend that keeps the objects written to it in
 * memory, in the order they were written. rq_odb_tmpdir puts it above the
 * repository's packs and loose objects, so a replay writes no file per
 * object; rq_odb_mem_write() is how the replay (commits, the merge's trees
 * and blobs) writes one. Each object can be encoded as a pack entry
 * (rq_odb_pack) ahead of the pack, by a thread (rq_odb_compress) or at the
 * end, saved to a part file (rq_odb_part: a forked child hands its objects
 * to the parent that way) and loaded back. The objects themselves are
 * rq_odb_store's, shared by these modules only.
 */
#ifndef RQ_ODB_MEM_H
#define RQ_ODB_MEM_H

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_oid.h"
#include "rq_odb_pack.h"

typedef struct rq_odb_mem rq_odb_mem;

/* A new, empty backend for objects of the format algo (NULL: SHA-1; the
 * database's, rq_odb_algo). Owned by the odb it is added to, else by the
 * caller (free it with its ->free). Returns 0 or -1 (out of memory).
 * libgit2's callbacks (git_odb_read and the like) are refused in SHA-256
 * (rq_odb_read_refused): rq_odb_read reads it there. */
int rq_odb_mem_new_at(git_odb_backend **out, const rq_oid_algo *algo);
/* rq_odb_mem_new_at in SHA-1. */
int rq_odb_mem_new(git_odb_backend **out);

/*
 * Write an object to `odb`. When the odb's first backend is an rq_odb_mem
 * and the object is not in the database, it goes straight into the memory
 * store, its id of the store's format; this skips git_odb_write()'s rescan
 * of the pack directory on every new object. An object the database's
 * packs have freshens its pack, as git does. Any other odb:
 * git_odb_write() (SHA-1).
 */
int rq_odb_mem_write(rq_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type);
/*
 * The same for a new version of a file whose earlier version is the blob
 * `like` (NULL: none): when the store holds that blob, the new one is
 * encoded as a delta against it where that is smaller. When it does not
 * and the new blob is large (16 KiB or more), the first of like and
 * alts[0..nalt) (other versions; NULL entries skipped) that the
 * repository's packs hold whole is taken into the store as they hold it
 * (its entry copied, no compression) and becomes the base: the pack then
 * holds that blob too. Of alts, the first RQ_ODB_MEM_ALTS_MAX are tried.
 */
#define RQ_ODB_MEM_ALTS_MAX 8
int rq_odb_mem_write_like(rq_oid *out, git_odb *odb, const void *data, size_t len,
			  git_object_t type, const rq_oid *like, const rq_oid *const *alts,
			  size_t nalt);

/*
 * The id rq_odb_mem_write would give the object, in the store's format
 * (no store: SHA-1): in SHA-1 the plain SHA-1 while a compressor runs
 * ahead (returns 1: libgit2's collision detection is still to run, which
 * rq_odb_mem_write_hashed does for a new object), else libgit2's
 * collision-detecting one (returns 0); in SHA-256 the id (0), which has no
 * collision check (as in git). -1: libgit2's error.
 */
int rq_odb_mem_hash(rq_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type);
/* libgit2's collision-detecting SHA-1 of the object must be id (SHA-1
 * only): 0, or -1 with libgit2's error ("SHA1 collision attack detected"). */
int rq_odb_mem_check(const rq_oid *id, const void *data, size_t len, git_object_t type);
/* rq_odb_mem_write of an object whose id rq_odb_mem_hash gave. */
int rq_odb_mem_write_hashed(const rq_oid *id, git_odb *odb, const void *data, size_t len,
			    git_object_t type);

/* The number of objects held; objects are numbered 0.. in write order. */
size_t rq_odb_mem_count(git_odb_backend *b);

/* The objects of b with its compressor joined (rq_odb_compress_finish,
 * what it failed with in *failed): what rq_odb_part reads and adds to. */
struct rq_odb_store *rq_odb_mem_settle(git_odb_backend *b, int *failed);

/*
 * Compress ahead: a thread encodes the new objects as they are written
 * (with enc, which the caller does not use until rq_odb_mem_encode), on the
 * second core while the replay goes on, starting once 256 KiB of new
 * content waits. New objects then get the plain SHA-1 as their id (the
 * CPU's SHA instructions) and the thread runs libgit2's collision
 * detection on them; an object the database already has is checked at
 * once. rq_odb_mem_encode, _check_deltas, rq_odb_part_save and _load and
 * the backend's free join the thread first (it is never running across a fork: the
 * replay's workers fork before any object is written, and a process forked
 * while it ran would leave it alone and encode everything itself).
 */
void rq_odb_mem_compress_ahead(git_odb_backend *b, rq_odb_pack_encoder *enc);

/* The thread sleeps as soon as it has nothing to do instead of polling for
 * the next object first (a parallel replay: its processes share the CPUs).
 * Before the thread starts. */
void rq_odb_mem_no_poll(git_odb_backend *b);

/* Encode objects [since, count) as pack entries (those not encoded yet):
 * whole, or trees as deltas against earlier trees of the same range.
 * 0, -1 (out of memory) or -2 (libgit2's collision detection refused a new
 * object: "SHA1 collision attack detected", in libgit2's last error). */
int rq_odb_mem_encode(git_odb_backend *b, rq_odb_pack_encoder *enc, size_t since);

/* Before packing objects gathered from several processes: re-encode whole
 * every delta whose base is missing, comes later or makes the chain deeper
 * than the limit. 0, -1 (out of memory) or -2 (as rq_odb_mem_encode). */
int rq_odb_mem_check_deltas(git_odb_backend *b, rq_odb_pack_encoder *enc);

/* Object i as a pack entry (pointers into the store). 0; 1 when it does not
 * go into the pack (a blob borrowed from the repository as a delta base
 * that no delta uses, after rq_odb_mem_check_deltas); -1 when i is out of
 * range or not encoded. */
int rq_odb_mem_entry(git_odb_backend *b, size_t i, rq_odb_pack_entry *out);

#endif
