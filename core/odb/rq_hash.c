/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_hash: object ids of both formats (see rq_hash.h).
 */
#include "rq_hash.h"

#include "rq_sha256.h"

#include <string.h>

static int sha256_object(git_object_t type, const void *data, size_t len, rq_oid *out)
{
	unsigned char sum[32];
	rq_sha256 s;

	rq_sha256_object_init(&s, git_object_type2string(type), len);
	rq_sha256_update(&s, data, len);
	rq_sha256_final(&s, sum);
	rq_oid_from_raw(out, &rq_oid_sha256, sum);
	return 0;
}

int rq_hash_object(const rq_oid_algo *algo, git_object_t type, const void *data, size_t len,
		   rq_oid *out)
{
	git_oid id;

	if (!git_object_typeisloose(type)) {
		git_error_set_str(GIT_ERROR_INVALID, "invalid object type");
		return -1;
	}
	if (algo->rawsz == rq_oid_sha256.rawsz)
		return sha256_object(type, data, len, out);
	if (git_odb_hash(&id, data, len, type) < 0)
		return -1;
	rq_oid_from_git(out, &id);
	return 0;
}

static int is_sha256(const rq_oid_algo *algo)
{
	return algo->rawsz == rq_oid_sha256.rawsz;
}

void rq_hash_init(rq_hash_ctx *c, const rq_oid_algo *algo)
{
	c->algo = algo;
	if (is_sha256(algo))
		rq_sha256_init(&c->u.sha256);
	else
		rq_sha1_init(&c->u.sha1);
}

void rq_hash_object_init(rq_hash_ctx *c, const rq_oid_algo *algo, const char *type, size_t size)
{
	c->algo = algo;
	if (is_sha256(algo))
		rq_sha256_object_init(&c->u.sha256, type, size);
	else
		rq_sha1_object_init(&c->u.sha1, type, size);
}

void rq_hash_update(rq_hash_ctx *c, const void *data, size_t n)
{
	if (is_sha256(c->algo))
		rq_sha256_update(&c->u.sha256, data, n);
	else
		rq_sha1_update(&c->u.sha1, data, n);
}

void rq_hash_final(rq_hash_ctx *c, unsigned char out[RQ_OID_MAX_RAWSZ])
{
	if (is_sha256(c->algo))
		rq_sha256_final(&c->u.sha256, out);
	else
		rq_sha1_final(&c->u.sha1, out);
}

int rq_hash_object_is(const rq_oid_algo *algo, const char *type, const void *data, size_t len,
		      const unsigned char *id)
{
	unsigned char sum[RQ_OID_MAX_RAWSZ];
	rq_hash_ctx c;

	if (!is_sha256(algo)) {
		rq_sha1_object(type, data, len, sum);
		return !memcmp(sum, id, 20);
	}
	rq_hash_object_init(&c, algo, type, len);
	rq_hash_update(&c, data, len);
	rq_hash_final(&c, sum);
	return !memcmp(sum, id, algo->rawsz);
}
