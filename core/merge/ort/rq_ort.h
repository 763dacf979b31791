/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ort: the state of one tree merge, shared by its phases (internal to
 * core/merge/ort/; the tree merge's entry point is rq_treemerge.h).
 *
 * The tree merge re-implements git's merge-ort (merge-ort.c, by Elijah
 * Newren) for one merge of three trees, without an index or a worktree.
 * Read this header first: it is the map of the sub-library.
 *
 *   rq_treemerge.c      the driver: sets up an rq_ort_merge, runs the three
 *                       phases, writes the result or reports the conflicts
 *                       (merge_ort_nonrecursive_internal)
 *   rq_ort_collect.c    phase 1: walk the three trees together, only where
 *                       they differ; resolve what is trivially resolved;
 *                       record rename sources and destinations
 *                       (collect_merge_info, handle_deferred_entries)
 *   rq_ort_rename.c     phase 2: detect renames on each side, apply
 *                       directory renames, move the collected entries
 *                       accordingly (detect_and_process_renames)
 *     rq_rename_detect.c  rename detection of one side (diffcore-rename.c)
 *     rq_similarity.c     the similarity score of two blobs, cached
 *                         across merges (diffcore-delta.c,
 *                         estimate_similarity)
 *     rq_dir_rename.c     directory renames (merge-ort's directory rename
 *                         functions)
 *     rq_rename_cache.c   renames remembered along a chain of picks
 *                         (merge-ort's cached pairs for rebase and replay)
 *   rq_ort_process.c    phase 3: resolve every entry, children first, and
 *                       write the trees that changed (process_entries)
 *   rq_ort_content.c    the content merge of one path, over the line
 *                       merge of core/merge/xdiff (handle_content_merge)
 *   rq_ort.c            this header's helpers (entries, conflicts, pairs)
 *   rq_canon.c          a top-level tree written again with its modes as
 *                       git reads them (canon_mode, rq_tree.h), for the
 *                       merger's trivial picks
 *   rq_pathmap.c, rq_arena.c   the merge's maps and memory
 *
 * Calls go down this list, never up: the driver calls the phases, the
 * rename phase calls detection, similarity, directory renames and the
 * content merge, and everything uses rq_ort.c and the maps. Outside this
 * folder the tree merge uses only the line merge (core/merge/xdiff) and the
 * conflict list (core/merge/rq_conflict.h); the merger above it
 * (core/merge/rq_merge.c) is never called from here.
 *
 * Fallback. Where merge-ort itself asserts, dies or leaves entries it then
 * mishandles, and in the few states this code does not reproduce, a phase
 * calls rq_ort_fall_back(): the driver drops what the attempt found and the
 * caller (core/merge/rq_merge.c) merges that pick with libgit2 instead. Each
 * call names the state it met; rq_merge.c lists them.
 *
 * Everything a merge allocates lives in merge->arena and goes when the
 * merge ends. Nothing here is shared between threads.
 */
#ifndef RQ_ORT_H
#define RQ_ORT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_arena.h"
#include "rq_error.h"
#include "rq_conflict.h"
#include "rq_oidmap.h"
#include "rq_odb_read.h"
#include "rq_pathmap.h"
#include "rq_tree.h"
#include "rq_xmerge.h"

/* ---- the three trees ----------------------------------------------------- */

/* The three trees of a merge as indices (stages[], pairs[] and the per-side
 * maps are indexed by them; the per-side ones leave index 0 unused), in
 * merge-ort's order: the merge base, side 1 (ours), side 2 (theirs). */
enum { RQ_ORT_BASE = 0, RQ_ORT_SIDE1 = 1, RQ_ORT_SIDE2 = 2 };

/* The same as bits of a mask: filemask, dirmask and match_mask of an entry,
 * merge-ort's masks with the same values. */
enum {
	RQ_ORT_MASK_BASE = 1,
	RQ_ORT_MASK_SIDE1 = 2,
	RQ_ORT_MASK_SIDE2 = 4,
	RQ_ORT_MASK_SIDES = 6, /* both sides */
	RQ_ORT_MASK_ALL = 7
};

static inline unsigned rq_ort_mask(int tree)
{
	return 1u << tree;
}

/* The other side of side (1 <-> 2). */
static inline int rq_ort_other_side(int side)
{
	return RQ_ORT_SIDE1 + RQ_ORT_SIDE2 - side;
}

/* The side whose bit is the only one in mask, or -1. */
static inline int rq_ort_lone_side(unsigned mask)
{
	return mask == RQ_ORT_MASK_SIDE1   ? RQ_ORT_SIDE1
	       : mask == RQ_ORT_MASK_SIDE2 ? RQ_ORT_SIDE2
					   : -1;
}

/* ---- modes ------------------------------------------------------------------ */

/* The object kind of a tree entry's mode (git's S_IFMT and S_IF* values). */
#define RQ_ORT_TYPE_MASK    0170000u
#define RQ_ORT_TYPE_DIR	    0040000u
#define RQ_ORT_TYPE_REG	    0100000u
#define RQ_ORT_TYPE_LINK    0120000u
#define RQ_ORT_TYPE_GITLINK 0160000u

static inline uint32_t rq_ort_mode_type(uint32_t mode)
{
	return mode & RQ_ORT_TYPE_MASK;
}

static inline int rq_ort_mode_is_dir(uint32_t mode)
{
	return rq_ort_mode_type(mode) == RQ_ORT_TYPE_DIR;
}

static inline int rq_ort_mode_is_reg(uint32_t mode)
{
	return rq_ort_mode_type(mode) == RQ_ORT_TYPE_REG;
}

/* ---- entries ------------------------------------------------------------------ */

/* One version of a path: merge-ort's struct version_info. 36 bytes (an id
 * of either format, 32, and the mode; 24 with libgit2's 20-byte ids). */
typedef struct rq_ort_stage {
	rq_oid oid;
	uint32_t mode; /* 0: the path is absent */
} rq_ort_stage;

/*
 * A path the merge looked at: merge-ort's conflict_info (with its
 * merged_info) for a path that needed work, or merged_info alone for one
 * resolved at once. Entries form the tree of the merge result: each has
 * its directory and a directory has its children in collection order
 * (tree order), which is the order trees are written in.
 */
typedef struct rq_ort_entry rq_ort_entry;
struct rq_ort_entry {
	const char *path;	  /* full path; "" for the top level */
	size_t basename_offset;	  /* where the last component starts in path */
	rq_ort_entry *dir;	  /* containing directory (NULL for the top level) */
	rq_ort_stage stages[3];	  /* the base's, side 1's and side 2's versions */
	const char *pathnames[3]; /* where each version came from (renames) */
	/* which trees have a file, a directory, the same version (RQ_ORT_MASK_*);
	 * match_mask is merge-ort's: ALL, BASE|SIDE1, BASE|SIDE2, SIDES or 0 */
	unsigned filemask : 3, dirmask : 3, match_mask : 3;
	unsigned df_conflict : 1;   /* a file on one side, a directory on another */
	unsigned path_conflict : 1; /* a rename made this path conflict */
	unsigned clean : 1;	    /* resolved: result holds the outcome */
	unsigned is_null : 1;	    /* resolved to nothing */
	unsigned walked : 1;	    /* a directory whose children were collected */
	unsigned moved_away : 1;    /* moved elsewhere by a directory rename */
	/* stages (bits) holding the result of a content merge that conflicted;
	 * merge-ort would put the text with conflict markers there */
	unsigned conflicted_stages : 3;
	/* a merge that keeps its conflicts: the result is a text merge's
	 * conflict markers (the path's only trouble, unless its kind says more) */
	unsigned textual : 1;
	int conflict_kind; /* rq_conflict_kind a rename decided, -1 none */
	rq_ort_stage result;
	rq_ort_entry **children;
	size_t nchildren, capchildren;
};

/* ---- rename pairs --------------------------------------------------------- */

/* A pair's status (git's DIFF_STATUS_*), set after rename detection. */
enum {
	RQ_ORT_STATUS_MODIFIED = 0, /* same path on both ends */
	RQ_ORT_STATUS_ADDED = 'A',
	RQ_ORT_STATUS_DELETED = 'D',
	RQ_ORT_STATUS_RENAMED = 'R'
};

/*
 * A path deleted (source) or added (destination) on one side: git's
 * diff_filepair as merge-ort queues it for rename detection. Detection
 * joins a source and a destination into one renamed pair.
 */
typedef struct rq_ort_pair {
	const char *collected_at; /* the path where the walk found it */
	size_t order;		  /* position in the combined list (stable sort) */
	const char *src_path;	  /* git's one->path; NULL for an added path */
	const char *dst_path;	  /* git's two->path; NULL for a deleted path */
	rq_ort_stage src, dst;
	char status;	 /* RQ_ORT_STATUS_* */
	int side;	 /* the side it was found on, once combined */
	int rename_used; /* a source taken by a rename (diffcore's rename_used) */
} rq_ort_pair;

typedef struct rq_ort_pairs {
	rq_ort_pair **v;
	size_t n, cap;
} rq_ort_pairs;

/* ---- relevance (merge-ort's, same values) ------------------------------------ */

/* What a removed directory is worth to directory rename detection
 * (merge-ort's dirs_removed values). */
enum {
	RQ_ORT_DIR_NOT_RELEVANT = 0,
	RQ_ORT_DIR_RELEVANT_FOR_ANCESTOR = 1, /* only as the parent of a relevant one */
	RQ_ORT_DIR_RELEVANT_FOR_SELF = 2      /* the other side added files into it */
};

/* Why a rename source must be paired (merge-ort's relevant_sources values). */
enum {
	RQ_ORT_SOURCE_RELEVANT_NO_MORE = 0,
	RQ_ORT_SOURCE_RELEVANT_CONTENT = 1, /* the other side changed the file */
	RQ_ORT_SOURCE_RELEVANT_LOCATION = 2 /* it may tell where its directory went */
};

/* ---- configuration ----------------------------------------------------------- */

/* merge.directoryRenames */
typedef enum {
	RQ_ORT_DIR_RENAMES_FALSE = 0,
	RQ_ORT_DIR_RENAMES_CONFLICT = 1, /* git's default: applied, and reported */
	RQ_ORT_DIR_RENAMES_TRUE = 2
} rq_ort_dir_renames;

typedef struct rq_ort_config {
	int rename_limit; /* merge.renameLimit, else diff.renameLimit; <= 0: 7000 */
	rq_ort_dir_renames dir_renames;
	rq_xmerge_style conflict_style; /* merge.conflictStyle */
	int max_tree_depth;		/* core.maxTreeDepth (git's default: 2048) */
	struct rq_attr *attr;		/* the merge drivers of paths; NULL: text everywhere */
	const rq_oid_algo *algo;	/* the repository's object format (never NULL) */
	/* the merger's reader (core/odb/rq_odb_read.h), made once per merger,
	 * and the rq_tree_reader over it */
	rq_odb_read *reader;
	rq_tree_reader trees;
} rq_ort_config;

/* ---- merges that are not picks ------------------------------------------- */

/*
 * The merges of a remerge (core/merge/rq_remerge.c, the replay of a merge
 * commit) are not picks. An accepting merge keeps going where a pick stops:
 * it writes every object, a conflicted text merge writes its text with
 * conflict markers (marks), each conflict's versions go to *accepted, and
 * the conflicted tree is the result (merge-ort's result when it "accepts
 * all conflicts", as `git show --remerge-diff` and `git merge-tree` use
 * it). The third merge of a remerge (base R, ours N, theirs the original
 * merge) takes the conflict hunks of the blobs R and N wrote (base_marked,
 * ours_marked) as wholes: see rq_ort_content.c.
 */
typedef struct rq_ort_mode {
	int accept;
	rq_xmerge_marks marks; /* the markers of conflicted text (accept, remerge) */
	rq_conflict_details *accepted;
	const rq_oidmap *base_marked, *ours_marked; /* remerge: NULL otherwise */
} rq_ort_mode;

/* ---- the merge ------------------------------------------------------------ */

typedef struct rq_rename_cache rq_rename_cache;
typedef struct rq_similarity_cache rq_similarity_cache;

/* One tree merge in progress (merge-ort's merge_options_internal and the
 * rename_info in it). */
typedef struct rq_ort_merge {
	git_repository *repo;
	git_odb *odb;
	const rq_ort_config *config;
	rq_rename_cache *rename_cache;	 /* renames remembered from earlier picks */
	rq_similarity_cache *similarity; /* similarity scores from earlier picks */
	/* this merge continues the chain of rename_cache: its renames apply */
	int use_remembered_renames;
	rq_arena arena;
	rq_error *err;
	rq_conflicts *conflicts; /* the caller's list, appended to */
	const rq_ort_mode *mode; /* NULL: a pick (see rq_ort_mode) */

	rq_pathmap paths; /* path -> rq_ort_entry *, every path looked at */
	rq_ort_entry *root;

	/* renames, per side (index 1 and 2) */
	rq_ort_pairs pairs[3];		 /* sources and destinations found */
	rq_pathmap dirs_removed[3];	 /* dir -> RQ_ORT_DIR_* */
	rq_pathmap relevant_sources[3];	 /* path -> RQ_ORT_SOURCE_* */
	rq_pathmap dir_rename_count[3];	 /* old dir -> rq_pathmap * (new dir -> count) */
	rq_pathmap dir_renames[3];	 /* old dir -> new dir (const char *) */
	rq_pathmap possible_trivial[3];	 /* deferred dir -> dir_rename_mask at the time */
	unsigned trivial_merges_okay[3]; /* deferring directories is still allowed */
	/*
	 * While walking (merge-ort's dir_rename_mask): 0 outside directories
	 * removed on one side; RQ_ORT_MASK_SIDE1/2 inside a directory that
	 * only that side still has (the other side removed it): watch for
	 * files added in it; RQ_ORT_MASK_ALL once such files were seen: every
	 * path deleted there may then be needed as a rename source, to find
	 * where the directory went.
	 */
	unsigned dir_rename_mask;

	/* the outcome so far */
	int renames_unclean;	   /* a conflict found by the rename phase outside the entries */
	int fall_back;		   /* a state not reproduced met: see rq_ort_fall_back */
	const char *fall_back_why; /* the first such state (for a debugger) */
	int out_of_memory;	   /* reported already */
	int forced_conflict;	   /* a conflict whatever else happens */
	int write_objects;	   /* write blobs and trees (cleared by a conflict) */
} rq_ort_merge;

/* Set up the maps of a zeroed merge (its arena in place). */
void rq_ort_merge_init(rq_ort_merge *merge);

/* Report out of memory (RQ_E_NOMEM) and return -1. */
int rq_ort_nomem(rq_ort_merge *merge);

/* A state this code does not reproduce: the pick falls back (see above). */
void rq_ort_fall_back(rq_ort_merge *merge, const char *why);

/* Record a conflict at path (once per path: the first kind stays) and stop
 * writing objects. 0, or -1 out of memory. */
int rq_ort_conflict(rq_ort_merge *merge, const char *path, rq_conflict_kind kind);

/* The entry of path, or NULL. */
rq_ort_entry *rq_ort_entry_get(rq_ort_merge *merge, const char *path);
/* A new entry for path (an arena string) as the last child of dir,
 * registered in merge->paths. NULL when out of memory (reported). */
rq_ort_entry *rq_ort_entry_new(rq_ort_merge *merge, rq_ort_entry *dir, const char *path);
/* An entry for a path the walk did not collect (a directory rename's
 * target), with the missing parent entries; NULL when out of memory. */
rq_ort_entry *rq_ort_entry_insert(rq_ort_merge *merge, const char *path);

/* Append pair to pairs. 0, or -1 out of memory (reported). */
int rq_ort_pair_push(rq_ort_merge *merge, rq_ort_pairs *pairs, rq_ort_pair *pair);

/* Read a blob. 0, or -1 with the error set. */
int rq_ort_read_blob(rq_ort_merge *merge, const rq_oid *id, rq_odb_read_obj *out);

#endif
