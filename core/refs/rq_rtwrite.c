/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) and
 * the layout git's reftable/writer.c gives it */
/*
 * rq_rtwrite: one reftable, written (see rq_rtwrite.h).
 */
#include "rq_rtwrite.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rq_mem.h"

#define MAX_BLOCK    0xffffff
#define MAX_RESTARTS 0xffff /* a block's restart count is 2 bytes */

typedef struct idxent {
	size_t key_off, key_len; /* in ikeys */
	uint64_t pos;
} idxent;

typedef struct objent {
	rq_oid id;
	uint64_t pos;
} objent;

/* The block being filled. */
typedef struct wblock {
	uint8_t typ;
	int padded;  /* aligned: zeros up to the block size after it */
	size_t hoff; /* the file header before it (the first block) */
	rq_buf data; /* its block header, then its records */
	uint32_t *restart;
	size_t nrestart, caprestart, nrec;
	rq_buf last; /* the last key */
} wblock;

struct rq_rtwrite {
	rq_rtwrite_opts o;
	const rq_oid_algo *algo;
	size_t hash;  /* bytes of an id */
	size_t hsize; /* of the header: 24 (version 1), 28 (version 2) */
	uint64_t min, max;
	rq_buf out;
	size_t pad;	/* zeros owed before the next aligned block */
	size_t nblocks; /* blocks written so far */
	wblock b;
	int section;  /* 0, 'r' (refs being added), 'g' (logs) */
	rq_buf order; /* the last key added, to check the order */
	idxent *idx;  /* the blocks of the section (or index level) */
	size_t nidx, capidx;
	rq_buf ikeys;
	objent *obj; /* ids of the refs, with their blocks */
	size_t nobj, capobj, obj_unplaced;
	uint64_t ref_index, obj_pos, obj_index, log_pos, log_index;
	unsigned obj_id_len;
	int nothing;
};

static void put_be(rq_buf *b, uint64_t v, int n)
{
	char c[8];

	for (int i = 0; i < n; i++)
		c[i] = (char)(v >> (8 * (n - 1 - i)));
	rq_buf_add(b, c, (size_t)n);
}

/* git's varint (that of ofs-delta) */
static void put_varint(rq_buf *b, uint64_t v)
{
	char tmp[10];
	size_t i = sizeof(tmp) - 1;

	tmp[i] = (char)(v & 0x7f);
	while (v >>= 7) {
		v--;
		tmp[--i] = (char)(0x80 | (v & 0x7f));
	}
	rq_buf_add(b, tmp + i, sizeof(tmp) - i);
}

static void put_str(rq_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_varint(b, n);
	rq_buf_add(b, s ? s : "", n);
}

