/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/sign: SSH signatures made in process are byte for byte those of
 * `ssh-keygen -Y sign -n git` (Ed25519 and RSA keys it generated); keys
 * that cannot sign in process (encrypted, public, PEM, damaged, missing)
 * are refused with RQ_E_SIGN_KEY and a message that says what to do; a
 * signing program gets git's arguments and is checked as git checks it
 * (exit status, the SIG_CREATED status line), a missing or failing one is
 * RQ_E_SIGN_FAILED; the gpgsig header is written as git writes it (under
 * "gpgsig-sha256" in a SHA-256 repository, where upstream git's
 * verify-commit accepts it and refuses it under "gpgsig"); the
 * configuration comes from the command line, the global and the system
 * files only; a signer rides on an object database. The SSH wire reader
 * never reads past its end.
 */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_odb.h"
#include "rq_sign.h"
#include "rq_signcfg.h"
#include "rq_sshwire.h"

/* Paths in the scratch directory. */
static char *path_of(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", tu_scratch(), name);
	return p;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_text(const char *name)
{
	return tu_capture_raw(NULL, NULL, "cat '%s'", path_of(name));
}

/* A commit's data, as rq_commit writes one. */
static const char commit_text[] = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
				  "author A U Thor <author@example.com> 1700000000 +0000\n"
				  "committer C O Mitter <committer@example.com> 1700000000 +0000\n"
				  "\n"
				  "subject\n\nbody\n";

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	/* keys as ssh-keygen makes them, once for every test */
	if (tu_run(NULL, "ssh-keygen -q -t ed25519 -N '' -C ed -f ed && "
			 "ssh-keygen -q -t rsa -b 2048 -N '' -C rsa -f rsa && "
			 "ssh-keygen -q -t ed25519 -N secret -C enc -f enc && "
			 "ssh-keygen -q -t rsa -b 1024 -m PEM -N '' -f pem && "
			 "ssh-keygen -q -t ecdsa -N '' -f ecdsa") != 0)
		return -1;
	return 0;
}

static rq_sign *ssh_signer(const char *key)
{
	rq_sign_opts o = {.format = RQ_SIGN_SSH, .key = key, .agent_socket = "/nonexistent"};
	rq_sign *s = NULL;
	rq_error err;

	rq_error_clear(&err);
	if (rq_sign_new(&s, &o, &err) < 0)
		fail_msg("rq_sign_new(%s): %s", key, err.msg);
	return s;
}

/* The in-process signature of the commit's data equals ssh-keygen's. */
static void check_as_ssh_keygen(const char *key)
{
	rq_sign *s = ssh_signer(path_of(key));
	rq_buf sig = {0};
	rq_error err;
	char *want;

	write_file("payload", commit_text);
	assert_int_equal(tu_run(NULL,
				"rm -f payload.sig && ssh-keygen -q -Y sign -n git -f %s "
				"payload 2>/dev/null",
				key),
			 0);
	want = read_text("payload.sig");
	assert_non_null(want);
	assert_int_equal(rq_sign_buffer(s, commit_text, strlen(commit_text), &sig, &err), 0);
	assert_string_equal(sig.p, want);
	assert_int_equal(rq_sign_deterministic(s), 1);
	free(sig.p);
	free(want);
	rq_sign_free(s);
}

static void test_ed25519_as_ssh_keygen(void **state)
{
	(void)state;
	check_as_ssh_keygen("ed");
}

static void test_rsa_as_ssh_keygen(void **state)
{
	(void)state;
	check_as_ssh_keygen("rsa");
}

/* rq_sign_new refuses the key with RQ_E_SIGN_KEY and a message holding
 * `says`. */
static void check_refused(const rq_sign_opts *o, const char *says)
{
	rq_sign *s = (rq_sign *)1;
	rq_error err;

	rq_error_clear(&err);
	assert_int_equal(rq_sign_new(&s, o, &err), -1);
	assert_null(s);
	assert_int_equal(err.code, RQ_E_SIGN_KEY);
	if (!strstr(err.msg, says))
		fail_msg("'%s' does not say '%s'", err.msg, says);
}

