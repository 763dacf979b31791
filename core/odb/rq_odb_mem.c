/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_mem: objects written during a replay, held in memory.
 */
#include "rq_odb_mem.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "rq_hindex.h"
#include "rq_odb.h"

#define PART_MAGIC     "RQPART2\n"
#define PART_MAGIC_LEN 8
#define PART_HEAD      (PART_MAGIC_LEN + 8)
#define REC_HEAD       (1 + GIT_OID_RAWSZ + 8 + 8 + 4 + 4 + GIT_OID_RAWSZ)
#define DELTA_WINDOW   16 /* earlier trees tried as a delta base */
#define DELTA_DEPTH    50 /* longest delta chain (git's default) */
/* deepest chain materialize() follows: part files chain across processes */
#define MATERIALIZE_DEPTH (DELTA_DEPTH * 64 + 64)

typedef struct memobj {
	git_oid id;
	git_object_t type;
	size_t len;
	unsigned char *data;
	unsigned char *z; /* the object as a pack entry, once encoded */
	size_t zlen;
	uint32_t crc;
	uint32_t depth; /* 0: whole; else a delta against base */
	git_oid base;
	/* data and z are ours to free (else they point into a loaded part file) */
	unsigned char own_data, own_z;
} memobj;

struct rq_odb_mem {
	git_odb_backend parent;
	memobj *v;
	size_t n, cap;
	rq_hindex index; /* over v[0..n) by id */
	struct part_map {
		void *p;
		size_t len;
	} * files; /* mapped part files, which loaded objects point into */
	size_t nfiles;
};

static int obj_eq(const void *ctx, size_t i, const void *key)
{
	return git_oid_equal(&((const struct rq_odb_mem *)ctx)->v[i].id, key);
}

static size_t obj_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_oid(&((const struct rq_odb_mem *)ctx)->v[i].id);
}

static memobj *find(struct rq_odb_mem *m, const git_oid *id)
{
	long k = rq_hindex_find(&m->index, rq_hindex_hash_oid(id), obj_eq, m, id);
	return k < 0 ? NULL : &m->v[k];
}

/* Grow the index before one more object is added. */
static int grow_slots(struct rq_odb_mem *m)
{
	size_t ns = rq_hindex_want(&m->index, 1024);
	uint32_t *sl;

	if (!ns)
		return 0;
	if (!(sl = calloc(ns, sizeof(*sl))))
		return -1;
	free(m->index.slot);
	rq_hindex_rebuild(&m->index, sl, ns, m->n, obj_hash, m);
	return 0;
}

/* Add the object (the caller checked it is not held): a copy of data, or
 * data itself when borrowed. */
static int add_obj(struct rq_odb_mem *m, const git_oid *id, const void *data, size_t len,
		   git_object_t type, int borrowed)
{
	memobj *o;

	if (m->n >= UINT32_MAX - 1)
		return -1;
	if (grow_slots(m) < 0)
		return -1;
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		memobj *nv = realloc(m->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		m->v = nv;
		m->cap = ncap;
	}
	o = &m->v[m->n];
	if (borrowed) {
		o->data = (unsigned char *)(uintptr_t)data;
	} else {
		if (!(o->data = malloc(len ? len : 1)))
			return -1;
		if (len)
			memcpy(o->data, data, len);
	}
	o->own_data = !borrowed;
	git_oid_cpy(&o->id, id);
	o->type = type;
	o->len = len;
	o->z = NULL;
	o->own_z = 0;
	o->zlen = 0;
	o->crc = 0;
	o->depth = 0;
	memset(&o->base, 0, sizeof(o->base));
	rq_hindex_add(&m->index, rq_hindex_hash_oid(id), m->n);
	m->n++;
	return 0;
}

/*
 * Give an object handed over without its content (data NULL) its content
 * back: inflate its encoded form and, for a delta, apply it to its base's
 * content. Only needed when such an object is read or encoded again.
 * 0, or -1 (damaged, out of memory).
 */
