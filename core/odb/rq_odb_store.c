/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_store: the memory store's objects (see the header): the array
 * and its index, an object's content read back from its entry, the
 * encoding of one object.
 */
#include "rq_odb_store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rq_mem.h"

static int obj_eq(const void *ctx, size_t i, const void *key)
{
	return rq_oid_eq(&((const rq_odb_store *)ctx)->objs[i].id, key);
}

static size_t obj_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_id(((const rq_odb_store *)ctx)->objs[i].id.id);
}

void rq_odb_store_free(rq_odb_store *s)
{
	for (size_t k = 0; k < s->n; k++) {
		if (s->objs[k].own_data)
			free(s->objs[k].data);
		if (s->objs[k].own_entry)
			free(s->objs[k].entry);
	}
	for (size_t k = 0; k < s->nmaps; k++)
		munmap(s->maps[k].p, s->maps[k].len);
	free(s->maps);
	free(s->objs);
	free(s->index.slot);
}

const rq_oid_algo *rq_odb_store_algo(const rq_odb_store *s)
{
	return s->algo ? s->algo : &rq_oid_sha1;
}

void rq_odb_store_lock(rq_odb_store *s)
{
	if (s->shared)
		pthread_mutex_lock(&s->mu);
}

void rq_odb_store_unlock(rq_odb_store *s)
{
	if (s->shared)
		pthread_mutex_unlock(&s->mu);
}

rq_odb_store_obj *rq_odb_store_find(rq_odb_store *s, const rq_oid *id)
{
	long k = rq_hindex_find(&s->index, rq_hindex_hash_id(id->id), obj_eq, s, id);
	return k < 0 ? NULL : &s->objs[k];
}

rq_odb_store_obj *rq_odb_store_append(rq_odb_store *s, const rq_oid *id)
{
	rq_odb_store_obj *o;

	if (s->n >= UINT32_MAX - 1) /* the index holds uint32 positions */
		return NULL;
	if (rq_hindex_reserve(&s->index, 1024, s->n, obj_hash, s) < 0)
		return NULL;
	/* the array moves under the thread's lock */
	rq_odb_store_lock(s);
	o = rq_mem_grow(s->objs, &s->cap, s->n + 1, sizeof(*o), 256);
	if (o)
		s->objs = o;
	rq_odb_store_unlock(s);
	if (!o)
		return NULL;
	o = &s->objs[s->n];
	memset(o, 0, sizeof(*o));
	o->id = *id;
	rq_hindex_add(&s->index, rq_hindex_hash_id(id->id), s->n);
	s->n++;
	return o;
}

int rq_odb_store_add(rq_odb_store *s, const rq_oid *id, const void *data, size_t len,
		     git_object_t type, int borrowed, int unchecked, size_t like)
{
	unsigned char *copy = (unsigned char *)(uintptr_t)data;
	rq_odb_store_obj *o;

	if (!borrowed) {
		if (!(copy = malloc(len ? len : 1)))
			return -1;
		if (len)
			memcpy(copy, data, len);
	}
	if (!(o = rq_odb_store_append(s, id))) {
		if (!borrowed)
			free(copy);
		return -1;
	}
	o->data = copy;
	o->own_data = !borrowed;
	o->unchecked = (unsigned char)unchecked;
	o->like = like;
	o->type = type;
	o->len = len;
	return 0;
}

int rq_odb_store_keep_map(rq_odb_store *s, void *p, size_t len)
{
	struct rq_odb_store_map *v = realloc(s->maps, (s->nmaps + 1) * sizeof(*v));

	if (!v)
		return -1;
	s->maps = v;
	s->maps[s->nmaps].p = p;
	s->maps[s->nmaps].len = len;
	s->nmaps++;
	return 0;
}

int rq_odb_store_materialize(rq_odb_store *s, rq_odb_store_obj *o, unsigned guard)
{
	rq_odb_pack_entry_info info;
	unsigned char *raw;
	size_t rawlen;

	if (o->data)
		return 0;
	if (!o->entry || !guard ||
	    rq_odb_pack_entry_parse(o->entry, o->entry_len, rq_odb_store_algo(s)->rawsz, &info) <
		0 ||
	    rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw) < 0)
		return -1;
	rawlen = info.size;
	if (info.code == 7) {
		rq_odb_store_obj *base = rq_odb_store_find(s, &info.base);
		unsigned char *full;
		size_t fulllen;
		if (!base || base == o || rq_odb_store_materialize(s, base, guard - 1) < 0 ||
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

int rq_odb_store_check_id(const rq_oid *id, const void *data, size_t len, git_object_t type)
{
	git_oid full;
	rq_oid got;

	if (git_odb_hash(&full, data, len, type) < 0)
		return -1;
	rq_oid_from_git(&got, &full);
	if (!rq_oid_eq(&got, id)) {
		git_error_set_str(GIT_ERROR_ODB, "object hashed to two different ids");
		return -1;
	}
	return 0;
}

/* The best tree among the candidates for a delta of data: NULL when none
 * is worth trying (small trees are stored whole). */
static const rq_odb_store_base *best_tree(const unsigned char *data, size_t len,
					  const rq_odb_store_base *cand, size_t ncand)
{
	const rq_odb_store_base *best = NULL;
	size_t best_cost = SIZE_MAX;

	for (size_t j = 0; len >= 128 && j < ncand; j++) {
		size_t cost = rq_odb_pack_delta_cost(cand[j].data, cand[j].len, data, len);
		if (cost < best_cost) {
			best_cost = cost;
			best = &cand[j];
		}
	}
	return best;
}

int rq_odb_store_encode(rq_odb_pack_encoder *enc, git_object_t type, const unsigned char *data,
			size_t len, const rq_odb_store_base *cand, size_t ncand,
			rq_odb_store_encoded *out)
{
	const rq_odb_store_base *best = NULL;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (type == GIT_OBJECT_BLOB && ncand == 1) {
		best = cand;
		r = rq_odb_pack_encode_blob_delta(enc, &cand->id, cand->data, cand->len, data, len,
						  &out->entry, &out->entry_len, &out->crc);
	} else if (type == GIT_OBJECT_TREE && (best = best_tree(data, len, cand, ncand))) {
		r = rq_odb_pack_encode_delta(enc, &best->id, best->data, best->len, data, len,
					     &out->entry, &out->entry_len, &out->crc);
	}
	if (r < 0)
		return -1;
	if (r > 0) {
		out->depth = best->depth + 1;
		out->base = best->id;
		return 0;
	}
	return rq_odb_pack_encode(enc, type, data, len, &out->entry, &out->entry_len, &out->crc);
}

void rq_odb_store_set_entry(rq_odb_store_obj *o, const rq_odb_store_encoded *e)
{
	if (o->own_entry)
		free(o->entry);
	o->entry = e->entry;
	o->entry_len = e->entry_len;
	o->crc = e->crc;
	o->depth = e->depth;
	o->base = e->base;
	o->own_entry = 1;
}

int rq_odb_store_usable_base(const rq_odb_store_obj *b)
{
	return b->entry && b->data && b->depth < RQ_ODB_STORE_DELTA_DEPTH;
}

rq_odb_store_base rq_odb_store_as_base(const rq_odb_store_obj *b)
{
	return (rq_odb_store_base){b->id, b->data, b->len, b->depth, 0};
}
