/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_owner: a marker file whose owner holds an flock on it for as long as
 * it lives, so that another process knows the owner is gone exactly when
 * it can take the lock.
 *
 * What a replayq process leaves in a repository while it works (its ref
 * locks, a temporary object directory, temporary pack files) must be
 * removed when the process is killed, and must never be removed while it
 * lives. A process ID and a host name cannot tell that: two containers of
 * one pod share a host name and not a PID namespace, and a PID is used
 * again. An flock can: the kernel releases it when the last descriptor of
 * the marker closes, that is when the owner (and every child it forked
 * with the descriptor) is gone, on this machine or, on a file system that
 * carries flocks (NFSv4), on another one. So each owner makes a marker,
 * <prefix><pid>@<host>.<token>.owner, holds an flock on it while it works,
 * and a cleaner judges a marker by trying that flock without waiting:
 * taken, the owner is gone, and the cleaner holds the marker (nobody can
 * take it meanwhile) while it removes what the marker stands for. The
 * pid@host in the name is information for people only (rq_owner_id, the
 * one format); the token (8 hex digits) makes the name unique.
 *
 * A cleaner may take a marker in the moment between its creation and its
 * owner's flock: it then finds it empty, removes it, and the owner, which
 * checks that its name still leads to its file once it holds the flock,
 * makes another.
 */
#ifndef RQ_OWNER_H
#define RQ_OWNER_H

#include <limits.h>
#include <stddef.h>

#include "rq_error.h"

#define RQ_OWNER_SUFFIX ".owner"

/* A marker this process holds. */
typedef struct rq_owner {
	int dir; /* the directory it is in (borrowed) */
	int fd;	 /* the marker, flocked; -1: none */
	char name[NAME_MAX + 1];
	char token[9];
} rq_owner;

/* "<pid>@<host>" of this process: its host name with every byte outside
 * [A-Za-z0-9._-] as '_', at most 64 of them. */
void rq_owner_id(char *out, size_t size);

/*
 * Make the marker <prefix><pid>@<host>.<token>.owner in dir (no link
 * followed) and hold its flock until rq_owner_release. 0, or -1 with err
 * set (RQ_E_IO).
 */
int rq_owner_make(rq_owner *o, int dir, const char *prefix, rq_error *err);

/* The marker's name without RQ_OWNER_SUFFIX, into out: the name of what
 * it stands for. */
void rq_owner_base(const rq_owner *o, char *out, size_t size);

/* Write the marker's content (at its end), fsynced when sync is set. 0,
 * or -1 with err set. */
int rq_owner_write(rq_owner *o, const char *data, size_t n, int sync, rq_error *err);

/* Remove the marker, then let its lock go. Nothing when there is none. */
void rq_owner_release(rq_owner *o);

/* 1 when name is a marker's (ends with RQ_OWNER_SUFFIX). */
int rq_owner_is_marker(const char *name);

/*
 * Is the owner of the marker name (in dir) gone? 1 gone: *fd is the
 * marker, open for reading and locked: the caller removes what it stands
 * for, then the marker (unlinkat), then closes fd. 0 its owner lives. -1
 * it is not a marker (missing, a link, not a regular file).
 */
int rq_owner_gone(int dir, const char *name, int *fd);

#endif
