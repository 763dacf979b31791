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
	size_t used, size;
	max_align_t data[];
};

#define CHUNK_SIZE (256 * 1024)

/* A chunk with room for size bytes: a kept standard chunk when one is
 * spare, else a new one. NULL when out of memory. */
static rq_arena_chunk *chunk_get(rq_arena *a, size_t size)
{
	rq_arena_chunk *nc;

	if (size == CHUNK_SIZE && a->spare) {
		nc = a->spare;
		a->spare = nc->next;
	} else if (!(nc = malloc(sizeof(*nc) + size))) {
		return NULL;
	}
	nc->size = size;
	nc->used = 0;
	return nc;
}

void *rq_arena_alloc(rq_arena *a, size_t n)
{
	rq_arena_chunk *c = a->head;
	size_t align = sizeof(max_align_t);
	void *p;

	n = (n + align - 1) / align * align;
	if (!n)
		n = align;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
		rq_arena_chunk *nc = chunk_get(a, size);
		if (!nc)
			return NULL;
		if (c && size != CHUNK_SIZE) {
			/* a big block: keep the current chunk in front */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *rq_arena_strndup(rq_arena *a, const char *s, size_t n)
{
	char *p = rq_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *rq_arena_strdup(rq_arena *a, const char *s)
{
	return rq_arena_strndup(a, s, strlen(s));
}

void *rq_arena_grow(rq_arena *a, void *v, size_t len, size_t *cap, size_t elem_size, size_t first)
{
	size_t ncap;
	void *nv;

	if (len < *cap)
		return v;
	ncap = *cap ? *cap * 2 : first;
	if (!(nv = rq_arena_alloc(a, ncap * elem_size)))
		return NULL;
	if (len)
		memcpy(nv, v, len * elem_size);
	*cap = ncap;
	return nv;
}

rq_arena_chunk *rq_arena_release(rq_arena *a, size_t keep_bytes)
{
	rq_arena_chunk *lists[2] = {a->head, a->spare}, *kept = NULL;
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
	a->head = a->spare = NULL;
	return kept;
}

void rq_arena_chunks_free(rq_arena_chunk *c)
{
	while (c) {
		rq_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
}
