/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rename_cache: the renames remembered along a chain of picks, as
 * merge-ort remembers them for a rebase or a replay (git's
 * Documentation/technical/remembering-renames.adoc; in merge-ort.c the
 * cached_pairs, merge_check_renames_reusable and use_cached_pairs).
 *
 * The picks of a replay form a chain: each merge's base is the commit
 * picked before (side 2 of the previous merge) and its side 1 is the
 * previous result. Along such a chain, the renames side 1 showed in one
 * merge are side 1's renames in the next one too (the upstream's renames,
 * which every pick meets again), and a fresh search can miss them once the
 * topic has changed a file enough (the document's section 4: a commit cuts
 * a file down, its revert brings it back). So a merge that continues the
 * chain pairs those paths as renames first, then searches for the rest.
 * Any other merge, a conflict, the libgit2 fallback, or
 * merge.directoryRenames=false (merge-ort keeps nothing then) forgets them.
 *
 * Only the renames are remembered, not the rest of merge-ort's cache (the
 * sources it found irrelevant, the target directories): replayq searches
 * those again, which gives the same pairs.
 */
#ifndef RQ_RENAME_CACHE_H
#define RQ_RENAME_CACHE_H

#include <git2.h>
#include <stddef.h>

#include "rq_oid.h"

typedef struct rq_rename_cache rq_rename_cache;

/* A rename of side 1: from the path src to the path dst. */
typedef struct rq_rename_cache_entry {
	char *src, *dst;
} rq_rename_cache_entry;

/* 0, or -1 out of memory (*out NULL). */
int rq_rename_cache_new(rq_rename_cache **out);
void rq_rename_cache_free(rq_rename_cache *c);

/*
 * Does a merge of base and ours continue the chain (base is the previous
 * merge's side 2 and ours its result)? When it does not, the remembered
 * renames are forgotten. A root pick (no base) never continues it.
 */
int rq_rename_cache_chain_continues(rq_rename_cache *c, const rq_oid *base, const rq_oid *ours);
/* A merge ended clean with result: the next merge continues the chain when
 * its base is theirs and its side 1 is result. */
void rq_rename_cache_chain_advance(rq_rename_cache *c, const rq_oid *theirs, const rq_oid *result);
/* Forget the chain and its renames. */
void rq_rename_cache_chain_break(rq_rename_cache *c);

/* Remember side 1's rename src -> dst (once per source). 0, or -1 out of
 * memory. */
int rq_rename_cache_remember(rq_rename_cache *c, const char *src, const char *dst);
/* The renames remembered, in the order they were first seen. */
const rq_rename_cache_entry *rq_rename_cache_list(const rq_rename_cache *c, size_t *n);

#endif
