/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pathmap: the string-keyed maps of one tree merge (paths, directory
 * names, basenames), in the merge's arena.
 *
 * The merge-ort counterparts are git's strmap and strintmap. This is the
 * arena front end of core/base/rq_hindex (rq_oidmap is a malloc one):
 * keys and values in dense arrays in insertion order, an rq_hindex over
 * them, all memory from the arena, so a merge never frees a map.
 *
 * Keys are not copied: they must live as long as the map (arena strings).
 * Values are intptr_t: a number, or a pointer to arena memory. Iterate in
 * insertion order with
 *	for (i = 0; i < m->len; i++) if (!m->dead[i]) ... m->keys[i], m->vals[i]
 * A deleted key keeps its place and comes back there when put again.
 *
 * Where a merge-ort result depends on the order in which git's hashmap
 * iterates a map (ties broken by the first entry met), rq_pathmap_git_order
 * gives that order.
 */
#ifndef RQ_PATHMAP_H
#define RQ_PATHMAP_H

#include "rq_arena.h"
#include "rq_hindex.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rq_pathmap {
	rq_arena *arena;
	const char **keys; /* len entries in insertion order, cap allocated */
	intptr_t *vals;
	unsigned char *dead; /* 1: deleted */
	size_t len, cap;
	size_t live;	 /* entries not deleted */
	rq_hindex index; /* over keys, deleted ones included */
} rq_pathmap;

/* An empty map whose memory comes from a. */
void rq_pathmap_init(rq_pathmap *m, rq_arena *a);
/* Insert or overwrite. 0, or -1 out of memory (the map unchanged). */
int rq_pathmap_put(rq_pathmap *m, const char *key, intptr_t val);
/* 1 and *val set (val may be NULL) when key is there, else 0. */
int rq_pathmap_get(const rq_pathmap *m, const char *key, intptr_t *val);
/* The value of key, or 0 when it is not there (git's strintmap_get with a
 * default of 0). */
intptr_t rq_pathmap_get0(const rq_pathmap *m, const char *key);
int rq_pathmap_has(const rq_pathmap *m, const char *key);
/* Delete key if present; delete the entry at index i (not deleted). */
void rq_pathmap_del(rq_pathmap *m, const char *key);
void rq_pathmap_del_at(rq_pathmap *m, size_t i);

/*
 * The order in which git's hashmap (hashmap.c, under strmap/strintmap)
 * iterates m's keys when they were inserted in m's order: an array of
 * m->len entry indices from the arena (deleted entries included: skip
 * them), or NULL when out of memory.
 */
size_t *rq_pathmap_git_order(const rq_pathmap *m);

#endif
