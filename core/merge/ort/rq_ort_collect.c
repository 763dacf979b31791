/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_ort_collect: phase 1 of the tree merge, walking the three trees
 * together (merge-ort's collect_merge_info).
 *
 * The trees are read level by level, and only where they differ: a path
 * equal on all three sides, or a file equal on both sides or changed on
 * one side only, is resolved on the spot; a directory one side left as in
 * the base is "deferred": it resolves to the other side's tree without
 * being opened, unless rename detection turns out to need what is under it
 * (handle_deferred_entries). Paths present in the base but not on a side
 * are that side's rename sources; paths on a side but not in the base are
 * its rename destinations; each source gets merge-ort's relevance (does
 * its content or its location matter to the result?), which lets rename
 * detection skip the sources that cannot change the result.
 *
 * Where this differs from merge-ort: git walks the trees with
 * traverse_trees() and a callback; here each directory's three trees are
 * read into one sorted list of names (dir_listing) and handled name by
 * name, which gives the same order. merge-ort reads the deferred
 * directories in its hash map's order; this code reproduces that order
 * because it decides the order of the rename destinations found in them.
 */
#include "rq_ort_collect.h"
#include "rq_mem.h"
#include "rq_tree.h"

#include <stdlib.h>
#include <string.h>

/* ---- reading one directory of the three trees ------------------------------ */

/* A name in one or more of the trees of a directory. */
typedef struct tree_item {
	const char *name;
	size_t len;
	unsigned sides; /* the trees (mask bits) whose entry this is */
	uint32_t mode;
	rq_oid oid;
} tree_item;

/* The entries of a directory in the (up to) three trees, sorted. */
typedef struct dir_listing {
	rq_tree trees[3]; /* closed when absent, or the same tree as an earlier side */
	tree_item *items;
	size_t n;
} dir_listing;

/*
 * The trees are kept while the directory's names are handled: the items
 * point into them.
 */
static void dir_listing_free(dir_listing *listing)
{
	for (int i = 0; i < 3; i++)
		rq_tree_close(&listing->trees[i]);
	memset(listing, 0, sizeof(*listing));
}

/*
 * The order traverse_trees() meets names in: plain byte order, so that a
 * file and a directory of the same name come side by side (git's tree
 * order puts "a/" after "a.c"); items of the same name by their sides.
 */
static int item_cmp(const tree_item *a, const tree_item *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (int)a->sides - (int)b->sides;
}

/* Sort a nearly sorted run: a tree's entries are in git order, which
 * differs from plain order only around names that prefix others. */
