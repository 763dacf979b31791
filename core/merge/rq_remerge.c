/* SPDX-License-Identifier: GPL-2.0-only */
/* after Elijah Newren's design notes for git replay (replaying merges);
 * merge bases as git's merge-ort.c (merge_ort_internal) takes them */
/*
 * rq_remerge: the replay of a merge commit (see rq_remerge.h for the
 * method and its rules). The parts, in the order a replay meets them: the
 * merge bases (a virtual base for several), the two remerges R and N with
 * their conflicts accepted, the rules for the conflicts that are not text,
 * the third merge (base R, ours N, theirs O), an octopus.
 */
#include "rq_remerge.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_oidmap.h"
#include "rq_ortodb.h"
#include "rq_reach.h"
#include "rq_tree.h"

/* Deeper recursion of virtual merge bases than this is refused. */
#define VIRTUAL_DEPTH_MAX 32
/* The inner merges (of merge bases) one remerge may make. Their number
 * grows exponentially with the depth of a history whose merges share
 * several bases at each level (a ladder of octopus merges: 2^depth), and
 * the depth limit above does not bound it; past the budget the merge is a
 * conflict of kind "merge bases". */
#define INNER_MERGES_MAX 256
/* base_tree's outcome past that budget. */
#define OVER_BUDGET 3
/* merge-ort's inner merges (of merge bases) write markers two longer. */
#define INNER_MARKER_SIZE 9
/* The base's label of conflict markers: an id, or git's words. */
#define LABEL_MAX (RQ_OID_MAX_HEXSZ + 32)

typedef struct remerge {
	rq_merger *m;
	git_repository *repo;
	rq_cobj_cache *commits; /* the replay's (rq_reach's reader) */
	git_odb *odb;
	const rq_oid_algo *algo; /* the merger's object format */
	const rq_oidmap *ranks;	 /* the replay's new commits (rq_reach.h) */
	rq_error *err;
	rq_oid empty_tree;
	size_t inner; /* inner merges made so far */
} remerge;

/*
 * id as libgit2's, for the commit reads and rq_reach that still take it
 * (issue 42, wave 2: core/odb's commit reader): 0, or -1 with err set in
 * another format than SHA-1.
 */
static int git_id(remerge *rm, const rq_oid *id, git_oid *g)
{
	if (rq_oid_to_git(g, id, rm->algo) == 0)
		return 0;
	return rq_error_set(rm->err, RQ_E_UNSUPPORTED_REPO,
			    "cannot replay a merge commit in a %s repository: its commits are read "
			    "by libgit2, which has no %s",
			    rm->algo->name, rm->algo->name);
}

/* ---- merge bases ---------------------------------------------------------- */

typedef struct dated {
	rq_oid id;
	int64_t time;
	size_t order; /* as libgit2 listed it */
} dated;

