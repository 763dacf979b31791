/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ortodb: the tree merge's object reads and writes over the 20-byte
 * APIs (see rq_ortodb.h).
 */
#include "rq_ortodb.h"

#include "rq_hash.h"
#include "rq_odb_mem.h"

int rq_ortodb_write(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
		    size_t len, git_object_t type)
{
	(void)algo; /* (the store's own) */
	return rq_odb_mem_write(out, odb, data, len, type);
}

int rq_ortodb_write_like(rq_oid *out, git_odb *odb, const rq_oid_algo *algo, const void *data,
			 size_t len, git_object_t type, const rq_oid *like,
			 const rq_oid *const *alts, size_t nalt)
{
	(void)algo; /* (the store's own) */
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
	(void)algo; /* (the store's own) */
	return rq_odb_mem_write_hashed(id, odb, data, len, type);
}

int rq_ortodb_read(rq_odb_read_obj *out, rq_odb_read *rd, const rq_oid *id)
{
	return rq_odb_read_object(rd, id, out);
}

int rq_ortodb_read_header(size_t *len, git_object_t *type, rq_odb_read *rd, const rq_oid *id)
{
	return rq_odb_read_header(rd, id, len, type);
}

int rq_ortodb_blob(rq_odb_read_obj *out, rq_odb_read *rd, const rq_oid *id)
{
	int rc = rq_odb_read_object(rd, id, out);

	if (rc < 0 || out->type == GIT_OBJECT_BLOB)
		return rc;
	rq_odb_read_obj_free(out);
	git_error_set_str(GIT_ERROR_INVALID,
			  "the requested type does not match the type in the ODB");
	return GIT_ENOTFOUND;
}

rq_tree_reader rq_ortodb_tree_reader(rq_odb_read **rd)
{
	return rq_odb_read_trees(rd);
}
