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

#include <stddef.h>

/* Catch the signals (again: no harm). */
void rq_stop_catch(void);

/* 1 once a stop was requested. */
int rq_stop_requested(void);

/* The descriptor to poll for a request (-1 when it could not be made:
 * then the flag alone tells, at the loop's next timer). */
int rq_stop_fd(void);

/* Empty the descriptor after poll() said it was readable. */
void rq_stop_drain(void);

/*
 * In a process the worker forked that does not exec (a pool child, the
 * janitor): leave the parent's stop handling (SIGTERM back to its
 * default, SIGINT ignored: a terminal's ^C drains the worker, not its
 * children; the self-pipe closed) and close every descriptor from 3 up
 * but the nkeep in keep: the parent's Redis connections, its metrics
 * listener and clients, the other children's pipes are not the child's to
 * hold (a client of the parent would wait for them to close).
 */
void rq_stop_detach_child(const int *keep, size_t nkeep);

#endif
