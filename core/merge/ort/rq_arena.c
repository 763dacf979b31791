/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_arena: bump allocation for one tree merge (see rq_arena.h).
 *
 * A chunk is a header and its data. Standard chunks are 256 KiB; a request
 * larger than a quarter of that gets a chunk of its own, linked behind the
 * current chunk so that the current one keeps serving small requests. Only
 * standard chunks are kept between merges.
 */
#include "rq_arena.h"

#include <stdlib.h>
#include <string.h>

struct rq_arena_chunk {
	rq_arena_chunk *next;
	size_t used, size;  /* bytes of data given out, and available */
	max_align_t data[]; /* aligned for any type */
};

/* The standard chunk: a small merge (a few hundred entries and their
 * paths) fits in one or two. */
#define CHUNK_SIZE (256 * 1024)

/* A chunk with room for size bytes: a kept standard chunk when one is
 * spare, else a new one. NULL when out of memory. */
static rq_arena_chunk *chunk_get(rq_arena *arena, size_t size)
{
	rq_arena_chunk *nc;

	if (size == CHUNK_SIZE && arena->spare) {
		nc = arena->spare;
		arena->spare = nc->next;
	} else if (!(nc = malloc(sizeof(*nc) + size))) {
		return NULL;
	}
	nc->size = size;
	nc->used = 0;
	return nc;
}

/*
 * Bump allocation: round n up to the alignment, take it from the head chunk
 * when it fits, else start a new chunk. A request larger than a quarter of
 * a chunk would waste most of a fresh standard chunk, so it gets a chunk of
 * its own size (linked behind the head, which keeps serving small
 * requests). Memory is zeroed here, once, so that every structure the
 * merge allocates starts in its empty state (NULL pointers, zero counts,
 * absent stages) without an initializer per type.
 */
void *rq_arena_alloc(rq_arena *arena, size_t n)
{
	rq_arena_chunk *c = arena->head;
	size_t align = sizeof(max_align_t);
	void *p;

	n = (n + align - 1) / align * align;
	if (!n)
		n = align;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
		rq_arena_chunk *nc = chunk_get(arena, size);
		if (!nc)
			return NULL;
		if (c && size != CHUNK_SIZE) {
			/* a big block: keep the current chunk in front */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			arena->head = nc;
		}
		c = nc;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

/*
 * Path strings of the merge (joined paths, directory names) are arena
 * copies: they live as long as the entries and maps that point to them.
 */
char *rq_arena_strndup(rq_arena *arena, const char *s, size_t n)
{
	char *p = rq_arena_alloc(arena, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *rq_arena_strdup(rq_arena *arena, const char *s)
{
	return rq_arena_strndup(arena, s, strlen(s));
}

/*
 * Arena arrays cannot be reallocated in place; growing copies them and
 * leaves the old copy in the arena until the merge ends. Doubling keeps the
 * copies to less than the final size in total.
 */
void *rq_arena_grow(rq_arena *arena, void *v, size_t len, size_t *cap, size_t elem_size,
		    size_t first)
{
	size_t ncap;
	void *nv;

	if (len < *cap)
		return v;
	ncap = *cap ? *cap * 2 : first;
	if (!(nv = rq_arena_alloc(arena, ncap * elem_size)))
		return NULL;
	if (len)
		memcpy(nv, v, len * elem_size);
	*cap = ncap;
	return nv;
}

/*
 * Both the chunks used (head) and those that stayed spare are candidates to
 * keep; only standard-size ones are kept (an oversized chunk is unlikely to
 * fit the next merge's needs), up to keep_bytes, and the rest are freed.
 */
rq_arena_chunk *rq_arena_release(rq_arena *arena, size_t keep_bytes)
{
	rq_arena_chunk *lists[2] = {arena->head, arena->spare}, *kept = NULL;
	size_t total = 0;

	for (int l = 0; l < 2; l++) {
		rq_arena_chunk *c = lists[l];
		while (c) {
			rq_arena_chunk *next = c->next;
			if (c->size == CHUNK_SIZE && total + c->size <= keep_bytes) {
				c->next = kept;
				kept = c;
				total += c->size;
			} else {
				free(c);
			}
			c = next;
		}
	}
	arena->head = arena->spare = NULL;
	return kept;
}

/* Chunks kept by a merger are freed with it. */
void rq_arena_chunks_free(rq_arena_chunk *c)
{
	while (c) {
		rq_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
}
