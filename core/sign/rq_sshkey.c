/* SPDX-License-Identifier: GPL-2.0-only */
/* follows OpenSSH's PROTOCOL.key (the openssh-key-v1 format) and RFC 4253
 * section 6.6 (public key blobs), RFC 8709 (ssh-ed25519) and RFC 8332
 * (rsa-sha2-512) */
/*
 * rq_sshkey: OpenSSH key files and public keys, and signing with them in
 * process (see rq_sshkey.h).
 */
#include "rq_sshkey.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_rsa.h"
#include "rq_sshwire.h"

#define KEY_FILE_MAX (64 * 1024)
#define PRIV_BEGIN   "-----BEGIN OPENSSH PRIVATE KEY-----"
#define PRIV_END     "-----END OPENSSH PRIVATE KEY-----"
#define PRIV_MAGIC   "openssh-key-v1" /* and its NUL */
#define ED25519	     "ssh-ed25519"
#define RSA	     "ssh-rsa"

struct rq_sshkey {
	rq_sshkey_kind kind;
	char type[64];
	unsigned char *blob;
	size_t blob_len;
	unsigned char *ed_sk; /* Ed25519: seed and public key, libsodium's guarded memory */
	rq_rsa *rsa;
};

/* ---- public keys ---- */

/* An mpint as a magnitude: the leading zero bytes skipped; NULL when it
 * is negative or empty. */
static const unsigned char *mpint(rq_sshwire *r, size_t *len)
{
	const unsigned char *v = rq_sshwire_string(r, len);

	if (!v || !*len || (v[0] & 0x80))
		return NULL;
	while (*len > 1 && !v[0]) {
		v++;
		(*len)--;
	}
	return v;
}

/* The blob's type into k->type, its fields checked for the types signed
 * in process: 0 or -1. */
static int check_blob(rq_sshkey *k)
{
	rq_sshwire r;
	size_t tl, n;
	const unsigned char *t;

	rq_sshwire_init(&r, k->blob, k->blob_len);
	t = rq_sshwire_string(&r, &tl);
	if (!t || !tl || tl >= sizeof(k->type) || memchr(t, '\0', tl))
		return -1;
	memcpy(k->type, t, tl);
	k->type[tl] = '\0';
	for (size_t i = 0; i < tl; i++)
		if (t[i] <= ' ' || t[i] > '~')
			return -1;
	if (!strcmp(k->type, ED25519))
		return rq_sshwire_string(&r, &n) && n == crypto_sign_ed25519_PUBLICKEYBYTES &&
			       !rq_sshwire_left(&r)
			   ? 0
			   : -1;
	if (!strcmp(k->type, RSA))
		return mpint(&r, &n) && mpint(&r, &n) && !rq_sshwire_left(&r) ? 0 : -1;
	return 0; /* another type: only an agent can sign with it */
}

