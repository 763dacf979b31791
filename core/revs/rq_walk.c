/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's revision walk (revision.c) for the order git replay uses */
/*
 * rq_walk: select and order the commits of a replay.
 *
 * A date-ordered walk marks what the negative revisions exclude (stopping,
 * as git does, a few commits after only excluded commits remain), then a
 * depth-first topological sort in graph order orders the rest.
 */
#include "rq_walk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_oidmap.h"

#define F_SEEN		1u
#define F_UNINTERESTING 2u
#define F_PARSED	4u
#define F_QUEUED	8u /* in the walk's queue */

#define SLOP 5

typedef struct node {
	rq_oid oid;
	int64_t date;
	size_t *parents;
	unsigned nparents;
	unsigned flags;
	unsigned indegree;
	const rq_cobj_commit *commit; /* in the job's cache */
} node;

/*
 * The walk's queue: git keeps a list sorted by date, newest first, a new
 * entry going after every entry of equal or newer date; that costs a scan
 * per insertion (quadratic in the number of branches). This binary heap
 * pops in the same order: by date, newest first, then by insertion order.
 */
typedef struct qent {
	int64_t date;
	uint64_t seq;
	size_t node;
} qent;

typedef struct walker {
	git_repository *repo;
	const rq_oid_algo *algo; /* the repository's object format */
	rq_cobj_cache *cache;	 /* the job's commits (rq_revs') */
	rq_odb_read *reader;	 /* and their reader (the filters' trees) */
	node *nodes;
	size_t n, cap;
	rq_oidmap map;
	qent *heap;
	size_t qn, qcap;
	uint64_t seq;
	size_t qinteresting; /* queued nodes not (yet) excluded */
	int first_parent;    /* --first-parent: follow only first parents */
	rq_error *err;
} walker;

/* Exclude a node; the queue's count of interesting entries follows. */
static void mark_excluded(walker *w, size_t i)
{
	node *nd = &w->nodes[i];
	if (nd->flags & F_UNINTERESTING)
		return;
	nd->flags |= F_UNINTERESTING;
	if (nd->flags & F_QUEUED)
		w->qinteresting--;
}

static int qent_before(const qent *a, const qent *b)
{
	return a->date > b->date || (a->date == b->date && a->seq < b->seq);
}

static void qswap(qent *h, size_t a, size_t b)
{
	qent t = h[a];
	h[a] = h[b];
	h[b] = t;
}

static int queue_push(walker *w, size_t ni)
{
	size_t k;
	qent *nh = rq_mem_grow(w->heap, &w->qcap, w->qn + 1, sizeof(*nh), 64);

	if (!nh)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	w->heap = nh;
	k = w->qn++;
	w->heap[k] = (qent){w->nodes[ni].date, w->seq++, ni};
	while (k > 0) {
		size_t up = (k - 1) / 2;
		if (!qent_before(&w->heap[k], &w->heap[up]))
			break;
		qswap(w->heap, up, k);
		k = up;
	}
	w->nodes[ni].flags |= F_QUEUED;
	if (!(w->nodes[ni].flags & F_UNINTERESTING))
		w->qinteresting++;
	return 0;
}

static size_t queue_pop(walker *w)
{
	size_t ni = w->heap[0].node, k = 0;

	w->heap[0] = w->heap[--w->qn];
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < w->qn && qent_before(&w->heap[l], &w->heap[m]))
			m = l;
		if (r < w->qn && qent_before(&w->heap[r], &w->heap[m]))
			m = r;
		if (m == k)
			break;
		qswap(w->heap, m, k);
		k = m;
	}
	w->nodes[ni].flags &= ~F_QUEUED;
	if (!(w->nodes[ni].flags & F_UNINTERESTING))
		w->qinteresting--;
	return ni;
}

static int get_node(walker *w, const rq_oid *oid, size_t *out)
{
	if (rq_oidmap_get(&w->map, oid, out))
		return 0;
	node *nn = rq_mem_grow(w->nodes, &w->cap, w->n + 1, sizeof(*nn), 256);
	if (!nn)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	w->nodes = nn;
	memset(&w->nodes[w->n], 0, sizeof(node));
	w->nodes[w->n].oid = *oid;
	if (rq_oidmap_put(&w->map, oid, w->n) < 0)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	*out = w->n++;
	return 0;
}

