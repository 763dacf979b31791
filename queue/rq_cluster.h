/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cluster: what a client knows of a Redis Cluster: the nodes and which
 * master serves each hash slot, from a CLUSTER SLOTS reply, corrected by
 * the MOVED redirections the servers answer with.
 *
 * A node that answers CLUSTER SLOTS lists, for each range of slots, the
 * master's address then its replicas'; an empty (or nil) host stands for
 * the host of the node asked, "?" for an address the node does not know
 * (that node is left out). A MOVED says that one slot has another
 * master now ("MOVED <slot> <host>:<port>", an empty host again meaning
 * the host of the node that answered); an ASK sends one command to
 * another node while a slot migrates, and changes nothing here.
 */
#ifndef RQ_CLUSTER_H
#define RQ_CLUSTER_H

#include <hiredis/hiredis.h>

#include "rq_qerror.h"
#include "rq_redis_url.h"
#include "rq_slot.h"

typedef struct rq_cluster_node {
	rq_redis_addr addr;
	int replicas; /* as the master of some slots: how many replicas it has */
} rq_cluster_node;

typedef struct rq_cluster {
	rq_cluster_node *nodes; /* masters and replicas of the last map, then moved-to nodes */
	size_t nnodes, cap;
	unsigned short owner[RQ_SLOT_COUNT]; /* index in nodes + 1; 0: not known */
} rq_cluster;

/* A map that knows nothing (rq_cluster_free gives back what it holds). */
void rq_cluster_init(rq_cluster *m);
void rq_cluster_free(rq_cluster *m);

/*
 * Replace the map with a CLUSTER SLOTS reply asked of from: 0, or -1 with
 * err set (not such a reply, one that serves no slot, or RQ_E_NOMEM), the
 * map then left as it was.
 */
int rq_cluster_load(rq_cluster *m, const redisReply *rep, const rq_redis_addr *from, rq_error *err);

/* The master of a slot, or NULL when not known. */
const rq_cluster_node *rq_cluster_owner(const rq_cluster *m, int slot);

/* The slot has the master at a now (a MOVED): 0, or -1 out of memory. */
int rq_cluster_set_owner(rq_cluster *m, int slot, const rq_redis_addr *a);

/* The node at a, or NULL when the map does not name it. */
const rq_cluster_node *rq_cluster_find(const rq_cluster *m, const rq_redis_addr *a);

enum { RQ_CLUSTER_NO_REDIRECT = 0, RQ_CLUSTER_MOVED, RQ_CLUSTER_ASK };

/*
 * An error reply's text as a redirection: RQ_CLUSTER_MOVED or
 * RQ_CLUSTER_ASK with *slot and *to set (an empty host is from's), or
 * RQ_CLUSTER_NO_REDIRECT for any other text (a malformed MOVED too).
 */
int rq_cluster_redirect(const char *msg, const rq_redis_addr *from, int *slot, rq_redis_addr *to);

/* 1 when two addresses are the same (host compared as written). */
int rq_cluster_addr_eq(const rq_redis_addr *a, const rq_redis_addr *b);

#endif