static void test_keys_that_cannot_sign_here(void **state)
{
	(void)state;
	rq_sign_opts o = {.format = RQ_SIGN_SSH, .agent_socket = "/nonexistent/agent"};
	char literal[1024];
	char *pub = tu_capture(NULL, "cat ed.pub");

	o.key = path_of("enc");
	check_refused(&o, "is encrypted, and replayq asks for no passphrase: load it into an "
			  "ssh-agent (ssh-add)");
	o.key = path_of("ed.pub");
	check_refused(&o, "is a public key: its private half must be in an ssh-agent");
	snprintf(literal, sizeof(literal), "key::%s", pub);
	o.key = literal;
	check_refused(&o, "'user.signingKey' is a public key");
	o.key = path_of("pem");
	check_refused(&o, "is not in OpenSSH's format");
	o.key = path_of("ecdsa");
	check_refused(&o, "is of type ecdsa-sha2-nistp256: replayq signs with ssh-ed25519 and "
			  "ssh-rsa keys in process");
	o.key = path_of("no-such-key");
	check_refused(&o, "cannot read the signing key");
	write_file("garbage", "not a key at all\n");
	o.key = path_of("garbage");
	check_refused(&o, "is neither an OpenSSH private key nor an SSH public key");
	o.key = NULL;
	check_refused(&o, "user.signingKey needs to be set for ssh signing");
	o.agent = 1;
	check_refused(&o, "cannot ask the ssh-agent");
	free(pub);
}

/* A private key whose base64 lost a line, and one whose check bytes
 * differ, are damaged. */
static void test_damaged_keys(void **state)
{
	(void)state;
	rq_sign_opts o = {.format = RQ_SIGN_SSH, .agent_socket = "/nonexistent"};

	assert_int_equal(tu_run(NULL, "sed 3d rsa > cut && chmod 600 cut"), 0);
	o.key = path_of("cut");
	check_refused(&o, "cut");
	/* the two check words start the private section; change one */
	assert_int_equal(tu_run(NULL,
				"sed -n '2,/END/p' ed | grep -v END | base64 -d > raw && "
				"python3 -c \"import sys; b=bytearray(open('raw','rb').read()); "
				"i=b.find(b'ssh-ed25519', b.find(b'ssh-ed25519')+1)-12; b[i]^=1; "
				"sys.stdout.buffer.write(b)\" > raw2 && "
				"(echo '-----BEGIN OPENSSH PRIVATE KEY-----'; base64 -w 70 raw2; "
				"echo '-----END OPENSSH PRIVATE KEY-----') > flipped"),
			 0);
	o.key = path_of("flipped");
	check_refused(&o, "the signing key '");
}

/* The header: "gpgsig" and the signature's first line, its other lines
 * each after a space, at the end of the header; without it the commit
 * is what it was. (In process, the header's lines are written as the
 * armour is made: an RSA key's are more than the room first made.) */
static void check_commit_header(const char *key, const rq_oid_algo *algo)
{
	rq_sign *s = ssh_signer(path_of(key));
	rq_buf b = {0}, sig = {0}, want = {0};
	rq_error err;
	const char *eoh = strstr(commit_text, "\n\n") + 1;
	char first[64];

	rq_buf_str(&b, commit_text);
	assert_int_equal(rq_sign_buffer(s, commit_text, strlen(commit_text), &sig, &err), 0);
	assert_int_equal(rq_sign_commit(s, algo, &b, &err), 0);
	rq_buf_add(&want, commit_text, (size_t)(eoh - commit_text));
	rq_buf_str(&want, algo == &rq_oid_sha256 ? "gpgsig-sha256" : "gpgsig");
	for (char *line = strtok(sig.p, "\n"); line; line = strtok(NULL, "\n")) {
		rq_buf_str(&want, " ");
		rq_buf_str(&want, line);
		rq_buf_str(&want, "\n");
	}
	rq_buf_str(&want, eoh);
	assert_string_equal(b.p, want.p);
	snprintf(first, sizeof(first), "\n%s -----BEGIN SSH SIGNATURE-----\n ",
		 algo == &rq_oid_sha256 ? "gpgsig-sha256" : "gpgsig");
	assert_non_null(strstr(b.p, first));
	assert_non_null(strstr(b.p, "\n -----END SSH SIGNATURE-----\n\nsubject\n"));
	free(b.p);
	free(sig.p);
	free(want.p);
	rq_sign_free(s);
}

static void test_commit_header(void **state)
{
	(void)state;
	check_commit_header("ed", NULL);
	check_commit_header("rsa", &rq_oid_sha1);
	check_commit_header("ed", &rq_oid_sha256);
	check_commit_header("rsa", &rq_oid_sha256);
}

