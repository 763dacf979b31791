/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's sequencer.c for what a pick keeps and a revert's message */
/*
 * rq_commit: build commit objects byte for byte from the original's raw
 * data.
 */
#include "rq_commit.h"
#include "rq_buf.h"
#include "rq_odb_mem.h"
#include "rq_sign.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void buf_oid_line(rq_buf *b, const char *key, const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), oid);
	rq_buf_str(b, key);
	rq_buf_add(b, hex, GIT_OID_HEXSZ);
	rq_buf_add(b, "\n", 1);
}

/* Start of the message: after the header's blank line, blank lines skipped. */
static const char *message_start(const char *data, size_t len, const char **header_end)
{
	const char *end = data + len, *sep = NULL, *p;

	for (p = data; p + 1 < end; p++) {
		if (p[0] == '\n' && p[1] == '\n') {
			sep = p;
			break;
		}
	}
	if (!sep) {
		*header_end = end;
		return end;
	}
	*header_end = sep + 1; /* the header keeps its last newline */
	p = sep + 2;
	while (p < end) { /* skip lines made only of white space */
		const char *q = p;
		while (q < end && *q != '\n' && isspace((unsigned char)*q))
			q++;
		if (q < end && *q != '\n')
			break;
		p = q < end ? q + 1 : end;
	}
	return p;
}

static int header_key_is(const char *line, size_t len, const char *key)
{
	size_t k = strlen(key);
	return len >= k && !memcmp(line, key, k) && (len == k || line[k] == ' ');
}

static int read_raw(git_odb *odb, const git_oid *id, git_odb_object **obj, rq_error *err)
{
	if (git_odb_read(obj, odb, id) < 0)
		return rq_error_git(err, "cannot read commit");
	if (git_odb_object_type(*obj) != GIT_OBJECT_COMMIT) {
		git_odb_object_free(*obj);
		*obj = NULL;
		return rq_error_set(err, RQ_E_BAD_REVISION, "object is not a commit");
	}
	return 0;
}

/* Write the commit made in b (freed). */
static int write_commit(git_odb *odb, rq_buf *b, git_oid *out, rq_error *err)
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

/*
 * The original's header fields a pick keeps: *author (its line, without
 * a copy), and in extra the fields other than tree, parent, committer and
 * the signatures, each ending in a newline. A field is its line and its
 * continuation lines (those that start with a space).
 */
static void keep_fields(const char *data, const char *hend, const char **author, size_t *author_len,
			rq_buf *extra)
{
	for (const char *p = data; p < hend;) {
		const char *f = p, *nl;
		do {
			nl = memchr(p, '\n', (size_t)(hend - p));
			p = nl ? nl + 1 : hend;
		} while (p < hend && *p == ' ');
		size_t flen = (size_t)(p - f);
		const char *eol = memchr(f, '\n', flen);
		size_t first = (size_t)((eol ? eol : p) - f);
		if (header_key_is(f, first, "author")) {
			*author = f;
			*author_len = flen;
			continue;
		}
		if (header_key_is(f, first, "tree") || header_key_is(f, first, "parent") ||
		    header_key_is(f, first, "committer") || header_key_is(f, first, "gpgsig") ||
		    header_key_is(f, first, "gpgsig-sha256"))
			continue;
		rq_buf_add(extra, f, flen);
		if (f[flen - 1] != '\n')
			rq_buf_add(extra, "\n", 1);
	}
}

int rq_commit_pick(git_odb *odb, const git_oid *orig, const git_oid *tree, const git_oid *parent,
		   const char *committer, git_oid *out, rq_error *err)
{
	git_odb_object *obj = NULL;
	const char *data, *end, *hend, *msg, *author = NULL;
	size_t author_len = 0;
	rq_buf b = {0}, extra = {0};

	if (read_raw(odb, orig, &obj, err) < 0)
		return -1;
	data = git_odb_object_data(obj);
	end = data + git_odb_object_size(obj);
	msg = message_start(data, (size_t)(end - data), &hend);
	keep_fields(data, hend, &author, &author_len, &extra);
	if (!author) {
		git_odb_object_free(obj);
		free(extra.p);
		return rq_error_set(err, RQ_E_BAD_REVISION, "commit has no author");
	}
	buf_oid_line(&b, "tree ", tree);
	if (parent)
		buf_oid_line(&b, "parent ", parent);
	rq_buf_add(&b, author, author_len);
	if (author[author_len - 1] != '\n')
		rq_buf_add(&b, "\n", 1);
	rq_buf_str(&b, "committer ");
	rq_buf_str(&b, committer);
	rq_buf_add(&b, "\n", 1);
	if (extra.len)
		rq_buf_add(&b, extra.p, extra.len);
	rq_buf_add(&b, "\n", 1);
	rq_buf_add(&b, msg, (size_t)(end - msg));
	b.oom |= extra.oom;
	free(extra.p);
	git_odb_object_free(obj);
	return write_commit(odb, &b, out, err);
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

int rq_commit_revert(git_odb *odb, const git_oid *orig, const git_oid *tree, const git_oid *parent,
		     const char *author, const char *committer, git_oid *out, rq_error *err)
{
	git_odb_object *obj = NULL;
	const char *data, *end, *hend, *msg;
	char hex[GIT_OID_HEXSZ + 1];
	char *text;
	rq_buf b = {0};

	if (read_raw(odb, orig, &obj, err) < 0)
		return -1;
	data = git_odb_object_data(obj);
	end = data + git_odb_object_size(obj);
	msg = message_start(data, (size_t)(end - data), &hend);
	git_oid_tostr(hex, sizeof(hex), orig);
	text = rq_commit_revert_message(msg, (size_t)(end - msg), hex);
	git_odb_object_free(obj);
	if (!text)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	buf_oid_line(&b, "tree ", tree);
	if (parent)
		buf_oid_line(&b, "parent ", parent);
	rq_buf_str(&b, "author ");
	rq_buf_str(&b, author);
	rq_buf_str(&b, "\ncommitter ");
	rq_buf_str(&b, committer);
	rq_buf_str(&b, "\n\n");
	rq_buf_str(&b, text);
	free(text);
	return write_commit(odb, &b, out, err);
}

int rq_commit_merge(git_odb *odb, const git_oid *tree, const git_oid *parents, size_t nparents,
		    const char *author, const char *committer, const char *message, git_oid *out,
		    rq_error *err)
{
	size_t mlen = strlen(message);
	rq_buf b = {0};

	buf_oid_line(&b, "tree ", tree);
	for (size_t i = 0; i < nparents; i++)
		buf_oid_line(&b, "parent ", &parents[i]);
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
