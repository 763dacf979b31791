/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtwrite: one reftable, written into memory.
 *
 * Records come in order, refs first (by name), then logs (by name, newest
 * update first); rq_rtwrite_finish lays out what git's writer lays out:
 * ref blocks of the block size (4096 by default), padded with zeros, a
 * restart point every 16 records and at every key that shares no prefix
 * with the one before; a ref index (in as many levels as it takes to end
 * in one block) when there is more than one ref block; then,
 * when there is a ref index, obj blocks (object id, abbreviated to the
 * shortest length that tells the table's ids apart, to the ref blocks that
 * hold it) with their own index; then zlib-deflated log blocks, unpadded,
 * with their index; then the footer and its CRC-32. Ids are of the format
 * given (its width in every ref and log record); the version is 1 for
 * SHA-1 (24-byte header) and 2 with hash id "s256" for SHA-256 (28-byte
 * header), as git writes them.
 */
#ifndef RQ_RTWRITE_H
#define RQ_RTWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"
#include "rq_error.h"
#include "rq_rtable.h"

typedef struct rq_rtwrite rq_rtwrite;

typedef struct rq_rtwrite_opts {
	uint32_t block_size;	   /* 0: 4096 */
	unsigned restart_interval; /* 0: 16 */
	int no_obj_index;	   /* leave the obj blocks out */
} rq_rtwrite_opts;

/* A writer for a table of update indexes min..max whose ids are of the
 * format algo (NULL: SHA-1). NULL out of memory. */
rq_rtwrite *rq_rtwrite_new(const rq_rtwrite_opts *opts, const rq_oid_algo *algo,
			   uint64_t min_update_index, uint64_t max_update_index);
void rq_rtwrite_free(rq_rtwrite *w);

/*
 * Add a ref record (name and target NUL-terminated; its update index in
 * the table's range): refs in strictly increasing name order, all before
 * the first log. 0, or -1 with err set (RQ_E_INTERNAL for a record out of
 * order, RQ_E_BAD_REF for one that does not fit a block).
 */
int rq_rtwrite_add_ref(rq_rtwrite *w, const rq_rtable_ref *ref, rq_error *err);

/* Add a log record: in strictly increasing (refname, newest first) order.
 * The message is written as given. */
int rq_rtwrite_add_log(rq_rtwrite *w, const rq_rtable_log *log, rq_error *err);

/* 1 when nothing was added (git writes no empty table). */
int rq_rtwrite_empty(const rq_rtwrite *w);

/* Finish the table: out (empty on entry) gets its bytes. 0, or -1 with
 * err set. The writer is then spent (free it). */
int rq_rtwrite_finish(rq_rtwrite *w, rq_buf *out, rq_error *err);

#endif
