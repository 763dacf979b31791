/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * evloop: descriptors watched once, one list of timers, one poll() a turn
 * (see evloop.h). The shape is redis's `ae` (ae.c: a file event table, a
 * list of time events searched for the nearest, deletion deferred to the
 * end of the pass); the code is replayq's.
 */
#include "evloop.h"

#include <errno.h>
#include <stdlib.h>

#include "rq_clock.h"

struct rq_evloop_watch {
	int fd;
	short events;
	int dead; /* deleted during a turn: freed at its end */
	rq_evloop_fd_fn fn;
	void *arg;
	struct rq_evloop_watch *next;
};

struct rq_evloop_timer {
	long long when; /* -1: not armed */
	int dead;
	rq_evloop_timer_fn fn;
	void *arg;
	struct rq_evloop_timer *next;
};

struct rq_evloop {
	rq_evloop_watch *watches;
	rq_evloop_timer *timers, **timers_tail;
	rq_evloop_poller *pollers;
	int *pollers_n; /* how many pollfds each filled this turn */
	int npollers;
	struct pollfd *pfd; /* the turn's pollfds: the watches', then the pollers' */
	rq_evloop_watch **owner;
	int cap;
	int in_turn;
	unsigned long long turns;
};

rq_evloop *rq_evloop_new(void)
{
	rq_evloop *l = calloc(1, sizeof(*l));

	if (l)
		l->timers_tail = &l->timers;
	return l;
}

void rq_evloop_free(rq_evloop *l)
{
	if (!l)
		return;
	while (l->watches) {
		rq_evloop_watch *w = l->watches;
		l->watches = w->next;
		free(w);
	}
	while (l->timers) {
		rq_evloop_timer *t = l->timers;
		l->timers = t->next;
		free(t);
	}
	free(l->pollers);
	free(l->pollers_n);
	free(l->pfd);
	free(l->owner);
	free(l);
}

rq_evloop_watch *rq_evloop_watch_add(rq_evloop *l, int fd, short events, rq_evloop_fd_fn fn,
				     void *arg)
{
	rq_evloop_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	*w = (rq_evloop_watch){fd, events, 0, fn, arg, l->watches};
	l->watches = w;
	return w;
}

void rq_evloop_watch_del(rq_evloop *l, rq_evloop_watch *w)
{
	if (!w)
		return;
	w->dead = 1;
	if (l->in_turn)
		return;
	for (rq_evloop_watch **pp = &l->watches; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			free(w);
			return;
		}
}

rq_evloop_timer *rq_evloop_timer_add(rq_evloop *l, long long when, rq_evloop_timer_fn fn, void *arg)
{
	rq_evloop_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	*t = (rq_evloop_timer){when, 0, fn, arg, NULL};
	*l->timers_tail = t; /* in the order added: the order they run in */
	l->timers_tail = &t->next;
	return t;
}

void rq_evloop_timer_at(rq_evloop_timer *t, long long when)
{
	t->when = when < 0 ? -1 : when;
}

long long rq_evloop_timer_when(const rq_evloop_timer *t)
{
	return t->when;
}

void rq_evloop_timer_del(rq_evloop *l, rq_evloop_timer *t)
{
	if (!t)
		return;
	t->dead = 1;
	t->when = -1;
	if (l->in_turn)
		return;
	for (rq_evloop_timer **pp = &l->timers; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			if (l->timers_tail == &t->next)
				l->timers_tail = pp;
			free(t);
			return;
		}
}

int rq_evloop_poller_add(rq_evloop *l, const rq_evloop_poller *p)
{
	rq_evloop_poller *v = realloc(l->pollers, (size_t)(l->npollers + 1) * sizeof(*v));
	int *n;

	if (!v)
		return -1;
	l->pollers = v;
	if (!(n = realloc(l->pollers_n, (size_t)(l->npollers + 1) * sizeof(*n))))
		return -1;
	l->pollers_n = n;
	l->pollers[l->npollers++] = *p;
	return 0;
}

unsigned long long rq_evloop_turns(const rq_evloop *l)
{
	return l->turns;
}

/* ---- a turn ---- */

