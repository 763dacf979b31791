/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_mem: the new objects of a replay, held in memory as an object
 * database backend (see the header): libgit2's read and write calls over
 * the store (rq_odb_store), the replay's writes with their ids and delta
 * bases, the encoding at the end. The thread that encodes ahead is
 * rq_odb_compress's, the part files rq_odb_part's.
 */
#include "rq_odb_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_odb.h"
#include "rq_hash.h"
#include "rq_odb_compress.h"
#include "rq_odb_loose.h"
#include "rq_odb_packread.h"
#include "rq_odb_read.h"
#include "rq_odb_store.h"
#include "rq_sha1.h"

/* The backend: the store, and its compressor. */
struct rq_odb_mem {
	git_odb_backend parent;
	rq_odb_store store;
	rq_odb_compress bg;
};

static rq_odb_store_obj *find(struct rq_odb_mem *m, const rq_oid *id)
{
	return rq_odb_store_find(&m->store, id);
}

/* libgit2's callbacks take its 20-byte ids: SHA-1 only (a SHA-256 store
 * refuses them first, see refused), converted at the callback */
static rq_odb_store_obj *find_git(struct rq_odb_mem *m, const git_oid *id)
{
	return rq_odb_store_find(&m->store, RQ_GIT_ID(id));
}

static void to_git(git_oid *out, const rq_oid *id)
{
	memcpy(out->id, id->id, GIT_OID_RAWSZ);
}

static int is_sha256(const struct rq_odb_mem *m)
{
	return rq_odb_store_algo(&m->store)->rawsz == rq_oid_sha256.rawsz;
}

static int copy_locked(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		       rq_odb_store_obj *o)
{
	void *p;

	if (rq_odb_store_materialize(&((struct rq_odb_mem *)b)->store, o,
				     RQ_ODB_STORE_MATERIALIZE_DEPTH) < 0) {
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
static int copy_out(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		    rq_odb_store_obj *o)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r;

	rq_odb_store_lock(&m->store);
	r = copy_locked(out, len, type, b, o);
	rq_odb_store_unlock(&m->store);
	return r;
}

/* libgit2's callbacks in a SHA-256 store fail, naming themselves. */
static int refused(const git_odb_backend *b, const char *what)
{
	return rq_odb_read_refused(((const struct rq_odb_mem *)b)->store.algo, what);
}

static int mem_read(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		    const git_oid *id)
{
	rq_odb_store_obj *o;

	if (refused(b, "read of a new object"))
		return GIT_ERROR;
	if (!(o = find_git((struct rq_odb_mem *)b, id)))
		return GIT_ENOTFOUND;
	return copy_out(out, len, type, b, o);
}

static int mem_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	rq_odb_store_obj *o;

	if (refused(b, "read_header of a new object"))
		return GIT_ERROR;
	if (!(o = find_git((struct rq_odb_mem *)b, id)))
		return GIT_ENOTFOUND;
	*len = o->len;
	*type = o->type;
	return 0;
}

/* The one object whose id starts with the first hexlen digits of prefix:
 * 0, GIT_ENOTFOUND or GIT_EAMBIGUOUS. */
static int find_prefix(struct rq_odb_mem *m, const rq_oid *prefix, size_t hexlen,
		       rq_odb_store_obj **out)
{
	*out = NULL;
	for (size_t k = 0; k < m->store.n; k++) {
		if (!rq_oid_has_prefix(&m->store.objs[k].id, prefix, hexlen))
			continue;
		if (*out)
			return GIT_EAMBIGUOUS;
		*out = &m->store.objs[k];
	}
	return *out ? 0 : GIT_ENOTFOUND;
}

static int mem_read_prefix(git_oid *out_id, void **out, size_t *len, git_object_t *type,
			   git_odb_backend *b, const git_oid *prefix, size_t hexlen)
{
	rq_odb_store_obj *o;
	int r = refused(b, "read_prefix among the new objects");

	if (r < 0 || (r = find_prefix((struct rq_odb_mem *)b, RQ_GIT_ID(prefix), hexlen, &o)) < 0)
		return r;
	to_git(out_id, &o->id);
	return copy_out(out, len, type, b, o);
}

