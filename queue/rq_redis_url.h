/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_url: the forms of a Redis URL, parsed into what a connection
 * needs, and shown without its password.
 *
 *   redis://[user[:password]@]host[:port][/db]
 *   unix:///path/to/socket[?db=N]
 *   redis+cluster://[user[:password]@]host[:port][,host[:port]...][/[0]][?options]
 *   redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/master[/db][?options]
 *
 * The user and the password are percent-decoded (a password with '@', '/'
 * or ':' is written %40, %2F, %3A); redis://user@host names a user whose
 * password comes from elsewhere. A cluster URL lists seed nodes (default
 * port 6379; a cluster has database 0 only); a sentinel URL lists
 * sentinels (default port 26379), then the name of the master they
 * watch. The credentials are the data nodes'. Options of the last two
 * forms: wait=N (after a write a job depends on, wait for N replicas to
 * have it; 0 turns it off; default 1, never more than the node has) and
 * wait_timeout_ms=T (how long; default 200).
 */
#ifndef RQ_REDIS_URL_H
#define RQ_REDIS_URL_H

#include <stddef.h>

#include "rq_qerror.h"

#define RQ_REDIS_MAX_SEEDS	 16
#define RQ_REDIS_WAIT_TIMEOUT_MS 200

enum rq_redis_kind {
	RQ_REDIS_TCP = 0, /* redis:// */
	RQ_REDIS_UNIX,	  /* unix:// */
	RQ_REDIS_CLUSTER, /* redis+cluster:// */
	RQ_REDIS_SENTINEL /* redis+sentinel:// */
};

/* A node's address. */
typedef struct rq_redis_addr {
	char host[256];
	int port;
} rq_redis_addr;

typedef struct rq_redis_url {
	int is_unix;
	char host[256]; /* the first seed or sentinel for the last two forms */
	int port;
	char path[512];
	int db;
	char user[128];
	char password[256];
	int kind; /* enum rq_redis_kind */
	/* redis+cluster: the seed nodes; redis+sentinel: the sentinels */
	int nseeds;
	rq_redis_addr seeds[RQ_REDIS_MAX_SEEDS];
	char master[128];    /* redis+sentinel: the master's name */
	int wait_replicas;   /* redis+cluster, redis+sentinel: see above */
	int wait_timeout_ms; /* idem */
} rq_redis_url;

/* Parse a URL; RQ_E_USAGE with a message on a bad one (never showing the
 * password). */
int rq_redis_url_parse(const char *url, rq_redis_url *out, rq_error *err);

/* The URL without its password, for logs: "redis://user:***@host:port/db". */
void rq_redis_url_display(const rq_redis_url *u, char *buf, size_t size);

/* Length of the scheme ("redis://", "redis+cluster://", "redis+sentinel://")
 * a URL with an authority starts with, 0 for any other. */
size_t rq_redis_url_scheme_len(const char *url);

#endif