static void insertion_sort_items(tree_item *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (item_cmp(&v[i - 1], &v[i]) <= 0)
			continue;
		tree_item t = v[i];
		size_t j = i;
		while (j > 0 && item_cmp(&v[j - 1], &t) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

/*
 * Read each distinct tree once: a side whose tree equals an earlier one is
 * not read again (its items carry both sides). The trees are read as git
 * reads them (rq_tree: names of any length, git's errors for a damaged
 * entry). *total: the entry count of the trees read. 0, or -1 (error set).
 */
static int lookup_trees(rq_ort_merge *merge, const rq_oid *const oids[3], dir_listing *listing,
			size_t *total)
{
	*total = 0;
	for (int i = 0; i < 3; i++) {
		int dup = 0;
		if (!oids[i])
			continue;
		for (int j = 0; j < i; j++)
			if (oids[j] && rq_oid_eq(oids[i], oids[j]))
				dup = 1;
		if (dup)
			continue;
		if (rq_tree_open_with(&listing->trees[i], &merge->config->trees,
				      merge->config->algo, oids[i], merge->err) < 0)
			return -1;
		*total += listing->trees[i].n;
	}
	return 0;
}

/*
 * Copy tree i's entries to run, each marked with every side that has this
 * same tree, and sort them into traverse order. Returns the count.
 */
static size_t fill_run(const dir_listing *listing, const rq_oid *const oids[3], int i,
		       tree_item *run)
{
	unsigned sides = 0;
	size_t pos = 0, cnt = 0;
	rq_tree_entry te;

	for (int j = 0; j < 3; j++)
		if (oids[j] && rq_oid_eq(oids[i], oids[j]))
			sides |= rq_ort_mask(j);
	while (rq_tree_next(&listing->trees[i], &pos, &te)) {
		tree_item *it = &run[cnt++];
		it->name = te.name;
		it->len = te.len;
		it->sides = sides;
		it->mode = te.mode;
		it->oid = te.id;
	}
	insertion_sort_items(run, cnt);
	return cnt;
}

/*
 * Merge the sorted runs runs[start[i] .. start[i + 1]) into out, the
 * smallest name first (items of one name from several trees come out
 * together, by side).
 */
static void merge_runs(const tree_item *runs, const size_t start[4], tree_item *out, size_t total)
{
	size_t pos[3], end[3], k = 0;

	for (int i = 0; i < 3; i++) {
		pos[i] = start[i];
		end[i] = start[i + 1];
	}
	while (k < total) {
		int best = -1;
		for (int i = 0; i < 3; i++)
			if (pos[i] < end[i] &&
			    (best < 0 || item_cmp(&runs[pos[i]], &runs[pos[best]]) < 0))
				best = i;
		out[k++] = runs[pos[best]++];
	}
}

/*
 * List a directory of the three trees (oids[i] NULL where a tree has no such
 * directory): one sorted run per distinct tree, merged. The items live in the
 * merge's arena (a malloc per directory was a tenth of a small pick). 0, or
 * -1 on error (listing freed).
 */
static int dir_listing_load(rq_ort_merge *merge, const rq_oid *const oids[3], dir_listing *listing)
{
	size_t total, k = 0, start[4] = {0, 0, 0, 0};
	tree_item *runs;

	memset(listing, 0, sizeof(*listing));
	if (lookup_trees(merge, oids, listing, &total) < 0) {
		dir_listing_free(listing);
		return -1;
	}
	if (!total)
		return 0;
	listing->items = rq_arena_alloc(&merge->arena, 2 * total * sizeof(*listing->items));
	if (!listing->items) {
		dir_listing_free(listing);
		return rq_ort_nomem(merge);
	}
	runs = listing->items + total;
	for (int i = 0; i < 3; i++) {
		start[i] = k;
		if (listing->trees[i].rd)
			k += fill_run(listing, oids, i, runs + k);
	}
	start[3] = k;
	merge_runs(runs, start, listing->items, k);
	listing->n = k;
	return 0;
}

/* ---- collecting the entries ---------------------------------------------------- */

/* The items of one name in the three trees: traverse_trees' names[3]. */
typedef struct item_group {
	const tree_item *item[3];
	unsigned mask, dirmask; /* trees having the name; having it as a directory */
} item_group;

/*
 * merge-ort's add_pair(): queue path as a rename source (deleted on side) or
 * destination (added on side). A source is relevant for its content when
 * the other side changed it (match_mask 0: it is not the same there), for its
 * location when a directory rename may need it (dir_rename_mask all);
 * merge-ort records only relevant sources in relevant_sources, and rename
 * detection only pairs those (the rest cannot change the result).
 */
static int add_pair(rq_ort_merge *merge, const item_group *group, const char *path, int side,
		    int is_add, unsigned match_mask, unsigned dir_rename_mask)
{
	rq_ort_pair *p;
	int tree = is_add ? side : RQ_ORT_BASE;

	if (!is_add) {
		int content_relevant = match_mask == 0;
		int location_relevant = dir_rename_mask == RQ_ORT_MASK_ALL;
		if ((content_relevant || location_relevant) &&
		    rq_pathmap_put(&merge->relevant_sources[side], path,
				   content_relevant ? RQ_ORT_SOURCE_RELEVANT_CONTENT
						    : RQ_ORT_SOURCE_RELEVANT_LOCATION) < 0)
			return rq_ort_nomem(merge);
	}
	if (!(p = rq_arena_alloc(&merge->arena, sizeof(*p))))
		return rq_ort_nomem(merge);
	p->collected_at = path;
	if (is_add) {
		p->dst_path = path;
		p->dst.oid = group->item[tree]->oid;
		p->dst.mode = group->item[tree]->mode;
	} else {
		p->src_path = path;
		p->src.oid = group->item[tree]->oid;
		p->src.mode = group->item[tree]->mode;
	}
	return rq_ort_pair_push(merge, &merge->pairs[side], p);
}

/*
 * The directory part of merge-ort's collect_rename_info(): follow
 * dir_rename_mask into a directory only one side still has, record the
 * directories each side removed (relevant only as ancestors at first, or not
 * at all), and, once files were added into a removed directory, mark it
 * relevant for itself on the side that removed it. 0, or -1.
 */
static int note_removed_dirs(rq_ort_merge *merge, const char *dirname, const char *fullname,
			     unsigned filemask, unsigned dirmask)
{
	unsigned sides_with_dir = dirmask & ~RQ_ORT_MASK_BASE;
	int in_base = (dirmask & RQ_ORT_MASK_BASE) != 0;
	int lone_file_side = rq_ort_lone_side(filemask);

	if (merge->dir_rename_mask != RQ_ORT_MASK_ALL && in_base &&
	    rq_ort_lone_side(sides_with_dir) > 0) {
		/* a directory one side removed: merge-ort asserts that nested
		 * removals are all on the same side */
		if (merge->dir_rename_mask != 0 && merge->dir_rename_mask != sides_with_dir)
			rq_ort_fall_back(merge, "directory removed on both sides in turn");
		merge->dir_rename_mask = sides_with_dir;
	}
	if (in_base && sides_with_dir != RQ_ORT_MASK_SIDES) {
		/* in the base, and missing on one or both sides */
		unsigned missing = RQ_ORT_MASK_ALL & ~dirmask;
		intptr_t relevance = merge->dir_rename_mask == RQ_ORT_MASK_ALL
					 ? RQ_ORT_DIR_RELEVANT_FOR_ANCESTOR
					 : RQ_ORT_DIR_NOT_RELEVANT;
		if ((missing & RQ_ORT_MASK_SIDE1) &&
		    rq_pathmap_put(&merge->dirs_removed[RQ_ORT_SIDE1], fullname, relevance) < 0)
			return rq_ort_nomem(merge);
		if ((missing & RQ_ORT_MASK_SIDE2) &&
		    rq_pathmap_put(&merge->dirs_removed[RQ_ORT_SIDE2], fullname, relevance) < 0)
			return rq_ort_nomem(merge);
	}
	if (merge->dir_rename_mask == RQ_ORT_MASK_ALL && lone_file_side > 0) {
		/* a file added on one side into a directory the other removed */
		int removed_on = rq_ort_other_side(lone_file_side);
		if (rq_pathmap_put(&merge->dirs_removed[removed_on], dirname,
				   RQ_ORT_DIR_RELEVANT_FOR_SELF) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * merge-ort's collect_rename_info(): note removed directories, then queue
 * the path as a source on each side that deleted it and as a destination on
 * each side that added it. A path on all three sides, or none, is neither.
 */
static int collect_rename_info(rq_ort_merge *merge, const item_group *group, const char *dirname,
			       const char *fullname, unsigned filemask, unsigned dirmask,
			       unsigned match_mask)
{
	int in_base = (filemask & RQ_ORT_MASK_BASE) != 0;

	if (note_removed_dirs(merge, dirname, fullname, filemask, dirmask) < 0)
		return -1;
	if (filemask == 0 || filemask == RQ_ORT_MASK_ALL)
		return 0;
	for (int side = RQ_ORT_SIDE1; side <= RQ_ORT_SIDE2; side++) {
		int on_side = (filemask & rq_ort_mask(side)) != 0;
		if (in_base && !on_side &&
		    add_pair(merge, group, fullname, side, 0, match_mask & filemask,
			     merge->dir_rename_mask) < 0)
			return -1;
		if (!in_base && on_side &&
		    add_pair(merge, group, fullname, side, 1, match_mask & filemask,
			     merge->dir_rename_mask) < 0)
			return -1;
	}
	return 0;
}

/* An entry's version from a tree item (absent: mode 0). */
static void stage_set(rq_ort_stage *st, const tree_item *it)
{
	if (it) {
		st->oid = it->oid;
		st->mode = it->mode;
	} else {
		memset(st, 0, sizeof(*st));
	}
}

/*
 * The same entry in two trees: same mode and id (merge-ort's match_mask
 * compares versions the same way).
 */
static int same_item(const tree_item *a, const tree_item *b)
{
	return a && b && a->mode == b->mode && rq_oid_eq(&a->oid, &b->oid);
}

/*
 * dir/name in the arena (just name at the top level). merge-ort builds the
 * same full paths, once per entry.
 */
static char *join_path(rq_ort_merge *merge, const rq_ort_entry *dir, const tree_item *it)
{
	size_t dlen = strlen(dir->path), plen = dlen ? dlen + 1 + it->len : it->len;
	char *fullpath = rq_arena_alloc(&merge->arena, plen + 1);

	if (!fullpath)
		return NULL;
	if (dlen) {
		memcpy(fullpath, dir->path, dlen);
		fullpath[dlen] = '/';
		memcpy(fullpath + dlen + 1, it->name, it->len);
	} else {
		memcpy(fullpath, it->name, it->len);
	}
	return fullpath;
}

/*
 * merge-ort's match_mask: which trees hold the very same entry (all three, the
 * base and one side, or both sides; 0 when all differ).
 */
static unsigned compute_match_mask(const item_group *group)
{
	int base_is_1 = same_item(group->item[0], group->item[1]);
	int base_is_2 = same_item(group->item[0], group->item[2]);

	if (base_is_1)
		return base_is_2 ? RQ_ORT_MASK_ALL : RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE1;
	if (base_is_2)
		return RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE2;
	if (same_item(group->item[1], group->item[2]))
		return RQ_ORT_MASK_SIDES;
	return 0;
}

/*
 * The cases collect_merge_info_callback() resolves at once: the same entry
 * everywhere (file or directory), or, for a file on all three sides, the same
 * file on both sides or a file only one side changed. Such paths never reach
 * rename detection. Returns the item to take, or NULL.
 */
static const tree_item *trivial_resolution(const item_group *group, unsigned filemask,
					   unsigned match_mask)
{
	if (match_mask == RQ_ORT_MASK_ALL)
		return group->item[RQ_ORT_BASE];
	if (filemask != RQ_ORT_MASK_ALL)
		return NULL;
	if (match_mask == RQ_ORT_MASK_SIDES)
		return group->item[RQ_ORT_SIDE1];
	if (match_mask == (RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE1))
		return group->item[RQ_ORT_SIDE2];
	if (match_mask == (RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE2))
		return group->item[RQ_ORT_SIDE1];
	return NULL;
}

/*
 * The directory part of collect_merge_info_callback(): a directory that one
 * side left as in the base (or that only one side has) is deferred to
 * possible_trivial, with the dir_rename_mask in force here, unless directory
 * renames need every path or deferring is off for that side; any other
 * directory is opened now. A deferred directory costs nothing if rename
 * detection turns out not to need it, which is what makes a pick cost what it
 * changes. Returns 1 when e is to be opened (the walk does it, and puts
 * prev_mask back once e is done), 0 when deferred, -1.
 */
static int collect_directory(rq_ort_merge *merge, rq_ort_entry *e, unsigned filemask,
			     unsigned dirmask, unsigned prev_mask)
{
	int side = e->match_mask == (RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE1)   ? RQ_ORT_SIDE2
		   : e->match_mask == (RQ_ORT_MASK_BASE | RQ_ORT_MASK_SIDE2) ? RQ_ORT_SIDE1
									     : RQ_ORT_BASE;

	if (filemask == 0 && rq_ort_lone_side(dirmask) > 0) {
		/* a directory only one side has: both others "match" (absent) */
		e->match_mask = RQ_ORT_MASK_ALL & ~dirmask;
		side = rq_ort_lone_side(dirmask);
	}
	if (merge->dir_rename_mask != RQ_ORT_MASK_ALL && side != RQ_ORT_BASE &&
	    merge->trivial_merges_okay[side]) {
		if (rq_pathmap_put(&merge->possible_trivial[side], e->path,
				   (intptr_t)merge->dir_rename_mask) < 0)
			return rq_ort_nomem(merge);
		merge->dir_rename_mask = prev_mask;
		return 0;
	}
	e->match_mask &= filemask;
	return 1;
}

/*
 * collect_merge_info_callback() for one name of directory dir: make its
 * entry (with its three versions), resolve it at once when it can be,
 * otherwise record its rename information, and have it opened (or defer it)
 * when it is a directory. A name that is a file on one side and a directory
 * on another is both: df_conflict, and its directory part is walked. 1 with
 * *open set when the walk must open the entry, 0, or -1.
 */
static int collect_one(rq_ort_merge *merge, rq_ort_entry *dir, const item_group *group,
		       rq_ort_entry **open)
{
	unsigned dirmask = group->dirmask, filemask = group->mask & ~dirmask;
	unsigned prev_mask = merge->dir_rename_mask, match_mask = compute_match_mask(group);
	const tree_item *first = group->item[0]	  ? group->item[0]
				 : group->item[1] ? group->item[1]
						  : group->item[2];
	const tree_item *resolved = trivial_resolution(group, filemask, match_mask);
	char *fullpath = join_path(merge, dir, first);
	rq_ort_entry *e;

	if (!fullpath)
		return rq_ort_nomem(merge);
	if (!(e = rq_ort_entry_new(merge, dir, fullpath)))
		return -1;
	for (int i = 0; i < 3; i++) {
		stage_set(&e->stages[i], group->item[i]);
		e->pathnames[i] = fullpath;
	}
	e->filemask = filemask;
	e->dirmask = dirmask;
	if (resolved) {
		e->clean = 1;
		stage_set(&e->result, resolved);
		return 0;
	}
	if (collect_rename_info(merge, group, dir->path, fullpath, filemask, dirmask, match_mask) <
	    0)
		return -1;
	e->df_conflict = filemask && dirmask;
	e->is_null = dirmask ? 1 : 0;
	e->match_mask = match_mask;
	if (!dirmask)
		return 0;
	*open = e;
	return collect_directory(merge, e, filemask, dirmask, prev_mask);
}

/*
 * Group the listing's items by name (traverse_trees hands the callback one
 * name at a time with its entry in each tree). A tree with the same name
 * twice is corrupt: git refuses it too. 0, or -1 (error set).
 */
static int group_items(rq_ort_merge *merge, const dir_listing *listing, item_group *groups,
		       size_t *ngroups)
{
	size_t ng = 0;

	for (size_t i = 0; i < listing->n;) {
		item_group *g = &groups[ng++];
		size_t j = i;
		memset(g, 0, sizeof(*g));
		for (;
		     j < listing->n && listing->items[j].len == listing->items[i].len &&
		     !memcmp(listing->items[j].name, listing->items[i].name, listing->items[i].len);
		     j++) {
			for (int tree = 0; tree < 3; tree++) {
				if (!(listing->items[j].sides & rq_ort_mask(tree)))
					continue;
				if (g->item[tree])
					return rq_error_set(merge->err, RQ_E_CORRUPT_OBJECT,
							    "tree has duplicate entries for '%.*s'",
							    (int)listing->items[j].len,
							    listing->items[j].name);
				g->item[tree] = &listing->items[j];
				g->mask |= rq_ort_mask(tree);
				if (rq_ort_mode_is_dir(listing->items[j].mode))
					g->dirmask |= rq_ort_mask(tree);
			}
		}
		i = j;
	}
	*ngroups = ng;
	return 0;
}

/* ---- the walk ------------------------------------------------------------------- */

/*
 * A directory being collected: one level of merge-ort's nested
 * traverse_trees() calls, kept on a stack of our own rather than the C
 * stack (a tree nested thousands deep must not exhaust it): its listing, its
 * names grouped, the next name to handle, and the dir_rename_mask to put
 * back once it is done (the one in force before the name that opened it).
 */
typedef struct walk_frame {
	rq_ort_entry *dir;
	dir_listing listing;
	item_group *groups;
	size_t ng, next;
	unsigned restore_mask;
	int restore;
} walk_frame;

typedef struct walk_stack {
	walk_frame *v;
	size_t n, cap;
} walk_stack;

/*
 * List and group the names of a directory (its trees: oids). Like merge-ort's
 * traverse_trees_wrapper(), inside a directory one side removed, look first
 * at all names for files the other side added there: when there are any,
 * every path of the directory matters to directory renames, and that must be
 * known before the first name is handled. 0, or -1 (listing freed).
 */
static int load_frame(rq_ort_merge *merge, walk_frame *f, const rq_oid *const oids[3])
{
	if (dir_listing_load(merge, oids, &f->listing) < 0)
		return -1;
	if (f->listing.n &&
	    !(f->groups = rq_arena_alloc(&merge->arena, f->listing.n * sizeof(*f->groups)))) {
		dir_listing_free(&f->listing);
		return rq_ort_nomem(merge);
	}
	if (group_items(merge, &f->listing, f->groups, &f->ng) < 0) {
		dir_listing_free(&f->listing);
		return -1;
	}
	if (rq_ort_lone_side(merge->dir_rename_mask) > 0)
		for (size_t i = 0; i < f->ng; i++) {
			unsigned fm = f->groups[i].mask & ~f->groups[i].dirmask;
			if (fm && fm == merge->dir_rename_mask)
				merge->dir_rename_mask = RQ_ORT_MASK_ALL;
		}
	return 0;
}

/*
 * Open directory entry e (its trees: the stages its dirmask names) on top of
 * the stack. git's traverse_trees() refuses to run more than
 * core.maxTreeDepth calls deep (git 2.55: "exceeded maximum allowed tree
 * depth"), counting from where a walk starts: the top level, or a deferred
 * directory opened after the walk (git's counter is back at 0 there). The
 * frames below are that count. 0, or -1.
 */
static int open_frame(rq_ort_merge *merge, walk_stack *st, rq_ort_entry *e, int restore,
		      unsigned restore_mask)
{
	const rq_oid *oids[3];
	walk_frame *nv;

	if ((long long)st->n > (long long)merge->config->max_tree_depth)
		return rq_error_set(merge->err, RQ_E_TREE_TOO_DEEP,
				    "exceeded maximum allowed tree depth");
	if (!(nv = rq_mem_grow(st->v, &st->cap, st->n + 1, sizeof(*nv), 16)))
		return rq_ort_nomem(merge);
	st->v = nv;
	memset(&nv[st->n], 0, sizeof(*nv));
	nv[st->n].dir = e;
	nv[st->n].restore = restore;
	nv[st->n].restore_mask = restore_mask;
	for (int i = 0; i < 3; i++)
		oids[i] =
		    (e->dirmask & rq_ort_mask(i)) && e->stages[i].mode ? &e->stages[i].oid : NULL;
	if (load_frame(merge, &nv[st->n], oids) < 0)
		return -1;
	st->n++;
	e->walked = 1;
	return 0;
}

/*
 * Collect everything under directory entry start, depth first in name order
 * (the order traverse_trees() and its callback's recursion give). 0, or -1.
 */
static int walk(rq_ort_merge *merge, rq_ort_entry *start)
{
	walk_stack st = {NULL, 0, 0};
	int rc = open_frame(merge, &st, start, 0, 0);

	while (rc >= 0 && st.n) {
		walk_frame *f = &st.v[st.n - 1];
		unsigned prev_mask = merge->dir_rename_mask;
		rq_ort_entry *open = NULL;
		if (f->next == f->ng) {
			if (f->restore)
				merge->dir_rename_mask = f->restore_mask;
			dir_listing_free(&f->listing);
			st.n--;
			continue;
		}
		rc = collect_one(merge, f->dir, &f->groups[f->next++], &open);
		if (rc == 1)
			rc = open_frame(merge, &st, open, 1, prev_mask);
	}
	while (st.n)
		dir_listing_free(&st.v[--st.n].listing);
	free(st.v);
	return rc < 0 ? -1 : 0;
}

/* ---- deferred directories ------------------------------------------------------- */

/*
 * resolve_trivial_directory_merge(): take the tree of the side that changed
 * the directory, unopened (merge-ort asserts that the other side matches the
 * base; a mismatch falls back).
 */
static void resolve_trivial_directory(rq_ort_merge *merge, rq_ort_entry *e, int side)
{
	if (e->match_mask != (RQ_ORT_MASK_ALL & ~rq_ort_mask(side)))
		rq_ort_fall_back(merge, "trivial directory merge of an unexpected entry");
	e->result = e->stages[side];
	e->is_null = e->stages[side].mode == 0;
	e->match_mask = 0;
	e->clean = 1;
}

/*
 * The deferred directories of one side, in git's hash map order (which
 * decides the order of the rename destinations found in them): resolved
 * unopened when deferring is still allowed, else opened now with the
 * dir_rename_mask they were deferred under. 0, or -1.
 */
static int open_or_resolve_deferred(rq_ort_merge *merge, const rq_pathmap *deferred, int side,
				    int okay)
{
	size_t *order = deferred->len ? rq_pathmap_git_order(deferred) : NULL;

	if (deferred->len && !order)
		return rq_ort_nomem(merge);
	for (size_t o = 0; o < deferred->len; o++) {
		size_t i = order[o];
		rq_ort_entry *e;
		if (deferred->dead[i])
			continue;
		if (!(e = rq_ort_entry_get(merge, deferred->keys[i]))) {
			rq_ort_fall_back(merge, "deferred directory without an entry");
			continue;
		}
		if (okay) {
			resolve_trivial_directory(merge, e, side);
			continue;
		}
		e->match_mask &= e->filemask;
		merge->dir_rename_mask = (unsigned)deferred->vals[i];
		if (walk(merge, e) < 0)
			return -1;
	}
	return 0;
}

/*
 * merge-ort's handle_deferred_entries(): once the walk is done, a side whose
 * rename detection needs no source at all (no relevant source) keeps its
 * deferred directories unopened; otherwise they are opened, since renames
 * may hide under them. merge-ort also keeps them closed when its cached
 * renames answer every relevant source; this code does not take that
 * shortcut, which in git saves reading trees without changing the result. Directories deferred
 * while opening those must then be resolvable unopened (merge-ort dies
 * otherwise: fall back).
 */
static int handle_deferred_entries(rq_ort_merge *merge)
{
	for (int side = RQ_ORT_SIDE1; side <= RQ_ORT_SIDE2; side++) {
		int okay = merge->relevant_sources[side].live == 0;
		rq_pathmap deferred = merge->possible_trivial[side];
		rq_pathmap *later = &merge->possible_trivial[side];

		merge->trivial_merges_okay[side] = (unsigned)okay;
		rq_pathmap_init(later, &merge->arena);
		if (open_or_resolve_deferred(merge, &deferred, side, okay) < 0)
			return -1;
		merge->dir_rename_mask = 0;
		for (size_t i = 0; i < later->len; i++) {
			rq_ort_entry *e;
			if (later->dead[i])
				continue;
			e = rq_ort_entry_get(merge, later->keys[i]);
			if (!e || !okay) {
				rq_ort_fall_back(merge, "directory deferred after rename search");
				continue;
			}
			resolve_trivial_directory(merge, e, side);
		}
	}
	return 0;
}

/* Phase 1: the walk from the top, then the deferred directories. */
int rq_ort_collect(rq_ort_merge *merge)
{
	if (walk(merge, merge->root) < 0)
		return -1;
	return handle_deferred_entries(merge);
}
