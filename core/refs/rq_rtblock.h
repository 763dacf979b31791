/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtblock: one block of a reftable, loaded and read record by record;
 * private to the reader (rq_rtable.c, rq_rtblock.c).
 *
 * A block is loaded where an iterator asks for it (a log block inflated
 * first), its restart table checked; its records are decoded one by one
 * (keys prefix compressed against the key before, then the value of the
 * block's type: ref, log, obj or index), and a key is sought by binary
 * search over its restart points. Every length and offset is checked
 * against the block (rq_rtable.h says how damage is reported).
 */
#ifndef RQ_RTBLOCK_H
#define RQ_RTBLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_rtable.h"

/* One table, mapped or in memory: its frame as the header and footer
 * give it. */
struct rq_rtable {
	char *name;
	const uint8_t *data;
	size_t size;
	int mapped;
	int version;
	const rq_oid_algo *algo; /* the ids' format */
	size_t hash;		 /* bytes of an id: algo->rawsz */
	size_t hsize, fsize;	 /* header and footer sizes */
	size_t body_end;	 /* where the footer starts */
	uint32_t block_size;	 /* 0: unaligned */
	uint64_t min_ui, max_ui;
	uint64_t ref_index, obj_pos, obj_index, log_pos, log_index;
	unsigned obj_id_len;
	int has_refs, has_logs;
};

/* Big-endian integers of the file. */
static inline uint32_t rq_rtblock_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t rq_rtblock_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t rq_rtblock_be32(const uint8_t *p)
{
	return rq_rtblock_be16(p) << 16 | rq_rtblock_be16(p + 2);
}

static inline uint64_t rq_rtblock_be64(const uint8_t *p)
{
	return (uint64_t)rq_rtblock_be32(p) << 32 | rq_rtblock_be32(p + 4);
}

/* RQ_E_BAD_REPO: "reftable '<name>' is damaged: <what> at offset <off>";
 * returns -1. */
int rq_rtblock_damaged(rq_error *err, const rq_rtable *t, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Keys compare as bytes; a key sorts before the longer keys it begins. */
int rq_rtblock_keycmp(const void *a, size_t al, const void *b, size_t bl);

/* Load the block at off for it (of it->typ): 0, 1 when no block of the
 * iterator's type is there (the section ended), -1 damaged. */
int rq_rtblock_load(rq_rtable_iter *it, size_t off, rq_error *err);

/* Decode the record at it->pos of the block loaded (its key, then its
 * value): 0, or -1 damaged. */
int rq_rtblock_record(rq_rtable_iter *it, rq_error *err);

/* Decode the next record into it, loading the next block of the section
 * when this one is done: 0, 1 at the end of the section, -1. */
int rq_rtblock_step(rq_rtable_iter *it, rq_error *err);

/*
 * Position it before the first record of its block whose key is >= want:
 * 1 when there is such a record, 0 when every key of the block is
 * smaller, -1 damaged.
 */
int rq_rtblock_seek(rq_rtable_iter *it, const void *want, size_t wlen, rq_error *err);

#endif
