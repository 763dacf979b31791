/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revparse: the syntax of one revision name (see rq_revparse.h).
 *
 * The rules are git's (object-name.c: get_oid_1 reads the suffixes from
 * the right, peel_onion the "^{...}" forms, get_oid_basic the "@{...}"
 * forms; Documentation/revisions.txt); the code is replayq's.
 */
#include "rq_revparse.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void rq_revparse_free(rq_revparse *p)
{
	free(p->steps);
	memset(p, 0, sizeof(*p));
}

/* s[0..len) as a count: 0, or -1 (empty, not all digits, over INT_MAX). */
static int read_count(const char *s, size_t len, long *out)
{
	long n = 0;

	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		n = n * 10 + (s[i] - '0');
		if (n > INT_MAX)
			return -1;
	}
	*out = n;
	return 0;
}

/* "^{...}"'s content: 0, or -1 (an unknown type, an empty text). As
 * before replayq had its own parser (libgit2's), "^{object}" is unknown. */
static int read_peel(const char *c, size_t len, rq_revparse_step *st)
{
	static const struct {
		const char *name;
		rq_revparse_type type;
	} types[] = {{"commit", RQ_REVPARSE_COMMIT},
		     {"tree", RQ_REVPARSE_TREE},
		     {"blob", RQ_REVPARSE_BLOB},
		     {"tag", RQ_REVPARSE_TAG}};

	st->kind = RQ_REVPARSE_PEEL;
	if (!len) {
		st->type = RQ_REVPARSE_NONTAG;
		return 0;
	}
	if (c[0] == '/') {
		st->kind = RQ_REVPARSE_SEARCH;
		st->text = c + 1;
		st->len = len - 1;
		return st->len ? 0 : -1;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++)
		if (strlen(types[i].name) == len && !memcmp(types[i].name, c, len)) {
			st->type = types[i].type;
			return 0;
		}
	return -1;
}

/*
 * The last suffix of s[0..*len) into *st, *len cut before it: 1 taken, 0
 * none (s[0..*len) is the base), -1 a suffix git does not take.
 */
static int read_suffix(const char *s, size_t *len, rq_revparse_step *st)
{
	size_t n = *len, i;

	memset(st, 0, sizeof(*st));
	if (n && s[n - 1] == '}') {
		/* the last "^{" opens it (git's peel_onion) */
		for (i = n - 1; i > 1 && !(s[i - 1] == '{' && s[i - 2] == '^'); i--)
			;
		if (i <= 1)
			return 0; /* no "^{": an "@{...}" or a name */
		if (read_peel(s + i, n - 1 - i, st) < 0)
			return -1;
		*len = i - 2;
		return 1;
	}
	for (i = n; i > 0 && isdigit((unsigned char)s[i - 1]); i--)
		;
	if (i == 0 || (s[i - 1] != '~' && s[i - 1] != '^'))
		return 0;
	st->kind = s[i - 1] == '~' ? RQ_REVPARSE_ANCESTOR : RQ_REVPARSE_PARENT;
	st->n = 1;
	if (i < n && read_count(s + i, n - i, &st->n) < 0)
		return -1;
	*len = i - 1;
	return 1;
}

/* The "@{...}" ending the base, if any: 0, or -1 (not a form git takes). */
static int read_at(rq_revparse *p)
{
	const char *s = p->base, *c;
	size_t n = p->base_len, a, clen;

	if (n < 3 || s[n - 1] != '}')
		return 0;
	for (a = n - 2; a > 0 && !(s[a] == '@' && s[a + 1] == '{'); a--)
		;
	if (!(s[a] == '@' && s[a + 1] == '{'))
		return 0;
	c = s + a + 2;
	clen = n - 1 - (a + 2);
	p->base_len = a;
	if (clen && c[0] == '-') {
		/* "@{-N}": only as the whole base (git's nth prior checkout) */
		p->at = RQ_REVPARSE_AT_PRIOR;
		return a == 0 && read_count(c + 1, clen - 1, &p->at_n) == 0 && p->at_n > 0 ? 0 : -1;
	}
	if ((clen == 1 && c[0] == 'u') || (clen == 8 && !memcmp(c, "upstream", 8)))
		p->at = RQ_REVPARSE_AT_UPSTREAM;
	else if (clen == 4 && !memcmp(c, "push", 4))
		p->at = RQ_REVPARSE_AT_PUSH;
	else if (read_count(c, clen, &p->at_n) == 0)
		p->at = RQ_REVPARSE_AT_REFLOG;
	else if (clen && isdigit((unsigned char)c[0]) && strspn(c, "0123456789") == clen)
		return -1; /* a count over INT_MAX */
	else {
		p->at = RQ_REVPARSE_AT_DATE;
		p->at_text = c;
		p->at_len = clen;
	}
	return 0;
}

/* The steps were read from the right: put them in the order to apply. */
static void reverse_steps(rq_revparse *p)
{
	for (size_t i = 0; i < p->nsteps / 2; i++) {
		rq_revparse_step t = p->steps[i];
		p->steps[i] = p->steps[p->nsteps - 1 - i];
		p->steps[p->nsteps - 1 - i] = t;
	}
}

int rq_revparse_read(const char *expr, rq_revparse *out)
{
	size_t len = strlen(expr), max = 1;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (!strncmp(expr, ":/", 2)) {
		/* the whole rest is the text, '~' and '^' included, as in git */
		out->search_all = 1;
		out->base = expr + 2;
		out->base_len = len - 2;
		return out->base_len ? 0 : 1;
	}
	for (const char *c = expr; *c; c++)
		max += *c == '~' || *c == '^';
	if (!(out->steps = calloc(max, sizeof(*out->steps))))
		return -1;
	while (out->nsteps < max && (r = read_suffix(expr, &len, &out->steps[out->nsteps])) == 1)
		out->nsteps++;
	out->base = expr;
	out->base_len = len;
	reverse_steps(out);
	if (r < 0 || !len || read_at(out) < 0) {
		rq_revparse_free(out);
		return 1;
	}
	return 0;
}

int rq_revparse_hex(const rq_oid_algo *algo, const char *s, size_t len, rq_oid *out)
{
	char lower[RQ_OID_MAX_HEXSZ];

	if (len < RQ_OID_MIN_PREFIX || len > algo->hexsz)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return 0;
		lower[i] = (char)tolower((unsigned char)s[i]);
	}
	if (len == algo->hexsz)
		return rq_oid_parse(out, algo, lower, len) == 0 ? 2 : 0;
	return rq_oid_parse_prefix(out, algo, lower, len) == 0 ? 1 : 0;
}
