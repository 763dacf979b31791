/* SPDX-License-Identifier: GPL-2.0-only; follows git's wildmatch.c for what a pattern means */
/*
 * rq_wildmatch: git's patterns (see rq_wildmatch.h). The pattern becomes a
 * list of tokens; the text is run through them as a set of live states
 * (an NFA), one character at a time.
 */
#include "rq_wildmatch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum {
	T_LIT,	 /* one character */
	T_ONE,	 /* '?' */
	T_CLASS, /* "[...]" */
	T_STAR,	 /* a run without '/' ('*' with RQ_WM_PATHNAME) */
	T_ANY,	 /* any run ('*' without it, a trailing or lone "**") */
	T_DIRS	 /* "**" + "/": nothing, or any run that ends in '/' */
};

typedef struct token {
	int kind;
	unsigned char c;
	const char *body; /* T_CLASS: between '[' (and any '!' or '^') and ']' */
	size_t blen;
	int neg;
} token;

static unsigned char fold(unsigned char c, int flags)
{
	return (flags & RQ_WM_CASEFOLD) ? (unsigned char)tolower(c) : c;
}

/* A "[:name:]" class at b (n bytes from its '[') on c: 1, 0, or -1 when
 * the name is none of POSIX's (git gives up on the pattern then). */
static int named_class(const char *name, size_t len, unsigned char c, int flags)
{
	static const char *const names[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
					    "lower", "print", "punct", "space", "upper", "xdigit"};
	int (*const tests[])(int) = {isalnum, isalpha, isblank, iscntrl, isdigit, isgraph,
				     islower, isprint, ispunct, isspace, isupper, isxdigit};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i]) != len || memcmp(names[i], name, len))
			continue;
		if ((flags & RQ_WM_CASEFOLD) && (i == 6 || i == 10)) /* lower, upper */
			return isalpha(c) != 0;
		return tests[i](c) != 0;
	}
	return -1;
}

/* Does the bracket body hold c? 1 or 0. */
static int class_has(const token *t, unsigned char c, int flags)
{
	const char *b = t->body, *e = t->body + t->blen;
	int have_prev = 0;
	unsigned char prev = 0;

	for (const char *p = b; p < e;) {
		unsigned char m;
		if (*p == '[' && p + 1 < e && p[1] == ':') {
			const char *close = p + 2;
			while (close + 1 < e && !(close[0] == ':' && close[1] == ']'))
				close++;
			if (named_class(p + 2, (size_t)(close - p - 2), c, flags) > 0)
				return 1;
			p = close + 2;
			have_prev = 0;
			continue;
		}
		if (*p == '-' && have_prev && p + 1 < e) {
			unsigned char hi = (unsigned char)(p[1] == '\\' && p + 2 < e ? p[2] : p[1]);
			p += p[1] == '\\' && p + 2 < e ? 3 : 2;
			if ((c >= prev && c <= hi) ||
			    ((flags & RQ_WM_CASEFOLD) && (((unsigned char)toupper(c) >= prev &&
							   (unsigned char)toupper(c) <= hi) ||
							  ((unsigned char)tolower(c) >= prev &&
							   (unsigned char)tolower(c) <= hi))))
				return 1;
			have_prev = 0;
			continue;
		}
		m = (unsigned char)(*p == '\\' && p + 1 < e ? *++p : *p);
		p++;
		if (fold(m, flags) == fold(c, flags))
			return 1;
		prev = m;
		have_prev = 1;
	}
	return 0;
}

/* The end of the bracket at p (just past '['): its ']', or NULL when the
 * bracket is not closed or names an unknown class (git gives up then). */
static const char *bracket_end(const char *p, const char *e)
{
	if (p < e && (*p == '!' || *p == '^'))
		p++;
	if (p < e && *p == ']')
		p++;
	while (p < e && *p != ']') {
		if (*p == '\\') {
			p += 2;
		} else if (*p == '[' && p + 1 < e && p[1] == ':') {
			const char *close = p + 2;
			while (close + 1 < e && !(close[0] == ':' && close[1] == ']'))
				close++;
			if (close + 1 >= e ||
			    named_class(p + 2, (size_t)(close - p - 2), 'a', 0) < 0)
				return NULL;
			p = close + 2;
		} else {
			p++;
		}
	}
	return p < e ? p : NULL;
}

