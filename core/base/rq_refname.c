/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refname: git's ref name rules (see rq_refname.h). Written after the
 * rules git's check_refname_format documents and applies.
 */
#include "rq_refname.h"

#include <string.h>

/* A byte no component may hold. */
static int bad_byte(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' ||
	       c == '*' || c == '[' || c == '\\';
}

/* The length of the component at s (up to '/' or the end), or -1 when
 * git refuses it. */
static long component(const char *s)
{
	const char *p = s;

	for (; *p && *p != '/'; p++) {
		if (bad_byte((unsigned char)*p))
			return -1;
		if (p > s && p[-1] == '.' && *p == '.')
			return -1; /* ".." */
		if (p > s && p[-1] == '@' && *p == '{')
			return -1; /* "@{" */
	}
	if (p == s || *s == '.')
		return -1; /* empty, or starting with '.' */
	if (p - s >= 5 && !memcmp(p - 5, ".lock", 5))
		return -1;
	return p - s;
}

int rq_refname_format_ok(const char *name)
{
	const char *s = name;
	int parts = 0;

	if (!name || !*name || !strcmp(name, "@"))
		return 0;
	for (;;) {
		long n = component(s);
		if (n < 0)
			return 0;
		parts++;
		s += n;
		if (!*s)
			break;
		s++; /* the '/': a component must follow it */
	}
	return parts >= 2 && s[-1] != '.';
}

int rq_refname_lockable(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, "HEAD"))
		return 1;
	return !strncmp(name, "refs/", 5) && rq_refname_format_ok(name);
}

int rq_refname_worktree_prefix(const char *name)
{
	return !strncmp(name, "refs/worktree/", 14) || !strncmp(name, "refs/bisect/", 12) ||
	       !strncmp(name, "refs/rewritten/", 15);
}
