/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oidmap: object id -> size_t, entries in insertion order with an
 * rq_hindex over them.
 */
#include "rq_oidmap.h"

#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

void rq_oidmap_init(rq_oidmap *m)
{
	memset(m, 0, sizeof(*m));
}

void rq_oidmap_free(rq_oidmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->index.slot);
	memset(m, 0, sizeof(*m));
}

static int key_eq(const void *ctx, size_t i, const void *key)
{
	return rq_oid_eq(&((const rq_oidmap *)ctx)->keys[i], key);
}

static size_t key_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_oid(&((const rq_oidmap *)ctx)->keys[i]);
}

/* Room for one more entry in the arrays and in the index; -1 out of memory. */
static int reserve(rq_oidmap *m)
{
	if (m->len == m->cap) {
		size_t kcap = m->cap, vcap = m->cap;
		rq_oid *k = rq_mem_grow(m->keys, &kcap, m->len + 1, sizeof(*k), 32);
		if (!k)
			return -1;
		m->keys = k;
		size_t *v = rq_mem_grow(m->vals, &vcap, m->len + 1, sizeof(*v), 32);
		if (!v)
			return -1;
		m->vals = v;
		m->cap = vcap; /* keys has that room too */
	}
	return rq_hindex_reserve(&m->index, 64, m->len, key_hash, m);
}

int rq_oidmap_put(rq_oidmap *m, const rq_oid *key, size_t val)
{
	size_t h = rq_hindex_hash_oid(key);
	long k = rq_hindex_find(&m->index, h, key_eq, m, key);

	if (k >= 0) {
		m->vals[k] = val;
		return 0;
	}
	if (reserve(m) < 0)
		return -1;
	m->keys[m->len] = *key;
	m->vals[m->len] = val;
	rq_hindex_add(&m->index, h, m->len);
	m->len++;
	return 0;
}

int rq_oidmap_get(const rq_oidmap *m, const rq_oid *key, size_t *val)
{
	long k = rq_hindex_find(&m->index, rq_hindex_hash_oid(key), key_eq, m, key);

	if (k < 0)
		return 0;
	if (val)
		*val = m->vals[k];
	return 1;
}