/* The header by object format, as git's commit.c picks it. */
static void test_header_by_format(void **state)
{
	(void)state;
	assert_string_equal(rq_sign_header(NULL), "gpgsig");
	assert_string_equal(rq_sign_header(&rq_oid_sha1), "gpgsig");
	assert_string_equal(rq_sign_header(&rq_oid_sha256), "gpgsig-sha256");
}

/* Upstream git (RQ_UPSTREAM_GIT, ../shared/upstream-git/git beside the
 * source tree, /work/shared/upstream-git/git) into out: 1, or 0. */
static int find_upstream(char *out)
{
	const char *cand[3] = {getenv("RQ_UPSTREAM_GIT"), NULL, "/work/shared/upstream-git/git"};
	char here[PATH_MAX];

	snprintf(here, sizeof(here), "%s", __FILE__);
	*strrchr(here, '/') = '\0';
	strncat(here, "/../../../shared/upstream-git/git", sizeof(here) - strlen(here) - 1);
	cand[1] = here;
	for (int i = 0; i < 3; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], out) && access(out, X_OK) == 0)
			return 1;
	return 0;
}

/* The commit_text of a SHA-256 repository (its empty tree), signed under
 * header, written by upstream git into repo: `git verify-commit`'s exit
 * status and output (in out). */
static int verify_sha256(const char *ug, tu_repo *r, const char *header, char **out)
{
	rq_sign *s = ssh_signer(path_of("ed"));
	const char *tree =
	    "tree 6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321\n";
	const char *rest = strchr(commit_text, '\n') + 1;
	rq_buf b = {0};
	rq_error err;
	char *id;
	int rc;

	rq_buf_str(&b, tree);
	rq_buf_str(&b, rest);
	assert_int_equal(rq_sign_commit(s, &rq_oid_sha256, &b, &err), 0);
	if (strcmp(header, "gpgsig-sha256")) { /* the same signature under another name */
		char *at = strstr(b.p, "\ngpgsig-sha256 ");
		memmove(at + 7, at + 14, strlen(at + 14) + 1);
	}
	write_file("signed-commit", b.p);
	id = tu_capture(r, "'%s' hash-object -t commit -w --stdin <'%s'", ug,
			path_of("signed-commit"));
	assert_non_null(id);
	assert_int_equal(strlen(id), 64);
	write_file("allowed", "ed ");
	rc = tu_run(r,
		    "cat '%s' >>'%s' && '%s' -c gpg.ssh.allowedSignersFile='%s' verify-commit %s "
		    ">'%s' 2>&1",
		    path_of("ed.pub"), path_of("allowed"), ug, path_of("allowed"), id,
		    path_of("verify-out"));
	*out = read_text("verify-out");
	free(id);
	free(b.p);
	rq_sign_free(s);
	return rc;
}

/* In a SHA-256 repository (made by upstream git 2.55), upstream's
 * verify-commit accepts a commit signed here (gpgsig-sha256), and finds no
 * signature under "gpgsig", the SHA-1 header. */
static void test_sha256_verifies_upstream(void **state)
{
	char ug[PATH_MAX], *out;
	tu_repo *r;

	(void)state;
	if (!find_upstream(ug))
		skip();
	r = tu_repo_new(0);
	tu_git(r, "rm -rf .git && '%s' init -q --object-format=sha256 .", ug);
	assert_int_equal(verify_sha256(ug, r, "gpgsig-sha256", &out), 0);
	if (!strstr(out, "Good \"git\" signature for ed with"))
		fail_msg("verify-commit: %s", out);
	free(out);
	assert_int_not_equal(verify_sha256(ug, r, "gpgsig", &out), 0);
	free(out);
	tu_repo_free(r);
}

/* ---- programs ---- */

static rq_sign *program_signer(rq_sign_format f, const char *program, const char *key)
{
	rq_sign_opts o = {.format = f, .key = key, .program = program};
	rq_sign *s = NULL;
	rq_error err;

	assert_int_equal(rq_sign_new(&s, &o, &err), 0);
	return s;
}

