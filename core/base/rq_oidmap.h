/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oidmap: an open-addressing hash map from object id to a size_t value
 * (an index into a caller's array), built on rq_hindex. Used by the walk
 * and the replay loop. Iterating keys[0..len) gives insertion order.
 */
#ifndef RQ_OIDMAP_H
#define RQ_OIDMAP_H

#include "rq_hindex.h"
#include "rq_oid.h"

#include <stddef.h>

typedef struct rq_oidmap {
	rq_oid *keys; /* len entries in insertion order, cap allocated */
	size_t *vals;
	size_t len, cap;
	rq_hindex index; /* over keys */
} rq_oidmap;

void rq_oidmap_init(rq_oidmap *m);
void rq_oidmap_free(rq_oidmap *m);
/* Insert or overwrite; 0 on success, -1 out of memory. */
int rq_oidmap_put(rq_oidmap *m, const rq_oid *key, size_t val);
/* 1 and *val set if present, else 0. */
int rq_oidmap_get(const rq_oidmap *m, const rq_oid *key, size_t *val);

#endif