static int mem_exists_prefix(git_oid *out_id, git_odb_backend *b, const git_oid *prefix,
			     size_t hexlen)
{
	rq_odb_store_obj *o;
	int r = refused(b, "exists_prefix among the new objects");

	if (r < 0 || (r = find_prefix((struct rq_odb_mem *)b, RQ_GIT_ID(prefix), hexlen, &o)) < 0)
		return r;
	to_git(out_id, &o->id);
	return 0;
}

static int mem_exists(git_odb_backend *b, const git_oid *id)
{
	if (refused(b, "exists of a new object"))
		return 0; /* libgit2 takes any answer for yes: the error is set */
	return find_git((struct rq_odb_mem *)b, id) != NULL;
}

/* Add a new object (a copy of data) and hand it to the compressor. 0, or
 * -1 out of memory (set). */
static int add_new(struct rq_odb_mem *m, const rq_oid *id, const void *data, size_t len,
		   git_object_t type, int unchecked, size_t like)
{
	if (rq_odb_store_add(&m->store, id, data, len, type, 0, unchecked, like) < 0) {
		git_error_set_oom();
		return -1;
	}
	rq_odb_compress_hand(&m->bg, len);
	return 0;
}

static int mem_write(git_odb_backend *b, const git_oid *id, const void *data, size_t len,
		     git_object_t type)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	if (refused(b, "write of a new object"))
		return GIT_ERROR;
	if (find_git(m, id))
		return 0;
	return add_new(m, RQ_GIT_ID(id), data, len, type, 0, 0);
}

static int mem_foreach(git_odb_backend *b, git_odb_foreach_cb cb, void *payload)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;

	if (refused(b, "foreach of the new objects"))
		return GIT_ERROR;
	for (size_t k = 0; k < m->store.n; k++) {
		git_oid id;
		int r;
		to_git(&id, &m->store.objs[k].id);
		r = cb(&id, payload);
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
	rq_odb_compress_finish(&m->bg);
	rq_odb_store_free(&m->store);
	free(m);
}

/*
 * Is the object in one of the odb's packs (the backends after the memory
 * store, backend 0, other than the loose objects)? 1 with *pr the pack
 * reader that holds it (NULL: a backend of libgit2's, SHA-1 only), else 0.
 * A loose object is not looked for: that costs a system call per new
 * object, and when the object is there, writing it once more into the
 * replay's pack does no harm (and keeps it fresh, as git's freshening
 * would). Nor are the packs of a replay that moves refs (rq_odb_dedup):
 * its pack must hold all it needs.
 */
static int exists_packed(const struct rq_odb_mem *m, git_odb *odb, const rq_oid *id,
			 rq_odb_packread **pr)
{
	size_t n = git_odb_num_backends(odb), len;
	git_object_t type;
	git_oid g;

	for (size_t i = 1; i < n; i++) {
		git_odb_backend *b = NULL;
		int r = -1;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || rq_odb_loose_is(b) ||
		    !rq_odb_dedup(b))
			continue;
		/* our indexes answer; libgit2's when they cannot tell */
		if ((*pr = rq_odb_packs_reader(b)) && (r = rq_odb_packread_has(*pr, id)) >= 0) {
			if (r)
				return 1;
			continue;
		}
		if (*pr && rq_odb_packs_fallback(b, id, NULL, &len, &type) == 0)
			return 1;
		*pr = NULL;
		if (!is_sha256(m) && b->exists && (to_git(&g, id), b->exists(b, &g)))
			return 1;
	}
	return 0;
}

/* An object the packs hold: git's freshening of the pack (libgit2's
 * git_odb_write for a pack only libgit2 reads, SHA-1), else (the pack went
 * away) into the store after all. */
static int write_packed(struct rq_odb_mem *m, git_odb *odb, rq_odb_packread *pr, const rq_oid *id,
			const void *data, size_t len, git_object_t type)
{
	git_oid g;

	if (pr && rq_odb_packread_freshen(pr, id) == 1)
		return 0;
	if (pr || is_sha256(m))
		return add_new(m, id, data, len, type, 0, 0);
	to_git(&g, id);
	return git_odb_write(&g, odb, data, len, type);
}