/* The program signs: 0, or -1 with err filled. */
static int program_sign(const char *program, rq_buf *sig, rq_error *err)
{
	rq_sign *s = program_signer(RQ_SIGN_OPENPGP, program, "KEY ID");
	int rc = rq_sign_buffer(s, commit_text, strlen(commit_text), sig, err);

	rq_sign_free(s);
	return rc;
}

static void test_gpg_arguments_and_checks(void **state)
{
	(void)state;
	rq_buf sig = {0};
	rq_error err;
	char *args, *input;

	write_file("fake-gpg", "#!/bin/sh\n"
			       "printf '%s|' \"$@\" > \"$HOME/fake-gpg.args\"\n"
			       "cat > \"$HOME/fake-gpg.in\"\n"
			       "echo '[GNUPG:] KEY_CONSIDERED X' >&2\n"
			       "echo '[GNUPG:] SIG_CREATED D 22 8 00 1 X' >&2\n"
			       "printf -- '-----BEGIN PGP SIGNATURE-----\\r\\n\\r\\nabc\\r\\n'\n"
			       "printf -- '-----END PGP SIGNATURE-----\\r\\n'\n");
	assert_int_equal(tu_run(NULL, "chmod +x fake-gpg"), 0);
	assert_int_equal(program_sign(path_of("fake-gpg"), &sig, &err), 0);
	assert_string_equal(sig.p, "-----BEGIN PGP SIGNATURE-----\n\nabc\n"
				   "-----END PGP SIGNATURE-----\n");
	args = read_text("fake-gpg.args");
	input = read_text("fake-gpg.in");
	assert_string_equal(args, "--status-fd=2|-bsau|KEY ID|");
	assert_string_equal(input, commit_text);
	free(args);
	free(input);
	free(sig.p);
}

static void check_fails(const char *script, const char *says)
{
	rq_buf sig = {0};
	rq_error err;

	write_file("bad-gpg", script);
	assert_int_equal(tu_run(NULL, "chmod +x bad-gpg"), 0);
	rq_error_clear(&err);
	assert_int_equal(program_sign(path_of("bad-gpg"), &sig, &err), -1);
	assert_int_equal(err.code, RQ_E_SIGN_FAILED);
	if (!strstr(err.msg, says))
		fail_msg("'%s' does not say '%s'", err.msg, says);
	assert_int_equal(sig.len, 0);
	free(sig.p);
}

static void test_program_failures(void **state)
{
	(void)state;
	rq_buf sig = {0};
	rq_error err;

	/* exits non-zero (it reads nothing: no SIGPIPE may kill us) */
	check_fails("#!/bin/sh\necho 'gpg: no secret key' >&2\nexit 2\n",
		    "failed to sign the data (exit status 2): gpg: no secret key");
	/* exits 0 but never says it signed */
	check_fails("#!/bin/sh\ncat >/dev/null\necho sig\n", "(exit status 0): (no output)");
	/* the status line must start a line */
	check_fails("#!/bin/sh\ncat >/dev/null\necho 'x [GNUPG:] SIG_CREATED ' >&2\necho sig\n",
		    "(exit status 0): x [GNUPG:] SIG_CREATED");
	/* killed */
	check_fails("#!/bin/sh\nkill -9 $$\n", "(exit status 137)");
	rq_error_clear(&err);
	assert_int_equal(program_sign(path_of("no-such-gpg"), &sig, &err), -1);
	assert_int_equal(err.code, RQ_E_SIGN_FAILED);
	assert_non_null(strstr(err.msg, "cannot run the signing program"));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	free(sig.p);
}

/* An ssh program gets ssh-keygen's arguments: -f the key file, or for a
 * literal key a temporary file holding it and -U; its <file>.sig is the
 * signature. */
