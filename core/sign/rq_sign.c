/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's gpg-interface.c (how user.signingKey names an SSH key) and
 * commit.c (where the "gpgsig" header goes and how its lines continue) */
/*
 * rq_sign: the signer and the signed commit (see rq_sign.h).
 */
#include "rq_sign.h"

#include <git2/sys/odb_backend.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_odb.h"
#include "rq_signprog.h"
#include "rq_sshagent.h"
#include "rq_sshkey.h"
#include "rq_sshsig.h"
#include "rq_sshwire.h"

#define NAMESPACE "git"

struct rq_sign {
	rq_sign_format format;
	rq_sshkey *key;	    /* ssh: the key; private: it signs here */
	rq_sshagent *agent; /* ssh: the agent holding the key's private half */
	char *program;	    /* a program signs */
	char *keyarg;	    /* the key as the program gets it */
	int literal;	    /* an ssh program: keyarg is a public key, not a file */
};

static const char *const format_names[] = {"openpgp", "x509", "ssh"};

const char *rq_sign_format_name(rq_sign_format f)
{
	return format_names[f];
}

int rq_sign_format_parse(const char *name, rq_sign_format *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, format_names[i])) {
			*out = (rq_sign_format)i;
			return 0;
		}
	return -1;
}

/* git's literal SSH key: "key::<key>", or a key starting with "ssh-"; the
 * key itself in *key. */
static int literal_key(const char *s, const char **key)
{
	if (!strncmp(s, "key::", 5)) {
		*key = s + 5;
		return 1;
	}
	*key = s;
	return !strncmp(s, "ssh-", 4);
}

/* A key file's path with "~/" and "~user/" expanded, as git's
 * interpolate_path: 0, or -1 with RQ_E_SIGN_KEY. */
static int expand_path(const char *path, char *out, size_t size, rq_error *err)
{
	const char *rest = path, *home = NULL;
	char user[256];
	size_t ul;

	if (path[0] == '~') {
		rest = path + 1 + strcspn(path + 1, "/");
		ul = (size_t)(rest - path - 1);
		if (!ul) {
			home = getenv("HOME");
		} else if (ul < sizeof(user)) {
			struct passwd *pw;
			memcpy(user, path + 1, ul);
			user[ul] = '\0';
			home = (pw = getpwnam(user)) ? pw->pw_dir : NULL;
		}
		if (!home)
			return rq_error_set(err, RQ_E_SIGN_KEY, "cannot expand '%s'", path);
	}
	if ((size_t)snprintf(out, size, "%s%s", home ? home : "", rest) >= size)
		return rq_error_set(err, RQ_E_SIGN_KEY, "the key path '%s' is too long", path);
	return 0;
}

/* ---- SSH: which key, signed where ---- */

/* The agent's identities: the first (want NULL) or the one whose blob is
 * want's. 1 found (with want NULL: *first made), 0 not there, -1 err. */
static int agent_find(rq_sign *s, const rq_sshkey *want, rq_sshkey **first, rq_error *err)
{
	rq_buf ids = {0};
	rq_sshwire r;
	uint32_t n;
	size_t wl = 0, bl, cl;
	const unsigned char *w = want ? rq_sshkey_blob(want, &wl) : NULL, *b;
	int found = 0;

	if (rq_sshagent_identities(s->agent, &ids, &n, err) < 0)
		return -1;
	rq_sshwire_init(&r, ids.p, ids.len);
	for (uint32_t i = 0; i < n && !found; i++) {
		b = rq_sshwire_string(&r, &bl);
		rq_sshwire_string(&r, &cl); /* its comment */
		if (!b)
			break;
		if (!want)
			found = rq_sshkey_from_blob(first, b, bl, err) < 0 ? -1 : 1;
		else
			found = bl == wl && !memcmp(b, w, wl);
	}
	free(ids.p);
	return found;
}

/* Why the agent cannot sign for the key named `name`: RQ_E_SIGN_KEY. */
static int agent_lacks(const rq_sign *s, const char *name, int reached, rq_error *err)
{
	const char *why =
	    reached ? "the ssh-agent does not hold it" : "no ssh-agent answers (SSH_AUTH_SOCK)";
	switch (rq_sshkey_kind_of(s->key)) {
	case RQ_SSHKEY_ENCRYPTED:
		return rq_error_set(
		    err, RQ_E_SIGN_KEY,
		    "the signing key '%s' is encrypted, and replayq asks for no "
		    "passphrase: load it into an ssh-agent (ssh-add) and sign through "
		    "the agent; %s",
		    name, why);
	case RQ_SSHKEY_PUBLIC:
		return rq_error_set(
		    err, RQ_E_SIGN_KEY,
		    "the signing key '%s' is a public key: its private half must be "
		    "in an ssh-agent; %s",
		    name, why);
	default:
		return rq_error_set(err, RQ_E_SIGN_KEY,
				    "cannot sign with '%s' through an agent: %s", name, why);
	}
}

/* Sign through the agent, which must hold s->key (or, with no key, its
 * first key becomes s->key): 0, or -1 with RQ_E_SIGN_KEY. */
