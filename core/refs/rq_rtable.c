/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtable: one reftable, read (see rq_rtable.h). The reader checks what
 * it reads as it goes: lengths against the bytes there are, offsets
 * against the section they belong to, each key against the one before it.
 */
#include "rq_rtable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rq_mem.h"

#define MAX_INDEX_DEPTH 8	 /* index levels followed before giving up */
#define MAX_BLOCK	0xffffff /* a block length is 24 bits */

struct rq_rtable {
	char *name;
	const uint8_t *data;
	size_t size;
	int mapped;
	int version;
	size_t hsize, fsize; /* header and footer sizes */
	size_t body_end;     /* where the footer starts */
	uint32_t block_size; /* 0: unaligned */
	uint64_t min_ui, max_ui;
	uint64_t ref_index, obj_pos, obj_index, log_pos, log_index;
	unsigned obj_id_len;
	int has_refs, has_logs;
};

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return be16(p) << 16 | be16(p + 2);
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static int damaged(rq_error *err, const rq_rtable *t, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int damaged(rq_error *err, const rq_rtable *t, size_t off, const char *fmt, ...)
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

static int keycmp(const void *a, size_t al, const void *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* ---- opening ---- */

static int parse_positions(rq_rtable *t, const uint8_t *f, rq_error *err)
{
	uint64_t obj = be64(f + 8);

	t->ref_index = be64(f);
	t->obj_pos = obj >> 5;
	t->obj_id_len = (unsigned)(obj & 31);
	t->obj_index = be64(f + 16);
	t->log_pos = be64(f + 24);
	t->log_index = be64(f + 32);
	if (t->ref_index >= t->body_end || t->obj_pos >= t->body_end ||
	    t->obj_index >= t->body_end || t->log_pos >= t->body_end || t->log_index >= t->body_end)
		return damaged(err, t, t->body_end, "a section position past the end");
	if (t->obj_pos && (t->obj_id_len < 2 || t->obj_id_len > RQ_RTABLE_HASH))
		return damaged(err, t, t->body_end, "object id length %u", t->obj_id_len);
	return 0;
}

/* The header (first bytes) and the footer (last bytes): magic, version,
 * the footer's copy of the header, its CRC-32. */
static int parse_frame(rq_rtable *t, rq_error *err)
{
	const uint8_t *d = t->data, *f;

	if (t->size < 24 + 68 || memcmp(d, "REFT", 4) != 0)
		return damaged(err, t, 0, "no reftable header");
	t->version = d[4];
	if (t->version != 1 && t->version != 2)
		return damaged(err, t, 4, "unknown version %d", t->version);
	t->hsize = t->version == 1 ? 24 : 28;
	t->fsize = t->version == 1 ? 68 : 72;
	if (t->size < t->hsize + t->fsize)
		return damaged(err, t, 0, "too short");
	if (t->version == 2 && memcmp(d + 24, "sha1", 4) != 0)
		return rq_error_set(
		    err, RQ_E_BAD_REPO,
		    "reftable '%s' holds object ids other than SHA-1 (not supported)", t->name);
	t->body_end = t->size - t->fsize;
	f = d + t->body_end;
	if (memcmp(f, d, t->hsize) != 0)
		return damaged(err, t, t->body_end, "the footer does not repeat the header");
	if (crc32(0, f, (uInt)(t->fsize - 4)) != be32(f + t->fsize - 4))
		return damaged(err, t, t->size - 4, "footer checksum mismatch");
	t->block_size = be24(d + 5);
	t->min_ui = be64(d + 8);
	t->max_ui = be64(d + 16);
	if (t->min_ui > t->max_ui)
		return damaged(err, t, 8, "update indexes out of order");
	if (t->max_ui == UINT64_MAX)
		return damaged(err, t, 16, "update index 2^64-1 (the next one would wrap)");
	if (parse_positions(t, f + t->hsize, err) < 0)
		return -1;
	t->has_refs = t->body_end > t->hsize && d[t->hsize] == 'r';
	t->has_logs = t->log_pos > 0 || (t->body_end > t->hsize && d[t->hsize] == 'g');
	return 0;
}

static int open_common(rq_rtable *t, const char *name, rq_error *err)
{
	if (!(t->name = strdup(name))) {
		rq_rtable_free(t);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (parse_frame(t, err) < 0) {
		rq_rtable_free(t);
		return -1;
	}
	return 0;
}

int rq_rtable_open(rq_rtable **out, const char *path, const char *name, rq_error *err)
{
	rq_rtable *t;
	struct stat st;
	int fd, e;
	void *m;

	*out = NULL;
	/* (O_NONBLOCK: a FIFO never blocks; it is refused below) */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0) {
		e = errno;
		if (e == ELOOP)
			rq_error_set(err, RQ_E_BAD_REPO, "reftable '%s' is a symbolic link", name);
		else
			rq_error_set(err, RQ_E_IO, "cannot open reftable '%s': %s", name,
				     strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 24 + 68) {
		close(fd);
		return rq_error_set(err, RQ_E_BAD_REPO, "reftable '%s' is damaged: %s", name,
				    S_ISREG(st.st_mode) ? "too short" : "not a regular file");
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return rq_error_set(err, RQ_E_IO, "cannot map reftable '%s': %s", name,
				    strerror(errno));
	if (!(t = calloc(1, sizeof(*t)))) {
		munmap(m, (size_t)st.st_size);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	t->data = m;
	t->size = (size_t)st.st_size;
	t->mapped = 1;
	if (open_common(t, name, err) < 0)
		return -1;
	*out = t;
	return 0;
}

int rq_rtable_open_mem(rq_rtable **out, const void *data, size_t len, const char *name,
		       rq_error *err)
{
	rq_rtable *t = calloc(1, sizeof(*t));
	uint8_t *copy = malloc(len ? len : 1);

	*out = NULL;
	if (!t || !copy) {
		free(t);
		free(copy);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (len)
		memcpy(copy, data, len);
	t->data = copy;
	t->size = len;
	if (open_common(t, name, err) < 0)
		return -1;
	*out = t;
	return 0;
}

void rq_rtable_free(rq_rtable *t)
{
	if (!t)
		return;
	if (t->mapped)
		munmap((void *)t->data, t->size);
	else
		free((void *)t->data);
	free(t->name);
	free(t);
}

const char *rq_rtable_name(const rq_rtable *t)
{
	return t->name;
}

uint64_t rq_rtable_min_update_index(const rq_rtable *t)
{
	return t->min_ui;
}

uint64_t rq_rtable_max_update_index(const rq_rtable *t)
{
	return t->max_ui;
}

uint64_t rq_rtable_size(const rq_rtable *t)
{
	return t->size;
}

/* ---- blocks ---- */

void rq_rtable_iter_init(rq_rtable_iter *it)
{
	memset(it, 0, sizeof(*it));
	it->ended = 1;
}

void rq_rtable_iter_release(rq_rtable_iter *it)
{
	free(it->zbuf);
	free(it->key.p);
	free(it->val.p);
	free(it->obj_pos);
	rq_rtable_iter_init(it);
}

/* The restart table at the end of the block: its count, and where the
 * records end. */
static int read_restarts(rq_rtable_iter *it, rq_error *err)
{
	size_t first = it->hoff + 4;

	if (it->blen < first + 2)
		return damaged(err, it->t, it->off, "block of %zu bytes", it->blen);
	it->nrestart = be16(it->blk + it->blen - 2);
	if (it->nrestart == 0 || 3 * it->nrestart + 2 > it->blen - first)
		return damaged(err, it->t, it->off, "%zu restart points in a block of %zu bytes",
			       it->nrestart, it->blen);
	it->rend = it->blen - 2 - 3 * it->nrestart;
	if (it->rend <= first)
		return damaged(err, it->t, it->off, "block without records");
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
		return damaged(err, t, it->off, "log block of %zu bytes", blen);
	if (!(z = rq_mem_grow(it->zbuf, &it->zcap, blen, 1, 4096)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	it->zbuf = z;
	memcpy(z, t->data + it->off, hdr);
	dlen = blen - hdr;
	if (uncompress2(z + hdr, &dlen, t->data + it->off + hdr, &slen) != Z_OK ||
	    dlen != blen - hdr)
		return damaged(err, t, it->off, "log block does not inflate to %zu bytes", blen);
	it->blk = z;
	it->blen = blen;
	it->next_off = it->off + hdr + slen;
	return read_restarts(it, err);
}

/* Load the block at off: 0, 1 when no block of the iterator's type is
 * there (the section ended), -1 damaged. */
static int load_block(rq_rtable_iter *it, size_t off, rq_error *err)
{
	const rq_rtable *t = it->t;
	size_t hoff = off == 0 ? t->hsize : 0, blen;

	if (off >= t->body_end || t->body_end - off < hoff + 4 || t->data[off + hoff] != it->typ)
		return 1;
	it->off = off;
	it->hoff = hoff;
	it->have_prev = it->reread = 0;
	blen = be24(t->data + off + hoff + 1);
	if (it->typ == 'g')
		return load_log_block(it, blen, err);
	if (blen > t->body_end - off)
		return damaged(err, t, off, "block of %zu bytes runs past the end", blen);
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
		return damaged(err, it->t, it->off + at, "bad record header");
	suffix = sl >> 3;
	*extra = (unsigned)(sl & 7);
	if (prefix > it->base_len || suffix > it->rend - it->pos || prefix + suffix == 0)
		return damaged(err, it->t, it->off + at, "bad key length");
	if (prefix + suffix > RQ_RTABLE_KEY_MAX)
		return damaged(err, it->t, it->off + at, "key of %llu bytes",
			       (unsigned long long)(prefix + suffix));
	s = (const char *)it->blk + it->pos;
	if (it->have_prev && !it->reread &&
	    keycmp(s, (size_t)suffix, it->key.p + prefix, it->key.len - (size_t)prefix) <= 0)
		return damaged(err, it->t, it->off + at, "keys out of order");
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

static int read_id(rq_rtable_iter *it, git_oid *id, rq_error *err)
{
	if (it->rend - it->pos < RQ_RTABLE_HASH)
		return damaged(err, it->t, it->off + it->pos, "object id runs past the block");
	memcpy(id->id, it->blk + it->pos, RQ_RTABLE_HASH);
	it->pos += RQ_RTABLE_HASH;
	return 0;
}

/* A length-prefixed string into it->val (after a NUL that ends the one
 * before); *at gets its offset there. */
static int read_str(rq_rtable_iter *it, size_t *at, rq_error *err)
{
	uint64_t n;
	size_t p = it->pos;

	if (varint(it->blk, it->rend, &it->pos, &n) < 0 || n > it->rend - it->pos)
		return damaged(err, it->t, it->off + p, "string runs past the block");
	if (memchr(it->blk + it->pos, 0, (size_t)n))
		return damaged(err, it->t, it->off + p, "string with a NUL byte");
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
		return damaged(err, it->t, it->off + p, "bad update index");
	memset(r, 0, sizeof(*r));
	r->update_index = it->t->min_ui + delta;
	if (r->update_index > it->t->max_ui)
		return damaged(err, it->t, it->off + p, "update index out of the table's range");
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
		return damaged(err, it->t, it->off + p, "unknown ref value type %u", type);
	if (memchr(it->key.p, 0, it->key.len))
		return damaged(err, it->t, it->off + p, "ref name with a NUL byte");
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
		return damaged(err, it->t, it->off + p, "bad log time");
	tz = be16(it->blk + it->pos);
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
		return damaged(err, it->t, it->off + at, "bad log key");
	l->refname = it->key.p;
	l->update_index = UINT64_MAX - be64((const uint8_t *)it->key.p + klen - 8);
	l->type = (int)type;
	if (type == RQ_RTABLE_LOG_UPDATE)
		return log_update(it, err);
	if (type != RQ_RTABLE_LOG_DELETION)
		return damaged(err, it->t, it->off + at, "unknown log type %u", type);
	return 0;
}

static int obj_value(rq_rtable_iter *it, unsigned cnt, rq_error *err)
{
	uint64_t n = cnt, v, pos = 0, *np;
	size_t at = it->pos;

	if (it->key.len != it->t->obj_id_len)
		return damaged(err, it->t, it->off + at, "obj key of %zu bytes", it->key.len);
	if (!cnt && varint(it->blk, it->rend, &it->pos, &n) < 0)
		return damaged(err, it->t, it->off + at, "bad position count");
	if (n > it->rend - it->pos)
		return damaged(err, it->t, it->off + at, "%llu positions", (unsigned long long)n);
	if (!(np = rq_mem_grow(it->obj_pos, &it->objcap, n ? (size_t)n : 1, sizeof(*np), 8)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	it->obj_pos = np;
	for (it->nobj = 0; it->nobj < n; it->nobj++) {
		if (varint(it->blk, it->rend, &it->pos, &v) < 0 || v > UINT64_MAX - pos ||
		    (it->nobj && !v) || pos + v >= it->t->body_end)
			return damaged(err, it->t, it->off + at, "bad block position");
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
			return damaged(err, it->t, it->off + at, "bad index record");
		return 0;
	}
}

/* Decode the next record: 0, 1 at the end of the section, -1. */
static int step(rq_rtable_iter *it, rq_error *err)
{
	unsigned extra;
	int r;

	while (!it->ended && it->pos >= it->rend) {
		size_t next = it->next_off;
		if ((r = load_block(it, next, err)) < 0)
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

/* ---- seeking ---- */

static size_t restart_at(const rq_rtable_iter *it, size_t i)
{
	return be24(it->blk + it->rend + 3 * i);
}

/* Read the (whole) key at restart point i. */
static int restart_key(rq_rtable_iter *it, size_t i, rq_error *err)
{
	size_t off = restart_at(it, i);
	unsigned extra;

	if (off < it->hoff + 4 || off >= it->rend)
		return damaged(err, it->t, it->off, "restart offset %zu out of its block", off);
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
static int block_seek(rq_rtable_iter *it, const void *want, size_t wlen, rq_error *err)
{
	size_t lo = 0, hi = it->nrestart;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (restart_key(it, mid, err) < 0)
			return -1;
		if (keycmp(it->key.p, it->key.len, want, wlen) > 0)
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
		if (keycmp(it->key.p, it->key.len, want, wlen) >= 0) {
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

/* Seek within the blocks of a section from off on, block after block. */
static int section_seek(rq_rtable_iter *it, size_t off, const void *want, size_t wlen,
			rq_error *err)
{
	for (;;) {
		int r = load_block(it, off, err);
		it->ended = r != 0;
		if (r)
			return r < 0 ? -1 : 0;
		if ((r = block_seek(it, want, wlen, err)) != 0)
			return r < 0 ? -1 : 0;
		off = it->next_off; /* every key of this block is smaller */
	}
}

/* The type of the block at off, or -1. */
static int block_type_at(const rq_rtable *t, uint64_t off)
{
	size_t hoff = off == 0 ? t->hsize : 0;

	if (off >= t->body_end || t->body_end - off <= hoff)
		return -1;
	return t->data[off + hoff];
}

/* Seek through the index whose root is at index_off: down its levels to
 * the block of it->typ that holds the first key >= want. */
static int indexed_seek(rq_rtable_iter *it, uint64_t index_off, const void *want, size_t wlen,
			rq_error *err)
{
	rq_rtable_iter ix;
	uint64_t off = index_off;
	int r = 0, depth;

	rq_rtable_iter_init(&ix);
	ix.t = it->t;
	ix.typ = 'i';
	for (depth = 0; depth < MAX_INDEX_DEPTH && block_type_at(it->t, off) == 'i'; depth++) {
		if (section_seek(&ix, (size_t)off, want, wlen, err) < 0 || (r = step(&ix, err)) < 0)
			break;
		if (r == 1)
			break; /* every key is smaller than want */
		off = ix.idx_pos;
	}
	it->nread += ix.nread;
	rq_rtable_iter_release(&ix);
	if (r < 0)
		return -1;
	if (r == 1) {
		it->ended = 1;
		return 0;
	}
	if (block_type_at(it->t, off) != it->typ)
		return damaged(err, it->t, (size_t)off, "the index leads to no block of type '%c'",
			       it->typ);
	return section_seek(it, (size_t)off, want, wlen, err);
}

static void iter_start(rq_rtable_iter *it, const rq_rtable *t, uint8_t typ)
{
	it->t = t;
	it->typ = typ;
	it->ended = 1;
	it->pos = it->rend = 0;
	it->have_prev = it->reread = 0;
}

int rq_rtable_seek_ref(rq_rtable_iter *it, const rq_rtable *t, const char *name, rq_error *err)
{
	size_t n = strlen(name);

	iter_start(it, t, 'r');
	if (!t->has_refs)
		return 0;
	if (t->ref_index)
		return indexed_seek(it, t->ref_index, name, n, err);
	return section_seek(it, 0, name, n, err);
}

int rq_rtable_next_ref(rq_rtable_iter *it, rq_rtable_ref *out, rq_error *err)
{
	int r = step(it, err);

	if (r == 0)
		*out = it->ref;
	return r;
}

int rq_rtable_seek_log(rq_rtable_iter *it, const rq_rtable *t, const char *refname,
		       uint64_t update_index, rq_error *err)
{
	size_t n = strlen(refname), wlen = 0;
	uint64_t rev = UINT64_MAX - update_index;
	uint8_t *want = malloc(n + 9);
	int r = 0;

	if (!want)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (n) {
		memcpy(want, refname, n + 1);
		for (int i = 0; i < 8; i++)
			want[n + 1 + i] = (uint8_t)(rev >> (56 - 8 * i));
		wlen = n + 9;
	}
	iter_start(it, t, 'g');
	if (t->has_logs)
		r = t->log_index ? indexed_seek(it, t->log_index, want, wlen, err)
				 : section_seek(it, (size_t)t->log_pos, want, wlen, err);
	free(want);
	return r;
}

int rq_rtable_next_log(rq_rtable_iter *it, rq_rtable_log *out, rq_error *err)
{
	int r = step(it, err);

	if (r == 0)
		*out = it->log;
	return r;
}

/* ---- refs by object id ---- */

static int ref_matches(const rq_rtable_ref *r, const git_oid *id)
{
	return (r->type == RQ_RTABLE_VAL1 || r->type == RQ_RTABLE_VAL2) &&
	       (git_oid_equal(&r->value, id) ||
		(r->type == RQ_RTABLE_VAL2 && git_oid_equal(&r->peeled, id)));
}

/* Every ref of the table: the answer without obj blocks. */
static int refs_for_all(const rq_rtable *t, const git_oid *id,
			int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	rq_rtable_iter it;
	rq_rtable_ref ref;
	int r, rc = 0;

	rq_rtable_iter_init(&it);
	r = rq_rtable_seek_ref(&it, t, "", err);
	while (r == 0 && rc == 0 && (r = rq_rtable_next_ref(&it, &ref, err)) == 0)
		if (ref_matches(&ref, id))
			rc = fn(arg, &ref);
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : rc;
}

/* The refs of the one ref block at off. */
static int refs_in_block(const rq_rtable *t, uint64_t off, const git_oid *id,
			 int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	rq_rtable_iter it;
	unsigned extra;
	int r, rc = 0;

	rq_rtable_iter_init(&it);
	iter_start(&it, t, 'r');
	if ((r = load_block(&it, (size_t)off, err)) > 0)
		r = damaged(err, t, (size_t)off, "an obj record names no ref block");
	while (r == 0 && rc == 0 && it.pos < it.rend) {
		if ((r = read_key(&it, &extra, err)) == 0 &&
		    (r = record_value(&it, extra, err)) == 0 && ref_matches(&it.ref, id))
			rc = fn(arg, &it.ref);
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : rc;
}

static int refs_for_positions(const rq_rtable *t, const uint64_t *pos, size_t n, const git_oid *id,
			      int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg,
			      rq_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = refs_in_block(t, pos[i], id, fn, arg, err);
	return rc;
}

/* The positions the obj record of id lists: *found 0 when there is no
 * such record, *n 0 when it lists none (too many refs to list). */
static int obj_lookup(const rq_rtable *t, const git_oid *id, int *found, uint64_t **pos, size_t *n,
		      rq_error *err)
{
	rq_rtable_iter it;
	int r;

	*found = 0;
	rq_rtable_iter_init(&it);
	iter_start(&it, t, 'o');
	r = t->obj_index ? indexed_seek(&it, t->obj_index, id->id, t->obj_id_len, err)
			 : section_seek(&it, (size_t)t->obj_pos, id->id, t->obj_id_len, err);
	if (r == 0 && (r = step(&it, err)) == 0 &&
	    keycmp(it.key.p, it.key.len, id->id, t->obj_id_len) == 0) {
		*found = 1;
		*pos = it.obj_pos; /* taken over */
		*n = it.nobj;
		it.obj_pos = NULL;
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : 0;
}

int rq_rtable_refs_for(const rq_rtable *t, const git_oid *id,
		       int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	uint64_t *pos = NULL;
	size_t n = 0;
	int found, rc;

	if (!t->obj_pos)
		return refs_for_all(t, id, fn, arg, err);
	if (obj_lookup(t, id, &found, &pos, &n, err) < 0)
		return -1;
	if (!found)
		return 0;
	rc =
	    n ? refs_for_positions(t, pos, n, id, fn, arg, err) : refs_for_all(t, id, fn, arg, err);
	free(pos);
	return rc;
}

/* ---- verification ---- */

/* Every record of the section of typ from off; index records must lead
 * to a block of leaf type or to another index block. */
static int verify_section(const rq_rtable *t, uint8_t typ, uint64_t off, int leaf, rq_error *err)
{
	rq_rtable_iter it;
	int r;

	rq_rtable_iter_init(&it);
	iter_start(&it, t, typ);
	r = load_block(&it, (size_t)off, err);
	it.ended = r != 0;
	if (r > 0)
		r = damaged(err, t, (size_t)off, "no block of type '%c' where the footer says",
			    typ);
	while (r == 0 && (r = step(&it, err)) == 0) {
		int at = typ == 'i' ? block_type_at(t, it.idx_pos) : leaf;
		if (at != leaf && at != 'i')
			r = damaged(err, t, (size_t)it.idx_pos, "index record leads nowhere");
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : 0;
}

int rq_rtable_verify(const rq_rtable *t, rq_error *err)
{
	if ((t->has_refs && verify_section(t, 'r', 0, 'r', err) < 0) ||
	    (t->ref_index && verify_section(t, 'i', t->ref_index, 'r', err) < 0) ||
	    (t->obj_pos && verify_section(t, 'o', t->obj_pos, 'o', err) < 0) ||
	    (t->obj_index && verify_section(t, 'i', t->obj_index, 'o', err) < 0) ||
	    (t->has_logs && verify_section(t, 'g', t->log_pos, 'g', err) < 0) ||
	    (t->log_index && verify_section(t, 'i', t->log_index, 'g', err) < 0))
		return -1;
	return 0;
}
