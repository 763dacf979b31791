/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_mem: the new objects of a replay, held in memory as an object
 * database backend (see the header): the object list with its index, the
 * backend's read and write calls, part files, encoding ahead of the pack.
 */
#include "rq_odb_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rq_hindex.h"
#include "rq_mem.h"
#include "rq_odb.h"
#include "rq_odb_loose.h"
#include "rq_sha1.h"
#include "rq_testhook.h"
#include "rq_trace.h"

#define PART_MAGIC     "RQPART2\n"
#define PART_MAGIC_LEN 8
#define PART_HEAD      (PART_MAGIC_LEN + 8)
/* A part file's record of an object, field by field (see the header) */
#define REC_TYPE      0
#define REC_ID	      1
#define REC_LEN	      (REC_ID + GIT_OID_RAWSZ)
#define REC_ENTRY_LEN (REC_LEN + 8)
#define REC_CRC	      (REC_ENTRY_LEN + 8)
#define REC_DEPTH     (REC_CRC + 4)
#define REC_BASE      (REC_DEPTH + 4)
#define REC_SIZE      (REC_BASE + GIT_OID_RAWSZ)
#define DELTA_WINDOW  16 /* earlier trees tried as a delta base */
#define DELTA_DEPTH   50 /* longest delta chain (git's default) */
/* deepest chain materialize() follows: part files chain across processes */
#define MATERIALIZE_DEPTH (DELTA_DEPTH * 64 + 64)

typedef struct mem_object {
	git_oid id;
	git_object_t type;
	size_t len;
	unsigned char *data;
	unsigned char *entry; /* the object as a pack entry, once encoded */
	size_t entry_len;
	uint32_t crc;	/* of the entry */
	uint32_t depth; /* 0: whole; else a delta against base */
	git_oid base;
	/* data and entry are ours to free (else they point into a part file) */
	unsigned char own_data, own_entry;
	/* the id came from the plain SHA-1: collision detection still to do
	 * (1), being done (2) */
	unsigned char unchecked;
	/* encoded (whole) by this process while the thread runs (bg_help) */
	unsigned char claimed;
	/* the content was given up once encoded (read back from the entry) */
	unsigned char dropped;
	/* a blob of the repository's packs, its entry copied as a delta base
	 * (borrow_base); used: some delta of the pack is against it (set by
	 * rq_odb_mem_check_deltas: a borrowed blob nothing uses stays out) */
	unsigned char borrowed, used;
	/* a blob: 1 + the index of the earlier version of its file (a delta
	 * base), 0 when there is none in the store */
	size_t like;
} mem_object;

/*
 * The background compressor (rq_odb_mem_compress_ahead): a thread that
 * encodes the objects in write order while the replay goes on. Objects
 * [0, handed) are the thread's to encode, and it has done [0, done); it
 * writes only their entry fields, under mu, and reads only their content,
 * which does not move. The object array grows under mu. It keeps its own
 * window of the latest trees as delta bases.
 */
typedef struct bg_tree {
	git_oid id;
	const unsigned char *data;
	size_t len;
	uint32_t depth;
	size_t idx; /* in the thread's window: the object's index */
} bg_tree;

typedef struct bg_state {
	rq_odb_pack_encoder *enc; /* NULL: no compressing ahead */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	int running; /* the thread runs (joined by bg_finish) */
	int closed;  /* finished: no thread again */
	pid_t owner; /* the process that started it */
	int stop, failed;
	int sleeping; /* the thread waits on wake */
	int no_poll;  /* it sleeps at once when idle (rq_odb_mem_no_poll) */
	size_t handed, done, pending_bytes;
	/* handed, for the thread to poll without the lock (SIZE_MAX: stop) */
	_Atomic size_t posted;
	bg_tree win[16];
	size_t nwin;
} bg_state;

struct rq_odb_mem {
	git_odb_backend parent;
	mem_object *objs; /* in write order */
	size_t n, cap;
	rq_hindex index; /* over objs[0..n) by id */
	struct mapped_part {
		void *p;
		size_t len;
	} * parts; /* the part files loaded, which their objects point into */
	size_t nparts;
	bg_state bg;
};

static int obj_eq(const void *ctx, size_t i, const void *key)
{
	return git_oid_equal(&((const struct rq_odb_mem *)ctx)->objs[i].id, key);
}

static size_t obj_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_oid(&((const struct rq_odb_mem *)ctx)->objs[i].id);
}

static mem_object *find(struct rq_odb_mem *m, const git_oid *id)
{
	long k = rq_hindex_find(&m->index, rq_hindex_hash_oid(id), obj_eq, m, id);
	return k < 0 ? NULL : &m->objs[k];
}

static void bg_lock(struct rq_odb_mem *m)
{
	if (m->bg.running)
		pthread_mutex_lock(&m->bg.mu);
}

static void bg_unlock(struct rq_odb_mem *m)
{
	if (m->bg.running)
		pthread_mutex_unlock(&m->bg.mu);
}

/* Room for one more object; the array moves under the thread's lock. */
static mem_object *grow_objs(struct rq_odb_mem *m)
{
	mem_object *o;

	bg_lock(m);
	o = rq_mem_grow(m->objs, &m->cap, m->n + 1, sizeof(*o), 256);
	if (o)
		m->objs = o;
	bg_unlock(m);
	return o ? &m->objs[m->n] : NULL;
}

static void bg_hand(struct rq_odb_mem *m, size_t len);
static int bg_finish(struct rq_odb_mem *m);

/* Add the object (the caller checked it is not held): a copy of data, or
 * data itself when borrowed (a loaded object's, NULL until materialized).
 * unchecked: its id is the plain SHA-1 (collision detection to come). */
