/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_treemerge: the tree-level 3-way merge behind rq_merger (internal).
 *
 * A re-implementation of git's merge-ort (git 2.39) for one merge of three
 * trees, without an index: the three trees are walked together and only
 * directories that differ between the sides are opened; paths that need
 * it go through rename detection (diffcore-rename's exact, basename and
 * similarity passes, with merge-ort's notion of which sources are
 * relevant), directory renames, and per-path resolution; new blobs and
 * trees are written bottom-up along the changed paths only.
 *
 * Files: rq_treemerge.c (walk, per-path resolution, trees),
 * rq_treemerge_rename.c (rename detection and processing),
 * rq_treemerge_xdiff.c (content merge of one file, git's xdiff merge with
 * the histogram algorithm), rq_treemerge_util.c (arena, maps).
 *
 * Nothing here is thread-safe across one rq_tm_cache; separate mergers are
 * independent. No global mutable state.
 */
#ifndef RQ_TREEMERGE_H
#define RQ_TREEMERGE_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_merge.h"

/* merge.directoryRenames */
enum { RQ_TM_DIRREN_NONE = 0, RQ_TM_DIRREN_CONFLICT = 1, RQ_TM_DIRREN_TRUE = 2 };
/* merge.conflictStyle */
enum { RQ_TM_STYLE_MERGE = 0, RQ_TM_STYLE_DIFF3 = 1, RQ_TM_STYLE_ZDIFF3 = 2 };

typedef struct rq_tm_config {
	int rename_limit; /* diff.renameLimit / merge.renameLimit; <= 0: 7000 */
	int dir_renames;  /* RQ_TM_DIRREN_* */
	int style;	  /* RQ_TM_STYLE_* */
} rq_tm_config;

/* ---- arena ---------------------------------------------------------- */

typedef struct tm_chunk tm_chunk;
typedef struct tm_arena {
	tm_chunk *head;
	tm_chunk *spare; /* chunks kept from an earlier merge */
} tm_arena;

void *tm_alloc(tm_arena *a, size_t n); /* zeroed; NULL when out of memory */
char *tm_strndup(tm_arena *a, const char *s, size_t n);
char *tm_strdup(tm_arena *a, const char *s);
void tm_arena_free(tm_arena *a);
/* Release the arena, returning up to keep_bytes of chunks for reuse. */
tm_chunk *tm_arena_release(tm_arena *a, size_t keep_bytes);
void tm_chunks_free(tm_chunk *c);

/* ---- string-keyed map, insertion ordered ------------------------------ */

/* Keys are not copied: they must outlive the map (arena strings). */
typedef struct tm_map {
	tm_arena *arena;
	const char **keys;
	intptr_t *vals;
	unsigned char *dead;
	size_t n, cap, live;
	uint32_t *tab; /* 0 = empty, else index + 1 */
	size_t tabsz;
} tm_map;

void tm_map_init(tm_map *m, tm_arena *a);
int tm_map_put(tm_map *m, const char *key, intptr_t val); /* -1 out of memory */
int tm_map_get(const tm_map *m, const char *key, intptr_t *val);
int tm_map_has(const tm_map *m, const char *key);
void tm_map_del(tm_map *m, const char *key);
/* Iterate: for (i = 0; i < m->n; i++) if (!m->dead[i]) ... */

/* The iteration order of git's hashmap for keys inserted in this order. */
int tm_git_hash_order(const char *const *keys, size_t n, size_t *order);

/* ---- merge state ----------------------------------------------------- */

typedef struct tm_stage {
	git_oid oid;
	uint32_t mode; /* 0: absent */
} tm_stage;

enum { TM_BASE = 0, TM_SIDE1 = 1, TM_SIDE2 = 2 };

/* dirs_removed relevance */
enum { TM_NOT_RELEVANT = 0, TM_RELEVANT_FOR_ANCESTOR = 1, TM_RELEVANT_FOR_SELF = 2 };
/* relevant_sources relevance */
enum { TM_RELEVANT_NO_MORE = 0, TM_RELEVANT_CONTENT = 1, TM_RELEVANT_LOCATION = 2 };

typedef struct tm_entry tm_entry;
struct tm_entry {
	const char *path; /* full path; "" for the top level */
	size_t base_off;  /* offset of the basename within path */
	tm_entry *dir;	  /* containing directory (NULL for the top level) */
	tm_stage stages[3];
	const char *pathnames[3];
	unsigned filemask : 3, dirmask : 3, match_mask : 3;
	unsigned df_conflict : 1, path_conflict : 1;
	unsigned clean : 1;   /* resolved (merged_info) */
	unsigned is_null : 1; /* merged result is absent */
	unsigned walked : 1;  /* directory whose children were collected */
	unsigned removed : 1; /* dropped from its directory (directory rename) */
	unsigned dirty : 3;   /* stages holding a conflicted merge (not reproduced) */
	int conflict_kind;    /* rq_conflict_kind, -1 none */
	tm_stage result;
	tm_entry **kids;
	size_t nkids, capkids;
};

