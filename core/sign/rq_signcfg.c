/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's config.c (which files, in which order; GIT_CONFIG_GLOBAL,
 * GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM) and gpg-interface.c (the
 * variables and the default key) */
/*
 * rq_signcfg: the signing configuration from the trusted places only (see
 * rq_signcfg.h).
 */
#include "rq_signcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rq_cfgparams.h"

/* Add the file at path (when it is a file) at level: 0, or -1. */
static int add_file(git_config *cfg, const char *path, git_config_level_t level, rq_error *err)
{
	struct stat st;

	if (!path || !*path || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (git_config_add_file_ondisk(cfg, path, level, NULL, 0) < 0)
		return rq_error_git(err, "cannot read the configuration");
	return 0;
}

/* A boolean environment variable, as git reads one (unset: 0). */
static int env_bool(const char *name)
{
	const char *v = getenv(name);
	int b = 0;

	return v && git_config_parse_bool(&b, v) == 0 && b;
}

/* The configuration from the trusted places: 0, or -1 with err set. */
static int trusted_config(git_config **out, const char *params, rq_error *err)
{
	const char *global = getenv("GIT_CONFIG_GLOBAL"), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CONFIG_HOME"), *sys = getenv("GIT_CONFIG_SYSTEM");
	char path[4096];
	git_config *cfg = NULL;
	int rc = 0;

	if (git_config_new(&cfg) < 0)
		return rq_error_git(err, "cannot read the configuration");
	if (!env_bool("GIT_CONFIG_NOSYSTEM"))
		rc = add_file(cfg, sys ? sys : "/etc/gitconfig", GIT_CONFIG_LEVEL_SYSTEM, err);
	if (rc == 0 && global) {
		rc = add_file(cfg, global, GIT_CONFIG_LEVEL_GLOBAL, err);
	} else if (rc == 0) {
		if (xdg && *xdg)
			snprintf(path, sizeof(path), "%s/git/config", xdg);
		else
			snprintf(path, sizeof(path), "%s/.config/git/config", home ? home : "");
		rc = add_file(cfg, home || (xdg && *xdg) ? path : NULL, GIT_CONFIG_LEVEL_XDG, err);
		snprintf(path, sizeof(path), "%s/.gitconfig", home ? home : "");
		if (rc == 0)
			rc = add_file(cfg, home ? path : NULL, GIT_CONFIG_LEVEL_GLOBAL, err);
	}
	if (rc == 0)
		rc = rq_cfgparams_add(cfg, NULL, params, err);
	if (rc < 0) {
		git_config_free(cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

/* A string variable: 0 (*out NULL when unset; its level in *level), or
 * -1 out of memory. */
static int get_string(git_config *cfg, const char *name, char **out, int *level, rq_error *err)
{
	git_config_entry *e = NULL;

	*out = NULL;
	if (git_config_get_entry(&e, cfg, name) < 0 || !e) {
		git_error_clear();
		return 0;
	}
	if (level)
		*level = (int)e->level;
	*out = strdup(e->value ? e->value : "");
	git_config_entry_free(e);
	return *out ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* gpg.program and gpg.openpgp.program name one thing: the one set at the
 * higher level (at the same level, gpg.openpgp.program). */
static int openpgp_program(git_config *cfg, rq_signcfg *c, rq_error *err)
{
	char *a = NULL, *b = NULL;
	int la = -1, lb = -1;

	if (get_string(cfg, "gpg.program", &a, &la, err) < 0 ||
	    get_string(cfg, "gpg.openpgp.program", &b, &lb, err) < 0) {
		free(a);
		return -1;
	}
	if (b && lb >= la) {
		free(a);
		a = b;
	} else {
		free(b);
	}
	c->program[RQ_SIGN_OPENPGP] = a;
	return 0;
}

/* commit.gpgSign: 0, or -1 with git's message for a value that is not a
 * boolean. */
static int get_gpgsign(git_config *cfg, int *out, rq_error *err)
{
	git_config_entry *e = NULL;
	int rc = 0;

	*out = 0;
	if (git_config_get_entry(&e, cfg, "commit.gpgsign") < 0 || !e) {
		git_error_clear();
		return 0;
	}
	if (!e->value) /* "[commit] gpgSign": true */
		*out = 1;
	else if (git_config_parse_bool(out, e->value) < 0)
		rc = rq_error_set(err, RQ_E_USAGE,
				  "bad boolean config value '%s' for 'commit.gpgsign'", e->value);
	git_config_entry_free(e);
	return rc;
}

/* The first of the environment variable and the variables that is set
 * (NULL: none): 0, or -1 out of memory. */
static int first_of(git_config *cfg, const char *env, const char *a, const char *b, char **out,
		    rq_error *err)
{
	const char *v = getenv(env);

	*out = NULL;
	if (v && *v)
		return (*out = strdup(v)) ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (get_string(cfg, a, out, NULL, err) < 0)
		return -1;
	return *out ? 0 : get_string(cfg, b, out, NULL, err);
}

/* The committer's "Name <email>" as git finds it, from the trusted places:
 * 0 (c->ident NULL when there is no email), or -1. */
static int get_ident(git_config *cfg, rq_signcfg *c, rq_error *err)
{
	char *name = NULL, *email = NULL;
	const char *env_email = getenv("EMAIL");
	int rc = first_of(cfg, "GIT_COMMITTER_NAME", "committer.name", "user.name", &name, err);

	if (rc == 0)
		rc = first_of(cfg, "GIT_COMMITTER_EMAIL", "committer.email", "user.email", &email,
			      err);
	if (rc == 0 && !email && env_email && *env_email && !(email = strdup(env_email)))
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rc == 0 && email) {
		size_t n = (name ? strlen(name) : 0) + strlen(email) + 4;
		if ((c->ident = malloc(n)))
			snprintf(c->ident, n, "%s%s<%s>", name ? name : "", name ? " " : "", email);
		else
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	free(name);
	free(email);
	return rc;
}

int rq_signcfg_read(rq_signcfg *out, const char *params, rq_error *err)
{
	git_config *cfg = NULL, *snap = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (trusted_config(&cfg, params, err) < 0)
		return -1;
	if (git_config_snapshot(&snap, cfg) < 0) {
		git_config_free(cfg);
		return rq_error_git(err, "cannot read the configuration");
	}
	rc = get_gpgsign(snap, &out->gpgsign, err) < 0 ||
		     get_string(snap, "user.signingkey", &out->signing_key, NULL, err) < 0 ||
		     get_string(snap, "gpg.format", &out->format, NULL, err) < 0 ||
		     openpgp_program(snap, out, err) < 0 ||
		     get_string(snap, "gpg.x509.program", &out->program[RQ_SIGN_X509], NULL, err) <
			 0 ||
		     get_string(snap, "gpg.ssh.program", &out->program[RQ_SIGN_SSH], NULL, err) <
			 0 ||
		     get_ident(snap, out, err) < 0
		 ? -1
		 : 0;
	git_config_free(snap);
	git_config_free(cfg);
	if (rc < 0)
		rq_signcfg_free(out);
	return rc;
}

void rq_signcfg_free(rq_signcfg *c)
{
	free(c->signing_key);
	free(c->format);
	free(c->ident);
	for (int i = 0; i < 3; i++)
		free(c->program[i]);
	memset(c, 0, sizeof(*c));
}

int rq_signcfg_opts(const rq_signcfg *c, const char *key, rq_sign_opts *out, rq_error *err)
{
	memset(out, 0, sizeof(*out));
	out->format = RQ_SIGN_OPENPGP;
	if (c->format && rq_sign_format_parse(c->format, &out->format) < 0)
		return rq_error_set(err, RQ_E_USAGE, "invalid value for 'gpg.format': '%s'",
				    c->format);
	out->key = key && *key ? key : c->signing_key;
	if (!out->key && out->format != RQ_SIGN_SSH)
		out->key = c->ident;
	out->program = c->program[out->format];
	return 0;
}
