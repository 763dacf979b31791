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
 * (default redis://127.0.0.1:6379/0), password from REPLAYQ_REDIS_PASSWORD
 * (never printed). retry_ms: how long to keep retrying (-1: forever).
 */
int rq_open_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		  rq_error *err);

#endif
