/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_rename_cache: renames remembered along a chain of picks (see
 * rq_rename_cache.h). A small list: a replay remembers the renames of its
 * upstream, a handful per pick, so a linear search for duplicates is fine.
 */
#include "rq_rename_cache.h"

#include "rq_mem.h"

#include <stdlib.h>
#include <string.h>

struct rq_rename_cache {
	rq_rename_cache_entry *renames; /* side 1's renames along the chain */
	size_t nrenames, caprenames;
	int chain;		       /* a chain is going on: the next merge continues it when */
	rq_oid chain_base, chain_ours; /* ... its base and side 1 are these */
};

/* A new cache holds no chain: the first merge cannot continue one. */
int rq_rename_cache_new(rq_rename_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

/* Forgets the chain (freeing the renames), then the cache. */
void rq_rename_cache_free(rq_rename_cache *cache)
{
	if (!cache)
		return;
	rq_rename_cache_chain_break(cache);
	free(cache);
}

/*
 * merge-ort drops its cached pairs whenever the next merge is not the next
 * step of the same rebase (merge_check_renames_reusable); here that is any
 * merge that does not continue the chain, any conflict, and any fallback, so
 * a remembered rename never reaches a merge it was not meant for.
 */
void rq_rename_cache_chain_break(rq_rename_cache *cache)
{
	for (size_t i = 0; i < cache->nrenames; i++) {
		free(cache->renames[i].src);
		free(cache->renames[i].dst);
	}
	free(cache->renames);
	cache->renames = NULL;
	cache->nrenames = cache->caprenames = 0;
	cache->chain = 0;
}

/*
 * After a clean merge of (base, ours, theirs) into result, the next pick of
 * the same replay has base = theirs (the commit just picked) and ours =
 * result (where it lands): that is what continues the chain.
 */
void rq_rename_cache_chain_advance(rq_rename_cache *cache, const rq_oid *theirs,
				   const rq_oid *result)
{
	cache->chain = 1;
	cache->chain_base = *theirs;
	cache->chain_ours = *result;
}

/*
 * A root pick (base NULL) starts from nothing: merge-ort has no renames to
 * reuse for it either. A merge that does not continue the chain forgets it
 * at once, so that a later merge cannot pick it up by accident.
 */
int rq_rename_cache_chain_continues(rq_rename_cache *cache, const rq_oid *base, const rq_oid *ours)
{
	if (cache->chain && base && rq_oid_eq(base, &cache->chain_base) &&
	    rq_oid_eq(ours, &cache->chain_ours))
		return 1;
	rq_rename_cache_chain_break(cache);
	return 0;
}

/*
 * One rename per source path: the first one remembered stays, as in
 * merge-ort, where a pair is cached only for a source not cached yet
 * (possibly_cache_new_pair). The strings are copied: the merge that found
 * the rename frees its arena before the next merge runs.
 */
int rq_rename_cache_remember(rq_rename_cache *cache, const char *src, const char *dst)
{
	rq_rename_cache_entry *nv, *r;

	for (size_t i = 0; i < cache->nrenames; i++)
		if (!strcmp(cache->renames[i].src, src))
			return 0;
	if (!(nv = rq_mem_grow(cache->renames, &cache->caprenames, cache->nrenames + 1, sizeof(*nv),
			       16)))
		return -1;
	cache->renames = nv;
	r = &cache->renames[cache->nrenames];
	r->src = strdup(src);
	r->dst = strdup(dst);
	if (!r->src || !r->dst) {
		free(r->src);
		free(r->dst);
		return -1;
	}
	cache->nrenames++;
	return 0;
}

/*
 * In the order first seen, which is the order rename detection tries them
 * (use_cached_pairs walks git's map; the pairs it makes do not depend on the
 * order, since each source and each target is used once).
 */
const rq_rename_cache_entry *rq_rename_cache_list(const rq_rename_cache *cache, size_t *n)
{
	*n = cache->nrenames;
	return cache->renames;
}
