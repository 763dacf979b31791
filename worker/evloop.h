/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * evloop: the event loop of the commands that run jobs (worker, run),
 * after the shape of redis's `ae`: descriptors, each watched once with the
 * function to call when it fires, and one list of timers, each added once
 * with the moment it is due (-1: not armed). A turn waits in a single
 * poll() until the nearest armed timer, calls the function of each
 * descriptor that fired, then the function of each timer that is due.
 *
 * A watch or a timer may be added, re-armed or deleted from inside any
 * function the loop calls, also its own: a deleted one is never called
 * again, and its memory goes at the end of the turn, so that a descriptor
 * number closed and opened again meanwhile never reaches the old watch.
 *
 * For a part that keeps its own descriptors (the metrics endpoint), a
 * poller hands the loop its pollfds each turn, lowers the timeout, and is
 * given its slice back after the poll.
 */
#ifndef RQ_EVLOOP_H
#define RQ_EVLOOP_H

#include <poll.h>

typedef struct rq_evloop rq_evloop;
typedef struct rq_evloop_watch rq_evloop_watch;
typedef struct rq_evloop_timer rq_evloop_timer;

/* A descriptor fired: revents as poll() gave them. */
typedef void (*rq_evloop_fd_fn)(void *arg, int fd, short revents);
/* A timer is due (now: the monotonic clock, ms): its next moment, or -1
 * to leave it unarmed (rq_evloop_timer_at arms it again). */
typedef long long (*rq_evloop_timer_fn)(void *arg, long long now);

/* A part with descriptors of its own (see above). */
typedef struct rq_evloop_poller {
	int (*pollfds)(void *arg, struct pollfd *pfd, int max, int *timeout_ms);
	void (*process)(void *arg, const struct pollfd *pfd, int n);
	void *arg;
	int max; /* the most descriptors pollfds fills */
} rq_evloop_poller;

/* A new loop; NULL out of memory. */
rq_evloop *rq_evloop_new(void);
/* Free the loop with every watch and timer still in it. */
void rq_evloop_free(rq_evloop *l);

/* Watch fd for events (POLLIN, POLLOUT) until deleted: the watch, or NULL
 * out of memory. */
rq_evloop_watch *rq_evloop_watch_add(rq_evloop *l, int fd, short events, rq_evloop_fd_fn fn,
				     void *arg);
/* Stop watching (w may be NULL). Before its descriptor is closed. */
void rq_evloop_watch_del(rq_evloop *l, rq_evloop_watch *w);

/* A timer, first due at when (-1: not armed): the timer, or NULL out of
 * memory. */
rq_evloop_timer *rq_evloop_timer_add(rq_evloop *l, long long when, rq_evloop_timer_fn fn,
				     void *arg);
/* Arm the timer for when (-1: disarm). */
void rq_evloop_timer_at(rq_evloop_timer *t, long long when);
/* When it is due, -1 when not armed. */
long long rq_evloop_timer_when(const rq_evloop_timer *t);
/* Delete the timer (t may be NULL). */
void rq_evloop_timer_del(rq_evloop *l, rq_evloop_timer *t);

/* Add a poller (copied); 0, or -1 out of memory. */
int rq_evloop_poller_add(rq_evloop *l, const rq_evloop_poller *p);

/*
 * One turn: wait for a descriptor, the nearest timer, or at most max_ms
 * (-1: no bound; 0 with nothing armed: look and return), then call what
 * fired and what is due. 0, or -1 when the wait failed for another reason
 * than a signal (nothing was called).
 */
int rq_evloop_turn(rq_evloop *l, int max_ms);

/* How many turns the loop has made (a sign of life for a health check). */
unsigned long long rq_evloop_turns(const rq_evloop *l);

#endif
