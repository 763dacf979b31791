/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * connect: how a command reaches its queue. The Redis URL comes from
 * --redis or REPLAYQ_REDIS_URL (default redis://127.0.0.1:6379/0; any form
 * of rq_redis_url.h: redis://, unix://, redis+cluster://,
 * redis+sentinel://), the
 * queue from --queue or REPLAYQ_QUEUE (default "default"), the password
 * from the first line of the file REPLAYQ_REDIS_PASSWORD_FILE names, else
 * from REPLAYQ_REDIS_PASSWORD, else from the URL. A password is never
 * printed, and one given on the command line is blanked there.
 */
#ifndef RQ_CONNECT_H
#define RQ_CONNECT_H

#include "opt.h"
#include "rq_queue.h"
#include "rq_redis.h"

/* The --redis and --queue entries of a command's option table. */
#define RQ_CONNECT_OPTIONS(url_ptr, queue_ptr)                                                     \
	RQ_OPT_STRING("redis", (url_ptr), "<url>",                                                 \
		      "the Redis server (else $REPLAYQ_REDIS_URL, else\n"                          \
		      "redis://127.0.0.1:6379/0)"),                                                \
	    RQ_OPT_STRING("queue", (queue_ptr), "<name>",                                          \
			  "the queue (else $REPLAYQ_QUEUE, else default)")

/* The options of the client commands (submit, result, queue): those and
 * --connect-timeout. */
#define RQ_CLIENT_CONNECT_OPTIONS(url_ptr, queue_ptr, timeout_ptr)                                 \
	RQ_CONNECT_OPTIONS(url_ptr, queue_ptr),                                                    \
	    RQ_OPT_STRING_ENV("connect-timeout", (timeout_ptr), "<s>",                             \
			      "give up connecting to Redis after <s> seconds (2)",                 \
			      "REPLAYQ_CONNECT_TIMEOUT")

/* The default of --connect-timeout, in seconds */
#define RQ_CONNECT_TIMEOUT_S 2

/*
 * Connect to Redis and open the queue (url and queue NULL: from the
 * environment, see above). retry_ms: how long to keep retrying (-1:
 * forever). 0; -1 with err set when Redis did not answer in time (worth
 * another try); RQ_REDIS_PERMANENT with err set when no retry can help: a
 * URL, a queue name or a password file that cannot work (RQ_E_USAGE), or
 * what rq_redis_connect refuses for good. Nothing is left open on failure.
 */
int rq_connect_queue(const char *url, const char *queue, int retry_ms, rq_redis **r, rq_queue **q,
		     rq_error *err);

/*
 * For a client command: rq_connect_queue with the first connection's
 * budget from --connect-timeout (timeout: its value, NULL for the
 * default), its commands then retried for 10 s as before. 0, or -1 with
 * the failure printed on stderr ("fatal: ...", naming the timeout; an
 * --connect-timeout that is not 1-3600 seconds: "error: ...").
 */
int rq_connect_client(const char *url, const char *queue, const char *timeout, rq_redis **r,
		      rq_queue **q);

/* --connect-timeout's value (NULL: the default) is 1-3600 seconds: 0, or
 * RQ_OPT_USAGE_STATUS said. */
int rq_connect_timeout_check(const char *timeout);

/*
 * A --redis value from the command line: a private copy to connect with
 * (free it; NULL when arg is NULL or out of memory). When the URL holds a
 * password, *had_password is 1 and the password is overwritten with '*'
 * in arg itself, so that /proc/<pid>/cmdline no longer shows it from then
 * on; the caller warns with RQ_CONNECT_PASSWORD_WARNING.
 */
char *rq_connect_url_arg(char *arg, int *had_password);

#define RQ_CONNECT_PASSWORD_WARNING                                                                \
	"a password on the command line (--redis) can be read by every local user in "             \
	"/proc/<pid>/cmdline until it is blanked; give it in REPLAYQ_REDIS_PASSWORD_FILE or "      \
	"REPLAYQ_REDIS_PASSWORD instead"

#endif
