/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sign: signing the commits a replay writes, as `git commit -S` signs
 * them.
 *
 * core/sign is one family of modules:
 *   rq_sign       the signer (this file): made once from its options, it
 *                 signs a commit's buffer by adding git's "gpgsig" header
 *                 ("gpgsig-sha256" in a SHA-256 repository);
 *                 and its attachment to a replay's object database;
 *   rq_signcfg    the options from the configuration a user or operator
 *                 controls (never a repository's own);
 *   rq_sshkey     OpenSSH keys, in process (Ed25519 with libsodium, RSA
 *                 with OpenSSH's libcrypto through rq_rsa);
 *   rq_sshagent   an ssh-agent client;
 *   rq_sshsig     the SSHSIG signature format and its armour;
 *   rq_signprog   gpg, gpgsm or an ssh-keygen run as git runs them;
 *   rq_sshwire    SSH's wire encoding.
 *
 * Formats (git's gpg.format):
 *   - ssh: in process. The key is a file (an unencrypted OpenSSH private
 *     key signs here; a public key, or an encrypted private key, signs
 *     through the ssh-agent that holds its private half), a literal
 *     public key ("key::ssh-ed25519 AAAA...", or one starting with
 *     "ssh-", as git takes user.signingKey: through the agent), or with
 *     opts->agent and no key the agent's first key. The signature is
 *     SSHSIG with namespace "git", byte for byte what `ssh-keygen -Y sign
 *     -n git` makes with the same key (Ed25519 and RSA are
 *     deterministic). With a program (gpg.ssh.program) that program signs
 *     instead, as git runs it.
 *   - openpgp, x509: the program (default gpg, gpgsm) with the key id.
 * A key is read once, when the signer is made, and held only in memory:
 * an Ed25519 key in locked pages that core dumps leave out (libsodium's
 * guarded allocation), an RSA key in libcrypto's, which clears it when it
 * is freed. No message names more of a key than its file.
 *
 * The signer travels with the object database a replay writes into
 * (rq_sign_attach: a backend that stores nothing, which libgit2 passes
 * over), so that the commit writer (rq_commit), which sees only that
 * database, signs every commit it writes, in this process or in a
 * parallel replay's forked children, without a parameter through every
 * caller.
 */
#ifndef RQ_SIGN_H
#define RQ_SIGN_H

#include <git2.h>
#include <stddef.h>

#include "rq_buf.h"
#include "rq_error.h"
#include "rq_oid.h"

typedef enum { RQ_SIGN_OPENPGP, RQ_SIGN_X509, RQ_SIGN_SSH } rq_sign_format;

typedef struct rq_sign_opts {
	rq_sign_format format;
	/* ssh: a key file ("~/" expanded) or a literal public key (see
	 * above); NULL with agent: the agent's first key. openpgp, x509: the
	 * key id the program gets (required). */
	const char *key;
	int agent;		  /* ssh: the agent signs, even with a private key file */
	const char *program;	  /* NULL: ssh in process, gpg, gpgsm */
	const char *agent_socket; /* NULL: $SSH_AUTH_SOCK */
} rq_sign_opts;

typedef struct rq_sign rq_sign;

/*
 * A signer: 0, or -1 with RQ_E_SIGN_KEY (the key cannot be read or used:
 * encrypted with no agent holding it, not in the agent, of a type that
 * only an agent signs with, ...) or RQ_E_USAGE / RQ_E_NOMEM. A program is
 * not run until the first signature.
 */
int rq_sign_new(rq_sign **out, const rq_sign_opts *opts, rq_error *err);
/* Clears the key and frees; NULL: nothing. */
void rq_sign_free(rq_sign *s);

/* The armoured signature of payload appended to sig: 0, or -1 with
 * RQ_E_SIGN_FAILED (RQ_E_NOMEM). */
int rq_sign_buffer(rq_sign *s, const void *payload, size_t len, rq_buf *sig, rq_error *err);

/* The header a commit's signature goes under in a repository of object
 * format algo, as git writes it: "gpgsig" in SHA-1 (NULL too),
 * "gpgsig-sha256" in SHA-256. */
const char *rq_sign_header(const rq_oid_algo *algo);

/*
 * Sign the commit in b (a whole commit object's data, in a repository of
 * object format algo; NULL: SHA-1): its signature, of the commit as it is,
 * becomes a rq_sign_header(algo) header at the end of its header, its
 * lines continued with a space, as git writes it. The unsigned and the
 * signed commit differ only in that header. 0, or -1 with err set (b
 * unchanged).
 */
int rq_sign_commit(rq_sign *s, const rq_oid_algo *algo, rq_buf *b, rq_error *err);

/* s signs what is written into odb from now on (NULL: nothing to do),
 * under the header of odb's object format (rq_odb_algo, read here once); s
 * must outlive odb. 0, or -1 with err set. */
int rq_sign_attach(git_odb *odb, rq_sign *s, rq_error *err);
/* rq_sign_commit by the signer attached to odb, if any (none: 0, b
 * unchanged). */
int rq_sign_odb_commit(git_odb *odb, rq_buf *b, rq_error *err);

/* "openpgp", "x509", "ssh". */
const char *rq_sign_format_name(rq_sign_format f);
/* A format by its name: 0, or -1 when it names none. */
int rq_sign_format_parse(const char *name, rq_sign_format *out);
/* 1 when the same commit always gets the same signature (SSH with an
 * Ed25519 or RSA key), 0 when not (OpenPGP and X.509 sign a timestamp; an
 * ECDSA key signs with a random nonce). */
int rq_sign_deterministic(const rq_sign *s);

#endif
