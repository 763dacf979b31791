/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_pack: version 2 packfiles and indexes.
 */
#include "rq_odb_pack.h"
#include "rq_sha1.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* one deflate state for many objects: deflateInit costs a large allocation */
struct rq_odb_pack_encoder {
	z_stream z[2]; /* small objects, large objects */
	int ready[2];
	int level; /* zlib's: -1 (its default, 6) to 9 */
};

/*
 * Objects a replay writes are mostly trees and commits of a few hundred
 * bytes. deflateReset() clears the hash table, 2^(memLevel + 8) bytes: with
 * zlib's default memLevel (8) that is 64 KiB per object, more than the
 * compression itself. memLevel 2 makes it 1 KiB; for objects this small
 * the output is the same size or within a few bytes. Larger objects get
 * zlib's defaults.
 */
#define SMALL_MEMLEVEL 2
#define SMALL_MAX      16384

rq_odb_pack_encoder *rq_odb_pack_encoder_new(void)
{
	return rq_odb_pack_encoder_new_level(Z_DEFAULT_COMPRESSION);
}

rq_odb_pack_encoder *rq_odb_pack_encoder_new_level(int level)
{
	rq_odb_pack_encoder *enc = calloc(1, sizeof(rq_odb_pack_encoder));

	if (enc)
		enc->level = level < -1 || level > 9 ? Z_DEFAULT_COMPRESSION : level;
	return enc;
}

int rq_odb_pack_compression_level(git_repository *repo)
{
	git_config *cfg = NULL, *snap = NULL;
	int level = Z_DEFAULT_COMPRESSION, v;

	if (git_repository_config(&cfg, repo) == 0 && git_config_snapshot(&snap, cfg) == 0) {
		if (git_config_get_int32(&v, snap, "pack.compression") == 0 ||
		    git_config_get_int32(&v, snap, "core.compression") == 0)
			level = v < -1 || v > 9 ? Z_DEFAULT_COMPRESSION : v;
	}
	git_config_free(snap);
	git_config_free(cfg);
	return level;
}

void rq_odb_pack_encoder_free(rq_odb_pack_encoder *enc)
{
	if (!enc)
		return;
	for (int i = 0; i < 2; i++)
		if (enc->ready[i])
			deflateEnd(&enc->z[i]);
	free(enc);
}

/* One entry: header (type code, size), the base id for a REF_DELTA, then
 * the zlib stream of payload. */
