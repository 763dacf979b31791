/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * opts: shared option handling for the queue subcommands: --name=value or
 * --name value, with defaults from REPLAYQ_* environment variables.
 */
#ifndef RQ_OPTS_H
#define RQ_OPTS_H

#include "rq_queue.h"
#include "rq_redis.h"

/* Match option `name` at argv[*i]; 1 matched (value in *out), 0 not, -1 missing value. */
int rq_opt_value(int argc, char **argv, int *i, const char *name, const char **out);

/* Milliseconds: wall clock (since the epoch) and monotonic. */
long long rq_wall_ms(void);
long long rq_mono_ms(void);

/* An environment variable or a default. */
const char *rq_env_or(const char *var, const char *def);

/*
 * Connect to Redis and open the queue: url from --redis or REPLAYQ_REDIS_URL
 * (default redis://127.0.0.1:6379/0), password from the first line of the
 * file REPLAYQ_REDIS_PASSWORD_FILE names, else from REPLAYQ_REDIS_PASSWORD,
 * else from the URL (never printed). retry_ms: how long to keep retrying
 * (-1: forever).
 */
int rq_open_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		  rq_error *err);

/*
 * A --redis value from the command line: a private copy to connect with
 * (free it; NULL when arg is NULL or out of memory). When the URL holds a
 * password, *had_password is 1 and the password is overwritten with '*'
 * in arg itself, so that /proc/<pid>/cmdline no longer shows it from then
 * on; the caller warns with RQ_REDIS_ARG_WARNING.
 */
char *rq_redis_arg_take(char *arg, int *had_password);

#define RQ_REDIS_ARG_WARNING                                                                       \
	"a password on the command line (--redis) can be read by every local user in "             \
	"/proc/<pid>/cmdline until it is blanked; give it in REPLAYQ_REDIS_PASSWORD_FILE or "      \
	"REPLAYQ_REDIS_PASSWORD instead"

#endif
