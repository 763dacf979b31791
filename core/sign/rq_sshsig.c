/* SPDX-License-Identifier: GPL-2.0-only */
/* follows OpenSSH's PROTOCOL.sshsig and the armour of its sshsig.c */
/*
 * rq_sshsig: the SSHSIG blobs and their armour (see rq_sshsig.h).
 */
#include "rq_sshsig.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_sshwire.h"

#define MAGIC	   "SSHSIG"
#define VERSION	   1
#define HASH	   "sha512"
#define ARMOR_BEG  "-----BEGIN SSH SIGNATURE-----"
#define ARMOR_END  "-----END SSH SIGNATURE-----"
#define ARMOR_COLS 70

void rq_sshsig_signed_data(const char *ns, const void *message, size_t len, rq_buf *out)
{
	unsigned char h[crypto_hash_sha512_BYTES];

	crypto_hash_sha512(h, message, len);
	rq_buf_add(out, MAGIC, strlen(MAGIC));
	rq_sshwire_put_cstring(out, ns);
	rq_sshwire_put_string(out, "", 0);
	rq_sshwire_put_cstring(out, HASH);
	rq_sshwire_put_string(out, h, sizeof(h));
}

/* Base64 (RFC 4648, padded) written as the bytes come, in pieces: up to
 * two bytes wait in carry for the next piece. A signature is public: a
 * table lookup will do (libsodium's encoder is made to leak no timing, at
 * thrice the cost). */
typedef struct b64_stream {
	char *o;
	unsigned char carry[3];
	int nc;
} b64_stream;

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_quad(char *o, const unsigned char *t)
{
	unsigned v = (unsigned)t[0] << 16 | (unsigned)t[1] << 8 | t[2];

	o[0] = b64_digits[v >> 18];
	o[1] = b64_digits[v >> 12 & 63];
	o[2] = b64_digits[v >> 6 & 63];
	o[3] = b64_digits[v & 63];
}

static void b64_feed(b64_stream *st, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (st->nc && n) {
		st->carry[st->nc++] = *p++;
		n--;
		if (st->nc == 3) {
			b64_quad(st->o, st->carry);
			st->o += 4;
			st->nc = 0;
		}
	}
	for (; n >= 3; p += 3, n -= 3, st->o += 4)
		b64_quad(st->o, p);
	memcpy(st->carry, p, n);
	st->nc = (int)n;
}

static void b64_end(b64_stream *st)
{
	if (!st->nc)
		return;
	memset(st->carry + st->nc, 0, (size_t)(3 - st->nc));
	b64_quad(st->o, st->carry);
	st->o[3] = '=';
	if (st->nc == 1)
		st->o[2] = '=';
	st->o += 4;
	st->nc = 0;
}

/* A string's length prefix, fed to st. */
static void feed_u32(b64_stream *st, size_t v)
{
	unsigned char be[4];

	rq_sshwire_be32(be, (uint32_t)v);
	b64_feed(st, be, sizeof(be));
}

/* The signature blob in base64 into o (4 * ceil(blob length / 3) chars). */
static void blob_base64(const char *ns, const void *pubkey, size_t pubkey_len, const void *sig,
			size_t sig_len, char *o)
{
	b64_stream st = {o, {0}, 0};

	b64_feed(&st, MAGIC, strlen(MAGIC));
	feed_u32(&st, VERSION);
	feed_u32(&st, pubkey_len);
	b64_feed(&st, pubkey, pubkey_len);
	feed_u32(&st, strlen(ns));
	b64_feed(&st, ns, strlen(ns));
	feed_u32(&st, 0); /* reserved */
	feed_u32(&st, strlen(HASH));
	b64_feed(&st, HASH, strlen(HASH));
	feed_u32(&st, sig_len);
	b64_feed(&st, sig, sig_len);
	b64_end(&st);
}

/* line (n bytes) after prefix and before a newline, at o; the end. */
static char *put_line(char *o, const char *prefix, size_t plen, const char *line, size_t n)
{
	memcpy(o, prefix, plen);
	memcpy(o + plen, line, n);
	o[plen + n] = '\n';
	return o + plen + n + 1;
}

/* The armour's lines, made in out's room at once. The base64 of an
 * Ed25519 signature's blob (228 chars) is made on the stack, an RSA
 * one's (792 chars at 2048 bits) in an allocation. */
void rq_sshsig_armor(const char *ns, const void *pubkey, size_t pubkey_len, const void *sig,
		     size_t sig_len, const char *prefix, rq_buf *out)
{
	size_t n = strlen(MAGIC) + 4 * 6 + pubkey_len + strlen(ns) + strlen(HASH) + sig_len;
	size_t chars = (n + 2) / 3 * 4, lines = (chars + ARMOR_COLS - 1) / ARMOR_COLS;
	size_t plen = strlen(prefix), need;
	char stack[512], *b64 = chars <= sizeof(stack) ? stack : malloc(chars), *o, *np;

	need = (lines + 2) * (plen + 1) + strlen(ARMOR_BEG) + strlen(ARMOR_END) + chars;
	if (out->oom || !b64 || need > SIZE_MAX / 2 - out->len ||
	    !(np = rq_mem_grow(out->p, &out->cap, out->len + need + 1, 1, 256))) {
		out->oom = 1;
		if (b64 != stack)
			free(b64);
		return;
	}
	out->p = np;
	blob_base64(ns, pubkey, pubkey_len, sig, sig_len, b64);
	o = put_line(out->p + out->len, prefix, plen, ARMOR_BEG, strlen(ARMOR_BEG));
	for (size_t at = 0; at < chars; at += ARMOR_COLS)
		o = put_line(o, prefix, plen, b64 + at,
			     chars - at < ARMOR_COLS ? chars - at : ARMOR_COLS);
	o = put_line(o, prefix, plen, ARMOR_END, strlen(ARMOR_END));
	*o = '\0';
	out->len = (size_t)(o - out->p);
	if (b64 != stack)
		free(b64);
}
