/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's commit-reach.c (paint_down_to_common) */
/*
 * rq_mergebase: merge bases for a replay's remerges (see rq_mergebase.h):
 * git's paint-down walk, ordered by the replay's ranks before dates.
 */
#include "rq_mergebase.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

enum { SIDE1 = 1, SIDE2 = 2, STALE = 4, RESULT = 8 };

typedef struct mb_node {
	git_oid id;
	int64_t date;
	size_t rank; /* 0: not written by the replay */
	unsigned flags;
} mb_node;

/* A queue entry: a node, and when it was queued (ties keep that order). */
typedef struct mb_entry {
	size_t node;
	uint64_t seq;
} mb_entry;

typedef struct mb_walk {
	git_repository *repo;
	const rq_oidmap *ranks;
	rq_error *err;
	mb_node *nodes;
	size_t n, cap;
	rq_oidmap index; /* id -> node */
	mb_entry *heap;
	size_t qn, qcap;
	uint64_t seq;
} mb_walk;

/* Does a come out of the queue before b? The replay's commits first, the
 * later ranked first; then the newer; then the first queued. */
static int before(const mb_walk *w, const mb_entry *a, const mb_entry *b)
{
	const mb_node *x = &w->nodes[a->node], *y = &w->nodes[b->node];

	if (x->rank != y->rank)
		return x->rank > y->rank;
	if (x->date != y->date)
		return x->date > y->date;
	return a->seq < b->seq;
}

static void swap(mb_entry *h, size_t a, size_t b)
{
	mb_entry t = h[a];
	h[a] = h[b];
	h[b] = t;
}

