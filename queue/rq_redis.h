/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis: one connection to Redis, with timeouts and reconnection; for
 * a Redis Cluster or a master watched by Sentinel, the connection follows
 * the node that serves the commands.
 *
 * URLs (rq_redis_url.h): redis://, unix://, redis+cluster://,
 * redis+sentinel://. A password from the environment or a file (read by
 * the program, passed in the url struct) replaces the URL's. hiredis 0.14
 * has no TLS: a TLS server is reached through a local tunnel
 * (deploy/redis-tls-tunnel). Commands that fail because the connection
 * broke are retried after a reconnect, with exponential backoff and
 * jitter, up to a retry budget; Redis error replies are returned to the
 * caller as they are.
 *
 * redis+cluster: the client asks a seed (or a node it knows) for the slot
 * map (CLUSTER SLOTS) and sends each command to the master of the slot of
 * its first key (rq_slot.h), so that the commands of one queue (one hash
 * tag) go to one node. MOVED updates the map and the command goes to the
 * new master; ASK sends ASKING and the command, once, to the node named;
 * TRYAGAIN, CLUSTERDOWN, LOADING, READONLY, a script that met a key of a
 * migrating slot, or a connection that broke (the map is then asked for
 * again, of the known nodes and the seeds) are retried with the backoff
 * within the budget, then returned. Scripts go as EVAL: a new master runs
 * them without a SCRIPT LOAD (no NOSCRIPT can happen).
 *
 * redis+sentinel: the client asks the sentinels, in order, for the
 * master's address (SENTINEL get-master-addr-by-name), connects, and
 * checks that ROLE says master; a lost connection, READONLY (a master that
 * became a replica) or a node that is not a master yet make it ask again.
 * The sentinels get no credentials (the URL's are the data nodes').
 */
#ifndef RQ_REDIS_H
#define RQ_REDIS_H

#include <hiredis/hiredis.h>
#include <stddef.h>

#include "rq_qerror.h"
#include "rq_redis_url.h"

typedef struct rq_redis_opts {
	int connect_timeout_ms; /* default 2000 */
	int command_timeout_ms; /* default 5000 (blocking reads add their block time) */
	int retry_ms_max;   /* total time to keep retrying a command; -1 forever; default 30000 */
	int backoff_max_ms; /* default 5000 */
} rq_redis_opts;

typedef struct rq_redis rq_redis;

/*
 * What rq_redis_connect returns when the URL cannot work however long it
 * is retried: the credentials or the database refused (AUTH, SELECT), a
 * redis+cluster:// URL whose server has no cluster support, sentinels
 * that know no master of the URL's name. -1 is a failure worth retrying
 * (nothing answered within the budget).
 */
#define RQ_REDIS_PERMANENT (-2)

/* Connect (retrying within the budget): 0, -1 or RQ_REDIS_PERMANENT, err
 * set. */
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
 * NOREPLICAS, UNBLOCKED, and a script that met a key of a slot being
 * migrated: "ERR Script attempted to access a non local key"). Decided by
 * the error's prefix (and that one text).
 */
int rq_redis_error_permanent(const char *msg);

/* Close the connection (an outstanding command is abandoned). */
void rq_redis_disconnect(rq_redis *r);

/* Change how long a command keeps retrying (-1: forever). */
void rq_redis_set_retry(rq_redis *r, int retry_ms_max);

/* Number of reconnects done so far (for logs and tests). */
unsigned rq_redis_reconnects(const rq_redis *r);

/*
 * After a write that must outlive the master (a job queued, a result
 * stored), on redis+cluster or redis+sentinel: WAIT for the URL's number of
 * replicas (never more than the master has, as ROLE said at most 10 s
 * ago; none: nothing to wait for), on the connection that wrote. 0 done
 * (or nothing to wait for), 1 fewer replicas have it than asked after the
 * timeout (counted, see below; the write stands on the master, and is lost
 * if the master dies before its replicas get it; for the next 10 s writes
 * do not wait, so that a replica that is gone does not slow each of them
 * by the timeout), -1 the connection broke (err set). A no-op on the other
 * URLs.
 */
int rq_redis_wait_replicas(rq_redis *r, rq_error *err);

/* Redirections followed (MOVED, ASK, a new master) and writes WAIT could
 * not confirm, so far (for logs, metrics and tests). */
unsigned rq_redis_redirects(const rq_redis *r);
unsigned rq_redis_unreplicated(const rq_redis *r);

#endif
