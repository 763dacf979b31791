/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool_cli: the command-line face of the pool, shared by `replayq worker`
 * and `replayq run`: where the repositories are and how their jobs run
 * (--repo-root, --jobs, --memory-limit, --alternates, --repo-scope,
 * --consolidate, --log-level, each with its REPLAYQ_* variable; the
 * signing key, sign_cli), checked and made into an rq_pool.
 */
#ifndef RQ_POOL_CLI_H
#define RQ_POOL_CLI_H

#include "opt.h"
#include "pool.h"
#include "sign_cli.h"

typedef struct rq_pool_cli {
	const char *root, *jobs, *memory, *alternates, *repo_scope, *log_level, *consolidate;
	rq_sign_cli_pool sign; /* --sign-key, --sign-format, --sign-agent */
} rq_pool_cli;

/* The entries of a command's option table. */
#define RQ_POOL_CLI_OPTIONS(pc)                                                                    \
	RQ_OPT_STRING_ENV("repo-root", &(pc)->root, "<dir>",                                       \
			  "the root the jobs' repositories are under (required)",                  \
			  "REPLAYQ_REPO_ROOT"),                                                    \
	    RQ_OPT_STRING_ENV("jobs", &(pc)->jobs, "<n>",                                          \
			      "jobs at once, each in a child: 1-256 (default: the\n"               \
			      "number of cores)",                                                  \
			      "REPLAYQ_JOBS"),                                                     \
	    RQ_OPT_STRING_ENV("memory-limit", &(pc)->memory, "<mb>",                               \
			      "a child's resident memory limit in MiB (0: none)",                  \
			      "REPLAYQ_MEMORY_LIMIT_MB"),                                          \
	    RQ_OPT_STRING_ENV("alternates", &(pc)->alternates, "root|any",                         \
			      "follow objects/info/alternates only inside the\n"                   \
			      "root (default), or anywhere",                                       \
			      "REPLAYQ_ALTERNATES"),                                               \
	    RQ_OPT_STRING_ENV("repo-scope", &(pc)->repo_scope, "repo|root",                        \
			      "a job's git, common, objects and reftable\n"                        \
			      "directories inside its own repository (default),\n"                 \
			      "or anywhere in the root",                                           \
			      "REPLAYQ_REPO_SCOPE"),                                               \
	    RQ_OPT_STRING_ENV("consolidate", &(pc)->consolidate, "auto|off",                       \
			      "consolidate replayq's packs after jobs (default), or\n"             \
			      "leave them to the platform's housekeeping",                         \
			      "REPLAYQ_CONSOLIDATE"),                                              \
	    RQ_OPT_STRING_ENV("log-level", &(pc)->log_level, "<level>",                            \
			      "debug, info, warn or error", "REPLAYQ_LOG_LEVEL"),                  \
	    RQ_SIGN_CLI_POOL_OPTIONS(&(pc)->sign)

/*
 * A number option's value (s NULL: def), from min to max: 0, or -1 with
 * "error: --<name> must be a number from <min> to <max>" said.
 */
int rq_pool_cli_number(const char *s, long def, long min, long max, const char *name, long *out);

/*
 * Logging as --log-level asks (def when it is not given), the lines
 * naming worker: 0, or 129 with "error: --log-level must be debug, info,
 * warn or error" said.
 */
int rq_pool_cli_log(const rq_pool_cli *c, const char *def, const char *worker);

/*
 * The pool the options ask for, its results naming worker; hooks: what
 * of rq_pool_opts the options do not say (the loop, done, intent, owns and
 * their arguments). The pool is sized to the process's descriptor limit:
 * those open now, reserve more the command will open for itself, and the
 * pool's (the soft limit raised when the hard one allows; a --jobs that
 * cannot fit refused, naming how many can; the default lowered to fit).
 * 0, or the exit status (the error said: 129 for an option, 128 for the
 * pool).
 */
int rq_pool_cli_open(const rq_pool_cli *c, const char *worker, const rq_pool_opts *hooks,
		     int reserve, rq_pool **pool);

#endif
