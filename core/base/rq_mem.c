/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_mem: array growth and heap reservation (see rq_mem.h).
 */
#include "rq_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#define RESERVE_MAX ((size_t)16 << 20)

void *rq_mem_grow(void *v, size_t *cap, size_t n, size_t elem_size, size_t first)
{
	size_t ncap = *cap ? *cap : first;
	void *nv;

	if (n <= *cap)
		return v;
	while (ncap < n) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (!elem_size || ncap > SIZE_MAX / elem_size || !(nv = realloc(v, ncap * elem_size)))
		return NULL;
	*cap = ncap;
	return nv;
}

void rq_mem_reserve(size_t bytes)
{
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start, end;
	char *p;

	/* big blocks from the heap too, and freed memory kept in it, whatever
	 * the reservation: a content merge's 100-200 KB buffers were otherwise
	 * mapped and unmapped at every pick, 2,000 page faults on a 5-pick
	 * topic */
	mallopt(M_MMAP_THRESHOLD, (int)(RESERVE_MAX + page));
	mallopt(M_TRIM_THRESHOLD, (int)(2 * RESERVE_MAX));
	if (bytes > RESERVE_MAX)
		bytes = RESERVE_MAX;
	if (bytes < 16 * page)
		return;
	if (!(p = malloc(bytes)))
		return;
	start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	end = ((uintptr_t)p + bytes) & ~(uintptr_t)(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	free(p);
#else
	(void)bytes;
#endif
}

void rq_mem_one_arena(void)
{
#ifdef __GLIBC__
	mallopt(M_ARENA_MAX, 1);
#endif
}
