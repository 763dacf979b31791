/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ortodb: the tree merge's object reads and writes, with replayq's ids
 * (rq_oid) and the repository's object format, over the APIs that still
 * take libgit2's 20-byte git_oid (git_odb_read, git_blob_lookup, and
 * core/odb/rq_odb_mem.h's writers).
 *
 * Issue 42: the one place in core/merge where ids are converted for those
 * calls. For SHA-1 a conversion is a 20-byte copy; for SHA-256 every
 * function fails with libgit2's error set to "libgit2's object database has
 * no sha256" (never a misread id) until core/odb's direct API replaces the
 * calls below (wave 2: only these bodies change).
 *
 * Each returns what the call it wraps returns (0, or < 0 with libgit2's
 * error set); the rq_odb_mem ones return as rq_odb_mem.h says.
 */
#ifndef RQ_ORTODB_H
#define RQ_ORTODB_H

#include <git2.h>
#include <stddef.h>

#include "rq_oid.h"

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

/* git_odb_read, git_odb_read_header, git_blob_lookup */
int rq_ortodb_read(git_odb_object **out, git_odb *odb, const rq_oid_algo *algo, const rq_oid *id);
int rq_ortodb_read_header(size_t *len, git_object_t *type, git_odb *odb, const rq_oid_algo *algo,
			  const rq_oid *id);
int rq_ortodb_blob(git_blob **out, git_repository *repo, const rq_oid_algo *algo, const rq_oid *id);

#endif
