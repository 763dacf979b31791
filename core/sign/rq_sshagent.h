/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sshagent: a client of ssh-agent (the SSH agent protocol,
 * draft-miller-ssh-agent): list the identities it holds, and have it sign
 * with one of them, so that a private key need not be on disk or in
 * replayq's memory.
 *
 * The agent is named by its socket path (SSH_AUTH_SOCK). A connection
 * belongs to the process that made it: after a fork (a parallel replay's
 * children, a worker's job processes) the first request connects anew, so
 * that two processes never interleave on one socket. Each request waits
 * at most RQ_SSHAGENT_TIMEOUT_S for its answer (an agent that asks its
 * user to confirm every use would otherwise hold a job for ever).
 */
#ifndef RQ_SSHAGENT_H
#define RQ_SSHAGENT_H

#include <stddef.h>
#include <stdint.h>

#include "rq_buf.h"
#include "rq_error.h"

#define RQ_SSHAGENT_TIMEOUT_S 30
/* The sign request's flag for an RSA key: rsa-sha2-512 (not SHA-1). */
#define RQ_SSHAGENT_RSA_SHA2_512 4

typedef struct rq_sshagent rq_sshagent;

/* An agent at socket (NULL: $SSH_AUTH_SOCK): 0, or -1 with RQ_E_SIGN_KEY
 * when there is none. Nothing is connected yet. */
int rq_sshagent_new(rq_sshagent **out, const char *socket, rq_error *err);

/*
 * The public key blobs the agent holds, each as string blob, string
 * comment (the answer's body after its count), and their number: 0, or
 * -1 with RQ_E_SIGN_KEY (no agent answering) or RQ_E_NOMEM.
 */
int rq_sshagent_identities(rq_sshagent *a, rq_buf *ids, uint32_t *count, rq_error *err);

/* The SSH signature blob of data by the agent's key `key` (a public key
 * blob), with the request's flags, appended to out: 0, or -1 with
 * RQ_E_SIGN_FAILED. */
int rq_sshagent_sign(rq_sshagent *a, const void *key, size_t key_len, const void *data, size_t len,
		     uint32_t flags, rq_buf *out, rq_error *err);

/* Closes this process's connection; NULL: nothing. */
void rq_sshagent_free(rq_sshagent *a);

#endif