/* An object's id with the plain SHA-1 (the CPU's SHA instructions where
 * there are: about 2 GB/s here, 6 times libgit2's collision-detecting
 * SHA-1). */
static void plain_id(rq_oid *out, const void *data, size_t len, git_object_t type)
{
	rq_sha1_object(git_object_type2string(type), data, len, out->id);
	memset(out->id + GIT_OID_RAWSZ, 0, sizeof(out->id) - GIT_OID_RAWSZ);
}

/* 1 + the index of the blob `like` names in the store, 0 if none. */
static size_t like_index(struct rq_odb_mem *m, const rq_oid *like, git_object_t type)
{
	const rq_odb_store_obj *o;

	if (!like || type != GIT_OBJECT_BLOB)
		return 0;
	o = find(m, like);
	return !o || o->type != GIT_OBJECT_BLOB ? 0 : (size_t)(o - m->store.objs) + 1;
}

/* The odb's first backend when it is an rq_odb_mem, else NULL. */
static struct rq_odb_mem *mem_of(git_odb *odb)
{
	git_odb_backend *b = NULL;

	if (git_odb_get_backend(&b, odb, 0) < 0 || !b || b->read != mem_read)
		return NULL;
	return (struct rq_odb_mem *)b;
}

/* New ids are plain SHA-1s (collision detection later): a SHA-1 store
 * whose compressor runs ahead. */
static int plain_ids(const struct rq_odb_mem *m)
{
	return m && rq_odb_compress_on(&m->bg) && !is_sha256(m);
}

/*
 * With a compressor ahead (rq_odb_mem_compress_ahead) in SHA-1, a new
 * object's id is its plain SHA-1, and the thread runs libgit2's collision
 * detection later (rq_odb_mem_encode fails when it finds a collision). An
 * object the database has already is checked at once: that is where a
 * collision would swap contents. SHA-256 ids are made whole at once
 * (rq_hash_object; git has no collision check there either).
 */
/* The id as the store m (NULL: none, libgit2's SHA-1) gives it: see
 * rq_odb_mem_hash. */
static int hash_for(const struct rq_odb_mem *m, rq_oid *out, const void *data, size_t len,
		    git_object_t type)
{
	if (plain_ids(m)) {
		plain_id(out, data, len, type);
		return 1;
	}
	return rq_hash_object(m ? rq_odb_store_algo(&m->store) : &rq_oid_sha1, type, data, len,
			      out) < 0
		   ? -1
		   : 0;
}

int rq_odb_mem_hash(rq_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	return hash_for(mem_of(odb), out, data, len, type);
}

