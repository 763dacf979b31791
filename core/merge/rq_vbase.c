/* SPDX-License-Identifier: GPL-2.0-only */
/* merge bases and their inner merges as git's merge-ort.c (merge_ort_internal) takes them */
/*
 * rq_vbase: the base of a merge, virtual for several merge bases (see
 * rq_vbase.h).
 */
#include "rq_vbase.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_cobj.h"
#include "rq_reach.h"

/* merge-ort's inner merges (of merge bases) write markers two longer. */
#define INNER_MARKER_SIZE 9

int rq_vbase_commit_tree(rq_merger *m, const rq_oid *id, rq_oid *tree, rq_error *err)
{
	rq_cobj_cache *cache = rq_merger_commits(m, err);
	const rq_cobj_commit *c;

	if (!cache || rq_cobj_get(cache, id, &c, err) < 0)
		return -1;
	*tree = c->tree;
	return 0;
}

/* rq_reach's reader over the merger's commit cache. */
static int reach_read(void *ctx, const rq_oid *id, int64_t *date, rq_oid **parents,
		      size_t *nparents, rq_error *err)
{
	rq_cobj_cache *cache = rq_merger_commits(ctx, err);
	const rq_cobj_commit *c;

	*parents = NULL;
	*nparents = 0;
	if (!cache || rq_cobj_get(cache, id, &c, err) < 0)
		return -1;
	*date = (int64_t)c->date;
	if (!c->nparents)
		return 0;
	if (!(*parents = malloc(c->nparents * sizeof(**parents))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(*parents, c->parents, c->nparents * sizeof(**parents));
	*nparents = c->nparents;
	return 0;
}

typedef struct dated {
	rq_oid id;
	uint64_t time;
	size_t order; /* as rq_reach listed it */
} dated;

/* Newest first, in listed order among equals (git's commit list by date). */
static int cmp_newest(const void *pa, const void *pb)
{
	const dated *a = pa, *b = pb;
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* ids dated into out, oldest first (git lists merge bases newest first,
 * and merge-ort reverses the list). 0, -1. */
static int date_bases(rq_vbase *vb, const rq_oid *ids, size_t n, dated *out)
{
	rq_cobj_cache *cache = rq_merger_commits(vb->m, vb->err);

	for (size_t i = 0; i < n; i++) {
		const rq_cobj_commit *c;
		if (!cache || rq_cobj_get(cache, &ids[i], &c, vb->err) < 0)
			return -1;
		out[i] = (dated){ids[i], c->date, i};
	}
	qsort(out, n, sizeof(*out), cmp_newest);
	for (size_t i = 0; i < n / 2; i++) {
		dated t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return 0;
}

/* The merge bases of b and the merge of leaves, oldest first: *out (to
 * free), *n (0: none). 0, -1. */
static int merge_bases(rq_vbase *vb, const rq_oid *leaves, size_t nleaves, const rq_oid *b,
		       dated **out, size_t *n)
{
	rq_reach_reader rd = {reach_read, vb->m};
	rq_oid *ids = NULL;
	size_t count = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (rq_reach_bases(&rd, vb->ranks, b, leaves, nleaves, &ids, &count, vb->err) < 0)
		return -1;
	if (!count)
		return 0;
	if (!(*out = calloc(count + 1, sizeof(**out)))) {
		free(ids);
		return rq_error_set(vb->err, RQ_E_NOMEM, "out of memory");
	}
	rc = date_bases(vb, ids, count, *out);
	*n = count;
	free(ids);
	return rc;
}

static int base_tree(rq_vbase *vb, const rq_oid *leaves, size_t nleaves, const rq_oid *b, int depth,
		     rq_oid *out, char *label, size_t *nbases);

/* Inner merge k: leaves[k] into *out (the merge of leaves[0..k)), against
 * their own base. 0, RQ_VBASE_NO_TREE, RQ_VBASE_OVER_BUDGET, -1. */
static int inner_merge(rq_vbase *vb, const rq_oid *leaves, size_t k, int depth, rq_oid *out)
{
	static const rq_merge_marks inner = {"Temporary merge branch 1", NULL,
					     "Temporary merge branch 2", INNER_MARKER_SIZE};
	rq_merge_marks marks = inner;
	rq_conflicts conf = {0};
	rq_conflict_details det = {0};
	char label[RQ_VBASE_LABEL_MAX];
	rq_oid ib, tb, merged;
	int rc;

	if (++vb->inner > RQ_VBASE_INNER_MAX)
		return RQ_VBASE_OVER_BUDGET;
	if ((rc = base_tree(vb, leaves, k, &leaves[k], depth + 1, &ib, label, NULL)) != 0)
		return rc; /* (an inner one gave no tree, or the budget is spent) */
	marks.base = label;
	if ((rc = rq_vbase_commit_tree(vb->m, &leaves[k], &tb, vb->err)) == 0)
		rc = rq_merger_merge_accept(vb->m, &ib, out, &tb, &marks, &merged, &conf, &det,
					    vb->err);
	rq_conflicts_free(&conf);
	rq_conflict_details_free(&det);
	if (rc == 0 || rc == 1) {
		*out = merged;
		return 0;
	}
	return rc == RQ_MERGE_NO_TREE ? RQ_VBASE_NO_TREE : -1;
}

/* A virtual merge base of bases[0..n), oldest first. */
static int virtual_base(rq_vbase *vb, const dated *bases, size_t n, int depth, rq_oid *out)
{
	rq_oid *leaves = malloc(n * sizeof(*leaves));
	int rc = leaves ? rq_vbase_commit_tree(vb->m, &bases[0].id, out, vb->err)
			: rq_error_set(vb->err, RQ_E_NOMEM, "out of memory");

	for (size_t k = 0; k < n && rc == 0; k++)
		leaves[k] = bases[k].id;
	for (size_t k = 1; k < n && rc == 0; k++)
		rc = inner_merge(vb, leaves, k, depth, out);
	free(leaves);
	return rc;
}

static int base_tree(rq_vbase *vb, const rq_oid *leaves, size_t nleaves, const rq_oid *b, int depth,
		     rq_oid *out, char *label, size_t *nbases)
{
	dated *bases = NULL;
	size_t n = 0;
	int rc;

	if (depth > RQ_VBASE_DEPTH_MAX)
		return rq_error_set(vb->err, RQ_E_USAGE, "merge bases nested deeper than %d levels",
				    RQ_VBASE_DEPTH_MAX);
	if (merge_bases(vb, leaves, nleaves, b, &bases, &n) < 0) {
		free(bases);
		return -1;
	}
	if (nbases)
		*nbases = n;
	if (n == 0) {
		*out = *vb->empty_tree;
		rc = 0;
	} else if (n == 1) {
		rc = rq_vbase_commit_tree(vb->m, &bases[0].id, out, vb->err);
	} else {
		rc = virtual_base(vb, bases, n, depth, out);
	}
	if (label && n == 1)
		rq_oid_fmt(label, &bases[0].id, rq_merger_algo(vb->m));
	else if (label)
		snprintf(label, RQ_VBASE_LABEL_MAX, "%s",
			 n ? "merged common ancestors" : "empty tree");
	free(bases);
	return rc;
}

int rq_vbase_tree(rq_vbase *vb, const rq_oid *leaves, size_t nleaves, const rq_oid *b, rq_oid *out,
		  char *label, size_t *nbases)
{
	if (rq_merger_sync(vb->m, vb->err) < 0)
		return -1;
	return base_tree(vb, leaves, nleaves, b, 0, out, label, nbases);
}
