/* SPDX-License-Identifier: GPL-2.0-only; follows git's tree-diff.c and tree-walk.c
 * (tree_entry_interesting) */
/*
 * rq_pathfilter: does a commit change a path the pathspecs name (see
 * rq_pathfilter.h)?
 */
#include "rq_pathfilter.h"
#include "rq_buf.h"
#include "rq_mem.h"
#include "rq_tree.h"

#include <stdlib.h>
#include <string.h>

/* A pathspec as the walk uses it to decide where to go: its part before the
 * first wildcard (after any leading "./"), whether it has a wildcard, and
 * whether it may match anywhere (".", a leading wildcard, a ".."). */
typedef struct item {
	char *lit;
	size_t len;
	int wild, all;
} item;

struct rq_pathfilter {
	git_pathspec *ps;
	item *items;
	size_t n;
	int max_depth, depth_known;
	rq_odb_read *rd;      /* the reader of the call under way (NULL between) */
	rq_tree_reader trees; /* over rd (it keeps the trees read lately) */
};

static int item_init(item *it, const char *p)
{
	size_t n;

	while (p[0] == '.' && p[1] == '/')
		p += 2;
	n = strcspn(p, "*?[\\");
	it->wild = p[n] != '\0';
	if (!it->wild)
		while (n && p[n - 1] == '/')
			n--;
	it->all = n == 0 || !strcmp(p, ".") || strstr(p, "..") != NULL;
	it->len = n;
	return (it->lit = strndup(p, n)) ? 0 : -1;
}

void rq_pathfilter_free(rq_pathfilter *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->n; i++)
		free(pf->items[i].lit);
	free(pf->items);
	git_pathspec_free(pf->ps);
	free(pf);
}

