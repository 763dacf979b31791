/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * opt: the one command-line parser of the replayq program, driven by a
 * table of options, in git's style (parse-options).
 *
 * Every command (the program's global options, replay, worker, run,
 * submit, result, queue) describes its options in an array of rq_opt and
 * hands it to rq_opt_parse() with its synopsis. The parser takes
 *
 *     --name=value  --name value      an option with a value
 *     --name[=value]                  an option whose value is optional
 *                                     (only joined: "--wait 5" is --wait
 *                                     and the argument "5")
 *     -x[value]                       the same with a letter (only stuck:
 *                                     "-Skey", as git's -S<keyid>)
 *     --no-name                       an optional-value option marked
 *                                     negatable: its value becomes NULL
 *     --name  --no-name               a boolean, on and off
 *     --name                          a flag (an action: --version)
 *     -x value                        a one-letter option with a value
 *     --                              the end of the options
 *     -h  --help                      the usage text, made from the table
 *
 * and leaves every other argument, in order, in an rq_opt_args ("-" alone
 * is an argument, as in git). Options are matched by their whole name, not
 * by a prefix. The usage text is the synopsis, then one line per option
 * ("    --onto <revision>     replay onto given commit", the help at
 * column 26 as git writes it), then a footer.
 *
 * Errors are printed as git's parse-options prints them, on stderr, and
 * the command exits 129 (git's usage status): an option's value alone,
 *   error: option `onto' requires a value
 *   error: option `contained' takes no value
 *   error: switch `C' requires a value
 * an unknown option with the usage text right after it (no blank line):
 *   error: unknown option `bogus'
 *   error: unknown switch `x'
 */
#ifndef RQ_OPT_H
#define RQ_OPT_H

#include <stddef.h>
#include <stdio.h>

/* The exit status of a usage error. */
#define RQ_OPT_USAGE_STATUS 129

typedef enum rq_opt_kind {
	RQ_OPT_KIND_END = 0,  /* ends the table */
	RQ_OPT_KIND_BOOL,     /* --name / --no-name: *(int *)value = 1 / 0 */
	RQ_OPT_KIND_FLAG,     /* --name (no --no-name): *(int *)value = 1 */
	RQ_OPT_KIND_STRING,   /* --name=<v> / --name <v>: *(const char **)value */
	RQ_OPT_KIND_OPTIONAL, /* --name[=<v>]: *(const char **)value, .bare when bare */
	RQ_OPT_KIND_CALLBACK, /* -x <v> / --name=<v>: .callback(value, .value) at once */
} rq_opt_kind;

typedef struct rq_opt {
	rq_opt_kind kind;
	char short_name;  /* 'C' for "-C <v>"; 0: none */
	const char *name; /* the long name without "--"; NULL: none */
	void *value;	  /* where the value goes (see rq_opt_kind) */
	const char *argh; /* the value's name in the usage text: "<n>" */
	const char *help; /* one line, or several separated by '\n' */
	/* RQ_OPT_KIND_STRING: the environment variable that gives the value
	 * when the option is not given (set, even empty, counts) */
	const char *env;
	const char *bare; /* RQ_OPT_KIND_OPTIONAL: the value of a bare --name */
	int negatable;	  /* RQ_OPT_KIND_OPTIONAL: --no-<name> sets the value to NULL */
	/* RQ_OPT_KIND_CALLBACK: 0 to go on, or the exit status to stop with (the
	 * callback prints why) */
	int (*callback)(const char *arg, void *value);
} rq_opt;

/* Table entries, as git's OPT_* macros. */
#define RQ_OPT_BOOL(n, int_ptr, h)                                                                 \
	{                                                                                          \
		.kind = RQ_OPT_KIND_BOOL, .name = (n), .value = (int_ptr), .help = (h)             \
	}
#define RQ_OPT_FLAG(n, int_ptr, h)                                                                 \
	{                                                                                          \
		.kind = RQ_OPT_KIND_FLAG, .name = (n), .value = (int_ptr), .help = (h)             \
	}
#define RQ_OPT_STRING(n, str_ptr, a, h)                                                            \
	{                                                                                          \
		.kind = RQ_OPT_KIND_STRING, .name = (n), .value = (str_ptr), .argh = (a),          \
		.help = (h)                                                                        \
	}
#define RQ_OPT_STRING_ENV(n, str_ptr, a, h, e)                                                     \
	{                                                                                          \
		.kind = RQ_OPT_KIND_STRING, .name = (n), .value = (str_ptr), .argh = (a),          \
		.help = (h), .env = (e)                                                            \
	}
#define RQ_OPT_OPTIONAL(n, str_ptr, a, b, h)                                                       \
	{                                                                                          \
		.kind = RQ_OPT_KIND_OPTIONAL, .name = (n), .value = (str_ptr), .argh = (a),        \
		.bare = (b), .help = (h)                                                           \
	}
#define RQ_OPT_END                                                                                 \
	{                                                                                          \
		.kind = RQ_OPT_KIND_END                                                            \
	}

enum {
	/* an option not in the table is an argument, not an error (the
	 * caller judges it: revision-walk options) */
	RQ_OPT_KEEP_UNKNOWN = 1 << 0,
	/* "--" is kept among the arguments, with what follows it */
	RQ_OPT_KEEP_DASHDASH = 1 << 1,
	/* the first argument ends the options (a subcommand follows) */
	RQ_OPT_STOP_AT_ARG = 1 << 2,
};

typedef struct rq_opt_spec {
	const char *usage;  /* "usage: replayq ...\n": the synopsis lines */
	const rq_opt *opts; /* ends with an RQ_OPT_KIND_END entry */
	const char *footer; /* after the options (NULL: none) */
	unsigned flags;	    /* RQ_OPT_KEEP_UNKNOWN | ... */
	int help_status;    /* the exit status after -h (the text on stdout) */
	/*
	 * With RQ_OPT_KEEP_UNKNOWN: 1 when an unknown option takes the next
	 * argument as its value. The two are kept as one argument, stuck as
	 * git writes it: "--author" "Bob" as "--author=Bob", "-n" "5" as
	 * "-n5". NULL: none does.
	 */
	int (*unknown_takes_value)(const char *arg);
} rq_opt_spec;

/* The arguments that are not options, in order. */
typedef struct rq_opt_args {
	const char **v; /* NULL-terminated; argv's strings, or owned ones */
	size_t n;
	char **owned; /* the stuck "option=value" strings */
	size_t nowned;
} rq_opt_args;

/*
 * Parse argv[1..argc) (argv[0] is the command's name). 0: go on, the
 * values set and *args filled (free it with rq_opt_args_free). -1: stop
 * and exit with *status: the usage text was printed for -h
 * (spec->help_status), or an error was (129, or what a callback
 * returned); *args is empty then.
 */
int rq_opt_parse(const rq_opt_spec *spec, int argc, char **argv, rq_opt_args *args, int *status);

void rq_opt_args_free(rq_opt_args *args);

/*
 * rq_opt_parse for a command that takes at most max arguments (an input
 * file, or none): more is a usage error that says too_many. *first: the
 * first argument, or NULL. 0: go on; -1: stop with *status.
 */
int rq_opt_parse_at_most(const rq_opt_spec *spec, int argc, char **argv, size_t max,
			 const char *too_many, const char **first, int *status);

/* The usage text: synopsis, options, footer. */
void rq_opt_usage(const rq_opt_spec *spec, FILE *out);

/*
 * A number option's value: a whole decimal number from min to max (0 <=
 * min), digits only (no sign, no space, nothing after them), that does
 * not overflow. 0 with *out set, or -1 (the caller says the usage error).
 */
int rq_opt_number(const char *s, long min, long max, long *out);

/*
 * A usage error found after parsing: "error: <fmt...>" and the usage text
 * on stderr. Returns 129.
 */
int rq_opt_usage_error(const rq_opt_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The text of the last usage error printed (without "error: "), "" when
 * none was. */
const char *rq_opt_last_error(void);

#endif
