/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb_rt_iter: the iteration of rq_refdb_rt (see rq_refdb_rt_iter.h).
 */
#include "rq_refdb_rt_iter.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/refdb_backend.h>

#include "rq_buf.h"

typedef struct iter {
	git_reference_iterator parent;
	rq_refdb_rt_backend *b;
	rq_rtstack_iter *it[2];
	const rq_rtable_ref *head[2];
	int ended[2];
	char *glob;
	int prefix_only; /* the glob is "<prefix>*": every name the seek finds matches */
	rq_buf name;
	rq_rtstack_ref cur; /* the value of the ref named name */
} iter;

/* Whether stack k's record of name belongs in an iteration. */
static int iter_wants(const iter *it, int k, const char *name)
{
	if (strncmp(name, "refs/", 5) != 0)
		return 0; /* HEAD and the pseudo-refs are not iterated (git, libgit2) */
	if (rq_refdb_rt_linked(it->b) && rq_refdb_rt_worktree_ref(name) != k)
		return 0; /* a worktree's own refs come from its stack only */
	return !it->glob || it->prefix_only || fnmatch(it->glob, name, 0) == 0;
}

/* The next record stack k has for the iteration. */
static int iter_pull(iter *it, int k, rq_error *err)
{
	int r;

	while (!it->ended[k]) {
		if ((r = rq_rtstack_next_ref(it->it[k], &it->head[k], err)) < 0)
			return -1;
		it->ended[k] = r;
		if (!r && iter_wants(it, k, it->head[k]->name))
			return 0;
	}
	return 0;
}

/* The next ref of the two stacks in name order, copied into it->name and
 * it->cur: 0, GIT_ITEROVER, -1. */
static int iter_step(iter *it, rq_error *err)
{
	const rq_rtable_ref *r;
	int k;

	if (!it->ended[0] && !it->ended[1])
		k = strcmp(it->head[0]->name, it->head[1]->name) > 0;
	else if (!it->ended[0] || !it->ended[1])
		k = it->ended[0];
	else
		return GIT_ITEROVER;
	r = it->head[k];
	it->name.len = 0;
	rq_buf_str(&it->name, r->name);
	it->cur.type = r->type;
	it->cur.value = r->value;
	it->cur.peeled = r->peeled;
	it->cur.target.len = 0;
	if (r->type == RQ_RTABLE_SYMREF)
		rq_buf_str(&it->cur.target, r->target);
	if (it->name.oom || it->cur.target.oom)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return iter_pull(it, k, err);
}

static int it_next(git_reference **out, git_reference_iterator *_it)
{
	iter *it = (iter *)_it;
	rq_error err;
	int k;

	*out = NULL;
	if ((k = iter_step(it, &err)) != 0)
		return k == GIT_ITEROVER ? k : rq_refdb_rt_fail(&err);
	if (rq_refdb_rt_make_ref(out, it->b, it->name.p, &it->cur, &err) < 0)
		return rq_refdb_rt_fail(&err);
	return 0;
}

static int it_next_name(const char **out, git_reference_iterator *_it)
{
	iter *it = (iter *)_it;
	rq_error err;
	int k = iter_step(it, &err);

	if (k != 0)
		return k == GIT_ITEROVER ? k : rq_refdb_rt_fail(&err);
	*out = it->name.p;
	return 0;
}

static void it_free(git_reference_iterator *_it)
{
	iter *it = (iter *)_it;

	rq_rtstack_iter_free(it->it[0]);
	rq_rtstack_iter_free(it->it[1]);
	rq_rtstack_ref_release(&it->cur);
	free(it->glob);
	free(it->name.p);
	free(it);
}

/* The part of a glob before its first special character. */
static char *glob_prefix(const char *glob)
{
	return strndup(glob ? glob : "", glob ? strcspn(glob, "*?[\\") : 0);
}

static int iter_open(iter *it, int k, rq_error *err)
{
	char *prefix;
	rq_rtstack *st;
	int r;

	it->ended[k] = 1;
	if (k && !rq_refdb_rt_linked(it->b))
		return 0;
	if (!(prefix = glob_prefix(it->glob)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	r = rq_refdb_rt_stack(it->b, k, &st, err) < 0
		? -1
		: rq_rtstack_refs(&it->it[k], st, prefix, err);
	free(prefix);
	if (r < 0)
		return -1;
	it->ended[k] = 0;
	return iter_pull(it, k, err);
}

int rq_refdb_rt_iter_new(git_reference_iterator **out, git_refdb_backend *_b, const char *glob)
{
	iter *it = calloc(1, sizeof(*it));
	rq_error err;

	*out = NULL;
	if (!it || (glob && !(it->glob = strdup(glob)))) {
		free(it);
		return rq_refdb_rt_fail_str(-1, "out of memory");
	}
	it->b = (rq_refdb_rt_backend *)_b;
	/* fnmatch without FNM_PATHNAME, as libgit2's files backend: "*" takes
	 * '/' too */
	it->prefix_only =
	    glob && strcspn(glob, "*?[\\") == strlen(glob) - 1 && glob[strlen(glob) - 1] == '*';
	it->parent.next = it_next;
	it->parent.next_name = it_next_name;
	it->parent.free = it_free;
	if (iter_open(it, 0, &err) < 0 || iter_open(it, 1, &err) < 0) {
		it_free(&it->parent);
		return rq_refdb_rt_fail(&err);
	}
	*out = &it->parent;
	return 0;
}
