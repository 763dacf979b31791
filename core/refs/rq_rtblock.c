/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtblock: one block of a reftable and its records (see rq_rtblock.h).
 * Each record is checked as it is read: its lengths against the bytes the
 * block has, its key against the one before it.
 */
#include "rq_rtblock.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rq_mem.h"

#define MAX_BLOCK 0xffffff /* a block length is 24 bits */

int rq_rtblock_damaged(rq_error *err, const rq_rtable *t, size_t off, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return rq_error_set(err, RQ_E_BAD_REPO, "reftable '%s' is damaged: %s at offset %zu",
			    t->name, what, off);
}

/* git's varint (that of ofs-delta): 0 and *pos moved past it, or -1 when
 * it runs past end or does not fit 64 bits. */
static int varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *out)
{
	size_t p = *pos;
	uint64_t v;

	if (p >= end)
		return -1;
	v = b[p] & 0x7f;
	while (b[p] & 0x80) {
		if (++p >= end || v >= (UINT64_MAX >> 7))
			return -1;
		v = ((v + 1) << 7) | (b[p] & 0x7f);
	}
	*pos = p + 1;
	*out = v;
	return 0;
}

int rq_rtblock_keycmp(const void *a, size_t al, const void *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* ---- blocks ---- */

/* The restart table at the end of the block: its count, and where the
 * records end. */
static int read_restarts(rq_rtable_iter *it, rq_error *err)
{
	size_t first = it->hoff + 4;

	if (it->blen < first + 2)
		return rq_rtblock_damaged(err, it->t, it->off, "block of %zu bytes", it->blen);
	it->nrestart = rq_rtblock_be16(it->blk + it->blen - 2);
	if (it->nrestart == 0 || 3 * it->nrestart + 2 > it->blen - first)
		return rq_rtblock_damaged(err, it->t, it->off,
					  "%zu restart points in a block of %zu bytes",
					  it->nrestart, it->blen);
	it->rend = it->blen - 2 - 3 * it->nrestart;
	if (it->rend <= first)
		return rq_rtblock_damaged(err, it->t, it->off, "block without records");
	it->pos = first;
	it->base_len = 0;
	return 0;
}

/* Where the block after the one at off (of len bytes) starts: an aligned
 * table pads blocks with zeros to its block size, but may leave the last
 * block of a section unpadded (the byte after it is then not zero). */
static size_t next_block(const rq_rtable *t, size_t off, size_t len)
{
	size_t end = off + len;

	if (t->block_size && len < t->block_size && end < t->body_end && t->data[end] == 0)
		return off + t->block_size;
	return end;
}

static int load_log_block(rq_rtable_iter *it, size_t blen, rq_error *err)
{
	const rq_rtable *t = it->t;
	size_t hdr = it->hoff + 4;
	uLongf dlen;
	uLong slen = t->body_end - it->off - hdr;
	uint8_t *z;

	if (blen < hdr + 2)
		return rq_rtblock_damaged(err, t, it->off, "log block of %zu bytes", blen);
	if (!(z = rq_mem_grow(it->zbuf, &it->zcap, blen, 1, 4096)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	it->zbuf = z;
	memcpy(z, t->data + it->off, hdr);
	dlen = blen - hdr;
	if (uncompress2(z + hdr, &dlen, t->data + it->off + hdr, &slen) != Z_OK ||
	    dlen != blen - hdr)
		return rq_rtblock_damaged(err, t, it->off,
					  "log block does not inflate to %zu bytes", blen);
	it->blk = z;
	it->blen = blen;
	it->next_off = it->off + hdr + slen;
	return read_restarts(it, err);
}

/* Load the block at off: 0, 1 when no block of the iterator's type is
 * there (the section ended), -1 damaged. */
int rq_rtblock_load(rq_rtable_iter *it, size_t off, rq_error *err)
{
	const rq_rtable *t = it->t;
	size_t hoff = off == 0 ? t->hsize : 0, blen;

	if (off >= t->body_end || t->body_end - off < hoff + 4 || t->data[off + hoff] != it->typ)
		return 1;
	it->off = off;
	it->hoff = hoff;
	it->have_prev = it->reread = 0;
	blen = rq_rtblock_be24(t->data + off + hoff + 1);
	if (it->typ == 'g')
		return load_log_block(it, blen, err);
	if (blen > t->body_end - off)
		return rq_rtblock_damaged(err, t, off, "block of %zu bytes runs past the end",
					  blen);
	it->blk = t->data + off;
	it->blen = blen;
	it->next_off = next_block(t, off, blen);
	return read_restarts(it, err);
}

/* ---- records ---- */

/*
 * The key of the record at it->pos, built on the key before it, in
 * it->key itself: its first prefix bytes stay, the suffix replaces the
 * rest, so that a record costs its suffix, not its whole key (a block of
 * keys each one byte longer than the last was quadratic). The order is
 * checked on what differs: the suffix against the old key's rest.
 */
static int read_key(rq_rtable_iter *it, unsigned *extra, rq_error *err)
{
	uint64_t prefix, sl, suffix;
	size_t at = it->pos;
	const char *s;

	if (varint(it->blk, it->rend, &it->pos, &prefix) < 0 ||
	    varint(it->blk, it->rend, &it->pos, &sl) < 0)
		return rq_rtblock_damaged(err, it->t, it->off + at, "bad record header");
	suffix = sl >> 3;
	*extra = (unsigned)(sl & 7);
	if (prefix > it->base_len || suffix > it->rend - it->pos || prefix + suffix == 0)
		return rq_rtblock_damaged(err, it->t, it->off + at, "bad key length");
	if (prefix + suffix > RQ_RTABLE_KEY_MAX)
		return rq_rtblock_damaged(err, it->t, it->off + at, "key of %llu bytes",
					  (unsigned long long)(prefix + suffix));
	s = (const char *)it->blk + it->pos;
	if (it->have_prev && !it->reread &&
	    rq_rtblock_keycmp(s, (size_t)suffix, it->key.p + prefix,
			      it->key.len - (size_t)prefix) <= 0)
		return rq_rtblock_damaged(err, it->t, it->off + at, "keys out of order");
	it->key.len = (size_t)prefix;
	rq_buf_add(&it->key, s, (size_t)suffix);
	it->pos += (size_t)suffix;
	if (it->key.oom)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	it->reread = 0;
	it->have_prev = 1;
	it->base_len = it->key.len;
	it->nread++;
	return 0;
}

/* An id of the table's width (the bytes past it stay zero). */
static int read_id(rq_rtable_iter *it, rq_oid *id, rq_error *err)
{
	size_t n = it->t->hash;

	if (it->rend - it->pos < n)
		return rq_rtblock_damaged(err, it->t, it->off + it->pos,
					  "object id runs past the block");
	rq_oid_from_raw(id, it->t->algo, it->blk + it->pos);
	it->pos += n;
	return 0;
}

/* A length-prefixed string into it->val (after a NUL that ends the one
 * before); *at gets its offset there. */
static int read_str(rq_rtable_iter *it, size_t *at, rq_error *err)
{
	uint64_t n;
	size_t p = it->pos;

	if (varint(it->blk, it->rend, &it->pos, &n) < 0 || n > it->rend - it->pos)
		return rq_rtblock_damaged(err, it->t, it->off + p, "string runs past the block");
	if (memchr(it->blk + it->pos, 0, (size_t)n))
		return rq_rtblock_damaged(err, it->t, it->off + p, "string with a NUL byte");
	if (it->val.len)
		rq_buf_add(&it->val, "", 1);
	*at = it->val.len;
	rq_buf_add(&it->val, (const char *)it->blk + it->pos, (size_t)n);
	it->pos += (size_t)n;
	return it->val.oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

static int ref_value(rq_rtable_iter *it, unsigned type, rq_error *err)
{
	rq_rtable_ref *r = &it->ref;
	uint64_t delta;
	size_t p = it->pos, at;

	if (varint(it->blk, it->rend, &it->pos, &delta) < 0 || delta > UINT64_MAX - it->t->min_ui)
		return rq_rtblock_damaged(err, it->t, it->off + p, "bad update index");
	memset(r, 0, sizeof(*r));
	r->update_index = it->t->min_ui + delta;
	if (r->update_index > it->t->max_ui)
		return rq_rtblock_damaged(err, it->t, it->off + p,
					  "update index out of the table's range");
	r->type = (int)type;
	if (type == RQ_RTABLE_VAL1 || type == RQ_RTABLE_VAL2)
		if (read_id(it, &r->value, err) < 0)
			return -1;
	if (type == RQ_RTABLE_VAL2 && read_id(it, &r->peeled, err) < 0)
		return -1;
	if (type == RQ_RTABLE_SYMREF) {
		it->val.len = 0;
		if (read_str(it, &at, err) < 0)
			return -1;
		r->target = it->val.p + at;
	}
	if (type > RQ_RTABLE_SYMREF)
		return rq_rtblock_damaged(err, it->t, it->off + p, "unknown ref value type %u",
					  type);
	if (memchr(it->key.p, 0, it->key.len))
		return rq_rtblock_damaged(err, it->t, it->off + p, "ref name with a NUL byte");
	r->name = it->key.p;
	r->name_len = it->key.len;
	return 0;
}

static int log_update(rq_rtable_iter *it, rq_error *err)
{
	rq_rtable_log *l = &it->log;
	size_t name, email, msg, p;
	uint32_t tz;

	if (read_id(it, &l->old_id, err) < 0 || read_id(it, &l->new_id, err) < 0)
		return -1;
	it->val.len = 0;
	if (read_str(it, &name, err) < 0 || read_str(it, &email, err) < 0)
		return -1;
	p = it->pos;
	if (varint(it->blk, it->rend, &it->pos, &l->time) < 0 || it->rend - it->pos < 2)
		return rq_rtblock_damaged(err, it->t, it->off + p, "bad log time");
	tz = rq_rtblock_be16(it->blk + it->pos);
	it->pos += 2;
	l->tz = tz >= 0x8000 ? (int)tz - 0x10000 : (int)tz;
	if (read_str(it, &msg, err) < 0)
		return -1;
	l->name = it->val.p + name;
	l->email = it->val.p + email;
	l->message = it->val.p + msg;
	return 0;
}

static int log_value(rq_rtable_iter *it, unsigned type, rq_error *err)
{
	rq_rtable_log *l = &it->log;
	size_t klen = it->key.len, at = it->pos;

	memset(l, 0, sizeof(*l));
	if (klen < 10 || it->key.p[klen - 9] != 0 || memchr(it->key.p, 0, klen - 9))
		return rq_rtblock_damaged(err, it->t, it->off + at, "bad log key");
	l->refname = it->key.p;
	l->update_index = UINT64_MAX - rq_rtblock_be64((const uint8_t *)it->key.p + klen - 8);
	l->type = (int)type;
	if (type == RQ_RTABLE_LOG_UPDATE)
		return log_update(it, err);
	if (type != RQ_RTABLE_LOG_DELETION)
		return rq_rtblock_damaged(err, it->t, it->off + at, "unknown log type %u", type);
	return 0;
}

static int obj_value(rq_rtable_iter *it, unsigned cnt, rq_error *err)
{
	uint64_t n = cnt, v, pos = 0, *np;
	size_t at = it->pos;

	if (it->key.len != it->t->obj_id_len)
		return rq_rtblock_damaged(err, it->t, it->off + at, "obj key of %zu bytes",
					  it->key.len);
	if (!cnt && varint(it->blk, it->rend, &it->pos, &n) < 0)
		return rq_rtblock_damaged(err, it->t, it->off + at, "bad position count");
	if (n > it->rend - it->pos)
		return rq_rtblock_damaged(err, it->t, it->off + at, "%llu positions",
					  (unsigned long long)n);
	if (!(np = rq_mem_grow(it->obj_pos, &it->objcap, n ? (size_t)n : 1, sizeof(*np), 8)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	it->obj_pos = np;
	for (it->nobj = 0; it->nobj < n; it->nobj++) {
		if (varint(it->blk, it->rend, &it->pos, &v) < 0 || v > UINT64_MAX - pos ||
		    (it->nobj && !v) || pos + v >= it->t->body_end)
			return rq_rtblock_damaged(err, it->t, it->off + at, "bad block position");
		pos += v;
		it->obj_pos[it->nobj] = pos;
	}
	return 0;
}

static int record_value(rq_rtable_iter *it, unsigned extra, rq_error *err)
{
	size_t at = it->pos;

	switch (it->typ) {
	case 'r':
		return ref_value(it, extra, err);
	case 'g':
		return log_value(it, extra, err);
	case 'o':
		return obj_value(it, extra, err);
	default:
		if (extra || varint(it->blk, it->rend, &it->pos, &it->idx_pos) < 0 ||
		    it->idx_pos >= it->t->body_end)
			return rq_rtblock_damaged(err, it->t, it->off + at, "bad index record");
		return 0;
	}
}

int rq_rtblock_record(rq_rtable_iter *it, rq_error *err)
{
	unsigned extra;

	return read_key(it, &extra, err) < 0 || record_value(it, extra, err) < 0 ? -1 : 0;
}

/* Decode the next record: 0, 1 at the end of the section, -1. */
int rq_rtblock_step(rq_rtable_iter *it, rq_error *err)
{
	unsigned extra;
	int r;

	while (!it->ended && it->pos >= it->rend) {
		size_t next = it->next_off;
		if ((r = rq_rtblock_load(it, next, err)) < 0)
			return -1;
		it->ended = r;
		it->have_prev = 1; /* keys go on growing from block to block */
	}
	if (it->ended)
		return 1;
	if (read_key(it, &extra, err) < 0 || record_value(it, extra, err) < 0)
		return -1;
	return 0;
}

/* ---- seeking within a block ---- */

static size_t restart_at(const rq_rtable_iter *it, size_t i)
{
	return rq_rtblock_be24(it->blk + it->rend + 3 * i);
}

/* Read the (whole) key at restart point i. */
static int restart_key(rq_rtable_iter *it, size_t i, rq_error *err)
{
	size_t off = restart_at(it, i);
	unsigned extra;

	if (off < it->hoff + 4 || off >= it->rend)
		return rq_rtblock_damaged(err, it->t, it->off,
					  "restart offset %zu out of its block", off);
	it->pos = off;
	it->base_len = 0;
	it->have_prev = it->reread = 0;
	return read_key(it, &extra, err);
}

/*
 * Position it before the first record of its block whose key is >= want:
 * a binary search over the restart points, then a scan from the last one
 * before want. 1 when there is such a record, 0 when every key of the
 * block is smaller, -1 damaged.
 */
int rq_rtblock_seek(rq_rtable_iter *it, const void *want, size_t wlen, rq_error *err)
{
	size_t lo = 0, hi = it->nrestart;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (restart_key(it, mid, err) < 0)
			return -1;
		if (rq_rtblock_keycmp(it->key.p, it->key.len, want, wlen) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	it->pos = lo ? restart_at(it, lo - 1) : it->hoff + 4;
	it->base_len = 0;
	it->have_prev = 0;
	while (it->pos < it->rend) {
		size_t at = it->pos, base = it->base_len;
		int had = it->have_prev;
		unsigned extra;
		if (read_key(it, &extra, err) < 0)
			return -1;
		if (rq_rtblock_keycmp(it->key.p, it->key.len, want, wlen) >= 0) {
			/* back to before this record: read again, it makes the
			 * same key (its prefix is the same in either key) */
			it->pos = at;
			it->base_len = base;
			it->have_prev = had;
			it->reread = 1;
			return 1;
		}
		if (record_value(it, extra, err) < 0)
			return -1;
	}
	return 0;
}
