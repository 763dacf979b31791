/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packread: the packs of a directory read directly (see the header):
 * entries and their delta chains, the cache of delta bases; where an
 * object is, and the packs' files, are rq_odb_packset's. The formats are git's
 * (Documentation/gitformat-pack.txt): index version 2, pack version 2/3.
 */
#include "rq_odb_packread.h"
#include "rq_mem.h"
#include "rq_odb_pack.h"
#include "rq_odb_packset.h"
#include "rq_hash.h"
#include "rq_sha1.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CACHE_SLOTS  32		       /* delta bases kept */
#define CACHE_BYTES  ((size_t)4 << 20) /* and their bytes at most */
#define CACHE_OBJECT ((size_t)1 << 20) /* larger bases are not kept (as libgit2) */
#define MAX_CHAIN    10000	       /* deeper chains are damaged (git makes 4095 at most) */
#define MAX_RATIO    1032	       /* deflate expands at most this much */

typedef rq_odb_packset_pair mapped_pack;

typedef struct cached {
	unsigned char *data; /* NULL: a free slot */
	size_t len, pack;
	uint64_t off, used;
	git_object_t type;
} cached;

struct rq_odb_packread {
	rq_odb_packset *set;
	const rq_oid_algo *algo; /* the set's object format */
	unsigned refs;		 /* the databases that share it */
	struct libdeflate_decompressor *inflater;
	cached cache[CACHE_SLOTS];
	size_t cache_bytes;
	uint64_t clock;
};

rq_odb_packread *rq_odb_packread_open_set(const char *pack_dir, const char *shown,
					  const rq_oid_algo *algo, unsigned flags)
{
	rq_odb_packread *pr = calloc(1, sizeof(*pr));

	if (!pr || !(pr->set = rq_odb_packset_open(pack_dir, shown, algo, flags)) ||
	    !(pr->inflater = libdeflate_alloc_decompressor())) {
		if (pr)
			rq_odb_packset_free(pr->set);
		free(pr);
		return NULL;
	}
	pr->algo = rq_odb_packset_algo(pr->set);
	pr->refs = 1;
	return pr;
}

rq_odb_packread *rq_odb_packread_open(const char *pack_dir)
{
	return rq_odb_packread_open_set(pack_dir, NULL, NULL, 0);
}

const rq_oid_algo *rq_odb_packread_algo(const rq_odb_packread *pr)
{
	return pr->algo;
}

rq_odb_packread *rq_odb_packread_ref(rq_odb_packread *pr)
{
	pr->refs++;
	return pr;
}

void rq_odb_packread_free(rq_odb_packread *pr)
{
	if (!pr || --pr->refs)
		return;
	for (size_t k = 0; k < CACHE_SLOTS; k++)
		free(pr->cache[k].data);
	libdeflate_free_decompressor(pr->inflater);
	rq_odb_packset_free(pr->set);
	free(pr);
}

const char *rq_odb_packread_dir(const rq_odb_packread *pr)
{
	return rq_odb_packset_dir(pr->set);
}

rq_odb_packset *rq_odb_packread_set(rq_odb_packread *pr)
{
	return pr->set;
}

static const mapped_pack *pack_of(const rq_odb_packread *pr, size_t k)
{
	return rq_odb_packset_pair_of(pr->set, k);
}

/* ---- entries ---- */

/* What an entry says: a whole object (code 1-4) or a delta (6, 7) against
 * the entry at base; the zlib stream starts at z (at most zmax bytes). */
typedef struct entry {
	unsigned code;
	size_t size;
	uint64_t base;
	const unsigned char *z;
	size_t zmax;
} entry;

/* The base of an OFS_DELTA: a distance back, base-128 with an offset. */
static int ofs_base(const unsigned char **q, const unsigned char *end, uint64_t off, uint64_t *base)
{
	uint64_t x;
	unsigned char c;

	if (*q >= end)
		return -1;
	c = *(*q)++;
	x = c & 127;
	while (c & 128) {
		if (*q >= end || x > (UINT64_MAX >> 8))
			return -1;
		c = *(*q)++;
		x = ((x + 1) << 7) | (c & 127);
	}
	if (!x || x > off)
		return -1;
	*base = off - x;
	return 0;
}

