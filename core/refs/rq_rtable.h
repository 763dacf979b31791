/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtable: one reftable file, read.
 *
 * A reftable is git's binary ref store (git 3.0's default): a header, ref
 * blocks, an optional ref index, optional obj blocks (object id -> ref
 * blocks) with their index, log blocks (zlib-deflated reflog records) with
 * their index, and a footer that repeats the header, gives the position
 * of each section and ends with a CRC-32. Keys within a block are prefix
 * compressed against the key before; every restart point holds a whole key
 * and the block ends with the table of restart offsets, so a block is
 * searched by binary search over its restart points, and a table through
 * its index (or block by block when it has none).
 *
 * Everything read is bounds-checked: a length or offset that does not fit,
 * a varint that overflows, a record that runs past its block, a key over
 * RQ_RTABLE_KEY_MAX, keys out of order, a bad CRC, an index nested without
 * end or an update index of 2^64-1 (the next would wrap) is a clear error
 * (RQ_E_BAD_REPO, "reftable '<name>' is damaged: ... at offset N"), never
 * a crash and never a loop: every step moves forward in the file.
 *
 * Object ids are of the repository's object format, given when the table
 * is opened: SHA-1 (a version 1 table, 24-byte header and 68-byte footer,
 * or version 2 with hash id "sha1") or SHA-256 (version 2, 28-byte header
 * with hash id "s256", 72-byte footer); ref and log records carry ids of
 * that width. A table of the other format (a version 1 table in a SHA-256
 * repository, "s256" in a SHA-1 one, an unknown hash id) is refused
 * (RQ_E_BAD_REPO, naming both formats), never misread.
 */
#ifndef RQ_RTABLE_H
#define RQ_RTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"
#include "rq_error.h"
#include "rq_oid.h"

#define RQ_RTABLE_KEY_MAX 65536 /* a longer key is damage (a ref name is far shorter) */

/* A ref record's value type, as stored. */
enum rq_rtable_ref_type {
	RQ_RTABLE_DELETION = 0, /* a tombstone: hides the ref in older tables */
	RQ_RTABLE_VAL1 = 1,	/* an object id */
	RQ_RTABLE_VAL2 = 2,	/* an object id and its peeled id (an annotated tag) */
	RQ_RTABLE_SYMREF = 3	/* a symbolic ref */
};

/* A log record's type. */
enum rq_rtable_log_type { RQ_RTABLE_LOG_DELETION = 0, RQ_RTABLE_LOG_UPDATE = 1 };

typedef struct rq_rtable rq_rtable;

/* A ref record; the strings stay valid until the iterator moves. */
typedef struct rq_rtable_ref {
	const char *name;
	size_t name_len;
	uint64_t update_index;
	int type;	    /* enum rq_rtable_ref_type */
	rq_oid value;	    /* VAL1, VAL2 */
	rq_oid peeled;	    /* VAL2 */
	const char *target; /* SYMREF */
} rq_rtable_ref;

/* A reflog record; the strings stay valid until the iterator moves. */
typedef struct rq_rtable_log {
	const char *refname;
	uint64_t update_index;
	int type; /* enum rq_rtable_log_type; the rest only for UPDATE */
	rq_oid old_id, new_id;
	const char *name, *email;
	uint64_t time;
	/* the zone as git writes it: the number of the "+HHMM" text
	 * (-0800 is -800, +0530 is 530) */
	int tz;
	const char *message; /* as stored: git ends it with "\n" */
} rq_rtable_log;

/* An iterator over one section of one table. Its fields are private. */
typedef struct rq_rtable_iter {
	const rq_rtable *t;
	uint8_t typ; /* 'r', 'g', 'o' or 'i' */
	int ended;
	size_t off, next_off;	 /* the current block, the one after it */
	const uint8_t *blk;	 /* the block (in the file, or inflated) */
	size_t blen, hoff, rend; /* its length, header offset, end of records */
	size_t nrestart, pos, base_len;
	uint8_t *zbuf; /* inflated log block */
	size_t zcap;
	rq_buf key, val;   /* this record's key, strings */
	int have_prev;	   /* key holds the key before (its order is checked) */
	int reread;	   /* the record at pos was read already (its order was checked) */
	uint64_t idx_pos;  /* an index record's block position */
	size_t nread;	   /* records read (the tests check that seeks stay short) */
	uint64_t *obj_pos; /* an obj record's block positions */
	size_t nobj, objcap;
	rq_rtable_ref ref;
	rq_rtable_log log;
} rq_rtable_iter;

/*
 * Open the table at path (mapped, read-only) of a repository whose object
 * format is algo; name is what messages call it (its file name). 0, or -1
 * with err set (RQ_E_BAD_REPO when damaged or of another format, RQ_E_IO
 * when unreadable; errno ENOENT is kept for a missing file).
 */
int rq_rtable_open(rq_rtable **out, const char *path, const char *name, const rq_oid_algo *algo,
		   rq_error *err);

/* The same over bytes in memory (copied). */
int rq_rtable_open_mem(rq_rtable **out, const void *data, size_t len, const char *name,
		       const rq_oid_algo *algo, rq_error *err);

/* The 4 bytes a version 2 table names algo's hash with: "sha1", "s256". */
const char *rq_rtable_hash_id(const rq_oid_algo *algo);

void rq_rtable_free(rq_rtable *t);

const char *rq_rtable_name(const rq_rtable *t);
/* The object format of its ids (the one it was opened with). */
const rq_oid_algo *rq_rtable_algo(const rq_rtable *t);
uint64_t rq_rtable_min_update_index(const rq_rtable *t);
uint64_t rq_rtable_max_update_index(const rq_rtable *t);
/* The file's size in bytes. */
uint64_t rq_rtable_size(const rq_rtable *t);

void rq_rtable_iter_init(rq_rtable_iter *it);
void rq_rtable_iter_release(rq_rtable_iter *it);

/*
 * Position it at the first ref record whose name is >= name ("" for the
 * first), through the ref index when there is one. 0, or -1 with err set.
 */
int rq_rtable_seek_ref(rq_rtable_iter *it, const rq_rtable *t, const char *name, rq_error *err);
/* The next ref record: 0 (out filled), 1 at the end, -1 with err set. */
int rq_rtable_next_ref(rq_rtable_iter *it, rq_rtable_ref *out, rq_error *err);

/*
 * Position it at the first log record of refname with an update index <=
 * update_index (logs sort newest first within a ref; refname "" and
 * UINT64_MAX: the very first record). 0, or -1 with err set.
 */
int rq_rtable_seek_log(rq_rtable_iter *it, const rq_rtable *t, const char *refname,
		       uint64_t update_index, rq_error *err);
int rq_rtable_next_log(rq_rtable_iter *it, rq_rtable_log *out, rq_error *err);

/*
 * Every ref record of the table whose value or peeled value is id, in ref
 * order: through the obj blocks when the table has them, else by reading
 * every ref. fn returns 0 to go on, anything else stops (and is returned).
 * 0, or -1 with err set.
 */
int rq_rtable_refs_for(const rq_rtable *t, const rq_oid *id,
		       int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err);

/*
 * Read every record of every section (refs, obj, logs, both indexes) and
 * check it; 0 or -1 with err naming the first damage.
 */
int rq_rtable_verify(const rq_rtable *t, rq_error *err);

#endif
