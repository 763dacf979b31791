/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_store: the objects of a replay's memory store, as its three
 * modules share them (core/odb, see rq_odb.h for the family), and nothing
 * else uses them:
 *   rq_odb_mem       the libgit2 backend over the store, the replay's
 *                    writes, the encoding at the end (rq_odb_mem.h is the
 *                    store's public header);
 *   rq_odb_compress  the thread that encodes the objects as they come;
 *   rq_odb_part      the part files a forked child hands its objects over
 *                    in.
 * The store is an array of objects in write order with an index by id,
 * the part files mapped that loaded objects point into, and the lock the
 * compressor thread shares. Who may touch what while the thread runs is
 * rq_odb_compress.h's rule.
 */
#ifndef RQ_ODB_STORE_H
#define RQ_ODB_STORE_H

#include <git2.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_hindex.h"
#include "rq_odb_pack.h"
#include "rq_oid.h"

#define RQ_ODB_STORE_DELTA_WINDOW 16 /* earlier trees tried as a delta base */
#define RQ_ODB_STORE_DELTA_DEPTH  50 /* longest delta chain (git's default) */
/* deepest chain rq_odb_store_materialize follows: part files chain
 * across processes */
#define RQ_ODB_STORE_MATERIALIZE_DEPTH (RQ_ODB_STORE_DELTA_DEPTH * 64 + 64)

typedef struct rq_odb_store_obj {
	rq_oid id; /* of the store's object format */
	git_object_t type;
	size_t len;
	unsigned char *data;
	unsigned char *entry; /* the object as a pack entry, once encoded */
	size_t entry_len;
	uint32_t crc;	/* of the entry */
	uint32_t depth; /* 0: whole; else a delta against base */
	rq_oid base;
	/* data and entry are ours to free (else they point into a part file) */
	unsigned char own_data, own_entry;
	/* the id came from the plain SHA-1: collision detection still to do
	 * (1), being done by the replay's thread while the compressor runs (2) */
	unsigned char unchecked;
	/* encoded (whole) by the replay's thread while the compressor runs */
	unsigned char claimed;
	/* the content was given up once encoded (read back from the entry) */
	unsigned char dropped;
	/* a blob of the repository's packs, its entry copied as a delta base
	 * (borrowed); used: some delta of the pack is against it (set by
	 * rq_odb_mem_check_deltas: a borrowed blob nothing uses stays out) */
	unsigned char borrowed, used;
	/* a blob: 1 + the index of the earlier version of its file (a delta
	 * base), 0 when there is none in the store */
	size_t like;
} rq_odb_store_obj;

typedef struct rq_odb_store {
	const rq_oid_algo *algo; /* its object format (NULL: SHA-1) */
	rq_odb_store_obj *objs;	 /* in write order */
	size_t n, cap;
	rq_hindex index; /* over objs[0..n) by id */
	struct rq_odb_store_map {
		void *p;
		size_t len;
	} * maps; /* the part files loaded, which their objects point into */
	size_t nmaps;
	/* while a compressor thread runs (shared), mu guards the array (it
	 * moves when it grows) and the objects' data and entry fields */
	pthread_mutex_t mu;
	int shared;
} rq_odb_store;

/* Everything the store holds, freed (the compressor joined before). */
void rq_odb_store_free(rq_odb_store *s);
/* Its object format. */
const rq_oid_algo *rq_odb_store_algo(const rq_odb_store *s);
/* The lock, taken only while the compressor runs. */
void rq_odb_store_lock(rq_odb_store *s);
void rq_odb_store_unlock(rq_odb_store *s);

rq_odb_store_obj *rq_odb_store_find(rq_odb_store *s, const rq_oid *id);
/* A new object at the end (the caller checked it is not held): zeroed but
 * for its id, and indexed. NULL: out of memory (or the count's limit). */
rq_odb_store_obj *rq_odb_store_append(rq_odb_store *s, const rq_oid *id);
/*
 * Add the object: a copy of data, or data itself when borrowed (a loaded
 * object's, NULL until materialized). unchecked: its id is the plain
 * SHA-1 (collision detection to come); like: 1 + its delta base's index,
 * or 0. 0, or -1 out of memory (nothing added).
 */
int rq_odb_store_add(rq_odb_store *s, const rq_oid *id, const void *data, size_t len,
		     git_object_t type, int borrowed, int unchecked, size_t like);
/* Keep the mapping of a part file (unmapped with the store). 0, or -1. */
int rq_odb_store_keep_map(rq_odb_store *s, void *p, size_t len);

/*
 * Give an object handed over without its content (data NULL) its content
 * back: inflate its encoded form and, for a delta, apply it to its base's
 * content, guard levels deep at most. 0, or -1 (damaged, out of memory).
 */
int rq_odb_store_materialize(rq_odb_store *s, rq_odb_store_obj *o, unsigned guard);

/* libgit2's collision-detecting SHA-1 of the object must be id: 0, or -1
 * with libgit2's error ("SHA1 collision attack detected"). */
int rq_odb_store_check_id(const rq_oid *id, const void *data, size_t len, git_object_t type);

/* A candidate delta base: an object's id, content and depth (idx: its
 * index, for the compressor's window). */
typedef struct rq_odb_store_base {
	rq_oid id;
	const unsigned char *data;
	size_t len;
	uint32_t depth;
	size_t idx;
} rq_odb_store_base;

/* An object's encoded form, before it is stored in the object. */
typedef struct rq_odb_store_encoded {
	unsigned char *entry;
	size_t entry_len;
	uint32_t crc, depth;
	rq_oid base;
} rq_odb_store_encoded;

/*
 * Encode content: a tree as a delta against the best of the candidate
 * trees (a replay writes each changed directory once per pick, mostly next
 * to its previous version: the smallest delta wins), a blob against its
 * one candidate (the earlier version of its file), anything else, or what
 * no candidate suits, whole. 0, or -1 (out of memory).
 */
int rq_odb_store_encode(rq_odb_pack_encoder *enc, git_object_t type, const unsigned char *data,
			size_t len, const rq_odb_store_base *cand, size_t ncand,
			rq_odb_store_encoded *out);
/* The encoded form into o (its entry ours; an older one freed). */
void rq_odb_store_set_entry(rq_odb_store_obj *o, const rq_odb_store_encoded *e);

/* Can b be a delta base now (encoded, its content at hand, not at the
 * deepest chain)? */
int rq_odb_store_usable_base(const rq_odb_store_obj *b);
rq_odb_store_base rq_odb_store_as_base(const rq_odb_store_obj *b);

#endif