static int parse_node(walker *w, size_t i)
{
	const rq_cobj_commit *c = NULL;
	size_t np, *parents = NULL;

	if (w->nodes[i].flags & F_PARSED)
		return 0;
	if (rq_cobj_get(w->cache, &w->nodes[i].oid, &c, w->err) < 0) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		if (w->err && (w->err->code == RQ_E_CORRUPT_OBJECT || w->err->code == RQ_E_NOMEM))
			return -1;
		rq_oid_fmt(hex, &w->nodes[i].oid, w->algo);
		return rq_error_set(w->err, RQ_E_BAD_REVISION, "could not parse commit %s", hex);
	}
	np = c->nparents;
	if (w->first_parent && np > 1)
		np = 1;
	if (np && !(parents = malloc(np * sizeof(*parents))))
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	for (size_t k = 0; k < np; k++) {
		if (get_node(w, &c->parents[k], &parents[k]) < 0) {
			free(parents);
			return -1;
		}
	}
	/* get_node may have moved the array */
	w->nodes[i].commit = c;
	w->nodes[i].parents = parents;
	w->nodes[i].nparents = (unsigned)np;
	w->nodes[i].date = c->date > INT64_MAX ? INT64_MAX : (int64_t)c->date;
	w->nodes[i].flags |= F_PARSED;
	return 0;
}

/* Append v to a list of node indices (a stack, the walk's output). */
static int append_index(walker *w, size_t **stack, size_t *sn, size_t *scap, size_t v)
{
	size_t *ns = rq_mem_grow(*stack, scap, *sn + 1, sizeof(*ns), 64);

	if (!ns)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	*stack = ns;
	(*stack)[(*sn)++] = v;
	return 0;
}

/* Mark every known ancestor of start excluded (git's mark_parents_uninteresting). */
static int mark_parents_uninteresting(walker *w, size_t start)
{
	size_t *stack = NULL, sn = 0, scap = 0;
	int rc = 0;

	for (unsigned k = 0; k < w->nodes[start].nparents && !rc; k++)
		rc = append_index(w, &stack, &sn, &scap, w->nodes[start].parents[k]);
	while (sn && !rc) {
		size_t pi = stack[--sn];
		node *p = &w->nodes[pi];
		if (p->flags & F_UNINTERESTING)
			continue;
		mark_excluded(w, pi);
		for (unsigned j = 0; j < p->nparents && !rc; j++)
			rc = append_index(w, &stack, &sn, &scap, p->parents[j]);
	}
	free(stack);
	return rc;
}

static int process_parents(walker *w, size_t ni)
{
	unsigned np = w->nodes[ni].nparents;

	if (w->nodes[ni].flags & F_UNINTERESTING) {
		for (unsigned k = 0; k < np; k++) {
			size_t pi = w->nodes[ni].parents[k];
			mark_excluded(w, pi);
			if (parse_node(w, pi) < 0)
				return -1;
			if (w->nodes[pi].nparents && mark_parents_uninteresting(w, pi) < 0)
				return -1;
			if (w->nodes[pi].flags & F_SEEN)
				continue;
			w->nodes[pi].flags |= F_SEEN;
			if (queue_push(w, pi) < 0)
				return -1;
		}
		return 0;
	}
	for (unsigned k = 0; k < np; k++) {
		size_t pi = w->nodes[ni].parents[k];
		if (parse_node(w, pi) < 0)
			return -1;
		if (!(w->nodes[pi].flags & F_SEEN)) {
			w->nodes[pi].flags |= F_SEEN;
			if (queue_push(w, pi) < 0)
				return -1;
		}
	}
	return 0;
}

static int still_interesting(walker *w, int64_t date, int slop)
{
	if (!w->qn)
		return 0;
	if (date <= w->heap[0].date)
		return SLOP;
	if (w->qinteresting) /* not everybody uninteresting */
		return SLOP;
	return slop - 1;
}

/*
 * Queue the starting points: every revision's commit once, a negative
 * one excluded with its ancestors, newest first (a stable sort, as git's
 * date-ordered commit list).
 */
static int queue_tips(walker *w, const rq_revs *revs)
{
	size_t *tips = malloc((revs->n + 1) * sizeof(*tips)), ntips = 0;
	int rc = -1;

	if (!tips)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < revs->n; i++) {
		size_t ni;
		if (get_node(w, &revs->v[i].oid, &ni) < 0 || parse_node(w, ni) < 0)
			goto out;
		if (revs->v[i].negative) {
			mark_excluded(w, ni);
			if (mark_parents_uninteresting(w, ni) < 0)
				goto out;
		}
		if (!(w->nodes[ni].flags & F_SEEN)) {
			w->nodes[ni].flags |= F_SEEN;
			tips[ntips++] = ni;
		}
	}
	for (size_t i = 1; i < ntips; i++) {
		size_t v = tips[i], j = i;
		while (j > 0 && w->nodes[tips[j - 1]].date < w->nodes[v].date) {
			tips[j] = tips[j - 1];
			j--;
		}
		tips[j] = v;
	}
	for (size_t i = 0; i < ntips; i++)
		if (queue_push(w, tips[i]) < 0)
			goto out;
	rc = 0;
out:
	free(tips);
	return rc;
}

