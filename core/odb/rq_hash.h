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
#include "rq_sha1.h"
#include "rq_sha256.h"

/*
 * The id of the object of that type (blob, tree, commit or tag) and
 * content in that format: 0, or -1 with libgit2's error set (a SHA-1
 * collision; a type that is none of the four).
 */
int rq_hash_object(const rq_oid_algo *algo, git_object_t type, const void *data, size_t len,
		   rq_oid *out);

/*
 * A hash of either format computed as the bytes come: the checksums of a
 * pack and its index (each ends with the hash of what comes before it),
 * a loose object's id as it is inflated. SHA-1 is rq_sha1 (plain, no
 * collision check: what core/odb checks ids with as it reads). The format
 * is looked at once per update, never per byte.
 */
typedef struct rq_hash_ctx {
	const rq_oid_algo *algo;
	union {
		rq_sha1 sha1;
		rq_sha256 sha256;
	} u;
} rq_hash_ctx;

void rq_hash_init(rq_hash_ctx *c, const rq_oid_algo *algo);
/* Start an object's id: "<type> <size>\0" hashed (see rq_sha1_object_init). */
void rq_hash_object_init(rq_hash_ctx *c, const rq_oid_algo *algo, const char *type, size_t size);
void rq_hash_update(rq_hash_ctx *c, const void *data, size_t n);
/* The digest: algo->rawsz bytes into out. */
void rq_hash_final(rq_hash_ctx *c, unsigned char out[RQ_OID_MAX_RAWSZ]);

/* 1 when the object of that type name and content has id in that format
 * (plain SHA-1, as rq_sha1_object; SHA-256), else 0. */
int rq_hash_object_is(const rq_oid_algo *algo, const char *type, const void *data, size_t len,
		      const unsigned char *id);

#endif
