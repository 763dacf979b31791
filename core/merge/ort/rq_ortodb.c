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
	git_oid g;
	int rc;

	if (git_width(algo) < 0)
		return -1;
	if ((rc = rq_odb_mem_write(&g, odb, data, len, type)) >= 0)
		rq_oid_from_git(out, &g);
	return rc;
}

int rq_ortodb_write_like(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
			 size_t len, git_object_t type, const rq_oid *like,
			 const rq_oid *const *alts, size_t nalt)
{
	git_oid g, glike, galt[2];
	const git_oid *palt[2] = {NULL, NULL};
	int rc;

	if (git_width(algo) < 0)
		return -1;
	if (nalt > 2) {
		git_error_set_str(GIT_ERROR_INVALID, "too many earlier versions");
		return -1;
	}
	if (like)
		to_git(&glike, like, algo);
	for (size_t i = 0; i < nalt; i++)
		if (alts[i] && to_git(&galt[i], alts[i], algo) == 0)
			palt[i] = &galt[i];
	rc = rq_odb_mem_write_like(&g, odb, data, len, type, like ? &glike : NULL, palt, nalt);
	if (rc >= 0)
		rq_oid_from_git(out, &g);
	return rc;
}

int rq_ortodb_hash(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data, size_t len,
		   git_object_t type)
{
	git_oid g;
	int rc;

	if (algo->rawsz != GIT_OID_RAWSZ) /* no libgit2 needed: nothing to check */
		return rq_hash_object(algo, type, data, len, out);
	if ((rc = rq_odb_mem_hash(&g, odb, data, len, type)) >= 0)
		rq_oid_from_git(out, &g);
	return rc;
}

int rq_ortodb_check(const rq_oid *id, const rq_oid_algo *algo, const void *data, size_t len,
		    git_object_t type)
{
	git_oid g;

	if (algo->rawsz != GIT_OID_RAWSZ) /* SHA-256: hashed once, fully */
		return 0;
	if (to_git(&g, id, algo) < 0)
		return -1;
	return rq_odb_mem_check(&g, data, len, type);
}

int rq_ortodb_write_hashed(const rq_oid *id, git_odb *odb, const rq_oid_algo *algo,
			   const void *data, size_t len, git_object_t type)
{
	git_oid g;

	if (to_git(&g, id, algo) < 0)
		return -1;
	return rq_odb_mem_write_hashed(&g, odb, data, len, type);
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