static int push(mb_walk *w, size_t node)
{
	mb_entry *nh = rq_mem_grow(w->heap, &w->qcap, w->qn + 1, sizeof(*nh), 32);
	size_t k;

	if (!nh)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	w->heap = nh;
	k = w->qn++;
	w->heap[k] = (mb_entry){node, w->seq++};
	while (k > 0 && before(w, &w->heap[k], &w->heap[(k - 1) / 2])) {
		swap(w->heap, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
	return 0;
}

static size_t pop(mb_walk *w)
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
static int has_nonstale(const mb_walk *w)
{
	for (size_t k = 0; k < w->qn; k++)
		if (!(w->nodes[w->heap[k].node].flags & STALE))
			return 1;
	return 0;
}

/* The node of commit id (read for its date the first time). */
static int node_of(mb_walk *w, const git_oid *id, size_t *out)
{
	git_commit *c = NULL;
	mb_node *nv;
	size_t r;

	if (rq_oidmap_get(&w->index, id, out))
		return 0;
	if (git_commit_lookup(&c, w->repo, id) < 0)
		return rq_error_git(w->err, "cannot read a commit");
	if (!(nv = rq_mem_grow(w->nodes, &w->cap, w->n + 1, sizeof(*nv), 64)) ||
	    rq_oidmap_put(&w->index, id, w->n) < 0) {
		git_commit_free(c);
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	}
	w->nodes = nv;
	memset(&nv[w->n], 0, sizeof(*nv));
	git_oid_cpy(&nv[w->n].id, id);
	nv[w->n].date = (int64_t)git_commit_time(c);
	nv[w->n].rank = w->ranks && rq_oidmap_get(w->ranks, id, &r) ? r + 1 : 0;
	git_commit_free(c);
	*out = w->n++;
	return 0;
}

/* Queue commit id with flags (a side, STALE). */
static int mark(mb_walk *w, const git_oid *id, unsigned flags)
{
	size_t k;

	if (node_of(w, id, &k) < 0)
		return -1;
	if ((w->nodes[k].flags & flags) == flags)
		return 0;
	w->nodes[k].flags |= flags;
	return push(w, k);
}

/* Queue the parents of node k with flags. */
static int mark_parents(mb_walk *w, size_t k, unsigned flags)
{
	git_commit *c = NULL;
	int rc = 0;

	if (git_commit_lookup(&c, w->repo, &w->nodes[k].id) < 0)
		return rq_error_git(w->err, "cannot read a commit");
	for (unsigned p = 0; p < git_commit_parentcount(c) && rc == 0; p++)
		rc = mark(w, git_commit_parent_id(c, p), flags);
	git_commit_free(c);
	return rc;
}

/*
 * paint_down_to_common(): every commit reached from both sides is a
 * candidate (RESULT) unless reached through one (STALE). The candidates,
 * in the order found, into *res (node indices; *nres of them).
 */
static int paint_down(mb_walk *w, size_t **res, size_t *nres)
{
	size_t cap = 0;

	*nres = 0;
	while (has_nonstale(w)) {
		size_t k = pop(w), *nr;
		unsigned flags = w->nodes[k].flags & (SIDE1 | SIDE2 | STALE);
		if (flags == (SIDE1 | SIDE2)) {
			if (!(w->nodes[k].flags & RESULT)) {
				w->nodes[k].flags |= RESULT;
				if (!(nr = rq_mem_grow(*res, &cap, *nres + 1, sizeof(*nr), 4)))
					return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
				*res = nr;
				(*res)[(*nres)++] = k;
			}
			flags |= STALE;
		}
		if (mark_parents(w, k, flags) < 0)
			return -1;
	}
	return 0;
}

/* Several candidates: libgit2's merge bases, which drop the redundant. */
static int libgit2_bases(mb_walk *w, const git_oid *b, const git_oid *leaves, size_t nleaves,
			 git_oid **out, size_t *n)
{
	git_oidarray arr = {0};
	git_oid *in = malloc((nleaves + 1) * sizeof(*in));
	int rc;

	if (!in)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&in[0], b);
	memcpy(in + 1, leaves, nleaves * sizeof(*in));
	rc = git_merge_bases_many(&arr, w->repo, nleaves + 1, in);
	free(in);
	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rq_error_git(w->err, "cannot find the merge bases");
	if (arr.count && !(*out = malloc(arr.count * sizeof(**out)))) {
		git_oidarray_dispose(&arr);
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	}
	memcpy(*out, arr.ids, arr.count * sizeof(**out));
	*n = arr.count;
	git_oidarray_dispose(&arr);
	return 0;
}

/* The walk from b (side 1) and the leaves (side 2); its candidates not
 * made stale afterwards. */
static int walk_bases(mb_walk *w, const git_oid *b, const git_oid *leaves, size_t nleaves,
		      size_t **res, size_t *nres)
{
	size_t k = 0;
	int rc = mark(w, b, SIDE1);

	for (size_t i = 0; i < nleaves && rc == 0; i++)
		rc = mark(w, &leaves[i], SIDE2);
	if (rc == 0)
		rc = paint_down(w, res, nres);
	for (size_t i = 0; rc == 0 && i < *nres; i++)
		if (!(w->nodes[(*res)[i]].flags & STALE))
			(*res)[k++] = (*res)[i];
	if (rc == 0)
		*nres = k;
	return rc;
}

int rq_mergebase(git_repository *repo, const rq_oidmap *ranks, const git_oid *b,
		 const git_oid *leaves, size_t nleaves, git_oid **out, size_t *n, rq_error *err)
{
	mb_walk w = {repo, ranks, err, NULL, 0, 0, {0}, NULL, 0, 0, 0};
	size_t *res = NULL, nres = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < nleaves; i++)
		if (git_oid_equal(b, &leaves[i])) { /* git: one of them is the base */
			if (!(*out = malloc(sizeof(**out))))
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			git_oid_cpy(*out, b);
			*n = 1;
			return 0;
		}
	rq_oidmap_init(&w.index);
	rc = walk_bases(&w, b, leaves, nleaves, &res, &nres);
	if (rc == 0 && nres == 1) {
		if (!(*out = malloc(sizeof(**out))))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			git_oid_cpy(*out, &w.nodes[res[0]].id);
		*n = rc == 0;
	} else if (rc == 0 && nres > 1) {
		rc = libgit2_bases(&w, b, leaves, nleaves, out, n);
	}
	free(res);
	free(w.nodes);
	free(w.heap);
	rq_oidmap_free(&w.index);
	return rc;
}