/* The stars at p (run of them): T_ANY, T_DIRS (its '/' taken too) or
 * T_STAR; *len: the pattern bytes taken. */
static int stars(const char *pat, const char *p, const char *e, int flags, size_t *len)
{
	const char *q = p;

	while (q < e && *q == '*')
		q++;
	*len = (size_t)(q - p);
	if (!(flags & RQ_WM_PATHNAME))
		return T_ANY;
	if (q - p < 2 || (p > pat && p[-1] != '/'))
		return T_STAR;
	if (q == e)
		return T_ANY;
	if (*q != '/')
		return T_STAR;
	(*len)++;
	return T_DIRS;
}

/* The pattern as tokens (v: room for plen); their count, or -1 when the
 * pattern is malformed. */
static long tokenize(const char *pat, size_t plen, int flags, token *v)
{
	const char *p = pat, *e = pat + plen;
	long n = 0;

	while (p < e) {
		token *t = &v[n++];
		size_t len = 1;
		memset(t, 0, sizeof(*t));
		t->kind = T_LIT;
		t->c = (unsigned char)*p;
		if (*p == '\\') {
			if (p + 1 >= e)
				return -1;
			t->c = (unsigned char)p[1];
			len = 2;
		} else if (*p == '?') {
			t->kind = T_ONE;
		} else if (*p == '*') {
			t->kind = stars(pat, p, e, flags, &len);
		} else if (*p == '[') {
			const char *close = bracket_end(p + 1, e);
			if (!close)
				return -1;
			t->kind = T_CLASS;
			t->neg = p[1] == '!' || p[1] == '^';
			t->body = p + 1 + t->neg;
			t->blen = (size_t)(close - t->body);
			len = (size_t)(close + 1 - p);
		}
		p += len;
	}
	return n;
}

/* From every live state, the empty runs of the star tokens. */
static void closure(const token *v, long n, unsigned char *at)
{
	for (long i = 0; i < n; i++)
		if (at[i] && (v[i].kind == T_STAR || v[i].kind == T_ANY || v[i].kind == T_DIRS))
			at[i + 1] = 1;
}

/* One character c through the live states (at, in: inside a T_DIRS) into
 * the next ones (nat, nin). */
static void step(const token *v, long n, const unsigned char *at, const unsigned char *in,
		 unsigned char *nat, unsigned char *nin, unsigned char c, int flags)
{
	int slash_ok = !(flags & RQ_WM_PATHNAME) || c != '/';

	memset(nat, 0, (size_t)n + 1);
	memset(nin, 0, (size_t)n + 1);
	for (long i = 0; i < n; i++) {
		const token *t = &v[i];
		if (in[i] || (at[i] && t->kind == T_DIRS)) {
			nin[i] = 1;
			if (c == '/')
				nat[i + 1] = 1;
		}
		if (!at[i])
			continue;
		if ((t->kind == T_LIT && fold(t->c, flags) == fold(c, flags)) ||
		    (t->kind == T_ONE && slash_ok) ||
		    (t->kind == T_CLASS && slash_ok && class_has(t, c, flags) != t->neg))
			nat[i + 1] = 1;
		else if ((t->kind == T_STAR && slash_ok) || t->kind == T_ANY)
			nat[i] = 1;
	}
	closure(v, n, nat);
}

int rq_wildmatch(const char *pattern, size_t plen, const char *text, size_t tlen, int flags)
{
	token *v = malloc((plen ? plen : 1) * sizeof(*v));
	unsigned char *st = NULL;
	long n;
	int rc = 0;

	if (!v)
		return -1;
	if ((n = tokenize(pattern, plen, flags, v)) < 0)
		goto out;
	if (!(st = calloc(4, (size_t)n + 1))) {
		rc = -1;
		goto out;
	}
	st[0] = 1;
	closure(v, n, st);
	for (size_t k = 0; k < tlen; k++) {
		unsigned char *at = st + (k % 2) * 2 * ((size_t)n + 1), *in = at + n + 1;
		unsigned char *nat = st + ((k + 1) % 2) * 2 * ((size_t)n + 1), *nin = nat + n + 1;
		step(v, n, at, in, nat, nin, (unsigned char)text[k], flags);
	}
	rc = st[(tlen % 2) * 2 * ((size_t)n + 1) + (size_t)n];
out:
	free(st);
	free(v);
	return rc;
}
