/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_signprog: signatures made by a program, with the arguments git gives
 * it (gpg-interface.c), so that the program a user configured for git
 * signs replayq's commits the same way:
 *   - OpenPGP and X.509: `<program> --status-fd=2 -bsau <key>`, the
 *     payload on its standard input, the armoured signature on its
 *     standard output; it must exit 0 and print a status line
 *     "[GNUPG:] SIG_CREATED " (gpg, gpgsm);
 *   - SSH: `<program> -Y sign -n git -f <key file> [-U] <file>` (ssh-keygen)
 *     with the payload in a temporary file, the signature read from
 *     <file>.sig; a literal key goes to a temporary file and gets -U (the
 *     agent holds its private half).
 * The program runs without a shell, found through PATH. Carriage returns
 * are removed from the signature, as git does. A program that is missing,
 * exits non-zero, or does not say it signed is RQ_E_SIGN_FAILED, with its
 * message (never the payload).
 */
#ifndef RQ_SIGNPROG_H
#define RQ_SIGNPROG_H

#include <stddef.h>

#include "rq_buf.h"
#include "rq_error.h"

/* gpg or gpgsm: the signature appended to sig; 0 or -1. */
int rq_signprog_gpg(const char *program, const char *key, const void *payload, size_t len,
		    rq_buf *sig, rq_error *err);

/* ssh-keygen: key is a file, or with literal a public key ("ssh-ed25519
 * AAAA..."); the signature appended to sig; 0 or -1. */
int rq_signprog_ssh(const char *program, const char *key, int literal, const void *payload,
		    size_t len, rq_buf *sig, rq_error *err);

#endif