static int encode_entry(rq_odb_pack_encoder *enc, unsigned type, const git_oid *base,
			const void *payload, size_t len, unsigned char **out, size_t *out_len,
			uint32_t *crc)
{
	int big = len > SMALL_MAX;
	z_stream *z = &enc->z[big];
	unsigned char head[16 + GIT_OID_RAWSZ];
	size_t nh = 0, bound;
	uint64_t size = len;
	unsigned char *buf;

	*out = NULL;
	if (len > (size_t)UINT_MAX)
		return -1; /* zlib's counters are 32-bit; replays never write such objects */
	head[nh] = (unsigned char)((type & 7) << 4 | (size & 0x0f));
	size >>= 4;
	while (size) {
		head[nh++] |= 0x80;
		head[nh] = (unsigned char)(size & 0x7f);
		size >>= 7;
	}
	nh++;
	if (base) {
		memcpy(head + nh, base->id, GIT_OID_RAWSZ);
		nh += GIT_OID_RAWSZ;
	}
	if (!enc->ready[big]) {
		memset(z, 0, sizeof(*z));
		if (deflateInit2(z, enc->level, Z_DEFLATED, 15, big ? 8 : SMALL_MEMLEVEL,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		enc->ready[big] = 1;
	} else if (deflateReset(z) != Z_OK) {
		return -1;
	}
	bound = deflateBound(z, (uLong)len);
	if (!(buf = malloc(nh + bound)))
		return -1;
	memcpy(buf, head, nh);
	z->next_in = (Bytef *)(uintptr_t)payload;
	z->avail_in = (uInt)len;
	z->next_out = buf + nh;
	z->avail_out = (uInt)bound;
	if (deflate(z, Z_FINISH) != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out_len = nh + (bound - z->avail_out);
	*crc = (uint32_t)crc32(0L, buf, (uInt)*out_len);
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

int rq_odb_pack_encode_delta(rq_odb_pack_encoder *enc, const git_oid *base_id, const void *base,
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

/* ---- reading entries back (objects handed over without their content) ---- */

int rq_odb_pack_entry_parse(const unsigned char *e, size_t len, rq_odb_pack_entry_info *info)
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
		if (len - pos < GIT_OID_RAWSZ)
			return -1;
		git_oid_fromraw(&info->base, e + pos);
		pos += GIT_OID_RAWSZ;
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
	z_stream s;
	unsigned char *buf = malloc(size + 1);
	int r;

	*out = NULL;
	if (!buf || zlen > UINT_MAX || size > UINT_MAX) {
		free(buf);
		return -1;
	}
	memset(&s, 0, sizeof(s));
	if (inflateInit(&s) != Z_OK) {
		free(buf);
		return -1;
	}
	s.next_in = (Bytef *)(uintptr_t)z;
	s.avail_in = (uInt)zlen;
	s.next_out = buf;
	s.avail_out = (uInt)size + 1; /* one spare byte: a longer stream is caught */
	r = inflate(&s, Z_FINISH);
	inflateEnd(&s);
	if (r != Z_STREAM_END || s.total_out != size) {
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
		if (*p >= end || shift > 63)
			return -1;
		*v |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	return 0;
}

int rq_odb_pack_apply_delta(const unsigned char *base, size_t base_len, const unsigned char *delta,
			    size_t delta_len, unsigned char **out, size_t *out_len)
{
	const unsigned char *p = delta, *end = delta + delta_len;
	uint64_t src, dst;
	unsigned char *buf;
	size_t n = 0;

	*out = NULL;
	if (get_varint(&p, end, &src) < 0 || get_varint(&p, end, &dst) < 0 || src != base_len ||
	    dst > SIZE_MAX / 2)
		return -1;
	if (!(buf = malloc((size_t)dst + 1)))
		return -1;
	while (p < end) {
		unsigned char op = *p++;
		if (op & 0x80) {
			size_t off = 0, k = 0;
			for (int i = 0; i < 4; i++)
				if (op & (1u << i)) {
					if (p >= end)
						goto bad;
					off |= (size_t)*p++ << (8 * i);
				}
			for (int i = 0; i < 3; i++)
				if (op & (0x10u << i)) {
					if (p >= end)
						goto bad;
					k |= (size_t)*p++ << (8 * i);
				}
			if (!k)
				k = 0x10000;
			if (off > base_len || k > base_len - off || k > dst - n)
				goto bad;
			memcpy(buf + n, base + off, k);
			n += k;
		} else if (op) {
			if (op > (size_t)(end - p) || op > dst - n)
				goto bad;
			memcpy(buf + n, p, op);
			p += op;
			n += op;
		} else {
			goto bad; /* reserved */
		}
	}
	if (n != dst)
		goto bad;
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return 0;
bad:
	free(buf);
	return -1;
}

typedef struct out {
	int fd;
	rq_sha1 sha;
	unsigned char buf[1 << 16];
	size_t n;
	uint64_t total;
	int bad;
} out;

static void flush_out(out *o)
{
	for (size_t off = 0; off < o->n && !o->bad;) {
		ssize_t w = write(o->fd, o->buf + off, o->n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->bad = errno ? errno : EIO;
		else
			off += (size_t)w;
	}
	o->n = 0;
}

/* Write and hash. */
static void put(out *o, const void *p, size_t n)
{
	const unsigned char *c = p;
	rq_sha1_update(&o->sha, p, n);
	o->total += n;
	while (n && !o->bad) {
		size_t take = sizeof(o->buf) - o->n < n ? sizeof(o->buf) - o->n : n;
		memcpy(o->buf + o->n, c, take);
		o->n += take;
		c += take;
		n -= take;
		if (o->n == sizeof(o->buf))
			flush_out(o);
	}
}

static void put_be32(out *o, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	put(o, b, 4);
}

/* Finish: the checksum trailer, sync, close. 0 or -1 with errno. */
static int close_out(out *o, unsigned char sum[20])
{
	rq_sha1_final(&o->sha, sum);
	/* the trailer itself is not hashed */
	for (size_t i = 0; i < 20 && !o->bad; i++) {
		if (o->n == sizeof(o->buf))
			flush_out(o);
		o->buf[o->n++] = sum[i];
	}
	o->total += 20;
	flush_out(o);
	if (!o->bad && fsync(o->fd) < 0)
		o->bad = errno;
	if (!o->bad && fchmod(o->fd, 0444) < 0)
		o->bad = errno;
	if (close(o->fd) < 0 && !o->bad)
		o->bad = errno;
	o->fd = -1;
	if (o->bad) {
		errno = o->bad;
		return -1;
	}
	return 0;
}

static int open_out(out *o, char *tmpl)
{
	o->n = 0;
	o->total = 0;
	o->bad = 0;
	rq_sha1_init(&o->sha);
	o->fd = mkstemp(tmpl);
	return o->fd < 0 ? -1 : 0;
}

/* What the index says of an entry. */
typedef struct idx_ent {
	git_oid id;
	uint32_t crc;
	uint64_t off;
} idx_ent;

static int cmp_idx(const void *a, const void *b)
{
	return git_oid_cmp(&((const idx_ent *)a)->id, &((const idx_ent *)b)->id);
}

int rq_odb_pack_write(const char *dir, const rq_odb_pack_entry *e, size_t n, char name[64],
		      uint64_t *pack_bytes, rq_error *err)
{
	out o;
	char tmp_pack[PATH_MAX], tmp_idx[PATH_MAX], path[PATH_MAX];
	unsigned char pack_sum[20], idx_sum[20];
	idx_ent *ix = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int rc = -1;

	name[0] = '\0';
	tmp_pack[0] = tmp_idx[0] = '\0';
	o.fd = -1;
	if (n > UINT32_MAX)
		return rq_error_set(err, RQ_E_INTERNAL, "too many objects for one pack");
	if (!(ix = malloc((n + 1) * sizeof(*ix)))) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	if (snprintf(tmp_pack, sizeof(tmp_pack), "%s/tmp_pack_XXXXXX", dir) >=
		(int)sizeof(tmp_pack) ||
	    snprintf(tmp_idx, sizeof(tmp_idx), "%s/tmp_idx_XXXXXX", dir) >= (int)sizeof(tmp_idx)) {
		rq_error_set(err, RQ_E_IO, "pack directory path too long");
		tmp_pack[0] = tmp_idx[0] = '\0';
		goto out;
	}

	/* the pack */
	if (open_out(&o, tmp_pack) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot create a pack in %s: %s", dir, strerror(errno));
		tmp_pack[0] = '\0';
		goto out;
	}
	put(&o, "PACK", 4);
	put_be32(&o, 2);
	put_be32(&o, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		git_oid_cpy(&ix[i].id, &e[i].id);
		ix[i].crc = e[i].crc;
		ix[i].off = o.total;
		put(&o, e[i].data, e[i].len);
	}
	if (close_out(&o, pack_sum) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot write the pack: %s", strerror(errno));
		goto out;
	}
	*pack_bytes = o.total;

	/* its index: fan-out, sorted ids, CRCs, offsets, large offsets, sums */
	qsort(ix, n, sizeof(*ix), cmp_idx);
	if (open_out(&o, tmp_idx) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot create a pack index in %s: %s", dir,
			     strerror(errno));
		tmp_idx[0] = '\0';
		goto out;
	}
	put(&o, "\377tOc", 4);
	put_be32(&o, 2);
	{
		size_t k = 0;
		for (unsigned b = 0; b < 256; b++) {
			while (k < n && ix[k].id.id[0] <= b)
				k++;
			put_be32(&o, (uint32_t)k);
		}
	}
	for (size_t k = 0; k < n; k++)
		put(&o, ix[k].id.id, GIT_OID_RAWSZ);
	for (size_t k = 0; k < n; k++)
		put_be32(&o, ix[k].crc);
	{
		uint32_t large = 0;
		for (size_t k = 0; k < n; k++) {
			uint64_t off = ix[k].off;
			put_be32(&o, off < 0x80000000u ? (uint32_t)off : 0x80000000u | large++);
		}
		for (size_t k = 0; k < n; k++) {
			uint64_t off = ix[k].off;
			if (off >= 0x80000000u) {
				put_be32(&o, (uint32_t)(off >> 32));
				put_be32(&o, (uint32_t)off);
			}
		}
	}
	put(&o, pack_sum, 20);
	if (close_out(&o, idx_sum) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot write the pack index: %s", strerror(errno));
		goto out;
	}

	/* named after the pack's checksum; the pack first, its index last */
	{
		git_oid sum;
		git_oid_fromraw(&sum, pack_sum);
		git_oid_tostr(hex, sizeof(hex), &sum);
	}
	snprintf(name, 64, "pack-%s", hex);
	snprintf(path, sizeof(path), "%s/%s.pack", dir, name);
	if (rename(tmp_pack, path) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot rename %s: %s", tmp_pack, strerror(errno));
		goto out;
	}
	tmp_pack[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s.idx", dir, name);
	if (rename(tmp_idx, path) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot rename %s: %s", tmp_idx, strerror(errno));
		goto out;
	}
	tmp_idx[0] = '\0';
	rc = 0;
out:
	if (o.fd >= 0)
		close(o.fd);
	if (tmp_pack[0])
		unlink(tmp_pack);
	if (tmp_idx[0])
		unlink(tmp_idx);
	if (rc < 0)
		name[0] = '\0';
	free(ix);
	return rc;
}
