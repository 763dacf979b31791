/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the stack) */
/*
 * rq_rtstack: a repository's stack of reftables, read.
 *
 * <gitdir>/reftable/tables.list names the tables, oldest first, one a
 * line; a newer table's record of a ref (or of a reflog entry) shadows an
 * older table's, and a deletion record (a tombstone) hides it. A lookup
 * asks the tables from the newest down, each by binary search through its
 * index or restart points; an iteration merges the tables in key order.
 *
 * The stack is read when opened and again, when asked to reload, if
 * tables.list has changed: another file (it is replaced, never rewritten;
 * the one read is kept open, as git does, so that a new one cannot get its
 * inode number), size or time. A table the
 * list names that is missing means a compaction removed it meanwhile: the
 * list is read again, and only when it names a missing table twice over
 * is it an error. A table stays mapped while an iterator uses it, however
 * the stack is reloaded.
 *
 * Table names must be plain file names; tables and tables.list are not
 * read through symbolic links.
 *
 * The stack is opened with the repository's object format: every table
 * must be of it (rq_rtable), and the tables written on it are.
 */
#ifndef RQ_RTSTACK_H
#define RQ_RTSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"
#include "rq_error.h"
#include "rq_oid.h"
#include "rq_rtable.h"

typedef struct rq_rtstack rq_rtstack;

/* The stack of dir (a repository's reftable directory), of a repository
 * whose object format is algo (NULL: SHA-1). 0, or -1 with err set. */
int rq_rtstack_open(rq_rtstack **out, const char *dir, const rq_oid_algo *algo, rq_error *err);
void rq_rtstack_free(rq_rtstack *st);

/* Read tables.list again when it changed (always when force). 0, or -1. */
int rq_rtstack_reload(rq_rtstack *st, int force, rq_error *err);

const char *rq_rtstack_dir(const rq_rtstack *st);
/* The object format it was opened with. */
const rq_oid_algo *rq_rtstack_algo(const rq_rtstack *st);
size_t rq_rtstack_ntables(const rq_rtstack *st);
const rq_rtable *rq_rtstack_table(const rq_rtstack *st, size_t i);
/* The update index of the next table: the newest table's maximum + 1. */
uint64_t rq_rtstack_next_update_index(const rq_rtstack *st);

/* A ref as the stack has it. */
typedef struct rq_rtstack_ref {
	int type; /* RQ_RTABLE_VAL1, VAL2 or SYMREF */
	rq_oid value, peeled;
	rq_buf target; /* SYMREF: the target, NUL-terminated */
	uint64_t update_index;
} rq_rtstack_ref;

/* Look name up: 1 found (out filled), 0 absent or deleted, -1 error. */
int rq_rtstack_read(rq_rtstack *st, const char *name, rq_rtstack_ref *out, rq_error *err);
void rq_rtstack_ref_release(rq_rtstack_ref *r);

/* 1 when refname has a reflog entry (not deleted), 0, -1 error. */
int rq_rtstack_has_log(rq_rtstack *st, const char *refname, rq_error *err);

/* A merged iteration over the tables first..first+n-1. */
typedef struct rq_rtstack_iter rq_rtstack_iter;

/*
 * The refs whose names start with prefix, in name order, each as its
 * newest table has it; deletions skipped unless with_deletions. Over the
 * whole stack, or (rq_rtstack_refs_range) over n tables from first.
 */
int rq_rtstack_refs(rq_rtstack_iter **out, rq_rtstack *st, const char *prefix, rq_error *err);
int rq_rtstack_refs_range(rq_rtstack_iter **out, rq_rtstack *st, size_t first, size_t n,
			  const char *prefix, int with_deletions, rq_error *err);
/* 0 (out valid until the next call), 1 at the end, -1 error. */
int rq_rtstack_next_ref(rq_rtstack_iter *it, const rq_rtable_ref **out, rq_error *err);

/*
 * The reflog records of refname (NULL: of every ref), newest first within
 * a ref; deletions skipped unless with_deletions.
 */
int rq_rtstack_logs(rq_rtstack_iter **out, rq_rtstack *st, const char *refname, rq_error *err);
int rq_rtstack_logs_range(rq_rtstack_iter **out, rq_rtstack *st, size_t first, size_t n,
			  const char *refname, int with_deletions, rq_error *err);
int rq_rtstack_next_log(rq_rtstack_iter *it, const rq_rtable_log **out, rq_error *err);

void rq_rtstack_iter_free(rq_rtstack_iter *it);

#endif
