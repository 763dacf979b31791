/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_strmap: string keys over rq_hindex (see the header).
 */
#include "rq_strmap.h"

#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

void rq_strmap_init(rq_strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void rq_strmap_free(rq_strmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->dead);
	free(m->index.slot);
	memset(m, 0, sizeof(*m));
}

static int key_eq(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const rq_strmap *)ctx)->keys[i], key);
}

static size_t key_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const rq_strmap *)ctx)->keys[i]);
}

/* Room for one more entry in the three arrays and in the index; -1 out of
 * memory (the map unchanged but for the room). */
static int reserve(rq_strmap *m)
{
	if (m->len == m->cap) {
		size_t kcap = m->cap, vcap = m->cap, dcap = m->cap;
		const char **k = rq_mem_grow(m->keys, &kcap, m->len + 1, sizeof(*k), 16);
		if (!k)
			return -1;
		m->keys = k;
		size_t *v = rq_mem_grow(m->vals, &vcap, m->len + 1, sizeof(*v), 16);
		if (!v)
			return -1;
		m->vals = v;
		unsigned char *d = rq_mem_grow(m->dead, &dcap, m->len + 1, 1, 16);
		if (!d)
			return -1;
		m->dead = d;
		m->cap = dcap; /* keys and vals have that room too */
	}
	return rq_hindex_reserve(&m->index, 32, m->len, key_hash, m);
}

int rq_strmap_put(rq_strmap *m, const char *key, size_t val)
{
	size_t h = rq_hindex_hash_str(key);
	long k = rq_hindex_find(&m->index, h, key_eq, m, key);

	if (k >= 0) {
		m->vals[k] = val;
		if (m->dead[k]) {
			m->dead[k] = 0;
			m->live++;
		}
		return 0;
	}
	if (reserve(m) < 0)
		return -1;
	m->keys[m->len] = key;
	m->vals[m->len] = val;
	m->dead[m->len] = 0;
	rq_hindex_add(&m->index, h, m->len);
	m->len++;
	m->live++;
	return 0;
}

int rq_strmap_get(const rq_strmap *m, const char *key, size_t *val)
{
	long k = rq_hindex_find(&m->index, rq_hindex_hash_str(key), key_eq, m, key);

	if (k < 0 || m->dead[k])
		return 0;
	if (val)
		*val = m->vals[k];
	return 1;
}

void rq_strmap_del(rq_strmap *m, const char *key)
{
	long k = rq_hindex_find(&m->index, rq_hindex_hash_str(key), key_eq, m, key);

	if (k >= 0 && !m->dead[k]) {
		m->dead[k] = 1;
		m->live--;
	}
}