/* Drop from list what turned out to be excluded after it was listed. */
static void drop_excluded(const walker *w, size_t *list, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++)
		if (!(w->nodes[list[i]].flags & F_UNINTERESTING))
			list[k++] = list[i];
	*n = k;
}

/*
 * git's limit_list(): walk from the tips by date, newest first, until only
 * excluded commits are left (and SLOP more of them, as git does, in case
 * an older excluded commit still reaches a listed one). *order: the
 * commits not excluded, in the order the walk met them.
 */
static int limit(walker *w, const rq_revs *revs, size_t **order, size_t *norder)
{
	size_t *out = NULL, nout = 0, cap = 0;
	int64_t date = INT64_MAX;
	int slop = SLOP;

	if (queue_tips(w, revs) < 0)
		goto fail;
	while (w->qn) {
		size_t ni = queue_pop(w);
		if (process_parents(w, ni) < 0)
			goto fail;
		if (w->nodes[ni].flags & F_UNINTERESTING) {
			if (mark_parents_uninteresting(w, ni) < 0)
				goto fail;
			slop = still_interesting(w, date, slop);
			if (slop)
				continue;
			break;
		}
		date = w->nodes[ni].date;
		if (append_index(w, &out, &nout, &cap, ni) < 0)
			goto fail;
	}
	w->qn = 0;
	drop_excluded(w, out, &nout);
	*order = out;
	*norder = nout;
	return 0;
fail:
	w->qn = 0;
	free(out);
	return -1;
}

/* git's sort_in_topological_order with REV_SORT_IN_GRAPH_ORDER. */
static int topo_sort(walker *w, size_t *orig, size_t n, size_t *sorted)
{
	size_t *stack = malloc((n + 1) * sizeof(*stack)), sn = 0, on = 0;

	if (!stack)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		w->nodes[orig[i]].indegree = 1;
	for (size_t i = 0; i < n; i++) {
		node *c = &w->nodes[orig[i]];
		for (unsigned k = 0; k < c->nparents; k++)
			if (w->nodes[c->parents[k]].indegree)
				w->nodes[c->parents[k]].indegree++;
	}
	/* tips, pushed so that the first in walk order pops first */
	for (size_t i = n; i-- > 0;)
		if (w->nodes[orig[i]].indegree == 1)
			stack[sn++] = orig[i];
	while (sn) {
		size_t ci = stack[--sn];
		node *c = &w->nodes[ci];
		for (unsigned k = 0; k < c->nparents; k++) {
			node *p = &w->nodes[c->parents[k]];
			if (!p->indegree)
				continue;
			if (--p->indegree == 1)
				stack[sn++] = c->parents[k];
		}
		c->indegree = 0;
		sorted[on++] = ci;
	}
	free(stack);
	if (on != n)
		return rq_error_set(w->err, RQ_E_INTERNAL, "topological sort lost commits");
	return 0;
}

static void walker_free(walker *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->nodes[i].parents);
	free(w->nodes);
	rq_oidmap_free(&w->map);
	free(w->heap);
}

/*
 * --ancestry-path: keep the commits that descend from one of the bottoms
 * (sorted is newest first, so parents come after their children). With
 * given commits, also their ancestors and the commits themselves.
 */
static void ancestry_path(walker *w, size_t *sorted, size_t *n, const size_t *bottoms, size_t nb,
			  int with_ancestors)
{
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++)
		w->nodes[i].indegree = 0; /* reused: 1 descends from a bottom, 2 ancestor */
	for (size_t b = 0; b < nb; b++)
		w->nodes[bottoms[b]].indegree |= 1 | (with_ancestors ? 2 : 0);
	for (size_t i = *n; i-- > 0;) {
		node *c = &w->nodes[sorted[i]];
		for (unsigned p = 0; p < c->nparents; p++)
			c->indegree |= w->nodes[c->parents[p]].indegree & 1;
	}
	for (size_t i = 0; with_ancestors && i < *n; i++) {
		node *c = &w->nodes[sorted[i]];
		if (c->indegree & 2)
			for (unsigned p = 0; p < c->nparents; p++)
				w->nodes[c->parents[p]].indegree |= 2;
	}
	for (size_t i = 0; i < *n; i++)
		if (w->nodes[sorted[i]].indegree)
			sorted[k++] = sorted[i];
	*n = k;
	for (size_t i = 0; i < w->n; i++)
		w->nodes[i].indegree = 0;
}

/* The bottoms of --ancestry-path: the given commits, else the negative
 * revisions. *out is malloc'ed. */