static int add_obj(struct rq_odb_mem *m, const git_oid *id, const void *data, size_t len,
		   git_object_t type, int borrowed, int unchecked, size_t like)
{
	unsigned char *copy = (unsigned char *)(uintptr_t)data;
	mem_object *o;

	if (m->n >= UINT32_MAX - 1) /* the index holds uint32 positions */
		return -1;
	if (!borrowed) {
		if (!(copy = malloc(len ? len : 1)))
			return -1;
		if (len)
			memcpy(copy, data, len);
	}
	if (rq_hindex_reserve(&m->index, 1024, m->n, obj_hash, m) < 0 || !(o = grow_objs(m))) {
		if (!borrowed)
			free(copy);
		return -1;
	}
	memset(o, 0, sizeof(*o));
	o->data = copy;
	o->own_data = !borrowed;
	o->unchecked = (unsigned char)unchecked;
	o->like = like;
	git_oid_cpy(&o->id, id);
	o->type = type;
	o->len = len;
	rq_hindex_add(&m->index, rq_hindex_hash_oid(id), m->n);
	m->n++;
	if (!borrowed)
		bg_hand(m, len);
	return 0;
}

/*
 * Give an object handed over without its content (data NULL) its content
 * back: inflate its encoded form and, for a delta, apply it to its base's
 * content. Only needed when such an object is read or encoded again.
 * 0, or -1 (damaged, out of memory).
 */
static int materialize(struct rq_odb_mem *m, mem_object *o, unsigned guard)
{
	rq_odb_pack_entry_info info;
	unsigned char *raw;
	size_t rawlen;

	if (o->data)
		return 0;
	if (!o->entry || !guard || rq_odb_pack_entry_parse(o->entry, o->entry_len, &info) < 0 ||
	    rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw) < 0)
		return -1;
	rawlen = info.size;
	if (info.code == 7) {
		mem_object *base = find(m, &info.base);
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

static int copy_locked(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		       mem_object *o)
{
	void *p;

	if (materialize((struct rq_odb_mem *)b, o, MATERIALIZE_DEPTH) < 0) {
		git_error_set_str(GIT_ERROR_ODB, "a handed-over object cannot be read back");
		return -1;
	}
	p = git_odb_backend_data_alloc(b, o->len + 1);
	if (p) {
		memcpy(p, o->data, o->len);
		((unsigned char *)p)[o->len] = '\0';
	}
	if (o->dropped) { /* given up again: a read is rare */
		free(o->data);
		o->data = NULL;
		o->own_data = 0;
	}
	if (!p)
		return -1;
	*out = p;
	*len = o->len;
	*type = o->type;
	return 0;
}

/* The object's content for libgit2, under the thread's lock: the thread
 * may be giving up the content of an object it encoded. */
static int copy_out(void **out, size_t *len, git_object_t *type, git_odb_backend *b, mem_object *o)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r;

	bg_lock(m);
	r = copy_locked(out, len, type, b, o);
	bg_unlock(m);
	return r;
}

static int mem_read(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		    const git_oid *id)
{
	mem_object *o = find((struct rq_odb_mem *)b, id);
	if (!o)
		return GIT_ENOTFOUND;
	return copy_out(out, len, type, b, o);
}

static int mem_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	mem_object *o = find((struct rq_odb_mem *)b, id);
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
static int find_prefix(struct rq_odb_mem *m, const git_oid *prefix, size_t hexlen, mem_object **out)
{
	*out = NULL;
	for (size_t k = 0; k < m->n; k++) {
		if (!prefix_match(&m->objs[k].id, prefix, hexlen))
			continue;
		if (*out)
			return GIT_EAMBIGUOUS;
		*out = &m->objs[k];
	}
	return *out ? 0 : GIT_ENOTFOUND;
}

static int mem_read_prefix(git_oid *out_id, void **out, size_t *len, git_object_t *type,
			   git_odb_backend *b, const git_oid *prefix, size_t hexlen)
{
	mem_object *o;
	int r = find_prefix((struct rq_odb_mem *)b, prefix, hexlen, &o);
	if (r < 0)
		return r;
	git_oid_cpy(out_id, &o->id);
	return copy_out(out, len, type, b, o);
}

static int mem_exists_prefix(git_oid *out_id, git_odb_backend *b, const git_oid *prefix,
			     size_t hexlen)
{
	mem_object *o;
	int r = find_prefix((struct rq_odb_mem *)b, prefix, hexlen, &o);
	if (r < 0)
		return r;
	git_oid_cpy(out_id, &o->id);
	return 0;
}

static int mem_exists(git_odb_backend *b, const git_oid *id)
{
	return find((struct rq_odb_mem *)b, id) != NULL;
}

static int mem_write(git_odb_backend *b, const git_oid *id, const void *data, size_t len,
		     git_object_t type)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (find(m, id))
		return 0;
	if (add_obj(m, id, data, len, type, 0, 0, 0) < 0) {
		git_error_set_oom();
		return -1;
	}
	return 0;
}

static int mem_foreach(git_odb_backend *b, git_odb_foreach_cb cb, void *payload)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	for (size_t k = 0; k < m->n; k++) {
		int r = cb(&m->objs[k].id, payload);
		if (r)
			return r;
	}
	return 0;
}

static void mem_free(git_odb_backend *b)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (!m)
		return;
	bg_finish(m);
	for (size_t k = 0; k < m->n; k++) {
		if (m->objs[k].own_data)
			free(m->objs[k].data);
		if (m->objs[k].own_entry)
			free(m->objs[k].entry);
	}
	for (size_t k = 0; k < m->nparts; k++)
		munmap(m->parts[k].p, m->parts[k].len);
	free(m->parts);
	free(m->objs);
	free(m->index.slot);
	free(m);
}

/*
 * Is the object in one of the odb's backends other than the memory store
 * (backend 0) and the loose-object backends? A loose object is not looked
 * for: that costs a system call per new object, and when the object is
 * there, writing it once more into the replay's pack does no harm (and
 * keeps it fresh, as git's freshening would). Nor are the packs of a
 * replay that moves refs (rq_odb_dedup): its pack must hold all it needs.
 */
