/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis: one connection to Redis, with URL parsing, timeouts and
 * reconnection.
 *
 * URLs: redis://[user[:password]@]host[:port][/db] and
 * unix:///path/to/socket[?db=N]. The user and the password are
 * percent-decoded (a password with '@', '/' or ':' is written %40, %2F,
 * %3A); redis://user@host names a user whose password comes from elsewhere.
 * A password from the environment or a file (read by the program, passed
 * in the url struct) replaces the URL's. hiredis 0.14 has no TLS: a TLS
 * server is reached through a local tunnel (deploy/redis-tls-tunnel).
 * Commands that fail because the connection broke are retried after a
 * reconnect, with exponential backoff and jitter, up to a retry budget;
 * Redis error replies are returned to the caller as they are.
 */
#ifndef RQ_REDIS_H
#define RQ_REDIS_H

#include <hiredis/hiredis.h>
#include <stddef.h>

#include "rq_qerror.h"

typedef struct rq_redis_url {
	int is_unix;
	char host[256];
	int port;
	char path[512];
	int db;
	char user[128];
	char password[256];
} rq_redis_url;

/* Parse a URL; RQ_E_USAGE with a message on a bad one. */
int rq_redis_url_parse(const char *url, rq_redis_url *out, rq_error *err);

/* The URL without its password, for logs: "redis://user:***@host:port/db". */
void rq_redis_url_display(const rq_redis_url *u, char *buf, size_t size);

typedef struct rq_redis_opts {
	int connect_timeout_ms; /* default 2000 */
	int command_timeout_ms; /* default 5000 (blocking reads add their block time) */
	int retry_ms_max;   /* total time to keep retrying a command; -1 forever; default 30000 */
	int backoff_max_ms; /* default 5000 */
} rq_redis_opts;

typedef struct rq_redis rq_redis;

/* Connect (retrying within the budget). */
int rq_redis_connect(rq_redis **out, const rq_redis_url *url, const rq_redis_opts *opts,
		     rq_error *err);
void rq_redis_free(rq_redis *r);

/*
 * Run a command. block_ms > 0 widens the timeout for a blocking command.
 * Returns the reply (free with freeReplyObject), or NULL with err set
 * (RQ_E_REDIS) when the server cannot be reached within the retry budget.
 */
redisReply *rq_redis_cmd(rq_redis *r, int block_ms, rq_error *err, int argc, const char **argv,
			 const size_t *lens);

/* Same with a NULL-terminated list of C strings. */
redisReply *rq_redis_cmdv(rq_redis *r, int block_ms, rq_error *err, ...);

/*
 * A command in two halves, for an event loop that waits on this connection
 * and on other descriptors at once. rq_redis_send connects if needed
 * (within the retry budget) and writes the command; rq_redis_fd is then the
 * socket to poll for input; rq_redis_recv reads what has arrived: 1 with
 * *reply set, 0 when the reply is not complete yet, -1 with err set when the
 * connection broke (it is dropped; the next send reconnects). One command
 * at a time may be outstanding, and no rq_redis_cmd meanwhile.
 */
int rq_redis_send(rq_redis *r, rq_error *err, int argc, const char **argv);
int rq_redis_fd(const rq_redis *r);
int rq_redis_recv(rq_redis *r, redisReply **reply, rq_error *err);
/*
 * 1 when an error reply (its text, "WRONGTYPE ...") is permanent: the same
 * command gets the same answer again (a key of the wrong type, a script
 * error, out of memory, any error not known to pass); 0 when it is a
 * condition of the server that passes (LOADING, BUSY, TRYAGAIN,
 * CLUSTERDOWN, MASTERDOWN, READONLY, MOVED, ASK, NOAUTH, NOPERM, MISCONF,
 * NOREPLICAS, UNBLOCKED). Decided by the error's prefix alone.
 */
int rq_redis_error_permanent(const char *msg);

/* Close the connection (an outstanding command is abandoned). */
void rq_redis_disconnect(rq_redis *r);

/* Change how long a command keeps retrying (-1: forever). */
void rq_redis_set_retry(rq_redis *r, int retry_ms_max);

/* Number of reconnects done so far (for logs and tests). */
unsigned rq_redis_reconnects(const rq_redis *r);

#endif
