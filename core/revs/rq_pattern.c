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

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_child.h"

#define DUP_MAX	  32767 /* glibc's RE_DUP_MAX */
#define DEPTH_MAX 64	/* groups inside groups: deeper is refused */
#define OVER	  ((size_t)RQ_PATTERN_EXPANSION_MAX + 1)

/* What comes before the next token decides what a repetition means. */
enum { AT_START, AT_ANCHOR, AT_ATOM, AT_DUP };

/* One group being read: its alternatives so far, the one being read, and
 * the last atom of that one (what a repetition multiplies); whether each
 * can match the empty string (any_null: one of the alternatives so far;
 * prev_null: the one being read, without its last atom). */
typedef struct level {
	size_t total, seq, last;
	int any_null, seq_null, prev_null, last_null;
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
	int backrefs;	 /* how many */
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

/* A level with nothing read yet. */
static void level_start(level *l)
{
	memset(l, 0, sizeof(*l));
	l->seq_null = l->prev_null = 1;
}

/* An atom of that cost, which can match the empty string or not. */
static void atom(parser *ps, size_t cost, int nullable)
{
	level *l = &ps->lv[ps->depth];

	l->seq = sat_add(l->seq, cost);
	l->last = cost;
	l->prev_null = l->seq_null;
	l->last_null = nullable;
	l->seq_null = l->seq_null && nullable;
	ps->at = AT_ATOM;
}

/* An anchor (^ $ \< \> \b \B \` \'): a node of its own, which matches
 * the empty string; nothing repeats it. */
static void anchor(parser *ps)
{
	level *l = &ps->lv[ps->depth];

	l->seq = sat_add(l->seq, 1);
	ps->at = AT_ANCHOR;
}

/*
 * The last atom repeated factor times (at least none of them when
 * min_zero). What can match the empty string counts factor times more:
 * glibc's work on the empty paths through its copies grows with the
 * square of their number (\(a*\)\{0,2000\}: 112 MB; nested, it grows
 * faster still).
 */
static void repeat(parser *ps, size_t factor, int min_zero, int dup)
{
	level *l = &ps->lv[ps->depth];
	size_t rep = sat_mul(l->last, factor);

	if (l->last_null && factor > 1)
		rep = sat_mul(rep, factor);
	l->seq = sat_add(l->seq - l->last, rep);
	l->last = rep;
	l->last_null = l->last_null || min_zero;
	l->seq_null = l->prev_null && l->last_null;
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
	atom(ps, 1, 0);
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
	repeat(ps, (size_t)(n >= 0 ? n : m + 1), m == 0, 1);
	return 0;
}

/* ---- groups and alternatives ---- */

static int group_open(parser *ps)
{
	if (ps->depth == DEPTH_MAX)
		return fail(ps, "groups nested too deep");
	ps->depth++;
	level_start(&ps->lv[ps->depth]);
	ps->lv[ps->depth].group = ++ps->ngroups;
	ps->lv[ps->depth].initial = ps->closed;
	ps->at = AT_START;
	return 0;
}

static int group_close(parser *ps)
{
	level *l = &ps->lv[ps->depth];
	size_t cost = sat_add(l->total, l->seq);
	int nullable = l->any_null || l->seq_null;

	if (ps->depth == 0) {
		if (ps->ere) { /* an unmatched ')' is an ordinary character */
			atom(ps, 1, 0);
			return 0;
		}
		return fail(ps, "unmatched ( or \\(");
	}
	ps->closed |= l->others;
	if (l->group <= 9)
		ps->closed |= 1u << l->group;
	ps->depth--;
	atom(ps, cost ? cost : 1, nullable); /* an empty group is a node too */
	return 0;
}

static void alternative(parser *ps)
{
	level *l = &ps->lv[ps->depth];

	l->total = sat_add(l->total, l->seq);
	l->seq = l->last = 0;
	l->any_null = l->any_null || l->seq_null;
	l->seq_null = l->prev_null = 1;
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
static int star(parser *ps, char op)
{
	if (ps->ere && (ps->at == AT_START || ps->at == AT_ANCHOR))
		return fail(ps, "invalid preceding regular expression");
	if (!ps->ere && (ps->at == AT_START || ps->at == AT_ANCHOR)) {
		atom(ps, 1, 0);
		return 0;
	}
	if (!ps->ere && op == '*' && ps->at == AT_DUP)
		return fail(ps, "invalid preceding regular expression");
	repeat(ps, op == '+' ? 2 : 1, op != '+', 1);
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
		ps->backrefs++;
		atom(ps, 1, 0);
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
			return star(ps, c);
	}
	if (strchr("<>bB`'", c)) { /* GNU anchors */
		anchor(ps);
		return 0;
	}
	atom(ps, 1, 0);
	return 0;
}

/* '^': an anchor at the start of an expression (anywhere in an extended
 * one), else an ordinary character. */
static void caret(parser *ps)
{
	if (ps->ere || ps->at == AT_START)
		anchor(ps);
	else
		atom(ps, 1, 0);
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
		return star(ps, c);
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
			return star(ps, c);
		if (c == '$') {
			anchor(ps);
			return 0;
		}
		if (c == '|') {
			alternative(ps);
			return 0;
		}
	}
	/* a basic expression's '$' before its end, "\)" or "\|" is an anchor */
	atom(ps, 1,
	     !ps->ere && c == '$' &&
		 (!*ps->p || !strncmp(ps->p, "\\)", 2) || !strncmp(ps->p, "\\|", 2)));
	return 0;
}

