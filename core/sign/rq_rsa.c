/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rsa: RSA SHA-512 signatures through libcrypto, loaded on demand (see
 * rq_rsa.h). The key is built from OpenSSH's parts with the CRT exponents
 * computed (d mod p-1, d mod q-1), as OpenSSH does when it loads a key.
 */
#include "rq_rsa.h"

#include <dlfcn.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/param_build.h>
#include <stdlib.h>
#include <string.h>

#define RQ_RSA_STR2(x)	 #x
#define RQ_RSA_STR(x)	 RQ_RSA_STR2(x)
#define RQ_RSA_LIBCRYPTO "libcrypto.so." RQ_RSA_STR(OPENSSL_VERSION_MAJOR)

/* The libcrypto functions used, looked up by name. */
#define RQ_RSA_FUNCS(X)                                                                            \
	X(BN_bin2bn)                                                                               \
	X(BN_new)                                                                                  \
	X(BN_secure_new)                                                                           \
	X(BN_clear_free)                                                                           \
	X(BN_sub)                                                                                  \
	X(BN_value_one)                                                                            \
	X(BN_div)                                                                                  \
	X(BN_CTX_new)                                                                              \
	X(BN_CTX_free)                                                                             \
	X(OSSL_PARAM_BLD_new)                                                                      \
	X(OSSL_PARAM_BLD_push_BN)                                                                  \
	X(OSSL_PARAM_BLD_to_param)                                                                 \
	X(OSSL_PARAM_BLD_free)                                                                     \
	X(OSSL_PARAM_free)                                                                         \
	X(EVP_PKEY_CTX_new_from_name)                                                              \
	X(EVP_PKEY_fromdata_init)                                                                  \
	X(EVP_PKEY_fromdata)                                                                       \
	X(EVP_PKEY_CTX_free)                                                                       \
	X(EVP_PKEY_free)                                                                           \
	X(EVP_PKEY_get_size)                                                                       \
	X(EVP_MD_CTX_new)                                                                          \
	X(EVP_MD_CTX_free)                                                                         \
	X(EVP_DigestSignInit_ex)                                                                   \
	X(EVP_DigestSign)

#define RQ_RSA_FIELD(name) __typeof__(name) *name;

typedef struct rsa_funcs {
	RQ_RSA_FUNCS(RQ_RSA_FIELD)
} rsa_funcs;

struct rq_rsa {
	rsa_funcs f;
	EVP_PKEY *pkey;
	size_t size;
};

