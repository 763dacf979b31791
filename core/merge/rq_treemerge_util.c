/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_treemerge_util: the arena and the string map used by one tree merge.
 *
 * Everything a merge allocates lives in its arena and is released at once
 * when the merge ends, whatever the outcome; maps keep their entries in
 * insertion order so that iteration is deterministic.
 */
#include "rq_treemerge.h"

#include <stdlib.h>
#include <string.h>

struct tm_chunk {
	tm_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define TM_CHUNK_SIZE (256 * 1024)

void *tm_alloc(tm_arena *a, size_t n)
{
	tm_chunk *c = a->head;
	size_t align = sizeof(max_align_t);

	n = (n + align - 1) / align * align;
	if (!n)
		n = align;
	if (!c || c->size - c->used < n) {
		size_t size = n > TM_CHUNK_SIZE / 4 ? n : TM_CHUNK_SIZE;
		tm_chunk *nc;
		if (size == TM_CHUNK_SIZE && a->spare) {
			nc = a->spare;
			a->spare = nc->next;
		} else if (!(nc = malloc(sizeof(*nc) + size))) {
			return NULL;
		}
		nc->size = size;
		nc->used = 0;
		if (c && size != TM_CHUNK_SIZE) {
			/* a big block: keep the current chunk in front */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *tm_strndup(tm_arena *a, const char *s, size_t n)
{
	char *p = tm_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *tm_strdup(tm_arena *a, const char *s)
{
	return tm_strndup(a, s, strlen(s));
}

/* Keep up to keep_bytes of standard chunks for the next merge (page faults
 * on fresh memory are a large part of a small merge); free the rest. */
tm_chunk *tm_arena_release(tm_arena *a, size_t keep_bytes)
{
	tm_chunk *lists[2] = {a->head, a->spare}, *kept = NULL;
	size_t total = 0;
	for (int l = 0; l < 2; l++) {
		tm_chunk *c = lists[l];
		while (c) {
			tm_chunk *next = c->next;
			if (c->size == TM_CHUNK_SIZE && total + c->size <= keep_bytes) {
				c->next = kept;
				kept = c;
				total += c->size;
			} else {
				free(c);
			}
			c = next;
		}
	}
	a->head = a->spare = NULL;
	return kept;
}

void tm_chunks_free(tm_chunk *c)
{
	while (c) {
		tm_chunk *next = c->next;
		free(c);
		c = next;
	}
}

void tm_arena_free(tm_arena *a)
{
	tm_chunks_free(a->head);
	tm_chunks_free(a->spare);
	a->head = a->spare = NULL;
}

static uint32_t strhash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

void tm_map_init(tm_map *m, tm_arena *a)
{
	memset(m, 0, sizeof(*m));
	m->arena = a;
}

static long map_find(const tm_map *m, const char *key)
{
	if (!m->tabsz)
		return -1;
	size_t mask = m->tabsz - 1, i = strhash(key) & mask;
	for (;;) {
		uint32_t t = m->tab[i];
		if (!t)
			return -1;
		if (!strcmp(m->keys[t - 1], key))
			return (long)(t - 1);
		i = (i + 1) & mask;
	}
}

static int map_rehash(tm_map *m, size_t tabsz)
{
	uint32_t *tab = tm_alloc(m->arena, tabsz * sizeof(*tab));
	if (!tab)
		return -1;
	for (size_t k = 0; k < m->n; k++) {
		size_t i = strhash(m->keys[k]) & (tabsz - 1);
		while (tab[i])
			i = (i + 1) & (tabsz - 1);
		tab[i] = (uint32_t)(k + 1);
	}
	m->tab = tab;
	m->tabsz = tabsz;
	return 0;
}

int tm_map_put(tm_map *m, const char *key, intptr_t val)
{
	long k = map_find(m, key);
	if (k >= 0) {
		m->vals[k] = val;
		if (m->dead[k]) {
			m->dead[k] = 0;
			m->live++;
		}
		return 0;
	}
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 8;
		const char **keys = tm_alloc(m->arena, ncap * sizeof(*keys));
		intptr_t *vals = tm_alloc(m->arena, ncap * sizeof(*vals));
		unsigned char *dead = tm_alloc(m->arena, ncap);
		if (!keys || !vals || !dead)
			return -1;
		if (m->n) {
			memcpy(keys, m->keys, m->n * sizeof(*keys));
			memcpy(vals, m->vals, m->n * sizeof(*vals));
			memcpy(dead, m->dead, m->n);
		}
		m->keys = keys;
		m->vals = vals;
		m->dead = dead;
		m->cap = ncap;
	}
	if ((m->n + 1) * 2 > m->tabsz && map_rehash(m, m->tabsz ? m->tabsz * 2 : 16) < 0)
		return -1;
	m->keys[m->n] = key;
	m->vals[m->n] = val;
	m->dead[m->n] = 0;
	m->n++;
	m->live++;
	{
		size_t mask = m->tabsz - 1, i = strhash(key) & mask;
		while (m->tab[i])
			i = (i + 1) & mask;
		m->tab[i] = (uint32_t)m->n;
	}
	return 0;
}

int tm_map_get(const tm_map *m, const char *key, intptr_t *val)
{
	long k = map_find(m, key);
	if (k < 0 || m->dead[k])
		return 0;
	if (val)
		*val = m->vals[k];
	return 1;
}

int tm_map_has(const tm_map *m, const char *key)
{
	return tm_map_get(m, key, NULL);
}

void tm_map_del(tm_map *m, const char *key)
{
	long k = map_find(m, key);
	if (k >= 0 && !m->dead[k]) {
		m->dead[k] = 1;
		m->live--;
	}
}

int rq_buffer_is_binary(const char *buf, size_t n)
{
	if (n > 8000)
		n = 8000;
	return memchr(buf, 0, n) != NULL;
}

/*
 * The order in which git's hashmap (hashmap.c, as used by strmap and
 * strintmap) iterates keys inserted in the given order: buckets by
 * strhash() (FNV-1) modulo a table of 64 slots growing 4x past 80% load,
 * each bucket newest first, rehashing reversing chains. Some merge-ort
 * results depend on that order (ties); order[] receives the key indices.
 */
static uint32_t git_strhash(const char *s)
{
	uint32_t c, hash = 0x811c9dc5u;
	while ((c = (unsigned char)*s++))
		hash = (hash * 0x01000193u) ^ c;
	return hash;
}

int tm_git_hash_order(const char *const *keys, size_t n, size_t *order)
{
	size_t tablesize = 64, grow_at = 64 * 80 / 100;
	long *table = malloc(tablesize * sizeof(*table));
	long *next = malloc((n ? n : 1) * sizeof(*next));
	uint32_t *hash = malloc((n ? n : 1) * sizeof(*hash));
	size_t k = 0;

	if (!table || !next || !hash) {
		free(table);
		free(next);
		free(hash);
		return -1;
	}
	for (size_t i = 0; i < tablesize; i++)
		table[i] = -1;
	for (size_t i = 0; i < n; i++) {
		size_t b;
		hash[i] = git_strhash(keys[i]);
		b = hash[i] & (tablesize - 1);
		next[i] = table[b];
		table[b] = (long)i;
		if (i + 1 > grow_at) {
			size_t newsize = tablesize << 2;
			long *nt = malloc(newsize * sizeof(*nt));
			if (!nt) {
				free(table);
				free(next);
				free(hash);
				return -1;
			}
			for (size_t j = 0; j < newsize; j++)
				nt[j] = -1;
			for (size_t j = 0; j < tablesize; j++) {
				long e = table[j];
				while (e >= 0) {
					long nx = next[e];
					size_t nb = hash[e] & (newsize - 1);
					next[e] = nt[nb];
					nt[nb] = e;
					e = nx;
				}
			}
			free(table);
			table = nt;
			tablesize = newsize;
			grow_at = (size_t)((uint64_t)newsize * 80 / 100);
		}
	}
	for (size_t b = 0; b < tablesize; b++)
		for (long e = table[b]; e >= 0; e = next[e])
			order[k++] = (size_t)e;
	free(table);
	free(next);
	free(hash);
	return 0;
}