int rq_sshkey_from_blob(rq_sshkey **out, const void *blob, size_t len, rq_error *err)
{
	rq_sshkey *k = calloc(1, sizeof(*k));

	*out = NULL;
	if (!k || !(k->blob = malloc(len ? len : 1))) {
		free(k);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	memcpy(k->blob, blob, len);
	k->blob_len = len;
	k->kind = RQ_SSHKEY_PUBLIC;
	if (check_blob(k) < 0) {
		rq_sshkey_free(k);
		return rq_error_set(err, RQ_E_SIGN_KEY, "not a valid SSH public key");
	}
	*out = k;
	return 0;
}

/* base64 (spaces and newlines ignored) into a new buffer, in libsodium's
 * guarded memory when secret: NULL when it does not decode. */
static unsigned char *decode64(const char *s, size_t n, int secret, size_t *len)
{
	size_t cap = n / 4 * 3 + 3;
	unsigned char *bin = secret ? sodium_malloc(cap) : malloc(cap);

	if (bin && sodium_base642bin(bin, cap, s, n, " \t\r\n", len, NULL,
				     sodium_base64_VARIANT_ORIGINAL) == 0)
		return bin;
	if (secret)
		sodium_free(bin);
	else
		free(bin);
	return NULL;
}

/* The next token of [*p, end): its start, its length in *n. */
static const char *token(const char **p, const char *end, size_t *n)
{
	const char *t;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	for (t = *p; *p < end && **p != ' ' && **p != '\t' && **p != '\n' && **p != '\r'; (*p)++)
		;
	*n = (size_t)(*p - t);
	return t;
}

int rq_sshkey_parse_public(rq_sshkey **out, const char *text, size_t len, rq_error *err)
{
	const char *p = text, *type, *b64;
	unsigned char *blob;
	size_t tl, bl, blen;

	*out = NULL;
	if (sodium_init() < 0)
		return rq_error_set(err, RQ_E_SIGN_KEY, "libsodium could not start");
	type = token(&p, text + len, &tl);
	b64 = token(&p, text + len, &bl);
	if (!tl || !bl || !(blob = decode64(b64, bl, 0, &blen)))
		return rq_error_set(err, RQ_E_SIGN_KEY, "not an SSH public key");
	if (rq_sshkey_from_blob(out, blob, blen, err) < 0) {
		free(blob);
		return -1;
	}
	free(blob);
	if (strlen((*out)->type) != tl || memcmp((*out)->type, type, tl)) {
		rq_sshkey_free(*out);
		*out = NULL;
		return rq_error_set(err, RQ_E_SIGN_KEY,
				    "an SSH public key whose type is not its blob's");
	}
	return 0;
}

/* ---- private keys ---- */

/* The Ed25519 private half (string public key, string seed and public
 * key): 0, or -2 (damaged). The public key the seed makes must be the
 * blob's. */
static int private_ed25519(rq_sshkey *k, rq_sshwire *r)
{
	unsigned char pk[crypto_sign_ed25519_PUBLICKEYBYTES], *check;
	size_t pl, sl;
	const unsigned char *pub = rq_sshwire_string(r, &pl), *sk = rq_sshwire_string(r, &sl);
	int ok;

	if (!pub || pl != sizeof(pk) || !sk || sl != crypto_sign_ed25519_SECRETKEYBYTES ||
	    memcmp(k->blob + k->blob_len - sizeof(pk), pub, sizeof(pk)) ||
	    !(k->ed_sk = sodium_malloc(crypto_sign_ed25519_SECRETKEYBYTES)) ||
	    !(check = sodium_malloc(crypto_sign_ed25519_SECRETKEYBYTES)))
		return -2;
	memcpy(k->ed_sk, sk, sl);
	ok = crypto_sign_ed25519_seed_keypair(pk, check, sk) == 0 && !memcmp(pk, pub, sizeof(pk));
	sodium_free(check);
	sodium_mprotect_readonly(k->ed_sk);
	return ok ? 0 : -2;
}

/* The RSA private half (mpint n, e, d, iqmp, p, q): 0, -2 (damaged), or
 * -1 with err set (libcrypto's refusal). */
static int private_rsa(rq_sshkey *k, rq_sshwire *r, rq_error *err)
{
	rq_rsa_parts parts;

	parts.n = mpint(r, &parts.n_len);
	parts.e = mpint(r, &parts.e_len);
	parts.d = mpint(r, &parts.d_len);
	parts.iqmp = mpint(r, &parts.iqmp_len);
	parts.p = mpint(r, &parts.p_len);
	parts.q = mpint(r, &parts.q_len);
	if (r->bad || !parts.n || !parts.e || !parts.d || !parts.iqmp || !parts.p || !parts.q)
		return -2;
	return rq_rsa_new(&k->rsa, &parts, err);
}

/* The unencrypted private section: uint32 check twice, the key (its type
 * and fields), a comment, padding. 0, or -1 with err set. */
static int private_section(rq_sshkey *k, const unsigned char *s, size_t n, const char *path,
			   rq_error *err)
{
	rq_sshwire r;
	uint32_t c1, c2;
	int rc;

	rq_sshwire_init(&r, s, n);
	c1 = rq_sshwire_u32(&r);
	c2 = rq_sshwire_u32(&r);
	if (r.bad || c1 != c2 || !rq_sshwire_string_is(&r, k->type))
		return rq_error_set(err, RQ_E_SIGN_KEY, "the signing key '%s' is damaged", path);
	if (!strcmp(k->type, ED25519))
		rc = private_ed25519(k, &r);
	else if (!strcmp(k->type, RSA))
		rc = private_rsa(k, &r, err);
	else
		return rq_error_set(err, RQ_E_SIGN_KEY,
				    "the signing key '%s' is of type %s: replayq signs with "
				    "ssh-ed25519 and ssh-rsa keys in process, other types through "
				    "an ssh-agent",
				    path, k->type);
	if (rc == -2)
		return rq_error_set(err, RQ_E_SIGN_KEY, "the signing key '%s' is damaged", path);
	return rc;
}

/*
 * The openssh-key-v1 container: magic, cipher, kdf, kdf options, one key:
 * its public blob and its private section. An encrypted key keeps its
 * public half only. 0, or -1 with err set.
 */
static int parse_container(rq_sshkey **out, const unsigned char *bin, size_t n, const char *path,
			   rq_error *err)
{
	rq_sshwire r;
	size_t pl, sl, kl;
	const unsigned char *pub, *priv;
	int plain;

	if (n < sizeof(PRIV_MAGIC) || memcmp(bin, PRIV_MAGIC, sizeof(PRIV_MAGIC)))
		return rq_error_set(err, RQ_E_SIGN_KEY, "'%s' is not an OpenSSH private key", path);
	rq_sshwire_init(&r, bin + sizeof(PRIV_MAGIC), n - sizeof(PRIV_MAGIC));
	plain = rq_sshwire_string_is(&r, "none");
	rq_sshwire_string(&r, &kl); /* kdf name */
	rq_sshwire_string(&r, &kl); /* kdf options */
	if (rq_sshwire_u32(&r) != 1 || !(pub = rq_sshwire_string(&r, &pl)) ||
	    !(priv = rq_sshwire_string(&r, &sl)))
		return rq_error_set(err, RQ_E_SIGN_KEY,
				    "'%s' is not an OpenSSH private key with one key", path);
	if (rq_sshkey_from_blob(out, pub, pl, err) < 0)
		return -1;
	(*out)->kind = plain ? RQ_SSHKEY_PRIVATE : RQ_SSHKEY_ENCRYPTED;
	if (plain && private_section(*out, priv, sl, path, err) < 0) {
		rq_sshkey_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* An OpenSSH private key file's text (NUL-terminated): 0, or -1. */
static int parse_private(rq_sshkey **out, const char *text, const char *path, rq_error *err)
{
	const char *body = strchr(text, '\n'), *end = strstr(text, PRIV_END);
	unsigned char *bin;
	size_t n;
	int rc;

	if (!body || !end || end < body ||
	    !(bin = decode64(body + 1, (size_t)(end - body - 1), 1, &n)))
		return rq_error_set(err, RQ_E_SIGN_KEY, "'%s' is not an OpenSSH private key", path);
	rc = parse_container(out, bin, n, path, err);
	sodium_free(bin);
	return rc;
}

/* All of fd's n bytes into buf: 0, or -1 with errno. */
static int read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r < 0 ? errno : EIO;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

/* The whole file into guarded memory (NUL-terminated): 0, or -1. */
static int read_file(const char *path, char **out, size_t *len, rq_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
	struct stat st;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EISDIR;
	else if (st.st_size > KEY_FILE_MAX)
		e = EFBIG;
	else if (!(*out = sodium_malloc((size_t)st.st_size + 1)))
		e = ENOMEM;
	else if (read_all(fd, *out, (size_t)st.st_size) < 0)
		e = errno;
	if (fd >= 0)
		close(fd);
	if (e) {
		sodium_free(*out);
		*out = NULL;
		return rq_error_set(err, RQ_E_SIGN_KEY, "cannot read the signing key '%s': %s",
				    path, strerror(e));
	}
	(*out)[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return 0;
}

int rq_sshkey_load_file(rq_sshkey **out, const char *path, rq_error *err)
{
	char *text;
	const char *p;
	size_t len;
	int rc;

	*out = NULL;
	if (sodium_init() < 0)
		return rq_error_set(err, RQ_E_SIGN_KEY, "libsodium could not start");
	if (read_file(path, &text, &len, err) < 0)
		return -1;
	for (p = text; *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'; p++)
		;
	if (!strncmp(p, PRIV_BEGIN, strlen(PRIV_BEGIN)))
		rc = parse_private(out, p, path, err);
	else if (!strncmp(p, "-----BEGIN ", 11))
		rc = rq_error_set(err, RQ_E_SIGN_KEY,
				  "the signing key '%s' is not in OpenSSH's format ('ssh-keygen -p "
				  "-f <file>' rewrites it so)",
				  path);
	else if ((rc = rq_sshkey_parse_public(out, p, len - (size_t)(p - text), err)) < 0)
		rq_error_set(err, RQ_E_SIGN_KEY,
			     "'%s' is neither an OpenSSH private key nor an SSH public key", path);
	sodium_free(text);
	return rc;
}

/* ---- signing ---- */

int rq_sshkey_sign(rq_sshkey *k, const void *data, size_t len, rq_buf *out, rq_error *err)
{
	unsigned char ed[crypto_sign_ed25519_BYTES], *sig;
	size_t n;

	if (k->ed_sk) {
		crypto_sign_ed25519_detached(ed, NULL, data, len, k->ed_sk);
		rq_sshwire_put_cstring(out, ED25519);
		rq_sshwire_put_string(out, ed, sizeof(ed));
		return 0;
	}
	if (!k->rsa)
		return rq_error_set(err, RQ_E_SIGN_FAILED, "no private key to sign with");
	if (!(sig = malloc(rq_rsa_size(k->rsa))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rq_rsa_sign(k->rsa, data, len, sig, &n, err) < 0) {
		free(sig);
		return -1;
	}
	rq_sshwire_put_cstring(out, "rsa-sha2-512");
	rq_sshwire_put_string(out, sig, n);
	free(sig);
	return 0;
}

/* ---- the rest ---- */

rq_sshkey_kind rq_sshkey_kind_of(const rq_sshkey *k)
{
	return k->kind;
}

const unsigned char *rq_sshkey_blob(const rq_sshkey *k, size_t *len)
{
	*len = k->blob_len;
	return k->blob;
}

const char *rq_sshkey_type(const rq_sshkey *k)
{
	return k->type;
}

int rq_sshkey_is_rsa(const rq_sshkey *k)
{
	return !strcmp(k->type, RSA);
}

void rq_sshkey_free(rq_sshkey *k)
{
	if (!k)
		return;
	if (k->ed_sk)
		sodium_free(k->ed_sk); /* cleared first */
	rq_rsa_free(k->rsa);
	free(k->blob);
	free(k);
}
