/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sign_libs: the CPU time of one Ed25519 signature with each library
 * replayq could use, for bench/sign-libs (docs/security.md, "Signing").
 *
 *   sign_libs N
 *
 * Signs N messages of 117 bytes (the size of the SSHSIG blob a commit's
 * signature covers) with one key, with libsodium's
 * crypto_sign_ed25519_detached and with OpenSSL's EVP_DigestSign (a
 * context made once, initialised for each message, as one-shot EdDSA
 * needs), and prints "libsodium <us>" and "openssl <us>": CPU
 * microseconds per signature (CLOCK_PROCESS_CPUTIME_ID), the best of 5
 * rounds. Both signatures of the same message are checked equal (RFC
 * 8032 makes them so).
 */
#define _POSIX_C_SOURCE 200809L
#include <openssl/evp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	unsigned char seed[32] = {42}, pk[32], sk[64], a[64], b[64], msg[117];
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	double best_s = 1e30, best_o = 1e30;
	EVP_PKEY *key;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len;

	if (sodium_init() < 0 || n < 1 || !ctx)
		return 1;
	crypto_sign_ed25519_seed_keypair(pk, sk, seed);
	key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof(seed));
	memset(msg, 'x', sizeof(msg));
	for (int round = 0; round < 5; round++) {
		double t0 = cpu_us(), t1, t2;
		for (int i = 0; i < n; i++) {
			msg[0] = (unsigned char)i;
			crypto_sign_ed25519_detached(a, NULL, msg, sizeof(msg), sk);
		}
		t1 = cpu_us();
		for (int i = 0; i < n; i++) {
			msg[0] = (unsigned char)i;
			len = sizeof(b);
			if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) <= 0 ||
			    EVP_DigestSign(ctx, b, &len, msg, sizeof(msg)) <= 0)
				return 1;
		}
		t2 = cpu_us();
		if (memcmp(a, b, sizeof(a)))
			return 2;
		best_s = (t1 - t0) / n < best_s ? (t1 - t0) / n : best_s;
		best_o = (t2 - t1) / n < best_o ? (t2 - t1) / n : best_o;
	}
	printf("libsodium %.1f\nopenssl %.1f\n", best_s, best_o);
	EVP_PKEY_free(key);
	EVP_MD_CTX_free(ctx);
	return 0;
}
