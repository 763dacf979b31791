/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * follows git's replay.c (create_commit), commit.c (find_commit_header,
 * read_commit_extra_header_lines, commit_tree_extended), pretty.c
 * (repo_logmsg_reencode, replace_encoding_header, find_commit_subject) and
 * sequencer.c (the revert message)
 */
/*
 * rq_commit: build commit objects byte for byte from the original's raw
 * data, as git replay does.
 */
#define _GNU_SOURCE /* memmem */
#include "rq_commit.h"
#include "rq_buf.h"
#include "rq_i18n.h"
#include "rq_odb_mem.h"
#include "rq_odb_view.h"
#include "rq_sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char rq_commit_utf8_warning[] =
    "Warning: commit message did not conform to UTF-8.\n"
    "You may want to amend it after fixing the message, or set the config\n"
    "variable i18n.commitEncoding to the encoding your project uses.\n";

/* A stretch of text: not NUL-terminated. */
typedef struct span {
	const char *p;
	size_t len;
} span;

/* An encoding name holds no space and no control character. */
static int encoding_name(const char *v)
{
	while (*v && (unsigned char)*v > ' ' && *v != 0x7f)
		v++;
	return !*v;
}

int rq_commit_cfg_load(rq_commit_cfg *cfg, git_repository *repo, rq_error *err)
{
	git_config *c = NULL, *snap = NULL;
	const char *v = NULL;
	int rc = 0;

	cfg->encoding = NULL;
	if (git_repository_config(&c, repo) == 0 && git_config_snapshot(&snap, c) == 0 &&
	    git_config_get_string(&v, snap, "i18n.commitEncoding") == 0 && v && !encoding_name(v))
		rc = rq_error_set(err, RQ_E_BAD_REPO, /* (git writes it: a header of its own) */
				  "i18n.commitEncoding holds a space or a control character");
	else if (v && !(cfg->encoding = strdup(v)))
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_config_free(snap);
	git_config_free(c);
	git_error_clear(); /* an unset key is no error */
	return rc;
}

void rq_commit_cfg_free(rq_commit_cfg *cfg)
{
	free(cfg->encoding);
	cfg->encoding = NULL;
}

/* ---- reading the original, as git reads it ---- */

/*
 * git's find_commit_header(): the value of the first header line "<key>
 * <value>" of msg (a NUL-free text of len bytes), up to the header's
 * blank line. 1 found (*v), 0 not.
 */
static int find_header(const char *msg, size_t len, const char *key, span *v)
{
	size_t klen = strlen(key);
	const char *line = msg, *end = msg + len;

	while (line) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		if (line == eol)
			return 0;
		if ((size_t)(eol - line) > klen && !memcmp(line, key, klen) && line[klen] == ' ') {
			v->p = line + klen + 1;
			v->len = (size_t)(eol - v->p);
			return 1;
		}
		line = eol < end ? eol + 1 : NULL;
	}
	return 0;
}

/*
 * git's replace_encoding_header(): the first header line that starts with
 * "encoding " is removed (to is UTF-8) or names to instead.
 */
static void replace_encoding(rq_buf *m, const char *to)
{
	char *start = m->p, *nl;
	rq_buf out = {0};

	while (strncmp(start, "encoding ", 9) != 0) {
		start = strchr(start, '\n');
		if (!start || *++start == '\n')
			return;
	}
	if (!(nl = strchr(start, '\n')))
		return;
	rq_buf_add(&out, m->p, (size_t)(start - m->p));
	if (!rq_i18n_is_utf8(to)) {
		rq_buf_str(&out, "encoding ");
		rq_buf_str(&out, to);
		rq_buf_add(&out, "\n", 1);
	}
	rq_buf_add(&out, nl + 1, m->len - (size_t)(nl + 1 - m->p));
	free(m->p);
	*m = out;
}

/*
 * git's repo_logmsg_reencode() into the commit encoding `to`: the
 * original's bytes up to the first NUL, converted from its "encoding"
 * header (none: UTF-8) when that differs, the header then dropped (or
 * naming `to`); a conversion that fails leaves the bytes as they are. The
 * result is cut at a NUL too (git reads it as a C string). 0, or -1 with
 * m->oom.
 */
