/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_strmap: string -> size_t, built on rq_hindex. Keys are not copied
 * (they must outlive the map). Entries stay in insertion order:
 * iterate `for (i = 0; i < m->len; i++) if (!m->dead[i]) ...`; a deleted
 * key keeps its place and comes back there when put again.
 */
#ifndef RQ_STRMAP_H
#define RQ_STRMAP_H

#include "rq_hindex.h"

#include <stddef.h>

typedef struct rq_strmap {
	const char **keys; /* len entries in insertion order, cap allocated */
	size_t *vals;
	unsigned char *dead; /* 1: deleted */
	size_t len, cap, live;
	rq_hindex index; /* over keys, deleted ones included */
} rq_strmap;

void rq_strmap_init(rq_strmap *m);
void rq_strmap_free(rq_strmap *m);
/* Insert or overwrite; 0 on success, -1 out of memory. */
int rq_strmap_put(rq_strmap *m, const char *key, size_t val);
/* 1 and *val set (val may be NULL) if present, else 0. */
int rq_strmap_get(const rq_strmap *m, const char *key, size_t *val);
/* Remove key if present. */
void rq_strmap_del(rq_strmap *m, const char *key);

#endif
