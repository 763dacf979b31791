/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sshsig: OpenSSH's SSHSIG signatures (PROTOCOL.sshsig), the format
 * `ssh-keygen -Y sign` writes and git's gpg.format=ssh uses.
 *
 * What is signed is not the message but a blob naming the namespace and
 * the hash: "SSHSIG", string namespace, string reserved (empty), string
 * "sha512", string SHA-512(message). The signature is the armoured blob
 * "SSHSIG", uint32 1, string public key, string namespace, string
 * reserved, string "sha512", string signature, in base64 at 70 columns
 * between "-----BEGIN SSH SIGNATURE-----" and "-----END SSH
 * SIGNATURE-----" lines, as ssh-keygen writes it: for a deterministic key
 * (Ed25519, RSA) the same bytes as ssh-keygen's for the same key, message
 * and namespace.
 */
#ifndef RQ_SSHSIG_H
#define RQ_SSHSIG_H

#include <stddef.h>

#include "rq_buf.h"

/* The blob to sign for message in namespace ns, appended to out. */
void rq_sshsig_signed_data(const char *ns, const void *message, size_t len, rq_buf *out);

/* The armoured signature from the public key blob and the SSH signature
 * blob (string algorithm, string signature), appended to out, each of its
 * lines after prefix: "" for the armour as ssh-keygen writes it, " " for
 * the lines of a commit's "gpgsig" header, written there at once. */
void rq_sshsig_armor(const char *ns, const void *pubkey, size_t pubkey_len, const void *sig,
		     size_t sig_len, const char *prefix, rq_buf *out);

#endif
