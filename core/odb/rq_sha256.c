/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sha256: SHA-256 through nettle (see rq_sha256.h).
 */
#include "rq_sha256.h"

#include <nettle/sha2.h>
#include <stdio.h>

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((rq_sha256 *)0)->ctx.bytes),
	       "rq_sha256 holds nettle's context");

static struct sha256_ctx *ctx_of(rq_sha256 *s)
{
	return (struct sha256_ctx *)(void *)s->ctx.bytes;
}

void rq_sha256_init(rq_sha256 *s)
{
	sha256_init(ctx_of(s));
}

void rq_sha256_update(rq_sha256 *s, const void *data, size_t n)
{
	if (n)
		sha256_update(ctx_of(s), n, data);
}

void rq_sha256_final(rq_sha256 *s, unsigned char out[32])
{
	sha256_digest(ctx_of(s), SHA256_DIGEST_SIZE, out);
}

void rq_sha256_object_init(rq_sha256 *s, const char *type, size_t size)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %zu", type, size);

	rq_sha256_init(s);
	rq_sha256_update(s, head, (size_t)n + 1);
}
