/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_buf: a growable byte buffer, always NUL-terminated. Appends after an
 * allocation failure are dropped and set oom; the owner checks oom once at
 * the end and frees p.
 */
#ifndef RQ_BUF_H
#define RQ_BUF_H

#include <stddef.h>

typedef struct rq_buf {
	char *p;
	size_t len, cap;
	int oom;
} rq_buf;

void rq_buf_add(rq_buf *b, const char *s, size_t n);
void rq_buf_str(rq_buf *b, const char *s);

#endif
