/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_slot: the pool's state, shared by its two files (internal to
 * worker/pool; its interface is pool.h): pool.c runs the slots (starting
 * a child, its questions, its limits, its end, the loop) and
 * pool_result.c makes a child's result.
 */
#ifndef RQ_POOL_SLOT_H
#define RQ_POOL_SLOT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"
#include "rq_child.h"

/* One child and its job. */
typedef struct rq_pool_slot {
	pid_t pid; /* 0: the slot is free */
	rq_child_in report;
	int exit_fd;   /* readable when the child exits (a pidfd); -1: none */
	int answer_fd; /* parent -> child: the answers; -1: none (no ref update), or closed */
	int prepared;  /* its intent was handled */
	int aborted;
	int committed; /* told to move refs: no limit interrupts it any more */
	int checked;   /* its commit check was answered */
	long long deadline;
	long long timeout_ms;
	long long killed_at; /* when the parent killed it (deadline, memory) */
	long long exited_at; /* when the parent saw it exit */
	uint64_t rss_at_kill;
	int timed_out;
	int over_memory;
	int reaped;
	int published; /* its result went to done: the child may still work on */
	int discarded; /* its result came too late: its objects go when it is reaped */
	int wstatus;
	long attempt;
	char *id;
	char *repo;
	void *ctx;
	struct rq_pool *pool;
	rq_evloop_watch *on_report, *on_exit; /* in the pool's loop */
	rq_evloop_timer *timer;		      /* its deadline, or the next look at its exit */
} rq_pool_slot;

struct rq_pool {
	rq_pool_opts opts;
	char root[PATH_MAX];
	char worker[128];
	rq_pool_slot *slots;
	int running;
	rq_evloop_timer *mem_timer; /* the memory checks; NULL without a limit */
};

/* The first whole message, when it is of this type: 1 and *m set. */
static inline int rq_pool_slot_msg(const rq_pool_slot *s, char type, rq_child_msg *m)
{
	return rq_child_in_next(&s->report, m) == 1 && m->type == type;
}

/* Remove what a killed child left in its repository's objects directory
 * (pool.c). */
void rq_pool_clean_objdir(const rq_pool *p, const rq_pool_slot *s);

#endif
