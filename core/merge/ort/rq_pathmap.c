/* SPDX-License-Identifier: GPL-2.0-only */
/* rq_pathmap_git_order follows git's hashmap.c (README: Credits) */
/*
 * rq_pathmap: string-keyed maps in a merge's arena (see rq_pathmap.h),
 * and the iteration order of git's hashmap.
 */
#include "rq_pathmap.h"

#include <stdlib.h>
#include <string.h>

/*
 * First sizes. Most maps of a merge stay small (the paths of one side's
 * renames, the counts of one directory), so they start small; the path map
 * of a large merge doubles its way up. The index is kept at most half full
 * (rq_hindex), so 16 slots hold the first 8 entries.
 */
#define MIN_SLOTS   16
#define MIN_ENTRIES 8

/*
 * Nothing is allocated until the first put: a merge sets up a dozen maps
 * and most stay empty.
 */
void rq_pathmap_init(rq_pathmap *map, rq_arena *a)
{
	memset(map, 0, sizeof(*map));
	map->arena = a;
}

/*
 * rq_hindex's callbacks: does entry i have this key; the hash of entry i's
 * key (when the index is rebuilt to grow).
 */
static int key_equals(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const rq_pathmap *)ctx)->keys[i], key);
}

static size_t key_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const rq_pathmap *)ctx)->keys[i]);
}

/* The entry of key (deleted or not), or -1. */
static long find(const rq_pathmap *map, const char *key, size_t hash)
{
	return rq_hindex_find(&map->index, hash, key_equals, map, key);
}

/*
 * Room for one more entry in the arrays and the index. The three arrays grow
 * together (by copying: arena memory cannot be reallocated); the index is
 * rebuilt over the entries there are, before the new one is added. 0, or -1
 * out of memory.
 */
static int make_room(rq_pathmap *map)
{
	size_t nslot;

	if (map->len == map->cap) {
		size_t ncap = map->cap ? map->cap * 2 : MIN_ENTRIES;
		const char **keys = rq_arena_alloc(map->arena, ncap * sizeof(*keys));
		intptr_t *vals = rq_arena_alloc(map->arena, ncap * sizeof(*vals));
		unsigned char *dead = rq_arena_alloc(map->arena, ncap);
		if (!keys || !vals || !dead)
			return -1;
		if (map->len) {
			memcpy(keys, map->keys, map->len * sizeof(*keys));
			memcpy(vals, map->vals, map->len * sizeof(*vals));
			memcpy(dead, map->dead, map->len);
		}
		map->keys = keys;
		map->vals = vals;
		map->dead = dead;
		map->cap = ncap;
	}
	if ((nslot = rq_hindex_want(&map->index, MIN_SLOTS))) {
		uint32_t *slots = rq_arena_alloc(map->arena, nslot * sizeof(*slots));
		if (!slots)
			return -1;
		rq_hindex_rebuild(&map->index, slots, nslot, map->len, key_hash, map);
	}
	return 0;
}

/*
 * A key already there (even deleted) keeps its place in the insertion order.
 * merge-ort's strmaps have no order of their own; where a result depends on
 * git's iteration order, rq_pathmap_git_order recomputes it from the order of
 * first insertion, which is what this keeps. The key's hash is computed once
 * for the lookup and the insertion.
 */
int rq_pathmap_put(rq_pathmap *map, const char *key, intptr_t val)
{
	size_t hash = rq_hindex_hash_str(key);
	long k = find(map, key, hash);

	if (k >= 0) {
		map->vals[k] = val;
		if (map->dead[k]) {
			map->dead[k] = 0;
			map->live++;
		}
		return 0;
	}
	if (make_room(map) < 0)
		return -1;
	map->keys[map->len] = key;
	map->vals[map->len] = val;
	map->dead[map->len] = 0;
	rq_hindex_add(&map->index, hash, map->len);
	map->len++;
	map->live++;
	return 0;
}

int rq_pathmap_get(const rq_pathmap *map, const char *key, intptr_t *val)
{
	long k = find(map, key, rq_hindex_hash_str(key));

	if (k < 0 || map->dead[k])
		return 0;
	if (val)
		*val = map->vals[k];
	return 1;
}

/*
 * git's strintmap_get() with its default of 0: the relevance maps of the
 * merge read an absent key as NOT_RELEVANT (0).
 */
intptr_t rq_pathmap_get0(const rq_pathmap *map, const char *key)
{
	intptr_t v = 0;
	rq_pathmap_get(map, key, &v);
	return v;
}

