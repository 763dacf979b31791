/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_dir_rename: directory renames in a tree merge, merge-ort's
 * get_provisional_directory_renames, handle_directory_level_conflicts,
 * compute_collisions, check_for_directory_rename and
 * apply_directory_rename_modifications (see rq_dir_rename.c).
 *
 * A directory is renamed on a side when that side removed it and most of
 * the files it had went to one other directory. Paths the other side adds
 * (or renames) into the old directory then move along, as a user would
 * expect, unless merge.directoryRenames is false; with "conflict" (the
 * default) every such move is also reported as a conflict.
 */
#ifndef RQ_DIR_RENAME_H
#define RQ_DIR_RENAME_H

#include "rq_ort.h"

/*
 * Decide the directory renames of both sides from the counts rename
 * detection left (merge->dir_rename_count) into merge->dir_renames; a tie
 * is a conflict; a directory both sides renamed is left alone. 0, or -1.
 */
int rq_dir_rename_find(rq_ort_merge *merge);

/*
 * compute_collisions(): where would each path side added or renamed end
 * up under the other side's directory renames? collisions: new path ->
 * the sources going there. 0, or -1.
 */
int rq_dir_rename_collisions(rq_ort_merge *merge, int side, rq_pathmap *collisions);

/*
 * check_for_directory_rename(): the new path of path (added or renamed on
 * side) under dir_renames (the other side's), or NULL: none applies, the
 * target directory was itself renamed on side (exclusions), the path would
 * collide (a conflict is recorded), or out of memory (merge->out_of_memory
 * set).
 */
char *rq_dir_rename_check(rq_ort_merge *merge, const char *path, int side,
			  const rq_pathmap *dir_renames, const rq_pathmap *exclusions,
			  rq_pathmap collisions[3]);

/*
 * apply_directory_rename_modifications(): move pair's destination entry to
 * new_path (creating the entries of missing parent directories) and make
 * the pair point there. 0, or -1; may record a conflict or fall back where
 * merge-ort would not handle the move cleanly.
 */
int rq_dir_rename_apply(rq_ort_merge *merge, rq_ort_pair *pair, char *new_path);

#endif
