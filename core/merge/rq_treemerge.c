/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_treemerge: walk three trees together and merge them like merge-ort.
 *
 * Phase 1 (collect): the trees are read level by level, only where they
 * differ. A path equal on all sides, or a file equal on two sides, is
 * resolved at once. A directory equal to the base on one side is deferred:
 * it is resolved to the other side's tree without being opened, unless
 * rename detection needs what is under it (relevant rename sources on the
 * side that changed it). Paths deleted or added on a side are queued as
 * rename sources and destinations, with merge-ort's relevance rules.
 *
 * Phase 2 (renames): rq_treemerge_rename.c.
 *
 * Phase 3 (process): every collected path is resolved (take a side,
 * content merge, modify/delete, file/directory, ...) children first, and
 * each directory that was opened gets a new tree, written only when it
 * differs from all three inputs.
 */
#include "rq_treemerge.h"
#include "rq_memodb.h"

#include <stdlib.h>
#include <string.h>

#define S_IFMT_	      0170000
#define S_IFDIR_      0040000
#define S_IFREG_      0100000
#define S_IFLNK_      0120000
#define S_IFGITLINK_  0160000
#define IS_DIR(m)     (((m)&S_IFMT_) == S_IFDIR_)
#define IS_REG(m)     (((m)&S_IFMT_) == S_IFREG_)
#define IS_LNK(m)     (((m)&S_IFMT_) == S_IFLNK_)
#define IS_GITLINK(m) (((m)&S_IFMT_) == S_IFGITLINK_)

static int nomem(tm_state *s)
{
	s->oom = 1;
	return rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
}

void tm_unsure(tm_state *s, const char *why)
{
	if (!s->unsure)
		s->unsure_why = why;
	s->unsure = 1;
}

int tm_add_conflict(tm_state *s, const char *path, int kind)
{
	rq_conflicts *c = s->conflicts;

	s->write = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, path))
			return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		rq_conflict *nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return nomem(s);
		c->v = nv;
		c->cap = ncap;
	}
	if (!(c->v[c->n].path = strdup(path)))
		return nomem(s);
	c->v[c->n++].kind = (rq_conflict_kind)kind;
	return 0;
}

int tm_pair_push(tm_state *s, tm_pairs *q, tm_pair *p)
{
	if (q->n == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 16;
		tm_pair **nv = tm_alloc(&s->arena, ncap * sizeof(*nv));
		if (!nv)
			return nomem(s);
		if (q->n)
			memcpy(nv, q->v, q->n * sizeof(*nv));
		q->v = nv;
		q->cap = ncap;
	}
	q->v[q->n++] = p;
	return 0;
}

tm_entry *tm_entry_get(tm_state *s, const char *path)
{
	intptr_t v;
	return tm_map_get(&s->paths, path, &v) ? (tm_entry *)v : NULL;
}

static int kid_add(tm_state *s, tm_entry *dir, tm_entry *e)
{
	if (dir->nkids == dir->capkids) {
		size_t ncap = dir->capkids ? dir->capkids * 2 : 8;
		tm_entry **nv = tm_alloc(&s->arena, ncap * sizeof(*nv));
		if (!nv)
			return nomem(s);
		if (dir->nkids)
			memcpy(nv, dir->kids, dir->nkids * sizeof(*nv));
		dir->kids = nv;
		dir->capkids = ncap;
	}
	dir->kids[dir->nkids++] = e;
	return 0;
}

/* A new entry for path (arena string) in dir; registered in paths. */
static tm_entry *entry_new(tm_state *s, tm_entry *dir, const char *path)
{
	tm_entry *e = tm_alloc(&s->arena, sizeof(*e));
	if (!e) {
		nomem(s);
		return NULL;
	}
	e->path = path;
	e->dir = dir;
	e->base_off = dir && dir->path[0] ? strlen(dir->path) + 1 : 0;
	e->conflict_kind = -1;
	if (kid_add(s, dir, e) < 0)
		return NULL;
	if (tm_map_put(&s->paths, path, (intptr_t)e) < 0) {
		nomem(s);
		return NULL;
	}
	return e;
}

/* Used by directory renames: an entry for a path not collected. */
tm_entry *tm_entry_insert(tm_state *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	tm_entry *dir;

	if (!slash) {
		dir = s->root;
	} else {
		char *dpath = tm_strndup(&s->arena, path, (size_t)(slash - path));
		if (!dpath) {
			nomem(s);
			return NULL;
		}
		dir = tm_entry_get(s, dpath);
		if (!dir) {
			dir = tm_entry_insert(s, dpath);
			if (!dir)
				return NULL;
		}
		dir->walked = 1;
	}
	return entry_new(s, dir, path);
}

/* ---- reading trees ---------------------------------------------------- */

