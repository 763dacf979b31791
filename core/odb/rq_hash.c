/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_hash: object ids of both formats (see rq_hash.h).
 */
#include "rq_hash.h"

#include "rq_sha256.h"

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