static int exists_packed(git_odb *odb, const git_oid *id)
{
	size_t n = git_odb_num_backends(odb);

	for (size_t i = 1; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || !b->exists)
			continue;
		if (rq_odb_loose_is(b) || !rq_odb_dedup(b))
			continue;
		if (b->exists(b, id))
			return 1;
	}
	return 0;
}

/* An object's id with the plain SHA-1 (the CPU's SHA instructions where
 * there are: about 2 GB/s here, 6 times libgit2's collision-detecting
 * SHA-1). */
static void plain_id(git_oid *out, const void *data, size_t len, git_object_t type)
{
	rq_sha1_object(git_object_type2string(type), data, len, out->id);
}

/* libgit2's collision-detecting SHA-1 of the object must be id: -1 with
 * libgit2's error ("SHA1 collision attack detected") when it is not. */
static int check_id(const git_oid *id, const void *data, size_t len, git_object_t type)
{
	git_oid full;

	if (git_odb_hash(&full, data, len, type) < 0)
		return -1;
	if (!git_oid_equal(&full, id)) {
		git_error_set_str(GIT_ERROR_ODB, "object hashed to two different ids");
		return -1;
	}
	return 0;
}

/*
 * With a compressor ahead (rq_odb_mem_compress_ahead), a new object's id
 * is its plain SHA-1, and the thread runs libgit2's collision detection
 * later (rq_odb_mem_encode fails when it finds a collision). An object the
 * database has already is checked at once: that is where a collision
 * would swap contents.
 */
/* 1 + the index of the blob `like` names in the store, 0 if none. */
static size_t like_index(struct rq_odb_mem *m, const git_oid *like, git_object_t type)
{
	long k;

	if (!like || type != GIT_OBJECT_BLOB)
		return 0;
	k = rq_hindex_find(&m->index, rq_hindex_hash_oid(like), obj_eq, m, like);
	return k < 0 || m->objs[k].type != GIT_OBJECT_BLOB ? 0 : (size_t)k + 1;
}

/* The odb's first backend when it is an rq_odb_mem, else NULL. */
static struct rq_odb_mem *mem_of(git_odb *odb)
{
	git_odb_backend *b = NULL;

	if (git_odb_get_backend(&b, odb, 0) < 0 || !b || b->read != mem_read)
		return NULL;
	return (struct rq_odb_mem *)b;
}

static int ahead_of(const struct rq_odb_mem *m)
{
	return m && m->bg.enc && !m->bg.closed;
}

/* The id as the store m (NULL: none) gives it: see rq_odb_mem_hash. */
static int hash_for(const struct rq_odb_mem *m, git_oid *out, const void *data, size_t len,
		    git_object_t type)
{
	if (ahead_of(m)) {
		plain_id(out, data, len, type);
		return 1;
	}
	return git_odb_hash(out, data, len, type) < 0 ? -1 : 0;
}

int rq_odb_mem_hash(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	return hash_for(mem_of(odb), out, data, len, type);
}

int rq_odb_mem_check(const git_oid *id, const void *data, size_t len, git_object_t type)
{
	return check_id(id, data, len, type);
}

/*
 * A large blob whose earlier version the store does not hold (the first
 * pick that changes its file: the sides' blobs are the repository's) would
 * be compressed whole: 50-200 KB at a time, the largest part of a content
 * replay's CPU. When the repository's packs hold one of the sides' blobs
 * whole, its pack entry is copied as it is into the store, and the new blob
 * becomes a delta against it: the pack then holds that blob a second time,
 * which is what `git index-pack --fix-thin` does to a thin pack, and about
 * what compressing the new blob whole would have taken, minus the CPU.
 */
#define BORROW_MIN (16 * 1024)

/* Blob id as the repository's packs hold it, whole, copied into the store
 * (encoded already), when its size is within half to twice `near` (a base
 * much larger than the new blob would cost more than compressing it, one
 * much smaller would make no delta): 1 + its index, or 0 when not. */
static size_t borrow_base(struct rq_odb_mem *m, git_odb *odb, const git_oid *id, size_t near)
{
	unsigned char *entry, *content;
	size_t entry_len, len;
	mem_object *o;

	if (!id || find(m, id) ||
	    rq_odb_whole_blob(odb, id, near / 2, near * 2, &entry, &entry_len, &content, &len) != 1)
		return 0;
	if (m->n >= UINT32_MAX - 1 || rq_hindex_reserve(&m->index, 1024, m->n, obj_hash, m) < 0 ||
	    !(o = grow_objs(m))) {
		free(entry);
		free(content);
		return 0;
	}
	memset(o, 0, sizeof(*o));
	git_oid_cpy(&o->id, id);
	o->type = GIT_OBJECT_BLOB;
	o->len = len;
	o->data = content;
	o->own_data = 1;
	o->entry = entry;
	o->entry_len = entry_len;
	o->own_entry = 1;
	o->crc = rq_odb_pack_crc32(entry, entry_len);
	o->claimed = 1; /* encoded already: the thread passes it by */
	o->borrowed = 1;
	rq_hindex_add(&m->index, rq_hindex_hash_oid(id), m->n);
	return ++m->n;
}

/* The delta base of a new blob: like's version in the store; else (large
 * blobs only) the first of like and alts[0..nalt) the packs hold whole,
 * borrowed, or an alt the store has (borrowed for an earlier blob). 1 +
 * its index, or 0. */
static size_t base_for(struct rq_odb_mem *m, git_odb *odb, size_t len, git_object_t type,
		       const git_oid *like, const git_oid *const *alts, size_t nalt)
{
	size_t k = like_index(m, like, type);

	if (k || type != GIT_OBJECT_BLOB || len < BORROW_MIN)
		return k;
	k = borrow_base(m, odb, like, len);
	/* another version: in the store already (borrowed before), or not */
	for (size_t i = 0; !k && i < nalt; i++)
		if (!(k = like_index(m, alts[i], type)))
			k = borrow_base(m, odb, alts[i], len);
	return k;
}

