/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pattern: a regular expression's syntax and expansion, read once from
 * left to right (see rq_pattern.h). The rules are those of glibc's
 * regcomp (posix/regcomp.c) for RE_SYNTAX_POSIX_BASIC and
 * RE_SYNTAX_POSIX_EXTENDED, as its error codes tell them: REG_EBRACK,
 * REG_EPAREN, REG_EBRACE, REG_BADBR, REG_ESIZE, REG_BADRPT, REG_ECTYPE,
 * REG_ERANGE, REG_ESUBREG, REG_EESCAPE. The reading is replayq's own.
 */
#include "rq_pattern.h"

#include <string.h>

#define DUP_MAX	  32767 /* glibc's RE_DUP_MAX */
#define DEPTH_MAX 64	/* groups inside groups: deeper is refused */
#define OVER	  ((size_t)RQ_PATTERN_EXPANSION_MAX + 1)

/* What comes before the next token decides what a repetition means. */
enum { AT_START, AT_ANCHOR, AT_ATOM, AT_DUP };

/* One group being read: its alternatives so far, the one being read, and
 * the last atom of that one (what a repetition multiplies). */
typedef struct level {
	size_t total, seq, last;
	int group; /* its number (0: the whole pattern) */
	/* the groups closed when it opened, and in its alternatives before
	 * the one being read: a back-reference sees only the groups closed
	 * before its group opened or in its own alternative */
	unsigned initial, others;
} level;

typedef struct parser {
	const char *p;
	int ere;
	level lv[DEPTH_MAX + 1];
	int depth;
	int ngroups;
	unsigned closed; /* groups 1-9 closed so far (for back-references) */
	int at;
	const char *why; /* set: not valid */
} parser;

static size_t sat_add(size_t a, size_t b)
{
	return a + b > OVER ? OVER : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
	return b && a > OVER / b ? OVER : a * b > OVER ? OVER : a * b;
}

static int fail(parser *ps, const char *why)
{
	if (!ps->why)
		ps->why = why;
	return -1;
}

static void atom(parser *ps, size_t cost)
{
	level *l = &ps->lv[ps->depth];

	l->seq = sat_add(l->seq, cost);
	l->last = cost;
	ps->at = AT_ATOM;
}

/* The last atom repeated: counted factor times. */
static void repeat(parser *ps, size_t factor, int dup)
{
	level *l = &ps->lv[ps->depth];
	size_t rep = sat_mul(l->last, factor);

	l->seq = sat_add(l->seq - l->last, rep);
	l->last = rep;
	ps->at = dup ? AT_DUP : AT_ATOM;
}

/* ---- brackets ---- */

static int class_known(const char *name, size_t len)
{
	static const char *const classes[] = {"alpha",	"upper", "lower", "digit",
					      "xdigit", "space", "print", "punct",
					      "graph",	"cntrl", "blank", "alnum"};

	for (size_t i = 0; i < sizeof(classes) / sizeof(*classes); i++)
		if (strlen(classes[i]) == len && !memcmp(classes[i], name, len))
			return 1;
	return 0;
}

/*
 * One element of a bracket at ps->p: a character, or [:class:], [=c=],
 * [.c.]. Its character in *c (-1 for a class or an equivalence class,
 * which cannot end a range); 0, or -1 when not valid.
 */
static int bracket_element(parser *ps, int *c)
{
	const char *p = ps->p, *end;
	char kind;

	if (p[0] != '[' || !strchr(":.=", p[1]) || !p[1]) {
		*c = (unsigned char)*p;
		ps->p = p + 1;
		return 0;
	}
	kind = p[1];
	for (end = p + 2; *end && !(end[0] == kind && end[1] == ']'); end++)
		;
	if (!*end)
		return fail(ps, "brackets ([ ]) not balanced");
	if (kind == ':' && !class_known(p + 2, (size_t)(end - p - 2)))
		return fail(ps, "invalid character class");
	if (kind != ':' && end - p - 2 != 1)
		return fail(ps, "invalid collation character");
	*c = kind == '.' ? (unsigned char)p[2] : -1; /* a class cannot end a range */
	ps->p = end + 2;
	return 0;
}

