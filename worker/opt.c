/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * opt: the table-driven command-line parser and the usage text it makes
 * (see opt.h).
 */
#include "opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The help text starts at this column, as in git's usage texts; an option
 * longer than USAGE_OPTS_WIDTH puts it on the next line. */
#define USAGE_OPTS_WIDTH 24
#define USAGE_GAP	 2
#define USAGE_LINE_MAX	 80

/* One parse in progress. */
typedef struct parse_state {
	const rq_opt_spec *spec;
	int argc;
	char **argv;
	int i; /* the argument being read */
	rq_opt_args *args;
	int status; /* the exit status once the parse stops */
} parse_state;

/* ---- the usage text ---- */

static void usage_line(const rq_opt *o, FILE *out)
{
	int pos = fprintf(out, "    ");
	const char *help = o->help ? o->help : "", *nl;

	if (o->short_name)
		pos += fprintf(out, "-%c%s", o->short_name, o->name ? ", " : "");
	if (o->name)
		pos += fprintf(out, "--%s%s",
			       o->kind == RQ_OPT_KIND_BOOL || o->negatable ? "[no-]" : "", o->name);
	if (o->argh && o->kind == RQ_OPT_KIND_OPTIONAL)
		pos += fprintf(out, "[=%s]", o->argh);
	else if (o->argh && o->kind != RQ_OPT_KIND_BOOL && o->kind != RQ_OPT_KIND_FLAG)
		pos += fprintf(out, " %s", o->argh);
	if (pos <= USAGE_OPTS_WIDTH) {
		fprintf(out, "%*s", USAGE_OPTS_WIDTH - pos + USAGE_GAP, "");
	} else {
		fputc('\n', out);
		fprintf(out, "%*s", USAGE_OPTS_WIDTH + USAGE_GAP, "");
	}
	while ((nl = strchr(help, '\n'))) {
		fprintf(out, "%.*s\n%*s", (int)(nl - help), help, USAGE_OPTS_WIDTH + USAGE_GAP, "");
		help = nl + 1;
	}
	fputs(help, out);
	if (o->env) { /* on the help's last line if it fits, else on one of its own */
		pos = USAGE_OPTS_WIDTH + USAGE_GAP + (int)strlen(help);
		if (pos + (int)strlen(o->env) + 6 > USAGE_LINE_MAX)
			fprintf(out, "\n%*s", USAGE_OPTS_WIDTH + USAGE_GAP, "");
		else if (*help)
			fputc(' ', out);
		fprintf(out, "(or $%s)", o->env);
	}
	fputc('\n', out);
}

void rq_opt_usage(const rq_opt_spec *spec, FILE *out)
{
	fputs(spec->usage, out);
	if (spec->opts[0].kind != RQ_OPT_KIND_END)
		fputc('\n', out);
	for (const rq_opt *o = spec->opts; o->kind != RQ_OPT_KIND_END; o++)
		usage_line(o, out);
	if (spec->footer) {
		fputc('\n', out);
		fputs(spec->footer, out);
	}
}

/* The text of the last usage error (for a caller that reports it again,
 * as JSON). */
static char last_error[512];

const char *rq_opt_last_error(void)
{
	return last_error;
}

/* "error: <what>" on stderr, then the usage text when usage is set, with
 * no blank line between them (git's usage_with_options after error()). */
static void usage_verror(const rq_opt_spec *spec, int usage, const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	fprintf(stderr, "error: %s\n", last_error);
	if (usage)
		rq_opt_usage(spec, stderr);
}

int rq_opt_usage_error(const rq_opt_spec *spec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_verror(spec, 1, fmt, ap);
	va_end(ap);
	return RQ_OPT_USAGE_STATUS;
}

/* A usage error during the parse, with the usage text or (an option's
 * value: git's PARSE_OPT_ERROR) without: -1 with the status set. */
