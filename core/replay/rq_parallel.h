/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_parallel: a replay's independent groups of commits picked by several
 * processes at once.
 *
 * The replay driver (rq_replay) forks the workers early, while it is
 * small, with rq_parallel_fork(): every worker then resolves the same
 * revisions and walks the same commits itself (building its own caches,
 * which copy-on-write sharing made slower), and rq_parallel_agree()
 * checks that each child resolved what the parent did. The driver then
 * splits the commits into groups (a commit goes with its parent when the
 * parent is replayed too) and calls rq_parallel_run() in every worker.
 *
 * The workers take groups from one list, biggest first, through a counter
 * in a page they share, so a slow worker takes fewer. They also share the
 * lowest index of a failed pick: a pick after it cannot change the result
 * (a sequential replay stops there), so it is skipped. A child hands its
 * new objects to the parent as a part file of the temporary object
 * directory and reports, in rq_child messages, the commits it picked, its
 * counts and its earliest failure; then it exits. The parent picks too,
 * reads every report, and keeps the earliest failure of all: the outcome,
 * the commit ids and the conflict reported are those of --jobs=1. A child
 * that dies fails the replay (RQ_E_CRASHED) and no child is left running.
 *
 * With keep_going (--keep-going), a conflict is not a failure: the worker
 * goes on with its group (the driver's pick skips the commits below a
 * conflict) and with the other groups, and reports every conflict; the
 * parent gathers them all (rq_parallel_outcome.kept). Errors still fail
 * the replay as above.
 *
 * Parent and child state are apart: the parent keeps its children, a
 * child only its pipe and its parent's pid. Children end with _exit()
 * (in rq_parallel_run() and rq_parallel_end()); the parent never exits.
 */
#ifndef RQ_PARALLEL_H
#define RQ_PARALLEL_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_merge.h"
#include "rq_odb_tmpdir.h"

/* The most children a parallel replay forks. */
#define RQ_MAX_JOBS 64
/* Replays with fewer commits are not worth forking for. */
#define RQ_PARALLEL_MIN_COMMITS 8
/*
 * With the default --jobs, workers are forked only for at least this many
 * positive revisions (they are forked before the walk, when the number of
 * commits is not known), and used only from RQ_PARALLEL_AUTO_MIN commits:
 * below a few hundred picks, forking and handing the objects over cost
 * more than the second core saves (bench/run-mass, 100k files: 300 picks
 * 1.0x, 600 picks 1.14x, 6000 picks 1.5x).
 */
#define RQ_PARALLEL_AUTO_MIN_REVS 64
#define RQ_PARALLEL_AUTO_MIN	  512

typedef struct rq_parallel rq_parallel;

/* What a worker adds to the replay's statistics. */
typedef struct rq_parallel_counts {
	size_t picked, dropped, merge_commits;
	size_t merges_trivial, merges_full, merges_fallback;
	size_t scores_computed, scores_reused;
} rq_parallel_counts;

/*
 * The driver's pick of commit i onto the replay's base (or onto the new
 * form of its parent): 0 clean, 1 conflict (*conf filled, the caller's
 * to free), -1 error (err set); with keep_going also 2: not picked, its
 * parent conflicted or was skipped.
 */
typedef int (*rq_parallel_pick_fn)(void *arg, size_t i, rq_conflicts *conf, rq_error *err);

/* A worker's own counts (its picks and its merger's), for its report. */
typedef void (*rq_parallel_counts_fn)(void *arg, rq_parallel_counts *out);

typedef struct rq_parallel_job {
	size_t n;	     /* commits, in walk order */
	const size_t *group; /* group of each commit: 0 .. ngroups - 1 */
	size_t ngroups;
	rq_parallel_pick_fn pick;
	rq_parallel_counts_fn counts;
	void *arg;
	/* the commit map: the new commit and tree of every commit picked, by
	 * any worker, once rq_parallel_run() returns 0 */
	rq_oid *new_ids, *new_trees;
	const rq_oid_algo *algo; /* their format (the reports carry them as hex) */
	unsigned char *warned;	 /* and whether it was not UTF-8 (rq_commit) */
	rq_odb_tmpdir *tmpdir;
	const volatile int *cancel; /* set to stop (RQ_E_INTERRUPTED) */
	int keep_going;		    /* a conflict does not stop the replay */
} rq_parallel_job;

/* A conflicting pick of a keep-going replay. */
typedef struct rq_parallel_conflict {
	size_t index; /* in the walk */
	rq_conflicts conflicts;
} rq_parallel_conflict;

/* The conflicts of a keep-going replay, in no particular order. */
typedef struct rq_parallel_kept {
	rq_parallel_conflict *v;
	size_t n, cap;
} rq_parallel_kept;

/* What the parent learns from all workers. */
typedef struct rq_parallel_outcome {
	size_t fail;		     /* earliest failed pick; SIZE_MAX: none */
	rq_conflicts conflicts;	     /* that pick's, when it conflicted */
	rq_parallel_counts children; /* the children's counts (the parent's own are not here) */
	size_t workers;		     /* processes that took part, this one included */
	rq_parallel_kept kept;	     /* keep_going: every conflict (free: rq_parallel_kept_free) */
} rq_parallel_outcome;

/* Append a conflict of pick i to k (taking *conf); 0, or -1 out of memory
 * (*conf freed). */
int rq_parallel_kept_add(rq_parallel_kept *k, size_t i, rq_conflicts *conf);

/* Hooks a test runs in each child right after the fork. */
typedef struct rq_parallel_hooks {
	void (*child)(unsigned worker, void *arg);
	void *arg;
} rq_parallel_hooks;

/*
 * Fork jobs - 1 children (jobs <= RQ_MAX_JOBS). odb: mapped in full here
 * first, so that every worker shares the pack indexes. Returns the
 * worker's number: 0 in the parent, 1 .. jobs - 1 in a child. *out is
 * NULL when not even one child could be forked (no shared page, process
 * or descriptor): the caller replays alone. Never fails otherwise.
 */
unsigned rq_parallel_fork(rq_parallel **out, int jobs, git_odb *odb,
			  const rq_parallel_hooks *hooks);

/*
 * The parent publishes a digest of what the revisions and the target
 * resolved to; a child compares its own with it (waiting for it, and
 * exiting if the parent is gone). 0: the same; -1: a child that saw
 * other refs (it should rq_parallel_end(), the parent goes on without
 * it).
 */
int rq_parallel_agree(rq_parallel *p, const unsigned char digest[20]);

/* Processes that may take part, this one included. */
int rq_parallel_workers(const rq_parallel *p);

/* 1 in a child. */
int rq_parallel_is_child(const rq_parallel *p);

/*
 * Pick the groups in every worker. In a child this reports and exits. In
 * the parent: 0 all picked (the commit map filled, the children's
 * objects loaded; with keep_going, out->kept lists the conflicts and the
 * commits that were not picked have no entry in the map), 1 a pick
 * conflicted (out->fail, out->conflicts; never with keep_going), -1
 * error (err; the earliest failed pick's own error when a pick failed).
 * out->children holds the children's counts in every case. On failure
 * the children are gone when this returns.
 */
int rq_parallel_run(rq_parallel *p, const rq_parallel_job *job, rq_parallel_outcome *out,
		    rq_error *err);

/* Free the conflicts and the list. */
void rq_parallel_kept_free(rq_parallel_kept *k);

/*
 * Done with the workers: in a child, report that it took no group (if it
 * did not report yet) and exit; in the parent, kill and reap what is left
 * and free p. NULL: nothing.
 */
void rq_parallel_end(rq_parallel *p);

#endif