/* rq_pattern_check, and how many back-references pat has (*backrefs). */
static int check(const char *pat, int syntax, size_t *expansion, int *backrefs, rq_error *err)
{
	parser ps;

	memset(&ps, 0, sizeof(ps));
	level_start(&ps.lv[0]);
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
	*backrefs = ps.backrefs;
	if (ps.why)
		return rq_error_set(err, RQ_E_USAGE, "invalid regular expression '%.64s': %s", pat,
				    ps.why);
	return 0;
}

int rq_pattern_check(const char *pat, int syntax, size_t *expansion, rq_error *err)
{
	int backrefs;

	return check(pat, syntax, expansion, &backrefs, err);
}

int rq_pattern_bounded(const char *pat, int syntax, rq_error *err)
{
	size_t n = 0;
	int backrefs;

	if (check(pat, syntax, &n, &backrefs, err) < 0)
		return -1;
	if (backrefs)
		return rq_error_set(
		    err, RQ_E_USAGE,
		    "regular expression '%.64s' has a back-reference, which a job's "
		    "pattern may not have (glibc's matching of them can crash or "
		    "take exponential time)",
		    pat);
	if (n > RQ_PATTERN_EXPANSION_MAX)
		return rq_error_set(err, RQ_E_USAGE,
				    "regular expression '%.64s' is too large: it expands to more "
				    "than %d parts",
				    pat, RQ_PATTERN_EXPANSION_MAX);
	return 0;
}

/* ---- the probe ---- */

/* What each pattern is tried on: nothing, a line, a commit message, a
 * run that a pattern with nested repetitions backtracks over. */
static const char *const probe_texts[] = {
    "", "a\n",
    "Fix the frobnicator (#123)\n\nIt broke on 'x = y[1]' and a\\b.\n\n"
    "Signed-off-by: A U Thor <author@example.com>\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"};

static long probe_cpu_ms(void)
{
#ifdef RQ_TEST_HOOKS
	const char *v = getenv("REPLAYQ_TEST_PATTERN_CPU_MS");

	if (v && atol(v) > 0)
		return atol(v);
#endif
	return RQ_PATTERN_PROBE_CPU_MS;
}

/* The probe's process: under the CPU limit (SIGPROF, and RLIMIT_CPU a
 * second later), it says which pattern it is at and tries it. Never
 * returns. */
static void probe_child(int fd, char *const *pats, size_t n, int cflags, long ms)
{
	struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
	struct rlimit rl;

	signal(SIGPROF, SIG_DFL);
	if (getrlimit(RLIMIT_CPU, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)(ms / 1000 + 2))) {
		rl.rlim_cur = (rlim_t)(ms / 1000 + 2);
		setrlimit(RLIMIT_CPU, &rl);
	}
	setitimer(ITIMER_PROF, &it, NULL);
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)i;
		regex_t r;
		if (write(fd, &k, sizeof(k)) != (ssize_t)sizeof(k))
			_exit(2);
		if (regcomp(&r, pats[i], cflags) != 0)
			continue; /* the caller's own compiling says why */
		for (size_t t = 0; t < sizeof(probe_texts) / sizeof(*probe_texts); t++)
			regexec(&r, probe_texts[t], 0, NULL, 0);
		regfree(&r);
	}
	_exit(0);
}

int rq_pattern_probe(char *const *pats, size_t n, int cflags, rq_error *err)
{
	uint32_t k, at = 0;
	long ms = probe_cpu_ms();
	int fd, status = 0;
	ssize_t r;
	pid_t pid;

	if (!n)
		return 0;
	if ((pid = rq_child_fork(&fd)) < 0)
		return rq_error_set(err, RQ_E_IO,
				    "cannot start a process to try the patterns in: %s",
				    strerror(errno));
	if (pid == 0)
		probe_child(fd, pats, n, cflags, ms);
	while ((r = read(fd, &k, sizeof(k))) == (ssize_t)sizeof(k) || (r < 0 && errno == EINTR))
		if (r > 0 && k < n)
			at = k;
	close(fd);
	if (!rq_child_reap(pid, &status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return 0;
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGPROF || WTERMSIG(status) == SIGXCPU))
		return rq_error_set(err, RQ_E_BAD_REVISION,
				    "regular expression '%.64s' is refused: compiling and matching "
				    "it took more than %ld ms of CPU",
				    pats[at], ms);
	return rq_error_set(err, RQ_E_BAD_REVISION,
			    "regular expression '%.64s' is refused: compiling and matching it "
			    "crashed glibc's regex engine (%s %d)",
			    pats[at], WIFSIGNALED(status) ? "signal" : "exit status",
			    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}
