/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sign_cli: signing on the command line.
 *
 * replay and train take git's options (git commit, git rebase):
 * -S[<key-id>], --gpg-sign[=<key-id>] and --no-gpg-sign, with the
 * signing configuration (commit.gpgSign, user.signingKey, gpg.format,
 * gpg.program, gpg.ssh.program, gpg.x509.program) read only from the
 * command line, the environment and the global and system configuration
 * (core/sign/rq_signcfg), never from the repository's.
 *
 * worker and run take the operator's: --sign-key=<key> (an SSH key file,
 * or the key id gpg or gpgsm gets), --sign-format=ssh|openpgp|x509
 * (default ssh) and --sign-agent (the ssh-agent at SSH_AUTH_SOCK signs;
 * with no --sign-key, its first key). The key is read once, at start; a
 * job asks for it with "sign": true and never names a key itself.
 */
#ifndef RQ_SIGN_CLI_H
#define RQ_SIGN_CLI_H

#include "opt.h"
#include "rq_sign.h"

/* The value of -S's variable before the parse: not given. */
extern const char rq_sign_cli_unset[];

/* The entry of replay's and train's option tables. */
#define RQ_SIGN_CLI_OPTION(str_ptr)                                                                \
	{                                                                                          \
		.kind = RQ_OPT_KIND_OPTIONAL, .short_name = 'S', .name = "gpg-sign",               \
		.value = (str_ptr), .argh = "<key-id>", .bare = "", .negatable = 1,                \
		.help = "sign the new commits (with this key)"                                     \
	}

/*
 * The signer the command asks for: sign is the option's value
 * (rq_sign_cli_unset: not given, commit.gpgSign decides; NULL:
 * --no-gpg-sign; "": the configured key; else the key). 0 with *out
 * (NULL: no signing), or -1 with err set.
 */
int rq_sign_cli_open(const char *sign, rq_sign **out, rq_error *err);

/* The operator's options of worker and run. */
typedef struct rq_sign_cli_pool {
	const char *key, *format;
	int agent;
} rq_sign_cli_pool;

#define RQ_SIGN_CLI_POOL_OPTIONS(sc)                                                               \
	RQ_OPT_STRING_ENV("sign-key", &(sc)->key, "<key>",                                         \
			  "sign the commits of jobs that ask (\"sign\": true) with\n"              \
			  "this key: an SSH key file, or gpg's key id",                            \
			  "REPLAYQ_SIGN_KEY"),                                                     \
	    RQ_OPT_STRING_ENV("sign-format", &(sc)->format, "<format>",                            \
			      "ssh (default), openpgp or x509", "REPLAYQ_SIGN_FORMAT"),            \
	    RQ_OPT_BOOL("sign-agent", &(sc)->agent, "sign through the ssh-agent at SSH_AUTH_SOCK")

/*
 * The pool's signer, made once at start: 0 with *out (NULL: no signing
 * configured), or the exit status, said on stderr (129: an option, 128:
 * the key cannot be used).
 */
int rq_sign_cli_pool_open(const rq_sign_cli_pool *sc, rq_sign **out);

#endif
