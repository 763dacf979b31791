/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_pack: the pack format (version 2) and its index (version 2): the
 * one pack a replay writes (core/odb, see rq_odb.h for the family).
 *
 * rq_odb_pack_encode() turns one object into a whole entry: the
 * type-and-size header and the zlib stream of the content (libdeflate), with the
 * entry's CRC-32 for the index; rq_odb_pack_encode_delta() into a delta
 * against another object of the same pack. Entries can be encoded anywhere
 * (forked children do their own); rq_odb_packwrite() only concatenates
 * them, so the serial end of a replay is a copy and a checksum. An entry
 * can be read back (rq_odb_pack_entry_parse, _inflate, _apply_delta): the
 * objects a child hands over come without their content.
 */
#ifndef RQ_ODB_PACK_H
#define RQ_ODB_PACK_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_oid.h"

typedef struct rq_odb_pack_entry {
	rq_oid id;		   /* of the pack's object format */
	const unsigned char *data; /* the entry's bytes: header + zlib stream */
	size_t len;
	uint32_t crc; /* CRC-32 of those bytes */
} rq_odb_pack_entry;

/*
 * The level a replay's pack is compressed at when the repository sets none
 * (libdeflate's scale, 0-9, close to zlib's). A replay's pack is the
 * repository's newest and `git gc` repacks it anyway; level 2 keeps it
 * within about 11% of the pack `git pack-objects` makes of the same objects
 * at zlib's 6, in 70% of level 4's time (README: Objects).
 */
#define RQ_ODB_PACK_DEFAULT_LEVEL 2

typedef struct rq_odb_pack_encoder rq_odb_pack_encoder;
/* At the default level. NULL: out of memory. */
rq_odb_pack_encoder *rq_odb_pack_encoder_new(void);
/* At a level (0-9; -1 or out of range: RQ_ODB_PACK_DEFAULT_LEVEL). */
rq_odb_pack_encoder *rq_odb_pack_encoder_new_level(int level);
int rq_odb_pack_encoder_level(const rq_odb_pack_encoder *enc);
/* REF_DELTA bases of that format's width (a new encoder's: SHA-1). */
void rq_odb_pack_encoder_set_algo(rq_odb_pack_encoder *enc, const rq_oid_algo *algo);
/* The level the repository asks for: pack.compression, else
 * core.compression, as git reads them; -1 when it sets none (or a value out
 * of range). */
int rq_odb_pack_compression_level(git_repository *repo);
void rq_odb_pack_encoder_free(rq_odb_pack_encoder *enc);

/* CRC-32 (the pack index's) of len bytes. */
uint32_t rq_odb_pack_crc32(const void *p, size_t len);

/* Encode an object. *out is malloc'ed. 0, or -1 (out of memory, zlib). */
int rq_odb_pack_encode(rq_odb_pack_encoder *enc, git_object_t type, const void *content, size_t len,
		       unsigned char **out, size_t *out_len, uint32_t *crc);

/*
 * Encode `target` as a delta against `base` (a REF_DELTA entry naming
 * base_id) when the two share most of their bytes as a common prefix and
 * suffix, the shape of a tree or commit rewritten by a replay. Returns 1
 * (encoded), 0 (not worth a delta: nothing encoded) or -1.
 */
int rq_odb_pack_encode_delta(rq_odb_pack_encoder *enc, const rq_oid *base_id, const void *base,
			     size_t base_len, const void *target, size_t len, unsigned char **out,
			     size_t *out_len, uint32_t *crc);

/*
 * Encode target as a delta against base, another version of the same file:
 * the base indexed by 16-byte blocks, runs of the target found there
 * copied, the rest literal (git's diff-delta, without its hash chains).
 * Returns 1 (encoded), 0 (the delta would be more than half the target:
 * nothing encoded) or -1.
 */
int rq_odb_pack_encode_blob_delta(rq_odb_pack_encoder *enc, const rq_oid *base_id, const void *base,
				  size_t base_len, const void *target, size_t len,
				  unsigned char **out, size_t *out_len, uint32_t *crc);

/* The literal bytes such a delta would carry (to choose the best base), or
 * SIZE_MAX (not worth a delta). */
size_t rq_odb_pack_delta_cost(const void *base, size_t base_len, const void *target, size_t len);

/* What an entry's header says. code: 1-4 (a whole commit, tree, blob, tag)
 * or 7 (a REF_DELTA against base); size: the content's (or the delta's)
 * length; zdata/zlen: the zlib stream. */
