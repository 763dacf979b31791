/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc ("Compaction") and
 * git's reftable/stack.c (the geometric compaction segment) */
/*
 * rq_rtcompact: compaction of a reftable stack. After each transaction
 * (rq_rttx_commit, unless told not to) it restores git's geometric
 * sequence of table sizes (factor 2), as git does after each of its own
 * writes, so that a repository only replayq writes keeps few tables. The
 * tables of the run are locked (<table>.lock, newest first, as git does),
 * tables.list.lock is released during the merge and taken again to swap
 * the run for the merged table; every lock holds the token (rq_rtlock)
 * and is told to opts.note_lock first, as a transaction's.
 */
#ifndef RQ_RTCOMPACT_H
#define RQ_RTCOMPACT_H

#include "rq_error.h"
#include "rq_rtstack.h"
#include "rq_rttx.h"

/*
 * Compact: all tables into one (all), or the shortest run of newest
 * tables whose merge restores the geometric sequence (git's auto
 * compaction). Tombstones are dropped only when the merge reaches the
 * oldest table. Tables another process is compacting (their ".lock"
 * exists) are left out. 0 (also when there was nothing to do, or the
 * stack was locked and !all), or -1 with err set.
 */
int rq_rtcompact_run(rq_rtstack *st, const rq_rttx_opts *opts, int all, rq_error *err);

#endif
