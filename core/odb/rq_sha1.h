/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sha1: SHA-1 (FIPS 180-4) for the checksums of rq_odb_pack's pack and
 * index (core/odb, see rq_odb.h for the family); the replay driver also
 * uses it for a digest of what its revisions resolved to.
 */
#ifndef RQ_SHA1_H
#define RQ_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct rq_sha1 {
	uint32_t h[5];
	uint64_t len; /* bytes hashed */
	unsigned char buf[64];
	size_t nbuf;
} rq_sha1;

void rq_sha1_init(rq_sha1 *s);
void rq_sha1_update(rq_sha1 *s, const void *data, size_t n);
void rq_sha1_final(rq_sha1 *s, unsigned char out[20]);

/* Start the id of a git object: "<type> <size>\0" hashed (type: "blob",
 * "tree", "commit", "tag"); its content follows with rq_sha1_update. */
void rq_sha1_object_init(rq_sha1 *s, const char *type, size_t size);
/* The id of a git object of that type and content, whole. */
void rq_sha1_object(const char *type, const void *data, size_t len, unsigned char out[20]);

/*
 * Objects read from a repository up to this size are checked against
 * their id whenever they are read (core/odb: a packed object's content, a
 * loose object's header); larger ones when read whole only if loose. A
 * cost measured in docs/objects.md ("What is checked").
 */
#ifndef RQ_SHA1_CHECK_MAX /* a build may measure another (bench/) */
#define RQ_SHA1_CHECK_MAX ((size_t)64 << 10)
#endif

/* The SHA extensions of x86 CPUs are used when the CPU has them; tests
 * check the portable code too by turning this on. */
void rq_sha1_use_portable(int on);

#endif
