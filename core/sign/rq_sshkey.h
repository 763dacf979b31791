/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sshkey: OpenSSH keys, read and used in process.
 *
 * A key file is read once into locked memory that core dumps leave out
 * (libsodium's guarded allocation) and cleared as soon as it is parsed:
 *   - an OpenSSH private key ("-----BEGIN OPENSSH PRIVATE KEY-----", the
 *     openssh-key-v1 format of OpenSSH's PROTOCOL.key): unencrypted, an
 *     Ed25519 or RSA key signs in process (RQ_SSHKEY_PRIVATE); encrypted,
 *     only its public half is read (RQ_SSHKEY_ENCRYPTED: its private half
 *     must come from an agent, rq_sshagent);
 *   - a public key line ("ssh-ed25519 AAAA... comment", a .pub file, or
 *     git's literal user.signingKey): RQ_SSHKEY_PUBLIC.
 * Any other file is refused (RQ_E_SIGN_KEY) with a message that says what
 * to do; no message ever holds key material.
 *
 * Ed25519 signs with libsodium (deterministic: RFC 8032), RSA with
 * libcrypto (rq_rsa: rsa-sha2-512, PKCS#1 v1.5, deterministic too).
 */
#ifndef RQ_SSHKEY_H
#define RQ_SSHKEY_H

#include <stddef.h>

#include "rq_buf.h"
#include "rq_error.h"

typedef struct rq_sshkey rq_sshkey;

typedef enum {
	RQ_SSHKEY_PUBLIC,    /* the public half only */
	RQ_SSHKEY_PRIVATE,   /* signs in process */
	RQ_SSHKEY_ENCRYPTED, /* an encrypted private key file: its public half */
} rq_sshkey_kind;

/* A key file as above: 0, or -1 with RQ_E_SIGN_KEY (or RQ_E_NOMEM). */
int rq_sshkey_load_file(rq_sshkey **out, const char *path, rq_error *err);
/* A public key line (a trailing comment and newline allowed). */
int rq_sshkey_parse_public(rq_sshkey **out, const char *text, size_t len, rq_error *err);
/* A public key blob (an agent's identity). */
int rq_sshkey_from_blob(rq_sshkey **out, const void *blob, size_t len, rq_error *err);

rq_sshkey_kind rq_sshkey_kind_of(const rq_sshkey *k);
/* The public key blob (string type, then the type's fields). */
const unsigned char *rq_sshkey_blob(const rq_sshkey *k, size_t *len);
/* "ssh-ed25519", "ssh-rsa", ... */
const char *rq_sshkey_type(const rq_sshkey *k);
int rq_sshkey_is_rsa(const rq_sshkey *k);

/*
 * With a private key: the SSH signature blob of data (string algorithm
 * "ssh-ed25519" or "rsa-sha2-512", string signature) appended to out. 0,
 * or -1 with RQ_E_SIGN_FAILED (RQ_E_NOMEM).
 */
int rq_sshkey_sign(rq_sshkey *k, const void *data, size_t len, rq_buf *out, rq_error *err);

/* Clears and frees; NULL: nothing. */
void rq_sshkey_free(rq_sshkey *k);

#endif
