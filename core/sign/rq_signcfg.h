/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_signcfg: git's signing configuration, read only from the places the
 * person running replayq controls: the command line (`replayq -c`,
 * GIT_CONFIG_PARAMETERS), the global configuration (GIT_CONFIG_GLOBAL, or
 * $XDG_CONFIG_HOME/git/config and ~/.gitconfig) and the system's
 * (GIT_CONFIG_SYSTEM or /etc/gitconfig, unless GIT_CONFIG_NOSYSTEM), found
 * as git finds them. Never from a repository's own configuration (nor its
 * worktree's, nor what they include): a repository must not choose which
 * program runs or which key signs.
 *
 * The variables: commit.gpgSign, user.signingKey, gpg.format (openpgp,
 * ssh, x509), gpg.program (or gpg.openpgp.program), gpg.x509.program,
 * gpg.ssh.program; and for the OpenPGP key git takes when none is set, the
 * committer's "Name <email>": GIT_COMMITTER_NAME / GIT_COMMITTER_EMAIL,
 * committer.name / committer.email, user.name / user.email, $EMAIL, in
 * git's order but from the trusted places only (a repository that set
 * user.email would otherwise choose the key). Where a value is set in
 * several places the command line wins, then the global, then the system
 * configuration, as in git.
 */
#ifndef RQ_SIGNCFG_H
#define RQ_SIGNCFG_H

#include "rq_error.h"
#include "rq_sign.h"

typedef struct rq_signcfg {
	int gpgsign;	   /* commit.gpgSign */
	char *signing_key; /* user.signingKey; NULL: not set */
	char *format;	   /* gpg.format as set; NULL: openpgp */
	char *program[3];  /* by rq_sign_format; NULL: the default */
	char *ident;	   /* "Name <email>"; NULL: no email found */
} rq_signcfg;

/*
 * Read the variables; params: GIT_CONFIG_PARAMETERS's value (NULL: none).
 * 0, or -1 with RQ_E_USAGE (a value that is not a boolean, a command line
 * that does not parse) or RQ_E_GIT / RQ_E_NOMEM.
 */
int rq_signcfg_read(rq_signcfg *out, const char *params, rq_error *err);
void rq_signcfg_free(rq_signcfg *c);

/*
 * The signer options for signing with key (NULL or "": user.signingKey,
 * else for openpgp and x509 the committer's "Name <email>", as git does):
 * valid while c and key live. 0, or -1 with RQ_E_USAGE for an unknown
 * gpg.format ("invalid value for 'gpg.format': '<v>'").
 */
int rq_signcfg_opts(const rq_signcfg *c, const char *key, rq_sign_opts *out, rq_error *err);

#endif