/* Every function of libcrypto: 0, or -1 with err set. */
static int load_funcs(rsa_funcs *f, rq_error *err)
{
	void *h = dlopen(RQ_RSA_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL), *sym;
	const char *missing = NULL;

	if (!h)
		return rq_error_set(err, RQ_E_SIGN_KEY,
				    "an RSA key signs through OpenSSL's " RQ_RSA_LIBCRYPTO ": %s",
				    dlerror());
#define RQ_RSA_LOAD(name)                                                                          \
	if (!missing && !(sym = dlsym(h, #name)))                                                  \
		missing = #name;                                                                   \
	else if (!missing)                                                                         \
		memcpy(&f->name, &sym, sizeof(sym));
	RQ_RSA_FUNCS(RQ_RSA_LOAD)
#undef RQ_RSA_LOAD
	if (missing)
		return rq_error_set(err, RQ_E_SIGN_KEY, RQ_RSA_LIBCRYPTO " has no %s", missing);
	return 0; /* the handle stays: libcrypto is never unloaded */
}

enum { P_N, P_E, P_D, P_P, P_Q, P_DMP1, P_DMQ1, P_IQMP, P_COUNT };

static void free_bns(const rsa_funcs *f, BIGNUM **bn)
{
	for (int i = 0; i < P_COUNT; i++)
		f->BN_clear_free(bn[i]);
}

/* A number from big-endian bytes, private ones marked secure (libcrypto
 * then clears every copy it frees): NULL out of memory. */
static BIGNUM *make_bn(const rsa_funcs *f, const unsigned char *v, size_t len, int secret)
{
	BIGNUM *bn = secret ? f->BN_secure_new() : f->BN_new();

	if (bn && v && !f->BN_bin2bn(v, (int)len, bn)) {
		f->BN_clear_free(bn);
		return NULL;
	}
	return bn;
}

/* The parts as numbers, the CRT exponents computed: 0 or -1. */
static int make_bns(const rsa_funcs *f, const rq_rsa_parts *in, BIGNUM **bn)
{
	BN_CTX *ctx = f->BN_CTX_new();
	BIGNUM *t = f->BN_secure_new();
	int ok = ctx && t;

	bn[P_N] = make_bn(f, in->n, in->n_len, 0);
	bn[P_E] = make_bn(f, in->e, in->e_len, 0);
	bn[P_D] = make_bn(f, in->d, in->d_len, 1);
	bn[P_P] = make_bn(f, in->p, in->p_len, 1);
	bn[P_Q] = make_bn(f, in->q, in->q_len, 1);
	bn[P_IQMP] = make_bn(f, in->iqmp, in->iqmp_len, 1);
	bn[P_DMP1] = make_bn(f, NULL, 0, 1);
	bn[P_DMQ1] = make_bn(f, NULL, 0, 1);
	for (int i = 0; i < P_COUNT; i++)
		ok &= bn[i] != NULL;
	ok = ok && f->BN_sub(t, bn[P_P], f->BN_value_one()) &&
	     f->BN_div(NULL, bn[P_DMP1], bn[P_D], t, ctx) &&
	     f->BN_sub(t, bn[P_Q], f->BN_value_one()) &&
	     f->BN_div(NULL, bn[P_DMQ1], bn[P_D], t, ctx);
	f->BN_clear_free(t);
	f->BN_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* The key from its numbers: 0 or -1. */
static int make_pkey(rq_rsa *k, BIGNUM **bn)
{
	static const char *const names[P_COUNT] = {[P_N] = OSSL_PKEY_PARAM_RSA_N,
						   [P_E] = OSSL_PKEY_PARAM_RSA_E,
						   [P_D] = OSSL_PKEY_PARAM_RSA_D,
						   [P_P] = OSSL_PKEY_PARAM_RSA_FACTOR1,
						   [P_Q] = OSSL_PKEY_PARAM_RSA_FACTOR2,
						   [P_DMP1] = OSSL_PKEY_PARAM_RSA_EXPONENT1,
						   [P_DMQ1] = OSSL_PKEY_PARAM_RSA_EXPONENT2,
						   [P_IQMP] = OSSL_PKEY_PARAM_RSA_COEFFICIENT1};
	const rsa_funcs *f = &k->f;
	OSSL_PARAM_BLD *bld = f->OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = f->EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	int ok = bld && ctx;

	for (int i = 0; ok && i < P_COUNT; i++)
		ok = f->OSSL_PARAM_BLD_push_BN(bld, names[i], bn[i]);
	ok = ok && (params = f->OSSL_PARAM_BLD_to_param(bld)) &&
	     f->EVP_PKEY_fromdata_init(ctx) > 0 &&
	     f->EVP_PKEY_fromdata(ctx, &k->pkey, EVP_PKEY_KEYPAIR, params) > 0;
	f->OSSL_PARAM_free(params); /* the secure numbers' copies are cleared */
	f->OSSL_PARAM_BLD_free(bld);
	f->EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -1;
}

int rq_rsa_new(rq_rsa **out, const rq_rsa_parts *parts, rq_error *err)
{
	rq_rsa *k = calloc(1, sizeof(*k));
	BIGNUM *bn[P_COUNT] = {0};
	int rc;

	*out = NULL;
	if (!k)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (load_funcs(&k->f, err) < 0) {
		free(k);
		return -1;
	}
	rc = make_bns(&k->f, parts, bn);
	if (rc == 0)
		rc = make_pkey(k, bn);
	free_bns(&k->f, bn);
	if (rc < 0 || k->f.EVP_PKEY_get_size(k->pkey) <= 0) {
		rq_rsa_free(k);
		return rq_error_set(err, RQ_E_SIGN_KEY, "libcrypto refused the RSA key");
	}
	k->size = (size_t)k->f.EVP_PKEY_get_size(k->pkey);
	*out = k;
	return 0;
}

size_t rq_rsa_size(const rq_rsa *k)
{
	return k->size;
}

int rq_rsa_sign(rq_rsa *k, const void *data, size_t len, unsigned char *sig, size_t *sig_len,
		rq_error *err)
{
	const rsa_funcs *f = &k->f;
	EVP_MD_CTX *ctx = f->EVP_MD_CTX_new();
	size_t n = k->size;
	int ok = ctx &&
		 f->EVP_DigestSignInit_ex(ctx, NULL, "SHA512", NULL, NULL, k->pkey, NULL) > 0 &&
		 f->EVP_DigestSign(ctx, sig, &n, data, len) > 0 && n == k->size;

	f->EVP_MD_CTX_free(ctx);
	if (!ok)
		return rq_error_set(err, RQ_E_SIGN_FAILED,
				    "libcrypto could not make the RSA signature");
	*sig_len = n;
	return 0;
}

void rq_rsa_free(rq_rsa *k)
{
	if (!k)
		return;
	if (k->pkey)
		k->f.EVP_PKEY_free(k->pkey);
	free(k);
}
