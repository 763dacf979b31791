/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_ha: a client on redis+cluster or redis+sentinel (internal to
 * queue/, called by rq_redis.c; see rq_redis_conn.h for the map of the
 * client): each command sent to the master that serves it, its
 * redirections followed, transient answers retried within the budget.
 */
#ifndef RQ_REDIS_HA_H
#define RQ_REDIS_HA_H

#include "rq_redis_conn.h"

/* Connect at first within the budget (to any node of a cluster): 0, -1,
 * or -2 (no retry can help). */
int rq_redis_ha_connect(rq_redis *r, long long deadline, rq_error *err);

/* rq_redis_cmd on a cluster or behind Sentinel: sent where it goes,
 * redirections followed, transient answers retried within the budget. */
redisReply *rq_redis_ha_cmd(rq_redis *r, int block_ms, rq_error *err, int argc, const char **argv,
			    const size_t *lens);

/* rq_redis_send on a cluster or behind Sentinel: keep a copy of the
 * command for a resend (0, or -1 out of memory), then write the kept
 * command where it goes (to ask, once, after ASKING), connecting within
 * the budget: 0, or -1 with err set. The copy is freed by free_sent. */
int rq_redis_ha_keep_sent(rq_redis *r, int argc, const char **argv, rq_error *err);
int rq_redis_ha_write(rq_redis *r, const rq_redis_addr *ask, rq_error *err);
void rq_redis_ha_free_sent(rq_redis *r);

/* rq_redis_recv on a cluster or behind Sentinel: a redirection sends
 * the command again where it goes (0: not complete yet). */
int rq_redis_ha_recv(rq_redis *r, redisReply **reply, rq_error *err);

/* ROLE on the connection: 1 a master (its connected replicas noted), 0
 * not a master, 2 not allowed (NOPERM), -1 the connection broke (err). */
int rq_redis_ha_role(rq_redis *r, rq_error *err);

#endif