static int parse_entry(const mapped_pack *p, uint64_t off, entry *e)
{
	size_t w = p->ix.rawsz; /* the ids' and the trailer's width */
	const unsigned char *end = p->pack + p->pack_len - w, *q;
	unsigned shift = 4;
	unsigned char c;
	uint64_t size;

	if (off < 12 || off >= (uint64_t)(end - p->pack))
		return -1;
	q = p->pack + off;
	c = *q++;
	e->code = (c >> 4) & 7;
	size = c & 15;
	while (c & 0x80) {
		if (q >= end || shift > 57)
			return -1;
		c = *q++;
		size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	if (size >= SIZE_MAX / 2)
		return -1;
	e->size = (size_t)size;
	if (e->code == 6 && ofs_base(&q, end, off, &e->base) < 0)
		return -1;
	if (e->code == 7) { /* only a base in this pack */
		if ((size_t)(end - q) < w || !rq_odb_pack_idx_find(&p->ix, q, &e->base))
			return -1;
		q += w;
	}
	if (e->code == 0 || e->code == 5)
		return -1;
	e->z = q;
	e->zmax = (size_t)(end - q);
	return e->size / MAX_RATIO > e->zmax ? -1 : 0;
}

/* The entry's zlib stream inflated to exactly its size. 1, -1 out of
 * memory, RQ_ODB_PACKREAD_DAMAGED. */
static int inflate_entry(rq_odb_packread *pr, const entry *e, unsigned char **out)
{
	unsigned char *buf = malloc(e->size + 1);

	*out = NULL;
	if (!buf)
		return -1;
	if (libdeflate_zlib_decompress_ex(pr->inflater, e->z, e->zmax, buf, e->size, NULL, NULL) !=
	    LIBDEFLATE_SUCCESS) {
		free(buf);
		return RQ_ODB_PACKREAD_DAMAGED;
	}
	buf[e->size] = '\0';
	*out = buf;
	return 1;
}

/* ---- the cache of delta bases ---- */

static cached *cache_find(rq_odb_packread *pr, size_t pack, uint64_t off)
{
	for (size_t k = 0; k < CACHE_SLOTS; k++)
		if (pr->cache[k].data && pr->cache[k].pack == pack && pr->cache[k].off == off) {
			pr->cache[k].used = ++pr->clock;
			return &pr->cache[k];
		}
	return NULL;
}

/* Keep data (ours now) as the content at off; the least recently used
 * bases make room. Larger objects are freed. */
static void cache_put(rq_odb_packread *pr, size_t pack, uint64_t off, unsigned char *data,
		      size_t len, git_object_t type)
{
	cached *slot = NULL;

	if (len > CACHE_OBJECT) {
		free(data);
		return;
	}
	for (;;) {
		cached *old = NULL;
		for (size_t k = 0; k < CACHE_SLOTS; k++) {
			if (!pr->cache[k].data)
				slot = slot ? slot : &pr->cache[k];
			else if (!old || pr->cache[k].used < old->used)
				old = &pr->cache[k];
		}
		if (slot && pr->cache_bytes + len <= CACHE_BYTES)
			break;
		pr->cache_bytes -= old->len;
		free(old->data);
		old->data = NULL;
	}
	*slot = (cached){data, len, pack, off, ++pr->clock, type};
	pr->cache_bytes += len;
}

/* ---- reading ---- */

/* The chain from the entry at off down to a whole object or a cached
 * base: the offsets of its deltas, the nearest to off first. */
typedef struct chain {
	uint64_t *off;
	size_t n, cap;
} chain;

/* Walk down from off. *hit: the cached base it ends on, else *root the
 * whole entry (at *root_off). 1, -1, or RQ_ODB_PACKREAD_DAMAGED: an entry
 * that does not parse, a base outside this pack, a chain deeper than any
 * git makes (a REF_DELTA cycle), which libgit2 would follow for ever. */
static int walk_chain(rq_odb_packread *pr, size_t k, uint64_t off, chain *c, cached **hit,
		      entry *root, uint64_t *root_off)
{
	const mapped_pack *p = pack_of(pr, k);
	uint64_t *v;

	for (;;) {
		if ((*hit = cache_find(pr, k, off)))
			return 1;
		if (parse_entry(p, off, root) < 0 || c->n >= MAX_CHAIN)
			return RQ_ODB_PACKREAD_DAMAGED;
		*root_off = off;
		if (root->code < 5)
			return 1;
		if (!(v = rq_mem_grow(c->off, &c->cap, c->n + 1, sizeof(*v), 16)))
			return -1;
		c->off = v;
		c->off[c->n++] = off;
		off = root->base;
	}
}

/* Apply the chain's deltas from the base up: each base but the last result
 * goes to the cache. *content: the result (ours). 1, -1, or damaged. */
static int apply_chain(rq_odb_packread *pr, size_t k, const chain *c, unsigned char *base,
		       size_t base_len, int base_ours, uint64_t base_off, git_object_t type,
		       unsigned char **content, size_t *len)
{
	for (size_t i = c->n; i > 0; i--) {
		entry e;
		unsigned char *delta = NULL, *next = NULL;
		size_t next_len = 0;
		int r = parse_entry(pack_of(pr, k), c->off[i - 1], &e) < 0
			    ? RQ_ODB_PACKREAD_DAMAGED
			    : inflate_entry(pr, &e, &delta);
		if (r > 0) {
			int a = rq_odb_pack_apply_delta(base, base_len, delta, e.size, &next,
							&next_len);
			r = a == 0 ? 1 : a == -1 ? -1 : RQ_ODB_PACKREAD_DAMAGED;
		}
		free(delta);
		if (base_ours)
			cache_put(pr, k, base_off, base, base_len, type);
		if (r <= 0)
			return r;
		base = next;
		base_len = next_len;
		base_off = c->off[i - 1];
		base_ours = 1;
	}
	*content = base_ours ? base : NULL;
	*len = base_len;
	return base_ours ? 1 : 0;
}

/* The content at off in pack k: *content is ours, or a cached base's
 * (*borrowed). 1, -1, or damaged. */
static int read_entry(rq_odb_packread *pr, size_t k, uint64_t off, unsigned char **content,
		      size_t *len, git_object_t *type, const unsigned char **borrowed)
{
	chain c = {NULL, 0, 0};
	cached *hit = NULL;
	entry root;
	uint64_t root_off = off;
	unsigned char *base = NULL;
	int r = walk_chain(pr, k, off, &c, &hit, &root, &root_off);

	*content = NULL;
	*borrowed = NULL;
	if (r > 0 && hit) {
		*type = hit->type;
		if (!c.n) {
			*borrowed = hit->data;
			*len = hit->len;
		} else {
			r = apply_chain(pr, k, &c, hit->data, hit->len, 0, hit->off, *type, content,
					len);
		}
	} else if (r > 0) {
		*type = (git_object_t)root.code;
		r = inflate_entry(pr, &root, c.n ? &base : content);
		*len = root.size;
		if (r > 0 && c.n)
			r = apply_chain(pr, k, &c, base, root.size, 1, root_off, *type, content,
					len);
	}
	free(c.off);
	return r;
}

/* The pack that holds id and where: 1 with *k and *off, 0 none,
 * RQ_ODB_PACKREAD_BADPACK, -1. A read that finds nothing lists the packs
 * again, once (a consolidation or a repack may have moved it). */
static int locate(rq_odb_packread *pr, const rq_oid *id, size_t *k, uint64_t *off)
{
	int r = rq_odb_packset_locate(pr->set, id->id, 1, k, off);

	return r == RQ_ODB_PACKSET_BAD ? RQ_ODB_PACKREAD_BADPACK : r;
}

/* The content read for id hashes to id (checked up to RQ_SHA1_CHECK_MAX
 * bytes, larger objects taken as read): an index that maps an id to
 * another object's entry, consistent with itself and its pack, is seen
 * here and nowhere else. */
static int content_is(const rq_odb_packread *pr, const rq_oid *id, git_object_t type,
		      const unsigned char *data, size_t len, size_t max)
{
	if (len > max)
		return 1;
	return rq_hash_object_is(pr->algo, git_object_type2string(type), data, len, id->id);
}

/* Object id's entry inflated and checked: 1 with *content (malloc'd, to
 * free) or *borrowed (a cached base's, *content NULL), 0 not here, <0 as
 * rq_odb_packread_read. */
static int read_checked(rq_odb_packread *pr, const rq_oid *id, unsigned char **content, size_t *len,
			git_object_t *type, const unsigned char **borrowed)
{
	uint64_t off;
	size_t k;
	int r = locate(pr, id, &k, &off);

	if (r <= 0)
		return r;
	r = read_entry(pr, k, off, content, len, type, borrowed);
	if (r <= 0)
		return r;
	if (!content_is(pr, id, *type, *borrowed ? *borrowed : *content, *len, RQ_SHA1_CHECK_MAX)) {
		free(*content);
		return RQ_ODB_PACKREAD_DAMAGED;
	}
	return 1;
}

int rq_odb_packread_read(rq_odb_packread *pr, const rq_oid *id, rq_odb_packread_alloc alloc,
			 void *ctx, void **data, size_t *len, git_object_t *type)
{
	const unsigned char *borrowed;
	unsigned char *content, *out;
	int r = read_checked(pr, id, &content, len, type, &borrowed);

	if (r <= 0)
		return r;
	if (!(out = alloc(ctx, *len + 1))) {
		free(content);
		return -1;
	}
	memcpy(out, borrowed ? borrowed : content, *len);
	out[*len] = '\0';
	free(content);
	*data = out;
	return 1;
}

/* rq_odb_packread_read into the buffer the inflation made (malloc'd),
 * copied only when it is a cached base's. */
int rq_odb_packread_take(rq_odb_packread *pr, const rq_oid *id, unsigned char **data, size_t *len,
			 git_object_t *type)
{
	const unsigned char *borrowed;
	unsigned char *content;
	int r = read_checked(pr, id, &content, len, type, &borrowed);

	if (r <= 0)
		return r;
	if (borrowed) {
		if (!(content = malloc(*len + 1)))
			return -1;
		memcpy(content, borrowed, *len);
	}
	content[*len] = '\0';
	*data = content;
	return 1;
}

/* The size of the object a delta entry makes, from its delta's header:
 * only the first bytes are inflated (a rename search asks the size of
 * every candidate, to read as few blobs as it can). 1, -1, or damaged. */
static int delta_result_size(const entry *e, size_t *len)
{
	unsigned char head[32];
	z_stream zs;
	size_t got;
	int r;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)(uintptr_t)e->z;
	zs.avail_in = e->zmax < UINT_MAX ? (uInt)e->zmax : UINT_MAX;
	zs.next_out = head;
	zs.avail_out = e->size < sizeof(head) ? (uInt)e->size : (uInt)sizeof(head);
	r = inflate(&zs, Z_SYNC_FLUSH);
	got = (size_t)(zs.next_out - head);
	inflateEnd(&zs);
	if (r != Z_OK && r != Z_STREAM_END)
		return RQ_ODB_PACKREAD_DAMAGED;
	return rq_odb_pack_delta_size(head, got, len) < 0 ? RQ_ODB_PACKREAD_DAMAGED : 1;
}

