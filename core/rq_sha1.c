/*
 * rq_sha1: SHA-1 as specified in FIPS 180-4, section 6.1.
 */
#include "rq_sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void block(rq_sha1 *s, const unsigned char *p)
{
	uint32_t w[80], a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
	for (int t = 16; t < 80; t++)
		w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	for (int t = 0; t < 80; t++) {
		uint32_t f, k, tmp;
		if (t < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999u;
		} else if (t < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1u;
		} else if (t < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdcu;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6u;
		}
		tmp = rol(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = tmp;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
}

void rq_sha1_init(rq_sha1 *s)
{
	static const uint32_t iv[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u,
				       0xc3d2e1f0u};
	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->nbuf = 0;
}

void rq_sha1_update(rq_sha1 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->len += n;
	if (s->nbuf) {
		size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		n -= take;
		if (s->nbuf < 64)
			return;
		block(s, s->buf);
		s->nbuf = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		block(s, p);
	memcpy(s->buf, p, n);
	s->nbuf = n;
}

void rq_sha1_final(rq_sha1 *s, unsigned char out[20])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = {0x80};
	size_t npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;

	for (int i = 0; i < 8; i++)
		pad[npad + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	rq_sha1_update(s, pad, npad + 8);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}
