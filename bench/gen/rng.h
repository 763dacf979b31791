/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rng: the corpus generators' random numbers (splitmix64): seeded, so that
 * the same parameters give the same repository, commit ids included.
 */
#ifndef BENCH_RNG_H
#define BENCH_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

#endif
