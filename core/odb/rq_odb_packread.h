/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packread: a reader of the objects of one pack directory, in front
 * of libgit2's pack backend (core/odb, see rq_odb.h for the family).
 *
 * A content-heavy replay reads blobs of 50-200 KB through delta chains up
 * to 50 deep (a repository packed by `git gc --aggressive`). libgit2's
 * reader inflates with zlib and keeps every delta base it meets, up to
 * 16 MiB a pack, which was most of such a replay's memory. This reader maps
 * each pack and its index, finds an entry by the index's fan-out and a
 * binary search, follows OFS_DELTA and REF_DELTA chains inside the pack,
 * inflates with libdeflate (about twice zlib's speed) into buffers of the
 * exact size, and keeps the few most recent delta bases in a cache of
 * 4 MiB.
 *
 * Which pack holds an object, and the mapped files, are rq_odb_packset's
 * (nothing is done per pack at open; git's multi-pack-index and replayq's
 * table of small packs answer for many packs at once). Every read is
 * bounded by the mapped files.
 */
#ifndef RQ_ODB_PACKREAD_H
#define RQ_ODB_PACKREAD_H

#include <git2.h>
#include <stddef.h>

#include "rq_oid.h"

typedef struct rq_odb_packread rq_odb_packread;

/* A reader of the pack-*.idx files of pack_dir with their packs, each
 * mapped when first needed, in the object format algo (NULL: SHA-1: ids,
 * REF_DELTA bases and checksums of its width, contents checked with its
 * hash); messages name the directory as shown says (NULL: pack_dir);
 * flags: rq_odb_packset's. NULL: out of memory. */
rq_odb_packread *rq_odb_packread_open_set(const char *pack_dir, const char *shown,
					  const rq_oid_algo *algo, unsigned flags);
/* The same, SHA-1, with no flags. */
rq_odb_packread *rq_odb_packread_open(const char *pack_dir);
const rq_oid_algo *rq_odb_packread_algo(const rq_odb_packread *pr);
/* One more owner (a second database over the same directory: each mapping
 * of a 48 MB index would bring its pages in again). */
rq_odb_packread *rq_odb_packread_ref(rq_odb_packread *pr);
/* Drop an owner; the last one unmaps. */
void rq_odb_packread_free(rq_odb_packread *pr);
const char *rq_odb_packread_dir(const rq_odb_packread *pr);
/* The set of packs it reads. */
struct rq_odb_packset *rq_odb_packread_set(rq_odb_packread *pr);

/* 1 when these packs hold id (as their index says), 0 when they do not,
 * -1 when it cannot tell (out of memory). */
int rq_odb_packread_has(rq_odb_packread *pr, const rq_oid *id);
/* Freshen the pack that holds id (git's freshening): 1, 0 not held, -1. */
int rq_odb_packread_freshen(rq_odb_packread *pr, const rq_oid *id);

/* Where the content goes: alloc(ctx, n) returns n bytes (NULL: out of
 * memory). */
typedef void *(*rq_odb_packread_alloc)(void *ctx, size_t n);

/* What a read returns for an object these packs hold whose entry or delta
 * chain is damaged: an entry that does not parse or inflate, a delta that
 * does not fit its base, a base outside its pack, a chain that never ends
 * (a REF_DELTA that is its own base). libgit2 is not asked then: it
 * follows such a chain for ever. */
#define RQ_ODB_PACKREAD_DAMAGED (-2)
/* What a read returns for an object held by no usable pack when a pack or
 * an index failed git's checks: rq_odb_packread_error says which. */
#define RQ_ODB_PACKREAD_BADPACK (-3)
const char *rq_odb_packread_error(const rq_odb_packread *pr);

/*
 * Read object id: 1 with *data (from alloc, the content and a NUL after
 * it), *len and *type; 0 when these packs do not hold it (or were left to
 * libgit2); -1 out of memory; RQ_ODB_PACKREAD_DAMAGED (also: content up
 * to RQ_SHA1_CHECK_MAX that does not hash to id) or _BADPACK.
 */
int rq_odb_packread_read(rq_odb_packread *pr, const rq_oid *id, rq_odb_packread_alloc alloc,
			 void *ctx, void **data, size_t *len, git_object_t *type);
/* The same without a copy: *data malloc'd (the buffer its inflation
 * made; the content and a NUL). 1, 0, -1 or as rq_odb_packread_read. */
int rq_odb_packread_take(rq_odb_packread *pr, const rq_oid *id, unsigned char **data, size_t *len,
			 git_object_t *type);
/* The ids of these packs that start with the first nhex digits of
 * prefix: 0, 1 (*full), 2 (more than one), -1 (rq_odb_packset's). */
int rq_odb_packread_find_prefix(rq_odb_packread *pr, const rq_oid *prefix, size_t nhex,
				rq_oid *full);
/* The type and size of object id, as a read would give them (a delta's
 * size from its header): 1, 0, -1 or RQ_ODB_PACKREAD_DAMAGED as a read. */
int rq_odb_packread_read_header(rq_odb_packread *pr, const rq_oid *id, size_t *len,
				git_object_t *type);

/*
 * Blob id as it is stored when these packs hold it whole (not as a delta)
 * and its size is within [min, max]: 1 with *entry (malloc'd: a copy of its
 * pack entry, the type-and-size header and the zlib stream, as another
 * pack can hold it) and *content (malloc'd, *len bytes and a NUL), its
 * content hashed to id whatever its size (the entry is copied as id's).
 * 0 when these packs do not hold it, hold it as a delta, it is no blob or
 * its size is out of range; -1 out of memory; RQ_ODB_PACKREAD_DAMAGED.
 */
int rq_odb_packread_whole_blob(rq_odb_packread *pr, const rq_oid *id, size_t min, size_t max,
			       unsigned char **entry, size_t *entry_len, unsigned char **content,
			       size_t *len);

#endif