static void test_ssh_program(void **state)
{
	(void)state;
	rq_buf sig = {0};
	rq_error err;
	rq_sign *s;
	char *args, *key;

	write_file("fake-ssh",
		   "#!/bin/sh\n"
		   "cd \"$HOME\"\n"
		   "printf '%s|' \"$@\" | sed 's|/[^|]*/replayq-sign-[a-z]*-[^|]*|TMP|g' > "
		   "fake-ssh.args\n"
		   "for a; do f=$a; done\n"
		   "[ \"$7\" = -U ] && cp \"$6\" fake-ssh.key\n"
		   "cmp -s \"$f\" payload-want && printf 'SIG\\r\\n' > \"$f.sig\"\n");
	write_file("payload-want", commit_text);
	assert_int_equal(tu_run(NULL, "chmod +x fake-ssh && mkdir -p tmp"), 0);
	setenv("TMPDIR", path_of("tmp"), 1);
	s = program_signer(RQ_SIGN_SSH, path_of("fake-ssh"), "key::ssh-ed25519 AAAAliteral");
	assert_int_equal(rq_sign_buffer(s, commit_text, strlen(commit_text), &sig, &err), 0);
	assert_string_equal(sig.p, "SIG\n");
	args = read_text("fake-ssh.args");
	key = read_text("fake-ssh.key");
	assert_string_equal(args, "-Y|sign|-n|git|-f|TMP|-U|TMP|");
	assert_string_equal(key, "ssh-ed25519 AAAAliteral");
	assert_int_equal(rq_sign_deterministic(s), 0);
	free(args);
	free(key);
	free(sig.p);
	rq_sign_free(s);
	/* no temporary file is left */
	assert_int_equal(tu_count_entries(path_of("tmp"), "", ""), 0);
	unsetenv("TMPDIR");
}

/* ---- configuration ---- */

static void test_config_trusted_places(void **state)
{
	(void)state;
	rq_signcfg c;
	rq_sign_opts o;
	rq_error err;

	write_file("system.cfg", "[gpg]\n\tformat = x509\n\tprogram = sys-gpg\n"
				 "[user]\n\tsigningKey = system-key\n");
	write_file("global.cfg", "[commit]\n\tgpgSign\n[gpg]\n\tformat = ssh\n"
				 "[gpg \"ssh\"]\n\tprogram = my-ssh\n"
				 "[user]\n\tsigningKey = ~/global-key\n\temail = g@example.com\n");
	setenv("GIT_CONFIG_GLOBAL", path_of("global.cfg"), 1);
	setenv("GIT_CONFIG_SYSTEM", path_of("system.cfg"), 1);
	unsetenv("GIT_CONFIG_NOSYSTEM");
	unsetenv("GIT_COMMITTER_EMAIL");
	assert_int_equal(rq_signcfg_read(&c, "'user.signingkey'='cmdline-key'", &err), 0);
	assert_int_equal(c.gpgsign, 1);
	assert_string_equal(c.signing_key, "cmdline-key");
	assert_string_equal(c.format, "ssh");
	assert_string_equal(c.program[RQ_SIGN_SSH], "my-ssh");
	assert_string_equal(c.program[RQ_SIGN_OPENPGP], "sys-gpg");
	assert_null(c.program[RQ_SIGN_X509]);
	assert_string_equal(c.ident, TU_COMMITTER_NAME " <g@example.com>");
	assert_int_equal(rq_signcfg_opts(&c, "-S key", &o, &err), 0);
	assert_string_equal(o.key, "-S key");
	assert_string_equal(o.program, "my-ssh");
	rq_signcfg_free(&c);
	/* the system's when the global says nothing; none with NOSYSTEM */
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	assert_int_equal(rq_signcfg_read(&c, NULL, &err), 0);
	assert_string_equal(c.signing_key, "system-key");
	assert_int_equal(c.gpgsign, 0);
	assert_null(c.ident);
	rq_signcfg_free(&c);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	assert_int_equal(rq_signcfg_read(&c, "'gpg.format'='bogus'", &err), 0);
	assert_null(c.signing_key);
	assert_int_equal(rq_signcfg_opts(&c, NULL, &o, &err), -1);
	assert_int_equal(err.code, RQ_E_USAGE);
	assert_string_equal(err.msg, "invalid value for 'gpg.format': 'bogus'");
	rq_signcfg_free(&c);
	assert_int_equal(rq_signcfg_read(&c, "'commit.gpgsign'='maybe'", &err), -1);
	assert_int_equal(err.code, RQ_E_USAGE);
	unsetenv("GIT_CONFIG_SYSTEM");
	setenv("GIT_COMMITTER_EMAIL", TU_COMMITTER_EMAIL, 1);
}

/* OpenPGP without a key: the committer's "Name <email>", as git. */
static void test_config_openpgp_default_key(void **state)
{
	(void)state;
	rq_signcfg c;
	rq_sign_opts o;
	rq_error err;

	assert_int_equal(rq_signcfg_read(&c, NULL, &err), 0);
	assert_int_equal(rq_signcfg_opts(&c, "", &o, &err), 0);
	assert_int_equal(o.format, RQ_SIGN_OPENPGP);
	assert_null(o.program);
	assert_string_equal(o.key, TU_COMMITTER_NAME " <" TU_COMMITTER_EMAIL ">");
	rq_signcfg_free(&c);
}

