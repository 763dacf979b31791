/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_ort_rename: phase 2 of the tree merge (merge-ort's
 * detect_and_process_renames, collect_renames, process_renames).
 *
 * Steps, as in merge-ort:
 *  1. rename detection on each side that has a relevant source
 *     (rq_rename_detect.c), then each pair gets its status;
 *  2. side 1's renames are remembered for the next pick of a chain
 *     (rq_rename_cache.h);
 *  3. directory renames are decided (rq_dir_rename.c), unless
 *     merge.directoryRenames is false;
 *  4. both sides' renames and additions are gathered in one list, each
 *     path added into a directory the other side renamed moved along
 *     (collect_renames), and the list sorted by source path;
 *  5. each rename moves its versions from the old path's entry into the
 *     new path's (process_renames): the new path then holds the base
 *     version and the other side's version, and phase 3 merges them there
 *     like any modified file. Renames meeting each other are classified:
 *     rename/rename to two paths, to the same path, rename/delete,
 *     rename/add (a file the other side added at the new path), and a
 *     rename whose type changed.
 *
 * Where this differs from merge-ort: merge-ort resolves a rename/add by
 * merging the renamed file first and keeping the text with conflict
 * markers as that side's version when it conflicts; replayq does not
 * produce that text, so it marks the stage (conflicted_stages) and phase 3
 * reports a conflict wherever the result would depend on it. States where
 * merge-ort asserts (a rename onto an entry already resolved, a rename
 * whose source the other side does not have, a rename/add of a file and a
 * symlink) fall back.
 */
#include "rq_ort_rename.h"
#include "rq_dir_rename.h"
#include "rq_ort_content.h"
#include "rq_rename_cache.h"
#include "rq_rename_detect.h"

#include <stdlib.h>
#include <string.h>

/*
 * merge-ort's possible_side_renames(): a side needs a rename search only
 * when it deleted or added paths and some deleted path is relevant.
 */
static int possible_side_renames(const rq_ort_merge *merge, int side)
{
	return merge->pairs[side].n > 0 && merge->relevant_sources[side].live > 0;
}

/*
 * resolve_diffpair_statuses(): after detection, each pair is an addition, a
 * deletion, a rename (a destination that took a source's path), or unchanged
 * (never produced here: pairs are additions and deletions).
 */
static void resolve_statuses(rq_ort_pairs *pairs)
{
	for (size_t i = 0; i < pairs->n; i++) {
		rq_ort_pair *p = pairs->v[i];
		p->status = !p->src_path		       ? RQ_ORT_STATUS_ADDED
			    : !p->dst_path		       ? RQ_ORT_STATUS_DELETED
			    : strcmp(p->src_path, p->dst_path) ? RQ_ORT_STATUS_RENAMED
							       : RQ_ORT_STATUS_MODIFIED;
	}
}

/*
 * Remember side 1's renames of this merge for the next one of the chain
 * (merge-ort's cache_new_pair). Not those side 2 made the same way: the next
 * merge's base has them already (the document's rename/rename(1to1) case).
 */
