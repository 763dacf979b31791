/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oidmap: linear-probing hash map keyed by git_oid.
 */
#include "rq_oidmap.h"

#include <stdlib.h>
#include <string.h>

static size_t oid_hash(const git_oid *oid)
{
	size_t h;
	memcpy(&h, oid->id, sizeof(h));
	return h;
}

void rq_oidmap_init(rq_oidmap *m)
{
	memset(m, 0, sizeof(*m));
}

void rq_oidmap_free(rq_oidmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int grow(rq_oidmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	rq_oidmap n = {0};

	n.keys = malloc(ncap * sizeof(*n.keys));
	n.vals = malloc(ncap * sizeof(*n.vals));
	n.used = calloc(ncap, 1);
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -1;
	}
	n.cap = ncap;
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i] && rq_oidmap_put(&n, &m->keys[i], m->vals[i]) < 0)
			return -1; /* cannot happen: n has room */
	rq_oidmap_free(m);
	*m = n;
	return 0;
}

int rq_oidmap_put(rq_oidmap *m, const git_oid *key, size_t val)
{
	if ((m->len + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	size_t mask = m->cap - 1, i = oid_hash(key) & mask;
	while (m->used[i]) {
		if (git_oid_equal(&m->keys[i], key)) {
			m->vals[i] = val;
			return 0;
		}
		i = (i + 1) & mask;
	}
	m->used[i] = 1;
	git_oid_cpy(&m->keys[i], key);
	m->vals[i] = val;
	m->len++;
	return 0;
}

int rq_oidmap_get(const rq_oidmap *m, const git_oid *key, size_t *val)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = oid_hash(key) & mask;
	while (m->used[i]) {
		if (git_oid_equal(&m->keys[i], key)) {
			if (val)
				*val = m->vals[i];
			return 1;
		}
		i = (i + 1) & mask;
	}
	return 0;
}