/* ---- the signer on an object database ---- */

static void test_attached_to_odb(void **state)
{
	(void)state;
	git_odb *odb = NULL;
	rq_sign *s = ssh_signer(path_of("ed"));
	rq_buf b = {0};
	rq_error err;

	assert_int_equal(git_odb_new(&odb), 0);
	rq_buf_str(&b, commit_text);
	assert_int_equal(rq_sign_odb_commit(odb, &b, &err), 0);
	assert_string_equal(b.p, commit_text); /* no signer: as it was */
	assert_int_equal(rq_sign_attach(odb, NULL, &err), 0);
	assert_int_equal(rq_sign_odb_commit(odb, &b, &err), 0);
	assert_string_equal(b.p, commit_text);
	assert_int_equal(rq_sign_attach(odb, s, &err), 0);
	assert_int_equal(rq_sign_odb_commit(odb, &b, &err), 0);
	assert_non_null(strstr(b.p, "\ngpgsig -----BEGIN SSH SIGNATURE-----\n"));
	git_odb_free(odb); /* frees what was attached, not the signer */
	rq_sign_free(s);
	free(b.p);
}

/* On a database of SHA-256 (rq_odb_opts.algo), the attached signer writes
 * the SHA-256 header. */
static void test_attached_to_sha256_odb(void **state)
{
	rq_odb_opts o = {.algo = &rq_oid_sha256};
	rq_sign *s = ssh_signer(path_of("ed"));
	tu_repo *r = tu_repo_new(0);
	git_odb *odb = NULL;
	rq_buf b = {0};
	rq_error err;

	(void)state;
	assert_int_equal(rq_odb_new(&odb, tu_repo_open(r), &o, &err), 0);
	assert_ptr_equal(rq_odb_algo(odb), &rq_oid_sha256);
	assert_int_equal(rq_sign_attach(odb, s, &err), 0);
	rq_buf_str(&b, commit_text);
	assert_int_equal(rq_sign_odb_commit(odb, &b, &err), 0);
	assert_non_null(strstr(b.p, "\ngpgsig-sha256 -----BEGIN SSH SIGNATURE-----\n"));
	assert_null(strstr(b.p, "\ngpgsig "));
	git_odb_free(odb);
	rq_sign_free(s);
	tu_repo_free(r);
	free(b.p);
}

/* ---- the wire ---- */

static void test_wire_reader_bounds(void **state)
{
	(void)state;
	static const unsigned char data[] = {0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 9, 'x'};
	rq_sshwire r;
	size_t n;

	rq_sshwire_init(&r, data, sizeof(data));
	assert_true(rq_sshwire_string_is(&r, "abc"));
	assert_null(rq_sshwire_string(&r, &n)); /* 9 bytes announced, 1 there */
	assert_int_equal(n, 0);
	assert_true(r.bad);
	assert_int_equal(rq_sshwire_u32(&r), 0);
	assert_int_equal(rq_sshwire_left(&r), 0);
	rq_sshwire_init(&r, data, 3);
	assert_int_equal(rq_sshwire_u32(&r), 0);
	assert_true(r.bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ed25519_as_ssh_keygen),
	    cmocka_unit_test(test_rsa_as_ssh_keygen),
	    cmocka_unit_test(test_keys_that_cannot_sign_here),
	    cmocka_unit_test(test_damaged_keys),
	    cmocka_unit_test(test_commit_header),
	    cmocka_unit_test(test_header_by_format),
	    cmocka_unit_test(test_sha256_verifies_upstream),
	    cmocka_unit_test(test_gpg_arguments_and_checks),
	    cmocka_unit_test(test_program_failures),
	    cmocka_unit_test(test_ssh_program),
	    cmocka_unit_test(test_config_trusted_places),
	    cmocka_unit_test(test_config_openpgp_default_key),
	    cmocka_unit_test(test_attached_to_odb),
	    cmocka_unit_test(test_attached_to_sha256_odb),
	    cmocka_unit_test(test_wire_reader_bounds),
	};
	return cmocka_run_group_tests(tests, group_setup, tu_group_teardown);
}