int rq_pathfilter_new(rq_pathfilter **out, char *const *paths, size_t n, rq_error *err)
{
	git_strarray arr = {(char **)paths, n};
	rq_pathfilter *pf = calloc(1, sizeof(*pf));

	*out = NULL;
	if (!pf || !(pf->items = calloc(n ? n : 1, sizeof(*pf->items)))) {
		free(pf);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	pf->trees = rq_odb_read_trees(&pf->rd);
	for (; pf->n < n; pf->n++)
		if (item_init(&pf->items[pf->n], paths[pf->n]) < 0) {
			rq_pathfilter_free(pf);
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
	if (git_pathspec_new(&pf->ps, &arr) < 0) {
		rq_pathfilter_free(pf);
		return rq_error_git(err, "cannot read the pathspecs");
	}
	*out = pf;
	return 0;
}

/*
 * Could a pathspec name something in directory dir (dlen bytes, no
 * trailing slash)? tree_entry_interesting() for a directory: a pathspec
 * without wildcards goes into its own ancestors and everything under
 * itself; one with wildcards into every directory its part before the
 * first wildcard agrees with.
 */
static int interesting(const rq_pathfilter *pf, const char *dir, size_t dlen)
{
	for (size_t i = 0; i < pf->n; i++) {
		const item *it = &pf->items[i];
		size_t m;
		if (it->all)
			return 1;
		if (!it->wild) {
			if (it->len > dlen && !memcmp(it->lit, dir, dlen) && it->lit[dlen] == '/')
				return 1;
			if (it->len <= dlen && !memcmp(dir, it->lit, it->len) &&
			    (dlen == it->len || dir[it->len] == '/'))
				return 1;
			continue;
		}
		/* "dir/" and the literal part agree as far as both go */
		m = it->len < dlen ? it->len : dlen;
		if (memcmp(it->lit, dir, m))
			continue;
		if (it->len <= dlen || it->lit[dlen] == '/')
			return 1;
	}
	return 0;
}

/* ---- the walk --------------------------------------------------------------- */

/* A directory compared: its two trees (closed when absent), the next entry
 * of each, and where its path ends in the walk's path (its '/' included). */
typedef struct frame {
	rq_tree t[2];
	size_t pos[2];
	rq_tree_entry e[2];
	int have[2];
	size_t plen;
} frame;

typedef struct walker {
	rq_pathfilter *pf;
	const rq_oid_algo *algo; /* the trees' object format */
	rq_buf path;
	frame *v;
	size_t n, cap;
	rq_error *err;
} walker;

static int is_dir(const rq_tree_entry *e)
{
	return (e->mode & 0170000u) == 0040000u;
}

/* git's base_name_compare(): a directory sorts as if its name ended in '/'. */
static int name_cmp(const rq_tree_entry *a, const rq_tree_entry *b)
{
	return rq_tree_name_cmp(a->name, a->len, is_dir(a), b->name, b->len, is_dir(b));
}

static void advance(frame *f, int side)
{
	f->have[side] = rq_tree_next(&f->t[side], &f->pos[side], &f->e[side]);
}

static void pop(walker *w)
{
	frame *f = &w->v[--w->n];
	rq_tree_close(&f->t[0]);
	rq_tree_close(&f->t[1]);
}

/*
 * Open a directory's two trees (NULL: absent) as the new top. git's tree
 * diff refuses a directory more than core.maxTreeDepth levels down (the
 * frames below are its depth). 0, or -1.
 */
static int push(walker *w, const rq_oid *old, const rq_oid *new, size_t plen)
{
	frame *f;

	if ((long long)w->n > (long long)w->pf->max_depth)
		return rq_error_set(w->err, RQ_E_TREE_TOO_DEEP,
				    "exceeded maximum allowed tree depth");
	if (!(f = rq_mem_grow(w->v, &w->cap, w->n + 1, sizeof(*f), 16)))
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	w->v = f;
	f = &w->v[w->n];
	memset(f, 0, sizeof(*f));
	if (old && rq_tree_open_with(&f->t[0], &w->pf->trees, w->algo, old, w->err) < 0)
		return -1;
	if (new &&rq_tree_open_with(&f->t[1], &w->pf->trees, w->algo, new, w->err) < 0) {
		rq_tree_close(&f->t[0]);
		return -1;
	}
	f->plen = plen;
	advance(f, 0);
	advance(f, 1);
	w->n++;
	return 0;
}

/*
 * A name that differs between the two trees (old or new NULL where absent):
 * a file (or link, or submodule) changed at a path a pathspec names: 1; a
 * directory a pathspec may reach into: opened (0); else 0. -1 on error.
 */
static int differs(walker *w, size_t plen, const rq_tree_entry *old, const rq_tree_entry *new)
{
	const rq_tree_entry *e = old ? old : new;

	w->path.len = plen;
	rq_buf_add(&w->path, e->name, e->len);
	if (w->path.oom)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	if (!is_dir(e))
		return git_pathspec_matches_path(w->pf->ps, 0, w->path.p) ? 1 : 0;
	if (!interesting(w->pf, w->path.p, w->path.len))
		return 0;
	rq_buf_add(&w->path, "/", 1);
	if (w->path.oom)
		return rq_error_set(w->err, RQ_E_NOMEM, "out of memory");
	return push(w, old ? &old->id : NULL, new ? &new->id : NULL, w->path.len);
}

/* The next name of the top directory: 1 (a change found), 0, or -1. */
static int step(walker *w)
{
	frame *f = &w->v[w->n - 1];
	rq_tree_entry a = f->e[0], b = f->e[1];
	size_t plen = f->plen;
	int cmp = !f->have[0] ? 1 : !f->have[1] ? -1 : name_cmp(&a, &b);

	if (cmp < 0) {
		advance(f, 0);
		return differs(w, plen, &a, NULL);
	}
	if (cmp > 0) {
		advance(f, 1);
		return differs(w, plen, NULL, &b);
	}
	advance(f, 0);
	advance(f, 1);
	if (a.mode == b.mode && rq_oid_eq(&a.id, &b.id))
		return 0;
	return differs(w, plen, &a, &b);
}

static void read_max_depth(rq_pathfilter *pf, git_repository *repo)
{
	git_config *cfg = NULL;
	int32_t v;

	pf->max_depth = RQ_TREE_MAX_DEPTH;
	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_int32(&v, cfg, "core.maxTreeDepth") == 0)
		pf->max_depth = v;
	git_config_free(cfg);
	pf->depth_known = 1;
}

int rq_pathfilter_changes(rq_pathfilter *pf, git_repository *repo, rq_odb_read *rd,
			  const rq_oid_algo *algo, const rq_oid *old_tree, const rq_oid *new_tree,
			  rq_error *err)
{
	walker w = {pf, algo, {NULL, 0, 0, 0}, NULL, 0, 0, err};
	int rc;

	if (old_tree && rq_oid_eq(old_tree, new_tree))
		return 0;
	if (!pf->depth_known)
		read_max_depth(pf, repo);
	pf->rd = rd;
	rc = push(&w, old_tree, new_tree, 0);
	while (rc == 0 && w.n) {
		frame *f = &w.v[w.n - 1];
		if (!f->have[0] && !f->have[1])
			pop(&w);
		else
			rc = step(&w);
	}
	while (w.n)
		pop(&w);
	free(w.v);
	free(w.path.p);
	pf->rd = NULL;
	return rc;
}
