/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ortodb: the tree merge's object reads and writes over the 20-byte
 * APIs (see rq_ortodb.h).
 */
#include "rq_ortodb.h"

#include "rq_hash.h"
#include "rq_odb_mem.h"

#include <stdio.h>

/* libgit2's odb takes SHA-1 ids only: 0, or -1 with libgit2's error set. */
static int git_width(const rq_oid_algo *algo)
{
	char msg[80];

	if (algo->rawsz == GIT_OID_RAWSZ)
		return 0;
	snprintf(msg, sizeof(msg), "libgit2's object database has no %s", algo->name);
	git_error_set_str(GIT_ERROR_ODB, msg);
	return -1;
}

/* id as libgit2's: 0, or -1 with libgit2's error set (not SHA-1). */
static int to_git(git_oid *out, const rq_oid *id, const rq_oid_algo *algo)
{
	if (git_width(algo) < 0)
		return -1;
	return rq_oid_to_git(out, id, algo);
}

int rq_ortodb_write(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
		    size_t len, git_object_t type)
{
	if (git_width(algo) < 0)
		return -1;
	return rq_odb_mem_write(out, odb, data, len, type);
}

int rq_ortodb_write_like(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
			 size_t len, git_object_t type, const rq_oid *like,
			 const rq_oid *const *alts, size_t nalt)
{
	if (git_width(algo) < 0)
		return -1;
	return rq_odb_mem_write_like(out, odb, data, len, type, like, alts, nalt);
}

int rq_ortodb_hash(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data, size_t len,
		   git_object_t type)
{
	if (algo->rawsz != GIT_OID_RAWSZ) /* no libgit2 needed: nothing to check */
		return rq_hash_object(algo, type, data, len, out);
	return rq_odb_mem_hash(out, odb, data, len, type);
}

int rq_ortodb_check(const rq_oid *id, const rq_oid_algo *algo, const void *data, size_t len,
		    git_object_t type)
{
	if (algo->rawsz != GIT_OID_RAWSZ) /* SHA-256: hashed once, fully */
		return 0;
	return rq_odb_mem_check(id, data, len, type);
}

int rq_ortodb_write_hashed(const rq_oid *id, git_odb *odb, const rq_oid_algo *algo,
			   const void *data, size_t len, git_object_t type)
{
	if (git_width(algo) < 0)
		return -1;
	return rq_odb_mem_write_hashed(id, odb, data, len, type);
}

int rq_ortodb_read(git_odb_object **out, git_odb *odb, const rq_oid_algo *algo, const rq_oid *id)
{
	git_oid g;

	if (to_git(&g, id, algo) < 0)
		return -1;
	return git_odb_read(out, odb, &g);
}

int rq_ortodb_read_header(size_t *len, git_object_t *type, git_odb *odb, const rq_oid_algo *algo,
			  const rq_oid *id)
{
	git_oid g;

	if (to_git(&g, id, algo) < 0)
		return -1;
	return git_odb_read_header(len, type, odb, &g);
}

int rq_ortodb_blob(git_blob **out, git_repository *repo, const rq_oid_algo *algo, const rq_oid *id)
{
	git_oid g;

	if (to_git(&g, id, algo) < 0)
		return -1;
	return git_blob_lookup(out, repo, &g);
}