/* Write the object whose id (from rq_odb_mem_hash) is *id. */
static int write_hashed(struct rq_odb_mem *m, git_odb *odb, git_oid *id, const void *data,
			size_t len, git_object_t type, const git_oid *like,
			const git_oid *const *alts, size_t nalt)
{
	int ahead = ahead_of(m);

	if (find(m, id))
		return ahead ? check_id(id, data, len, type) : 0;
	/* a packed object: git_odb_write() freshens its pack, as git does */
	if (exists_packed(odb, id))
		return git_odb_write(id, odb, data, len, type);
	if (add_obj(m, id, data, len, type, 0, ahead,
		    base_for(m, odb, len, type, like, alts, nalt)) < 0) {
		git_error_set_oom();
		return -1;
	}
	return 0;
}

int rq_odb_mem_write_hashed(const git_oid *id, git_odb *odb, const void *data, size_t len,
			    git_object_t type)
{
	struct rq_odb_mem *m = mem_of(odb);
	git_oid copy = *id;

	if (!m)
		return git_odb_write(&copy, odb, data, len, type);
	return write_hashed(m, odb, &copy, data, len, type, NULL, NULL, 0);
}

int rq_odb_mem_write_like(git_oid *out, git_odb *odb, const void *data, size_t len,
			  git_object_t type, const git_oid *like, const git_oid *const *alts,
			  size_t nalt)
{
	struct rq_odb_mem *m = mem_of(odb);

	if (!m)
		return git_odb_write(out, odb, data, len, type);
	if (hash_for(m, out, data, len, type) < 0)
		return -1;
	return write_hashed(m, odb, out, data, len, type, like, alts, nalt);
}

int rq_odb_mem_write(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	return rq_odb_mem_write_like(out, odb, data, len, type, NULL, NULL, 0);
}

int rq_odb_mem_new(git_odb_backend **out)
{
	struct rq_odb_mem *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m || git_odb_init_backend(&m->parent, GIT_ODB_BACKEND_VERSION) < 0) {
		free(m);
		return -1;
	}
	m->parent.read = mem_read;
	m->parent.read_prefix = mem_read_prefix;
	m->parent.read_header = mem_read_header;
	m->parent.write = mem_write;
	m->parent.exists = mem_exists;
	m->parent.exists_prefix = mem_exists_prefix;
	m->parent.foreach = mem_foreach;
	m->parent.free = mem_free;
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
	return i < m->n ? &m->objs[i].id : NULL;
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

/* An object's record in a part file (REC_SIZE bytes at r). */
static void put_record(unsigned char *r, const mem_object *o)
{
	r[REC_TYPE] = (unsigned char)o->type;
	memcpy(r + REC_ID, o->id.id, GIT_OID_RAWSZ);
	put_le(r + REC_LEN, o->len, 8);
	put_le(r + REC_ENTRY_LEN, o->entry ? o->entry_len : 0, 8);
	put_le(r + REC_CRC, o->entry ? o->crc : 0, 4);
	put_le(r + REC_DEPTH, o->entry ? o->depth : 0, 4);
	memcpy(r + REC_BASE, o->base.id, GIT_OID_RAWSZ);
}

/*
 * The part file: the magic, the object count (8 bytes), a record per
 * object, then every encoded form, in object order. No content: the
 * parent only copies the encoded forms into the pack, and an object it
 * must read or encode again is inflated (materialize()).
 */
