/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_buf: growable byte buffer.
 */
#include "rq_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

void rq_buf_add(rq_buf *b, const char *s, size_t n)
{
	char *np;

	if (b->oom)
		return;
	if (n > SIZE_MAX - b->len - 1 ||
	    !(np = rq_mem_grow(b->p, &b->cap, b->len + n + 1, 1, 256))) {
		b->oom = 1;
		return;
	}
	b->p = np;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void rq_buf_str(rq_buf *b, const char *s)
{
	rq_buf_add(b, s, strlen(s));
}
