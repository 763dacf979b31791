/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_midx: git's multi-pack-index, read (core/odb, see rq_odb.h for
 * the family).
 *
 * `git multi-pack-index write` (and `git repack --write-midx`, which
 * platforms' housekeeping runs) writes objects/pack/multi-pack-index: one
 * sorted list of the ids of many packs with, for each, the pack that holds
 * it and where. One binary search then answers for all of them, where
 * searching pack by pack costs a search (and a mapped index) per pack.
 * The format is git's (Documentation/gitformat-pack.txt, "multi-pack-index
 * files"): a header ("MIDX", version 1 or 2, the hash (SHA-1 or SHA-256:
 * the repository's, else the file is not used), the chunk count, no
 * base files, the pack count), a table of chunks, and the chunks PNAM
 * (the packs' index names), OIDF (fan-out), OIDL (ids), OOFF (pack and
 * offset of each) and LOFF (large offsets). Every part is checked against
 * the file's size before it is used; a file that does not parse is not
 * used at all (the packs are then searched one by one). The chain of
 * incremental files (multi-pack-index.d/) is not read.
 */
#ifndef RQ_ODB_MIDX_H
#define RQ_ODB_MIDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct rq_odb_midx rq_odb_midx;

/* The multi-pack-index of pack_dir, its ids rawsz bytes wide (the
 * repository's format), mapped: 1 with *out, 0 when there is none or it
 * does not parse, -1 out of memory. */
int rq_odb_midx_open(rq_odb_midx **out, const char *pack_dir, size_t rawsz);
void rq_odb_midx_free(rq_odb_midx *m);

/* Its packs, by number: the index's file name ("pack-<hex>.idx"). */
uint32_t rq_odb_midx_npacks(const rq_odb_midx *m);
const char *rq_odb_midx_pack(const rq_odb_midx *m, uint32_t k);

/* Where id is: 1 with *pack (a number above) and *off, or 0. */
int rq_odb_midx_find(const rq_odb_midx *m, const unsigned char *id, uint32_t *pack, uint64_t *off);

#endif