static int nomem(rq_error *err)
{
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* Version 1 for SHA-1, version 2 with its hash id for SHA-256, as git
 * writes them. */
static void header(rq_buf *b, const rq_rtwrite *w)
{
	rq_buf_add(b, w->hsize == 24 ? "REFT\1" : "REFT\2", 5);
	put_be(b, w->o.block_size, 3);
	put_be(b, w->min, 8);
	put_be(b, w->max, 8);
	if (w->hsize == 28)
		rq_buf_add(b, rq_rtable_hash_id(w->algo), 4);
}

rq_rtwrite *rq_rtwrite_new(const rq_rtwrite_opts *opts, const rq_oid_algo *algo,
			   uint64_t min_update_index, uint64_t max_update_index)
{
	rq_rtwrite *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (opts)
		w->o = *opts;
	w->algo = algo ? algo : &rq_oid_sha1;
	w->hash = w->algo->rawsz;
	w->hsize = w->hash == rq_oid_sha1.rawsz ? 24 : 28;
	if (!w->o.block_size || w->o.block_size > MAX_BLOCK)
		w->o.block_size = 4096;
	if (!w->o.restart_interval || w->o.restart_interval > 0xffff)
		w->o.restart_interval = 16;
	w->min = min_update_index;
	w->max = max_update_index;
	w->nothing = 1;
	header(&w->out, w);
	if (w->out.oom) {
		rq_rtwrite_free(w);
		return NULL;
	}
	return w;
}

void rq_rtwrite_free(rq_rtwrite *w)
{
	if (!w)
		return;
	free(w->out.p);
	free(w->b.data.p);
	free(w->b.restart);
	free(w->b.last.p);
	free(w->order.p);
	free(w->idx);
	free(w->ikeys.p);
	free(w->obj);
	free(w);
}

int rq_rtwrite_empty(const rq_rtwrite *w)
{
	return w->nothing;
}

/* ---- blocks ---- */

static void block_begin(rq_rtwrite *w, uint8_t typ, int padded)
{
	w->b.typ = typ;
	w->b.padded = padded;
	w->b.hoff = w->nblocks == 0 ? w->hsize : 0;
	w->b.data.len = 0;
	rq_buf_add(&w->b.data, "\0\0\0\0", 4); /* its header, filled at the end */
	w->b.nrestart = w->b.nrec = 0;
	w->b.last.len = 0;
}

/* The record's encoding into rec: its key against the last one (none at
 * a restart point). A key that shares nothing with the last one is a
 * restart point too (*restart set), as git's writer makes it, unless the
 * block has all the restart points its 2-byte count can hold. */
static void encode(rq_rtwrite *w, rq_buf *rec, const char *key, size_t klen, unsigned extra,
		   const rq_buf *value, int *restart)
{
	size_t prefix = 0;

	if (!*restart)
		while (prefix < klen && prefix < w->b.last.len &&
		       key[prefix] == w->b.last.p[prefix])
			prefix++;
	*restart = prefix == 0 && w->b.nrestart < MAX_RESTARTS;
	rec->len = 0;
	put_varint(rec, prefix);
	put_varint(rec, (uint64_t)(klen - prefix) << 3 | extra);
	rq_buf_add(rec, key + prefix, klen - prefix);
	rq_buf_add(rec, value->p ? value->p : "", value->len);
}

static int fits(const rq_rtwrite *w, size_t reclen, int restart)
{
	size_t limit = w->o.block_size;
	size_t need = w->b.hoff + w->b.data.len + reclen + 3 * (w->b.nrestart + !!restart) + 2;

	if (w->b.typ == 'g' && w->b.nrec == 0 && need > limit)
		limit = MAX_BLOCK; /* a log record bigger than a block gets a block of its own */
	return need <= limit;
}

static int block_flush(rq_rtwrite *w, rq_error *err);

/* Add one record to the block of typ, starting a new block when it is full. */
static int block_add(rq_rtwrite *w, const char *key, size_t klen, unsigned extra,
		     const rq_buf *value, rq_error *err)
{
	rq_buf rec = {0};
	int restart = w->b.nrec % w->o.restart_interval == 0;

	encode(w, &rec, key, klen, extra, value, &restart);
	if (!fits(w, rec.len, restart) && w->b.nrec) {
		if (block_flush(w, err) < 0) {
			free(rec.p);
			return -1;
		}
		block_begin(w, w->b.typ, w->b.padded);
		restart = 1;
		encode(w, &rec, key, klen, extra, value, &restart);
	}
	if (!fits(w, rec.len, restart)) {
		free(rec.p);
		return rq_error_set(err, RQ_E_BAD_REF, "'%.*s' does not fit a reftable block",
				    (int)(klen > 200 ? 200 : klen), key);
	}
	if (restart) {
		uint32_t *r =
		    rq_mem_grow(w->b.restart, &w->b.caprestart, w->b.nrestart + 1, sizeof(*r), 16);
		if (!r) {
			free(rec.p);
			return nomem(err);
		}
		w->b.restart = r;
		r[w->b.nrestart++] = (uint32_t)(w->b.hoff + w->b.data.len);
	}
	rq_buf_add(&w->b.data, rec.p, rec.len);
	free(rec.p);
	w->b.last.len = 0;
	rq_buf_add(&w->b.last, key, klen);
	w->b.nrec++;
	return w->b.data.oom || w->b.last.oom || rec.oom ? nomem(err) : 0;
}

static int add_idx(rq_rtwrite *w, uint64_t pos)
{
	idxent *v = rq_mem_grow(w->idx, &w->capidx, w->nidx + 1, sizeof(*v), 64);

	if (!v)
		return -1;
	w->idx = v;
	v[w->nidx].key_off = w->ikeys.len;
	v[w->nidx].key_len = w->b.last.len;
	v[w->nidx++].pos = pos;
	rq_buf_add(&w->ikeys, w->b.last.p, w->b.last.len);
	return w->ikeys.oom ? -1 : 0;
}

/* Append a log block: its header, then the rest deflated. */
static int emit_log_block(rq_rtwrite *w, rq_error *err)
{
	const rq_buf *d = &w->b.data;
	uLongf zlen = compressBound((uLong)(d->len - 4));
	char *z = malloc(zlen);

	if (!z)
		return nomem(err);
	if (compress2((Bytef *)z, &zlen, (const Bytef *)d->p + 4, (uLong)(d->len - 4), 9) != Z_OK) {
		free(z);
		return rq_error_set(err, RQ_E_INTERNAL, "cannot deflate a log block");
	}
	rq_buf_add(&w->out, d->p, 4);
	rq_buf_add(&w->out, z, zlen);
	free(z);
	return 0;
}

static int block_flush(rq_rtwrite *w, rq_error *err)
{
	wblock *b = &w->b;
	size_t len;
	uint64_t pos;

	if (!b->nrec)
		return 0;
	for (size_t i = 0; i < b->nrestart; i++)
		put_be(&b->data, b->restart[i], 3);
	put_be(&b->data, b->nrestart, 2);
	len = b->hoff + b->data.len;
	if (b->data.oom || len > MAX_BLOCK)
		return b->data.oom ? nomem(err) : rq_error_set(err, RQ_E_INTERNAL, "block too big");
	b->data.p[0] = (char)b->typ;
	for (int i = 0; i < 3; i++)
		b->data.p[1 + i] = (char)(len >> (16 - 8 * i));
	while (w->pad && b->padded && w->pad--)
		rq_buf_add(&w->out, "", 1);
	w->pad = 0;
	pos = w->nblocks++ ? w->out.len : 0;
	if (b->typ == 'g' ? emit_log_block(w, err) < 0
			  : (rq_buf_add(&w->out, b->data.p, b->data.len), 0))
		return -1;
	if (b->padded && len < w->o.block_size)
		w->pad = w->o.block_size - len;
	for (; b->typ == 'r' && w->obj_unplaced < w->nobj; w->obj_unplaced++)
		w->obj[w->obj_unplaced].pos = pos;
	b->nrec = 0;
	return add_idx(w, pos) < 0 || w->out.oom ? nomem(err) : 0;
}

/*
 * The index of the blocks the section wrote (w->idx), when there is more
 * than one: index blocks, then an index of those, and so on until one
 * block holds the level; *root gets its position.
 */
static int write_index(rq_rtwrite *w, int padded, uint64_t *root, rq_error *err)
{
	*root = 0;
	while (w->nidx > 1) {
		idxent *lv = w->idx;
		rq_buf keys = w->ikeys, val = {0};
		size_t n = w->nidx;
		int rc = 0;
		w->idx = NULL;
		w->nidx = w->capidx = 0;
		memset(&w->ikeys, 0, sizeof(w->ikeys));
		block_begin(w, 'i', padded);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			val.len = 0;
			put_varint(&val, lv[i].pos);
			rc = block_add(w, keys.p + lv[i].key_off, lv[i].key_len, 0, &val, err);
		}
		if (rc == 0)
			rc = block_flush(w, err);
		free(lv);
		free(keys.p);
		free(val.p);
		if (rc < 0)
			return -1;
		*root = w->idx[0].pos;
	}
	w->nidx = 0;
	w->ikeys.len = 0;
	return 0;
}

