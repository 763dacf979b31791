/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hash_libs: SHA-256's speed in each library replayq could hash SHA-256
 * repositories' objects with, for bench/hash-libs (docs/objects.md,
 * "Object formats").
 *
 *   hash_libs N
 *
 * Hashes 1 MiB, and N objects of 250 bytes (a commit's size) each with its
 * own context, with nettle (sha256_init/update/digest, what rq_sha256
 * uses) and with OpenSSL 3's low-level SHA256_Init/Update/Final (EVP
 * fetches a provider on its first call: milliseconds), and prints
 * "<library> <GB/s> <us>": 1 MiB's throughput and the microseconds per
 * small object, the best of 5 rounds. Both digests of each input are
 * checked equal.
 */
#define _POSIX_C_SOURCE	   200809L
#define OPENSSL_API_COMPAT 0x10100000L
#include <nettle/sha2.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG   (1u << 20)
#define SMALL 250

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void with_nettle(const unsigned char *p, size_t n, unsigned char out[32])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n, p);
	sha256_digest(&c, 32, out);
}

static void with_openssl(const unsigned char *p, size_t n, unsigned char out[32])
{
	SHA256_CTX c;

	SHA256_Init(&c);
	SHA256_Update(&c, p, n);
	SHA256_Final(out, &c);
}

typedef void (*hash_fn)(const unsigned char *, size_t, unsigned char *);

/* The best of 5 rounds: 1 MiB in GB/s into *gbs, microseconds per small
 * object returned. */
static double measure(hash_fn f, const unsigned char *buf, int n, double *gbs)
{
	unsigned char out[32];
	double best_big = 1e30, best_small = 1e30;

	for (int round = 0; round < 5; round++) {
		double t = now_us();
		f(buf, BIG, out);
		if (now_us() - t < best_big)
			best_big = now_us() - t;
		t = now_us();
		for (int i = 0; i < n; i++)
			f(buf + i % 64, SMALL, out);
		if ((now_us() - t) / n < best_small)
			best_small = (now_us() - t) / n;
	}
	*gbs = BIG / best_big / 1e3;
	return best_small;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	unsigned char *buf = malloc(BIG), a[32], b[32];
	double gbs, us;

	if (!buf || n <= 0)
		return 2;
	for (size_t i = 0; i < BIG; i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	with_nettle(buf, BIG, a);
	with_openssl(buf, BIG, b);
	if (memcmp(a, b, 32)) {
		fprintf(stderr, "hash_libs: the libraries disagree\n");
		return 1;
	}
	us = measure(with_nettle, buf, n, &gbs);
	printf("nettle  %.2f GB/s  %.3f us\n", gbs, us);
	us = measure(with_openssl, buf, n, &gbs);
	printf("openssl %.2f GB/s  %.3f us\n", gbs, us);
	free(buf);
	return 0;
}
