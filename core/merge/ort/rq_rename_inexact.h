/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rename_inexact: the passes of rename detection that score contents,
 * the basename matches and the similarity matrix (internal to rename
 * detection, see rq_rename_inexact.c).
 */
#ifndef RQ_RENAME_INEXACT_H
#define RQ_RENAME_INEXACT_H

#include "rq_rename_search.h"

/*
 * find_basename_matches(): pair each relevant source (relevant_sources, NULL:
 * all) with the one destination its unique basename, or else the directory
 * rename guess, names, when at least minimum_score similar. 0, or -1.
 */
int rq_rename_inexact_basenames(rq_rename_search *search, int minimum_score,
				rq_pathmap *relevant_sources, rq_pathmap *dirs_removed);

/*
 * The similarity matrix of diffcore_rename_extended(): every destination not
 * renamed yet against every source left, paired greedily at minimum_score
 * or more; skipped when sources x destinations exceeds rename_limit squared.
 * 0, or -1.
 */
int rq_rename_inexact_matrix(rq_rename_search *search, int minimum_score, int rename_limit,
			     rq_pathmap *dirs_removed);

#endif