static int ancestry_bottoms(walker *w, const rq_revs *revs, size_t **out, size_t *nb)
{
	const rq_revfilter *f = &revs->filter;
	size_t n = f->ancestry_path & 2 ? f->nancestry : revs->n;

	*nb = 0;
	if (!(*out = malloc((n + 1) * sizeof(**out))))
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		rq_oid id;
		size_t ni;
		if (f->ancestry_path & 2) {
			if (rq_revs_resolve_commit(w->repo, revs->commits, w->algo, f->ancestry[i],
						   &id, w->err) < 0)
				return -1;
		} else if (revs->v[i].negative) {
			id = revs->v[i].oid;
		} else {
			continue;
		}
		if (get_node(w, &id, &ni) < 0)
			return -1;
		(*out)[(*nb)++] = ni;
	}
	return 0;
}

/* What the walk options leave of sorted (newest first): the ancestry
 * path, the commit filters, then --skip and --max-count, as rev-list. */
static int apply_filters(walker *w, const rq_revs *revs, size_t *sorted, size_t *n)
{
	const rq_revfilter *f = &revs->filter;
	size_t k = 0, skip = (size_t)f->skip;

	if (f->ancestry_path) {
		size_t *b = NULL, nb = 0;
		if (ancestry_bottoms(w, revs, &b, &nb) < 0) {
			free(b);
			return -1;
		}
		ancestry_path(w, sorted, n, b, nb, (f->ancestry_path & 2) != 0);
		free(b);
	}
	for (size_t i = 0; i < *n; i++) {
		int m = rq_revfilter_active(f)
			    ? rq_revfilter_match(f, w->repo, w->cache, w->reader, w->algo,
						 w->nodes[sorted[i]].commit)
			    : 1;
		if (m < 0)
			return rq_error_git(w->err, "cannot compare a commit's trees");
		if (!m)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		if (f->max_count >= 0 && k >= (size_t)f->max_count)
			break;
		sorted[k++] = sorted[i];
	}
	*n = k;
	return 0;
}

/* What a replay refuses among the selected commits: more than max_commits
 * (0: no limit). Merge commits are selected like any other (with
 * --first-parent, a merge's other parents are not walked, and are outside
 * the range); the replay decides what to do with them. */
static int check_selection(const walker *w, size_t n, size_t max_commits)
{
	if (max_commits && n > max_commits)
		return rq_error_set(w->err, RQ_E_TOO_MANY_COMMITS,
				    "the range holds %zu commits, more than the limit of %zu", n,
				    max_commits);
	return 0;
}

/* The boundary: excluded parents of the selected commits (sorted[0..n)). */
static int find_boundary(const walker *w, const size_t *sorted, size_t n, rq_oidmap *out)
{
	for (size_t i = 0; i < n; i++) {
		const node *c = &w->nodes[sorted[i]];
		for (unsigned k = 0; k < c->nparents; k++) {
			const node *p = &w->nodes[c->parents[k]];
			if ((p->flags & F_UNINTERESTING) && rq_oidmap_put(out, &p->oid, 0) < 0)
				return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
		}
	}
	return 0;
}

/* The selected commits (sorted, newest first) into out, in replay order;
 * their ownership moves there. 0, or -1 out of memory. */
static int hand_over(walker *w, const size_t *sorted, size_t n, int newest_first, rq_walk *out)
{
	if (!(out->commits = calloc(n + 1, sizeof(*out->commits))))
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t ni = sorted[newest_first ? i : n - 1 - i];
		out->commits[i] = w->nodes[ni].commit;
	}
	out->n = n;
	return 0;
}

int rq_walk_run(git_repository *repo, const rq_revs *revs, int newest_first, size_t max_commits,
		rq_walk *out, rq_error *err)
{
	walker w;
	size_t *order = NULL, norder = 0, *sorted = NULL, n;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	rq_oidmap_init(&out->boundary);
	memset(&w, 0, sizeof(w));
	w.repo = repo;
	w.algo = revs->algo ? revs->algo : &rq_oid_sha1;
	w.cache = rq_commits_cache(revs->commits);
	w.reader = rq_commits_reader(revs->commits);
	w.err = err;
	w.first_parent = revs->filter.first_parent;
	rq_oidmap_init(&w.map);

	if (limit(&w, revs, &order, &norder) < 0)
		goto done;
	sorted = malloc((norder + 1) * sizeof(*sorted));
	if (!sorted) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto done;
	}
	if (topo_sort(&w, order, norder, sorted) < 0)
		goto done;
	n = norder;
	if (apply_filters(&w, revs, sorted, &n) < 0 || check_selection(&w, n, max_commits) < 0 ||
	    find_boundary(&w, sorted, n, &out->boundary) < 0)
		goto done;
	rc = hand_over(&w, sorted, n, newest_first, out);
done:
	if (rc < 0)
		rq_walk_free(out);
	free(order);
	free(sorted);
	walker_free(&w);
	return rc;
}

void rq_walk_free(rq_walk *walk)
{
	if (!walk)
		return;
	free(walk->commits);
	rq_oidmap_free(&walk->boundary);
	memset(walk, 0, sizeof(*walk));
}
