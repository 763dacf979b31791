/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's commit-reach.c (paint_down_to_common, remove_redundant,
 * get_merge_bases_many, repo_in_merge_bases) */
/*
 * rq_reach: merge bases and ancestry (see rq_reach.h): git's paint-down
 * walk over a date-ordered queue, the replay's ranks first when given.
 */
#include "rq_reach.h"

#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

enum { SIDE1 = 1, SIDE2 = 2, STALE = 4, RESULT = 8 };

#define NO_NODE ((size_t)-1)

typedef struct rc_node {
	rq_oid id;
	int64_t date;
	size_t rank; /* 0: not written by the replay */
	rq_oid *parents;
	size_t np;
	unsigned flags;
} rc_node;

/* A queue entry: a node, and when it was queued (ties keep that order). */
typedef struct rc_entry {
	size_t node;
	uint64_t seq;
} rc_entry;

typedef struct rc_walk {
	const rq_reach_reader *rd;
	const rq_oidmap *ranks;
	int use_ranks;
	size_t stop; /* a node whose SIDE2 ends the walk (NO_NODE: none) */
	rq_error *err;
	rc_node *nodes;
	size_t n, cap;
	rq_oidmap index; /* id -> node */
	rc_entry *heap;
	size_t qn, qcap;
	uint64_t seq;
} rc_walk;

static int nomem(rq_error *err)
{
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* Does a come out of the queue before b? The replay's commits first (when
 * ranked), the later ranked first; then the newer; then the first queued. */
static int before(const rc_walk *w, const rc_entry *a, const rc_entry *b)
{
	const rc_node *x = &w->nodes[a->node], *y = &w->nodes[b->node];

	if (w->use_ranks && x->rank != y->rank)
		return x->rank > y->rank;
	if (x->date != y->date)
		return x->date > y->date;
	return a->seq < b->seq;
}

static void swap(rc_entry *h, size_t a, size_t b)
{
	rc_entry t = h[a];
	h[a] = h[b];
	h[b] = t;
}

static int push(rc_walk *w, size_t node)
{
	rc_entry *nh = rq_mem_grow(w->heap, &w->qcap, w->qn + 1, sizeof(*nh), 32);
	size_t k;

	if (!nh)
		return nomem(w->err);
	w->heap = nh;
	k = w->qn++;
	w->heap[k] = (rc_entry){node, w->seq++};
	while (k > 0 && before(w, &w->heap[k], &w->heap[(k - 1) / 2])) {
		swap(w->heap, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
	return 0;
}

static size_t pop(rc_walk *w)
{
	size_t node = w->heap[0].node, k = 0;

	w->heap[0] = w->heap[--w->qn];
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < w->qn && before(w, &w->heap[l], &w->heap[m]))
			m = l;
		if (r < w->qn && before(w, &w->heap[r], &w->heap[m]))
			m = r;
		if (m == k)
			break;
		swap(w->heap, m, k);
		k = m;
	}
	return node;
}

/* git's queue_has_nonstale(). */
static int has_nonstale(const rc_walk *w)
{
	for (size_t k = 0; k < w->qn; k++)
		if (!(w->nodes[w->heap[k].node].flags & STALE))
			return 1;
	return 0;
}

/* The node of commit id (read the first time: its date and parents). */
static int node_of(rc_walk *w, const rq_oid *id, size_t *out)
{
	rc_node *nv, nd = {0};
	size_t r;

	if (rq_oidmap_get(&w->index, id, out))
		return 0;
	if (w->rd->read(w->rd->ctx, id, &nd.date, &nd.parents, &nd.np, w->err) < 0)
		return -1;
	if (!(nv = rq_mem_grow(w->nodes, &w->cap, w->n + 1, sizeof(*nv), 64)) ||
	    rq_oidmap_put(&w->index, id, w->n) < 0) {
		free(nd.parents);
		return nomem(w->err);
	}
	w->nodes = nv;
	nd.id = *id;
	nd.rank = w->ranks && rq_oidmap_get(w->ranks, id, &r) ? r + 1 : 0;
	nv[w->n] = nd;
	*out = w->n++;
	return 0;
}

