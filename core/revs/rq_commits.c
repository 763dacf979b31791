/* SPDX-License-Identifier: GPL-2.0-only */
#include "rq_commits.h"

#include <stdlib.h>

#include "rq_odb_view.h"

struct rq_commits {
	git_odb *odb;
	rq_odb_read *rd;
	rq_cobj_cache *cache;
	git_odb_backend *view; /* its grafts (NULL: none) */
	rq_oid *graft_parents; /* room for the largest graft */
};

/* rq_cobj's read, through the reader of the moment (rq_commits_reopen). */
static int read_now(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
		    rq_odb_read_obj *out)
{
	rq_commits *c = ctx;

	if (!c->rd) {
		git_error_set_str(GIT_ERROR_ODB, "the object database was closed");
		return GIT_ERROR;
	}
	return rq_odb_read_into(c->rd, id, alloc, actx, out);
}

/* rq_cobj's graft callback over the view's grafts. */
static long graft(void *ctx, const rq_oid *id, const rq_oid **parents)
{
	rq_commits *c = ctx;
	long n = rq_odb_view_graft(c->view, id, c->graft_parents, SIZE_MAX);

	*parents = c->graft_parents;
	return n;
}

/* The view's grafts, when it has any. 0, or -1 out of memory. */
static int take_grafts(rq_commits *c, rq_error *err)
{
	long most;

	if (!(c->view = rq_odb_view_find(c->odb)))
		return 0;
	if ((most = rq_odb_view_graft(c->view, NULL, NULL, 0)) < 0)
		return 0;
	if (!(c->graft_parents = calloc((size_t)most + 1, sizeof(rq_oid))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_cobj_cache_grafts(c->cache, graft, c);
	return 0;
}

int rq_commits_open(rq_commits **out, git_repository *repo, const rq_oid_algo *algo, rq_error *err)
{
	rq_commits *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (git_repository_odb(&c->odb, repo) < 0) {
		rq_commits_free(c);
		return rq_error_git(err, "cannot open the object database");
	}
	if (rq_odb_read_open(&c->rd, c->odb) < 0 ||
	    !(c->cache = rq_cobj_cache_new(algo ? algo : &rq_oid_sha1, read_now, c))) {
		rq_commits_free(c);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (take_grafts(c, err) < 0) {
		rq_commits_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int rq_commits_reopen(rq_commits *c, git_repository *repo, rq_error *err)
{
	git_odb *odb = NULL;
	rq_odb_read *rd = NULL;

	if (!c)
		return 0;
	if (git_repository_odb(&odb, repo) < 0)
		return rq_error_git(err, "cannot open the object database");
	if (odb == c->odb) {
		git_odb_free(odb);
		return 0;
	}
	if (rq_odb_read_open(&rd, odb) < 0) {
		git_odb_free(odb);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	rq_odb_read_free(c->rd);
	git_odb_free(c->odb);
	c->rd = rd;
	c->odb = odb;
	return 0;
}

void rq_commits_release(rq_commits *c)
{
	if (!c)
		return;
	rq_odb_read_free(c->rd);
	git_odb_free(c->odb);
	c->rd = NULL;
	c->odb = NULL;
}

void rq_commits_free(rq_commits *c)
{
	if (!c)
		return;
	rq_cobj_cache_free(c->cache);
	rq_odb_read_free(c->rd);
	git_odb_free(c->odb);
	free(c->graft_parents);
	free(c);
}

rq_cobj_cache *rq_commits_cache(const rq_commits *c)
{
	return c->cache;
}

rq_odb_read *rq_commits_reader(const rq_commits *c)
{
	return c->rd;
}