/* A bracket expression, ps->p just past its '['. */
static int bracket(parser *ps)
{
	int first = 1, lo, hi;

	if (*ps->p == '^')
		ps->p++;
	for (;; first = 0) {
		if (!*ps->p)
			return fail(ps, "brackets ([ ]) not balanced");
		if (*ps->p == ']' && !first)
			break;
		if (bracket_element(ps, &lo) < 0)
			return -1;
		if (ps->p[0] != '-' || !ps->p[1] || ps->p[1] == ']')
			continue;
		ps->p++;
		if (bracket_element(ps, &hi) < 0)
			return -1;
		if (lo < 0 || hi < 0 || lo > hi)
			return fail(ps, "invalid range end");
	}
	ps->p++;
	atom(ps, 1);
	return 0;
}

/* ---- intervals ---- */

/* Digits at ps->p: the number (DUP_MAX + 1 past it), -1 when none. */
static long number(parser *ps)
{
	long n = -1;

	for (; *ps->p >= '0' && *ps->p <= '9'; ps->p++)
		n = n < 0 ? *ps->p - '0' : n > DUP_MAX ? n : n * 10 + (*ps->p - '0');
	return n;
}

/* An interval, ps->p just past its "\{" (or "{"): {m}, {m,}, {m,n}, {,n}. */
static int interval(parser *ps)
{
	const char *close = ps->ere ? "}" : "\\}";
	long m = number(ps), n = m;

	if (ps->at == AT_START || ps->at == AT_ANCHOR || (!ps->ere && ps->at == AT_DUP))
		return fail(ps, "invalid preceding regular expression");
	if (*ps->p == ',') {
		ps->p++;
		n = number(ps);
		if (m < 0)
			m = 0;
	}
	if (strncmp(ps->p, close, strlen(close)))
		return fail(ps, *ps->p ? "invalid content of \\{\\}" : "unmatched \\{");
	ps->p += strlen(close);
	if (m < 0)
		return fail(ps, "invalid content of \\{\\}");
	if (m > DUP_MAX || n > DUP_MAX)
		return fail(ps, "regular expression too big");
	if (n >= 0 && n < m)
		return fail(ps, "invalid content of \\{\\}");
	repeat(ps, (size_t)(n >= 0 ? n : m + 1), 1);
	return 0;
}

/* ---- groups and alternatives ---- */

static int group_open(parser *ps)
{
	if (ps->depth == DEPTH_MAX)
		return fail(ps, "groups nested too deep");
	ps->depth++;
	memset(&ps->lv[ps->depth], 0, sizeof(level));
	ps->lv[ps->depth].group = ++ps->ngroups;
	ps->lv[ps->depth].initial = ps->closed;
	ps->at = AT_START;
	return 0;
}

static int group_close(parser *ps)
{
	level *l = &ps->lv[ps->depth];
	size_t cost = sat_add(l->total, l->seq);

	if (ps->depth == 0) {
		if (ps->ere) { /* an unmatched ')' is an ordinary character */
			atom(ps, 1);
			return 0;
		}
		return fail(ps, "unmatched ( or \\(");
	}
	ps->closed |= l->others;
	if (l->group <= 9)
		ps->closed |= 1u << l->group;
	ps->depth--;
	atom(ps, cost);
	return 0;
}

static void alternative(parser *ps)
{
	level *l = &ps->lv[ps->depth];

	l->total = sat_add(l->total, l->seq);
	l->seq = l->last = 0;
	l->others |= ps->closed;
	ps->closed = l->initial;
	ps->at = AT_START;
}

/* ---- tokens ---- */

/*
 * A repetition but an interval: '*', and '+' '?' of an extended
 * expression ("\+" "\?" in a basic one). In an extended expression it
 * needs something before it. In a basic one, with nothing before it, it
 * is an ordinary character; a '*' right after another repetition is
 * refused.
 */