static int materialize(struct rq_odb_mem *m, memobj *o, unsigned guard)
{
	rq_odb_pack_entry_info info;
	unsigned char *raw;
	size_t rawlen;

	if (o->data)
		return 0;
	if (!o->z || !guard || rq_odb_pack_entry_parse(o->z, o->zlen, &info) < 0 ||
	    rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw) < 0)
		return -1;
	rawlen = info.size;
	if (info.code == 7) {
		memobj *base = find(m, &info.base);
		unsigned char *full;
		size_t fulllen;
		if (!base || base == o || materialize(m, base, guard - 1) < 0 ||
		    rq_odb_pack_apply_delta(base->data, base->len, raw, rawlen, &full, &fulllen) <
			0) {
			free(raw);
			return -1;
		}
		free(raw);
		raw = full;
		rawlen = fulllen;
	}
	if (rawlen != o->len) {
		free(raw);
		return -1;
	}
	o->data = raw;
	o->own_data = 1;
	return 0;
}

static int copy_out(void **out, size_t *len, git_object_t *type, git_odb_backend *b, memobj *o)
{
	void *p;

	if (materialize((struct rq_odb_mem *)b, o, MATERIALIZE_DEPTH) < 0) {
		git_error_set_str(GIT_ERROR_ODB, "a handed-over object cannot be read back");
		return -1;
	}
	p = git_odb_backend_data_alloc(b, o->len + 1);
	if (!p)
		return -1;
	memcpy(p, o->data, o->len);
	((unsigned char *)p)[o->len] = '\0';
	*out = p;
	*len = o->len;
	*type = o->type;
	return 0;
}

static int m_read(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		  const git_oid *id)
{
	memobj *o = find((struct rq_odb_mem *)b, id);
	if (!o)
		return GIT_ENOTFOUND;
	return copy_out(out, len, type, b, o);
}

static int m_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	memobj *o = find((struct rq_odb_mem *)b, id);
	if (!o)
		return GIT_ENOTFOUND;
	*len = o->len;
	*type = o->type;
	return 0;
}

static int prefix_match(const git_oid *id, const git_oid *prefix, size_t hexlen)
{
	size_t full = hexlen / 2;
	if (memcmp(id->id, prefix->id, full))
		return 0;
	if (hexlen & 1)
		return (id->id[full] & 0xf0) == (prefix->id[full] & 0xf0);
	return 1;
}

/* The one object whose id starts with the prefix: 0, GIT_ENOTFOUND or
 * GIT_EAMBIGUOUS. */
static int find_prefix(struct rq_odb_mem *m, const git_oid *prefix, size_t hexlen, memobj **out)
{
	*out = NULL;
	for (size_t k = 0; k < m->n; k++) {
		if (!prefix_match(&m->v[k].id, prefix, hexlen))
			continue;
		if (*out)
			return GIT_EAMBIGUOUS;
		*out = &m->v[k];
	}
	return *out ? 0 : GIT_ENOTFOUND;
}

static int m_read_prefix(git_oid *out_id, void **out, size_t *len, git_object_t *type,
			 git_odb_backend *b, const git_oid *prefix, size_t hexlen)
{
	memobj *o;
	int r = find_prefix((struct rq_odb_mem *)b, prefix, hexlen, &o);
	if (r < 0)
		return r;
	git_oid_cpy(out_id, &o->id);
	return copy_out(out, len, type, b, o);
}

static int m_exists_prefix(git_oid *out_id, git_odb_backend *b, const git_oid *prefix,
			   size_t hexlen)
{
	memobj *o;
	int r = find_prefix((struct rq_odb_mem *)b, prefix, hexlen, &o);
	if (r < 0)
		return r;
	git_oid_cpy(out_id, &o->id);
	return 0;
}

static int m_exists(git_odb_backend *b, const git_oid *id)
{
	return find((struct rq_odb_mem *)b, id) != NULL;
}

static int m_write(git_odb_backend *b, const git_oid *id, const void *data, size_t len,
		   git_object_t type)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (find(m, id))
		return 0;
	if (add_obj(m, id, data, len, type, 0) < 0) {
		git_error_set_oom();
		return -1;
	}
	return 0;
}

static int m_foreach(git_odb_backend *b, git_odb_foreach_cb cb, void *payload)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	for (size_t k = 0; k < m->n; k++) {
		int r = cb(&m->v[k].id, payload);
		if (r)
			return r;
	}
	return 0;
}