static int use_agent(rq_sign *s, const rq_sign_opts *opts, const char *name, rq_error *err)
{
	rq_error e;
	int found;

	if (rq_sshagent_new(&s->agent, opts->agent_socket, &e) < 0)
		return s->key ? agent_lacks(s, name, 0, err)
			      : rq_error_set(err, e.code, "%s", e.msg);
	found = agent_find(s, s->key, s->key ? NULL : &s->key, &e);
	if (found < 0 && !s->key)
		return rq_error_set(err, e.code, "%s", e.msg);
	if (found == 0 && !s->key)
		return rq_error_set(err, RQ_E_SIGN_KEY, "the ssh-agent holds no key");
	if (found <= 0)
		return agent_lacks(s, name, found == 0, err);
	return 0;
}

/* The SSH key opts name, read and checked: 0, or -1 with err set. */
static int open_ssh(rq_sign *s, const rq_sign_opts *opts, rq_error *err)
{
	char path[PATH_MAX];
	const char *lit;
	int rc;

	if (!opts->key || !*opts->key) {
		if (!opts->agent)
			return rq_error_set(err, RQ_E_SIGN_KEY,
					    "user.signingKey needs to be set for ssh signing");
		return use_agent(s, opts, "the agent's first key", err);
	}
	if (literal_key(opts->key, &lit))
		rc = rq_sshkey_parse_public(&s->key, lit, strlen(lit), err);
	else
		rc = expand_path(opts->key, path, sizeof(path), err) < 0
			 ? -1
			 : rq_sshkey_load_file(&s->key, path, err);
	if (rc < 0)
		return -1;
	if (rq_sshkey_kind_of(s->key) == RQ_SSHKEY_PRIVATE && !opts->agent)
		return 0; /* in process */
	return use_agent(s, opts, literal_key(opts->key, &lit) ? "user.signingKey" : opts->key,
			 err);
}

