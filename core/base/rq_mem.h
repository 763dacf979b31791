/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_mem: make room on the heap ahead of a replay.
 *
 * A replay's heap grows with every pick (objects read, the new objects,
 * the merge's memory). Each new page then costs a page fault, and on
 * virtual machines a fault costs several microseconds: on the 2000-branch
 * mass replay, 16,000 faults took about a fifth of the run. Reserving the
 * expected growth at once, populated by one madvise(MADV_POPULATE_WRITE),
 * and keeping freed memory in the heap (no trimming), turns those faults
 * into one system call.
 */
#ifndef RQ_MEM_H
#define RQ_MEM_H

#include <stddef.h>

/* Reserve `bytes` (capped) of populated heap for this process. Best effort:
 * nothing happens where the C library or the kernel cannot do it. */
void rq_mem_reserve(size_t bytes);

#endif
