/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_arena: the memory of one tree merge.
 *
 * A tree merge allocates many small things (an entry per path it looks at,
 * path strings, map arrays, rename pairs) that all live exactly as long as
 * the merge. They come from an arena: bump allocation in 256 KiB chunks,
 * zeroed, released all at once when the merge ends, whatever the outcome,
 * so no merge code frees anything piecewise (git's merge-ort gets the same
 * effect from its mem_pool). Between the merges of one merger the chunks
 * are kept (rq_arena_release), because on small merges the page faults of
 * fresh memory were a large part of the time.
 */
#ifndef RQ_ARENA_H
#define RQ_ARENA_H

#include <stddef.h>

typedef struct rq_arena_chunk rq_arena_chunk;

typedef struct rq_arena {
	rq_arena_chunk *head;  /* the chunk allocations come from, then older ones */
	rq_arena_chunk *spare; /* standard chunks kept from an earlier merge, unused */
} rq_arena;

/* n bytes, zeroed and aligned for any type; NULL when out of memory. */
void *rq_arena_alloc(rq_arena *a, size_t n);
/* A copy of the first n bytes of s, terminated; NULL when out of memory. */
char *rq_arena_strndup(rq_arena *a, const char *s, size_t n);
char *rq_arena_strdup(rq_arena *a, const char *s);

/*
 * Room for one more element in the arena array v of len elements of
 * elem_size bytes and *cap capacity: v itself when there is room, else a
 * copy with the capacity doubled (first when it was 0) and *cap updated;
 * NULL when out of memory (v unchanged). The old array stays in the arena.
 */
void *rq_arena_grow(rq_arena *a, void *v, size_t len, size_t *cap, size_t elem_size, size_t first);

/*
 * Release everything but up to keep_bytes of standard chunks, which are
 * returned (a list for rq_arena.spare of a later arena, or for
 * rq_arena_chunks_free). The arena is empty afterwards.
 */
rq_arena_chunk *rq_arena_release(rq_arena *a, size_t keep_bytes);
/* Free a list of chunks from rq_arena_release. */
void rq_arena_chunks_free(rq_arena_chunk *c);

#endif
