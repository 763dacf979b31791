/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool: run jobs in forked children, at most N at once.
 *
 * Each child (core/base/rq_child's fork and report pipe) opens the job's
 * repository under the repository root, runs the engine, and sends its
 * result (JSON) over the pipe (worker/jobrun); the parent never touches a
 * repository. The result ends the job's report: done gets it as soon as
 * it is in, while the child may still consolidate replayq's packs; the
 * child keeps its slot (a job fewer can start, its memory limit holds)
 * until it exits, and nothing it does after its result changes the
 * result (a failure or a kill there is logged and handed to after). A child that crashes, is
 * killed, runs past its deadline (the parent kills it) or exceeds its memory limit (resident set
 * size, watched by the parent, which kills it) yields an error result (crashed / timeout /
 * out_of_memory) built by the parent. Children die with the parent (PR_SET_PDEATHSIG).
 */
#ifndef RQ_POOL_H
#define RQ_POOL_H

#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "evloop.h"
#include "rq_job.h"

#define RQ_POOL_MAX_JOBS 256

typedef struct rq_pool rq_pool;

/*
 * Called once per job, when it is finished (its result in, or its child
 * ended without one): result is the result JSON text (also for
 * crashes and timeouts; NULL when the job is to be left for a retry: it
 * was stopped before moving any ref because its intent or its commit was
 * refused, a granted commit failed part-way, or no memory was left for
 * its result), transient is 1 for crashed/timeout (worth a retry), status
 * is "ok", "conflict" or "error".
 */
typedef void (*rq_pool_done_fn)(void *arg, void *ctx, const char *result, const char *status,
				int transient);

typedef struct rq_pool_opts {
	/* the loop the pool watches its children on: each child's report
	 * pipe and pidfd, its deadline, the memory checks */
	rq_evloop *loop;
	rq_pool_done_fn done; /* with done_arg, for each finished job */
	void *done_arg;
	/*
	 * With done_arg, when a child whose result done had ran a
	 * consolidation after it and ended: outcome "merged", "nothing" (no
	 * pack to merge), "busy" (another process held the lock too long),
	 * "failed" (an error) or "killed" (the child died before it told:
	 * a signal, the memory limit). The pool logs it. NULL: not called.
	 */
	void (*after)(void *arg, const char *outcome);
	int jobs;		 /* children at once */
	const char *repo_root;	 /* absolute, resolved */
	uint64_t memory_limit;	 /* bytes of resident memory per child, 0: none */
	int alternates_anywhere; /* follow objects/info/alternates outside the root */
	int no_consolidate;	 /* leave replayq's packs as they are after jobs */
	unsigned confine_flags;	 /* rq_confine_open's: RQ_CONFINE_ROOT_SCOPE or 0 */
	const char *worker;	 /* name reported in results */
	struct rq_sign *signer;	 /* signs the jobs that ask; the pool's once made (freed with it) */
	/*
	 * Write-ahead for ref_action "update": called by the parent with the
	 * result a child is about to make true; 0 lets the child apply its ref
	 * updates, anything else stops it (the job is then left for a retry:
	 * done gets result NULL). NULL: children apply without asking.
	 */
	int (*intent)(void *arg, void *ctx, const char *result);
	/*
	 * The commit check, called with intent_arg when a child holds its ref
	 * locks, right before it commits: 1 lets it commit (the job is still
	 * this worker's), anything else makes it release the locks and move
	 * nothing (done then gets result NULL). NULL: always commit.
	 */
	int (*owns)(void *arg, void *ctx);
	void *intent_arg;
} rq_pool_opts;

int rq_pool_new(rq_pool **out, const rq_pool_opts *opts, rq_error *err);
void rq_pool_free(rq_pool *p);
/* How many more jobs can start now; how many run. */
int rq_pool_idle_count(const rq_pool *p);
int rq_pool_running(const rq_pool *p);

/* Returned by rq_pool_spawn: the job was not started for want of a
 * descriptor or a process (EMFILE, ENFILE, EAGAIN, ENOMEM); nothing was
 * done, and it may start once a child has ended. */
#define RQ_POOL_BUSY 1

/* The descriptors a pool of jobs children holds in the parent at most:
 * each child's report pipe, pidfd and answer pipe, and the child's ends
 * of its two pipes while one starts. */
int rq_pool_fds(int jobs);

/* What a job's process needs at least besides the parent's: its pipes and
 * standard streams, and some to work with (repository files, packs, the
 * pipes of a parallel replay). */
#define RQ_POOL_CHILD_FDS 24

/*
 * Start a job: 0, RQ_POOL_BUSY, or -1 (err set for both). default_time: committer time (seconds)
 * when the job has none. attempt: delivery number. intent: the intent an earlier delivery recorded
 * (or NULL): if its updates are all in place, it is the result. ctx is handed back to done. From
 * then on the loop's turns read the child's messages (the function of its descriptor that fired),
 * enforce its deadline and memory limit (timers), reap it, and call done.
 */
int rq_pool_spawn(rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		  const char *intent, int granted, void *ctx, rq_error *err);

/* 1 if children get a kernel memory limit (RLIMIT_DATA); 0 in sanitizer
 * builds, whose shadow memory no such limit can fit. */
int rq_pool_kernel_memory_limit(void);

/* Kill every child (SIGKILL; one moving refs is let finish) and reap
 * them; done is not called, dropped is for each whose result was not
 * published yet. */
void rq_pool_kill_all(rq_pool *p, void (*dropped)(void *arg, void *ctx), void *arg);

#endif
