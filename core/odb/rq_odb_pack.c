/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_pack: pack entries encoded (whole, or as deltas against an earlier
 * object: git's delta format) and read back, an index read (git's
 * Documentation/gitformat-pack.txt); the pack and its index are written
 * by rq_odb_packwrite.
 */
#include "rq_odb_pack.h"
#include "rq_deflate.h"
#include "rq_sha1.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>

/*
 * The compressor: libdeflate, which compresses a whole buffer at once (all
 * the pack writer has) 4 to 8 times faster than zlib at the same size. Its
 * state is allocated once per level and reused for every object.
 */
struct rq_odb_pack_encoder {
	struct libdeflate_compressor *c;
	int level;	     /* libdeflate's: 0 (stored) to 9 */
	size_t rawsz;	     /* a REF_DELTA base's width: the object format's */
	unsigned char *work; /* the output buffer, as large as the bound needs */
	size_t work_cap;
};

rq_odb_pack_encoder *rq_odb_pack_encoder_new(void)
{
	return rq_odb_pack_encoder_new_level(-1);
}

rq_odb_pack_encoder *rq_odb_pack_encoder_new_level(int level)
{
	rq_odb_pack_encoder *enc = calloc(1, sizeof(rq_odb_pack_encoder));

	if (!enc)
		return NULL;
	enc->level = level < 0 || level > 9 ? RQ_ODB_PACK_DEFAULT_LEVEL : level;
	enc->rawsz = rq_oid_sha1.rawsz;
	if (!(enc->c = libdeflate_alloc_compressor(enc->level))) {
		free(enc);
		return NULL;
	}
	return enc;
}

int rq_odb_pack_encoder_level(const rq_odb_pack_encoder *enc)
{
	return enc->level;
}

void rq_odb_pack_encoder_set_algo(rq_odb_pack_encoder *enc, const rq_oid_algo *algo)
{
	enc->rawsz = algo->rawsz;
}

int rq_odb_pack_compression_level(git_repository *repo)
{
	git_config *cfg = NULL, *snap = NULL;
	int level = -1, v;

	if (git_repository_config(&cfg, repo) == 0 && git_config_snapshot(&snap, cfg) == 0) {
		if (git_config_get_int32(&v, snap, "pack.compression") == 0 ||
		    git_config_get_int32(&v, snap, "core.compression") == 0)
			level = v < -1 || v > 9 ? -1 : v;
	}
	git_config_free(snap);
	git_config_free(cfg);
	return level;
}

void rq_odb_pack_encoder_free(rq_odb_pack_encoder *enc)
{
	if (!enc)
		return;
	libdeflate_free_compressor(enc->c);
	free(enc->work);
	free(enc);
}

uint32_t rq_odb_pack_crc32(const void *p, size_t len)
{
	return libdeflate_crc32(0, p, len);
}

/* An entry's header: the type code and the size (base-128, 4 bits first),
 * then the base id of a REF_DELTA (rawsz bytes). Returns its length. */
static size_t entry_header(unsigned char *head, unsigned type, const rq_oid *base, size_t rawsz,
			   size_t len)
{
	uint64_t size = len;
	size_t nh = 0;

	head[nh] = (unsigned char)((type & 7) << 4 | (size & 0x0f));
	size >>= 4;
	while (size) {
		head[nh++] |= 0x80;
		head[nh] = (unsigned char)(size & 0x7f);
		size >>= 7;
	}
	nh++;
	if (base) {
		memcpy(head + nh, base->id, rawsz);
		nh += rawsz;
	}
	return nh;
}

/* Objects up to this size go to rq_deflate (levels 1-5): a commit in 4.4
 * instead of libdeflate's 7.3 us, a tree delta in 1-2 instead of 6 us, at
 * the same size (commits 0.15% larger, trees 0.1% smaller); from about
 * 1 KiB on libdeflate is the faster. */
#define SMALL_OBJECT 1024

