/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_buf: growable byte buffer.
 */
#include "rq_buf.h"

#include <stdlib.h>
#include <string.h>

void rq_buf_add(rq_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		char *np;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (!(np = realloc(b->p, ncap))) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void rq_buf_str(rq_buf *b, const char *s)
{
	rq_buf_add(b, s, strlen(s));
}