static int reencoded(const char *data, size_t size, const char *to, rq_buf *m)
{
	size_t clen = strnlen(data, size), olen = 0;
	char enc[128], *conv = NULL;
	span e;
	int has = find_header(data, clen, "encoding", &e);
	const char *from = "UTF-8";

	if (has) {
		snprintf(enc, sizeof(enc), "%.*s", (int)e.len, e.p);
		from = enc;
	}
	memset(m, 0, sizeof(*m));
	if (!rq_i18n_same(from, to))
		conv = rq_i18n_reencode(data, clen, to, from, &olen);
	if (conv) {
		rq_buf_add(m, conv, strnlen(conv, olen));
		free(conv);
	} else {
		rq_buf_add(m, data, clen);
	}
	if (!m->p)
		rq_buf_add(m, "", 0);
	if (m->oom)
		return -1;
	if (conv || (has && rq_i18n_same(from, to)))
		replace_encoding(m, to);
	return m->oom ? -1 : 0;
}

/* git's isspace(): space, tab, LF and CR only. */
static int git_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * git's find_commit_subject(): where the message starts, after the
 * header's blank line and the blank lines after it (skip_blank_lines).
 */
static const char *message_start(const char *msg, size_t len)
{
	const char *end = msg + len, *p = memmem(msg, len, "\n\n", 2);

	if (!p)
		return end;
	p += 2;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl + 1 : end, *q = eol;
		while (q > p && git_space(q[-1]))
			q--;
		if (q > p)
			break;
		p = eol;
	}
	return p;
}

/* ---- the extra headers ---- */

static int is_field(const char *key, size_t len, const char *const *names)
{
	for (; *names; names++)
		if (strlen(*names) == len && !memcmp(key, *names, len))
			return 1;
	return 0;
}

/* One extra header as git's add_extra_header() writes it: the key (up to
 * a NUL), then each line of the value after a space, or a newline. */
static void write_extra(rq_buf *b, span key, const rq_buf *value)
{
	rq_buf_add(b, key.p, strnlen(key.p, key.len));
	if (!value->len) {
		rq_buf_add(b, "\n", 1);
		return;
	}
	for (size_t i = 0; i < value->len;) {
		const char *nl = memchr(value->p + i, '\n', value->len - i);
		size_t n = nl ? (size_t)(nl + 1 - (value->p + i)) : value->len - i;
		rq_buf_add(b, " ", 1);
		rq_buf_add(b, value->p + i, n);
		i += n;
	}
	if (b->len && b->p[b->len - 1] != '\n')
		rq_buf_add(b, "\n", 1);
}

/*
 * git's read_commit_extra_header_lines() over the original's raw bytes,
 * each kept field written into b: a field is a line and the continuation
 * lines (starting with a space) after it; its key runs to the first space
 * (a line without one is all key); the standard fields and the signatures
 * are left out, with their continuation lines.
 */
static void write_extras(rq_buf *b, const char *data, size_t size)
{
	static const char *const skip[] = {"tree",     "parent", "author",	  "committer",
					   "encoding", "gpgsig", "gpgsig-sha256", NULL};
	const char *line = data, *eob = data + size;
	rq_buf value = {0};
	span key = {NULL, 0};
	int have = 0;

	for (; line < eob && *line != '\n';) {
		const char *nl = memchr(line, '\n', (size_t)(eob - line));
		const char *next = nl ? nl + 1 : eob, *sp;
		if (*line == ' ') {
			if (have)
				rq_buf_add(&value, line + 1, (size_t)(next - line - 1));
			line = next;
			continue;
		}
		if (have)
			write_extra(b, key, &value);
		have = 0;
		value.len = 0;
		sp = memchr(line, ' ', (size_t)(next - line));
		if (sp && is_field(line, (size_t)(sp - line), skip)) {
			line = next;
			continue;
		}
		key.p = line;
		key.len = (size_t)((sp ? sp : next) - line);
		have = 1;
		if (sp && sp + 1 < next)
			rq_buf_add(&value, sp + 1, (size_t)(next - sp - 1));
		line = next;
	}
	if (have)
		write_extra(b, key, &value);
	b->oom |= value.oom;
	free(value.p);
}

/* ---- writing ---- */