int rq_odb_mem_check(const rq_oid *id, const void *data, size_t len, git_object_t type)
{
	return rq_odb_store_check_id(id, data, len, type);
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
static size_t borrow_base(struct rq_odb_mem *m, git_odb *odb, const rq_oid *id, size_t near)
{
	unsigned char *entry, *content;
	size_t entry_len, len;
	rq_odb_store_obj *o;

	if (!id || find(m, id))
		return 0;
	if (rq_odb_whole_blob(odb, id, near / 2, near * 2, &entry, &entry_len, &content, &len) != 1)
		return 0;
	if (!(o = rq_odb_store_append(&m->store, id))) {
		free(entry);
		free(content);
		return 0;
	}
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
	return m->store.n;
}

/* The delta base of a new blob: like's version in the store; else (large
 * blobs only) the first of like and alts[0..nalt) the packs hold whole,
 * borrowed, or an alt the store has (borrowed for an earlier blob). 1 +
 * its index, or 0. */
static size_t base_for(struct rq_odb_mem *m, git_odb *odb, size_t len, git_object_t type,
		       const rq_oid *like, const rq_oid *const *alts, size_t nalt)
{
	size_t k = like_index(m, like, type);

	if (k || type != GIT_OBJECT_BLOB || len < BORROW_MIN)
		return k;
	k = borrow_base(m, odb, like, len);
	if (nalt > RQ_ODB_MEM_ALTS_MAX)
		nalt = RQ_ODB_MEM_ALTS_MAX;
	/* another version: in the store already (borrowed before), or not */
	for (size_t i = 0; !k && i < nalt; i++)
		if (!(k = like_index(m, alts[i], type)))
			k = borrow_base(m, odb, alts[i], len);
	return k;
}

/* Write the object whose id (from hash_for) is *id; unchecked: a plain
 * SHA-1, its collision check still to run. */
static int write_hashed(struct rq_odb_mem *m, git_odb *odb, const rq_oid *id, int unchecked,
			const void *data, size_t len, git_object_t type, const rq_oid *like,
			const rq_oid *const *alts, size_t nalt)
{
	rq_odb_packread *pr;

	if (find(m, id))
		return unchecked ? rq_odb_store_check_id(id, data, len, type) : 0;
	/* a packed object: its pack is freshened, as git does */
	if (exists_packed(m, odb, id, &pr)) {
		if (unchecked && rq_odb_store_check_id(id, data, len, type) < 0)
			return -1;
		return write_packed(m, odb, pr, id, data, len, type);
	}
	return add_new(m, id, data, len, type, unchecked,
		       base_for(m, odb, len, type, like, alts, nalt));
}

/* An odb without a memory store: libgit2's (SHA-1). */
static int write_git(rq_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	git_oid g;

	if (git_odb_write(&g, odb, data, len, type) < 0)
		return -1;
	if (out)
		rq_oid_from_git(out, &g);
	return 0;
}

int rq_odb_mem_write_hashed(const rq_oid *id, git_odb *odb, const void *data, size_t len,
			    git_object_t type)
{
	struct rq_odb_mem *m = mem_of(odb);

	if (!m)
		return write_git(NULL, odb, data, len, type);
	return write_hashed(m, odb, id, plain_ids(m), data, len, type, NULL, NULL, 0);
}

int rq_odb_mem_write_like(rq_oid *out, git_odb *odb, const void *data, size_t len,
			  git_object_t type, const rq_oid *like, const rq_oid *const *alts,
			  size_t nalt)
{
	struct rq_odb_mem *m = mem_of(odb);
	int rc;

	if (!m)
		return write_git(out, odb, data, len, type);
	if ((rc = hash_for(m, out, data, len, type)) < 0)
		return -1;
	return write_hashed(m, odb, out, rc, data, len, type, like, alts, nalt);
}

int rq_odb_mem_write(rq_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	return rq_odb_mem_write_like(out, odb, data, len, type, NULL, NULL, 0);
}

int rq_odb_mem_new_at(git_odb_backend **out, const rq_oid_algo *algo)
{
	struct rq_odb_mem *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m || git_odb_init_backend(&m->parent, GIT_ODB_BACKEND_VERSION) < 0) {
		free(m);
		return -1;
	}
	m->store.algo = algo ? algo : &rq_oid_sha1;
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

int rq_odb_mem_new(git_odb_backend **out)
{
	return rq_odb_mem_new_at(out, NULL);
}

size_t rq_odb_mem_count(git_odb_backend *b)
{
	return ((struct rq_odb_mem *)b)->store.n;
}

rq_odb_store *rq_odb_mem_settle(git_odb_backend *b, int *failed)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;

	*failed = rq_odb_compress_finish(&m->bg);
	return &m->store;
}

/* Encode o whole. */
static int encode_whole(rq_odb_store_obj *o, rq_odb_pack_encoder *enc)
{
	rq_odb_store_encoded e;

	if (rq_odb_store_encode(enc, o->type, o->data, o->len, NULL, 0, &e) < 0)
		return -1;
	rq_odb_store_set_entry(o, &e);
	return 0;
}

/*
 * Encode object k: its candidate bases are the earlier encoded trees of
 * [lo, k) (bases always come before their deltas in write order, and so in
 * the pack), at most RQ_ODB_STORE_DELTA_WINDOW of them, none at the deepest chain. An
 * object whose id is the plain SHA-1 gets its collision check here.
 * 0, -1 (out of memory) or -2 (a collision).
 */
