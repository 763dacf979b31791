/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rename_dirs: the directory rename counts and guesses of rename
 * detection, and its pass over sources needed only for their location
 * (internal to rename detection, see rq_rename_dirs.c).
 */
#ifndef RQ_RENAME_DIRS_H
#define RQ_RENAME_DIRS_H

#include "rq_rename_search.h"

/*
 * update_dir_rename_counts(): the rename oldname -> newname votes that
 * oldname's directory (and its relevant removed ancestors with the same
 * trailing components) went to newname's. A no-op before rq_rename_dirs_init.
 * 0, or -1.
 */
int rq_rename_dirs_update_counts(rq_rename_search *search, rq_pathmap *dirs_removed,
				 const char *oldname, const char *newname);

/* initialize_dir_rename_info(): index the destinations not renamed yet, let
 * the renames found so far vote, and make each removed directory's guess.
 * 0, or -1. */
int rq_rename_dirs_init(rq_rename_search *search, rq_pathmap *dirs_removed);

/* idx_possible_rename(): the destination filename would be if its directory
 * went where the guess says (*index, or -1). 0, or -1 out of memory. */
int rq_rename_dirs_possible_rename(rq_rename_search *search, const char *filename, long *index);

/* handle_early_known_dir_renames(): drop the sources relevant only for a
 * location whose directory renames are all decided. 0, or -1. */
int rq_rename_dirs_handle_early_known(rq_rename_search *search, rq_pathmap *relevant_sources,
				      rq_pathmap *dirs_removed);

/* cleanup_dir_rename_info(): leave in the counts only the removed directories
 * still relevant, without the unknown votes. */
void rq_rename_dirs_cleanup(rq_rename_search *search, const rq_pathmap *dirs_removed);

#endif