/*
 * The body of a signed commit's signature: the lines of its "gpgsig" (or
 * "gpgsig-sha256") header between the first and the last (the armour's
 * BEGIN and END lines), as [*from, *to). Base64 of random bytes, where a
 * match search finds nothing: rq_deflate takes them as literals. 0 when
 * the header holds no such lines.
 */
static int signature_body(const char *p, size_t len, size_t *from, size_t *to)
{
	const char *end = p + len, *h = p, *nl, *last = NULL;

	for (;;) { /* the header's lines, up to the blank one */
		if (!(nl = memchr(h, '\n', (size_t)(end - h))) || nl == h)
			return 0;
		if (!strncmp(h, "gpgsig ", 7) || !strncmp(h, "gpgsig-sha256 ", 14))
			break;
		h = nl + 1;
	}
	*from = (size_t)(nl + 1 - p);
	for (h = nl + 1; h < end && *h == ' '; h = nl + 1) {
		last = h;
		if (!(nl = memchr(h, '\n', (size_t)(end - h))))
			break;
	}
	if (!last)
		return 0;
	*to = (size_t)(last - p);
	return *to > *from;
}

/* payload as a zlib stream into the encoder's buffer (grown to the bound):
 * its length, 0 on failure. */
static size_t compress_payload(rq_odb_pack_encoder *enc, unsigned type, const void *payload,
			       size_t len)
{
	size_t bound = libdeflate_zlib_compress_bound(enc->c, len), from = 0, to = 0;

	if (len <= SMALL_OBJECT && RQ_DEFLATE_SMALL_BOUND(len) > bound)
		bound = RQ_DEFLATE_SMALL_BOUND(len);
	if (bound > enc->work_cap) {
		free(enc->work);
		enc->work_cap = 0;
		if (!(enc->work = malloc(bound)))
			return 0;
		enc->work_cap = bound;
	}
	if (len <= SMALL_OBJECT && enc->level >= 1 && enc->level <= 5) {
		if (type == GIT_OBJECT_COMMIT && !signature_body(payload, len, &from, &to))
			from = to = 0;
		return rq_deflate_small_span(payload, len, from, to, enc->work);
	}
	return libdeflate_zlib_compress(enc->c, payload, len, enc->work, bound);
}

/* One entry: header (type code, size), the base id for a REF_DELTA, then
 * the zlib stream of payload. Compressed into the encoder's buffer, then
 * copied into one of the entry's size: an entry is about a third of its
 * object, and the stores keep every entry until the pack. */
static int encode_entry(rq_odb_pack_encoder *enc, unsigned type, const rq_oid *base,
			const void *payload, size_t len, unsigned char **out, size_t *out_len,
			uint32_t *crc)
{
	unsigned char head[16 + RQ_OID_MAX_RAWSZ], *buf;
	size_t nh = entry_header(head, type, base, enc->rawsz, len), z;

	*out = NULL;
	z = compress_payload(enc, type, payload, len);
	if (!z || !(buf = malloc(nh + z)))
		return -1;
	memcpy(buf, head, nh);
	memcpy(buf + nh, enc->work, z);
	*out_len = nh + z;
	*crc = rq_odb_pack_crc32(buf, *out_len);
	*out = buf;
	return 0;
}

int rq_odb_pack_encode(rq_odb_pack_encoder *enc, git_object_t type, const void *content, size_t len,
		       unsigned char **out, size_t *out_len, uint32_t *crc)
{
	return encode_entry(enc, (unsigned)type, NULL, content, len, out, out_len, crc);
}