static int encode_one(struct rq_odb_mem *m, size_t k, size_t lo, rq_odb_pack_encoder *enc)
{
	rq_odb_store_obj *o = &m->store.objs[k];
	rq_odb_store_base cand[RQ_ODB_STORE_DELTA_WINDOW];
	size_t ncand = 0;
	rq_odb_store_encoded e;

	if (o->unchecked) {
		if (rq_odb_store_check_id(&o->id, o->data, o->len, o->type) < 0)
			return -2;
		o->unchecked = 0;
	}
	if (o->like > lo && o->like <= k && rq_odb_store_usable_base(&m->store.objs[o->like - 1]))
		cand[ncand++] = rq_odb_store_as_base(&m->store.objs[o->like - 1]);
	for (size_t j = k;
	     o->type == GIT_OBJECT_TREE && j > lo && ncand < RQ_ODB_STORE_DELTA_WINDOW; j--) {
		const rq_odb_store_obj *b = &m->store.objs[j - 1];
		if (b->type == GIT_OBJECT_TREE && rq_odb_store_usable_base(b))
			cand[ncand++] = rq_odb_store_as_base(b);
	}
	if (rq_odb_store_encode(enc, o->type, o->data, o->len, cand, ncand, &e) < 0)
		return -1;
	rq_odb_store_set_entry(o, &e);
	return 0;
}

int rq_odb_mem_encode(git_odb_backend *b, rq_odb_pack_encoder *enc, size_t since)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r = rq_odb_compress_finish(&m->bg);

	for (size_t k = since; k < m->store.n && r == 0; k++)
		if (!m->store.objs[k].entry)
			r = encode_one(m, k, since, enc);
	return r;
}

int rq_odb_mem_check_deltas(git_odb_backend *b, rq_odb_pack_encoder *enc)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int r = rq_odb_compress_finish(&m->bg);

	if (r < 0)
		return r;
	for (size_t k = 0; k < m->store.n; k++) {
		rq_odb_store_obj *o = &m->store.objs[k], *base;
		if (!o->depth)
			continue;
		base = rq_odb_store_find(&m->store, &o->base);
		/* a base that is missing, later in the pack or too deep: whole */
		if (!base || base >= o || base->depth >= RQ_ODB_STORE_DELTA_DEPTH) {
			if (rq_odb_store_materialize(&m->store, o, RQ_ODB_STORE_MATERIALIZE_DEPTH) <
				0 ||
			    encode_whole(o, enc) < 0)
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
	const rq_odb_store_obj *o = i < m->store.n ? &m->store.objs[i] : NULL;

	if (!o || !o->entry)
		return -1;
	if (o->borrowed && !o->used)
		return 1;
	out->id = o->id;
	out->data = o->entry;
	out->len = o->entry_len;
	out->crc = o->crc;
	return 0;
}

void rq_odb_mem_no_poll(git_odb_backend *b)
{
	rq_odb_compress_no_poll(&((struct rq_odb_mem *)b)->bg);
}

void rq_odb_mem_compress_ahead(git_odb_backend *b, rq_odb_pack_encoder *enc)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;

	rq_odb_compress_ahead(&m->bg, &m->store, enc);
}

/* ---- rq_odb_read's access (ids of the store's width) ---- */

int rq_odb_mem_backend_read(git_odb_backend *b, const rq_oid *id, void **data, size_t *len,
			    git_object_t *type)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	rq_odb_store_obj *o;
	int r = 1;

	if (!b || b->read != mem_read)
		return -2;
	rq_odb_store_lock(&m->store);
	if (!(o = rq_odb_store_find(&m->store, id)))
		r = 0;
	else if (!data)
		*len = o->len, *type = o->type;
	else if (copy_locked(data, len, type, b, o) < 0)
		r = -1;
	rq_odb_store_unlock(&m->store);
	return r;
}

int rq_odb_mem_backend_prefix(git_odb_backend *b, const rq_oid *prefix, size_t nhex, rq_oid *full)
{
	struct rq_odb_mem *m = (struct rq_odb_mem *)b;
	int found = 0;

	if (!b || b->read != mem_read)
		return -2;
	for (size_t k = 0; k < m->store.n; k++) {
		if (!rq_oid_has_prefix(&m->store.objs[k].id, prefix, nhex))
			continue;
		if (found++)
			return GIT_EAMBIGUOUS;
		*full = m->store.objs[k].id;
	}
	return found;
}
