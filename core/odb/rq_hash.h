/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_hash: the id of a git object in either object format (core/odb, see
 * rq_odb.h for the family).
 *
 * SHA-1 is hashed as core/odb hashes a new object's id today when it
 * checks it at once: libgit2's collision-detecting SHA-1 (git_odb_hash,
 * which refuses an object built for a SHA-1 collision, "SHA1 collision
 * attack detected"). SHA-256 with rq_sha256; git has no collision check
 * there either.
 */
#ifndef RQ_HASH_H
#define RQ_HASH_H

#include <git2.h>

#include "rq_oid.h"

/*
 * The id of the object of that type (blob, tree, commit or tag) and
 * content in that format: 0, or -1 with libgit2's error set (a SHA-1
 * collision; a type that is none of the four).
 */
int rq_hash_object(const rq_oid_algo *algo, git_object_t type, const void *data, size_t len,
		   rq_oid *out);

#endif
