/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ort_process: phase 3 of the tree merge, merge-ort's process_entries
 * (see rq_ort_process.c).
 */
#ifndef RQ_ORT_PROCESS_H
#define RQ_ORT_PROCESS_H

#include "rq_ort.h"

/*
 * Resolve every entry the earlier phases left unresolved, children before
 * their directory, and give every opened directory its tree: merge->root
 * ends with the result tree (or is_null for an empty result). Conflicts go
 * to merge->conflicts. 0, or -1 on error; may call rq_ort_fall_back.
 */
int rq_ort_process(rq_ort_merge *merge);

#endif