/* The type and size of the entry at off in pack k, its content unread: the
 * type is its chain's base's, the size its own (a delta's from the delta's
 * header). 1, -1, or damaged. */
static int entry_header(rq_odb_packread *pr, size_t k, uint64_t off, size_t *len,
			git_object_t *type)
{
	chain c = {NULL, 0, 0};
	cached *hit = NULL;
	entry top, root;
	uint64_t root_off = off;
	int r = walk_chain(pr, k, off, &c, &hit, &root, &root_off);
	size_t depth = c.n;

	free(c.off);
	if (r <= 0)
		return r;
	*type = hit ? hit->type : (git_object_t)root.code;
	if (hit && !depth) {
		*len = hit->len;
		return 1;
	}
	if (parse_entry(pack_of(pr, k), off, &top) < 0)
		return RQ_ODB_PACKREAD_DAMAGED;
	if (top.code < 5) {
		*len = top.size;
		return 1;
	}
	return delta_result_size(&top, len);
}

int rq_odb_packread_read_header(rq_odb_packread *pr, const rq_oid *id, size_t *len,
				git_object_t *type)
{
	uint64_t off;
	size_t k;
	int r = locate(pr, id, &k, &off);

	return r <= 0 ? r : entry_header(pr, k, off, len, type);
}