static void buf_oid_line(rq_buf *b, const char *key, const rq_oid *oid, const rq_oid_algo *algo)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];
	rq_oid_fmt(hex, oid, algo);
	rq_buf_str(b, key);
	rq_buf_add(b, hex, algo->hexsz);
	rq_buf_add(b, "\n", 1);
}

/* The format cfg writes ids at (SHA-1 without a cfg or format). */
static const rq_oid_algo *cfg_algo(const rq_commit_cfg *cfg)
{
	return cfg && cfg->algo ? cfg->algo : &rq_oid_sha1;
}

/* The original as git reads it (replacements applied, headers as they
 * are): from the job's commits, else from odb (*obj, to free). */
static int read_raw(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *id, span *raw,
		    git_odb_object **obj, rq_error *err)
{
	const rq_cobj_commit *c = NULL;

	*obj = NULL;
	if (cfg && cfg->commits) {
		if (rq_cobj_get(cfg->commits, id, &c, err) < 0)
			return -1;
		*raw = (span){c->raw, c->len};
		return 0;
	}
	if (rq_odb_view_read_stored(obj, odb, id) < 0)
		return rq_error_git(err, "cannot read commit");
	if (git_odb_object_type(*obj) != GIT_OBJECT_COMMIT) {
		git_odb_object_free(*obj);
		*obj = NULL;
		return rq_error_set(err, RQ_E_BAD_REVISION, "object is not a commit");
	}
	*raw = (span){git_odb_object_data(*obj), git_odb_object_size(*obj)};
	return 0;
}

/* Write the commit made in b (freed): 0, or -1. */
static int write_commit(git_odb *odb, rq_buf *b, rq_oid *out, rq_error *err)
{
	int rc = 0;
	if (b->oom)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (rq_sign_odb_commit(odb, b, err) < 0) /* the replay's signer, if any */
		rc = -1;
	else if (rq_odb_mem_write(out, odb, b->p, b->len, GIT_OBJECT_COMMIT) < 0)
		rc = rq_error_git(err, "failed to write commit object");
	free(b->p);
	return rc;
}

/* The header lines up to the committer's, as commit_tree_extended()
 * writes them, and the "encoding" header i18n.commitEncoding asks for. */
static void write_head(rq_buf *b, const rq_commit_cfg *cfg, const rq_oid *tree,
		       const rq_oid *parents, size_t nparents, span author, const char *committer)
{
	const char *enc = cfg ? cfg->encoding : NULL;

	buf_oid_line(b, "tree ", tree, cfg_algo(cfg));
	for (size_t i = 0; i < nparents; i++)
		buf_oid_line(b, "parent ", &parents[i], cfg_algo(cfg));
	rq_buf_str(b, "author ");
	rq_buf_add(b, author.p, author.len);
	rq_buf_str(b, "\ncommitter ");
	rq_buf_str(b, committer);
	rq_buf_add(b, "\n", 1);
	if (!rq_i18n_is_utf8(enc)) {
		rq_buf_str(b, "encoding ");
		rq_buf_str(b, enc);
		rq_buf_add(b, "\n", 1);
	}
}

/* The extra headers, the blank line and the message, then git's UTF-8
 * check; the commit written. 0, 1 (converted: git warns), or -1. */
static int finish_commit(git_odb *odb, const rq_commit_cfg *cfg, rq_buf *b, span orig, span message,
			 rq_oid *out, rq_error *err)
{
	int valid = 1;

	write_extras(b, orig.p, orig.len);
	rq_buf_add(b, "\n", 1);
	rq_buf_add(b, message.p, message.len);
	if (!b->oom && rq_i18n_is_utf8(cfg ? cfg->encoding : NULL) &&
	    (valid = rq_i18n_utf8_fix(b)) < 0)
		b->oom = 1;
	if (write_commit(odb, b, out, err) < 0)
		return -1;
	return !valid;
}

/* The original (*raw, in *obj when read from odb) re-encoded: *obj and
 * *m (both for the caller to free). */