static int star(parser *ps, char op, size_t factor)
{
	if (ps->ere && (ps->at == AT_START || ps->at == AT_ANCHOR))
		return fail(ps, "invalid preceding regular expression");
	if (!ps->ere && (ps->at == AT_START || ps->at == AT_ANCHOR)) {
		atom(ps, 1);
		return 0;
	}
	if (!ps->ere && op == '*' && ps->at == AT_DUP)
		return fail(ps, "invalid preceding regular expression");
	repeat(ps, factor, 1);
	return 0;
}

/* A backslash and what follows it (ps->p at the character after it). */
static int escape(parser *ps)
{
	char c = *ps->p++;

	if (!c)
		return fail(ps, "trailing backslash (\\)");
	if (c >= '1' && c <= '9') {
		if (!(ps->closed & (1u << (c - '0'))))
			return fail(ps, "invalid back reference");
		atom(ps, 1);
		return 0;
	}
	if (!ps->ere) {
		if (c == '(')
			return group_open(ps);
		if (c == ')')
			return group_close(ps);
		if (c == '{')
			return interval(ps);
		if (c == '|') {
			alternative(ps);
			return 0;
		}
		if (c == '+' || c == '?')
			return star(ps, c, c == '+' ? 2 : 1);
	}
	if (strchr("<>bB`'", c)) { /* GNU anchors */
		ps->at = AT_ANCHOR;
		return 0;
	}
	atom(ps, 1);
	return 0;
}

/* '^': an anchor at the start of an expression (anywhere in an extended
 * one), else an ordinary character. */
static void caret(parser *ps)
{
	if (ps->ere || ps->at == AT_START)
		ps->at = AT_ANCHOR;
	else
		atom(ps, 1);
}

/* One token at ps->p. */
static int token(parser *ps)
{
	char c = *ps->p++;

	if (c == '\\')
		return escape(ps);
	if (c == '[')
		return bracket(ps);
	if (c == '*')
		return star(ps, c, 1);
	if (c == '^') {
		caret(ps);
		return 0;
	}
	if (ps->ere) {
		if (c == '(')
			return group_open(ps);
		if (c == ')')
			return group_close(ps);
		if (c == '{')
			return interval(ps);
		if (c == '+' || c == '?')
			return star(ps, c, c == '+' ? 2 : 1);
		if (c == '$') {
			ps->at = AT_ANCHOR;
			return 0;
		}
		if (c == '|') {
			alternative(ps);
			return 0;
		}
	}
	atom(ps, 1);
	return 0;
}

int rq_pattern_check(const char *pat, int syntax, size_t *expansion, rq_error *err)
{
	parser ps;

	memset(&ps, 0, sizeof(ps));
	ps.p = pat;
	ps.ere = syntax == 'E';
	if (syntax == 'F') {
		ps.lv[0].seq = strlen(pat) > OVER ? OVER : strlen(pat);
		ps.p = "";
	}
	while (*ps.p && token(&ps) == 0)
		;
	if (!ps.why && ps.depth > 0)
		fail(&ps, "unmatched ( or \\(");
	for (; ps.depth > 0; ps.depth--) /* what a group left open holds counts too */
		ps.lv[ps.depth - 1].seq = sat_add(
		    ps.lv[ps.depth - 1].seq, sat_add(ps.lv[ps.depth].total, ps.lv[ps.depth].seq));
	if (expansion)
		*expansion = sat_add(ps.lv[0].total, ps.lv[0].seq);
	if (ps.why)
		return rq_error_set(err, RQ_E_USAGE, "invalid regular expression '%.64s': %s", pat,
				    ps.why);
	return 0;
}

int rq_pattern_bounded(const char *pat, rq_error *err)
{
	size_t basic = 0, extended = 0;

	if (rq_pattern_check(pat, 0, &basic, err) < 0)
		return -1;
	rq_pattern_check(pat, 'E', &extended, NULL);
	if (basic > RQ_PATTERN_EXPANSION_MAX || extended > RQ_PATTERN_EXPANSION_MAX)
		return rq_error_set(err, RQ_E_USAGE,
				    "regular expression '%.64s' is too large: it expands to more "
				    "than %d parts",
				    pat, RQ_PATTERN_EXPANSION_MAX);
	return 0;
}
