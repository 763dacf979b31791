/* SPDX-License-Identifier: GPL-2.0-only */
/* follows the parent rules of git's sequencer.c (make_script_with_merges) */
/*
 * rq_parents: the new parents of commits outside the range, with merges in
 * it (see rq_parents.h): components, then each component's boundary
 * parents and which of them are its bottom (the merge bases of its
 * negative and positive revisions, computed only for components with a
 * merge and a boundary).
 */
#include "rq_parents.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_oidmap.h"
#include "rq_reach.h"

/* A boundary parent of a component, and whether it is a bottom. */
typedef struct candidate {
	size_t comp;
	rq_oid id;
	int bottom;
} candidate;

struct rq_parents {
	size_t n;
	size_t *comp;	    /* component of each walk commit */
	unsigned char *has; /* per component: holds a merge commit (2: and a tip) */
	candidate *v;	    /* sorted by component */
	size_t nv, cap;
	size_t *first; /* per component: its candidates v[first[c] .. first[c + 1]) */
};

static size_t uf_find(size_t *p, size_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/* Components: union of every commit with its parents in the range,
 * numbered in order of appearance; has[] marks those with a merge.
 * Returns their number. */
static size_t components(rq_parents *pl, const rq_walk *walk, const rq_oidmap *idx, size_t *uf)
{
	size_t k = 0, *label = uf + walk->n;

	for (size_t i = 0; i < walk->n; i++) {
		uf[i] = i;
		label[i] = SIZE_MAX;
	}
	for (size_t i = 0; i < walk->n; i++) {
		const rq_cobj_commit *c = walk->commits[i];
		for (size_t j = 0; j < c->nparents; j++) {
			size_t p;
			if (rq_oidmap_get(idx, &c->parents[j], &p))
				uf[uf_find(uf, i)] = uf_find(uf, p);
		}
	}
	for (size_t i = 0; i < walk->n; i++) {
		size_t r = uf_find(uf, i);
		if (label[r] == SIZE_MAX)
			label[r] = k++;
		pl->comp[i] = label[r];
	}
	return k;
}

/* A boundary parent of component comp, once (seen: its latest entry; one
 * in two components may come twice, which changes nothing). */
static int add_candidate(rq_parents *pl, rq_oidmap *seen, size_t comp, const rq_oid *id)
{
	candidate *nv;
	size_t k;

	if (rq_oidmap_get(seen, id, &k) && pl->v[k].comp == comp)
		return 0;
	if (!(nv = rq_mem_grow(pl->v, &pl->cap, pl->nv + 1, sizeof(*nv), 16)) ||
	    rq_oidmap_put(seen, id, pl->nv) < 0)
		return -1;
	pl->v = nv;
	pl->v[pl->nv].comp = comp;
	pl->v[pl->nv].id = *id;
	pl->v[pl->nv++].bottom = 0;
	return 0;
}

/* The boundary parents of the components that hold a merge. 0, -1. */
static int gather(rq_parents *pl, const rq_walk *walk, const rq_oidmap *idx, rq_oidmap *seen)
{
	for (size_t i = 0; i < walk->n; i++) {
		const rq_cobj_commit *c = walk->commits[i];
		if (!pl->has[pl->comp[i]])
			continue;
		for (size_t j = 0; j < c->nparents; j++) {
			const rq_oid *p = &c->parents[j];
			size_t v;
			if (!rq_oidmap_get(idx, p, &v) && rq_oidmap_get(&walk->boundary, p, &v) &&
			    add_candidate(pl, seen, pl->comp[i], p) < 0)
				return -1;
		}
	}
	return 0;
}

static int cmp_comp(const void *a, const void *b)
{
	size_t x = ((const candidate *)a)->comp, y = ((const candidate *)b)->comp;
	return x < y ? -1 : x > y;
}

/* Mark the candidates of component c that are among bases. */
static void mark_bases(rq_parents *pl, size_t c, const rq_oid *bases, size_t n)
{
	for (size_t j = pl->first[c]; j < pl->first[c + 1]; j++)
		for (size_t k = 0; k < n; k++)
			if (rq_oid_eq(&pl->v[j].id, &bases[k]))
				pl->v[j].bottom = 1;
}

/* The merge bases of every negative revision with the positive tip t,
 * marked among component c's candidates. 0, -1. */
static int bottoms_of(rq_parents *pl, rq_cobj_cache *commits, const rq_revs *revs, size_t c,
		      const rq_oid *t, rq_error *err)
{
	rq_reach_reader rd = rq_cobj_reach_reader(commits);

	for (size_t a = 0; a < revs->n; a++) {
		rq_oid *bases = NULL;
		size_t n = 0;
		if (!revs->v[a].negative)
			continue;
		if (rq_reach_bases(&rd, NULL, &revs->v[a].oid, t, 1, &bases, &n, err) < 0)
			return -1;
		mark_bases(pl, c, bases, n);
		free(bases);
	}
	return 0;
}

/*
 * Of component c's bottoms, keep those in the new base's history when
 * there are some (several negative revisions: a merge base with one the
 * new base does not hold is a branch merged in). 0, -1.
 */
static int prefer_onto(rq_parents *pl, rq_cobj_cache *commits, size_t c, const rq_oid *onto,
		       rq_error *err)
{
	rq_reach_reader rd = rq_cobj_reach_reader(commits);
	size_t nb = 0, held = 0;

	for (size_t j = pl->first[c]; j < pl->first[c + 1]; j++)
		nb += pl->v[j].bottom != 0;
	if (nb < 2)
		return 0;
	for (size_t j = pl->first[c]; j < pl->first[c + 1]; j++) {
		int r;
		if (!pl->v[j].bottom)
			continue;
		r = rq_oid_eq(&pl->v[j].id, onto) ? 1
						  : rq_reach_descends(&rd, onto, &pl->v[j].id, err);
		if (r < 0)
			return -1;
		pl->v[j].bottom = r ? 2 : 1;
		held += r != 0;
	}
	for (size_t j = pl->first[c]; j < pl->first[c + 1]; j++)
		pl->v[j].bottom = held ? pl->v[j].bottom == 2 : pl->v[j].bottom != 0;
	return 0;
}

/*
 * Each component's bottoms: the merge bases of a negative revision and a
 * positive one whose tip is in the component (every positive one when
 * none is: a walk option left its tip out), those the new base holds
 * first.
 */
static int find_bottoms(rq_parents *pl, rq_cobj_cache *commits, const rq_revs *revs,
			const rq_oidmap *idx, size_t ncomp, const rq_oid *onto, rq_error *err)
{
	if (pl->nv > 1)
		qsort(pl->v, pl->nv, sizeof(*pl->v), cmp_comp);
	for (size_t c = 0, k = 0; c <= ncomp; c++) {
		pl->first[c] = k;
		while (k < pl->nv && pl->v[k].comp == c)
			k++;
	}
	/* the positive tips in their components (has[] marks those reached) */
	for (size_t b = 0; b < revs->n; b++) {
		size_t i, c;
		if (revs->v[b].negative || !rq_oidmap_get(idx, &revs->v[b].oid, &i))
			continue;
		c = pl->comp[i];
		if (!pl->has[c])
			continue;
		pl->has[c] = 2;
		if (pl->first[c] < pl->first[c + 1] &&
		    bottoms_of(pl, commits, revs, c, &revs->v[b].oid, err) < 0)
			return -1;
	}
	for (size_t c = 0; c < ncomp; c++) {
		if (pl->first[c] == pl->first[c + 1])
			continue;
		for (size_t b = 0; pl->has[c] != 2 && b < revs->n; b++)
			if (!revs->v[b].negative &&
			    bottoms_of(pl, commits, revs, c, &revs->v[b].oid, err) < 0)
				return -1;
		if (prefer_onto(pl, commits, c, onto, err) < 0)
			return -1;
	}
	return 0;
}

static int has_merge(const rq_walk *walk)
{
	for (size_t i = 0; i < walk->n; i++)
		if (walk->commits[i]->nparents > 1)
			return 1;
	return 0;
}

/* The plan's arrays and the commits' index. 0, -1. */
static int plan_alloc(rq_parents *pl, const rq_walk *walk, rq_oidmap *idx, size_t **uf)
{
	pl->n = walk->n;
	pl->comp = malloc((walk->n + 1) * sizeof(*pl->comp));
	pl->has = calloc(walk->n + 1, 1);
	pl->first = malloc((walk->n + 2) * sizeof(*pl->first));
	*uf = malloc((2 * walk->n + 1) * sizeof(**uf));
	if (!pl->comp || !pl->has || !pl->first || !*uf)
		return -1;
	for (size_t i = 0; i < walk->n; i++)
		if (rq_oidmap_put(idx, &walk->commits[i]->id, i) < 0)
			return -1;
	return 0;
}

int rq_parents_plan(rq_parents **out, const rq_revs *revs, const rq_walk *walk, const rq_oid *onto,
		    rq_error *err)
{
	rq_parents *pl;
	rq_oidmap idx, seen;
	size_t *uf = NULL, ncomp;
	int rc = -1;

	*out = NULL;
	if (!has_merge(walk))
		return 0;
	if (!(pl = calloc(1, sizeof(*pl))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_oidmap_init(&idx);
	rq_oidmap_init(&seen);
	if (plan_alloc(pl, walk, &idx, &uf) < 0) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto done;
	}
	ncomp = components(pl, walk, &idx, uf);
	for (size_t i = 0; i < walk->n; i++)
		if (walk->commits[i]->nparents > 1)
			pl->has[pl->comp[i]] = 1;
	if (gather(pl, walk, &idx, &seen) < 0) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto done;
	}
	rc = find_bottoms(pl, rq_commits_cache(revs->commits), revs, &idx, ncomp, onto, err);
done:
	free(uf);
	rq_oidmap_free(&idx);
	rq_oidmap_free(&seen);
	if (rc < 0)
		rq_parents_free(pl);
	else
		*out = pl;
	return rc;
}

int rq_parents_onto(const rq_parents *plan, size_t i, unsigned k, const rq_oid *parent)
{
	size_t c;

	if (!plan || i >= plan->n)
		return 1;
	c = plan->comp[i];
	if (plan->has[c])
		for (size_t j = plan->first[c]; j < plan->first[c + 1]; j++)
			if (rq_oid_eq(&plan->v[j].id, parent))
				return plan->v[j].bottom;
	return k == 0; /* left out by a walk option (or a component without merges) */
}

int rq_parents_keeps_root(const rq_parents *plan, size_t i)
{
	return plan && i < plan->n && plan->has[plan->comp[i]];
}

void rq_parents_free(rq_parents *plan)
{
	if (!plan)
		return;
	free(plan->comp);
	free(plan->has);
	free(plan->v);
	free(plan->first);
	free(plan);
}
