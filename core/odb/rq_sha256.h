/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sha256: SHA-256 (FIPS 180-4), the hash of SHA-256 repositories'
 * object ids (core/odb, see rq_hash.h). Nettle's, linked statically
 * (Debian's nettle-dev): it runs on the CPU's SHA extensions where there
 * are, adds nothing measurable to a command's start, and its licence
 * (GPLv2+ or LGPLv3+) fits replayq's GPL-2.0; see docs/objects.md,
 * "Object formats". This is the only file that includes nettle.
 */
#ifndef RQ_SHA256_H
#define RQ_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* room for nettle's context (checked where it is used) */
typedef struct rq_sha256 {
	union {
		unsigned char bytes[128];
		uint64_t align;
	} ctx;
} rq_sha256;

void rq_sha256_init(rq_sha256 *s);
void rq_sha256_update(rq_sha256 *s, const void *data, size_t n);
void rq_sha256_final(rq_sha256 *s, unsigned char out[32]);

/* Start the id of a git object: "<type> <size>\0" hashed (type: "blob",
 * "tree", "commit", "tag"); its content follows with rq_sha256_update. */
void rq_sha256_object_init(rq_sha256 *s, const char *type, size_t size);

#endif