static int parse_error(parse_state *ps, int usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int parse_error(parse_state *ps, int usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_verror(ps->spec, usage, fmt, ap);
	va_end(ap);
	ps->status = RQ_OPT_USAGE_STATUS;
	return -1;
}

/* ---- the arguments kept ---- */

static void args_add(rq_opt_args *args, const char *arg)
{
	args->v[args->n++] = arg;
	args->v[args->n] = NULL;
}

void rq_opt_args_free(rq_opt_args *args)
{
	for (size_t k = 0; k < args->nowned; k++)
		free(args->owned[k]);
	free(args->owned);
	free(args->v);
	memset(args, 0, sizeof(*args));
}

/* An unknown option and its value as one argument, stuck as git writes
 * it: "--author=Bob", "-n5". */
static int keep_stuck(parse_state *ps, const char *opt, const char *value)
{
	int is_short = opt[1] != '-';
	size_t n = strlen(opt) + strlen(value) + 2;
	char *s = malloc(n);

	if (!s) {
		fputs("fatal: out of memory\n", stderr);
		ps->status = 128;
		return -1;
	}
	snprintf(s, n, "%s%s%s", opt, is_short ? "" : "=", value);
	ps->args->owned[ps->args->nowned++] = s;
	args_add(ps->args, s);
	return 0;
}

/* An option that is not in the table: kept, or an error. */
static int unknown_option(parse_state *ps)
{
	const char *a = ps->argv[ps->i];

	if (!(ps->spec->flags & RQ_OPT_KEEP_UNKNOWN)) /* as git names it */
		return a[1] == '-' ? parse_error(ps, 1, "unknown option `%s'", a + 2)
				   : parse_error(ps, 1, "unknown switch `%c'", a[1]);
	if (ps->spec->unknown_takes_value && ps->spec->unknown_takes_value(a) &&
	    ps->i + 1 < ps->argc)
		return keep_stuck(ps, a, ps->argv[++ps->i]);
	args_add(ps->args, a);
	return 0;
}

/* ---- one option ---- */

/* How an option is named in a message: `onto' or switch `C'. */
static const char *shown_name(const rq_opt *o, int by_short, char buf[2])
{
	if (!by_short)
		return o->name;
	buf[0] = o->short_name;
	buf[1] = '\0';
	return buf;
}

/* Store a value the option was given ("joined": --name=value), or take
 * the next argument; then hand it where it goes. */
static int take_value(parse_state *ps, const rq_opt *o, const char *joined, int by_short)
{
	const char *v = joined;
	char sn[2];

	if (!v && o->kind == RQ_OPT_KIND_OPTIONAL)
		v = o->bare;
	else if (!v && ps->i + 1 < ps->argc)
		v = ps->argv[++ps->i];
	else if (!v)
		return parse_error(ps, 0, "%s `%s' requires a value",
				   by_short ? "switch" : "option", shown_name(o, by_short, sn));
	if (o->kind != RQ_OPT_KIND_CALLBACK) {
		*(const char **)o->value = v;
		return 0;
	}
	if ((ps->status = o->callback(v, o->value)) != 0)
		return -1;
	return 0;
}

/* Apply option o, met as name (its value joined after '=' or NULL);
 * negated: met as --no-<name>. */
static int apply(parse_state *ps, const rq_opt *o, const char *joined, int negated, int by_short)
{
	char sn[2];

	if (negated && o->kind == RQ_OPT_KIND_OPTIONAL) { /* a negatable one */
		if (joined)
			return parse_error(ps, 0, "option `no-%s' takes no value", o->name);
		*(const char **)o->value = NULL;
		return 0;
	}
	if (o->kind != RQ_OPT_KIND_BOOL && o->kind != RQ_OPT_KIND_FLAG)
		return take_value(ps, o, joined, by_short);
	if (joined)
		return parse_error(ps, 0, "option `%s%s' takes no value", negated ? "no-" : "",
				   shown_name(o, by_short, sn));
	*(int *)o->value = !negated;
	return 0;
}

/* "--name[=value]": 1 applied, 0 not in the table, -1 stop. */
static int long_option(parse_state *ps)
{
	const char *name = ps->argv[ps->i] + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const char *joined = eq ? eq + 1 : NULL;

	for (const rq_opt *o = ps->spec->opts; o->kind != RQ_OPT_KIND_END; o++) {
		if (!o->name)
			continue;
		if (strlen(o->name) == len && !strncmp(name, o->name, len))
			return apply(ps, o, joined, 0, 0) < 0 ? -1 : 1;
		if ((o->kind == RQ_OPT_KIND_BOOL || o->negatable) && len == strlen(o->name) + 3 &&
		    !strncmp(name, "no-", 3) && !strncmp(name + 3, o->name, len - 3))
			return apply(ps, o, joined, 1, 0) < 0 ? -1 : 1;
	}
	return 0;
}

/* "-x", or "-xvalue" for an optional value: 1 applied, 0 not in the
 * table, -1 stop. */
static int short_option(parse_state *ps)
{
	const char *a = ps->argv[ps->i];

	for (const rq_opt *o = ps->spec->opts; o->kind != RQ_OPT_KIND_END; o++) {
		if (!o->short_name || o->short_name != a[1])
			continue;
		if (a[2] == '\0')
			return apply(ps, o, NULL, 0, 1) < 0 ? -1 : 1;
		if (o->kind == RQ_OPT_KIND_OPTIONAL)
			return apply(ps, o, a + 2, 0, 1) < 0 ? -1 : 1;
	}
	return 0;
}

/* ---- the parse ---- */

/* Values not given that the environment gives. */
static void env_defaults(const rq_opt_spec *spec)
{
	for (const rq_opt *o = spec->opts; o->kind != RQ_OPT_KIND_END; o++)
		if (o->kind == RQ_OPT_KIND_STRING && o->env && !*(const char **)o->value)
			*(const char **)o->value = getenv(o->env);
}

/* Keep argv[from..argc) as they are. */
static void keep_rest(parse_state *ps, int from)
{
	for (int k = from; k < ps->argc; k++)
		args_add(ps->args, ps->argv[k]);
}

/* One argument: 0 go on, 1 the options ended, -1 stop. */
static int parse_one(parse_state *ps)
{
	const char *a = ps->argv[ps->i];
	int r;

	if (!strcmp(a, "--")) {
		keep_rest(ps, ps->spec->flags & RQ_OPT_KEEP_DASHDASH ? ps->i : ps->i + 1);
		return 1;
	}
	if (a[0] != '-' || a[1] == '\0') {
		if (ps->spec->flags & RQ_OPT_STOP_AT_ARG) {
			keep_rest(ps, ps->i);
			return 1;
		}
		args_add(ps->args, a);
		return 0;
	}
	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		rq_opt_usage(ps->spec, stdout);
		ps->status = ps->spec->help_status;
		return -1;
	}
	r = a[1] == '-' ? long_option(ps) : short_option(ps);
	if (r != 0)
		return r < 0 ? -1 : 0;
	return unknown_option(ps);
}

