/*
 * rq_merge: 3-way tree merge (trivial cases here, the rest via libgit2).
 */
#include "rq_merge.h"

#include <stdlib.h>
#include <string.h>

struct rq_merger {
	git_repository *repo;
	git_merge_options opts;
	rq_merge_stats stats;
};

static const char *const kind_names[RQ_CONFLICT_COUNT] = {
    [RQ_CONFLICT_CONTENT] = "content",
    [RQ_CONFLICT_ADD_ADD] = "add/add",
    [RQ_CONFLICT_MODIFY_DELETE] = "modify/delete",
    [RQ_CONFLICT_RENAME] = "rename",
    [RQ_CONFLICT_FILE_DIRECTORY] = "file/directory",
};

const char *rq_conflict_kind_name(rq_conflict_kind kind)
{
	if ((int)kind < 0 || kind >= RQ_CONFLICT_COUNT)
		return "content";
	return kind_names[kind];
}

void rq_conflicts_free(rq_conflicts *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int add_conflict(rq_conflicts *c, const char *path, rq_conflict_kind kind, rq_error *err)
{
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		rq_conflict *nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		c->v = nv;
		c->cap = ncap;
	}
	if (!(c->v[c->n].path = strdup(path)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	c->v[c->n++].kind = kind;
	return 0;
}

int rq_merger_new(rq_merger **out, git_repository *repo, rq_error *err)
{
	rq_merger *m = calloc(1, sizeof(*m));
	git_config *cfg = NULL, *snap = NULL;
	int renames = 1;
	int32_t limit = 7000;

	*out = NULL;
	if (!m)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	m->repo = repo;
	git_merge_options_init(&m->opts, GIT_MERGE_OPTIONS_VERSION);
	if (git_repository_config(&cfg, repo) == 0 && git_config_snapshot(&snap, cfg) == 0) {
		int v;
		int32_t l;
		if (git_config_get_bool(&v, snap, "diff.renames") == 0)
			renames = v;
		if (git_config_get_bool(&v, snap, "merge.renames") == 0)
			renames = v;
		if (git_config_get_int32(&l, snap, "merge.renameLimit") == 0 && l > 0)
			limit = l;
	}
	git_config_free(snap);
	git_config_free(cfg);
	m->opts.flags = renames ? GIT_MERGE_FIND_RENAMES : 0;
	m->opts.rename_threshold = 50;
	m->opts.target_limit = (unsigned)limit;
	m->opts.file_favor = GIT_MERGE_FILE_FAVOR_NORMAL;
	*out = m;
	return 0;
}

void rq_merger_free(rq_merger *m)
{
	free(m);
}

const rq_merge_stats *rq_merger_stats(const rq_merger *m)
{
	return &m->stats;
}

static int collect_conflicts(git_index *index, rq_conflicts *conflicts, rq_error *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *our, *their;
	int rc;

	if (git_index_conflict_iterator_new(&it, index) < 0)
		return rq_error_git(err, "cannot list conflicts");
	while ((rc = git_index_conflict_next(&anc, &our, &their, it)) == 0) {
		const char *path = our ? our->path : their ? their->path : anc->path;
		rq_conflict_kind kind;
		if (anc && our && their)
			kind = RQ_CONFLICT_CONTENT;
		else if (!anc && our && their)
			kind = RQ_CONFLICT_ADD_ADD;
		else if (anc && (our || their))
			kind = RQ_CONFLICT_MODIFY_DELETE;
		else
			kind = RQ_CONFLICT_RENAME;
		if (add_conflict(conflicts, path, kind, err) < 0) {
			git_index_conflict_iterator_free(it);
			return -1;
		}
	}
	git_index_conflict_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return rq_error_git(err, "cannot list conflicts");
	return 0;
}

int rq_merger_merge(rq_merger *m, const git_oid *base, const git_oid *ours, const git_oid *theirs,
		    git_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	git_tree *tb = NULL, *to = NULL, *tt = NULL;
	git_index *index = NULL;
	int rc = -1;

	git_oid empty;

	git_oid_fromstr(&empty, RQ_EMPTY_TREE_HEX);
	if (!base && git_oid_equal(ours, &empty)) {
		git_oid_cpy(out, theirs);
		m->stats.trivial++;
		return 0;
	}
	if (base && git_oid_equal(base, theirs)) {
		git_oid_cpy(out, ours);
		m->stats.trivial++;
		return 0;
	}
	if ((base && git_oid_equal(base, ours)) || git_oid_equal(ours, theirs)) {
		git_oid_cpy(out, theirs);
		m->stats.trivial++;
		return 0;
	}
	m->stats.full++;
	m->stats.fallback++;
	if ((base && git_tree_lookup(&tb, m->repo, base) < 0) ||
	    git_tree_lookup(&to, m->repo, ours) < 0 || git_tree_lookup(&tt, m->repo, theirs) < 0) {
		rq_error_git(err, "cannot read tree");
		goto out;
	}
	if (git_merge_trees(&index, m->repo, tb, to, tt, &m->opts) < 0) {
		rq_error_git(err, "merge failed");
		goto out;
	}
	if (git_index_has_conflicts(index)) {
		rc = collect_conflicts(index, conflicts, err) < 0 ? -1 : 1;
		goto out;
	}
	if (git_index_write_tree_to(out, index, m->repo) < 0) {
		rq_error_git(err, "cannot write merged tree");
		goto out;
	}
	rc = 0;
out:
	git_index_free(index);
	git_tree_free(tb);
	git_tree_free(to);
	git_tree_free(tt);
	return rc;
}
