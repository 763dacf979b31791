/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * clock: the two clocks of the program, in milliseconds: the wall clock
 * (for times written down: a job's submission, a heartbeat) and the
 * monotonic one (for every deadline and pause, which a clock set back or
 * forward must not stretch or cut).
 */
#ifndef RQ_CLOCK_H
#define RQ_CLOCK_H

/* Milliseconds since the epoch. */
long long rq_clock_wall_ms(void);

/* Milliseconds of the monotonic clock (from an unspecified start). */
long long rq_clock_mono_ms(void);

#endif