int rq_odb_mem_save(git_odb_backend *b, size_t since, const char *path, rq_error *err)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	size_t count = since < m->n ? m->n - since : 0;
	unsigned char head[PART_HEAD], *recs = malloc(count * REC_SIZE + 1);
	iobatch io = {.fd = -1};

	if (!recs || bg_finish(m) < 0) {
		free(recs);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	io.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (io.fd < 0) {
		free(recs);
		return rq_error_set(err, RQ_E_IO, "cannot create %s: %s", path, strerror(errno));
	}
	memcpy(head, PART_MAGIC, PART_MAGIC_LEN);
	put_le(head + PART_MAGIC_LEN, count, 8);
	for (size_t k = 0; k < count; k++)
		put_record(recs + k * REC_SIZE, &m->objs[since + k]);
	io_add(&io, head, sizeof(head));
	io_add(&io, recs, count * REC_SIZE);
	for (size_t k = since; k < m->n; k++) {
		if (!m->objs[k].entry) {
			free(recs);
			close(io.fd);
			unlink(path);
			return rq_error_set(err, RQ_E_INTERNAL, "an object was not encoded");
		}
		io_add(&io, m->objs[k].entry, m->objs[k].entry_len);
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
/* Map a part file and keep it mapped with the store (the objects loaded
 * from it point into it). */
static int map_part(struct rq_odb_mem *m, const char *path, const unsigned char **buf, size_t *len,
		    rq_error *err)
{
	struct mapped_part *parts;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *map;

	if (fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_size < PART_HEAD || (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	}
	*len = (size_t)st.st_size;
	map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return rq_error_set(err, RQ_E_IO, "cannot map %s: %s", path, strerror(errno));
	if (!(parts = realloc(m->parts, (m->nparts + 1) * sizeof(*parts)))) {
		munmap(map, *len);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	m->parts = parts;
	m->parts[m->nparts].p = map;
	m->parts[m->nparts].len = *len;
	m->nparts++;
	*buf = map;
	return 0;
}

/* The magic and the sizes, before any object is taken: the file must be
 * exactly the header, count records and their entries. */
static int check_part(const unsigned char *buf, size_t len, const char *path, size_t *count,
		      rq_error *err)
{
	size_t sum = 0;

	if (memcmp(buf, PART_MAGIC, PART_MAGIC_LEN) != 0)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	*count = (size_t)get_le(buf + PART_MAGIC_LEN, 8);
	if (*count > (len - PART_HEAD) / REC_SIZE)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	for (size_t k = 0; k < *count; k++) {
		uint64_t entry_len = get_le(buf + PART_HEAD + k * REC_SIZE + REC_ENTRY_LEN, 8);
		if (!entry_len || entry_len > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
		sum += (size_t)entry_len;
		if (sum > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	}
	if (PART_HEAD + *count * REC_SIZE + sum != len)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated or too long", path);
	return 0;
}

/* The object of record r, whose entry is at entry, unless it is held: no
 * content (materialize() inflates it if it is ever needed). */
static int add_part_object(struct rq_odb_mem *m, const unsigned char *r, const unsigned char *entry,
			   const char *path, rq_error *err)
{
	git_object_t type = (git_object_t)r[REC_TYPE];
	uint64_t len = get_le(r + REC_LEN, 8);
	size_t entry_len = (size_t)get_le(r + REC_ENTRY_LEN, 8);
	uint32_t crc = (uint32_t)get_le(r + REC_CRC, 4), depth = (uint32_t)get_le(r + REC_DEPTH, 4);
	git_oid id;
	mem_object *o;

	if (type < GIT_OBJECT_COMMIT || type > GIT_OBJECT_TAG || len > SIZE_MAX / 2)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
	if (rq_odb_pack_crc32(entry, entry_len) != crc)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: damaged object", path);
	git_oid_fromraw(&id, r + REC_ID);
	if (find(m, &id))
		return 0;
	if (add_obj(m, &id, NULL, (size_t)len, type, 1, 0, 0) < 0)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	o = &m->objs[m->n - 1];
	o->entry = (unsigned char *)(uintptr_t)entry;
	o->entry_len = entry_len;
	o->crc = crc;
	if (depth) {
		o->depth = depth;
		git_oid_fromraw(&o->base, r + REC_BASE);
	}
	return 0;
}

int rq_odb_mem_load(git_odb_backend *b, const char *path, rq_error *err)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	const unsigned char *buf = NULL, *entry;
	size_t len = 0, count = 0;

	bg_finish(m); /* a failure stays for rq_odb_mem_encode to report */
	if (map_part(m, path, &buf, &len, err) < 0 || check_part(buf, len, path, &count, err) < 0)
		return -1;
	entry = buf + PART_HEAD + count * REC_SIZE;
	for (size_t k = 0; k < count; k++) {
		const unsigned char *r = buf + PART_HEAD + k * REC_SIZE;
		if (add_part_object(m, r, entry, path, err) < 0)
			return -1;
		entry += (size_t)get_le(r + REC_ENTRY_LEN, 8);
	}
	return 0;
}

static void drop_entry(mem_object *o)
{
	if (o->own_entry)
		free(o->entry);
	o->entry = NULL;
	o->own_entry = 0;
}

/* An object's encoded form, before it is stored in the object. */
typedef struct encoded {
	unsigned char *entry;
	size_t entry_len;
	uint32_t crc, depth;
	git_oid base;
} encoded;

static void store_encoded(mem_object *o, const encoded *e)
{
	drop_entry(o);
	o->entry = e->entry;
	o->entry_len = e->entry_len;
	o->crc = e->crc;
	o->depth = e->depth;
	git_oid_cpy(&o->base, &e->base);
	o->own_entry = 1;
}

/*
 * Encode content: a tree as a delta against the best of the candidate
 * trees (a replay writes each changed directory once per pick, mostly next
 * to its previous version: the smallest delta wins), a blob against its
 * one candidate (the earlier version of its file), anything else, or what
 * no candidate suits, whole. 0, or -1 (out of memory).
 */
static int encode_content(rq_odb_pack_encoder *enc, git_object_t type, const unsigned char *data,
			  size_t len, const bg_tree *cand, size_t ncand, encoded *out)
{
	const bg_tree *best = NULL;
	size_t best_cost = SIZE_MAX;
	int r;

	memset(out, 0, sizeof(*out));
	if (type == GIT_OBJECT_BLOB && ncand == 1) {
		r = rq_odb_pack_encode_blob_delta(enc, &cand->id, cand->data, cand->len, data, len,
						  &out->entry, &out->entry_len, &out->crc);
		if (r < 0)
			return -1;
		if (r > 0) {
			out->depth = cand->depth + 1;
			git_oid_cpy(&out->base, &cand->id);
			return 0;
		}
	}
	for (size_t j = 0; type == GIT_OBJECT_TREE && len >= 128 && j < ncand; j++) {
		size_t cost = rq_odb_pack_delta_cost(cand[j].data, cand[j].len, data, len);
		if (cost < best_cost) {
			best_cost = cost;
			best = &cand[j];
		}
	}
	if (best) {
		r = rq_odb_pack_encode_delta(enc, &best->id, best->data, best->len, data, len,
					     &out->entry, &out->entry_len, &out->crc);
		if (r < 0)
			return -1;
		if (r > 0) {
			out->depth = best->depth + 1;
			git_oid_cpy(&out->base, &best->id);
			return 0;
		}
	}
	return rq_odb_pack_encode(enc, type, data, len, &out->entry, &out->entry_len, &out->crc);
}

/* Encode o whole. */
static int encode_whole(mem_object *o, rq_odb_pack_encoder *enc)
{
	encoded e;

	if (encode_content(enc, o->type, o->data, o->len, NULL, 0, &e) < 0)
		return -1;
	store_encoded(o, &e);
	return 0;
}

/* Can b be a delta base now (encoded, its content at hand, not at the
 * deepest chain)? */
static int usable_base(const mem_object *b)
{
	return b->entry && b->data && b->depth < DELTA_DEPTH;
}

static bg_tree as_base(const mem_object *b)
{
	return (bg_tree){b->id, b->data, b->len, b->depth, 0};
}

/*
 * Encode object k: its candidate bases are the earlier encoded trees of
 * [lo, k) (bases always come before their deltas in write order, and so in
 * the pack), at most DELTA_WINDOW of them, none at the deepest chain. An
 * object whose id is the plain SHA-1 gets its collision check here.
 * 0, -1 (out of memory) or -2 (a collision).
 */
static int encode_one(struct rq_odb_mem *m, size_t k, size_t lo, rq_odb_pack_encoder *enc)
{
	mem_object *o = &m->objs[k];
	bg_tree cand[DELTA_WINDOW];
	size_t ncand = 0;
	encoded e;

	if (o->unchecked) {
		if (check_id(&o->id, o->data, o->len, o->type) < 0)
			return -2;
		o->unchecked = 0;
	}
	if (o->like > lo && o->like <= k && usable_base(&m->objs[o->like - 1]))
		cand[ncand++] = as_base(&m->objs[o->like - 1]);
	for (size_t j = k; o->type == GIT_OBJECT_TREE && j > lo && ncand < DELTA_WINDOW; j--) {
		const mem_object *b = &m->objs[j - 1];
		if (b->type == GIT_OBJECT_TREE && usable_base(b))
			cand[ncand++] = as_base(b);
	}
	if (encode_content(enc, o->type, o->data, o->len, cand, ncand, &e) < 0)
		return -1;
	store_encoded(o, &e);
	return 0;
}

int rq_odb_mem_encode(git_odb_backend *b, rq_odb_pack_encoder *enc, size_t since)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r = bg_finish(m);

	for (size_t k = since; k < m->n && r == 0; k++)
		if (!m->objs[k].entry)
			r = encode_one(m, k, since, enc);
	return r;
}

int rq_odb_mem_check_deltas(git_odb_backend *b, rq_odb_pack_encoder *enc)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r = bg_finish(m);

	if (r < 0)
		return r;
	for (size_t k = 0; k < m->n; k++) {
		mem_object *o = &m->objs[k], *base;
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
		base->used = 1;
	}
	return 0;
}

int rq_odb_mem_entry(git_odb_backend *b, size_t i, rq_odb_pack_entry *out)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (i >= m->n || !m->objs[i].entry)
		return -1;
	if (m->objs[i].borrowed && !m->objs[i].used)
		return 1;
	git_oid_cpy(&out->id, &m->objs[i].id);
	out->data = m->objs[i].entry;
	out->len = m->objs[i].entry_len;
	out->crc = m->objs[i].crc;
	return 0;
}

/* ---- the background compressor ---- */

/* The thread starts once this much content waits (a small replay packs
 * faster alone). */
#define BG_START_BYTES (8 * 1024)
/* How long the thread polls for more work before it sleeps. Waking a
 * sleeping thread costs a system call, and on a virtual machine whose idle
 * CPU halts, up to 0.7 ms before it runs: objects come every 10-20 us
 * during the picks, and a thread that slept between them did most of its
 * work after the last one (the 50-pick topic waited 0.9 ms, median, for it). */
#define BG_SPIN_NS 100000
/* blobs this large are read back from their entry once encoded */
#define BG_DROP_BYTES 4096

/* Encode one object the thread took (a copy of its fields), with the
 * collision check its plain id still needs. 0, -1 or -2 as encode_one. */
static int bg_encode(bg_state *bg, const mem_object *o, const bg_tree *blob_base, encoded *e)
{
	size_t ncand = 0;
	bg_tree cand[DELTA_WINDOW];

	if (o->unchecked == 1 && check_id(&o->id, o->data, o->len, o->type) < 0)
		return -2;
	if (blob_base)
		cand[ncand++] = *blob_base;
	/* the window, the latest tree first */
	for (size_t j = bg->nwin; j > 0 && o->type == GIT_OBJECT_TREE; j--)
		if (bg->win[j - 1].depth < DELTA_DEPTH)
			cand[ncand++] = bg->win[j - 1];
	if (encode_content(bg->enc, o->type, o->data, o->len, cand, ncand, e) < 0)
		return -1;
	return 0;
}

/* A tree the thread encoded (object k) joins its window; the oldest one
 * leaves it: 1 + its index (0: none), to give its content up. */
static size_t bg_remember(bg_state *bg, const mem_object *o, size_t k, const encoded *e)
{
	size_t gone = 0;

	if (o->type != GIT_OBJECT_TREE)
		return 0;
	if (bg->nwin == DELTA_WINDOW) {
		gone = bg->win[0].idx + 1;
		memmove(bg->win, bg->win + 1, (DELTA_WINDOW - 1) * sizeof(bg->win[0]));
		bg->nwin--;
	}
	bg->win[bg->nwin++] = (bg_tree){o->id, o->data, o->len, e->depth, k};
	return gone;
}

/*
 * A large blob or a commit the thread encoded gives its content up: the
 * pack needs only the entry, and a replay seldom reads an object it wrote
 * (the next pick's side of a file changed again, the next pick's parent:
 * inflated from the entry; the next version's delta base, bg_content).
 * Most of a replay's memory would otherwise be these copies. Trees stay
 * while they are in the window (its delta bases).
 */
static void bg_drop(mem_object *o)
{
	int large_blob = o->type == GIT_OBJECT_BLOB && o->len >= BG_DROP_BYTES;

	/* trees: when they leave the window (bg_drop_tree) */
	if (!(large_blob || o->type == GIT_OBJECT_COMMIT) || !o->own_data)
		return;
	free(o->data);
	o->data = NULL;
	o->own_data = 0;
	o->dropped = 1;
}

/*
 * The content of object k for the thread, under the lock: its data, or, for
 * a blob that gave it up, inflated from its entry (a delta: applied to its
 * base's content, the earlier version of the file, the same way). *own:
 * the caller frees it. NULL: it cannot be had (out of memory, damaged).
 */
static unsigned char *bg_content(struct rq_odb_mem *m, size_t k, unsigned guard, int *own)
{
	const mem_object *o = &m->objs[k];
	rq_odb_pack_entry_info info;
	unsigned char *raw, *base, *full = NULL;
	size_t base_len, full_len = 0;
	int base_own = 0;

	*own = 0;
	if (o->data)
		return o->data;
	if (!guard || !o->entry || rq_odb_pack_entry_parse(o->entry, o->entry_len, &info) < 0 ||
	    rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw) < 0)
		return NULL;
	*own = 1;
	if (info.code != 7)
		return raw;
	if (!o->like || o->like - 1 >= k ||
	    !(base = bg_content(m, o->like - 1, guard - 1, &base_own))) {
		free(raw);
		return NULL;
	}
	base_len = m->objs[o->like - 1].len;
	if (rq_odb_pack_apply_delta(base, base_len, raw, info.size, &full, &full_len) < 0 ||
	    full_len != o->len) {
		free(full);
		full = NULL;
	}
	free(raw);
	if (base_own)
		free(base);
	return full;
}

/* Take object bg->done (under the lock): a copy of it, and its blob base
 * when that can be one (*tmp: its content, when it had to be inflated). */
static const bg_tree *bg_take(struct rq_odb_mem *m, mem_object *o, bg_tree *base,
			      unsigned char **tmp)
{
	const mem_object *b;
	unsigned char *data;
	int own = 0;

	*tmp = NULL;
	*o = m->objs[m->bg.done];
	if (o->unchecked == 1)
		m->objs[m->bg.done].unchecked = 2;
	if (!o->like || o->like > m->bg.done)
		return NULL;
	b = &m->objs[o->like - 1];
	/* one bg_help encodes is whole (depth 0), its content kept until the
	 * join: the same base either way */
	if (!(b->entry || b->claimed) || b->depth >= DELTA_DEPTH ||
	    !(data = bg_content(m, o->like - 1, DELTA_DEPTH + 1, &own)))
		return NULL;
	if (own)
		*tmp = data;
	*base = (bg_tree){b->id, data, b->len, b->depth, 0};
	return base;
}

/* A tree that left the thread's window gives its content up, unless its
 * collision check is being run by bg_help. */
static void bg_drop_tree(mem_object *o)
{
	if (o->type != GIT_OBJECT_TREE || !o->own_data || !o->entry || o->unchecked == 2)
		return;
	free(o->data);
	o->data = NULL;
	o->own_data = 0;
	o->dropped = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under the lock, nothing to do: poll for more (the lock released) for up
 * to BG_SPIN_NS. 1 when something came (or the stop), 0 when not. */
static int bg_spin(bg_state *bg)
{
	size_t seen = bg->handed;
	uint64_t t0 = mono_ns();
	unsigned i = 0;

	if (bg->no_poll)
		return 0;
	pthread_mutex_unlock(&bg->mu);
	while (atomic_load_explicit(&bg->posted, memory_order_acquire) == seen) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		if (++i % 64 == 0 && mono_ns() - t0 >= BG_SPIN_NS)
			break;
	}
	pthread_mutex_lock(&bg->mu);
	return bg->handed != seen || bg->stop;
}

static void *bg_main(void *arg)
{
	struct rq_odb_mem *m = arg;
	bg_state *bg = &m->bg;

	pthread_mutex_lock(&bg->mu);
	for (;;) {
		mem_object o;
		bg_tree base;
		const bg_tree *blob_base;
		unsigned char *tmp;
		size_t gone, k;
		encoded e;
		int r;
		while (!bg->stop && bg->done == bg->handed && !bg_spin(bg)) {
			bg->sleeping = 1;
			pthread_cond_wait(&bg->wake, &bg->mu);
			bg->sleeping = 0;
		}
		if (bg->done == bg->handed)
			break; /* stopped, and all done */
		if (m->objs[bg->done].claimed) {
			bg->done++; /* bg_help encodes it */
			continue;
		}
		blob_base = bg_take(m, &o, &base, &tmp);
		k = bg->done;
		pthread_mutex_unlock(&bg->mu);
		rq_testhook_at("thread-encode", k);
		r = bg_encode(bg, &o, blob_base, &e);
		free(tmp);
		gone = r == 0 ? bg_remember(bg, &o, bg->done, &e) : 0;
		pthread_mutex_lock(&bg->mu);
		if (gone)
			bg_drop_tree(&m->objs[gone - 1]);
		if (r == 0) {
			store_encoded(&m->objs[bg->done], &e);
			/* a borrowed base has served: read back from its entry if need be */
			if (o.like && m->objs[o.like - 1].borrowed)
				bg_drop(&m->objs[o.like - 1]);
			/* bg_help may be checking it: then it gives the content up */
			if (o.unchecked != 2) {
				m->objs[bg->done].unchecked = 0;
				bg_drop(&m->objs[bg->done]);
			}
		} else if (!bg->failed) {
			bg->failed = r;
		}
		bg->done++;
	}
	pthread_mutex_unlock(&bg->mu);
	return NULL;
}

/* Start the thread over the objects written so far. 0, or -1 (it does
 * not run: the objects are encoded at the end, as without it). */
static int bg_start(struct rq_odb_mem *m)
{
	bg_state *bg = &m->bg;

	if (pthread_mutex_init(&bg->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&bg->wake, NULL) != 0) {
		pthread_mutex_destroy(&bg->mu);
		return -1;
	}
	bg->handed = m->n;
	atomic_store_explicit(&bg->posted, m->n, memory_order_relaxed);
	bg->owner = getpid();
	rq_mem_one_arena();
	if (pthread_create(&bg->thread, NULL, bg_main, m) != 0) {
		pthread_cond_destroy(&bg->wake);
		pthread_mutex_destroy(&bg->mu);
		return -1;
	}
	bg->running = 1;
	RQ_TRACE_AT("compressor: started");
	return 0;
}

/* A new object of len bytes: the thread's to encode (started when enough
 * waits; woken if it sleeps). */
static void bg_hand(struct rq_odb_mem *m, size_t len)
{
	bg_state *bg = &m->bg;

	if (!bg->enc || bg->closed)
		return;
	bg->pending_bytes += len;
	if (!bg->running) {
		if (bg->pending_bytes >= BG_START_BYTES && bg_start(m) < 0)
			bg->closed = 1;
		if (bg->running)
			bg->pending_bytes = 0;
		return;
	}
	pthread_mutex_lock(&bg->mu);
	bg->handed = m->n;
	atomic_store_explicit(&bg->posted, m->n, memory_order_release);
	if (bg->sleeping)
		pthread_cond_signal(&bg->wake);
	pthread_mutex_unlock(&bg->mu);
}

/* Help with a copy of an object: its collision check (check), and the
 * whole encoding of a blob with no earlier version (whole) with this
 * process's own encoder (*enc, made at the first use). 0, -1 or -2. */
static int help_one(bg_state *bg, const mem_object *o, int check, int whole,
		    rq_odb_pack_encoder **enc, encoded *e)
{
	if (check && check_id(&o->id, o->data, o->len, o->type) < 0)
		return -2;
	if (!whole)
		return 0;
	if (!*enc && !(*enc = rq_odb_pack_encoder_new_level(rq_odb_pack_encoder_level(bg->enc))))
		return -1;
	return encode_content(*enc, o->type, o->data, o->len, NULL, 0, e) < 0 ? -1 : 0;
}

/*
 * bg_help's work on object k, under the lock (released meanwhile): its
 * collision check if it still needs one, and its whole encoding if it is a
 * blob with no earlier version that nobody encoded yet.
 */
static void help_with(struct rq_odb_mem *m, size_t k, rq_odb_pack_encoder **enc)
{
	bg_state *bg = &m->bg;
	mem_object *o = &m->objs[k], copy;
	int check = o->unchecked == 1, r;
	int whole = o->type == GIT_OBJECT_BLOB && !o->like && o->data && !o->entry && !o->claimed;
	encoded e = {0};

	if (!check && !whole)
		return;
	o->unchecked = check ? 2 : o->unchecked;
	o->claimed = (unsigned char)(o->claimed || whole);
	copy = *o;
	pthread_mutex_unlock(&bg->mu);
	rq_testhook_at("help-unlocked", k);
	r = help_one(bg, &copy, check, whole, enc, &e);
	pthread_mutex_lock(&bg->mu);
	if (r < 0 && !bg->failed)
		bg->failed = r;
	if (check && r != -2)
		o->unchecked = 0;
	/* an object the thread encoded meanwhile keeps its content, freed with
	 * the store: the thread may be reading it as the next version's delta
	 * base right now (it does not give it up while this check runs) */
	if (e.entry)
		store_encoded(o, &e);
	rq_testhook_at("help-done", k);
}

typedef struct sized {
	size_t len, k;
} sized;

/* The largest first (then in write order). */
static int larger_first(const void *a_, const void *b_)
{
	const sized *a = a_, *b = b_;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* The blobs with no earlier version the thread has not reached, the
 * largest first: malloc'd, *n of them (NULL when none or out of memory:
 * bg_help then takes them from the last one down). Under the lock. */
static sized *whole_blobs(const struct rq_odb_mem *m, size_t *n)
{
	sized *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t k = m->bg.done + 1; k < m->bg.handed; k++) {
		const mem_object *o = &m->objs[k];
		if (o->type != GIT_OBJECT_BLOB || o->like || !o->data || o->entry)
			continue;
		if (*n == cap) {
			sized *nv = rq_mem_grow(v, &cap, *n + 1, sizeof(*v), 16);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = (sized){o->len, k};
	}
	if (*n)
		qsort(v, *n, sizeof(*v), larger_first);
	return v;
}

/*
 * The picks are over and the thread has objects left: this process takes
 * some while the thread goes on in write order. First the blobs that have
 * no earlier version (whole: the same bytes whichever side encodes them),
 * the largest first, so that neither side is left with a large one at the
 * end; then, from the last object down, the collision checks. Trees and
 * later versions stay the thread's, in write order, so the pack is the
 * same as the thread alone would make. The thread skips what is claimed,
 * and uses a claimed blob as a delta base as it would use it encoded.
 */
static void bg_help(struct rq_odb_mem *m)
{
	bg_state *bg = &m->bg;
	rq_odb_pack_encoder *enc = NULL;
	sized *order;
	size_t n;

	pthread_mutex_lock(&bg->mu);
	pthread_cond_signal(&bg->wake);
	order = whole_blobs(m, &n);
	for (size_t j = 0; j < n; j++)
		if (order[j].k > bg->done)
			help_with(m, order[j].k, &enc);
	for (size_t k = bg->handed; k > bg->done + 1; k--)
		help_with(m, k - 1, &enc);
	pthread_mutex_unlock(&bg->mu);
	free(order);
	rq_odb_pack_encoder_free(enc);
}

/*
 * Stop compressing ahead: the thread encodes what it was handed, and is
 * joined; objects it did not encode are encoded by the caller. In a
 * process forked while it ran (never a replay's case: its workers fork
 * before any object is written) the thread is not there: its state is
 * left alone. 0, or what the thread failed with (-1, -2).
 */
static int bg_finish(struct rq_odb_mem *m)
{
	bg_state *bg = &m->bg;

	bg->closed = 1;
	if (!bg->running)
		return bg->failed;
	bg->running = 0;
	if (bg->owner != getpid())
		return 0;
	RQ_TRACE_AT("compressor: help");
	bg_help(m);
	RQ_TRACE_AT("compressor: helped");
	pthread_mutex_lock(&bg->mu);
	bg->stop = 1;
	atomic_store_explicit(&bg->posted, SIZE_MAX, memory_order_release);
	pthread_cond_signal(&bg->wake);
	pthread_mutex_unlock(&bg->mu);
	pthread_join(bg->thread, NULL);
	RQ_TRACE_AT("compressor: joined");
	pthread_cond_destroy(&bg->wake);
	pthread_mutex_destroy(&bg->mu);
	for (size_t k = 0; k < m->n; k++)
		if (m->objs[k].claimed && m->objs[k].entry)
			bg_drop(&m->objs[k]);
	return bg->failed;
}

void rq_odb_mem_no_poll(git_odb_backend *b)
{
	((struct rq_odb_mem *)b)->bg.no_poll = 1;
}

void rq_odb_mem_compress_ahead(git_odb_backend *b, rq_odb_pack_encoder *enc)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (!m->bg.closed && !m->bg.running)
		m->bg.enc = enc;
}
