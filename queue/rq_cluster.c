/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cluster: the slot map of a Redis Cluster (see rq_cluster.h).
 */
#include "rq_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rq_cluster_init(rq_cluster *m)
{
	memset(m, 0, sizeof(*m));
}

void rq_cluster_free(rq_cluster *m)
{
	free(m->nodes);
	rq_cluster_init(m);
}

int rq_cluster_addr_eq(const rq_redis_addr *a, const rq_redis_addr *b)
{
	return a->port == b->port && !strcmp(a->host, b->host);
}

/* The index of the node at a, added if new: -1 out of memory. */
static int node_index(rq_cluster *m, const rq_redis_addr *a)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (rq_cluster_addr_eq(&m->nodes[i].addr, a))
			return (int)i;
	if (m->nnodes == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		rq_cluster_node *n;
		if (cap > 65535 || !(n = realloc(m->nodes, cap * sizeof(*n))))
			return -1;
		m->nodes = n;
		m->cap = cap;
	}
	m->nodes[m->nnodes].addr = *a;
	m->nodes[m->nnodes].replicas = 0;
	return (int)m->nnodes++;
}

/* A node of a CLUSTER SLOTS range, [host, port, id, ...]: 0 with *a set,
 * 1 when its address is not known ("?"), -1 when it is not such a node. */
static int entry_addr(const redisReply *e, const rq_redis_addr *from, rq_redis_addr *a)
{
	const redisReply *h, *p;

	if (e->type != REDIS_REPLY_ARRAY || e->elements < 2)
		return -1;
	h = e->element[0];
	p = e->element[1];
	if (p->type != REDIS_REPLY_INTEGER || p->integer < 1 || p->integer > 65535)
		return -1;
	if (h->type != REDIS_REPLY_NIL && h->type != REDIS_REPLY_STRING)
		return -1;
	if (h->type == REDIS_REPLY_STRING && h->len == 1 && h->str[0] == '?')
		return 1;
	if (h->type == REDIS_REPLY_NIL || h->len == 0)
		snprintf(a->host, sizeof(a->host), "%s", from->host);
	else if (h->len >= sizeof(a->host) || memchr(h->str, '\0', h->len))
		return -1;
	else
		memcpy(a->host, h->str, h->len + 1);
	a->port = (int)p->integer;
	return 0;
}

/* One range [start, end, master, replica...] into m: the slots it
 * serves (0 when its master is not known), or -1 (not a range), -2 (out
 * of memory). */
static long load_range(rq_cluster *m, const redisReply *r, const rq_redis_addr *from)
{
	rq_redis_addr a;
	long long start, end;
	int master, rc, replicas = 0;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER)
		return -1;
	start = r->element[0]->integer;
	end = r->element[1]->integer;
	if (start < 0 || end < start || end >= RQ_SLOT_COUNT)
		return -1;
	if ((rc = entry_addr(r->element[2], from, &a)) != 0)
		return rc < 0 ? -1 : 0;
	if ((master = node_index(m, &a)) < 0)
		return -2;
	for (size_t j = 3; j < r->elements; j++) {
		if ((rc = entry_addr(r->element[j], from, &a)) < 0)
			return -1;
		if (rc == 0 && node_index(m, &a) < 0)
			return -2;
		replicas += rc == 0;
	}
	m->nodes[master].replicas = replicas;
	for (long long s = start; s <= end; s++)
		m->owner[s] = (unsigned short)(master + 1);
	return (long)(end - start + 1);
}

int rq_cluster_load(rq_cluster *m, const redisReply *rep, const rq_redis_addr *from, rq_error *err)
{
	rq_cluster *t;
	long served = 0, n = 0;

	if (!rep || rep->type != REDIS_REPLY_ARRAY)
		return rq_error_set(err, RQ_E_REDIS, "CLUSTER SLOTS: unexpected reply");
	if (!(t = calloc(1, sizeof(*t))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < rep->elements && n >= 0; i++)
		if ((n = load_range(t, rep->element[i], from)) > 0)
			served += n;
	if (n < 0 || served == 0) {
		rq_cluster_free(t);
		free(t);
		if (n == -2)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return rq_error_set(err, RQ_E_REDIS, "CLUSTER SLOTS: %s",
				    n < 0 ? "unexpected reply" : "no slot is served");
	}
	free(m->nodes);
	*m = *t;
	free(t);
	return 0;
}

const rq_cluster_node *rq_cluster_owner(const rq_cluster *m, int slot)
{
	if (slot < 0 || slot >= RQ_SLOT_COUNT || !m->owner[slot])
		return NULL;
	return &m->nodes[m->owner[slot] - 1];
}

int rq_cluster_set_owner(rq_cluster *m, int slot, const rq_redis_addr *a)
{
	int i;

	if (slot < 0 || slot >= RQ_SLOT_COUNT || (i = node_index(m, a)) < 0)
		return -1;
	m->owner[slot] = (unsigned short)(i + 1);
	return 0;
}

const rq_cluster_node *rq_cluster_find(const rq_cluster *m, const rq_redis_addr *a)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (rq_cluster_addr_eq(&m->nodes[i].addr, a))
			return &m->nodes[i];
	return NULL;
}

/* "<host>:<port>" (host possibly empty or in brackets) into to. */
static int parse_hostport(const char *s, const rq_redis_addr *from, rq_redis_addr *to)
{
	const char *colon = strrchr(s, ':');
	size_t n;
	char *end;
	long port;

	if (!colon)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 1 || port > 65535)
		return -1;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n >= sizeof(to->host))
		return -1;
	if (n == 0 || (n == 1 && s[0] == '?'))
		snprintf(to->host, sizeof(to->host), "%s", from->host);
	else {
		memcpy(to->host, s, n);
		to->host[n] = '\0';
	}
	to->port = (int)port;
	return 0;
}

int rq_cluster_redirect(const char *msg, const rq_redis_addr *from, int *slot, rq_redis_addr *to)
{
	int kind = !strncmp(msg, "MOVED ", 6) ? RQ_CLUSTER_MOVED
		   : !strncmp(msg, "ASK ", 4) ? RQ_CLUSTER_ASK
					      : RQ_CLUSTER_NO_REDIRECT;
	const char *p = msg + (kind == RQ_CLUSTER_MOVED ? 6 : 4);
	char *end;
	long s;

	if (kind == RQ_CLUSTER_NO_REDIRECT)
		return kind;
	s = strtol(p, &end, 10);
	if (end == p || *end != ' ' || s < 0 || s >= RQ_SLOT_COUNT ||
	    parse_hostport(end + 1, from, to) < 0)
		return RQ_CLUSTER_NO_REDIRECT;
	*slot = (int)s;
	return kind;
}