/* Newest first, in listed order among equals (git's commit list by date). */
static int cmp_newest(const void *pa, const void *pb)
{
	const dated *a = pa, *b = pb;
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int tree_of(remerge *rm, const rq_oid *commit, rq_oid *tree)
{
	git_commit *c = NULL;
	git_oid g;

	if (git_id(rm, commit, &g) < 0)
		return -1;
	if (git_commit_lookup(&c, rm->repo, &g) < 0)
		return rq_error_git(rm->err, "cannot read commit");
	rq_oid_from_git(tree, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* The commit times of ids into out, sorted oldest first (git lists merge
 * bases newest first, and merge-ort reverses the list). */
static int date_bases(remerge *rm, const rq_oid *ids, size_t n, dated *out)
{
	for (size_t i = 0; i < n; i++) {
		git_commit *c = NULL;
		git_oid g;
		if (git_id(rm, &ids[i], &g) < 0)
			return -1;
		if (git_commit_lookup(&c, rm->repo, &g) < 0)
			return rq_error_git(rm->err, "cannot read a merge base");
		out[i] = (dated){ids[i], git_commit_time(c), i};
		git_commit_free(c);
	}
	qsort(out, n, sizeof(*out), cmp_newest);
	for (size_t i = 0; i < n / 2; i++) {
		dated t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return 0;
}

/*
 * The merge bases of b and the merge of leaves (one commit, or the
 * commits merged so far), oldest first: *out (to free), *n (0: none).
 */
static int merge_bases(remerge *rm, const rq_oid *leaves, size_t nleaves, const rq_oid *b,
		       dated **out, size_t *n)
{
	rq_reach_reader rd = rq_cobj_reach_reader(rm->commits);
	rq_oid *ids = NULL;
	size_t count = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (rq_reach_bases(&rd, rm->ranks, b, leaves, nleaves, &ids, &count, rm->err) < 0)
		return -1;
	if (!count)
		return 0;
	if (!(*out = calloc(count + 1, sizeof(**out)))) {
		free(ids);
		return rq_error_set(rm->err, RQ_E_NOMEM, "out of memory");
	}
	rc = date_bases(rm, ids, count, *out);
	*n = count;
	free(ids);
	return rc;
}

static int base_tree(remerge *rm, const rq_oid *leaves, size_t nleaves, const rq_oid *b, int depth,
		     rq_oid *out, char *label);

/*
 * A virtual merge base (merge_ort_internal): the bases, oldest first,
 * merged one by one into the merge of those before, each inner merge
 * against its own merge bases and keeping its conflicts. 0, 1 (an inner
 * merge gave no tree: no remerge), OVER_BUDGET (INNER_MERGES_MAX inner
 * merges made), -1.
 */
static int virtual_base(remerge *rm, const dated *bases, size_t n, int depth, rq_oid *out)
{
	static const rq_merge_marks inner = {"Temporary merge branch 1", NULL,
					     "Temporary merge branch 2", INNER_MARKER_SIZE};
	rq_oid *leaves = malloc(n * sizeof(*leaves)), ib, tb, merged;
	char label[LABEL_MAX];
	int rc = leaves ? tree_of(rm, &bases[0].id, out)
			: rq_error_set(rm->err, RQ_E_NOMEM, "out of memory");

	for (size_t k = 0; k < n && rc == 0; k++)
		leaves[k] = bases[k].id;
	for (size_t k = 1; k < n && rc == 0; k++) {
		rq_conflicts conf = {0};
		rq_conflict_details det = {0};
		rq_merge_marks marks = inner;
		if (++rm->inner > INNER_MERGES_MAX)
			rc = OVER_BUDGET;
		else
			rc = base_tree(rm, leaves, k, &leaves[k], depth + 1, &ib, label);
		if (rc != 0)
			break; /* (an inner one gave no tree, or the budget is spent) */
		marks.base = label;
		if ((rc = tree_of(rm, &leaves[k], &tb)) == 0)
			rc = rq_merger_merge_accept(rm->m, &ib, out, &tb, &marks, &merged, &conf,
						    &det, rm->err);
		rq_conflicts_free(&conf);
		rq_conflict_details_free(&det);
		if (rc == 0 || rc == 1) {
			*out = merged;
			rc = 0;
		} else if (rc == RQ_MERGE_NO_TREE) {
			rc = 1;
		}
	}
	free(leaves);
	return rc;
}

/*
 * The tree to merge b and the merge of leaves against, and the label of
 * conflict markers for it (label: LABEL_MAX bytes, or NULL): the merge
 * base's (its id), a virtual base's for several ("merged common
 * ancestors"), the empty tree for none ("empty tree"), as merge-ort labels
 * them. 0, 1 (no virtual base: see virtual_base), OVER_BUDGET, -1.
 */
static int base_tree(remerge *rm, const rq_oid *leaves, size_t nleaves, const rq_oid *b, int depth,
		     rq_oid *out, char *label)
{
	dated *bases = NULL;
	size_t n = 0;
	int rc;

	if (depth > VIRTUAL_DEPTH_MAX)
		return rq_error_set(rm->err, RQ_E_USAGE, "merge bases nested deeper than %d levels",
				    VIRTUAL_DEPTH_MAX);
	if (merge_bases(rm, leaves, nleaves, b, &bases, &n) < 0) {
		free(bases);
		return -1;
	}
	if (n == 0) {
		*out = rm->empty_tree;
		rc = 0;
	} else if (n == 1) {
		rc = tree_of(rm, &bases[0].id, out);
	} else {
		rc = virtual_base(rm, bases, n, depth, out);
	}
	if (label && n == 1)
		rq_oid_fmt(label, &bases[0].id, rm->algo);
	else if (label)
		snprintf(label, LABEL_MAX, "%s", n ? "merged common ancestors" : "empty tree");
	free(bases);
	return rc;
}

/* ---- the two remerges --------------------------------------------------------- */

/* R or N: a merge of two commits with its conflicts accepted. */
typedef struct side_merge {
	rq_oid base, ours, theirs; /* trees */
	rq_oid tree;
	int rc;	     /* 0 clean, 1 conflicts (tree), RQ_MERGE_NO_TREE, 1 + a missing base */
	int no_base; /* 1: no virtual base; OVER_BUDGET: its inner merges past the budget */
	rq_conflicts conflicts;
	rq_conflict_details details;
} side_merge;

static void side_merge_free(side_merge *s)
{
	rq_conflicts_free(&s->conflicts);
	rq_conflict_details_free(&s->details);
}

/* The trees of a remerge of two commits, and its base's label. 0, -1. */
static int side_prepare(remerge *rm, const rq_oid *parents, side_merge *s, char *label)
{
	int rc = base_tree(rm, &parents[0], 1, &parents[1], 0, &s->base, label);

	if (rc < 0)
		return -1;
	s->no_base = rc; /* 0, 1 or OVER_BUDGET */
	if (tree_of(rm, &parents[0], &s->ours) < 0 || tree_of(rm, &parents[1], &s->theirs) < 0)
		return -1;
	return 0;
}

static int side_run(remerge *rm, side_merge *s, const rq_merge_marks *marks)
{
	if (s->no_base) {
		s->rc = RQ_MERGE_NO_TREE;
		return rq_conflicts_add(&s->conflicts, "",
					s->no_base == OVER_BUDGET ? RQ_CONFLICT_MERGE_BASES
								  : RQ_CONFLICT_CONTENT) < 0
			   ? rq_error_set(rm->err, RQ_E_NOMEM, "out of memory")
			   : 0;
	}
	s->rc = rq_merger_merge_accept(rm->m, &s->base, &s->ours, &s->theirs, marks, &s->tree,
				       &s->conflicts, &s->details, rm->err);
	return s->rc < 0 ? -1 : 0;
}

/* ---- the conflicts of the replay -------------------------------------------- */

/* A conflict of the replay, once per path (the first kind stays). */
static int add_conflict(remerge *rm, rq_conflicts *out, const char *path, rq_conflict_kind kind)
{
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i].path, path))
			return 0;
	if (rq_conflicts_add(out, path, kind) < 0)
		return rq_error_set(rm->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* Does s have a conflict at path? */
static int conflict_at(const side_merge *s, const char *path)
{
	for (size_t i = 0; i < s->conflicts.n; i++)
		if (!strcmp(s->conflicts.v[i].path, path))
			return 1;
	return 0;
}

static int same_version(const rq_conflict_version *a, const rq_conflict_version *b)
{
	return a->mode == b->mode && (!a->mode || rq_oid_eq(&a->oid, &b->oid));
}

/* Does other have conflict k of s alike: same kind, same three versions
 * (and not textual, not the top level)? */
static int has_twin(const side_merge *s, size_t k, const side_merge *other)
{
	const rq_conflict_detail *d = &s->details.v[k];

	if (!s->conflicts.v[k].path[0])
		return 0;
	for (size_t i = 0; i < other->conflicts.n; i++) {
		const rq_conflict_detail *o = &other->details.v[i];
		if (o->textual || other->conflicts.v[i].kind != s->conflicts.v[k].kind)
			continue;
		if (same_version(&d->stages[0], &o->stages[0]) &&
		    same_version(&d->stages[1], &o->stages[1]) &&
		    same_version(&d->stages[2], &o->stages[2]))
			return 1;
	}
	return 0;
}

/*
 * The conflicts that are not text: each of N needs its twin in R (its
 * resolution is O's version), each of R its twin in N. The others are
 * conflicts of the replay: "resolution" where R had one at the path.
 */
static int untextual(remerge *rm, const side_merge *r, const side_merge *n, rq_conflicts *out)
{
	for (size_t k = 0; k < n->conflicts.n; k++) {
		const rq_conflict *c = &n->conflicts.v[k];
		if (n->details.v[k].textual || has_twin(n, k, r))
			continue;
		if (add_conflict(rm, out, c->path,
				 conflict_at(r, c->path) ? RQ_CONFLICT_RESOLUTION : c->kind) < 0)
			return -1;
	}
	for (size_t k = 0; k < r->conflicts.n; k++)
		if (!r->details.v[k].textual && !has_twin(r, k, n) &&
		    add_conflict(rm, out, r->conflicts.v[k].path, RQ_CONFLICT_RESOLUTION) < 0)
			return -1;
	return 0;
}

/* The entry name (n bytes) of tree id into *e: 1, 0 when absent, -1. */
static int entry_of(remerge *rm, const rq_oid *id, const char *name, size_t n, rq_tree_entry *e)
{
	rq_tree t;
	size_t pos = 0;
	int found = 0;

	if (rq_tree_open(&t, rm->odb, rm->algo, id, rm->err) < 0)
		return -1;
	while (!found && rq_tree_next(&t, &pos, e))
		found = e->len == n && !memcmp(e->name, name, n);
	rq_tree_close(&t); /* e's name is gone with it: its id and mode stay */
	return found;
}

/* The version tree holds at path (mode 0: none), read with rq_tree one
 * directory at a time. 0, -1. */
static int version_at(remerge *rm, const rq_oid *tree_id, const char *path, rq_conflict_version *v)
{
	rq_oid id = *tree_id;
	rq_tree_entry e;

	memset(v, 0, sizeof(*v));
	for (const char *p = path;;) {
		size_t n = strcspn(p, "/");
		int rc = entry_of(rm, &id, p, n, &e);
		if (rc <= 0)
			return rc;
		if (!p[n]) {
			v->oid = e.id;
			v->mode = e.mode;
			return 0;
		}
		if ((e.mode & 0170000u) != 0040000u)
			return 0;
		id = e.id;
		p += n + 1;
	}
}

/*
 * A text conflict of N at a path where O kept R's version untouched: the
 * third merge takes N's text there, hunks and all, so it is a conflict of
 * the replay unless R had the very same text (the author kept it).
 */
static int untouched_text(remerge *rm, const side_merge *r, const side_merge *n,
			  const rq_oid *orig_tree, rq_conflicts *out)
{
	for (size_t k = 0; k < n->conflicts.n; k++) {
		const rq_conflict *c = &n->conflicts.v[k];
		rq_conflict_version rv, ov;
		if (!n->details.v[k].textual)
			continue;
		if (version_at(rm, &r->tree, c->path, &rv) < 0 ||
		    version_at(rm, orig_tree, c->path, &ov) < 0)
			return -1;
		if (!same_version(&rv, &ov) || same_version(&rv, &n->details.v[k].result))
			continue;
		if (add_conflict(rm, out, c->path,
				 conflict_at(r, c->path) ? RQ_CONFLICT_RESOLUTION : c->kind) < 0)
			return -1;
	}
	return 0;
}

/* The blobs of s's text conflicts (they hold its conflict hunks). */
static int marked_blobs(remerge *rm, const side_merge *s, rq_oidmap *set)
{
	for (size_t k = 0; k < s->conflicts.n; k++) {
		if (!s->details.v[k].textual)
			continue;
		if (rq_oidmap_put(set, &s->details.v[k].result.oid, k) < 0)
			return rq_error_set(rm->err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* A remerge that gave no tree: its conflicts are the replay's
 * ("resolution" for R's: O resolved them, how cannot be carried). */
static int no_tree(remerge *rm, const side_merge *s, int is_r, rq_conflicts *out)
{
	for (size_t k = 0; k < s->conflicts.n; k++) {
		rq_conflict_kind kind = s->conflicts.v[k].kind;
		if (add_conflict(rm, out, s->conflicts.v[k].path,
				 is_r && kind != RQ_CONFLICT_MERGE_BASES ? RQ_CONFLICT_RESOLUTION
									 : kind) < 0)
			return -1;
	}
	return 1;
}

/* ---- a merge of two parents ---------------------------------------------------- */

/*
 * The third merge, base R, ours N, theirs O, with R's and N's hunks whole;
 * its conflicts join those found before. 0 clean, 1 conflict, -1.
 */
static int third_merge(remerge *rm, const side_merge *r, const side_merge *n,
		       const rq_oid *orig_tree, const rq_merge_marks *marks, rq_oid *out,
		       rq_conflicts *conflicts)
{
	rq_oidmap rset, nset;
	rq_conflicts conf = {0};
	int rc = -1;

	rq_oidmap_init(&rset);
	rq_oidmap_init(&nset);
	if (marked_blobs(rm, r, &rset) == 0 && marked_blobs(rm, n, &nset) == 0)
		rc = rq_merger_merge_remerge(rm->m, &r->tree, &n->tree, orig_tree, marks, &rset,
					     &nset, out, &conf, rm->err);
	for (size_t k = 0; rc == 1 && k < conf.n; k++)
		if (add_conflict(rm, conflicts, conf.v[k].path, conf.v[k].kind) < 0)
			rc = -1;
	rq_conflicts_free(&conf);
	rq_oidmap_free(&rset);
	rq_oidmap_free(&nset);
	return rc;
}

/* R and N, their labels N's (full ids of the new parents, N's base). */
static int both_sides(remerge *rm, const rq_oid *orig_parents, const rq_oid *new_parents,
		      side_merge *r, side_merge *n, rq_merge_marks *marks, char *hex1, char *hex2,
		      char *base_label)
{
	char unused[LABEL_MAX];

	rq_oid_fmt(hex1, &new_parents[0], rm->algo);
	rq_oid_fmt(hex2, &new_parents[1], rm->algo);
	if (side_prepare(rm, new_parents, n, base_label) < 0 ||
	    side_prepare(rm, orig_parents, r, unused) < 0)
		return -1;
	marks->ours = hex1;
	marks->theirs = hex2;
	marks->base = base_label;
	marks->size = 0;
	if (side_run(rm, r, marks) < 0 || side_run(rm, n, marks) < 0)
		return -1;
	return 0;
}

static int remerge_two(remerge *rm, const rq_oid *orig_parents, const rq_oid *new_parents,
		       const rq_oid *orig_tree, rq_oid *out, rq_conflicts *conflicts)
{
	char hex1[RQ_OID_MAX_HEXSZ + 1], hex2[RQ_OID_MAX_HEXSZ + 1], base_label[LABEL_MAX];
	side_merge r, n;
	rq_merge_marks marks;
	size_t before = conflicts->n;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&n, 0, sizeof(n));
	rc = both_sides(rm, orig_parents, new_parents, &r, &n, &marks, hex1, hex2, base_label);
	if (rc == 0 && r.rc == RQ_MERGE_NO_TREE)
		rc = no_tree(rm, &r, 1, conflicts);
	if (rc == 0 && n.rc == RQ_MERGE_NO_TREE)
		rc = no_tree(rm, &n, 0, conflicts);
	if (rc == 0 && (untextual(rm, &r, &n, conflicts) < 0 ||
			untouched_text(rm, &r, &n, orig_tree, conflicts) < 0))
		rc = -1;
	if (rc == 0)
		rc = third_merge(rm, &r, &n, orig_tree, &marks, out, conflicts);
	if (rc == 0 && conflicts->n > before)
		rc = 1;
	side_merge_free(&r);
	side_merge_free(&n);
	return rc;
}

/* ---- an octopus ------------------------------------------------------------------ */

/*
 * An octopus remerged as git-merge-octopus goes: each parent merged into
 * the merge of those before it, against their merge bases. 0 (*tree), 1
 * (a conflict: conflicts appended, "resolution" for O's own parents), -1.
 */
static int octopus_side(remerge *rm, const rq_oid *parents, size_t np, int is_r, rq_oid *tree,
			rq_conflicts *out)
{
	static const rq_merge_marks marks = {NULL, NULL, NULL, 0};
	int rc = tree_of(rm, &parents[0], tree);

	for (size_t j = 1; j < np && rc == 0; j++) {
		rq_conflicts conf = {0};
		rq_conflict_details det = {0};
		rq_oid b, t, merged;
		int budget =
		    (rc = base_tree(rm, parents, j, &parents[j], 0, &b, NULL)) == OVER_BUDGET;
		if (rc == 0 && (rc = tree_of(rm, &parents[j], &t)) == 0)
			rc = rq_merger_merge_accept(rm->m, &b, tree, &t, &marks, &merged, &conf,
						    &det, rm->err);
		if (rc == 0)
			*tree = merged;
		for (size_t k = 0; rc > 0 && k < conf.n; k++)
			if (add_conflict(rm, out, conf.v[k].path,
					 is_r ? RQ_CONFLICT_RESOLUTION : conf.v[k].kind) < 0)
				rc = -1;
		if (rc > 0 && !conf.n) /* no tree and no path to name */
			rc = add_conflict(rm, out, "",
					  budget ? RQ_CONFLICT_MERGE_BASES
						 : RQ_CONFLICT_RESOLUTION) < 0
				 ? -1
				 : 1;
		else if (rc > 0)
			rc = 1;
		rq_conflicts_free(&conf);
		rq_conflict_details_free(&det);
	}
	return rc;
}

static int remerge_octopus(remerge *rm, const rq_oid *orig_parents, const rq_oid *new_parents,
			   size_t np, const rq_oid *orig_tree, rq_oid *out, rq_conflicts *conflicts)
{
	static const rq_merge_marks marks = {NULL, NULL, NULL, 0};
	rq_oid rtree, ntree;
	int rc = octopus_side(rm, orig_parents, np, 1, &rtree, conflicts), rn;

	if (rc < 0)
		return -1;
	rn = octopus_side(rm, new_parents, np, 0, &ntree, conflicts);
	if (rn != 0 || rc != 0)
		return rn < 0 ? -1 : 1;
	return rq_merger_merge_remerge(rm->m, &rtree, &ntree, orig_tree, &marks, NULL, NULL, out,
				       conflicts, rm->err);
}

int rq_remerge(rq_merger *m, git_repository *repo, rq_cobj_cache *commits, const rq_oidmap *ranks,
	       const rq_oid *orig_parents, const rq_oid *new_parents, size_t nparents,
	       const rq_oid *orig_tree, rq_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	remerge rm = {m, repo, commits, NULL, rq_merger_algo(m), ranks, err, {{0}}, 0};
	int rc;

	if (nparents < 2)
		return rq_error_set(err, RQ_E_INTERNAL, "a remerge needs two parents");
	/* the base of unrelated histories, written for the trees that use it */
	if (git_repository_odb(&rm.odb, repo) < 0 ||
	    rq_ortodb_write(&rm.empty_tree, rm.odb, rm.algo, "", 0, GIT_OBJECT_TREE) < 0) {
		git_odb_free(rm.odb);
		return rq_error_git(err, "cannot write the empty tree");
	}
	if (nparents == 2)
		rc = remerge_two(&rm, orig_parents, new_parents, orig_tree, out, conflicts);
	else
		rc = remerge_octopus(&rm, orig_parents, new_parents, nparents, orig_tree, out,
				     conflicts);
	rq_merger_forget_renames(m);
	git_odb_free(rm.odb);
	return rc;
}
