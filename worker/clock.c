/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * clock: wall and monotonic milliseconds (see clock.h).
 */
#include "clock.h"

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
