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
	rq_remembered_rename *renames; /* side 1's renames along the chain */
	size_t nrenames, caprenames;
	int chain;			/* a chain is going on: the next merge continues it when */
	git_oid chain_base, chain_ours; /* ... its base and side 1 are these */
};

int rq_rename_cache_new(rq_rename_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

void rq_rename_cache_free(rq_rename_cache *c)
{
	if (!c)
		return;
	rq_rename_cache_chain_break(c);
	free(c);
}

void rq_rename_cache_chain_break(rq_rename_cache *c)
{
	for (size_t i = 0; i < c->nrenames; i++) {
		free(c->renames[i].src);
		free(c->renames[i].dst);
	}
	free(c->renames);
	c->renames = NULL;
	c->nrenames = c->caprenames = 0;
	c->chain = 0;
}

void rq_rename_cache_chain_advance(rq_rename_cache *c, const git_oid *theirs, const git_oid *result)
{
	c->chain = 1;
	git_oid_cpy(&c->chain_base, theirs);
	git_oid_cpy(&c->chain_ours, result);
}

int rq_rename_cache_chain_continues(rq_rename_cache *c, const git_oid *base, const git_oid *ours)
{
	if (c->chain && base && git_oid_equal(base, &c->chain_base) &&
	    git_oid_equal(ours, &c->chain_ours))
		return 1;
	rq_rename_cache_chain_break(c);
	return 0;
}

int rq_rename_cache_remember(rq_rename_cache *c, const char *src, const char *dst)
{
	rq_remembered_rename *nv, *r;

	for (size_t i = 0; i < c->nrenames; i++)
		if (!strcmp(c->renames[i].src, src))
			return 0;
	if (!(nv = rq_mem_grow(c->renames, &c->caprenames, c->nrenames + 1, sizeof(*nv), 16)))
		return -1;
	c->renames = nv;
	r = &c->renames[c->nrenames];
	r->src = strdup(src);
	r->dst = strdup(dst);
	if (!r->src || !r->dst) {
		free(r->src);
		free(r->dst);
		return -1;
	}
	c->nrenames++;
	return 0;
}

const rq_remembered_rename *rq_rename_cache_list(const rq_rename_cache *c, size_t *n)
{
	*n = c->nrenames;
	return c->renames;
}