/* git's delta format: sizes as little-endian base-128 numbers */
static size_t put_varint(unsigned char *p, size_t v)
{
	size_t n = 0;
	do {
		p[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

/* A copy instruction: offset and size bytes present as flagged. */
static size_t put_copy(unsigned char *p, size_t off, size_t size)
{
	size_t n = 1;
	unsigned char op = 0x80;
	for (int i = 0; i < 4; i++)
		if ((off >> (8 * i)) & 0xff) {
			op |= (unsigned char)(1 << i);
			p[n++] = (unsigned char)(off >> (8 * i));
		}
	for (int i = 0; i < 3; i++)
		if ((size >> (8 * i)) & 0xff) {
			op |= (unsigned char)(0x10 << i);
			p[n++] = (unsigned char)(size >> (8 * i));
		}
	p[0] = op;
	return n;
}

#define COPY_MAX 0xffffffu /* a copy's size fits in three bytes */

/* The common prefix and suffix (not overlapping) of base and target,
 * compared a word at a time. */
static void common_ends(const unsigned char *b, size_t base_len, const unsigned char *t, size_t len,
			size_t *pre_out, size_t *suf_out)
{
	size_t pre = 0, suf = 0, lim = base_len < len ? base_len : len;
	uint64_t x, y;

	while (pre + 8 <= lim) {
		memcpy(&x, b + pre, 8);
		memcpy(&y, t + pre, 8);
		if (x != y)
			break;
		pre += 8;
	}
	while (pre < lim && b[pre] == t[pre])
		pre++;
	lim -= pre;
	while (suf + 8 <= lim) {
		memcpy(&x, b + base_len - suf - 8, 8);
		memcpy(&y, t + len - suf - 8, 8);
		if (x != y)
			break;
		suf += 8;
	}
	while (suf < lim && b[base_len - 1 - suf] == t[len - 1 - suf])
		suf++;
	*pre_out = pre;
	*suf_out = suf;
}

size_t rq_odb_pack_delta_cost(const void *base, size_t base_len, const void *target, size_t len)
{
	size_t pre, suf, mid;
	if (base_len > UINT32_MAX || len > UINT32_MAX)
		return SIZE_MAX;
	common_ends(base, base_len, target, len, &pre, &suf);
	mid = len - pre - suf;
	/* worth it only when most of the object is copied */
	if (mid + 64 > len / 2)
		return SIZE_MAX;
	return mid;
}

int rq_odb_pack_encode_delta(rq_odb_pack_encoder *enc, const rq_oid *base_id, const void *base,
			     size_t base_len, const void *target, size_t len, unsigned char **out,
			     size_t *out_len, uint32_t *crc)
{
	const unsigned char *t = target;
	size_t pre, suf, mid, cap, n = 0;
	unsigned char *d;
	int rc;

	*out = NULL;
	if (rq_odb_pack_delta_cost(base, base_len, target, len) == SIZE_MAX)
		return 0;
	common_ends(base, base_len, target, len, &pre, &suf);
	mid = len - pre - suf;
	cap = 2 * 10 + (pre / COPY_MAX + suf / COPY_MAX + 2) * 8 + mid + mid / 127 + 2;
	if (!(d = malloc(cap)))
		return -1;
	n += put_varint(d + n, base_len);
	n += put_varint(d + n, len);
	for (size_t off = 0; off < pre;) {
		size_t k = pre - off < COPY_MAX ? pre - off : COPY_MAX;
		n += put_copy(d + n, off, k);
		off += k;
	}
	for (size_t i = 0; i < mid;) {
		size_t k = mid - i < 127 ? mid - i : 127;
		d[n++] = (unsigned char)k;
		memcpy(d + n, t + pre + i, k);
		n += k;
		i += k;
	}
	for (size_t off = base_len - suf; off < base_len;) {
		size_t k = base_len - off < COPY_MAX ? base_len - off : COPY_MAX;
		n += put_copy(d + n, off, k);
		off += k;
	}
	rc = encode_entry(enc, 7 /* OBJ_REF_DELTA */, base_id, d, n, out, out_len, crc);
	free(d);
	return rc < 0 ? -1 : 1;
}

/* ---- deltas between versions of a blob ---- */

#define BLOCK 16 /* the base is indexed by its 16-byte blocks, as git's diff-delta */

static uint64_t block_hash(const unsigned char *p)
{
	uint64_t a, b;
	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	a = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return a ^ (a >> 31);
}

/* The base's blocks in an open-addressing table of block numbers + 1. */
typedef struct block_index {
	uint32_t *slot;
	size_t mask;
} block_index;

static int index_blocks(block_index *ix, const unsigned char *base, size_t base_len)
{
	size_t nb = base_len / BLOCK, n = 16;

	while (n < 2 * nb)
		n <<= 1;
	if (!(ix->slot = calloc(n, sizeof(*ix->slot))))
		return -1;
	ix->mask = n - 1;
	for (size_t i = 0; i < nb; i++) {
		size_t k = block_hash(base + i * BLOCK) & ix->mask;
		while (ix->slot[k])
			k = (k + 1) & ix->mask;
		ix->slot[k] = (uint32_t)(i + 1);
	}
	return 0;
}

/* A block of the base equal to the 16 bytes at t: its offset, or SIZE_MAX. */
static size_t find_block(const block_index *ix, const unsigned char *base, const unsigned char *t)
{
	for (size_t k = block_hash(t) & ix->mask; ix->slot[k]; k = (k + 1) & ix->mask) {
		size_t off = (size_t)(ix->slot[k] - 1) * BLOCK;
		if (!memcmp(base + off, t, BLOCK))
			return off;
	}
	return SIZE_MAX;
}

/* The delta being written: stops (full) past cap, a delta not worth it. */
typedef struct delta_out {
	unsigned char *p;
	size_t n, cap;
	int full;
} delta_out;

static void put_literal(delta_out *d, const unsigned char *t, size_t len)
{
	for (size_t i = 0; i < len && !d->full;) {
		size_t k = len - i < 127 ? len - i : 127;
		if (d->n + k + 1 > d->cap) {
			d->full = 1;
			return;
		}
		d->p[d->n++] = (unsigned char)k;
		memcpy(d->p + d->n, t + i, k);
		d->n += k;
		i += k;
	}
}

static void put_copies(delta_out *d, size_t off, size_t len)
{
	while (len && !d->full) {
		size_t k = len < COPY_MAX ? len : COPY_MAX;
		if (d->n + 8 > d->cap) {
			d->full = 1;
			return;
		}
		d->n += put_copy(d->p + d->n, off, k);
		off += k;
		len -= k;
	}
}

/* Scan the target: a run found in the base (grown both ways from an equal
 * block) is a copy, the bytes between runs literals. */
static void scan_target(delta_out *d, const block_index *ix, const unsigned char *b, size_t blen,
			const unsigned char *t, size_t tlen)
{
	size_t pos = 0, lit = 0;

	while (pos + BLOCK <= tlen && !d->full) {
		size_t off = find_block(ix, b, t + pos), len = BLOCK;
		if (off == SIZE_MAX) {
			pos++;
			continue;
		}
		while (pos > lit && off > 0 && t[pos - 1] == b[off - 1])
			pos--, off--, len++;
		while (pos + len < tlen && off + len < blen && t[pos + len] == b[off + len])
			len++;
		put_literal(d, t + lit, pos - lit);
		put_copies(d, off, len);
		pos += len;
		lit = pos;
	}
	put_literal(d, t + lit, tlen - lit);
}

int rq_odb_pack_encode_blob_delta(rq_odb_pack_encoder *enc, const rq_oid *base_id, const void *base,
				  size_t base_len, const void *target, size_t len,
				  unsigned char **out, size_t *out_len, uint32_t *crc)
{
	block_index ix = {NULL, 0};
	delta_out d = {NULL, 0, len / 2 + 32, 0};
	int rc = 0;

	*out = NULL;
	if (base_len < 2 * BLOCK || len < 2 * BLOCK || base_len > UINT32_MAX || len > UINT32_MAX)
		return 0;
	if (index_blocks(&ix, base, base_len) < 0 || !(d.p = malloc(d.cap)))
		rc = -1;
	if (rc == 0) {
		d.n += put_varint(d.p, base_len);
		d.n += put_varint(d.p + d.n, len);
		scan_target(&d, &ix, base, base_len, target, len);
		if (!d.full)
			rc = encode_entry(enc, 7 /* OBJ_REF_DELTA */, base_id, d.p, d.n, out,
					  out_len, crc) < 0
				 ? -1
				 : 1;
	}
	free(ix.slot);
	free(d.p);
	return rc;
}

/* ---- reading entries back (objects handed over without their content) ---- */

#define INFLATE_MAX_RATIO 1032 /* deflate expands at most this much */

int rq_odb_pack_entry_parse(const unsigned char *e, size_t len, size_t rawsz,
			    rq_odb_pack_entry_info *info)
{
	size_t pos = 0;
	uint64_t size;
	unsigned shift = 4;

	memset(info, 0, sizeof(*info));
	if (!len)
		return -1;
	info->code = (e[0] >> 4) & 7;
	size = e[0] & 0x0f;
	while (e[pos] & 0x80) {
		if (++pos >= len || shift > 57)
			return -1;
		size |= (uint64_t)(e[pos] & 0x7f) << shift;
		shift += 7;
	}
	pos++;
	if (info->code == 7) {
		if (len - pos < rawsz)
			return -1;
		memcpy(info->base.id, e + pos, rawsz); /* the rest zero (memset) */
		pos += rawsz;
	} else if (info->code < 1 || info->code > 4) {
		return -1;
	}
	if (size > SIZE_MAX / 2)
		return -1;
	info->size = (size_t)size;
	info->zdata = e + pos;
	info->zlen = len - pos;
	return 0;
}

int rq_odb_pack_inflate(const unsigned char *z, size_t zlen, size_t size, unsigned char **out)
{
	struct libdeflate_decompressor *d;
	unsigned char *buf;
	size_t in_used = 0;
	enum libdeflate_result r = LIBDEFLATE_BAD_DATA;

	*out = NULL;
	/* no buffer for more than zlen bytes can inflate to */
	if (size / INFLATE_MAX_RATIO > zlen || size >= SIZE_MAX / 2)
		return -1;
	d = libdeflate_alloc_decompressor();
	buf = malloc(size + 1);
	/* exactly size bytes (more is LIBDEFLATE_INSUFFICIENT_SPACE, fewer
	 * LIBDEFLATE_SHORT_OUTPUT), and the stream must end the entry */
	if (d && buf)
		r = libdeflate_zlib_decompress_ex(d, z, zlen, buf, size, &in_used, NULL);
	libdeflate_free_decompressor(d);
	if (r != LIBDEFLATE_SUCCESS || in_used != zlen) {
		free(buf);
		return -1;
	}
	buf[size] = '\0';
	*out = buf;
	return 0;
}

static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned shift = 0;
	*v = 0;
	do {
		if (*p >= end || shift > 56) /* 63 bits: more than any size */
			return -1;
		*v |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	return 0;
}

/* One instruction of a delta at *p: a copy of base[*off, *off + *k) (*lit
 * NULL) or an insert of the *k bytes at *lit. 0, or -1 when it runs past
 * the delta's end or out of the base, or is the reserved code 0. */
static int delta_op(const unsigned char **p, const unsigned char *end, size_t base_len,
		    const unsigned char **lit, size_t *off, size_t *k)
{
	unsigned char op = *(*p)++;

	*lit = NULL;
	*off = *k = 0;
	if (!(op & 0x80)) {
		if (!op || op > (size_t)(end - *p))
			return -1;
		*lit = *p;
		*k = op;
		*p += op;
		return 0;
	}
	for (int i = 0; i < 7; i++) {
		if (!(op & (1u << i)))
			continue;
		if (*p >= end)
			return -1;
		if (i < 4)
			*off |= (size_t) * (*p)++ << (8 * i);
		else
			*k |= (size_t) * (*p)++ << (8 * (i - 4));
	}
	if (!*k)
		*k = 0x10000;
	return *off > base_len || *k > base_len - *off ? -1 : 0;
}

/* Run the instructions from p to end: with buf, write the result there;
 * without, only check them. The result's length, or SIZE_MAX when an
 * instruction is malformed or the result would pass limit bytes. */
static size_t run_delta(const unsigned char *p, const unsigned char *end, const unsigned char *base,
			size_t base_len, size_t limit, unsigned char *buf)
{
	size_t n = 0;

	while (p < end) {
		const unsigned char *lit;
		size_t off, k;
		if (delta_op(&p, end, base_len, &lit, &off, &k) < 0 || k > limit - n)
			return SIZE_MAX;
		if (buf)
			memcpy(buf + n, lit ? lit : base + off, k);
		n += k;
	}
	return n;
}

/* The result's size is checked against the instructions before it is
 * allocated: a delta that announces more than it makes is refused, not
 * given a buffer of its word. */
int rq_odb_pack_apply_delta(const unsigned char *base, size_t base_len, const unsigned char *delta,
			    size_t delta_len, unsigned char **out, size_t *out_len)
{
	const unsigned char *p = delta, *end = delta + delta_len;
	uint64_t src, dst;
	unsigned char *buf;

	*out = NULL;
	if (get_varint(&p, end, &src) < 0 || get_varint(&p, end, &dst) < 0 || src != base_len ||
	    dst >= SIZE_MAX / 2 || run_delta(p, end, base, base_len, (size_t)dst, NULL) != dst)
		return -2;
	if (!(buf = malloc((size_t)dst + 1)))
		return -1;
	run_delta(p, end, base, base_len, (size_t)dst, buf);
	buf[dst] = '\0';
	*out = buf;
	*out_len = (size_t)dst;
	return 0;
}

int rq_odb_pack_delta_size(const unsigned char *delta, size_t delta_len, size_t *size)
{
	const unsigned char *p = delta, *end = delta + delta_len;
	uint64_t src, dst;

	if (get_varint(&p, end, &src) < 0 || get_varint(&p, end, &dst) < 0 || dst >= SIZE_MAX / 2)
		return -1;
	*size = (size_t)dst;
	return 0;
}

/* ---- reading an index ---- */

#define IDX_HEAD   8	     /* magic and version */
#define IDX_FANOUT (256 * 4) /* the fan-out */

uint32_t rq_odb_pack_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int rq_odb_pack_idx_parse(const unsigned char *p, size_t len, size_t rawsz, rq_odb_pack_idx *ix)
{
	size_t min;

	memset(ix, 0, sizeof(*ix));
	if (len < IDX_HEAD + IDX_FANOUT + 2 * rawsz || memcmp(p, "\377tOc\0\0\0\2", 8))
		return RQ_ODB_PACK_IDX_SHORT;
	ix->nr = rq_odb_pack_be32(p + IDX_HEAD + 255 * 4);
	min = IDX_HEAD + IDX_FANOUT + (size_t)ix->nr * (rawsz + 8) + 2 * rawsz;
	/* a large offset for every entry but the first at most (git's check:
	 * an index of the other object format fails it) */
	if (len < min || (len - min) / 8 > (ix->nr ? ix->nr - 1 : 0))
		return RQ_ODB_PACK_IDX_SIZE;
	if ((len - min) % 8)
		return RQ_ODB_PACK_IDX_CORRUPT;
	ix->fanout = p + IDX_HEAD;
	if (!rq_odb_pack_fanout_ok(ix->fanout, ix->nr))
		return RQ_ODB_PACK_IDX_FANOUT;
	ix->rawsz = rawsz;
	ix->ids = ix->fanout + IDX_FANOUT;
	ix->crcs = ix->ids + (size_t)ix->nr * rawsz;
	ix->off32 = ix->crcs + (size_t)ix->nr * 4;
	ix->off64 = ix->off32 + (size_t)ix->nr * 4;
	ix->n64 = (len - min) / 8;
	ix->pack_sum = p + len - 2 * rawsz;
	return 0;
}

int rq_odb_pack_fanout_ok(const unsigned char *fanout, uint32_t nr)
{
	uint32_t prev = 0;

	for (int b = 0; b < 256; b++) {
		uint32_t n = rq_odb_pack_be32(fanout + (size_t)b * 4);
		if (n < prev)
			return 0;
		prev = n;
	}
	return prev == nr;
}

/* The search at one width: inlined into the two callers below with w a
 * constant, so that SHA-1's compares stay 20-byte ones (no width is looked
 * up per probe). */
static inline int fanout_search(const unsigned char *fanout, const unsigned char *ids,
				size_t stride, uint32_t nr, const unsigned char *id, size_t w,
				uint32_t *pos)
{
	uint32_t lo = id[0] ? rq_odb_pack_be32(fanout + (size_t)(id[0] - 1) * 4) : 0;
	uint32_t hi = rq_odb_pack_be32(fanout + (size_t)id[0] * 4);

	if (hi > nr || lo > hi)
		return 0;
	while (lo < hi) { /* the first id not below */
		uint32_t mid = lo + (hi - lo) / 2;
		if (memcmp(ids + (size_t)mid * stride, id, w) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= nr || memcmp(ids + (size_t)lo * stride, id, w))
		return 0;
	*pos = lo;
	return 1;
}

static int fanout_search20(const unsigned char *fanout, const unsigned char *ids, size_t stride,
			   uint32_t nr, const unsigned char *id, uint32_t *pos)
{
	return fanout_search(fanout, ids, stride, nr, id, 20, pos);
}

static int fanout_search32(const unsigned char *fanout, const unsigned char *ids, size_t stride,
			   uint32_t nr, const unsigned char *id, uint32_t *pos)
{
	return fanout_search(fanout, ids, stride, nr, id, 32, pos);
}

int rq_odb_pack_fanout_find(const unsigned char *fanout, const unsigned char *ids, size_t stride,
			    uint32_t nr, const unsigned char *id, size_t rawsz, uint32_t *pos)
{
	return rawsz == 20 ? fanout_search20(fanout, ids, stride, nr, id, pos)
			   : fanout_search32(fanout, ids, stride, nr, id, pos);
}

int rq_odb_pack_idx_offset(const rq_odb_pack_idx *ix, uint32_t pos, uint64_t *off)
{
	uint32_t o = rq_odb_pack_be32(ix->off32 + (size_t)pos * 4);
	const unsigned char *q;

	if (!(o & 0x80000000u)) {
		*off = o;
		return 0;
	}
	o &= 0x7fffffffu;
	if (o >= ix->n64)
		return -1;
	q = ix->off64 + (size_t)o * 8;
	*off = (uint64_t)rq_odb_pack_be32(q) << 32 | rq_odb_pack_be32(q + 4);
	return 0;
}

int rq_odb_pack_idx_find(const rq_odb_pack_idx *ix, const unsigned char *id, uint64_t *off)
{
	uint32_t pos;

	return rq_odb_pack_fanout_find(ix->fanout, ix->ids, ix->rawsz, ix->nr, id, ix->rawsz,
				       &pos) &&
	       rq_odb_pack_idx_offset(ix, pos, off) == 0;
}

void rq_odb_pack_idx_prefix(const rq_odb_pack_idx *ix, const rq_oid_algo *algo,
			    const rq_oid *prefix, size_t nhex, rq_oid *full, int *found)
{
	unsigned b = prefix->id[0];
	uint32_t lo = b ? rq_odb_pack_be32(ix->fanout + 4 * (b - 1)) : 0;
	uint32_t hi = rq_odb_pack_be32(ix->fanout + 4 * b);

	if (hi > ix->nr || lo > hi)
		return;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (memcmp(ix->ids + (size_t)mid * ix->rawsz, prefix->id, ix->rawsz) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->nr && *found < 2; lo++) {
		rq_oid id;
		rq_oid_from_raw(&id, algo, ix->ids + (size_t)lo * ix->rawsz);
		if (!rq_oid_has_prefix(&id, prefix, nhex))
			break;
		if (*found && rq_oid_eq(&id, full))
			continue;
		if (!(*found)++)
			*full = id;
	}
}