/* A program signs: its name and its key argument. 0, or -1 with err set. */
static int open_program(rq_sign *s, const rq_sign_opts *opts, rq_error *err)
{
	static const char *const defaults[] = {"gpg", "gpgsm", "ssh-keygen"};
	const char *key = opts->key, *lit;
	char path[PATH_MAX];

	if (!key || !*key)
		return rq_error_set(err, RQ_E_SIGN_KEY, "%s",
				    opts->format == RQ_SIGN_SSH
					? "user.signingKey needs to be set for ssh signing"
					: "no signing key given");
	if (opts->format == RQ_SIGN_SSH) {
		s->literal = literal_key(key, &lit);
		if (s->literal)
			key = lit;
		else if (expand_path(key, path, sizeof(path), err) < 0)
			return -1;
		else
			key = path;
	}
	s->program = strdup(opts->program ? opts->program : defaults[opts->format]);
	s->keyarg = strdup(key);
	if (!s->program || !s->keyarg)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

int rq_sign_new(rq_sign **out, const rq_sign_opts *opts, rq_error *err)
{
	rq_sign *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	s->format = opts->format;
	if (opts->format == RQ_SIGN_SSH && !opts->program)
		rc = open_ssh(s, opts, err);
	else
		rc = open_program(s, opts, err);
	if (rc < 0) {
		rq_sign_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void rq_sign_free(rq_sign *s)
{
	if (!s)
		return;
	rq_sshkey_free(s->key);
	rq_sshagent_free(s->agent);
	free(s->program);
	free(s->keyarg);
	free(s);
}

int rq_sign_deterministic(const rq_sign *s)
{
	if (s->format != RQ_SIGN_SSH)
		return 0;
	if (!s->key) /* an ssh program: its key's type is its own business */
		return 0;
	return rq_sshkey_is_rsa(s->key) || !strcmp(rq_sshkey_type(s->key), "ssh-ed25519");
}

/* ---- signing ---- */

/* The SSHSIG signature of payload, in process or by the agent, appended
 * to sig, each of its lines after prefix (see rq_sshsig_armor). */
static int sign_ssh(rq_sign *s, const void *payload, size_t len, const char *prefix, rq_buf *sig,
		    rq_error *err)
{
	rq_buf data = {0}, blob = {0};
	size_t kl;
	const unsigned char *key = rq_sshkey_blob(s->key, &kl);
	int rsa = rq_sshkey_is_rsa(s->key), rc;

	rq_sshsig_signed_data(NAMESPACE, payload, len, &data);
	if (data.oom)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (s->agent)
		rc = rq_sshagent_sign(s->agent, key, kl, data.p, data.len,
				      rsa ? RQ_SSHAGENT_RSA_SHA2_512 : 0, &blob, err);
	else
		rc = rq_sshkey_sign(s->key, data.p, data.len, &blob, err);
	if (rc == 0 && rsa && (blob.len < 16 || memcmp(blob.p, "\0\0\0\x0crsa-sha2-512", 16)))
		rc = rq_error_set(err, RQ_E_SIGN_FAILED,
				  "the ssh-agent did not sign with rsa-sha2-512");
	if (rc == 0)
		rq_sshsig_armor(NAMESPACE, key, kl, blob.p, blob.len, prefix, sig);
	if (rc == 0 && (blob.oom || sig->oom))
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	free(data.p);
	free(blob.p);
	return rc;
}

int rq_sign_buffer(rq_sign *s, const void *payload, size_t len, rq_buf *sig, rq_error *err)
{
	if (!s->program)
		return sign_ssh(s, payload, len, "", sig, err);
	if (s->format == RQ_SIGN_SSH)
		return rq_signprog_ssh(s->program, s->keyarg, s->literal, payload, len, sig, err);
	return rq_signprog_gpg(s->program, s->keyarg, payload, len, sig, err);
}

/* Where the header ends in b: after the newline before the first empty
 * line (all of b when there is none). */
static size_t header_end(const rq_buf *b)
{
	const char *eoh = b->len ? strstr(b->p, "\n\n") : NULL;

	return eoh ? (size_t)(eoh - b->p) + 1 : b->len;
}

/* The lines of b, a last one without a newline counted. */
static size_t lines_of(const rq_buf *b)
{
	size_t n = b->len && b->p[b->len - 1] != '\n';

	for (const char *p = b->p; p && (p = memchr(p, '\n', (size_t)(b->p + b->len - p))); p++)
		n++;
	return n;
}

const char *rq_sign_header(const rq_oid_algo *algo)
{
	/* git's commit.c: the signature of the repository's hash algorithm */
	return algo == &rq_oid_sha256 ? "gpgsig-sha256" : "gpgsig";
}

/* b's header up to at, the header (name) of sig's lines, the rest of b:
 * the signed commit in out. */
static void put_signed(const rq_buf *b, size_t at, const char *name, const rq_buf *sig, rq_buf *out)
{
	/* room for all of it at once: the header's name, a space a line */
	out->cap = b->len + strlen(name) + sig->len + lines_of(sig) + 1;
	if (!(out->p = malloc(out->cap))) {
		out->cap = 0;
		out->oom = 1;
		return;
	}
	rq_buf_add(out, b->p, at);
	rq_buf_str(out, name);
	for (const char *line = sig->p, *end = sig->p + sig->len; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
		rq_buf_add(out, " ", 1); /* a continued header line; the first follows the name */
		rq_buf_add(out, line, n);
		line += n;
	}
}

/* In process (SSH, no program): the header's lines written where they go,
 * as the armour is made, without a copy of the signature in between. */
static int sign_in_place(rq_sign *s, const rq_buf *b, size_t at, const char *name, rq_buf *out,
			 rq_error *err)
{
	/* the signature's header of an Ed25519 key is 356 bytes */
	out->cap = b->len + 512;
	if (!(out->p = malloc(out->cap))) {
		out->cap = 0;
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	rq_buf_add(out, b->p, at);
	rq_buf_str(out, name);
	return sign_ssh(s, b->p, b->len, " ", out, err);
}

int rq_sign_commit(rq_sign *s, const rq_oid_algo *algo, rq_buf *b, rq_error *err)
{
	rq_buf sig = {0}, out = {0};
	size_t at = header_end(b);
	const char *name = rq_sign_header(algo);
	int rc = 0;

	if (!s->program)
		rc = sign_in_place(s, b, at, name, &out, err);
	else if ((rc = rq_sign_buffer(s, b->p, b->len, &sig, err)) == 0)
		put_signed(b, at, name, &sig, &out);
	free(sig.p);
	if (rc == 0)
		rq_buf_add(&out, b->p + at, b->len - at);
	if (rc == 0 && out.oom)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rc < 0) {
		free(out.p);
		return -1;
	}
	free(b->p);
	*b = out;
	return 0;
}

/* ---- the signer attached to an object database ---- */

typedef struct sign_carrier {
	git_odb_backend parent; /* no function but free: libgit2 passes it over */
	rq_sign *sign;
	const rq_oid_algo *algo; /* the database's format: its signature header */
} sign_carrier;

static void carrier_free(git_odb_backend *b)
{
	free(b);
}

int rq_sign_attach(git_odb *odb, rq_sign *s, rq_error *err)
{
	sign_carrier *c;

	if (!s)
		return 0;
	if (!(c = calloc(1, sizeof(*c))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_odb_init_backend(&c->parent, GIT_ODB_BACKEND_VERSION);
	c->parent.free = carrier_free;
	c->sign = s;
	c->algo = rq_odb_algo(odb);			   /* read once, before the carrier is in */
	if (git_odb_add_backend(odb, &c->parent, 0) < 0) { /* the lowest priority: last */
		free(c);
		return rq_error_git(err, "cannot attach the signer");
	}
	return 0;
}

int rq_sign_odb_commit(git_odb *odb, rq_buf *b, rq_error *err)
{
	size_t n = git_odb_num_backends(odb);

	for (size_t i = n; i-- > 0;) {
		git_odb_backend *be = NULL;
		if (git_odb_get_backend(&be, odb, i) == 0 && be && be->free == carrier_free)
			return rq_sign_commit(((sign_carrier *)be)->sign,
					      ((sign_carrier *)be)->algo, b, err);
	}
	return 0;
}
