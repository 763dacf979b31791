/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packset: the packs of one pack directory and where an object is
 * among them (core/odb, see rq_odb.h for the family), under the reader of
 * their entries (rq_odb_packread).
 *
 * Nothing is done per pack when the set is opened or listed but reading a
 * directory entry: an index is mapped and checked the first time it is
 * searched, a pack the first time an object is read from it (with git's
 * checks: the index's size fits its count, the pack's header and trailing
 * checksum match the index). A lookup asks, in this order, git's
 * multi-pack-index (rq_odb_midx) for the packs it covers, replayq's table of
 * the small packs (rq_odb_packtab) for the packs it lists, and the
 * remaining packs one by one, the pack of the last hit first. The table
 * is (re)built when more than a few packs are in neither (and saved, for
 * the next process, when the set may write: the repository's own
 * objects directory).
 *
 * A pack that is gone when it is needed (removed by a consolidation or a
 * `git repack` since the listing) is skipped; a read that then finds
 * nothing lists the directory again, once, as git does. A pack or index
 * that fails git's checks is skipped as well, its error kept: a read that
 * finds the object nowhere else reports it.
 */
#ifndef RQ_ODB_PACKSET_H
#define RQ_ODB_PACKSET_H

#include <stddef.h>
#include <stdint.h>

#include "rq_odb_pack.h"
#include "rq_oid.h"

typedef struct rq_odb_packset rq_odb_packset;

#define RQ_ODB_PACKSET_WRITE 1u /* may save the table (objects/replayq) */
/* What a lookup returns when the object is in no usable pack and some
 * pack or index failed git's checks (the message: rq_odb_packset_error). */
#define RQ_ODB_PACKSET_BAD (-3)

/* The set of pack_dir's packs (nothing read yet) in the object format
 * algo (NULL: SHA-1; an index or multi-pack-index of the other format is
 * refused as git refuses it); messages name the directory as shown says
 * (NULL: pack_dir). NULL: out of memory. */
rq_odb_packset *rq_odb_packset_open(const char *pack_dir, const char *shown,
				    const rq_oid_algo *algo, unsigned flags);
/* Its object format. */
const rq_oid_algo *rq_odb_packset_algo(const rq_odb_packset *ps);
void rq_odb_packset_free(rq_odb_packset *ps);
const char *rq_odb_packset_dir(const rq_odb_packset *ps);

/* A pack, mapped and checked, as a read needs it. */
typedef struct rq_odb_packset_pair {
	const unsigned char *pack;
	size_t pack_len;
	rq_odb_pack_idx ix;
} rq_odb_packset_pair;

/*
 * Where id is, its pack mapped: 1 with *k (the pack's number, stable for
 * the set's life) and *off; 0 nowhere; RQ_ODB_PACKSET_BAD; -1 out of
 * memory. With rescan, a miss lists the directory again and looks once
 * more.
 */
int rq_odb_packset_locate(rq_odb_packset *ps, const unsigned char *id, int rescan, size_t *k,
			  uint64_t *off);
/* Pack k as located. */
const rq_odb_packset_pair *rq_odb_packset_pair_of(const rq_odb_packset *ps, size_t k);

/* 1 when the packs hold id (as their indexes and tables say; no pack is
 * mapped), 0 when not, -1 out of memory. */
int rq_odb_packset_has(rq_odb_packset *ps, const unsigned char *id);

/* Refresh the modification time of the pack that holds id, once in the
 * set's life (git's freshening: `git gc` keeps recently used packs' objects
 * longer): 1 (held), 0 (not held), -1. */
int rq_odb_packset_freshen(rq_odb_packset *ps, const unsigned char *id);

/* The ids of these packs that start with the first nhex digits of prefix
 * (rq_oid_parse_prefix's), every listed pack's index searched: 0 none, 1
 * one (*full), 2 more than one, -1 out of memory. */
int rq_odb_packset_find_prefix(rq_odb_packset *ps, const rq_oid *prefix, size_t nhex, rq_oid *full);
/* List the directory again (git's reprepare). 0, or -1 out of memory. */
int rq_odb_packset_rescan(rq_odb_packset *ps);

/* The last pack error ("packfile <p> does not match index", "index file
 * <p> is too small", "wrong index v2 file size in <p>"), or "". */
const char *rq_odb_packset_error(const rq_odb_packset *ps);

/* What the set holds, for tests and the docs' measurements. */
typedef struct rq_odb_packset_stats {
	size_t listed;	  /* packs in the last listing */
	size_t midx;	  /* of them covered by git's multi-pack-index */
	size_t table;	  /* covered by replayq's table */
	size_t direct;	  /* searched one by one */
	size_t idx_maps;  /* indexes mapped so far */
	size_t pack_maps; /* packs mapped so far */
	int table_built;  /* the table was (re)built by this set */
	int trusted;	  /* the set started from the table, without a listing */
} rq_odb_packset_stats;
void rq_odb_packset_stats_get(rq_odb_packset *ps, rq_odb_packset_stats *out);

#endif
