/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rename_search: the state of one side's rename search, shared by the
 * passes of rename detection (rq_rename_detect.c, rq_rename_dirs.c,
 * rq_rename_inexact.c; internal to them), and the small helpers they all
 * use, static inline as they sit in the passes' loops.
 */
#ifndef RQ_RENAME_SEARCH_H
#define RQ_RENAME_SEARCH_H

#include "rq_ort.h"

#include <string.h>

/* A destination and, once paired, its source (git's diff_rename_dst). */
typedef struct rq_rename_dst {
	rq_ort_pair *pair;
	rq_ort_pair *source;
	int is_rename;
} rq_rename_dst;

/* git's struct dir_rename_info, for one search. */
typedef struct rq_rename_dir_info {
	int setup;
	rq_pathmap idx_map;		  /* destination path -> index + 1 (not renamed yet) */
	rq_pathmap dir_rename_guess;	  /* old dir -> the new dir most files went to */
	rq_pathmap *dir_rename_count;	  /* merge->dir_rename_count[side] */
	rq_pathmap *relevant_source_dirs; /* dirs whose renames matter (NULL: all) */
} rq_rename_dir_info;

/* One side's rename search. */
typedef struct rq_rename_search {
	rq_ort_merge *merge;
	int side;
	rq_ort_pair **sources;
	size_t nsources;
	rq_rename_dst *dests;
	size_t ndests;
	rq_rename_dir_info info;
} rq_rename_search;

/* The last component of path. */
static inline const char *rq_rename_search_basename(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/*
 * basename_same(): do the two paths end in the same last component? Used as
 * the tie breaker of exact and inexact renames: a file that kept its name is
 * the likelier rename.
 */
static inline int rq_rename_search_basename_same(const char *src, const char *dst)
{
	size_t sl = strlen(src), dl = strlen(dst);
	while (sl && dl) {
		char c1 = src[--sl], c2 = dst[--dl];
		if (c1 != c2)
			return 0;
		if (c1 == '/')
			return 1;
	}
	return (!sl || src[sl - 1] == '/') && (!dl || dst[dl - 1] == '/');
}

/*
 * record_rename_pair(): destination d is a rename of source s. A source can
 * only be used once (merge-ort never detects copies); rename_used stays on
 * the pair so that write_back can drop the used sources.
 */
static inline void rq_rename_search_record_pair(rq_rename_search *search, size_t d, size_t s)
{
	search->sources[s]->rename_used++;
	search->dests[d].source = search->sources[s];
	search->dests[d].is_rename = 1;
}

#endif