/* ---- refs ---- */

static int push_obj(rq_rtwrite *w, const rq_oid *id)
{
	objent *v = rq_mem_grow(w->obj, &w->capobj, w->nobj + 1, sizeof(*v), 256);

	if (!v)
		return -1;
	w->obj = v;
	v[w->nobj].id = *id;
	v[w->nobj++].pos = 0;
	return 0;
}

/* key must be greater than the last key added to the section. */
static int in_order(rq_rtwrite *w, const char *key, size_t klen, rq_error *err)
{
	size_t n = klen < w->order.len ? klen : w->order.len;
	int c = n ? memcmp(key, w->order.p, n) : 0;

	if (w->order.len && (c < 0 || (c == 0 && klen <= w->order.len)))
		return rq_error_set(err, RQ_E_INTERNAL, "reftable records out of order");
	w->order.len = 0;
	rq_buf_add(&w->order, key, klen);
	return w->order.oom ? nomem(err) : 0;
}

int rq_rtwrite_add_ref(rq_rtwrite *w, const rq_rtable_ref *ref, rq_error *err)
{
	size_t klen = strlen(ref->name);
	rq_buf val = {0};
	int rc;

	if (w->section == 'g' || ref->update_index < w->min || ref->update_index > w->max ||
	    ref->type < RQ_RTABLE_DELETION || ref->type > RQ_RTABLE_SYMREF || !klen)
		return rq_error_set(err, RQ_E_INTERNAL, "bad reftable ref record '%s'", ref->name);
	if (in_order(w, ref->name, klen, err) < 0)
		return -1;
	if (w->section != 'r') {
		w->section = 'r';
		block_begin(w, 'r', 1);
	}
	put_varint(&val, ref->update_index - w->min);
	if (ref->type == RQ_RTABLE_VAL1 || ref->type == RQ_RTABLE_VAL2)
		rq_buf_add(&val, (const char *)ref->value.id, w->hash);
	if (ref->type == RQ_RTABLE_VAL2)
		rq_buf_add(&val, (const char *)ref->peeled.id, w->hash);
	if (ref->type == RQ_RTABLE_SYMREF)
		put_str(&val, ref->target);
	rc = val.oom ? nomem(err) : block_add(w, ref->name, klen, (unsigned)ref->type, &val, err);
	free(val.p);
	if (rc == 0 && (ref->type == RQ_RTABLE_VAL1 || ref->type == RQ_RTABLE_VAL2))
		if (push_obj(w, &ref->value) < 0 ||
		    (ref->type == RQ_RTABLE_VAL2 && push_obj(w, &ref->peeled) < 0))
			rc = nomem(err);
	w->nothing = 0;
	return rc;
}