static void m_free(git_odb_backend *b)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (!m)
		return;
	for (size_t k = 0; k < m->n; k++) {
		if (m->v[k].own_data)
			free(m->v[k].data);
		if (m->v[k].own_z)
			free(m->v[k].z);
	}
	for (size_t k = 0; k < m->nfiles; k++)
		munmap(m->files[k].p, m->files[k].len);
	free(m->files);
	free(m->v);
	free(m->index.slot);
	free(m);
}

/*
 * Is the object in one of the odb's backends other than the memory store
 * (backend 0) and the loose-object backends? A loose object is not looked
 * for: that costs a system call per new object, and when the object is
 * there, writing it once more into the replay's pack does no harm (and
 * keeps it fresh, as git's freshening would).
 */
static int exists_packed(git_odb *odb, const git_oid *id)
{
	size_t n = git_odb_num_backends(odb);

	for (size_t i = 1; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || !b->exists)
			continue;
		if (rq_odb_is_loose(b))
			continue;
		if (b->exists(b, id))
			return 1;
	}
	return 0;
}

int rq_odb_mem_write(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	git_odb_backend *b = NULL;

	if (git_odb_get_backend(&b, odb, 0) < 0 || !b || b->read != m_read)
		return git_odb_write(out, odb, data, len, type);
	if (git_odb_hash(out, data, len, type) < 0)
		return -1;
	if (find((struct rq_odb_mem *)b, out))
		return 0;
	/* a packed object: git_odb_write() freshens its pack, as git does */
	if (exists_packed(odb, out))
		return git_odb_write(out, odb, data, len, type);
	return m_write(b, out, data, len, type);
}

int rq_odb_mem_new(git_odb_backend **out)
{
	struct rq_odb_mem *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -1;
	git_odb_init_backend(&m->parent, GIT_ODB_BACKEND_VERSION);
	m->parent.read = m_read;
	m->parent.read_prefix = m_read_prefix;
	m->parent.read_header = m_read_header;
	m->parent.write = m_write;
	m->parent.exists = m_exists;
	m->parent.exists_prefix = m_exists_prefix;
	m->parent.foreach = m_foreach;
	m->parent.free = m_free;
	*out = &m->parent;
	return 0;
}

size_t rq_odb_mem_count(git_odb_backend *b)
{
	return ((struct rq_odb_mem *)b)->n;
}

const git_oid *rq_odb_mem_id(git_odb_backend *b, size_t i)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	return i < m->n ? &m->v[i].id : NULL;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Write the pieces with as few system calls as the kernel allows. */
typedef struct iobatch {
	int fd, bad;
	struct iovec v[64];
	int n;
} iobatch;

static void io_flush(iobatch *io)
{
	int first = 0;
	while (!io->bad && first < io->n) {
		ssize_t w = writev(io->fd, io->v + first, io->n - first);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			io->bad = 1;
			break;
		}
		while (first < io->n && (size_t)w >= io->v[first].iov_len)
			w -= (ssize_t)io->v[first++].iov_len;
		if (first < io->n) {
			io->v[first].iov_base = (char *)io->v[first].iov_base + w;
			io->v[first].iov_len -= (size_t)w;
		}
	}
	io->n = 0;
}

static void io_add(iobatch *io, const void *p, size_t len)
{
	if (!len)
		return;
	if (io->n == (int)(sizeof(io->v) / sizeof(io->v[0])))
		io_flush(io);
	io->v[io->n].iov_base = (void *)(uintptr_t)p;
	io->v[io->n].iov_len = len;
	io->n++;
}

/*
 * The part file: the magic, the object count (8 bytes), a record per
 * object (REC_HEAD bytes), then every encoded form, in object order. No
 * content: the parent only copies the encoded forms into the pack, and
 * an object it must read or encode again is inflated (materialize()).
 */