static int remember_side1_renames(rq_ort_merge *merge)
{
	const rq_ort_pairs *q1 = &merge->pairs[RQ_ORT_SIDE1], *q2 = &merge->pairs[RQ_ORT_SIDE2];

	for (size_t i = 0; i < q1->n; i++) {
		const rq_ort_pair *p = q1->v[i];
		int same = 0;
		if (p->status != RQ_ORT_STATUS_RENAMED)
			continue;
		for (size_t k = 0; k < q2->n && !same; k++)
			same = q2->v[k]->status == RQ_ORT_STATUS_RENAMED &&
			       !strcmp(q2->v[k]->src_path, p->src_path) &&
			       !strcmp(q2->v[k]->dst_path, p->dst_path);
		if (!same &&
		    rq_rename_cache_remember(merge->rename_cache, p->src_path, p->dst_path) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * collect_renames() for one side: every renamed or added path, moved by the
 * other side's directory renames where they apply, goes to result (in the
 * side's order, remembering the side); added paths that did not move are
 * not renames and stay out. 0, or -1.
 */
static int collect_renames(rq_ort_merge *merge, rq_ort_pairs *result, int side,
			   rq_pathmap collisions[3])
{
	const rq_pathmap *dir_renames = &merge->dir_renames[rq_ort_other_side(side)];
	const rq_pathmap *exclusions = &merge->dir_renames[side];
	rq_ort_pairs *side_pairs = &merge->pairs[side];

	for (size_t i = 0; i < side_pairs->n; i++) {
		rq_ort_pair *p = side_pairs->v[i];
		char *new_path;

		if (p->status != RQ_ORT_STATUS_ADDED && p->status != RQ_ORT_STATUS_RENAMED)
			continue;
		new_path = rq_dir_rename_check(merge, p->dst_path, side, dir_renames, exclusions,
					       collisions);
		if (!new_path && merge->out_of_memory)
			return -1;
		if (p->status != RQ_ORT_STATUS_RENAMED && !new_path)
			continue;
		if (new_path && rq_dir_rename_apply(merge, p, new_path) < 0)
			return -1;
		p->side = side;
		p->order = result->n;
		if (rq_ort_pair_push(merge, result, p) < 0)
			return -1;
	}
	return 0;
}

/*
 * The combined list's order (merge-ort sorts its combined renames with
 * compare_pairs): by source path, an added path by where it was collected;
 * the collection order breaks ties, so that the two sides' renames of one
 * source come side 1 first.
 */
static int pair_cmp(const void *a_, const void *b_)
{
	const rq_ort_pair *a = *(rq_ort_pair *const *)a_, *b = *(rq_ort_pair *const *)b_;
	int c = strcmp(a->src_path ? a->src_path : a->collected_at,
		       b->src_path ? b->src_path : b->collected_at);
	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

/*
 * A rename made this entry conflict; the first kind recorded stays (it names
 * the rename that caused the conflict).
 */
static void mark_path_conflict(rq_ort_entry *e, rq_conflict_kind kind)
{
	e->path_conflict = 1;
	if (e->conflict_kind < 0)
		e->conflict_kind = (int)kind;
}

/* What a rename's processing asks of the loop over the renames. */
enum { RENAME_NEXT = 0, RENAME_STOP = 1 };

/*
 * Both sides renamed the same source (process_renames' rename/rename
 * case). To the same path (1to1): the new path gets the base version and
 * merges like a modified file; to two paths (1to2): all three paths
 * conflict.
 */
static int process_rename_rename(rq_ort_merge *merge, rq_ort_entry *base, const rq_ort_pair *p1,
				 const rq_ort_pair *p2)
{
	rq_ort_entry *side1 = rq_ort_entry_get(merge, p1->dst_path);
	rq_ort_entry *side2 = rq_ort_entry_get(merge, p2->dst_path);

	if (!side1 || !side2 || side1->clean || side2->clean) {
		rq_ort_fall_back(merge, "rename/rename of resolved entries");
		return RENAME_STOP;
	}
	if (!strcmp(p1->dst_path, p2->dst_path)) {
		side1->stages[RQ_ORT_BASE] = base->stages[RQ_ORT_BASE];
		side1->filemask |= RQ_ORT_MASK_BASE;
		side1->pathnames[RQ_ORT_BASE] = p1->src_path;
		base->is_null = 1;
		base->clean = 1;
		return RENAME_NEXT;
	}
	mark_path_conflict(side1, RQ_CONFLICT_RENAME_RENAME);
	mark_path_conflict(side2, RQ_CONFLICT_RENAME_RENAME);
	mark_path_conflict(base, RQ_CONFLICT_RENAME_RENAME);
	return RENAME_NEXT;
}

/*
 * A rename whose new path the other side also added (rename/add, or both
 * sides renaming different files there): merge-ort first merges the renamed
 * file (base version, and the other side's version from the old path) and
 * stores that as the renaming side's version at the new path, where it
 * then meets the other side's file. A conflicted text merge is marked.
 */
static int merge_renamed_into_collision(rq_ort_merge *merge, rq_ort_entry *oldinfo,
					rq_ort_entry *newinfo, int target)
{
	const rq_ort_entry *side_a = target == RQ_ORT_SIDE1 ? newinfo : oldinfo;
	const rq_ort_entry *side_b = target == RQ_ORT_SIDE2 ? newinfo : oldinfo;
	rq_ort_stage merged;
	int clean, why;

	memset(&merged, 0, sizeof(merged));
	if (rq_ort_mode_type(side_a->stages[RQ_ORT_SIDE1].mode) !=
	    rq_ort_mode_type(side_b->stages[RQ_ORT_SIDE2].mode)) {
		rq_ort_fall_back(merge, "rename/add of different kinds");
		return RENAME_STOP;
	}
	/* git merges at the rename's source path (pair->one->path) */
	if (rq_ort_content_merge(merge, oldinfo->path, &oldinfo->stages[RQ_ORT_BASE],
				 &side_a->stages[RQ_ORT_SIDE1], &side_b->stages[RQ_ORT_SIDE2], NULL,
				 &merged, &clean, &why) < 0)
		return -1;
	newinfo->stages[target] = merged;
	if (!clean && (why & RQ_ORT_CONTENT_TEXT))
		newinfo->conflicted_stages |= rq_ort_mask(target);
	return RENAME_NEXT;
}

/*
 * The plain rename: the new path takes the base version and, unless the
 * other side deleted the source, the other side's version from the old
 * path, so that phase 3 merges them there. A rename that changed the type
 * (file <-> symlink) leaves the old path to be resolved as a deletion.
 */
static void move_versions(rq_ort_entry *oldinfo, rq_ort_entry *newinfo, const char *oldpath,
			  int other, int source_deleted, int type_changed)
{
	newinfo->stages[RQ_ORT_BASE] = oldinfo->stages[RQ_ORT_BASE];
	newinfo->filemask |= RQ_ORT_MASK_BASE;
	newinfo->pathnames[RQ_ORT_BASE] = oldpath;
	if (type_changed) {
		memset(&oldinfo->stages[RQ_ORT_BASE], 0, sizeof(oldinfo->stages[RQ_ORT_BASE]));
		oldinfo->filemask &= RQ_ORT_MASK_SIDES;
	} else if (source_deleted) {
		mark_path_conflict(newinfo, RQ_CONFLICT_RENAME_DELETE);
	} else {
		newinfo->stages[other] = oldinfo->stages[other];
		newinfo->filemask |= rq_ort_mask(other);
		newinfo->pathnames[other] = oldpath;
	}
}

/*
 * process_renames() for one rename oldinfo -> pair->dst_path on pair->side.
 * The old path resolves to nothing afterwards (its versions moved), unless
 * the type changed. RENAME_NEXT, RENAME_STOP (fallback), or -1.
 */
static int process_rename(rq_ort_merge *merge, const rq_ort_pair *pair, rq_ort_entry *oldinfo)
{
	rq_ort_entry *newinfo = rq_ort_entry_get(merge, pair->dst_path);
	int target = pair->side, other = rq_ort_other_side(target);
	int source_deleted = oldinfo->filemask == RQ_ORT_MASK_BASE, collision, type_changed, r;

	if (!newinfo || newinfo->clean) {
		rq_ort_fall_back(merge, "rename onto a resolved entry");
		return RENAME_STOP;
	}
	collision = (newinfo->filemask & rq_ort_mask(other)) != 0;
	type_changed = !source_deleted && (rq_ort_mode_is_reg(oldinfo->stages[other].mode) !=
					   rq_ort_mode_is_reg(newinfo->stages[target].mode));
	if (type_changed && collision)
		collision = 0;
	if (!source_deleted && !(oldinfo->filemask & rq_ort_mask(other))) {
		rq_ort_fall_back(merge, "rename source missing on the other side");
		return RENAME_STOP;
	}
	if (collision && !source_deleted) {
		if ((r = merge_renamed_into_collision(merge, oldinfo, newinfo, target)) !=
		    RENAME_NEXT)
			return r;
	} else if (collision) {
		mark_path_conflict(newinfo, RQ_CONFLICT_RENAME_DELETE);
	} else {
		move_versions(oldinfo, newinfo, pair->src_path, other, source_deleted,
			      type_changed);
	}
	if (!type_changed) {
		oldinfo->is_null = 1;
		oldinfo->clean = 1;
		memset(&oldinfo->result, 0, sizeof(oldinfo->result));
	}
	return RENAME_NEXT;
}

/*
 * process_renames(): the sorted list, a source renamed by both sides
 * appearing twice in a row (rename/rename). Sources already resolved are
 * skipped, as merge-ort skips those it handled. A fallback stops the loop
 * (the driver then drops the attempt). 0, or -1.
 */
static int process_renames(rq_ort_merge *merge, const rq_ort_pairs *renames)
{
	for (size_t i = 0; i < renames->n; ++i) {
		const rq_ort_pair *pair = renames->v[i], *next = NULL;
		rq_ort_entry *oldinfo =
		    pair->src_path ? rq_ort_entry_get(merge, pair->src_path) : NULL;
		int r;

		if (!oldinfo || oldinfo->clean)
			continue;
		if (i + 1 < renames->n && renames->v[i + 1]->src_path &&
		    !strcmp(pair->src_path, renames->v[i + 1]->src_path))
			next = renames->v[++i];
		r = next ? process_rename_rename(merge, oldinfo, pair, next)
			 : process_rename(merge, pair, oldinfo);
		if (r != RENAME_NEXT)
			return r < 0 ? -1 : 0;
	}
	return 0;
}

/*
 * Detect renames on each side that needs it (statuses are set on both, so
 * that later steps can read them either way), then remember side 1's.
 */
static int detect_renames(rq_ort_merge *merge)
{
	for (int side = RQ_ORT_SIDE1; side <= RQ_ORT_SIDE2; side++) {
		if (possible_side_renames(merge, side) && rq_rename_detect(merge, side) < 0)
			return -1;
		resolve_statuses(&merge->pairs[side]);
	}
	return remember_side1_renames(merge);
}

/*
 * detect_and_process_renames(): nothing to do when neither side has a
 * relevant source; otherwise the steps at the top of the file. The combined
 * list is only sorted and processed when no fallback was decided while
 * collecting (a move merge-ort cannot make leaves entries inconsistent).
 */
int rq_ort_rename(rq_ort_merge *merge)
{
	rq_ort_pairs combined;
	rq_pathmap collisions[3];

	memset(&combined, 0, sizeof(combined));
	if (!possible_side_renames(merge, RQ_ORT_SIDE1) &&
	    !possible_side_renames(merge, RQ_ORT_SIDE2))
		return 0;
	if (detect_renames(merge) < 0)
		return -1;
	if (merge->config->dir_renames != RQ_ORT_DIR_RENAMES_FALSE && rq_dir_rename_find(merge) < 0)
		return -1;
	rq_pathmap_init(&collisions[RQ_ORT_BASE], &merge->arena);
	for (int side = RQ_ORT_SIDE1; side <= RQ_ORT_SIDE2; side++)
		if (rq_dir_rename_collisions(merge, side, &collisions[side]) < 0)
			return -1;
	if (collect_renames(merge, &combined, RQ_ORT_SIDE1, collisions) < 0 ||
	    collect_renames(merge, &combined, RQ_ORT_SIDE2, collisions) < 0)
		return -1;
	if (merge->fall_back)
		return 0;
	if (combined.n)
		qsort(combined.v, combined.n, sizeof(*combined.v), pair_cmp);
	return process_renames(merge, &combined);
}