typedef struct tm_name {
	const char *name;
	size_t len;
	unsigned sides; /* bitmask of the sides whose tree has this entry */
	uint32_t mode;
	git_oid oid;
} tm_name;

typedef struct tm_dirlist {
	git_tree *trees[3];
	tm_name *names;
	size_t n;
} tm_dirlist;

static void dirlist_free(tm_dirlist *l)
{
	for (int i = 0; i < 3; i++)
		git_tree_free(l->trees[i]);
	memset(l, 0, sizeof(*l));
}

static int name_cmp(const void *a_, const void *b_)
{
	const tm_name *a = a_, *b = b_;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (int)a->sides - (int)b->sides;
}

/* Entries of the (up to) three trees, sorted by name as traverse_trees()
 * meets them: plain byte order, a file and a directory of the same name
 * side by side. */
/* Sort a nearly sorted run (a tree's entries are in git order, which
 * differs from plain order only around names that prefix others). */
static void insertion_sort_names(tm_name *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (name_cmp(&v[i - 1], &v[i]) <= 0)
			continue;
		tm_name t = v[i];
		size_t j = i;
		while (j > 0 && name_cmp(&v[j - 1], &t) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

static int dirlist_load(tm_state *s, const git_oid *const oids[3], tm_dirlist *l)
{
	size_t total = 0, k = 0, start[4] = {0, 0, 0, 0};
	tm_name *runs;

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < 3; i++) {
		if (!oids[i])
			continue;
		int dup = 0;
		for (int j = 0; j < i; j++)
			if (oids[j] && git_oid_equal(oids[i], oids[j]))
				dup = 1;
		if (dup)
			continue;
		if (git_tree_lookup(&l->trees[i], s->repo, oids[i]) < 0) {
			rq_error_git(s->err, "cannot read tree");
			dirlist_free(l);
			return -1;
		}
		total += git_tree_entrycount(l->trees[i]);
	}
	if (!total)
		return 0;
	/* from the merge's arena: a malloc per directory was a tenth of a pick */
	l->names = tm_alloc(&s->arena, 2 * total * sizeof(*l->names));
	if (!l->names) {
		dirlist_free(l);
		return nomem(s);
	}
	/* one sorted run per distinct tree, then a 3-way merge */
	runs = l->names + total;
	for (int i = 0; i < 3; i++) {
		start[i] = k;
		if (!l->trees[i])
			continue;
		unsigned sides = 0;
		for (int j = 0; j < 3; j++)
			if (oids[j] && git_oid_equal(oids[i], oids[j]))
				sides |= 1u << j;
		size_t cnt = git_tree_entrycount(l->trees[i]);
		for (size_t e = 0; e < cnt; e++) {
			const git_tree_entry *te = git_tree_entry_byindex(l->trees[i], e);
			tm_name *nm = &runs[k++];
			nm->name = git_tree_entry_name(te);
			nm->len = strlen(nm->name);
			nm->sides = sides;
			nm->mode = (uint32_t)git_tree_entry_filemode(te);
			git_oid_cpy(&nm->oid, git_tree_entry_id(te));
		}
		insertion_sort_names(runs + start[i], k - start[i]);
	}
	start[3] = k;
	{
		size_t pos[3], end[3], out = 0;
		for (int i = 0; i < 3; i++) {
			pos[i] = start[i];
			end[i] = start[i + 1];
		}
		while (out < k) {
			int best = -1;
			for (int i = 0; i < 3; i++)
				if (pos[i] < end[i] &&
				    (best < 0 || name_cmp(&runs[pos[i]], &runs[pos[best]]) < 0))
					best = i;
			l->names[out++] = runs[pos[best]++];
		}
	}
	l->n = k;
	return 0;
}

/* ---- collect ------------------------------------------------------------ */

typedef struct tm_group {
	const tm_name *nm[3];
	unsigned mask, dirmask;
} tm_group;

static int walk_dir(tm_state *s, tm_entry *dir, const git_oid *const oids[3]);

static int add_pair(tm_state *s, const tm_group *g, const char *path, int side, int is_add,
		    unsigned match_mask, unsigned dir_rename_mask)
{
	tm_pair *p;
	int idx = is_add ? side : 0;

	if (!is_add) {
		int content_relevant = match_mask == 0;
		int location_relevant = dir_rename_mask == 0x07;
		if ((content_relevant || location_relevant) &&
		    tm_map_put(&s->relevant_sources[side], path,
			       content_relevant ? TM_RELEVANT_CONTENT : TM_RELEVANT_LOCATION) < 0)
			return nomem(s);
	}
	p = tm_alloc(&s->arena, sizeof(*p));
	if (!p)
		return nomem(s);
	p->path0 = path;
	if (is_add) {
		p->two = path;
		git_oid_cpy(&p->dst.oid, &g->nm[idx]->oid);
		p->dst.mode = g->nm[idx]->mode;
	} else {
		p->one = path;
		git_oid_cpy(&p->src.oid, &g->nm[idx]->oid);
		p->src.mode = g->nm[idx]->mode;
	}
	return tm_pair_push(s, &s->pairs[side], p);
}

static int collect_rename_info(tm_state *s, const tm_group *g, const char *dirname,
			       const char *fullname, unsigned filemask, unsigned dirmask,
			       unsigned match_mask)
{
	if (s->dir_rename_mask != 0x07 && (dirmask == 3 || dirmask == 5)) {
		if (s->dir_rename_mask != 0 && s->dir_rename_mask != (dirmask & ~1u))
			tm_unsure(s, "directory removed on both sides in turn");
		s->dir_rename_mask = dirmask & ~1u;
	}
	if (dirmask == 1 || dirmask == 3 || dirmask == 5) {
		unsigned sides = (0x07 - dirmask) / 2;
		intptr_t relevance =
		    s->dir_rename_mask == 0x07 ? TM_RELEVANT_FOR_ANCESTOR : TM_NOT_RELEVANT;
		if ((sides & 1) && tm_map_put(&s->dirs_removed[1], fullname, relevance) < 0)
			return nomem(s);
		if ((sides & 2) && tm_map_put(&s->dirs_removed[2], fullname, relevance) < 0)
			return nomem(s);
	}
	if (s->dir_rename_mask == 0x07 && (filemask == 2 || filemask == 4)) {
		unsigned side = 3 - (filemask >> 1);
		if (tm_map_put(&s->dirs_removed[side], dirname, TM_RELEVANT_FOR_SELF) < 0)
			return nomem(s);
	}
	if (filemask == 0 || filemask == 7)
		return 0;
	for (int side = 1; side <= 2; side++) {
		unsigned side_mask = 1u << side;
		if ((filemask & 1) && !(filemask & side_mask) &&
		    add_pair(s, g, fullname, side, 0, match_mask & filemask, s->dir_rename_mask) <
			0)
			return -1;
		if (!(filemask & 1) && (filemask & side_mask) &&
		    add_pair(s, g, fullname, side, 1, match_mask & filemask, s->dir_rename_mask) <
			0)
			return -1;
	}
	return 0;
}

static void stage_set(tm_stage *st, const tm_name *nm)
{
	if (nm) {
		git_oid_cpy(&st->oid, &nm->oid);
		st->mode = nm->mode;
	} else {
		memset(st, 0, sizeof(*st));
	}
}

static int same(const tm_name *a, const tm_name *b)
{
	return a && b && a->mode == b->mode && git_oid_equal(&a->oid, &b->oid);
}

/* Load the trees of a directory entry and collect its children. */
static int recurse_into(tm_state *s, tm_entry *e)
{
	const git_oid *oids[3];
	for (int i = 0; i < 3; i++)
		oids[i] = (e->dirmask & (1u << i)) ? &e->stages[i].oid : NULL;
	e->walked = 1;
	return walk_dir(s, e, oids);
}

static int collect_one(tm_state *s, tm_entry *dir, const tm_group *g)
{
	unsigned mask = g->mask, dirmask = g->dirmask, filemask = mask & ~dirmask;
	unsigned prev_mask = s->dir_rename_mask, match_mask = 0;
	int m1 = same(g->nm[0], g->nm[1]), m2 = same(g->nm[0], g->nm[2]);
	int sides_match = same(g->nm[1], g->nm[2]);
	const tm_name *p = g->nm[0] ? g->nm[0] : g->nm[1] ? g->nm[1] : g->nm[2];
	size_t dlen = strlen(dir->path), plen = dlen ? dlen + 1 + p->len : p->len;
	char *fullpath = tm_alloc(&s->arena, plen + 1);
	tm_entry *e;
	const tm_name *resolved = NULL;

	if (!fullpath)
		return nomem(s);
	if (dlen) {
		memcpy(fullpath, dir->path, dlen);
		fullpath[dlen] = '/';
		memcpy(fullpath + dlen + 1, p->name, p->len);
	} else {
		memcpy(fullpath, p->name, p->len);
	}
	if (m1)
		match_mask = m2 ? 7 : 3;
	else if (m2)
		match_mask = 5;
	else if (sides_match)
		match_mask = 6;

	if (m1 && m2)
		resolved = g->nm[0];
	else if (sides_match && filemask == 7)
		resolved = g->nm[1];
	else if (m1 && filemask == 7)
		resolved = g->nm[2];
	else if (m2 && filemask == 7)
		resolved = g->nm[1];

	if (!(e = entry_new(s, dir, fullpath)))
		return -1;
	for (int i = 0; i < 3; i++) {
		stage_set(&e->stages[i], g->nm[i]);
		e->pathnames[i] = fullpath;
	}
	e->filemask = filemask;
	e->dirmask = dirmask;
	if (resolved) {
		e->clean = 1;
		stage_set(&e->result, resolved);
		return 0;
	}
	if (collect_rename_info(s, g, dir->path, fullpath, filemask, dirmask, match_mask) < 0)
		return -1;
	e->df_conflict = filemask && dirmask;
	e->is_null = dirmask ? 1 : 0;
	e->match_mask = match_mask;
	if (!dirmask)
		return 0;

	int side = m1 ? TM_SIDE2 : m2 ? TM_SIDE1 : TM_BASE;
	if (filemask == 0 && (dirmask == 2 || dirmask == 4)) {
		e->match_mask = 7 - dirmask;
		side = (int)dirmask / 2;
	}
	if (s->dir_rename_mask != 0x07 && side != TM_BASE && s->trivial_okay[side]) {
		if (tm_map_put(&s->possible_trivial[side], fullpath, (intptr_t)s->dir_rename_mask) <
		    0)
			return nomem(s);
		s->dir_rename_mask = prev_mask;
		return 0;
	}
	e->match_mask &= filemask;
	int rc = recurse_into(s, e);
	s->dir_rename_mask = prev_mask;
	return rc;
}

static int walk_dir(tm_state *s, tm_entry *dir, const git_oid *const oids[3])
{
	tm_dirlist l;
	tm_group *groups = NULL;
	size_t ng = 0;
	int rc = 0;

	if (dirlist_load(s, oids, &l) < 0)
		return -1;
	if (l.n) {
		groups = tm_alloc(&s->arena, l.n * sizeof(*groups));
		if (!groups) {
			dirlist_free(&l);
			return nomem(s);
		}
	}
	for (size_t i = 0; i < l.n;) {
		tm_group *g = &groups[ng++];
		size_t j = i;
		memset(g, 0, sizeof(*g));
		while (j < l.n && l.names[j].len == l.names[i].len &&
		       !memcmp(l.names[j].name, l.names[i].name, l.names[i].len)) {
			for (int side = 0; side < 3; side++) {
				if (!(l.names[j].sides & (1u << side)))
					continue;
				if (g->nm[side]) { /* git refuses such a tree too */
					rq_error_set(s->err, RQ_E_CORRUPT_OBJECT,
						     "tree has duplicate entries for '%.*s'",
						     (int)l.names[j].len, l.names[j].name);
					dirlist_free(&l);
					return -1;
				}
				g->nm[side] = &l.names[j];
				g->mask |= 1u << side;
				if (IS_DIR(l.names[j].mode))
					g->dirmask |= 1u << side;
			}
			j++;
		}
		i = j;
	}
	/* traverse_trees_wrapper(): a directory removed on one side, look for
	 * files added to it on the other side before handling any entry */
	if (s->dir_rename_mask == 2 || s->dir_rename_mask == 4)
		for (size_t i = 0; i < ng; i++) {
			unsigned fm = groups[i].mask & ~groups[i].dirmask;
			if (fm && fm == s->dir_rename_mask)
				s->dir_rename_mask = 0x07;
		}
	for (size_t i = 0; i < ng && rc >= 0; i++)
		rc = collect_one(s, dir, &groups[i]);

	dirlist_free(&l);
	return rc;
}

static void resolve_trivial_directory(tm_state *s, tm_entry *e, int side)
{
	if (!((side == 1 && e->match_mask == 5) || (side == 2 && e->match_mask == 3)))
		tm_unsure(s, "trivial directory merge of an unexpected entry");
	e->result = e->stages[side];
	e->is_null = e->stages[side].mode == 0;
	e->match_mask = 0;
	e->clean = 1;
}

static int handle_deferred_entries(tm_state *s)
{
	for (int side = 1; side <= 2; side++) {
		int okay = s->relevant_sources[side].live == 0;
		tm_map copy = s->possible_trivial[side];

		size_t *order = NULL;

		s->trivial_okay[side] = (unsigned)okay;
		tm_map_init(&s->possible_trivial[side], &s->arena);
		/* merge-ort walks the deferred directories in hash-table order,
		 * which decides the order of rename destinations found there */
		if (copy.n && (!(order = tm_alloc(&s->arena, copy.n * sizeof(*order))) ||
			       tm_git_hash_order(copy.keys, copy.n, order) < 0))
			return nomem(s);
		for (size_t o = 0; o < copy.n; o++) {
			size_t i = order[o];
			tm_entry *e;
			if (copy.dead[i])
				continue;
			e = tm_entry_get(s, copy.keys[i]);
			if (!e) {
				tm_unsure(s, "deferred directory without an entry");
				continue;
			}
			if (okay) {
				resolve_trivial_directory(s, e, side);
				continue;
			}
			e->match_mask &= e->filemask;
			s->dir_rename_mask = (unsigned)copy.vals[i];
			if (recurse_into(s, e) < 0)
				return -1;
		}
		s->dir_rename_mask = 0;
		for (size_t i = 0; i < s->possible_trivial[side].n; i++) {
			tm_entry *e;
			if (s->possible_trivial[side].dead[i])
				continue;
			e = tm_entry_get(s, s->possible_trivial[side].keys[i]);
			if (!e || !okay) {
				tm_unsure(s, "directory deferred after rename search");
				continue;
			}
			resolve_trivial_directory(s, e, side);
		}
	}
	return 0;
}

/* ---- content merge ------------------------------------------------------- */

int tm_read_blob(tm_state *s, const git_oid *id, git_blob **out)
{
	if (git_blob_lookup(out, s->repo, id) < 0)
		return rq_error_git(s->err, "cannot read blob");
	return 0;
}

static int write_blob(tm_state *s, const char *buf, size_t n, git_oid *out)
{
	if (s->write) {
		if (rq_memodb_write(out, s->odb, buf, n, GIT_OBJECT_BLOB) < 0)
			return rq_error_git(s->err, "cannot write blob");
	} else if (git_odb_hash(out, buf, n, GIT_OBJECT_BLOB) < 0) {
		return rq_error_git(s->err, "cannot hash blob");
	}
	return 0;
}

/*
 * handle_content_merge(): same type on both sides (file, symlink, gitlink).
 * *clean is 0 on a conflict and *why says why (TM_CM_*). On a conflict the
 * result is side a (as git does for binary files, symlinks and submodules;
 * for text git would keep the text with conflict markers, TM_CM_TEXT).
 */
int tm_content_merge(tm_state *s, const char *path, const tm_stage *o, const tm_stage *a,
		     const tm_stage *b, tm_stage *result, int *clean, int *why)
{
	(void)path;
	*clean = 1;
	*why = 0;
	if (a->mode == b->mode || a->mode == o->mode) {
		result->mode = b->mode;
	} else {
		if (!IS_REG(a->mode))
			tm_unsure(s, "mode merge of non-regular files");
		result->mode = a->mode;
		*clean = b->mode == o->mode;
		if (!*clean)
			*why |= TM_CM_MODE;
	}
	if (git_oid_equal(&a->oid, &b->oid) || git_oid_equal(&a->oid, &o->oid)) {
		git_oid_cpy(&result->oid, &b->oid);
	} else if (git_oid_equal(&b->oid, &o->oid)) {
		git_oid_cpy(&result->oid, &a->oid);
	} else if (IS_REG(a->mode)) {
		int two_way = (o->mode & S_IFMT_) != (a->mode & S_IFMT_);
		git_blob *bo = NULL, *ba = NULL, *bb = NULL;
		const char *po = "", *pa, *pb;
		size_t no = 0, na, nb;
		int rc = -1;

		if ((!two_way && tm_read_blob(s, &o->oid, &bo) < 0) ||
		    tm_read_blob(s, &a->oid, &ba) < 0 || tm_read_blob(s, &b->oid, &bb) < 0)
			goto done;
		if (bo) {
			po = git_blob_rawcontent(bo);
			no = (size_t)git_blob_rawsize(bo);
		}
		pa = git_blob_rawcontent(ba);
		na = (size_t)git_blob_rawsize(ba);
		pb = git_blob_rawcontent(bb);
		nb = (size_t)git_blob_rawsize(bb);
		if (rq_buffer_is_binary(po, no) || rq_buffer_is_binary(pa, na) ||
		    rq_buffer_is_binary(pb, nb) || no > (1u << 30) || na > (1u << 30) ||
		    nb > (1u << 30)) {
			*why |= TM_CM_BINARY;
			*clean = 0;
			git_oid_cpy(&result->oid, &a->oid);
			rc = 0;
		} else {
			char *out = NULL;
			size_t outlen = 0;
			int st = rq_xmerge(po, no, pa, na, pb, nb, s->cfg->style, &out, &outlen);
			if (st == RQ_XMERGE_TOO_COMPLEX) {
				tm_unsure(s, "xdiff hash chain overflow"); /* git fails here */
				*clean = 0;
				*why |= TM_CM_OTHER;
				rc = 0;
			} else if (st < 0) {
				nomem(s);
			} else if (st == 1) {
				*why |= TM_CM_CONTENT | TM_CM_TEXT;
				*clean = 0;
				git_oid_cpy(&result->oid, &a->oid);
				rc = 0;
			} else {
				rc = write_blob(s, out ? out : "", outlen, &result->oid);
			}
			free(out);
		}
	done:
		git_blob_free(bo);
		git_blob_free(ba);
		git_blob_free(bb);
		if (rc < 0)
			return -1;
	} else if (IS_GITLINK(a->mode) || IS_LNK(a->mode)) {
		/* submodules are not merged (not checked out); symlinks conflict */
		*why |= TM_CM_CONTENT;
		*clean = 0;
		git_oid_cpy(&result->oid, &a->oid);
	} else {
		tm_unsure(s, "content merge of an unknown type");
		*why |= TM_CM_OTHER;
		*clean = 0;
	}
	return 0;
}

/* ---- process ------------------------------------------------------------- */

static int conflict(tm_state *s, tm_entry *e, int kind)
{
	e->clean = 0;
	if (e->conflict_kind >= 0)
		kind = e->conflict_kind;
	return tm_add_conflict(s, e->path, kind);
}

static void zero_non_file_stages(tm_entry *e)
{
	for (int i = 0; i < 3; i++)
		if (!(e->filemask & (1u << i)))
			memset(&e->stages[i], 0, sizeof(e->stages[i]));
}

/*
 * A rename that collided with a file at its destination, whose content
 * merge conflicted: merge-ort keeps the text with conflict markers as that
 * side's version and may take it into a clean result (when the other side
 * added the same file). replayq reports a conflict instead of committing
 * conflict markers.
 */
static int dirty_stage(tm_state *s, tm_entry *ci, int *clean_out, int *kind_out)
{
	(void)s;
	(void)ci;
	*clean_out = 0;
	*kind_out = RQ_CONFLICT_RENAME;
	return 0;
}

/* Resolve the file part of an entry (the switch of merge-ort's
 * process_entry()); sets ci->result and tells whether it is clean. */
static int resolve_file(tm_state *s, tm_entry *ci, int *clean_out, int *kind_out)
{
	int clean = 0, kind = RQ_CONFLICT_CONTENT;

	if (ci->match_mask) {
		clean = !ci->df_conflict && !ci->path_conflict;
		if (ci->match_mask == 6) {
			if (ci->dirty & 2)
				return dirty_stage(s, ci, clean_out, kind_out);
			ci->result = ci->stages[1];
			ci->is_null = 0;
		} else {
			unsigned othermask = 7 & ~ci->match_mask;
			int side = othermask == 4 ? 2 : 1;
			if (ci->dirty & (1u << side))
				return dirty_stage(s, ci, clean_out, kind_out);
			ci->result = ci->stages[side];
			ci->is_null = ci->result.mode == 0;
			if (ci->is_null)
				clean = 1;
		}
	} else if (ci->filemask >= 6 &&
		   (ci->stages[1].mode & S_IFMT_) != (ci->stages[2].mode & S_IFMT_)) {
		clean = 0;
		kind = RQ_CONFLICT_TYPE;
	} else if (ci->filemask >= 6) {
		tm_stage merged;
		int cm, why;
		if (ci->dirty & ci->filemask)
			return dirty_stage(s, ci, clean_out, kind_out);
		memset(&merged, 0, sizeof(merged));
		if (tm_content_merge(s, ci->path, &ci->stages[0], &ci->stages[1], &ci->stages[2],
				     &merged, &cm, &why) < 0)
			return -1;
		clean = cm && !ci->df_conflict && !ci->path_conflict;
		ci->result = merged;
		ci->is_null = merged.mode == 0;
		if (!cm) {
			if (ci->filemask == 6)
				kind = RQ_CONFLICT_ADD_ADD;
			else if (why == TM_CM_MODE)
				kind = RQ_CONFLICT_MODE;
		}
	} else if (ci->filemask == 3 || ci->filemask == 5) {
		int side = ci->filemask == 5 ? 2 : 1;
		ci->result = ci->stages[side];
		ci->is_null = 0;
		clean = 0;
		kind = ci->path_conflict ? RQ_CONFLICT_RENAME_DELETE : RQ_CONFLICT_MODIFY_DELETE;
	} else if (ci->filemask == 2 || ci->filemask == 4) {
		int side = ci->filemask == 4 ? 2 : 1;
		if (ci->dirty & (1u << side))
			return dirty_stage(s, ci, clean_out, kind_out);
		ci->result = ci->stages[side];
		ci->is_null = 0;
		clean = !ci->df_conflict && !ci->path_conflict;
	} else if (ci->filemask == 1) {
		ci->is_null = 1;
		memset(&ci->result, 0, sizeof(ci->result));
		clean = !ci->path_conflict;
	} else {
		tm_unsure(s, "entry with no file and no directory");
	}
	if (ci->df_conflict)
		kind = RQ_CONFLICT_FILE_DIRECTORY;
	*clean_out = clean;
	*kind_out = kind;
	return 0;
}

static int process_entry(tm_state *s, tm_entry *ci)
{
	int clean, kind;

	if (ci->dirmask && ci->filemask == 0)
		return 0; /* a directory: its tree is the result */
	if (ci->dirmask && !ci->df_conflict)
		tm_unsure(s, "directory and file without a conflict");

	if (ci->df_conflict && ci->result.mode == 0) {
		/* the directory merged away: the file can take its place */
		ci->df_conflict = 0;
		ci->is_null = 0;
		ci->match_mask &= ~ci->dirmask;
		ci->dirmask = 0;
		zero_non_file_stages(ci);
	} else if (ci->df_conflict && ci->result.mode != 0) {
		tm_entry file;
		if (ci->filemask == 1) {
			ci->filemask = 0;
			return 0;
		}
		/* the directory stays; the file would go to a path of its own,
		 * which is clean only when it resolves to nothing */
		file = *ci;
		file.match_mask &= ~file.dirmask;
		file.dirmask = 0;
		zero_non_file_stages(&file);
		if (resolve_file(s, &file, &clean, &kind) < 0)
			return -1;
		if (!clean || !file.is_null)
			return conflict(s, ci, RQ_CONFLICT_FILE_DIRECTORY);
		return 0;
	}
	if (resolve_file(s, ci, &clean, &kind) < 0)
		return -1;
	if (!clean)
		return conflict(s, ci, kind);
	ci->clean = 1;
	return 0;
}

typedef struct tm_tent {
	const char *name;
	size_t len;
	const tm_stage *st;
} tm_tent;

static int tent_cmp(const void *a_, const void *b_)
{
	const tm_tent *a = a_, *b = b_;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);
	unsigned char c1, c2;
	if (c)
		return c;
	c1 = n < a->len ? (unsigned char)a->name[n] : IS_DIR(a->st->mode) ? '/' : 0;
	c2 = n < b->len ? (unsigned char)b->name[n] : IS_DIR(b->st->mode) ? '/' : 0;
	return c1 < c2 ? -1 : c1 > c2 ? 1 : 0;
}