int rq_odb_mem_save(git_odb_backend *b, size_t since, const char *path, rq_error *err)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	size_t count = since < m->n ? m->n - since : 0;
	unsigned char head[PART_HEAD], *recs = malloc(count * REC_HEAD + 1);
	iobatch io = {.fd = -1};

	if (!recs)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	io.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (io.fd < 0) {
		free(recs);
		return rq_error_set(err, RQ_E_IO, "cannot create %s: %s", path, strerror(errno));
	}
	memcpy(head, PART_MAGIC, PART_MAGIC_LEN);
	put_le(head + PART_MAGIC_LEN, count, 8);
	for (size_t k = 0; k < count; k++) {
		const memobj *o = &m->v[since + k];
		unsigned char *r = recs + k * REC_HEAD;
		r[0] = (unsigned char)o->type;
		memcpy(r + 1, o->id.id, GIT_OID_RAWSZ);
		put_le(r + 1 + GIT_OID_RAWSZ, o->len, 8);
		put_le(r + 1 + GIT_OID_RAWSZ + 8, o->z ? o->zlen : 0, 8);
		put_le(r + 1 + GIT_OID_RAWSZ + 16, o->z ? o->crc : 0, 4);
		put_le(r + 1 + GIT_OID_RAWSZ + 20, o->z ? o->depth : 0, 4);
		memcpy(r + 1 + GIT_OID_RAWSZ + 24, o->base.id, GIT_OID_RAWSZ);
	}
	io_add(&io, head, sizeof(head));
	io_add(&io, recs, count * REC_HEAD);
	for (size_t k = since; k < m->n; k++) {
		if (!m->v[k].z) {
			free(recs);
			close(io.fd);
			unlink(path);
			return rq_error_set(err, RQ_E_INTERNAL, "an object was not encoded");
		}
		io_add(&io, m->v[k].z, m->v[k].zlen);
	}
	io_flush(&io);
	free(recs);
	if (close(io.fd) != 0)
		io.bad = 1;
	if (io.bad) {
		unlink(path);
		return rq_error_set(err, RQ_E_IO, "cannot write %s", path);
	}
	return 0;
}

/*
 * The file stays mapped and its objects point into it. Part files come
 * from this process's own children through its private directory, written
 * whole and renamed; the load checks their structure and the CRC-32 of each
 * encoded object, not the object ids.
 */
