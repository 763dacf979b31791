/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_treemerge: the tree merge, git's merge-ort for one merge of three
 * trees without an index (the entry point of core/merge/ort/; its one
 * caller is core/merge/rq_merge.c, whose header says what it covers).
 *
 * A merger keeps an rq_treemerge_memory across its merges: the renames
 * remembered along a chain of picks, the similarity cache, and the
 * merge's memory chunks. Nothing here is shared between threads.
 */
#ifndef RQ_TREEMERGE_H
#define RQ_TREEMERGE_H

#include <git2.h>

#include "rq_arena.h"
#include "rq_error.h"
#include "rq_ort.h"

/* What a merger keeps from one tree merge to the next. */
typedef struct rq_treemerge_memory {
	rq_rename_cache *renames;	 /* rq_rename_cache.h */
	rq_similarity_cache *similarity; /* rq_similarity.h */
	rq_arena_chunk *spare_chunks;	 /* arena chunks for the next merge */
	/* the state the last RQ_TREEMERGE_FALL_BACK met (a static string) */
	const char *fall_back_why;
} rq_treemerge_memory;

/* 0, or -1 out of memory (nothing to free then). */
int rq_treemerge_memory_init(rq_treemerge_memory *mem);
void rq_treemerge_memory_release(rq_treemerge_memory *mem);
/* Similarity scores computed and reused over the memory's life. */
void rq_treemerge_memory_stats(const rq_treemerge_memory *mem, size_t *computed, size_t *reused);

/*
 * A merge the caller answered from the tree ids alone, with tree result:
 * for the chain of remembered renames it is a clean merge like any other
 * (it continues the chain, or starts one).
 */
void rq_treemerge_trivial(rq_treemerge_memory *mem, const rq_oid *base, const rq_oid *ours,
			  const rq_oid *theirs, const rq_oid *result);

/* What rq_treemerge returns, besides a negative error. */
enum {
	RQ_TREEMERGE_CLEAN = 0,	   /* *out is the merged tree */
	RQ_TREEMERGE_CONFLICT = 1, /* conflicts appended to the list */
	/* a state this merge does not reproduce (rq_ort.h: fallback): nothing
	 * reported; the caller merges the pick another way */
	RQ_TREEMERGE_FALL_BACK = 2
};

/*
 * Merge ours and theirs, both descended from base (NULL: the empty tree,
 * for a root commit), writing new blobs and trees through odb (the
 * replay's in-memory store). Returns RQ_TREEMERGE_*, or -1 with err set.
 * mode: NULL for a pick, else how a remerge's merge treats its conflicts
 * (rq_ort.h: rq_ort_mode): an accepting merge sets *out on
 * RQ_TREEMERGE_CONFLICT too, and appends to mode->accepted one detail per
 * conflict it appends to conflicts (the list must hold as many details as
 * conflicts before the call).
 */
int rq_treemerge(git_repository *repo, git_odb *odb, const rq_ort_config *config,
		 rq_treemerge_memory *mem, const rq_ort_mode *mode, const rq_oid *base,
		 const rq_oid *ours, const rq_oid *theirs, rq_oid *out, rq_conflicts *conflicts,
		 rq_error *err);

#endif
