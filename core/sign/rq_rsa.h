/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rsa: RSA signatures for SSH's "rsa-sha2-512": PKCS#1 v1.5 over
 * SHA-512 (RFC 8332), by OpenSSL 3's libcrypto.
 *
 * libcrypto is loaded (dlopen) when the first RSA key is made, not linked:
 * linking it costs every replayq command about a millisecond at start
 * (its relocations), signing or not, and an RSA signature costs that much
 * by itself anyway (docs/security.md, "Signing"). The library is never
 * unloaded (Debian builds OpenSSL so that it cannot be). PKCS#1 v1.5 is
 * deterministic: the same key and data give the same signature.
 */
#ifndef RQ_RSA_H
#define RQ_RSA_H

#include <stddef.h>

#include "rq_error.h"

typedef struct rq_rsa rq_rsa;

/* A private key's parts as OpenSSH stores them: big-endian magnitudes (a
 * leading zero byte allowed). */
typedef struct rq_rsa_parts {
	const unsigned char *n, *e, *d, *iqmp, *p, *q;
	size_t n_len, e_len, d_len, iqmp_len, p_len, q_len;
} rq_rsa_parts;

/* 0, or -1 with RQ_E_SIGN_KEY (libcrypto missing, a part it refuses). */
int rq_rsa_new(rq_rsa **out, const rq_rsa_parts *parts, rq_error *err);
/* The signature of data (the modulus's size in bytes) into sig, which
 * holds at least rq_rsa_size(k) bytes: 0, or -1 with RQ_E_SIGN_FAILED. */
int rq_rsa_sign(rq_rsa *k, const void *data, size_t len, unsigned char *sig, size_t *sig_len,
		rq_error *err);
size_t rq_rsa_size(const rq_rsa *k);
/* NULL: nothing. The key is cleared as libcrypto frees it. */
void rq_rsa_free(rq_rsa *k);

#endif