int rq_odb_mem_load(git_odb_backend *b, const char *path, rq_error *err)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	struct part_map *nf;
	struct stat st;
	const unsigned char *buf, *zp;
	size_t len, count, zsum = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *map;

	if (fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_size < PART_HEAD || (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	}
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return rq_error_set(err, RQ_E_IO, "cannot map %s: %s", path, strerror(errno));
	if (!(nf = realloc(m->files, (m->nfiles + 1) * sizeof(*nf)))) {
		munmap(map, len);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	m->files = nf;
	m->files[m->nfiles].p = map;
	m->files[m->nfiles].len = len;
	m->nfiles++;
	buf = map;
	if (memcmp(buf, PART_MAGIC, PART_MAGIC_LEN) != 0)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	count = (size_t)get_le(buf + PART_MAGIC_LEN, 8);
	if (count > (len - PART_HEAD) / REC_HEAD)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	/* the sizes first: the file must be exactly the records and the forms */
	for (size_t k = 0; k < count; k++) {
		const unsigned char *r = buf + PART_HEAD + k * REC_HEAD;
		uint64_t zlen = get_le(r + 1 + GIT_OID_RAWSZ + 8, 8);
		if (!zlen || zlen > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
		zsum += (size_t)zlen;
		if (zsum > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	}
	if (PART_HEAD + count * REC_HEAD + zsum != len)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated or too long", path);
	zp = buf + PART_HEAD + count * REC_HEAD;
	for (size_t k = 0; k < count; k++) {
		const unsigned char *r = buf + PART_HEAD + k * REC_HEAD;
		git_object_t type = (git_object_t)r[0];
		uint64_t olen = get_le(r + 1 + GIT_OID_RAWSZ, 8);
		size_t zlen = (size_t)get_le(r + 1 + GIT_OID_RAWSZ + 8, 8);
		uint32_t crc = (uint32_t)get_le(r + 1 + GIT_OID_RAWSZ + 16, 4),
			 depth = (uint32_t)get_le(r + 1 + GIT_OID_RAWSZ + 20, 4);
		git_oid id;
		memobj *o;

		if (type < GIT_OBJECT_COMMIT || type > GIT_OBJECT_TAG || olen > SIZE_MAX / 2)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
		if (crc32(0L, zp, (uInt)zlen) != crc)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: damaged object", path);
		git_oid_fromraw(&id, r + 1);
		if (!find(m, &id)) {
			/* no content: materialize() inflates it if it is ever needed */
			if (add_obj(m, &id, NULL, (size_t)olen, type, 1) < 0)
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			o = &m->v[m->n - 1];
			o->z = (unsigned char *)(uintptr_t)zp;
			o->zlen = zlen;
			o->crc = crc;
			if (depth) {
				o->depth = depth;
				git_oid_fromraw(&o->base, r + 1 + GIT_OID_RAWSZ + 24);
			}
		}
		zp += zlen;
	}
	return 0;
}

static void drop_z(memobj *o)
{
	if (o->own_z)
		free(o->z);
	o->z = NULL;
	o->own_z = 0;
}

/* Encode o whole. */
static int encode_whole(memobj *o, rq_odb_pack_encoder *enc)
{
	drop_z(o);
	o->depth = 0;
	if (rq_odb_pack_encode(enc, o->type, o->data, o->len, &o->z, &o->zlen, &o->crc) < 0)
		return -1;
	o->own_z = 1;
	return 0;
}

/*
 * A tree is tried as a delta against the earlier encoded trees in a small
 * window (a replay writes each changed directory once per pick, mostly
 * next to its previous version): the smallest delta wins. Bases always come
 * before their deltas in write order, and so in the pack.
 */
static int encode_one(struct rq_odb_mem *m, size_t k, size_t lo, rq_odb_pack_encoder *enc)
{
	memobj *o = &m->v[k];
	const memobj *best = NULL;
	size_t best_cost = SIZE_MAX;

	if (o->type == GIT_OBJECT_TREE && o->len >= 128) {
		size_t tried = 0;
		for (size_t j = k; j > lo && tried < DELTA_WINDOW; j--) {
			const memobj *b = &m->v[j - 1];
			size_t cost;
			if (b->type != GIT_OBJECT_TREE || !b->z || !b->data ||
			    b->depth >= DELTA_DEPTH)
				continue;
			tried++;
			cost = rq_odb_pack_delta_cost(b->data, b->len, o->data, o->len);
			if (cost < best_cost) {
				best_cost = cost;
				best = b;
			}
		}
	}
	if (best) {
		unsigned char *z;
		size_t zlen;
		uint32_t crc;
		int r = rq_odb_pack_encode_delta(enc, &best->id, best->data, best->len, o->data,
						 o->len, &z, &zlen, &crc);
		if (r < 0)
			return -1;
		if (r > 0) {
			drop_z(o);
			o->own_z = 1;
			o->z = z;
			o->zlen = zlen;
			o->crc = crc;
			o->depth = best->depth + 1;
			git_oid_cpy(&o->base, &best->id);
			return 0;
		}
	}
	return encode_whole(o, enc);
}

int rq_odb_mem_encode(git_odb_backend *b, rq_odb_pack_encoder *enc, size_t since)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	for (size_t k = since; k < m->n; k++)
		if (!m->v[k].z && encode_one(m, k, since, enc) < 0)
			return -1;
	return 0;
}

int rq_odb_mem_check_deltas(git_odb_backend *b, rq_odb_pack_encoder *enc)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	for (size_t k = 0; k < m->n; k++) {
		memobj *o = &m->v[k], *base;
		if (!o->depth)
			continue;
		base = find(m, &o->base);
		/* a base that is missing, later in the pack or too deep: whole */
		if (!base || base >= o || base->depth >= DELTA_DEPTH) {
			if (materialize(m, o, MATERIALIZE_DEPTH) < 0 || encode_whole(o, enc) < 0)
				return -1;
			continue;
		}
		o->depth = base->depth + 1;
	}
	return 0;
}

int rq_odb_mem_entry(git_odb_backend *b, size_t i, rq_odb_pack_entry *out)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (i >= m->n || !m->v[i].z)
		return -1;
	git_oid_cpy(&out->id, &m->v[i].id);
	out->data = m->v[i].z;
	out->len = m->v[i].zlen;
	out->crc = m->v[i].crc;
	return 0;
}