/* ---- obj blocks ---- */

static int objcmp(const void *a, const void *b)
{
	const objent *x = a, *y = b;
	int c = rq_oid_cmp(&x->id, &y->id);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The shortest abbreviation (at least 2 bytes) that tells the sorted ids
 * apart. */
static unsigned id_len(const objent *v, size_t n, size_t hash)
{
	unsigned len = 2;

	for (size_t i = 1; i < n; i++) {
		unsigned common = 0;
		while (common < hash && v[i].id.id[common] == v[i - 1].id.id[common])
			common++;
		if (common < hash && common + 1 > len)
			len = common + 1;
	}
	return len;
}

/* The obj record of the ids v[i..j): the distinct block positions, or no
 * list at all (count 0) when it would not fit a block. */
static int obj_record(rq_rtwrite *w, const objent *v, size_t n, rq_error *err)
{
	rq_buf val = {0};
	size_t cnt = 0;
	uint64_t last = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		cnt += i == 0 || v[i].pos != v[i - 1].pos;
	if (cnt * 4 + 64 > w->o.block_size / 2)
		cnt = 0; /* too many: readers then look at every ref */
	if (cnt == 0 || cnt > 7)
		put_varint(&val, cnt);
	for (size_t i = 0; cnt && i < n; i++)
		if (i == 0 || v[i].pos != v[i - 1].pos) {
			put_varint(&val, v[i].pos - last);
			last = v[i].pos;
		}
	rc = val.oom ? nomem(err)
		     : block_add(w, (const char *)v[0].id.id, w->obj_id_len,
				 cnt > 0 && cnt <= 7 ? (unsigned)cnt : 0, &val, err);
	free(val.p);
	return rc;
}

static int write_objs(rq_rtwrite *w, rq_error *err)
{
	size_t i = 0;

	qsort(w->obj, w->nobj, sizeof(*w->obj), objcmp);
	w->obj_id_len = id_len(w->obj, w->nobj, w->hash);
	block_begin(w, 'o', 1);
	while (i < w->nobj) {
		size_t j = i + 1;
		while (j < w->nobj && rq_oid_eq(&w->obj[j].id, &w->obj[i].id))
			j++;
		if (obj_record(w, w->obj + i, j - i, err) < 0)
			return -1;
		i = j;
	}
	if (block_flush(w, err) < 0)
		return -1;
	w->obj_pos = w->idx[0].pos;
	return write_index(w, 1, &w->obj_index, err);
}

/* The end of the ref section: its last block, its index, the obj blocks. */
static int finish_refs(rq_rtwrite *w, rq_error *err)
{
	if (w->section != 'r')
		return 0;
	if (block_flush(w, err) < 0 || write_index(w, 1, &w->ref_index, err) < 0)
		return -1;
	if (w->ref_index && !w->o.no_obj_index && w->nobj && write_objs(w, err) < 0)
		return -1;
	w->nidx = 0;
	w->ikeys.len = 0;
	return 0;
}

/* ---- logs ---- */

static void log_key(rq_buf *k, const rq_rtable_log *log)
{
	k->len = 0;
	rq_buf_add(k, log->refname, strlen(log->refname) + 1);
	put_be(k, UINT64_MAX - log->update_index, 8);
}

static void log_value(const rq_rtwrite *w, rq_buf *v, const rq_rtable_log *log)
{
	v->len = 0;
	if (log->type != RQ_RTABLE_LOG_UPDATE) {
		rq_buf_add(v, "", 0);
		return;
	}
	rq_buf_add(v, (const char *)log->old_id.id, w->hash);
	rq_buf_add(v, (const char *)log->new_id.id, w->hash);
	put_str(v, log->name);
	put_str(v, log->email);
	put_varint(v, log->time);
	put_be(v, (uint16_t)(int16_t)log->tz, 2);
	put_str(v, log->message);
}

int rq_rtwrite_add_log(rq_rtwrite *w, const rq_rtable_log *log, rq_error *err)
{
	rq_buf key = {0}, val = {0};
	int rc;

	if (!*log->refname ||
	    (log->type != RQ_RTABLE_LOG_UPDATE && log->type != RQ_RTABLE_LOG_DELETION))
		return rq_error_set(err, RQ_E_INTERNAL, "bad reftable log record");
	if (w->section != 'g') {
		if (finish_refs(w, err) < 0)
			return -1;
		w->section = 'g';
		w->order.len = 0;
		w->pad = 0; /* the log section is not aligned */
		block_begin(w, 'g', 0);
	}
	log_key(&key, log);
	log_value(w, &val, log);
	rc = key.oom || val.oom ? nomem(err) : in_order(w, key.p, key.len, err);
	if (rc == 0)
		rc = block_add(w, key.p, key.len, (unsigned)log->type, &val, err);
	free(key.p);
	free(val.p);
	w->nothing = 0;
	return rc;
}

/* ---- the end ---- */

static int finish_logs(rq_rtwrite *w, rq_error *err)
{
	if (block_flush(w, err) < 0)
		return -1;
	w->log_pos = w->idx[0].pos;
	return write_index(w, 0, &w->log_index, err);
}

static void footer(rq_rtwrite *w)
{
	rq_buf f = {0};

	header(&f, w);
	put_be(&f, w->ref_index, 8);
	put_be(&f, w->obj_pos << 5 | w->obj_id_len, 8);
	put_be(&f, w->obj_index, 8);
	put_be(&f, w->log_pos, 8);
	put_be(&f, w->log_index, 8);
	if (!f.oom)
		put_be(&f, crc32(0, (const Bytef *)f.p, (uInt)f.len), 4);
	rq_buf_add(&w->out, f.p ? f.p : "", f.len);
	if (f.oom)
		w->out.oom = 1;
	free(f.p);
}

int rq_rtwrite_finish(rq_rtwrite *w, rq_buf *out, rq_error *err)
{
	if (w->section == 'r' && finish_refs(w, err) < 0)
		return -1;
	if (w->section == 'g' && finish_logs(w, err) < 0)
		return -1;
	footer(w);
	if (w->out.oom)
		return nomem(err);
	*out = w->out;
	memset(&w->out, 0, sizeof(w->out));
	return 0;
}
