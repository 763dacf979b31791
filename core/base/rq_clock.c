/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_clock: wall and monotonic time (see rq_clock.h).
 */
#include "rq_clock.h"

#include <time.h>

static long long ms_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long rq_clock_wall_ms(void)
{
	return ms_of(CLOCK_REALTIME);
}

long long rq_clock_mono_ms(void)
{
	return ms_of(CLOCK_MONOTONIC);
}

uint64_t rq_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double rq_clock_mono_fms(void)
{
	return (double)rq_clock_mono_ns() / 1e6;
}
