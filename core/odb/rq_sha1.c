/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sha1: SHA-1 as specified in FIPS 180-4, section 6.1.
 */
#include "rq_sha1.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define RQ_SHA1_X86 1
#endif

static uint32_t rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void compress_block(uint32_t *h, const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

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
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

static void blocks_portable(uint32_t *h, const unsigned char *p, size_t n)
{
	for (; n; n--, p += 64)
		compress_block(h, p);
}

#ifdef RQ_SHA1_X86
/*
 * The x86 SHA extensions: four rounds per sha1rnds4. The message schedule
 * is kept as four vectors of four words (W[4i..4i+3], first word in the
 * top lane); x[i % 4] turns from W-block i-4 into block i with
 * msg1/xor/msg2, and sha1nexte adds the rotated A of four rounds earlier
 * to the next block (E).
 */
#define RQ_SHA1_STEP(i)                                                                            \
	do {                                                                                       \
		if ((i) < 4)                                                                       \
			x[(i)&3] = _mm_shuffle_epi8(                                               \
			    _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * (i))), swap); \
		else                                                                               \
			x[(i)&3] = _mm_sha1msg2_epu32(                                             \
			    _mm_xor_si128(_mm_sha1msg1_epu32(x[(i)&3], x[((i) + 1) & 3]),          \
					  x[((i) + 2) & 3]),                                       \
			    x[((i) + 3) & 3]);                                                     \
		e = (i) == 0 ? _mm_add_epi32(e0, x[0]) : _mm_sha1nexte_epu32(prev, x[(i)&3]);      \
		prev = abcd;                                                                       \
		abcd = _mm_sha1rnds4_epu32(abcd, e, (i) / 5);                                      \
	} while (0)

__attribute__((target("sha,ssse3,sse4.1"))) static void
blocks_shani(uint32_t *h, const unsigned char *p, size_t n)
{
	const __m128i swap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
	__m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)h), 0x1b);
	__m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0);

	for (; n; n--, p += 64) {
		__m128i x[4], e, prev, abcd0 = abcd;
		RQ_SHA1_STEP(0);
		RQ_SHA1_STEP(1);
		RQ_SHA1_STEP(2);
		RQ_SHA1_STEP(3);
		RQ_SHA1_STEP(4);
		RQ_SHA1_STEP(5);
		RQ_SHA1_STEP(6);
		RQ_SHA1_STEP(7);
		RQ_SHA1_STEP(8);
		RQ_SHA1_STEP(9);
		RQ_SHA1_STEP(10);
		RQ_SHA1_STEP(11);
		RQ_SHA1_STEP(12);
		RQ_SHA1_STEP(13);
		RQ_SHA1_STEP(14);
		RQ_SHA1_STEP(15);
		RQ_SHA1_STEP(16);
		RQ_SHA1_STEP(17);
		RQ_SHA1_STEP(18);
		RQ_SHA1_STEP(19);
		e0 = _mm_sha1nexte_epu32(prev, e0);
		abcd = _mm_add_epi32(abcd, abcd0);
	}
	_mm_storeu_si128((__m128i *)(void *)h, _mm_shuffle_epi32(abcd, 0x1b));
	h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

static int cpu_has_sha(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
		return 0; /* SSSE3, SSE4.1 */
	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	return (b >> 29) & 1;
}
#endif

static int force_portable;

#ifdef RQ_SHA1_X86
/* The CPU's answer, asked once: the replay's threads (the compressor, the
 * parallel helpers) may hash at the same moment. */
static pthread_once_t has_sha_once = PTHREAD_ONCE_INIT;
static int has_sha;

static void probe_sha(void)
{
	has_sha = cpu_has_sha();
}
#endif

void rq_sha1_use_portable(int on)
{
	force_portable = on;
}

static void blocks(uint32_t *h, const unsigned char *p, size_t n)
{
#ifdef RQ_SHA1_X86
	pthread_once(&has_sha_once, probe_sha);
	if (has_sha && !force_portable) {
		blocks_shani(h, p, n);
		return;
	}
#endif
	blocks_portable(h, p, n);
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
		blocks(s->h, s->buf, 1);
		s->nbuf = 0;
	}
	if (n >= 64) {
		blocks(s->h, p, n / 64);
		p += n / 64 * 64;
		n %= 64;
	}
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

void rq_sha1_object_init(rq_sha1 *s, const char *type, size_t size)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %zu", type, size);

	rq_sha1_init(s);
	rq_sha1_update(s, head, (size_t)n + 1); /* the NUL too */
}

void rq_sha1_object(const char *type, const void *data, size_t len, unsigned char out[20])
{
	rq_sha1 s;

	rq_sha1_object_init(&s, type, len);
	rq_sha1_update(&s, data, len);
	rq_sha1_final(&s, out);
}
