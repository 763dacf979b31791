/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sign_libs: the CPU time of one Ed25519 signature with each Debian 12
 * library replayq could sign with, for bench/sign-libs (docs/security.md,
 * "Signing"; docs/performance.md, "Signed replays").
 *
 *   sign_libs N [BORINGSSL_SO]
 *
 * Signs N messages of 95 bytes (the size of the SSHSIG blob a commit's
 * signature covers: "SSHSIG", the namespace "git", the reserved string,
 * "sha512" and the commit's SHA-512, rq_sshsig_signed_data) with one key,
 * with each library in turn, for 7 rounds, the libraries interleaved
 * within each round (so a change of the machine's load falls on all of
 * them alike), and prints one line a library: its name, then the CPU
 * microseconds per signature (CLOCK_PROCESS_CPUTIME_ID) of its best round
 * and of its median round.
 * Every library's signature of every message is checked equal to
 * libsodium's (RFC 8032 makes Ed25519 deterministic); a difference exits
 * with 2. BoringSSL (Debian's android-libboringssl) shares its symbols'
 * names with OpenSSL's libcrypto, so it is loaded with dlopen from
 * BORINGSSL_SO when that is given.
 */
#define _GNU_SOURCE
#include <botan/ffi.h>
#include <dlfcn.h>
#include <gcrypt.h>
#include <nettle/eddsa.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <decaf/ed255.h>
/* Debian 12's xeddsa.h includes a header the package leaves out: the two
 * functions used, as that header declares them */
int xeddsa_init(void);
void ed25519_seed_sign(uint8_t *sig, const uint8_t *seed, const uint8_t *msg, uint32_t len);
/* bench/gen/sign_libs_cxx.cc: Crypto++ has a C++ interface only */
int sign_libs_cryptopp(unsigned char *sig, const unsigned char *msg, size_t len,
		       const unsigned char *seed, const unsigned char *pk);

#define MSG_LEN 95
#define ROUNDS	7

static unsigned char seed[32] = {42}, pk[32], sk[64];
static EVP_PKEY *ossl_key;
static EVP_MD_CTX *ossl_ctx;
static ed25519_key wolf_key;
static decaf_eddsa_25519_keypair_t decaf_key;
static gcry_sexp_t gcry_key;
static botan_privkey_t botan_key;
static botan_pk_op_sign_t botan_op;
static botan_rng_t botan_rng;
static int (*boring_sign)(uint8_t *, const uint8_t *, size_t, const uint8_t *);

static int sign_sodium(unsigned char *sig, const unsigned char *msg)
{
	return crypto_sign_ed25519_detached(sig, NULL, msg, MSG_LEN, sk) == 0;
}

static int sign_openssl(unsigned char *sig, const unsigned char *msg)
{
	size_t len = 64;

	return EVP_DigestSignInit(ossl_ctx, NULL, NULL, NULL, ossl_key) > 0 &&
	       EVP_DigestSign(ossl_ctx, sig, &len, msg, MSG_LEN) > 0;
}

static int sign_nettle(unsigned char *sig, const unsigned char *msg)
{
	ed25519_sha512_sign(pk, seed, MSG_LEN, msg, sig);
	return 1;
}

static int sign_wolfssl(unsigned char *sig, const unsigned char *msg)
{
	word32 len = 64;

	return wc_ed25519_sign_msg(msg, MSG_LEN, sig, &len, &wolf_key) == 0;
}

static int sign_decaf(unsigned char *sig, const unsigned char *msg)
{
	decaf_ed25519_keypair_sign(sig, decaf_key, msg, MSG_LEN, 0, DECAF_ED25519_NO_CONTEXT, 0);
	return 1;
}

static int sign_xeddsa(unsigned char *sig, const unsigned char *msg)
{
	ed25519_seed_sign(sig, seed, msg, MSG_LEN);
	return 1;
}

/* gcrypt's EdDSA through its S-expressions: R and S come back apart */
static int sign_gcrypt(unsigned char *sig, const unsigned char *msg)
{
	gcry_sexp_t data = NULL, res = NULL;
	int ok = 0;

	if (gcry_sexp_build(&data, NULL, "(data (flags eddsa) (hash-algo sha512) (value %b))",
			    MSG_LEN, msg) == 0 &&
	    gcry_pk_sign(&res, data, gcry_key) == 0) {
		const char *names[] = {"r", "s"};
		ok = 1;
		for (int i = 0; i < 2; i++) {
			gcry_sexp_t part = gcry_sexp_find_token(res, names[i], 0);
			size_t len = 0;
			const void *p = part ? gcry_sexp_nth_data(part, 1, &len) : NULL;
			if (p && len == 32)
				memcpy(sig + 32 * i, p, 32);
			else
				ok = 0;
			gcry_sexp_release(part);
		}
	}
	gcry_sexp_release(data);
	gcry_sexp_release(res);
	return ok;
}

static int sign_cryptopp(unsigned char *sig, const unsigned char *msg)
{
	return sign_libs_cryptopp(sig, msg, MSG_LEN, seed, pk);
}

/* Botan's C interface: one signing operation, fed each message */
static int sign_botan(unsigned char *sig, const unsigned char *msg)
{
	size_t len = 64;

	return botan_pk_op_sign_update(botan_op, msg, MSG_LEN) == 0 &&
	       botan_pk_op_sign_finish(botan_op, botan_rng, sig, &len) == 0 && len == 64;
}

static int sign_boringssl(unsigned char *sig, const unsigned char *msg)
{
	return boring_sign(sig, msg, MSG_LEN, sk) == 1;
}

static const struct signer {
	const char *name;
	int (*sign)(unsigned char *sig, const unsigned char *msg);
} signers[] = {
    {"libsodium", sign_sodium},	   {"openssl", sign_openssl},	{"nettle", sign_nettle},
    {"wolfssl", sign_wolfssl},	   {"decaf", sign_decaf},	{"xeddsa", sign_xeddsa},
    {"gcrypt", sign_gcrypt},	   {"cryptopp", sign_cryptopp}, {"botan", sign_botan},
    {"boringssl", sign_boringssl},
};
#define NSIGNERS (sizeof(signers) / sizeof(signers[0]))

static int load_boringssl(const char *so)
{
	void *h = so ? dlopen(so, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) : NULL;

	boring_sign = h ? (int (*)(uint8_t *, const uint8_t *, size_t, const uint8_t *))dlsym(
			      h, "ED25519_sign")
			: NULL;
	return boring_sign != NULL;
}

static int setup(void)
{
	unsigned char wpk[32];

	if (sodium_init() < 0 || !(ossl_ctx = EVP_MD_CTX_new()) ||
	    !gcry_check_version(GCRYPT_VERSION) || xeddsa_init() < 0)
		return 0;
	crypto_sign_ed25519_seed_keypair(pk, sk, seed);
	ossl_key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof(seed));
	memcpy(wpk, pk, sizeof(wpk));
	if (!ossl_key || wc_ed25519_init(&wolf_key) != 0 ||
	    wc_ed25519_import_private_key(seed, 32, wpk, 32, &wolf_key) != 0)
		return 0;
	decaf_ed25519_derive_keypair(decaf_key, seed);
	if (botan_rng_init(&botan_rng, "system") != 0 ||
	    botan_privkey_load_ed25519(&botan_key, seed) != 0 ||
	    botan_pk_op_sign_create(&botan_op, botan_key, "Pure", 0) != 0)
		return 0;
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	return gcry_sexp_build(&gcry_key, NULL,
			       "(private-key (ecc (curve Ed25519) (flags eddsa) (q %b) (d %b)))",
			       32, pk, 32, seed) == 0;
}

static double cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void message(unsigned char *msg, int i)
{
	memset(msg, 'x', MSG_LEN);
	msg[0] = (unsigned char)i;
	msg[1] = (unsigned char)(i >> 8);
}

/* one round of n signatures with s, timed together, then each checked
 * against libsodium's in ref */
static double round_us(const struct signer *s, int n, unsigned char *sigs, const unsigned char *ref)
{
	unsigned char msg[MSG_LEN];
	double t0 = cpu_us(), t;

	for (int i = 0; i < n; i++) {
		message(msg, i);
		if (!s->sign(sigs + 64 * i, msg))
			return -1;
	}
	t = cpu_us() - t0;
	return memcmp(sigs, ref, 64 * (size_t)n) ? -2 : t / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000,
	    have_boring = load_boringssl(argv[1] ? argv[2] : NULL);
	size_t nsig = NSIGNERS - !have_boring;
	static double us[NSIGNERS][ROUNDS];
	unsigned char msg[MSG_LEN], *sigs, *ref;

	if (n < 1 || n > 65536 || !setup() || !(sigs = malloc(64 * (size_t)n)) ||
	    !(ref = malloc(64 * (size_t)n)))
		return 1;
	for (int i = 0; i < n; i++) {
		message(msg, i);
		crypto_sign_ed25519_detached(ref + 64 * i, NULL, msg, MSG_LEN, sk);
	}
	for (int r = 0; r < ROUNDS; r++)
		for (size_t k = 0; k < nsig; k++) {
			us[k][r] = round_us(&signers[k], n, sigs, ref);
			if (us[k][r] < 0) {
				fprintf(stderr, "%s: %s\n", signers[k].name,
					us[k][r] < -1 ? "a different signature" : "signing failed");
				return us[k][r] < -1 ? 2 : 1;
			}
		}
	for (size_t k = 0; k < nsig; k++) {
		qsort(us[k], ROUNDS, sizeof(double), cmp_double);
		printf("%-10s %6.1f %6.1f\n", signers[k].name, us[k][0], us[k][ROUNDS / 2]);
	}
	free(sigs);
	free(ref);
	return 0;
}
