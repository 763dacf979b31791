/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_compress: the thread that encodes a replay's new objects as they
 * are written, on the second core while the picks go on (core/odb, see
 * rq_odb.h for the family; the objects are rq_odb_store's, the backend
 * that starts it rq_odb_mem's).
 *
 * Objects [0, handed) of the store are the thread's to encode, and it has
 * done [0, done), in write order, with its own window of the latest trees
 * as delta bases. When the picks end, the replay's thread helps
 * (rq_odb_compress_finish): the blobs that have no earlier version, the
 * largest first, and the collision checks, from the last object down; the
 * thread skips what is claimed. Then it is joined.
 *
 * The rule of the shared objects, while the thread runs (the store's
 * `shared`; the use-after-free of an earlier round lived where it was not
 * written down):
 * - The store's lock guards the array (it moves when it grows: only under
 *   the lock) and every object's data, entry, unchecked, claimed and
 *   dropped fields. The thread reads content outside the lock only
 *   through a copy of the object it took under the lock (the object it
 *   encodes and its blob base), and the replay's thread only through a
 *   copy of an object it claimed.
 * - An object's content is freed only under the lock, and only once the
 *   object is encoded: by the thread, for an object it encoded itself (a
 *   large blob or a commit at once, a tree when it leaves the window, a
 *   borrowed base once a delta against it is made), never for an object
 *   whose collision check the replay's thread is running (unchecked 2);
 *   and by a read of a dropped object, which inflates a copy of its own
 *   under the lock and frees it again before it lets go. The replay's
 *   thread frees no content while the thread runs: what it encoded gives
 *   its content up after the join.
 * - So the content the thread is reading (the object `done` it took, not
 *   encoded yet, and that object's base, which it inflated for itself if
 *   the base was dropped) is never freed under it.
 * The thread never runs across a fork: the replay's workers fork before
 * any object is written, and a process forked while it ran leaves its
 * state alone and encodes everything itself.
 */
#ifndef RQ_ODB_COMPRESS_H
#define RQ_ODB_COMPRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "rq_odb_pack.h"
#include "rq_odb_store.h"

typedef struct rq_odb_compress {
	rq_odb_pack_encoder *enc; /* NULL: no compressing ahead */
	pthread_t thread;
	pthread_cond_t wake; /* on the store's lock */
	int running;	     /* the thread runs (joined by rq_odb_compress_finish) */
	int closed;	     /* finished: no thread again */
	pid_t owner;	     /* the process that started it */
	int stop, failed;
	int sleeping; /* the thread waits on wake */
	int no_poll;  /* it sleeps at once when idle */
	size_t handed, done, pending_bytes;
	/* handed, for the thread to poll without the lock (SIZE_MAX: stop) */
	_Atomic size_t posted;
	rq_odb_store_base win[RQ_ODB_STORE_DELTA_WINDOW];
	size_t nwin;
	rq_odb_store *store;
} rq_odb_compress;

/* Compress the objects of store with enc from now on (the thread starts
 * once enough new content waits): before the thread ever ran. */
void rq_odb_compress_ahead(rq_odb_compress *c, rq_odb_store *store, rq_odb_pack_encoder *enc);
/* 1 while objects are compressed ahead (new ids are then plain SHA-1s). */
int rq_odb_compress_on(const rq_odb_compress *c);
/* The thread sleeps as soon as it has nothing to do instead of polling
 * (a parallel replay: its processes share the CPUs). Before it starts. */
void rq_odb_compress_no_poll(rq_odb_compress *c);
/* The store's last object (len bytes of content) is new: the thread's to
 * encode (it is started when enough waits, woken if it sleeps). */
void rq_odb_compress_hand(rq_odb_compress *c, size_t len);
/* Stop compressing ahead: help, then join the thread (objects it did not
 * encode are the caller's to encode). 0, or what the thread failed with:
 * -1 out of memory, -2 a collision ("SHA1 collision attack detected"). */
int rq_odb_compress_finish(rq_odb_compress *c);

#endif