static int read_original(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig, span *raw,
			 git_odb_object **obj, rq_buf *m, rq_error *err)
{
	const char *to = cfg && cfg->encoding ? cfg->encoding : "UTF-8";

	if (read_raw(odb, cfg, orig, raw, obj, err) < 0)
		return -1;
	if (reencoded(raw->p, raw->len, to, m) < 0) {
		git_odb_object_free(*obj);
		free(m->p);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

int rq_commit_pick(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig, const rq_oid *tree,
		   const rq_oid *parent, const char *committer, rq_oid *out, rq_error *err)
{
	return rq_commit_pick_parents(odb, cfg, orig, tree, parent, parent ? 1 : 0, committer, out,
				      err);
}

int rq_commit_pick_parents(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig,
			   const rq_oid *tree, const rq_oid *parents, size_t nparents,
			   const char *committer, rq_oid *out, rq_error *err)
{
	git_odb_object *obj = NULL;
	rq_buf m, b = {0};
	span author, message, raw;
	int rc;

	if (read_original(odb, cfg, orig, &raw, &obj, &m, err) < 0)
		return -1;
	if (!find_header(m.p, m.len, "author", &author)) {
		if (!cfg || !cfg->author) {
			git_odb_object_free(obj);
			free(m.p);
			return rq_error_set(err, RQ_E_BAD_REVISION, "commit has no author");
		}
		author.p = cfg->author;
		author.len = strlen(cfg->author);
	}
	message.p = message_start(m.p, m.len);
	message.len = (size_t)(m.p + m.len - message.p);
	write_head(&b, cfg, tree, parents, nparents, author, committer);
	rc = finish_commit(odb, cfg, &b, raw, message, out, err);
	git_odb_object_free(obj);
	free(m.p);
	return rc;
}

char *rq_commit_revert_message(const char *message, size_t len, const char *hex)
{
	const char *nl = memchr(message, '\n', len);
	size_t slen = nl ? (size_t)(nl - message) : len;
	rq_buf b = {0};
	const char *rp = "Revert \"";
	size_t rpl = strlen(rp);

	if (slen >= rpl && !memcmp(message, rp, rpl) &&
	    !(slen >= 2 * rpl && !memcmp(message + rpl, rp, rpl))) {
		rq_buf_str(&b, "Reapply \"");
		rq_buf_add(&b, message + rpl, slen - rpl);
	} else {
		rq_buf_str(&b, rp);
		rq_buf_add(&b, message, slen);
		rq_buf_str(&b, "\"");
	}
	rq_buf_str(&b, "\n\nThis reverts commit ");
	rq_buf_str(&b, hex);
	rq_buf_str(&b, ".\n");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

int rq_commit_revert(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig, const rq_oid *tree,
		     const rq_oid *parent, const char *author, const char *committer, rq_oid *out,
		     rq_error *err)
{
	git_odb_object *obj = NULL;
	char hex[RQ_OID_MAX_HEXSZ + 1];
	const char *subject;
	span a = {author, strlen(author)}, message, raw;
	rq_buf m, b = {0};
	char *text;
	int rc;

	if (read_original(odb, cfg, orig, &raw, &obj, &m, err) < 0)
		return -1;
	rq_oid_fmt(hex, orig, cfg_algo(cfg));
	subject = message_start(m.p, m.len);
	text = rq_commit_revert_message(subject, (size_t)(m.p + m.len - subject), hex);
	free(m.p);
	if (!text) {
		git_odb_object_free(obj);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	message.p = text;
	message.len = strlen(text);
	write_head(&b, cfg, tree, parent, parent ? 1 : 0, a, committer);
	rc = finish_commit(odb, cfg, &b, raw, message, out, err);
	git_odb_object_free(obj);
	free(text);
	return rc;
}

int rq_commit_merge(git_odb *odb, const rq_oid_algo *algo, const rq_oid *tree,
		    const rq_oid *parents, size_t nparents, const char *author,
		    const char *committer, const char *message, rq_oid *out, rq_error *err)
{
	size_t mlen = strlen(message);
	rq_buf b = {0};

	buf_oid_line(&b, "tree ", tree, algo);
	for (size_t i = 0; i < nparents; i++)
		buf_oid_line(&b, "parent ", &parents[i], algo);
	rq_buf_str(&b, "author ");
	rq_buf_str(&b, author);
	rq_buf_str(&b, "\ncommitter ");
	rq_buf_str(&b, committer);
	rq_buf_str(&b, "\n\n");
	rq_buf_add(&b, message, mlen);
	if (!mlen || message[mlen - 1] != '\n')
		rq_buf_add(&b, "\n", 1);
	return write_commit(odb, &b, out, err);
}