/* Queue commit id with flags (a side, STALE). */
static int mark(rc_walk *w, const rq_oid *id, unsigned flags)
{
	size_t k;

	if (node_of(w, id, &k) < 0)
		return -1;
	if ((w->nodes[k].flags & flags) == flags)
		return 0;
	w->nodes[k].flags |= flags;
	return push(w, k);
}

/* Queue the parents of node k with flags (node_of may move w->nodes: the
 * parents array itself stays). */
static int mark_parents(rc_walk *w, size_t k, unsigned flags)
{
	const rq_oid *parents = w->nodes[k].parents;
	size_t np = w->nodes[k].np;
	int rc = 0;

	for (size_t p = 0; p < np && rc == 0; p++)
		rc = mark(w, &parents[p], flags);
	return rc;
}

static int add_result(rc_walk *w, size_t k, size_t **res, size_t *nres, size_t *cap)
{
	size_t *nr = rq_mem_grow(*res, cap, *nres + 1, sizeof(*nr), 4);

	if (!nr)
		return nomem(w->err);
	*res = nr;
	(*res)[(*nres)++] = k;
	return 0;
}

/*
 * paint_down_to_common() from one (side 1) and twos (side 2): every
 * commit reached from both sides is a candidate (RESULT) unless reached
 * through one (STALE). The candidates, in the order found, into *res
 * (node indices, *nres of them; res NULL: none kept). Every flag is
 * cleared first.
 */
static int paint(rc_walk *w, const rq_oid *one, const rq_oid *twos, size_t ntwos, size_t **res,
		 size_t *nres)
{
	size_t cap = 0;
	int rc;

	for (size_t k = 0; k < w->n; k++)
		w->nodes[k].flags = 0;
	w->qn = 0;
	if (res)
		*nres = 0;
	rc = mark(w, one, SIDE1);
	for (size_t i = 0; i < ntwos && rc == 0; i++)
		rc = mark(w, &twos[i], SIDE2);
	while (rc == 0 && has_nonstale(w)) {
		size_t k = pop(w);
		unsigned flags = w->nodes[k].flags & (SIDE1 | SIDE2 | STALE);
		if (w->stop != NO_NODE && (w->nodes[w->stop].flags & SIDE2))
			break;
		if (flags == (SIDE1 | SIDE2)) {
			if (!(w->nodes[k].flags & RESULT) && res) {
				w->nodes[k].flags |= RESULT;
				if (add_result(w, k, res, nres, &cap) < 0)
					return -1;
			}
			flags |= STALE;
		}
		rc = mark_parents(w, k, flags);
	}
	return rc;
}

/* The candidates not made stale, in their order. */
static void drop_stale(const rc_walk *w, size_t *res, size_t *nres)
{
	size_t k = 0;

	for (size_t i = 0; i < *nres; i++)
		if (!(w->nodes[res[i]].flags & STALE))
			res[k++] = res[i];
	*nres = k;
}

