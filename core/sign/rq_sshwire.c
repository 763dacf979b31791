/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sshwire: reading and writing SSH's wire encoding (see rq_sshwire.h).
 */
#include "rq_sshwire.h"

#include <string.h>

void rq_sshwire_init(rq_sshwire *r, const void *data, size_t len)
{
	r->p = data;
	r->end = r->p + len;
	r->bad = 0;
}

uint32_t rq_sshwire_u32(rq_sshwire *r)
{
	uint32_t v;

	if (r->bad || r->end - r->p < 4) {
		r->bad = 1;
		return 0;
	}
	v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return v;
}

const unsigned char *rq_sshwire_string(rq_sshwire *r, size_t *len)
{
	uint32_t n = rq_sshwire_u32(r);
	const unsigned char *s = r->p;

	*len = 0;
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	r->p += n;
	*len = n;
	return s;
}

int rq_sshwire_string_is(rq_sshwire *r, const char *s)
{
	size_t n, want = strlen(s);
	const unsigned char *v = rq_sshwire_string(r, &n);

	return v && n == want && !memcmp(v, s, n);
}

size_t rq_sshwire_left(const rq_sshwire *r)
{
	return r->bad ? 0 : (size_t)(r->end - r->p);
}

void rq_sshwire_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

void rq_sshwire_put_u32(rq_buf *b, uint32_t v)
{
	unsigned char be[4];

	rq_sshwire_be32(be, v);
	rq_buf_add(b, (const char *)be, 4);
}

void rq_sshwire_put_string(rq_buf *b, const void *s, size_t n)
{
	if (n > UINT32_MAX) {
		b->oom = 1;
		return;
	}
	rq_sshwire_put_u32(b, (uint32_t)n);
	rq_buf_add(b, s, n);
}

void rq_sshwire_put_cstring(rq_buf *b, const char *s)
{
	rq_sshwire_put_string(b, s, strlen(s));
}
