/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_merge: the 3-way tree merge behind every pick.
 *
 * Trivial picks are answered from the tree ids alone (no tree is read):
 * theirs == base gives ours; ours == base or ours == theirs gives theirs;
 * a root commit (no base) onto the empty tree gives theirs.
 *
 * Every other pick goes to rq_treemerge (rq_treemerge*.c), a
 * re-implementation of git 2.39's merge-ort that opens only the
 * directories that differ between the sides, so that a pick costs what it
 * changes, not what the repository holds. Same results as merge-ort:
 *
 *  - per path: take the changed side, same change on both sides, content
 *    merge with git's xdiff merge (histogram diff, zealous, as merge-ort
 *    hard-codes it; rq_treemerge_xdiff.c), mode merge, modify/delete,
 *    add/add (two-way merge from an empty base), file/directory, distinct
 *    types (file/symlink/submodule), binary files (a NUL in the first 8000
 *    bytes: conflict), symlinks and submodules changed differently on both
 *    sides (conflict; submodules are never merged);
 *  - renames on both sides, searched only where they can change the result
 *    (a path deleted on one side and changed or deleted on the other, or
 *    needed for a directory rename): exact, same basename at 75%, then 50%
 *    similarity, merge.renameLimit; renamed-and-modified files merged at
 *    their new path; rename/rename, rename/delete, rename/add; ties broken
 *    as git does (path order, and git's hash-table order where merge-ort
 *    depends on it);
 *  - directory renames (merge.directoryRenames: conflict (default), true,
 *    false);
 *  - merge.conflictStyle (diff3/zdiff3 make more overlapping changes
 *    conflict, as in git).
 *
 * Like merge-ort, and unlike git's older recursive strategy and libgit2,
 * merge.renames and diff.renames are ignored: merge-ort always detects
 * renames.
 *
 * Falls back to libgit2's git_merge_trees() (counted in stats.fallback),
 * for that pick only, exactly when rq_treemerge meets one of these states
 * (tm_unsure() calls; most are states where merge-ort itself asserts or
 * leaves inconsistent entries, so git may also die there):
 *  - a tree holding the same name twice (corrupt tree), or a merged
 *    directory that would get two entries of the same name;
 *  - a histogram diff hash chain of 64 distinct lines (xdiff fails: git
 *    reports an error);
 *  - a mode merge of non-regular entries with three different modes, a
 *    content merge of an object kind other than file/symlink/submodule;
 *  - a rename whose target is already resolved ("newinfo->merged.clean":
 *    git dies on that assertion), a rename/rename whose targets are
 *    resolved, a rename whose source is missing on the other side, a
 *    rename/add between a file and a non-file;
 *  - with merge.directoryRenames=true only: a directory rename moving a
 *    path into a directory that was resolved without being opened or onto
 *    a resolved path, or without a collision record (with the default
 *    =conflict, these are reported as "directory rename" conflicts, which
 *    is what git's result is whatever happens next);
 *  - walk states merge-ort asserts against: a directory removed on one
 *    side inside a directory removed on the other, deferred directories
 *    appearing after the rename search, a directory entry that was neither
 *    resolved nor walked, a directory/file entry without its conflict flag.
 * In the differential tests (108,000 random situations against git
 * merge-tree) 9 picks fell back: 6 directory renames into a directory
 * resolved unopened (=true), 2 renames whose source was gone on the other
 * side, 1 rename/add of a file and a symlink; all 9 agreed with git.
 *
 * Deliberate difference: when a renamed file collides with a file the other
 * side added at its destination and the content merge of the rename
 * conflicts, merge-ort keeps the text with conflict markers as that side's
 * version, and if the other side added the very same file the merge is
 * "clean" with conflict markers committed. replayq reports a conflict
 * ("rename") instead.
 *
 * Known differences from git that are not detected:
 *  - merge attributes from global or repository attribute files
 *    ($GIT_DIR/info/attributes, core.attributesFile): merge drivers and
 *    conflict-marker-size are not consulted (merge-ort reads the tree's
 *    .gitattributes only when renormalizing, as here);
 *  - an initialized submodule changed on both sides: git may fast-forward
 *    it, here it is a conflict;
 *  - a root tree with non-canonical modes (100664) on the trivial paths:
 *    merge-ort rewrites the root tree, the trivial cases here return the
 *    input tree unchanged.
 *
 * Caching across the picks of one merger: the chunk counts of blobs used in
 * similarity scoring, and every similarity score computed (by the pair of
 * blob ids), so a rename search that meets the pairs of an earlier pick
 * (an upstream rename met pick after pick) scores only the new pairs
 * (stats: similarity_computed / similarity_reused); the merge's memory is
 * also reused. Rename pairs themselves are not carried from one pick to the
 * next (merge-ort's "cached pairs" for git replay): those can make a pick's
 * result differ from a fresh merge of the same trees (git cherry-pick and
 * git merge-tree do not use them), and this merger gives every pick the
 * result of a fresh merge.
 */
#include "rq_merge.h"
#include "rq_treemerge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rq_merger {
	git_repository *repo;
	git_merge_options opts; /* fallback */
	rq_tm_config cfg;
	rq_tm_cache *cache;
	rq_merge_stats stats;
};

static const char *const kind_names[RQ_CONFLICT_COUNT] = {
    [RQ_CONFLICT_CONTENT] = "content",
    [RQ_CONFLICT_ADD_ADD] = "add/add",
    [RQ_CONFLICT_MODIFY_DELETE] = "modify/delete",
    [RQ_CONFLICT_RENAME] = "rename",
    [RQ_CONFLICT_FILE_DIRECTORY] = "file/directory",
    [RQ_CONFLICT_RENAME_DELETE] = "rename/delete",
    [RQ_CONFLICT_RENAME_RENAME] = "rename/rename",
    [RQ_CONFLICT_DIR_RENAME] = "directory rename",
    [RQ_CONFLICT_MODE] = "mode",
    [RQ_CONFLICT_TYPE] = "distinct types",
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

/* git_parse_maybe_bool(): 1, 0, or -1 when not a boolean */
static int maybe_bool(const char *v)
{
	if (!*v || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
		return 1;
	if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
		return 0;
	{
		char *end;
		long n = strtol(v, &end, 10);
		if (*v && !*end)
			return n != 0;
	}
	return -1;
}

static void read_config(rq_merger *m)
{
	git_config *cfg = NULL, *snap = NULL;
	git_buf buf = GIT_BUF_INIT;
	int32_t l;

	m->cfg.rename_limit = -1;
	m->cfg.dir_renames = RQ_TM_DIRREN_CONFLICT;
	m->cfg.style = RQ_TM_STYLE_MERGE;
	if (git_repository_config(&cfg, m->repo) < 0 || git_config_snapshot(&snap, cfg) < 0)
		goto out;
	if (git_config_get_int32(&l, snap, "diff.renameLimit") == 0)
		m->cfg.rename_limit = l;
	if (git_config_get_int32(&l, snap, "merge.renameLimit") == 0)
		m->cfg.rename_limit = l;
	if (git_config_get_string_buf(&buf, snap, "merge.directoryRenames") == 0) {
		int b = maybe_bool(buf.ptr);
		if (b >= 0)
			m->cfg.dir_renames = b ? RQ_TM_DIRREN_TRUE : RQ_TM_DIRREN_NONE;
		else if (!strcasecmp(buf.ptr, "conflict"))
			m->cfg.dir_renames = RQ_TM_DIRREN_CONFLICT;
		git_buf_dispose(&buf);
	}
	if (git_config_get_string_buf(&buf, snap, "merge.conflictStyle") == 0) {
		if (!strcmp(buf.ptr, "diff3"))
			m->cfg.style = RQ_TM_STYLE_DIFF3;
		else if (!strcmp(buf.ptr, "zdiff3"))
			m->cfg.style = RQ_TM_STYLE_ZDIFF3;
		else if (!strcmp(buf.ptr, "merge"))
			m->cfg.style = RQ_TM_STYLE_MERGE;
		git_buf_dispose(&buf);
	}
out:
	git_config_free(snap);
	git_config_free(cfg);
}

int rq_merger_new(rq_merger **out, git_repository *repo, rq_error *err)
{
	rq_merger *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m || rq_tm_cache_new(&m->cache) < 0) {
		free(m);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	m->repo = repo;
	read_config(m);
	git_merge_options_init(&m->opts, GIT_MERGE_OPTIONS_VERSION);
	m->opts.flags = GIT_MERGE_FIND_RENAMES;
	m->opts.rename_threshold = 50;
	m->opts.target_limit = m->cfg.rename_limit > 0 ? (unsigned)m->cfg.rename_limit : 7000;
	m->opts.file_favor = GIT_MERGE_FILE_FAVOR_NORMAL;
	*out = m;
	return 0;
}

void rq_merger_free(rq_merger *m)
{
	if (!m)
		return;
	rq_tm_cache_free(m->cache);
	free(m);
}

const rq_merge_stats *rq_merger_stats(const rq_merger *m)
{
	rq_merger *mm = (rq_merger *)m;
	rq_tm_cache_score_stats(m->cache, &mm->stats.scores_computed, &mm->stats.scores_reused);
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

/* libgit2's merge, for the cases rq_treemerge leaves alone. */
static int fallback_merge(rq_merger *m, const git_oid *base, const git_oid *ours,
			  const git_oid *theirs, git_oid *out, rq_conflicts *conflicts,
			  rq_error *err)
{
	git_tree *tb = NULL, *to = NULL, *tt = NULL;
	git_index *index = NULL;
	int rc = -1;

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

/* A merge answered from the tree ids is a clean merge like any other for
 * the chain of remembered renames: it goes on (or starts) through it. */
static int trivial(rq_merger *m, const git_oid *base, const git_oid *ours, const git_oid *theirs,
		   const git_oid *out)
{
	m->stats.trivial++;
	(void)rq_tm_cache_chain_continues(m->cache, base, ours); /* forgets a broken one */
	rq_tm_cache_chain_advance(m->cache, theirs, out);
	return 0;
}

int rq_merger_merge(rq_merger *m, const git_oid *base, const git_oid *ours, const git_oid *theirs,
		    git_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	git_oid empty;
	git_odb *odb = NULL;
	int rc;

	git_oid_fromstr(&empty, RQ_EMPTY_TREE_HEX);
	if (!base && git_oid_equal(ours, &empty)) {
		git_oid_cpy(out, theirs);
		return trivial(m, base, ours, theirs, out);
	}
	if (base && git_oid_equal(base, theirs)) {
		git_oid_cpy(out, ours);
		return trivial(m, base, ours, theirs, out);
	}
	if ((base && git_oid_equal(base, ours)) || git_oid_equal(ours, theirs)) {
		git_oid_cpy(out, theirs);
		return trivial(m, base, ours, theirs, out);
	}
	m->stats.full++;
	if (git_repository_odb(&odb, m->repo) < 0)
		return rq_error_git(err, "cannot open the object database");
	rc = rq_treemerge(m->repo, odb, &m->cfg, m->cache, base, ours, theirs, out, conflicts, err);
	git_odb_free(odb);
	if (rc == 2) /* the fallback knows nothing of remembered renames */
		return fallback_merge(m, base, ours, theirs, out, conflicts, err);
	return rc;
}
