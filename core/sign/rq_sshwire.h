/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sshwire: the SSH wire encoding (RFC 4251, section 5) that OpenSSH's
 * keys, its agent protocol and SSHSIG signatures are written in: uint32
 * big-endian, "string" (a uint32 length and that many bytes) and "mpint"
 * (a string holding a two's-complement big-endian integer).
 *
 * A reader never reads past its end: a field that does not fit sets bad
 * and reads as empty, so that a parser checks bad once after its reads.
 * Writers append to an rq_buf (its oom says whether they all went in).
 */
#ifndef RQ_SSHWIRE_H
#define RQ_SSHWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"

typedef struct rq_sshwire {
	const unsigned char *p, *end;
	int bad; /* a read went past the end */
} rq_sshwire;

void rq_sshwire_init(rq_sshwire *r, const void *data, size_t len);
/* The next uint32 (0 and bad when it does not fit). */
uint32_t rq_sshwire_u32(rq_sshwire *r);
/* The next string: a pointer into the data and its length in *len (NULL
 * with *len 0 and bad when it does not fit). */
const unsigned char *rq_sshwire_string(rq_sshwire *r, size_t *len);
/* 1 when the next string equals s (it is read either way). */
int rq_sshwire_string_is(rq_sshwire *r, const char *s);
/* The bytes left unread. */
size_t rq_sshwire_left(const rq_sshwire *r);

void rq_sshwire_put_u32(rq_buf *b, uint32_t v);
void rq_sshwire_put_string(rq_buf *b, const void *s, size_t n);
void rq_sshwire_put_cstring(rq_buf *b, const char *s);
/* 4 bytes of v, big-endian, at p. */
void rq_sshwire_be32(unsigned char *p, uint32_t v);

#endif
