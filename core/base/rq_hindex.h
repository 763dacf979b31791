/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_hindex: the one hash table of replayq, as an index over an array the
 * caller owns.
 *
 * Every keyed table in the project keeps its entries in a dense array of
 * its own (object ids and values, ref names, merge paths) and puts an
 * rq_hindex beside it: open addressing with linear probing over a slot
 * array of uint32 (0 = empty, else entry index + 1), at most half full.
 * The typed front ends are rq_oidmap (object id keys), rq_odb_store's
 * object list and the merge's path maps; they differ
 * only in how they hash and compare a key, and in where slot memory comes
 * from (malloc, or the merge's arena), which is why growing is split into
 * rq_hindex_want (how many slots) and rq_hindex_rebuild (fill the slots
 * the caller allocated); rq_hindex_reserve does both for slots from malloc.
 *
 * Hashes: rq_hindex_hash_oid for object ids (their first bytes are already
 * uniform), rq_hindex_hash_str (64-bit FNV-1a) for strings, and
 * rq_hindex_hash_bytes (a word at a time) for byte keys such as the lines
 * of a file. Tables whose
 * iteration order must match git's hashmap do not iterate this index:
 * they iterate their dense array (insertion order).
 */
#ifndef RQ_HINDEX_H
#define RQ_HINDEX_H

#include "rq_oid.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct rq_hindex {
	uint32_t *slot; /* nslot entries: 0 empty, else entry index + 1 */
	size_t nslot;	/* 0 or a power of two */
	size_t n;	/* indexed entries */
} rq_hindex;

/* Does entry i of the caller's array have this key? */
typedef int (*rq_hindex_eq_fn)(const void *ctx, size_t i, const void *key);
/* The hash of entry i's key (used when rebuilding). */
typedef size_t (*rq_hindex_hash_fn)(const void *ctx, size_t i);

static inline size_t rq_hindex_hash_oid(const rq_oid *id)
{
	size_t h;
	memcpy(&h, id->id, sizeof(h));
	return h;
}

/* The same over an id's bytes (an rq_oid's, of either object format). */
static inline size_t rq_hindex_hash_id(const unsigned char *id)
{
	size_t h;
	memcpy(&h, id, sizeof(h));
	return h;
}

static inline size_t rq_hindex_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

/*
 * A hash over bytes, 8 at a time: each little-endian word is mixed in with
 * rq_hindex_mix (a multiply and a shift), and rq_hindex_mix_end spreads the
 * result over every bit. About a tenth of the instructions FNV-1a takes a
 * byte; it only has to tell keys apart in a table, where equal keys are
 * compared in full.
 */
static inline uint64_t rq_hindex_mix(uint64_t h, uint64_t word)
{
	h = (h ^ word) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static inline uint64_t rq_hindex_mix_end(uint64_t h, size_t len)
{
	h = (h ^ len) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* 8 bytes as a little-endian word. */
static inline uint64_t rq_hindex_load64(const unsigned char *b)
{
	uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&w, b, 8);
#else
	for (int k = 7; k >= 0; k--)
		w = w << 8 | b[k];
#endif
	return w;
}

/* The hash over n bytes (a key with no NUL): the words, then the last
 * 0-7 bytes as one word. */
static inline uint64_t rq_hindex_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0, w = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		h = rq_hindex_mix(h, rq_hindex_load64(b + i));
	w = 0;
	for (size_t k = n; k > i; k--)
		w = w << 8 | b[k - 1];
	if (n > i)
		h = rq_hindex_mix(h, w);
	return rq_hindex_mix_end(h, n);
}

/*
 * The slot count to grow to before one more entry is added (the table is
 * kept at most half full; the first table has min_slots, a power of two),
 * or 0 when there is room already.
 */
static inline size_t rq_hindex_want(const rq_hindex *h, size_t min_slots)
{
	if ((h->n + 1) * 2 <= h->nslot)
		return 0;
	return h->nslot ? h->nslot * 2 : min_slots;
}

/*
 * Make slots (nslot zeroed entries, nslot a power of two, allocated by
 * the caller) the index of entries 0..count-1. The caller frees the old
 * slot array when it owns it.
 */
static inline void rq_hindex_rebuild(rq_hindex *h, uint32_t *slots, size_t nslot, size_t count,
				     rq_hindex_hash_fn hash, const void *ctx)
{
	for (size_t k = 0; k < count; k++) {
		size_t i = hash(ctx, k) & (nslot - 1);
		while (slots[i])
			i = (i + 1) & (nslot - 1);
		slots[i] = (uint32_t)(k + 1);
	}
	h->slot = slots;
	h->nslot = nslot;
	h->n = count;
}

/*
 * rq_hindex_want and rq_hindex_rebuild for an index whose slots come from
 * malloc (freed here when replaced, by the owner at the end): room for one
 * more entry among count. 0, or -1 out of memory (the index unchanged).
 */
static inline int rq_hindex_reserve(rq_hindex *h, size_t min_slots, size_t count,
				    rq_hindex_hash_fn hash, const void *ctx)
{
	size_t nslot = rq_hindex_want(h, min_slots);
	uint32_t *slots;

	if (!nslot)
		return 0;
	if (!(slots = calloc(nslot, sizeof(*slots))))
		return -1;
	free(h->slot);
	rq_hindex_rebuild(h, slots, nslot, count, hash, ctx);
	return 0;
}

/* Index entry idx under hash (the caller made room and checked it is new). */
static inline void rq_hindex_add(rq_hindex *h, size_t hash, size_t idx)
{
	size_t mask = h->nslot - 1, i = hash & mask;
	while (h->slot[i])
		i = (i + 1) & mask;
	h->slot[i] = (uint32_t)(idx + 1);
	h->n++;
}

/* The index of the entry with key, or -1. */
static inline long rq_hindex_find(const rq_hindex *h, size_t hash, rq_hindex_eq_fn eq,
				  const void *ctx, const void *key)
{
	if (!h->nslot)
		return -1;
	size_t mask = h->nslot - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		uint32_t s = h->slot[i];
		if (!s)
			return -1;
		if (eq(ctx, s - 1, key))
			return (long)(s - 1);
	}
}

#endif
