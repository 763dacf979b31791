/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_clock: the two clocks of the program: the wall clock (for times
 * written down: a job's submission, a heartbeat) and the monotonic one (for
 * every deadline, pause and phase time, which a clock set back or forward
 * must not stretch or cut). Every reading of either clock goes through here.
 */
#ifndef RQ_CLOCK_H
#define RQ_CLOCK_H

#include <stdint.h>

/* Milliseconds since the epoch. */
long long rq_clock_wall_ms(void);

/* Milliseconds of the monotonic clock (from an unspecified start). */
long long rq_clock_mono_ms(void);

/* Nanoseconds of the monotonic clock. */
uint64_t rq_clock_mono_ns(void);

/* Milliseconds of the monotonic clock with their fraction (phase times). */
double rq_clock_mono_fms(void);

#endif