typedef struct tm_pair {
	const char *path0; /* the path where it was collected */
	size_t seq;	   /* position when sorted stably */
	const char *one;   /* source path (NULL: add) */
	const char *two;   /* destination path (NULL: delete) */
	tm_stage src, dst;
	char status;	 /* 'A', 'D', 'R', 0 */
	int side;	 /* set by collect_renames */
	int rename_used; /* source paired (diffcore) */
} tm_pair;

typedef struct tm_pairs {
	tm_pair **v;
	size_t n, cap;
} tm_pairs;

typedef struct rq_tm_cache rq_tm_cache;

typedef struct tm_state {
	git_repository *repo;
	git_odb *odb;
	const rq_tm_config *cfg;
	rq_tm_cache *cache;
	int chain; /* this merge continues the chain: remembered renames apply */
	tm_arena arena;
	rq_error *err;
	rq_conflicts *conflicts;

	tm_map paths; /* path -> tm_entry* */
	tm_entry *root;

	/* renames */
	tm_pairs pairs[3];
	tm_map dirs_removed[3];	    /* dir -> relevance */
	tm_map relevant_sources[3]; /* path -> relevance */
	tm_map dir_rename_count[3]; /* old dir -> tm_map* (new dir -> count) */
	tm_map dir_renames[3];	    /* old dir -> new dir */
	tm_map possible_trivial[3]; /* deferred dirs -> dir_rename_mask */
	unsigned trivial_okay[3];
	unsigned dir_rename_mask;

	int unclean;		/* conflicts found outside the entries (rename phase) */
	int unsure;		/* a case this code does not reproduce: fall back */
	const char *unsure_why; /* the first reason (for a debugger) */
	int oom;		/* out of memory was reported */
	int forced_conflict;	/* a conflict whatever else happens */
	int write;		/* write blobs and trees (cleared after a conflict) */
} tm_state;

/* rq_treemerge.c */
void tm_unsure(tm_state *s, const char *why);
tm_entry *tm_entry_get(tm_state *s, const char *path);
int tm_add_conflict(tm_state *s, const char *path, int kind);
/* tm_content_merge() *why: what made it unclean */
enum { TM_CM_CONTENT = 1, TM_CM_BINARY = 2, TM_CM_MODE = 4, TM_CM_OTHER = 8, TM_CM_TEXT = 16 };
int tm_content_merge(tm_state *s, const char *path, const tm_stage *o, const tm_stage *a,
		     const tm_stage *b, tm_stage *result, int *clean, int *why);
tm_entry *tm_entry_insert(tm_state *s, const char *path);
int tm_pair_push(tm_state *s, tm_pairs *q, tm_pair *p);
int tm_read_blob(tm_state *s, const git_oid *id, git_blob **out);

/* rq_treemerge_rename.c */
int tm_detect_and_process_renames(tm_state *s);

/* rq_treemerge_xdiff.c: 3-way merge of one file like git's ll_merge with
 * xdl_merge (histogram, zealous, default labels are not needed: only a clean
 * result is ever written). Returns 0 clean (*out malloc'd, *outlen), 1
 * conflict, -1 out of memory, or RQ_XMERGE_TOO_COMPLEX: a histogram chain
 * longer than git allows (64 lines with one hash), where git's merge fails
 * and the caller leaves the pick to the checked fallback. */
#define RQ_XMERGE_TOO_COMPLEX (-2)
int rq_xmerge(const char *base, size_t nbase, const char *ours, size_t nours, const char *theirs,
	      size_t ntheirs, int style, char **out, size_t *outlen);

/* git's buffer_is_binary(): a NUL in the first 8000 bytes. */
int rq_buffer_is_binary(const char *buf, size_t n);

/* The renames remembered along a chain of picks (rq_treemerge_rename.c):
 * does a merge of base and ours continue the chain (else it is forgotten);
 * a clean merge advances it; anything else breaks it. */
int rq_tm_cache_chain_continues(rq_tm_cache *c, const git_oid *base, const git_oid *ours);
void rq_tm_cache_chain_advance(rq_tm_cache *c, const git_oid *theirs, const git_oid *result);
void rq_tm_cache_chain_break(rq_tm_cache *c);

/* Similarity cache shared by the merges of one merger. */
int rq_tm_cache_new(rq_tm_cache **out);
void rq_tm_cache_free(rq_tm_cache *c);
void rq_tm_cache_trim(rq_tm_cache *c);
/* Rename similarity scores computed, and taken from earlier picks (see
 * rq_treemerge_rename.c), over the cache's life. */
void rq_tm_cache_score_stats(const rq_tm_cache *c, size_t *computed, size_t *reused);
/* The arena memory kept by the cache, lent to a merge and taken back. */
void rq_tm_cache_lend(rq_tm_cache *c, tm_arena *a);
void rq_tm_cache_take_back(rq_tm_cache *c, tm_arena *a);

/*
 * Merge. Returns 0 (clean, *out is the tree), 1 (conflicts listed), 2 (not
 * handled here: the caller falls back), negative on error.
 */
int rq_treemerge(git_repository *repo, git_odb *odb, const rq_tm_config *cfg, rq_tm_cache *cache,
		 const git_oid *base, const git_oid *ours, const git_oid *theirs, git_oid *out,
		 rq_conflicts *conflicts, rq_error *err);

#endif
