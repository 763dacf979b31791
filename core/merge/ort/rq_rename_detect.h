/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rename_detect: rename detection on one side of a tree merge, git's
 * diffcore_rename_extended() (diffcore-rename.c) as merge-ort calls it
 * (see rq_rename_detect.c).
 */
#ifndef RQ_RENAME_DETECT_H
#define RQ_RENAME_DETECT_H

#include "rq_ort.h"

/*
 * Pair the sources and destinations of merge->pairs[side]: a destination
 * found to be a rename gets its source's path and version, and the sources
 * taken leave the list (the pairs' statuses are set by the caller). Counts
 * directory renames into merge->dir_rename_count[side] for the directories
 * in merge->dirs_removed[side]. 0, or -1 on error.
 */
int rq_rename_detect(rq_ort_merge *merge, int side);

#endif