int rq_pathmap_has(const rq_pathmap *map, const char *key)
{
	return rq_pathmap_get(map, key, NULL);
}

/*
 * Deleting only marks the entry: the index keeps it (lookups find it dead),
 * and the dense arrays keep their order for iteration.
 */
void rq_pathmap_del_at(rq_pathmap *map, size_t i)
{
	map->dead[i] = 1;
	map->live--;
}

void rq_pathmap_del(rq_pathmap *map, const char *key)
{
	long k = find(map, key, rq_hindex_hash_str(key));

	if (k >= 0 && !map->dead[k])
		rq_pathmap_del_at(map, (size_t)k);
}

/* ---- git's hashmap order -------------------------------------------------- */

/* git's strhash(): 32-bit FNV-1 (multiply, then xor), which decides the
 * buckets of git's strmap; not the hash of the maps above. */
static uint32_t git_strhash(const char *s)
{
	uint32_t c, hash = 0x811c9dc5u;
	while ((c = (unsigned char)*s++))
		hash = (hash * 0x01000193u) ^ c;
	return hash;
}

/* git's hashmap.c parameters: the first table size, the load (percent)
 * past which it grows, and the growth (a shift: 4x). */
#define GIT_HASHMAP_INITIAL_SIZE 64
#define GIT_HASHMAP_LOAD_FACTOR	 80
#define GIT_HASHMAP_RESIZE_BITS	 2

/* A model of git's hashmap: bucket heads and the chains through them. */
typedef struct git_hashmap_model {
	long *table; /* bucket -> first entry, -1 */
	long *next;  /* entry -> next entry in its bucket, -1 */
	uint32_t *hash;
	size_t tablesize, grow_at;
} git_hashmap_model;

/*
 * git's rehash(): four times the buckets; each old bucket is walked from its
 * head and every entry pushed on the front of its new bucket, which reverses
 * the order of entries that stay together. -1 out of memory.
 */
static int model_grow(git_hashmap_model *h)
{
	size_t newsize = h->tablesize << GIT_HASHMAP_RESIZE_BITS;
	long *nt = malloc(newsize * sizeof(*nt));

	if (!nt)
		return -1;
	for (size_t j = 0; j < newsize; j++)
		nt[j] = -1;
	for (size_t j = 0; j < h->tablesize; j++) {
		long e = h->table[j];
		while (e >= 0) {
			long nx = h->next[e];
			size_t nb = h->hash[e] & (newsize - 1);
			h->next[e] = nt[nb];
			nt[nb] = e;
			e = nx;
		}
	}
	free(h->table);
	h->table = nt;
	h->tablesize = newsize;
	h->grow_at = (size_t)((uint64_t)newsize * GIT_HASHMAP_LOAD_FACTOR / 100);
	return 0;
}

/*
 * Insert the keys in order as git's hashmap_add() does (64 buckets at
 * first, each new entry at the front of its bucket, 4x growth past 80%
 * load), then read the buckets in order, each from its head, as
 * hashmap_iter_next() does.
 */
size_t *rq_pathmap_git_order(const rq_pathmap *map)
{
	size_t n = map->len, k = 0, *order = rq_arena_alloc(map->arena, n * sizeof(*order));
	git_hashmap_model h = {malloc(GIT_HASHMAP_INITIAL_SIZE * sizeof(long)),
			       malloc((n ? n : 1) * sizeof(long)),
			       malloc((n ? n : 1) * sizeof(uint32_t)), GIT_HASHMAP_INITIAL_SIZE,
			       GIT_HASHMAP_INITIAL_SIZE * GIT_HASHMAP_LOAD_FACTOR / 100};

	if (!order || !h.table || !h.next || !h.hash)
		goto fail;
	for (size_t i = 0; i < h.tablesize; i++)
		h.table[i] = -1;
	for (size_t i = 0; i < n; i++) {
		size_t b;
		h.hash[i] = git_strhash(map->keys[i]);
		b = h.hash[i] & (h.tablesize - 1);
		h.next[i] = h.table[b];
		h.table[b] = (long)i;
		if (i + 1 > h.grow_at && model_grow(&h) < 0)
			goto fail;
	}
	for (size_t b = 0; b < h.tablesize; b++)
		for (long e = h.table[b]; e >= 0; e = h.next[e])
			order[k++] = (size_t)e;
	free(h.table);
	free(h.next);
	free(h.hash);
	return order;
fail:
	free(h.table);
	free(h.next);
	free(h.hash);
	return NULL;
}
