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

#define TM_CHUNK_SIZE (64 * 1024)

void *tm_alloc(tm_arena *a, size_t n)
{
	tm_chunk *c = a->head;
	size_t align = sizeof(max_align_t);

	n = (n + align - 1) / align * align;
	if (!n)
		n = align;
	if (!c || c->size - c->used < n) {
		size_t size = n > TM_CHUNK_SIZE / 4 ? n : TM_CHUNK_SIZE;
		tm_chunk *nc = malloc(sizeof(*nc) + size);
		if (!nc)
			return NULL;
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

void tm_arena_free(tm_arena *a)
{
	tm_chunk *c = a->head;
	while (c) {
		tm_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
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
