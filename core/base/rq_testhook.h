/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_testhook: named points where a test can stop a process on purpose.
 *
 * Tests must not depend on the speed of the machine: a test that needs a
 * replay or a job to be "still running" holds it at a named point instead
 * of hoping it is slow. With REPLAYQ_TEST_HOLD set to a comma-separated
 * list of points, a process that reaches one of them creates the file
 * $REPLAYQ_TEST_HOLD_DIR/<point>.<pid> (the test waits for it) and then
 * waits for a signal: SIGUSR1 lets it go on, any signal the process handles
 * (a replay's SIGTERM) makes it return too, and a signal it does not handle
 * acts as usual (SIGKILL, a SIGALRM deadline). Unset, a hook costs one
 * getenv per call and does nothing. Points used:
 *   job:<id>        a worker's child, before it runs job <id>
 *   job:<id>@<n>    the same, for delivery <n> only
 *   claim:<id>      a worker (the parent), an entry of job <id> read or
 *                   taken back, pending under its name, before it claims
 *                   the job's id (claim:<id>@<n>: delivery <n> only)
 *   replay-child    a child of a parallel replay, before its first pick
 *   pick            a sequential replay, before its first pick
 *   refs-start, refs-locking, refs-locked, refs-fenced, refs-committed,
 *   refs-done       the steps of a ref update (rq_refs.h)
 *   pack-temps      a replay's pack and index written, neither renamed
 *   pack-kept       its .keep and mark made, the pack not moved in
 *   repack-locked, repack-selected, repack-kept, repack-written,
 *   repack-deleting, repack-deleted, repack-done
 *                   the steps of a consolidation of replayq's packs
 *                   (rq_odb_repack.h)
 *   job-after       a worker's child, its result sent (and published), before it
 *                   consolidates
 * With REPLAYQ_TEST_HOLD_ONCE set, only the first process that reaches a
 * point holds there (<dir>/<point>.once marks it taken).
 * REPLAYQ_TEST_ALLOC_AT=<point>:<MiB> makes a process that reaches the
 * point take and touch that much memory first (and keep it): a job that
 * grows after its temporary objects exist.
 *
 * The hooks exist only in a build configured with -DRQ_TEST_HOOKS=ON (what
 * tests/run builds). Elsewhere, a release build above all, every function
 * below is an empty inline function: the product obeys no REPLAYQ_TEST_*
 * variable and holds nowhere (integration/release_hooks checks it).
 */
#ifndef RQ_TESTHOOK_H
#define RQ_TESTHOOK_H

#include <stddef.h>

#ifdef RQ_TEST_HOOKS
/* Hold here if REPLAYQ_TEST_HOLD names this point; returns when let go. */
void rq_testhook_hold(const char *point);

/* 1 if REPLAYQ_TEST_HOLD names this point. */
int rq_testhook_wanted(const char *point);
#endif

/*
 * In-process tests of threads: fn(point, k) is called at every
 * rq_testhook_at(point, k) (NULL, the default: nothing). A unit test sets
 * it before any thread starts, to make an interleaving happen on purpose.
 * Points: "help-unlocked" and "help-done" (rq_odb_compress: the replay's thread
 * helping with object k at the end, its lock released, then done),
 * "thread-encode" (the compressor thread about to encode object k).
 */
typedef void (*rq_testhook_fn)(const char *point, size_t k);

/*
 * The documents of the suite, for its schema check (tests/schema_check.py
 * against docs/schema): with REPLAYQ_TEST_JSON_DIR set, a process appends
 * each job text it parses (kind "job"; verdict "ok", or the error code
 * that refused it and its message as note) and each result it emits (kind
 * "result", or "maintain" for the member of one `maintain` prints; verdict
 * "ok") to <dir>/<pid>.docs (the directory made if need
 * be), one write per record, O_APPEND:
 *   "<kind> <verdict> <bytes of text> <bytes of note>\n" text note "\n"
 * Nothing is written without the variable, and nothing when it fails.
 */
#ifdef RQ_TEST_HOOKS
void rq_testhook_set_fn(rq_testhook_fn fn);
void rq_testhook_at(const char *point, size_t k);
void rq_testhook_doc(const char *kind, const char *verdict, const char *text, size_t len,
		     const char *note);
#else
static inline void rq_testhook_doc(const char *kind, const char *verdict, const char *text,
				   size_t len, const char *note)
{
	(void)kind;
	(void)verdict;
	(void)text;
	(void)len;
	(void)note;
}

static inline void rq_testhook_hold(const char *point)
{
	(void)point;
}

static inline int rq_testhook_wanted(const char *point)
{
	(void)point;
	return 0;
}

static inline void rq_testhook_at(const char *point, size_t k)
{
	(void)point;
	(void)k;
}
#endif

#endif
