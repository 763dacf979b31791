/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb: a repository's refs and reflogs read by replayq itself, one
 * interface over both ref backends, at the width of the repository's object
 * format (issue 42: libgit2 1.5 misreads the refs of a SHA-256 repository).
 *
 * Files (rq_repofmt_reftable false): one ref through rq_refread (loose
 * file, symbolic chain, packed-refs, the worktree split); an iteration
 * lists the loose refs under refs/ and packed-refs' lines, a loose ref
 * shadowing its packed line; a reflog is logs/<ref> (HEAD's and a
 * worktree's own refs' under the repository's own git directory).
 *
 * Reftable: the repository's stacks (rq_rtstack; a linked worktree's own
 * refs in its own stack), opened at the first read, reloaded when
 * tables.list changed. FETCH_HEAD and MERGE_HEAD stay files (git writes
 * them so) and are read as loose refs.
 *
 * Iterations are sorted by name (git's order) and list the refs under
 * refs/, as libgit2's iterators did.
 */
#ifndef RQ_REFDB_H
#define RQ_REFDB_H

#include <stdint.h>

#include <git2.h>

#include "rq_error.h"
#include "rq_oid.h"

typedef struct rq_refdb rq_refdb;

/* The ref database of repo (opened by rq_repofmt_open): 0, or -1 with err
 * set. Nothing is read yet. */
int rq_refdb_open(rq_refdb **out, git_repository *repo, rq_error *err);
/* The same from its git directories (own: NULL, or common's in a main
 * worktree) and format (algo NULL: SHA-1; reftable: the backend). */
int rq_refdb_open_dirs(rq_refdb **out, const char *common, const char *own, const rq_oid_algo *algo,
		       int reftable, rq_error *err);
void rq_refdb_free(rq_refdb *db);
const rq_oid_algo *rq_refdb_algo(const rq_refdb *db);

/* The answers of the reads besides -1 (err set). */
#define RQ_REFDB_FOUND	 0
#define RQ_REFDB_MISSING 1

/* The ref itself, not followed: its id (*target NULL), or a symbolic
 * ref's target (*target malloc'ed). */
int rq_refdb_read(rq_refdb *db, const char *name, rq_oid *id, char **target, rq_error *err);

/* The id name resolves to, symbolic refs followed (git's depth limit);
 * the last name of the chain into *full when full is not NULL
 * (malloc'ed). A symbolic ref to nothing is RQ_REFDB_MISSING. */
int rq_refdb_resolve(rq_refdb *db, const char *name, rq_oid *id, char **full, rq_error *err);

/* rq_refdb_resolve of name in repo, for one read (opens and frees a
 * database). */
int rq_refdb_lookup(git_repository *repo, const char *name, rq_oid *id, rq_error *err);

/* 1 when err (set by a read) says the ref is broken: a loose file that
 * holds neither a symbolic ref nor an id of the repository's width (git's
 * REF_ISBROKEN; rq_refread_is_broken). */
int rq_refdb_broken(const rq_error *err);

/*
 * git's warnings about refs met while resolving a name ("ignoring broken
 * ref <ref>", "ignoring dangling symref <ref>"): the library prints
 * nothing, a program that prints git's warnings sets where they go (the
 * `replay` command: standard error). fn NULL (the default): none. Set once
 * before any read; forked children keep it.
 */
typedef void (*rq_refdb_warn_fn)(const char *msg);
void rq_refdb_set_warn(rq_refdb_warn_fn fn);
/* A warning to the sink set, if any (printf-style). */
void rq_refdb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* err (set by a read) as "<what>: <its message>" with RQ_E_GIT, the code
 * libgit2's ref errors had (out of memory and a damaged repository,
 * RQ_E_BAD_REPO, stay themselves). Returns -1. */
int rq_refdb_fail(rq_error *err, const char *what);

/* One ref of an iteration; valid during the callback. */
typedef struct rq_refdb_ref {
	const char *name;
	const char *target; /* a symbolic ref's target, else NULL */
	rq_oid id;	    /* a direct ref's id */
	int peeled_known;   /* peeled holds what a tag peels to (packed "^" lines, reftable) */
	rq_oid peeled;
	int broken; /* a loose file that is no ref: name only */
} rq_refdb_ref;

/* Each ref whose name starts with prefix (NULL or "": all under refs/)
 * and, when glob is not NULL, matches it (fnmatch, no flags), in name
 * order. fn's non-zero answer stops the iteration and is returned. 0, or
 * -1 with err set. */
typedef int (*rq_refdb_each_fn)(const rq_refdb_ref *ref, void *arg);
int rq_refdb_each(rq_refdb *db, const char *prefix, const char *glob, rq_refdb_each_fn fn,
		  void *arg, rq_error *err);

/* rq_odb_opts.refs for the object database's view (core/odb reads no
 * refs): each ref of repo (the git_repository, as arg) under prefix with
 * the id it resolves to, broken and dangling ones left out. */
int rq_refdb_odb_refs(void *repo, const char *prefix,
		      int (*fn)(const char *name, const rq_oid *id, void *fn_arg), void *fn_arg,
		      rq_error *err);

/* One reflog entry; valid during the callback. */
typedef struct rq_refdb_log {
	rq_oid old_id, new_id;
	const char *name, *email;
	int64_t time;
	int tz;		     /* as written: -0800 is -800 */
	const char *message; /* without its newline; NULL when there is none */
} rq_refdb_log;

/* ref's reflog entries, newest first (the order of git's @{N}). A ref
 * without a reflog has none. fn as for rq_refdb_each. 0, or -1. */
typedef int (*rq_refdb_log_fn)(const rq_refdb_log *e, void *arg);
int rq_refdb_reflog(rq_refdb *db, const char *ref, rq_refdb_log_fn fn, void *arg, rq_error *err);

/* A SHA-256 files repository: every call of libgit2's ref database fails
 * with "libgit2 has no SHA-256", so that a ref path still through libgit2
 * errors instead of finding nothing. 0, or -1 with err set. */
int rq_refdb_tripwire_install(git_repository *repo, rq_error *err);

#endif
