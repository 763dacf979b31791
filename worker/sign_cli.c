/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sign_cli: the signer of a command, from its options and the trusted
 * configuration (see sign_cli.h).
 */
#include "sign_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_signcfg.h"

const char rq_sign_cli_unset[] = "";

int rq_sign_cli_open(const char *sign, rq_sign **out, rq_error *err)
{
	rq_signcfg cfg;
	rq_sign_opts o;
	int rc;

	*out = NULL;
	if (!sign) /* --no-gpg-sign */
		return 0;
	if (rq_signcfg_read(&cfg, getenv("GIT_CONFIG_PARAMETERS"), err) < 0)
		return -1;
	if (sign == rq_sign_cli_unset && !cfg.gpgsign) {
		rq_signcfg_free(&cfg);
		return 0;
	}
	rc = rq_signcfg_opts(&cfg, sign == rq_sign_cli_unset ? NULL : sign, &o, err);
	if (rc == 0)
		rc = rq_sign_new(out, &o, err);
	rq_signcfg_free(&cfg);
	return rc;
}

int rq_sign_cli_pool_open(const rq_sign_cli_pool *sc, rq_sign **out)
{
	rq_sign_opts o;
	rq_signcfg cfg;
	rq_error err;
	int rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	o.format = RQ_SIGN_SSH;
	if (sc->format && rq_sign_format_parse(sc->format, &o.format) < 0) {
		fprintf(stderr, "error: --sign-format must be ssh, openpgp or x509, not '%s'\n",
			sc->format);
		return RQ_OPT_USAGE_STATUS;
	}
	if (!sc->key && !(sc->agent && o.format == RQ_SIGN_SSH)) {
		if (!sc->format && !sc->agent)
			return 0; /* no signing */
		fputs("error: --sign-key is required (an SSH key file, or gpg's key id)\n", stderr);
		return RQ_OPT_USAGE_STATUS;
	}
	/* the programs as the operator's own configuration names them */
	if (rq_signcfg_read(&cfg, NULL, &err) < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	o.key = sc->key;
	o.agent = sc->agent;
	o.program = o.format == RQ_SIGN_SSH ? NULL : cfg.program[o.format];
	rc = rq_sign_new(out, &o, &err);
	rq_signcfg_free(&cfg);
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	return 0;
}