/* Room for n pollfds; -1 out of memory. */
static int reserve(rq_evloop *l, int n)
{
	struct pollfd *pfd;
	rq_evloop_watch **owner;

	if (n <= l->cap)
		return 0;
	if (!(pfd = realloc(l->pfd, (size_t)n * sizeof(*pfd))))
		return -1;
	l->pfd = pfd;
	if (!(owner = realloc(l->owner, (size_t)n * sizeof(*owner))))
		return -1;
	l->owner = owner;
	l->cap = n;
	return 0;
}

/* The wait until the nearest armed timer (-1: none), at most max_ms. */
static int nearest(const rq_evloop *l, long long now, int max_ms)
{
	long long next = -1;

	for (const rq_evloop_timer *t = l->timers; t; t = t->next)
		if (t->when >= 0 && (next < 0 || t->when < next))
			next = t->when;
	if (next >= 0) {
		long long wait = next > now ? next - now : 0;
		if (max_ms < 0 || wait < max_ms)
			return wait > 86400000 ? 86400000 : (int)wait;
	}
	return max_ms;
}

/* Fill the pollfds: the watches', then each poller's; their count, or -1
 * out of memory. *nw: how many are the watches'. */
static int fill(rq_evloop *l, int *timeout, int *nw)
{
	int n = 0, want = 0;

	for (rq_evloop_watch *w = l->watches; w; w = w->next)
		want++;
	for (int i = 0; i < l->npollers; i++)
		want += l->pollers[i].max;
	if (reserve(l, want) < 0)
		return -1;
	for (rq_evloop_watch *w = l->watches; w; w = w->next) {
		l->owner[n] = w;
		l->pfd[n++] = (struct pollfd){.fd = w->fd, .events = w->events};
	}
	*nw = n;
	for (int i = 0; i < l->npollers; i++) {
		const rq_evloop_poller *p = &l->pollers[i];
		l->pollers_n[i] = p->pollfds(p->arg, l->pfd + n, p->max, timeout);
		n += l->pollers_n[i];
	}
	return n;
}

/* Call each poller with the slice it filled (also when nothing fired). */
static void process_pollers(rq_evloop *l, int at)
{
	for (int i = 0; i < l->npollers; i++) {
		l->pollers[i].process(l->pollers[i].arg, l->pfd + at, l->pollers_n[i]);
		at += l->pollers_n[i];
	}
}

/* Call the function of every timer due by now, each once. */
static void run_timers(rq_evloop *l)
{
	long long now = rq_clock_mono_ms();

	for (rq_evloop_timer *t = l->timers; t; t = t->next) {
		long long next;
		if (t->dead || t->when < 0 || t->when > now)
			continue;
		t->when = -1;
		next = t->fn(t->arg, now);
		/* armed again meanwhile, or by its return: the earlier */
		if (!t->dead && next >= 0 && (t->when < 0 || next < t->when))
			t->when = next;
	}
}

/* Free what was deleted during the turn. */
static void sweep(rq_evloop *l)
{
	for (rq_evloop_watch **pp = &l->watches; *pp;) {
		rq_evloop_watch *w = *pp;
		if (w->dead) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
	l->timers_tail = &l->timers;
	for (rq_evloop_timer **pp = &l->timers; *pp;) {
		rq_evloop_timer *t = *pp;
		if (t->dead) {
			*pp = t->next;
			free(t);
		} else {
			pp = &t->next;
			l->timers_tail = pp;
		}
	}
}

int rq_evloop_turn(rq_evloop *l, int max_ms)
{
	int timeout = nearest(l, rq_clock_mono_ms(), max_ms), nw = 0, rc = 0;
	int n = fill(l, &timeout, &nw);

	if (n < 0)
		return -1;
	l->in_turn = 1;
	if (poll(l->pfd, (nfds_t)n, timeout) < 0) {
		rc = errno == EINTR ? 0 : -1;
		for (int i = 0; i < n; i++)
			l->pfd[i].revents = 0;
	}
	for (int i = 0; i < nw; i++) {
		rq_evloop_watch *w = l->owner[i];
		if (l->pfd[i].revents && !w->dead)
			w->fn(w->arg, w->fd, l->pfd[i].revents);
	}
	process_pollers(l, nw);
	run_timers(l);
	l->in_turn = 0;
	sweep(l);
	l->turns++;
	return rc;
}