int rq_odb_packread_whole_blob(rq_odb_packread *pr, const rq_oid *id, size_t min, size_t max,
			       unsigned char **out, size_t *entry_len, unsigned char **content,
			       size_t *len)
{
	const unsigned char *start;
	unsigned char *buf;
	size_t k, used;
	uint64_t off;
	entry e;
	int r = locate(pr, id, &k, &off);

	*out = *content = NULL;
	if (r <= 0)
		return r;
	if (parse_entry(pack_of(pr, k), off, &e) < 0)
		return RQ_ODB_PACKREAD_DAMAGED;
	if (e.code != GIT_OBJECT_BLOB || e.size < min || e.size > max)
		return 0;
	if (!(buf = malloc(e.size + 1)))
		return -1;
	/* inflated to learn where its stream ends (and checked: Adler-32) */
	if (libdeflate_zlib_decompress_ex(pr->inflater, e.z, e.zmax, buf, e.size, &used, NULL) !=
		LIBDEFLATE_SUCCESS ||
	    !content_is(pr, id, GIT_OBJECT_BLOB, buf, e.size, SIZE_MAX)) { /* copied as id's */
		free(buf);
		return RQ_ODB_PACKREAD_DAMAGED;
	}
	buf[e.size] = '\0';
	start = pack_of(pr, k)->pack + off;
	*entry_len = (size_t)(e.z - start) + used;
	if (!(*out = malloc(*entry_len))) {
		free(buf);
		return -1;
	}
	memcpy(*out, start, *entry_len);
	*content = buf;
	*len = e.size;
	return 1;
}

int rq_odb_packread_has(rq_odb_packread *pr, const rq_oid *id)
{
	return rq_odb_packset_has(pr->set, id->id);
}

int rq_odb_packread_freshen(rq_odb_packread *pr, const rq_oid *id)
{
	return rq_odb_packset_freshen(pr->set, id->id);
}

const char *rq_odb_packread_error(const rq_odb_packread *pr)
{
	return rq_odb_packset_error(pr->set);
}

int rq_odb_packread_find_prefix(rq_odb_packread *pr, const rq_oid *prefix, size_t nhex,
				rq_oid *full)
{
	return rq_odb_packset_find_prefix(pr->set, prefix, nhex, full);
}