typedef struct rq_odb_pack_entry_info {
	unsigned code;
	size_t size;
	rq_oid base;
	const unsigned char *zdata;
	size_t zlen;
} rq_odb_pack_entry_info;

/* Parse an entry's header (a REF_DELTA's base rawsz bytes wide). 0, or -1
 * (malformed). */
int rq_odb_pack_entry_parse(const unsigned char *e, size_t len, size_t rawsz,
			    rq_odb_pack_entry_info *info);

/* Inflate a zlib stream that must give exactly size bytes. *out is
 * malloc'ed (NUL-terminated). 0, or -1 (damaged, out of memory). */
int rq_odb_pack_inflate(const unsigned char *z, size_t zlen, size_t size, unsigned char **out);

/* Apply a git delta to base. *out is malloc'ed (NUL-terminated). 0, -1
 * (out of memory) or -2 (a delta that does not fit the base). */
int rq_odb_pack_apply_delta(const unsigned char *base, size_t base_len, const unsigned char *delta,
			    size_t delta_len, unsigned char **out, size_t *out_len);
/* The size of the object a delta makes, from its header. 0, or -1 (a
 * header that does not parse, or a size past SIZE_MAX / 2). */
int rq_odb_pack_delta_size(const unsigned char *delta, size_t delta_len, size_t *size);

/* ---- reading an index (version 2) ---- */

/* An index as mapped: the parts a lookup needs. */
typedef struct rq_odb_pack_idx {
	const unsigned char *fanout;   /* 256 counts: ids whose first byte is <= b */
	const unsigned char *ids;      /* nr sorted ids */
	const unsigned char *crcs;     /* their entries' CRC-32s */
	const unsigned char *off32;    /* nr offsets (top bit: into off64) */
	const unsigned char *off64;    /* n64 large offsets */
	const unsigned char *pack_sum; /* the pack's checksum, as the index records it */
	uint32_t nr;
	size_t n64;
	size_t rawsz; /* the ids' width: 20 (SHA-1), 32 (SHA-256) */
} rq_odb_pack_idx;

/* The codes of rq_odb_pack_idx_parse: git's words for them. */
#define RQ_ODB_PACK_IDX_SHORT	(-1) /* "index file <p> is too small" */
#define RQ_ODB_PACK_IDX_CORRUPT (-2) /* "index file <p> is corrupt" */
#define RQ_ODB_PACK_IDX_FANOUT	(-3) /* "non-monotonic index <p>" */
#define RQ_ODB_PACK_IDX_SIZE	(-4) /* "wrong index v2 file size in <p>" */

/* Parse an index of len bytes whose ids are rawsz bytes wide (the
 * repository's object format): its header, a size that fits its count, a
 * fan-out that never goes down (git's checks when it opens one: an index
 * of the other format fails the size; its ids are not checked to be
 * sorted, nor the file's checksum: see docs/objects.md). 0, or one of the
 * codes above. */
int rq_odb_pack_idx_parse(const unsigned char *p, size_t len, size_t rawsz, rq_odb_pack_idx *ix);

/*
 * The first of nr sorted ids of rawsz bytes (20 or 32; each `stride` bytes
 * apart, the id first) equal to id, by a fan-out of 256 big-endian counts
 * and a binary search: 1 with *pos, or 0. A fan-out that does not fit nr
 * finds nothing.
 */
int rq_odb_pack_fanout_find(const unsigned char *fanout, const unsigned char *ids, size_t stride,
			    uint32_t nr, const unsigned char *id, size_t rawsz, uint32_t *pos);

/* 1 when the fan-out of 256 big-endian counts never goes down and ends
 * at nr (git's "non-monotonic index"), else 0. */
int rq_odb_pack_fanout_ok(const unsigned char *fanout, uint32_t nr);

/* The offset of index entry pos: 0, or -1 (a large offset that is not
 * in the table). */
int rq_odb_pack_idx_offset(const rq_odb_pack_idx *ix, uint32_t pos, uint64_t *off);

/* Where id is in the index's pack: 1 with *off, or 0. */
int rq_odb_pack_idx_find(const rq_odb_pack_idx *ix, const unsigned char *id, uint64_t *off);

/* The ids of index ix that start with the nhex digits of prefix (zero past
 * them: the first such id is where a binary search for prefix lands),
 * counted into *found (at most 2: more than one), the first in *full. */
void rq_odb_pack_idx_prefix(const rq_odb_pack_idx *ix, const rq_oid_algo *algo,
			    const rq_oid *prefix, size_t nhex, rq_oid *full, int *found);

uint32_t rq_odb_pack_be32(const unsigned char *p);

#endif
