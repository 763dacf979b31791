/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_mem: make room on the heap: for a growing array (rq_mem_grow), and
 * ahead of a replay (rq_mem_reserve).
 *
 * rq_mem_grow is the one way the core grows an array: to a first
 * capacity, then doubling, with the size checked for overflow and the
 * array left to its owner when the allocation fails.
 *
 * rq_mem_reserve: a replay's heap grows with every pick (objects read, the
 * new objects, the merge's memory). Each new page then costs a page fault,
 * and on virtual machines a fault costs several microseconds: on the
 * 2000-branch mass replay, 16,000 faults took about a fifth of the run.
 * Reserving the expected growth at once, populated by one
 * madvise(MADV_POPULATE_WRITE), and keeping freed memory in the heap (no
 * trimming), turns those faults into one system call.
 */
#ifndef RQ_MEM_H
#define RQ_MEM_H

#include <stddef.h>

/*
 * Room for n elements of elem_size bytes in the array v of *cap elements:
 * v itself when n fit, else v reallocated to `first` elements, or double
 * *cap, as often as needed, and *cap updated. NULL when out of memory or
 * the size does not fit a size_t: v and *cap are then unchanged (and v is
 * still the caller's to free).
 */
void *rq_mem_grow(void *v, size_t *cap, size_t n, size_t elem_size, size_t first);

/* Reserve `bytes` (capped) of populated heap for this process. Best effort:
 * nothing happens where the C library or the kernel cannot do it. */
void rq_mem_reserve(size_t bytes);

/* Threads allocate from the one heap (glibc gives a second thread an arena
 * of its own: about a MiB more resident memory for a replay that
 * compresses on a second core). Call before starting a thread. */
void rq_mem_one_arena(void);

#endif
