/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ortodb: the tree merge's object reads and writes, with replayq's ids
 * (rq_oid) and the repository's object format: reads through the
 * merger's core/odb/rq_odb_read.h reader (either width, no libgit2
 * object API), writes through core/odb/rq_odb_mem.h.
 *
 * Both take either width: the memory store hashes at the database's
 * format (SHA-1 with libgit2's collision detection, SHA-256 with
 * rq_hash_object); a database without replayq's store is written through
 * libgit2, which refuses a SHA-256 one by name (rq_odb_read_refused).
 *
 * Each returns what the call it wraps returns (0, or < 0 with libgit2's
 * error set); the rq_odb_mem ones return as rq_odb_mem.h says.
 */
#ifndef RQ_ORTODB_H
#define RQ_ORTODB_H

#include <git2.h>
#include <stddef.h>

#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_tree.h"

/* rq_odb_mem_write */
int rq_ortodb_write(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
		    size_t len, git_object_t type);
/* rq_odb_mem_write_like, like and alts[0..nalt) of the blob's earlier
 * versions (NULL entries skipped). */
int rq_ortodb_write_like(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
			 size_t len, git_object_t type, const rq_oid *like,
			 const rq_oid *const *alts, size_t nalt);
/* rq_odb_mem_hash (1: a plain SHA-1, to be checked), rq_odb_mem_check and
 * rq_odb_mem_write_hashed. Another format: hashed with rq_hash_object (0),
 * nothing to check (0). */
int rq_ortodb_hash(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data, size_t len,
		   git_object_t type);
int rq_ortodb_check(const rq_oid *id, const rq_oid_algo *algo, const void *data, size_t len,
		    git_object_t type);
int rq_ortodb_write_hashed(const rq_oid *id, git_odb *odb, const rq_oid_algo *algo,
			   const void *data, size_t len, git_object_t type);

/*
 * The reads, through the merger's reader over the same database
 * (core/odb/rq_odb_read.h: by rq_oid, at either width, libgit2's errors),
 * made once per merger: *rd is the merger's current reader (a pointer
 * whose address stays, so that the rq_tree_reader below follows it).
 */
/* rq_odb_read_object, rq_odb_read_header */
int rq_ortodb_read(rq_odb_read_obj *out, rq_odb_read *rd, const rq_oid *id);
int rq_ortodb_read_header(size_t *len, git_object_t *type, rq_odb_read *rd, const rq_oid *id);
/* A blob: as rq_ortodb_read, and libgit2's git_blob_lookup error ("the
 * requested type does not match the type in the ODB", GIT_ENOTFOUND) for
 * another type. */
int rq_ortodb_blob(rq_odb_read_obj *out, rq_odb_read *rd, const rq_oid *id);
/* The rq_tree_reader over *rd (rq_tree_open_with): rd must outlive it. */
rq_tree_reader rq_ortodb_tree_reader(rq_odb_read **rd);

#endif
