/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ort_rename: phase 2 of the tree merge, merge-ort's
 * detect_and_process_renames (see rq_ort_rename.c).
 */
#ifndef RQ_ORT_RENAME_H
#define RQ_ORT_RENAME_H

#include "rq_ort.h"

/*
 * Detect the renames of both sides among the pairs phase 1 collected,
 * apply directory renames, and move each renamed path's versions into the
 * entry of its new path, so that phase 3 resolves renamed files at their
 * new place. Remembers side 1's renames for the next pick of a chain.
 * 0, or -1 on error; conflicts found here go to merge->conflicts (and
 * merge->renames_unclean); may call rq_ort_fall_back.
 */
int rq_ort_rename(rq_ort_merge *merge);

#endif
