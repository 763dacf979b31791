/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc ("Update
 * transactions": the lock, the new table, the list renamed over) */
/*
 * rq_rtfile: the files a reftable transaction or compaction writes:
 * lock files that hold its token from the first instant (rq_rtlock),
 * waited for as git's reftable.lockTimeout says; a new table written to a
 * temporary file, fsynced and renamed to git's name; the new list written
 * into tables.list.lock, fsynced and renamed over tables.list. Private to
 * rq_rttx and rq_rtcompact, which share the transaction's state below.
 */
#ifndef RQ_RTFILE_H
#define RQ_RTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"
#include "rq_error.h"
#include "rq_rtstack.h"
#include "rq_rttx.h"

#define RQ_RTFILE_LOCK_TIMEOUT_MS 100 /* git's reftable.lockTimeout */

/* A transaction (or a compaction): its stack, its options, the token of
 * its locks and tables, and tables.list.lock while it holds it. */
struct rq_rttx {
	rq_rtstack *st;
	rq_rttx_opts o;
	char token[9];
	char lock[PATH_MAX];
	int fd; /* tables.list.lock, -1 when not held */
};

/* 8 random hex digits (a table's name, a temporary file's). */
void rq_rtfile_new_token(char out[9]);

/* <stack dir>/<name><suffix> into out (PATH_MAX): 0, or -1 with err set. */
int rq_rtfile_path(const rq_rtstack *st, const char *name, const char *suffix, char *out,
		   rq_error *err);

/* Create the lock file path holding tx's token (rq_rtlock), told to
 * opts.note_lock first, waiting up to timeout_ms while another process
 * holds it: its fd, or -1 with err set (RQ_E_REF_LOCKED, RQ_E_IO). */
int rq_rtfile_lock(const rq_rttx *tx, const char *path, long timeout_ms, rq_error *err);

/*
 * Write a new table named after min, max and token: to a temporary file,
 * fsynced, then renamed. name gets its file name. 0, or -1 with err set.
 */
int rq_rtfile_write_table(rq_rtstack *st, const char *token, uint64_t min, uint64_t max,
			  const rq_buf *bytes, char *name, size_t size, rq_error *err);

/* tables.list.lock (held by tx) gets the n names, is fsynced and renamed
 * over tables.list (hold, when not NULL: a test hook point right before
 * the rename); tx holds the lock no more. 0, or -1 with err set. */
int rq_rtfile_write_list(rq_rttx *tx, const char *const *names, size_t n, const char *hold,
			 rq_error *err);

/* Release tables.list.lock if tx holds it. */
void rq_rtfile_unlock(rq_rttx *tx);

#endif