/* Write the tree of a directory from its children's results. */
static int write_dir(tm_state *s, tm_entry *d)
{
	tm_tent *v = NULL;
	size_t n = 0, size = 0;
	char *buf = NULL, *p;
	git_oid id;
	int rc = -1;

	if (d->nkids) {
		v = malloc(d->nkids * sizeof(*v));
		if (!v)
			return nomem(s);
	}
	for (size_t i = 0; i < d->nkids; i++) {
		tm_entry *k = d->kids[i];
		if (k->removed || k->is_null || !k->result.mode)
			continue;
		v[n].name = k->path + k->base_off;
		v[n].len = strlen(v[n].name);
		v[n].st = &k->result;
		size += v[n].len + 8 + GIT_OID_RAWSZ;
		n++;
	}
	if (!n) {
		d->is_null = 1;
		memset(&d->result, 0, sizeof(d->result));
		free(v);
		return 0;
	}
	/* children come in plain name order: nearly git's tree order */
	for (size_t i = 1; i < n; i++) {
		if (tent_cmp(&v[i - 1], &v[i]) <= 0)
			continue;
		tm_tent t = v[i];
		size_t j = i;
		while (j > 0 && tent_cmp(&v[j - 1], &t) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
	buf = malloc(size);
	if (!buf) {
		free(v);
		return nomem(s);
	}
	p = buf;
	for (size_t i = 0; i < n; i++) {
		if (i && !tent_cmp(&v[i - 1], &v[i]))
			tm_unsure(s, "two results for one name");
		uint32_t mode = v[i].st->mode;
		char mbuf[8];
		int ml = 0;
		char tmp[8];
		int tl = 0;
		do {
			tmp[tl++] = (char)('0' + (mode & 7));
			mode >>= 3;
		} while (mode);
		while (tl)
			mbuf[ml++] = tmp[--tl];
		memcpy(p, mbuf, (size_t)ml);
		p += ml;
		*p++ = ' ';
		memcpy(p, v[i].name, v[i].len);
		p += v[i].len;
		*p++ = '\0';
		memcpy(p, v[i].st->oid.id, GIT_OID_RAWSZ);
		p += GIT_OID_RAWSZ;
	}
	if (git_odb_hash(&id, buf, (size_t)(p - buf), GIT_OBJECT_TREE) < 0) {
		rq_error_git(s->err, "cannot hash tree");
		goto out;
	}
	if (s->write) {
		int exists = 0;
		for (int i = 0; i < 3; i++)
			if (IS_DIR(d->stages[i].mode) && git_oid_equal(&id, &d->stages[i].oid))
				exists = 1;
		if (!exists) {
			git_oid wid;
			if (rq_memodb_write(&wid, s->odb, buf, (size_t)(p - buf), GIT_OBJECT_TREE) <
			    0) {
				rq_error_git(s->err, "cannot write tree");
				goto out;
			}
		}
	}
	d->is_null = 0;
	d->result.mode = S_IFDIR_;
	git_oid_cpy(&d->result.oid, &id);
	rc = 0;
out:
	free(buf);
	free(v);
	return rc;
}

static int process_dir(tm_state *s, tm_entry *d)
{
	for (size_t i = 0; i < d->nkids; i++) {
		tm_entry *k = d->kids[i];
		if (k->removed)
			continue;
		/* a collected directory gets its tree even when its entry was
		 * resolved (a rename source at the path of a directory) */
		if (k->dirmask && k->walked && process_dir(s, k) < 0)
			return -1;
		if (k->clean)
			continue;
		if (k->dirmask && !k->walked) {
			tm_unsure(s, "unresolved directory not walked");
			continue;
		}
		if (process_entry(s, k) < 0)
			return -1;
	}
	return write_dir(s, d);
}

/* ---- driver ------------------------------------------------------------- */

static void state_init(tm_state *s)
{
	tm_map_init(&s->paths, &s->arena);
	for (int i = 0; i < 3; i++) {
		tm_map_init(&s->dirs_removed[i], &s->arena);
		tm_map_init(&s->relevant_sources[i], &s->arena);
		tm_map_init(&s->dir_rename_count[i], &s->arena);
		tm_map_init(&s->dir_renames[i], &s->arena);
		tm_map_init(&s->possible_trivial[i], &s->arena);
		s->trivial_okay[i] = 1;
	}
}

int rq_treemerge(git_repository *repo, git_odb *odb, const rq_tm_config *cfg, rq_tm_cache *cache,
		 const git_oid *base, const git_oid *ours, const git_oid *theirs, git_oid *out,
		 rq_conflicts *conflicts, rq_error *err)
{
	tm_state s;
	const git_oid *oids[3] = {base, ours, theirs};
	size_t nconf = conflicts->n;
	int rc = -1;

	rq_tm_cache_trim(cache);
	memset(&s, 0, sizeof(s));
	s.repo = repo;
	s.odb = odb;
	s.cfg = cfg;
	s.cache = cache;
	s.err = err;
	s.conflicts = conflicts;
	s.write = 1;
	/* merge-ort keeps no renames when directory renames are off (git's
	 * merge_check_renames_reusable) */
	s.chain =
	    cfg->dir_renames != RQ_TM_DIRREN_NONE && rq_tm_cache_chain_continues(cache, base, ours);
	if (cfg->dir_renames == RQ_TM_DIRREN_NONE)
		rq_tm_cache_chain_break(cache);
	rq_tm_cache_lend(cache, &s.arena);
	state_init(&s);

	s.root = tm_alloc(&s.arena, sizeof(*s.root));
	if (!s.root) {
		nomem(&s);
		goto out;
	}
	s.root->path = "";
	s.root->walked = 1;
	s.root->conflict_kind = -1;
	s.root->dirmask = 7;
	for (int i = 0; i < 3; i++) {
		if (oids[i]) {
			git_oid_cpy(&s.root->stages[i].oid, oids[i]);
			s.root->stages[i].mode = S_IFDIR_;
		}
	}

	if (walk_dir(&s, s.root, oids) < 0 || handle_deferred_entries(&s) < 0)
		goto out;
	if (s.unsure)
		goto unsure;
	if (tm_detect_and_process_renames(&s) < 0)
		goto out;
	if (s.unsure && !s.forced_conflict)
		goto unsure;
	if (!s.unsure && process_dir(&s, s.root) < 0)
		goto out;
	if (s.unsure && !s.forced_conflict)
		goto unsure;
	if (s.unclean || conflicts->n > nconf) {
		if (conflicts->n == nconf && tm_add_conflict(&s, "", RQ_CONFLICT_RENAME) < 0)
			goto out;
		rc = 1;
		goto out;
	}
	if (s.root->is_null) {
		if (rq_memodb_write(out, odb, "", 0, GIT_OBJECT_TREE) < 0) {
			rq_error_git(err, "cannot write the empty tree");
			goto out;
		}
	} else {
		git_oid_cpy(out, &s.root->result.oid);
	}
	rc = 0;
	goto out;
unsure:
	/* drop what this attempt reported; the fallback reports its own */
	while (conflicts->n > nconf) {
		conflicts->n--;
		free(conflicts->v[conflicts->n].path);
	}
	rc = 2;
out:
	if (rc == 0)
		rq_tm_cache_chain_advance(cache, theirs, out);
	else
		rq_tm_cache_chain_break(cache);
	rq_tm_cache_take_back(cache, &s.arena);
	return rc;
}