int rq_opt_parse(const rq_opt_spec *spec, int argc, char **argv, rq_opt_args *args, int *status)
{
	parse_state ps = {spec, argc, argv, 1, args, 0};
	int r = 0;

	memset(args, 0, sizeof(*args));
	args->v = calloc((size_t)argc + 1, sizeof(*args->v));
	args->owned = calloc((size_t)argc + 1, sizeof(*args->owned));
	if (!args->v || !args->owned) {
		rq_opt_args_free(args);
		fputs("fatal: out of memory\n", stderr);
		*status = 128;
		return -1;
	}
	for (; ps.i < argc && r == 0; ps.i++)
		r = parse_one(&ps);
	if (r < 0) {
		rq_opt_args_free(args);
		*status = ps.status;
		return -1;
	}
	env_defaults(spec);
	*status = 0;
	return 0;
}

int rq_opt_parse_at_most(const rq_opt_spec *spec, int argc, char **argv, size_t max,
			 const char *too_many, const char **first, int *status)
{
	rq_opt_args args;

	*first = NULL;
	if (rq_opt_parse(spec, argc, argv, &args, status) < 0)
		return -1;
	if (args.n > max)
		*status = rq_opt_usage_error(spec, "%s", too_many);
	else if (args.n)
		*first = args.v[0]; /* one of argv's: no stuck option here */
	rq_opt_args_free(&args);
	return *status ? -1 : 0;
}

int rq_opt_number(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
