/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stop: SIGTERM and SIGINT as a request to stop, for the commands that
 * run jobs (worker drains, run reads no more): a flag, and a descriptor
 * that becomes readable so that an event loop in poll() wakes at once.
 * SIGPIPE is ignored (a broken connection is an error to handle, not a
 * death).
 */
#ifndef RQ_STOP_H
#define RQ_STOP_H

/* Catch the signals (again: no harm). */
void rq_stop_catch(void);

/* 1 once a stop was requested. */
int rq_stop_requested(void);

/* The descriptor to poll for a request (-1 when it could not be made:
 * then the flag alone tells, at the loop's next timer). */
int rq_stop_fd(void);

/* Empty the descriptor after poll() said it was readable. */
void rq_stop_drain(void);

#endif