/* Newest first, a stable sort (git's commit_list_insert_by_date). */
static void by_date(const rc_walk *w, size_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		size_t x = v[i], j = i;
		while (j > 0 && w->nodes[v[j - 1]].date < w->nodes[x].date) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Is candidate i reachable from another, or another from it? Marks the
 * redundant (one paint from v[i] against the others not yet redundant). */
static int redundant_of(rc_walk *w, const size_t *v, size_t n, size_t i, unsigned char *red,
			rq_oid *work)
{
	size_t nw = 0, *idx = malloc(n * sizeof(*idx));
	int rc;

	if (!idx)
		return nomem(w->err);
	for (size_t j = 0; j < n; j++)
		if (j != i && !red[j]) {
			idx[nw] = j;
			work[nw++] = w->nodes[v[j]].id;
		}
	rc = paint(w, &w->nodes[v[i]].id, work, nw, NULL, NULL);
	if (rc == 0 && (w->nodes[v[i]].flags & SIDE2))
		red[i] = 1;
	for (size_t j = 0; rc == 0 && j < nw; j++)
		if (w->nodes[v[idx[j]]].flags & SIDE1)
			red[idx[j]] = 1;
	free(idx);
	return rc;
}

/* git's remove_redundant(): drop the candidates reachable from another,
 * keeping the order of the others. */
static int remove_redundant(rc_walk *w, size_t *v, size_t *n)
{
	unsigned char *red = calloc(*n, 1);
	rq_oid *work = malloc(*n * sizeof(*work));
	size_t k = 0;
	int rc = 0;

	if (!red || !work)
		rc = nomem(w->err);
	for (size_t i = 0; rc == 0 && i < *n; i++)
		if (!red[i])
			rc = redundant_of(w, v, *n, i, red, work);
	for (size_t i = 0; rc == 0 && i < *n; i++)
		if (!red[i])
			v[k++] = v[i];
	if (rc == 0)
		*n = k;
	free(red);
	free(work);
	return rc;
}

/* The bases as node indices (*res, *nres), in git's order. */
static int walk_bases(rc_walk *w, const rq_oid *one, const rq_oid *twos, size_t ntwos, size_t **res,
		      size_t *nres)
{
	int rc = paint(w, one, twos, ntwos, res, nres);

	if (rc == 0)
		drop_stale(w, *res, nres);
	if (rc == 0 && *nres > 1 && w->use_ranks) {
		/* several: the plain walk, for git's order of them */
		w->use_ranks = 0;
		rc = paint(w, one, twos, ntwos, res, nres);
		if (rc == 0)
			drop_stale(w, *res, nres);
	}
	if (rc == 0 && *nres > 1) {
		by_date(w, *res, *nres);
		rc = remove_redundant(w, *res, nres);
	}
	return rc;
}

static void walk_init(rc_walk *w, const rq_reach_reader *rd, const rq_oidmap *ranks, rq_error *err)
{
	memset(w, 0, sizeof(*w));
	w->rd = rd;
	w->ranks = ranks;
	w->use_ranks = ranks != NULL;
	w->stop = NO_NODE;
	w->err = err;
	rq_oidmap_init(&w->index);
}

static void walk_free(rc_walk *w)
{
	for (size_t k = 0; k < w->n; k++)
		free(w->nodes[k].parents);
	free(w->nodes);
	free(w->heap);
	rq_oidmap_free(&w->index);
}

static int copy_ids(const rc_walk *w, const size_t *res, size_t nres, rq_oid **out, size_t *n,
		    rq_error *err)
{
	if (!nres)
		return 0;
	if (!(*out = malloc(nres * sizeof(**out))))
		return nomem(err);
	for (size_t i = 0; i < nres; i++)
		(*out)[i] = w->nodes[res[i]].id;
	*n = nres;
	return 0;
}

int rq_reach_bases(const rq_reach_reader *rd, const rq_oidmap *ranks, const rq_oid *one,
		   const rq_oid *twos, size_t ntwos, rq_oid **out, size_t *n, rq_error *err)
{
	rc_walk w;
	size_t *res = NULL, nres = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!ntwos)
		return 0;
	for (size_t i = 0; i < ntwos; i++)
		if (rq_oid_eq(one, &twos[i])) { /* git: one of them is the base */
			if (!(*out = malloc(sizeof(**out))))
				return nomem(err);
			**out = *one;
			*n = 1;
			return 0;
		}
	walk_init(&w, rd, ranks, err);
	rc = walk_bases(&w, one, twos, ntwos, &res, &nres);
	if (rc == 0)
		rc = copy_ids(&w, res, nres, out, n, err);
	free(res);
	walk_free(&w);
	return rc;
}

int rq_reach_descends(const rq_reach_reader *rd, const rq_oid *commit, const rq_oid *ancestor,
		      rq_error *err)
{
	rc_walk w;
	int rc;

	if (rq_oid_eq(commit, ancestor))
		return 0;
	walk_init(&w, rd, NULL, err);
	rc = node_of(&w, ancestor, &w.stop);
	if (rc == 0)
		rc = paint(&w, ancestor, commit, 1, NULL, NULL);
	if (rc == 0)
		rc = (w.nodes[w.stop].flags & SIDE2) != 0;
	walk_free(&w);
	return rc;
}
