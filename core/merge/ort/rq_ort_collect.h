/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ort_collect: phase 1 of the tree merge, merge-ort's collect_merge_info
 * and handle_deferred_entries (see rq_ort_collect.c).
 */
#ifndef RQ_ORT_COLLECT_H
#define RQ_ORT_COLLECT_H

#include "rq_ort.h"

/*
 * Walk the three trees of merge->root (its stages hold the tree ids; an
 * absent base has mode 0) and collect every path that differs: entries in
 * merge->paths, resolved ones clean, the rest for phases 2 and 3; rename
 * sources and destinations in merge->pairs with their relevance. 0, or -1
 * on error (a corrupt tree, out of memory); may call rq_ort_fall_back.
 */
int rq_ort_collect(rq_ort_merge *merge);

#endif
