/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_gitconfig: a config file read as libgit2 1.5 reads it (see the
 * header). Written after the behaviour of libgit2's config parser
 * (src/libgit2/config_parse.c), which it must match where a file is
 * included.
 */
#include "rq_gitconfig.h"

#include <stdlib.h>
#include <string.h>

#include "rq_buf.h"

typedef struct reader {
	const char *p, *end; /* the rest of the text */
	size_t line;	     /* the number of the line at p */
	const char *why;
	char *section; /* malloc'ed; NULL before the first */
	rq_gitconfig_fn fn;
	void *arg;
} reader;

/* libgit2's whitespace (git__isspace). */
static int ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v';
}

static int alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* The next line (with its '\n') as a string: malloc'ed, NULL at the end
 * of the text (*oom set when memory ran out). */
static char *take_line(reader *r, int *oom)
{
	const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	size_t n = nl ? (size_t)(nl - r->p) + 1 : (size_t)(r->end - r->p);
	char *s;

	if (!n)
		return NULL;
	if (!(s = malloc(n + 1))) {
		*oom = 1;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	r->line++;
	return s;
}

/* Cut the comment (';' or '#' outside quotes, not escaped) and the
 * trailing whitespace off line; the count of quotes seen, starting from
 * quotes (odd: inside a quoted part). */
static int strip_comment(char *line, int quotes)
{
	int backslashes = 0;
	char *p;

	for (p = line; *p; p++) {
		if (*p == '"' && (p == line || p[-1] != '\\'))
			quotes++;
		if ((*p == ';' || *p == '#') && quotes % 2 == 0 && backslashes % 2 == 0)
			break;
		backslashes = *p == '\\' ? backslashes + 1 : 0;
	}
	while (p > line && ws(p[-1]))
		p--;
	*p = '\0';
	return quotes;
}

/* A value's text: quotes dropped, escapes \n \t \b \" \\ read; a
 * backslash at the very end continues the value (*more). Appended to out
 * (its oom set when memory runs out); -1 on a bad escape. */
static int unescape(const char *s, rq_buf *out, int *more)
{
	static const char from[] = "ntb\"\\", to[] = "\n\t\b\"\\";

	*more = 0;
	for (; *s; s++) {
		const char *k;
		char c = *s;
		if (c == '"')
			continue;
		if (c == '\\') {
			if (!*++s) {
				*more = 1;
				break;
			}
			if (!(k = strchr(from, *s)))
				return -1;
			c = to[k - from];
		}
		rq_buf_add(out, &c, 1);
	}
	return 0;
}

static int fail(reader *r, const char *why)
{
	r->why = why;
	return -1;
}

/* The quoted subsection of a header, q at its opening quote: appended to
 * name; the length of the header from line to past its ']', or -1. */
static long subsection(reader *r, const char *line, const char *q, rq_buf *name)
{
	const char *last = strrchr(line, '"');

	if (*q != '"')
		return fail(r, "missing quotation marks in section header");
	if (last == q)
		return fail(r, "missing closing quotation mark in section header");
	rq_buf_add(name, ".", 1);
	for (q++; q < last && *q != '"'; q++) {
		if (*q == '\\' && !*++q)
			return fail(r, "unexpected end-of-line in section header");
		rq_buf_add(name, q, 1);
	}
	if (q[0] != '"' || q[1] != ']')
		return fail(r, "unexpected text after closing quotes");
	return q + 2 - line;
}

/* The name of a section header at line (its '['), lowercased, into
 * name: the length of the header, or -1. */
static long header_name(reader *r, const char *line, rq_buf *name)
{
	const char *p = line + 1;

	if (!strrchr(line, ']'))
		return fail(r, "missing ']' in section header");
	for (; p == line + 1 || *p != ']'; p++) {
		char c = lower(*p);
		if (ws(*p)) {
			while (ws(*++p))
				;
			return subsection(r, line, p, name);
		}
		if (!alnum(*p) && *p != '-' && *p != '.')
			return fail(r, "unexpected character in header");
		rq_buf_add(name, &c, 1);
	}
	return p + 1 - line;
}

/* A section header at line: r->section set; its length, -1 when libgit2
 * refuses it, -2 out of memory. */
static long header(reader *r, const char *line)
{
	rq_buf name = {0};
	long n = header_name(r, line, &name);

	rq_buf_add(&name, "", 0);
	if (n < 0 || name.oom) {
		free(name.p);
		return name.oom ? -2 : -1;
	}
	free(r->section);
	r->section = name.p;
	return n;
}

/* The rest of a value continued on the next lines (after a backslash at
 * the end of a line), appended to value: 0, or -1. A line left empty by
 * its comment is skipped; the text's end ends the value. */
static int continued(reader *r, rq_buf *value, int quotes)
{
	int more = 1, oom = 0;

	while (more) {
		char *line = take_line(r, &oom);
		int q, bad = 0;
		if (!line)
			return oom ? -2 : 0;
		q = strip_comment(line, quotes);
		if (*line)
			bad = unescape(line, value, &more);
		free(line);
		quotes = q;
		if (bad)
			return fail(r, "invalid escape");
	}
	return 0;
}

/* The name of a variable (section "." key, lowercased) into out. */
static void full_name(const reader *r, const char *key, size_t n, rq_buf *out)
{
	if (r->section) {
		rq_buf_str(out, r->section);
		rq_buf_add(out, ".", 1);
	}
	for (size_t i = 0; i < n; i++) {
		char c = lower(key[i]);
		rq_buf_add(out, &c, 1);
	}
	rq_buf_add(out, "", 0);
}

/* A variable's line (line: from its first character; the reader already
 * past it): its name and value handed to fn. 0, fn's return, or -1/-2. */
static int variable(reader *r, char *line)
{
	rq_buf name = {0}, value = {0};
	int quotes = strip_comment(line, 0), more = 0, rc = 0;
	char *p = line;

	while (alnum(*p) || *p == '-')
		p++;
	if (p == line)
		return fail(r, "invalid configuration key");
	full_name(r, line, (size_t)(p - line), &name);
	while (ws(*p))
		p++;
	if (*p && *p != '=')
		rc = fail(r, "invalid configuration key");
	else if (*p == '=') {
		for (p++; ws(*p); p++)
			;
		rq_buf_add(&value, "", 0);
		if (unescape(p, &value, &more) < 0)
			rc = fail(r, "invalid escape");
		else if (more)
			rc = continued(r, &value, quotes % 2);
	}
	if (rc == 0 && (name.oom || value.oom))
		rc = -2;
	if (rc == 0)
		rc = r->fn(name.p, value.p, r->arg);
	free(name.p);
	free(value.p);
	return rc;
}

/* One line (taken, the reader past it) from s on: a header, possibly
 * followed by more on the same line, a comment, or a variable. */
static int one_line(reader *r, char *line)
{
	char *s = line;
	long n;

	for (;;) {
		while (ws(*s))
			s++;
		if (!*s || *s == ';' || *s == '#')
			return 0;
		if (*s != '[')
			return variable(r, s);
		if ((n = header(r, s)) < 0)
			return (int)n;
		s += n;
	}
}

int rq_gitconfig_parse(const char *text, size_t len, rq_gitconfig_fn fn, void *arg, size_t *line,
		       const char **why)
{
	reader r = {text, text + len, 0, NULL, NULL, fn, arg};
	int rc = 0, oom = 0;
	char *l;

	*line = 0;
	*why = NULL;
	if (memchr(text, '\0', len)) {
		const char *z = memchr(text, '\0', len);
		for (const char *p = text; p < z; p++)
			*line += *p == '\n';
		++*line;
		*why = "a NUL byte";
		return -1;
	}
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		r.p += 3; /* a UTF-8 byte order mark */
	while (rc == 0 && (l = take_line(&r, &oom))) {
		size_t at = r.line;
		rc = one_line(&r, l);
		free(l);
		if (rc == -1) {
			*line = at;
			*why = r.why;
		} else if (rc > 0)
			*line = r.line; /* the variable's last line, as git counts */
	}
	free(r.section);
	return oom ? -2 : rc;
}

int rq_gitconfig_is_include(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "include.path"))
		return 1;
	return !strncmp(name, "includeif.", 10) && n >= 15 && !strcmp(name + n - 5, ".path");
}
