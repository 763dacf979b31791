/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_merge: the 3-way tree merge behind every pick (the public face of the
 * merge sub-library in core/merge/: ort/ holds the tree merge, xdiff/ the
 * line merge; ort/rq_ort.h is the map of the internals).
 *
 * Trivial picks are answered from the tree ids: theirs == base gives ours;
 * ours == base gives theirs (a root commit's base is the empty tree); only
 * the top-level tree of the result is read, to write it again when its
 * modes are not written as git writes them (rq_canon: merge-ort opens the
 * top level of every merge and writes it from canonical modes).
 *
 * Every other pick goes to rq_treemerge (core/merge/ort), a
 * re-implementation of git 2.39's merge-ort that opens only the
 * directories that differ between the sides, so that a pick costs what it
 * changes, not what the repository holds. Same results as merge-ort:
 *
 *  - per path: take the changed side, same change on both sides, content
 *    merge with git's xdiff merge (histogram diff, zealous, as merge-ort
 *    hard-codes it; core/merge/xdiff), mode merge, modify/delete, add/add
 *    (two-way merge from an empty base), file/directory, distinct types
 *    (file/symlink/submodule), binary files (a NUL in the first 8000
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
 *  - the renames remembered along the picks of a replay, as git replay's
 *    merge-ort remembers them (ort/rq_rename_cache.h);
 *  - merge.conflictStyle (diff3/zdiff3 make more overlapping changes
 *    conflict, as in git);
 *  - the merge drivers of the paths' attributes (ort/rq_attr.h): text,
 *    union, binary, merge.default; core.maxTreeDepth bounds the walk.
 *
 * Like merge-ort, and unlike git's older recursive strategy and libgit2,
 * merge.renames and diff.renames are ignored: merge-ort always detects
 * renames.
 *
 * Falls back to libgit2's git_merge_trees() (counted in stats.fallback),
 * for that pick only, exactly when the tree merge meets one of these
 * states (rq_ort_fall_back() calls, each naming its state; most are states
 * where merge-ort itself asserts or leaves inconsistent entries, so git
 * may also die there):
 *  - a merged directory that would get two entries of the same name (a
 *    tree holding the same name twice is corrupt: an error, not a
 *    fallback);
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
 *    a resolved path, moving an entry other than an unresolved file added
 *    on one side, or without a collision record (with the default
 *    =conflict, these are reported as "directory rename" conflicts, which
 *    is what git's result is whatever happens next);
 *  - walk states merge-ort asserts against: a directory removed on one
 *    side inside a directory removed on the other, deferred directories
 *    appearing after the rename search (or without an entry), a trivial
 *    directory merge whose other side is not the base's, a directory entry
 *    that was neither resolved nor walked, a directory/file entry without
 *    its conflict flag, an entry with neither a file nor a directory.
 * In the differential tests (108,000 random situations against git
 * merge-tree) 9 picks fell back: 6 directory renames into a directory
 * resolved unopened (=true), 2 renames whose source was gone on the other
 * side, 1 rename/add of a file and a symlink; all 9 agreed with git. The
 * fallback knows nothing of remembered renames: a pick that falls back
 * breaks their chain. libgit2 has no SHA-256: in a SHA-256 repository such
 * a pick fails (RQ_E_UNSUPPORTED_REPO, naming the state) instead.
 *
 * Deliberate difference: when a renamed file collides with a file the other
 * side added at its destination and the content merge of the rename
 * conflicts, merge-ort keeps the text with conflict markers as that side's
 * version, and if the other side added the very same file the merge is
 * "clean" with conflict markers committed. replayq reports a conflict
 * ("rename") instead.
 *
 * Known differences from git that are not detected:
 *  - an external merge driver (merge.<name>.driver) is never run: the path
 *    conflicts, as in git when the driver fails; conflict-marker-size is
 *    not read (the conflicted text of an accepting merge, never committed,
 *    has git's default markers);
 *  - an initialized submodule changed on both sides: git may fast-forward
 *    it, here it is a conflict.
 *
 * Kept across the picks of one merger (rq_treemerge_memory): the renames
 * remembered along the chain of picks; the chunk counts of blobs used in
 * similarity scoring and every similarity score computed (by the pair of
 * blob ids), so a rename search that meets the pairs of an earlier pick (an
 * upstream rename met pick after pick) scores only the new pairs (stats:
 * similarity_computed / similarity_reused; a score never depends on the
 * cache); and the merge's memory chunks.
 */
#include "rq_merge.h"
#include "rq_attr.h"
#include "rq_canon.h"
#include "rq_cobj.h"
#include "rq_ortodb.h"
#include "rq_tree.h"
#include "rq_rename_cache.h"
#include "rq_treemerge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rq_merger {
	git_repository *repo;
	git_odb *odb; /* the database config.reader reads (not a reference) */
	rq_cobj_cache *commits, *own_commits; /* rq_merger_commits */
	git_merge_options fallback_opts;      /* libgit2's merge, for the fallback */
	rq_ort_config config;
	rq_treemerge_memory memory; /* kept across the merges: see rq_treemerge.h */
	rq_merge_stats stats;
};

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

/* merge.directoryRenames: a boolean, or "conflict" (git's default). */
static rq_ort_dir_renames parse_dir_renames(const char *v, rq_ort_dir_renames dflt)
{
	int b = maybe_bool(v);

	if (b >= 0)
		return b ? RQ_ORT_DIR_RENAMES_TRUE : RQ_ORT_DIR_RENAMES_FALSE;
	if (!strcasecmp(v, "conflict"))
		return RQ_ORT_DIR_RENAMES_CONFLICT;
	return dflt;
}

/* merge.conflictStyle: merge, diff3 or zdiff3 (case matters, as in git). */
static rq_xmerge_style parse_conflict_style(const char *v, rq_xmerge_style dflt)
{
	if (!strcmp(v, "diff3"))
		return RQ_XMERGE_STYLE_DIFF3;
	if (!strcmp(v, "zdiff3"))
		return RQ_XMERGE_STYLE_ZDIFF3;
	if (!strcmp(v, "merge"))
		return RQ_XMERGE_STYLE_MERGE;
	return dflt;
}

/*
 * The configuration merge-ort reads for a merge (merge_recursive_config):
 * the rename limit (merge.renameLimit over diff.renameLimit),
 * merge.directoryRenames and merge.conflictStyle, from a snapshot of the
 * repository's configuration. Unreadable configuration gives git's
 * defaults; invalid values are ignored (git would die on some).
 */
static void read_config(rq_merger *m)
{
	git_config *cfg = NULL, *snap = NULL;
	git_buf buf = GIT_BUF_INIT;
	int32_t l;

	m->config.rename_limit = -1;
	m->config.dir_renames = RQ_ORT_DIR_RENAMES_CONFLICT;
	m->config.conflict_style = RQ_XMERGE_STYLE_MERGE;
	m->config.max_tree_depth = RQ_TREE_MAX_DEPTH;
	if (git_repository_config(&cfg, m->repo) < 0 || git_config_snapshot(&snap, cfg) < 0)
		goto out;
	if (git_config_get_int32(&l, snap, "diff.renameLimit") == 0)
		m->config.rename_limit = l;
	if (git_config_get_int32(&l, snap, "merge.renameLimit") == 0)
		m->config.rename_limit = l;
	if (git_config_get_int32(&l, snap, "core.maxTreeDepth") == 0)
		m->config.max_tree_depth = l;
	if (git_config_get_string_buf(&buf, snap, "merge.directoryRenames") == 0) {
		m->config.dir_renames = parse_dir_renames(buf.ptr, m->config.dir_renames);
		git_buf_dispose(&buf);
	}
	if (git_config_get_string_buf(&buf, snap, "merge.conflictStyle") == 0) {
		m->config.conflict_style = parse_conflict_style(buf.ptr, m->config.conflict_style);
		git_buf_dispose(&buf);
	}
out:
	git_config_free(snap);
	git_config_free(cfg);
}

/*
 * The reader of the repository's object database, made once per merger
 * (again only if the repository's database was replaced since). No
 * reference is kept: the database lives as long as the repository holds
 * it, and whoever installed it (rq_odb_tmpdir) decides when it goes.
 */
int rq_merger_sync(rq_merger *m, rq_error *err)
{
	git_odb *odb = NULL;

	if (git_repository_odb(&odb, m->repo) < 0)
		return rq_error_git(err, "cannot open the object database");
	git_odb_free(odb); /* (the repository's reference stays) */
	if (odb == m->odb && m->config.reader)
		return 0;
	rq_odb_read_free(m->config.reader);
	m->config.reader = NULL;
	m->odb = odb;
	if (rq_odb_read_open(&m->config.reader, odb) < 0)
		return rq_error_git(err, "cannot open the object database");
	return 0;
}

int rq_merger_new(rq_merger **out, git_repository *repo, const rq_merger_opts *opts, rq_error *err)
{
	rq_merger *m = calloc(1, sizeof(*m));
	const char *root = opts ? opts->root : NULL;

	*out = NULL;
	if (!m || rq_treemerge_memory_init(&m->memory) < 0) {
		free(m);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	m->repo = repo;
	m->config.algo = opts && opts->algo ? opts->algo : &rq_oid_sha1;
	m->config.trees = rq_ortodb_tree_reader(&m->config.reader);
	read_config(m);
	if (rq_merger_sync(m, err) < 0 ||
	    rq_attr_new(&m->config.attr, repo, m->config.algo, &m->config.reader, &m->config.trees,
			root, err) < 0) {
		rq_merger_free(m);
		return -1;
	}
	/* the fallback: libgit2's merge with rename detection at git's 50% */
	git_merge_options_init(&m->fallback_opts, GIT_MERGE_OPTIONS_VERSION);
	m->fallback_opts.flags = GIT_MERGE_FIND_RENAMES;
	m->fallback_opts.rename_threshold = 50;
	m->fallback_opts.target_limit =
	    m->config.rename_limit > 0 ? (unsigned)m->config.rename_limit : 7000;
	m->fallback_opts.file_favor = GIT_MERGE_FILE_FAVOR_NORMAL;
	*out = m;
	return 0;
}

void rq_merger_free(rq_merger *m)
{
	if (!m)
		return;
	rq_treemerge_memory_release(&m->memory);
	rq_attr_free(m->config.attr);
	rq_cobj_cache_free(m->own_commits);
	rq_odb_read_free(m->config.reader);
	free(m);
}

const rq_oid_algo *rq_merger_algo(const rq_merger *m)
{
	return m->config.algo;
}

const rq_tree_reader *rq_merger_trees(const rq_merger *m)
{
	return &m->config.trees;
}

/* rq_cobj's read over the merger's current reader. */
static int commit_read(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
		       rq_odb_read_obj *out)
{
	return rq_odb_read_into(*(rq_odb_read **)ctx, id, alloc, actx, out);
}

void rq_merger_use_commits(rq_merger *m, rq_cobj_cache *c)
{
	if (!m->own_commits)
		m->commits = c;
}

rq_cobj_cache *rq_merger_commits(rq_merger *m, rq_error *err)
{
	if (m->commits)
		return m->commits;
	m->own_commits = rq_cobj_cache_new(m->config.algo, commit_read, &m->config.reader);
	if (!m->own_commits)
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return m->commits = m->own_commits;
}

const rq_merge_stats *rq_merger_stats(const rq_merger *m)
{
	rq_merger *mm = (rq_merger *)m;
	rq_treemerge_memory_stats(&m->memory, &mm->stats.scores_computed, &mm->stats.scores_reused);
	return &m->stats;
}

/* The kind of a conflict libgit2's index records, from its stages. */
static rq_conflict_kind index_conflict_kind(const git_index_entry *anc, const git_index_entry *our,
					    const git_index_entry *their)
{
	if (anc && our && their)
		return RQ_CONFLICT_CONTENT;
	if (!anc && our && their)
		return RQ_CONFLICT_ADD_ADD;
	if (anc && (our || their))
		return RQ_CONFLICT_MODIFY_DELETE;
	return RQ_CONFLICT_RENAME;
}

/* The conflicts of libgit2's merged index, in index order. */
static int collect_conflicts(git_index *index, rq_conflicts *conflicts, rq_error *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *our, *their;
	int rc;

	if (git_index_conflict_iterator_new(&it, index) < 0)
		return rq_error_git(err, "cannot list conflicts");
	while ((rc = git_index_conflict_next(&anc, &our, &their, it)) == 0) {
		const char *path = our ? our->path : their ? their->path : anc->path;
		if (rq_conflicts_add(conflicts, path, index_conflict_kind(anc, our, their)) < 0) {
			git_index_conflict_iterator_free(it);
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
	}
	git_index_conflict_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return rq_error_git(err, "cannot list conflicts");
	return 0;
}

/*
 * The fallback is libgit2's, which has no SHA-256: in another format the
 * pick fails with the state the tree merge met, never a misread.
 * 0 (SHA-1 ids into g[3], absent base NULL), or -1 with err set.
 */
static int fallback_ids(rq_merger *m, const rq_oid *const ids[3], git_oid g[3], rq_error *err)
{
	const rq_oid_algo *algo = m->config.algo;

	for (int i = 0; i < 3; i++)
		if (ids[i] && rq_oid_to_git(&g[i], ids[i], algo) < 0)
			return rq_error_set(
			    err, RQ_E_UNSUPPORTED_REPO,
			    "cannot merge in a %s repository: the tree merge hands this pick to "
			    "libgit2's merge (%s), which has no %s",
			    algo->name, m->memory.fall_back_why ? m->memory.fall_back_why : "",
			    algo->name);
	return 0;
}

/* libgit2's merge, for the picks the tree merge hands back (see the list at
 * the top of this file). Returns 0 clean, 1 conflict, -1 error. */
static int fallback_merge(rq_merger *m, const rq_oid *base, const rq_oid *ours,
			  const rq_oid *theirs, rq_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	const rq_oid *ids[3] = {base, ours, theirs};
	git_tree *tb = NULL, *to = NULL, *tt = NULL;
	git_index *index = NULL;
	git_oid g[3], merged;
	int rc = -1;

	m->stats.fallback++;
	if (fallback_ids(m, ids, g, err) < 0)
		return -1;
	if ((base && git_tree_lookup(&tb, m->repo, &g[0]) < 0) ||
	    git_tree_lookup(&to, m->repo, &g[1]) < 0 || git_tree_lookup(&tt, m->repo, &g[2]) < 0) {
		rq_error_git(err, "cannot read tree");
		goto out;
	}
	if (git_merge_trees(&index, m->repo, tb, to, tt, &m->fallback_opts) < 0) {
		rq_error_git(err, "merge failed");
		goto out;
	}
	if (git_index_has_conflicts(index)) {
		rc = collect_conflicts(index, conflicts, err) < 0 ? -1 : 1;
		goto out;
	}
	if (git_index_write_tree_to(&merged, index, m->repo) < 0) {
		rq_error_git(err, "cannot write merged tree");
		goto out;
	}
	rq_oid_from_git(out, &merged);
	rc = 0;
out:
	git_index_free(index);
	git_tree_free(tb);
	git_tree_free(to);
	git_tree_free(tt);
	return rc;
}

/*
 * The trivial cases, answered from the ids alone, in merge-ort's terms: a
 * side that did not change the tree takes the other side's tree (merge-ort
 * then opens the top level only: rq_canon_root). *out set and 1 when the
 * pick is one of them, else 0. Both sides alike but not the base is no
 * such case: merge-ort opens every directory the sides changed and writes
 * it again (with canonical modes), which the full merge does too.
 */
static int trivial_result(const rq_oid_algo *algo, const rq_oid *base, const rq_oid *ours,
			  const rq_oid *theirs, rq_oid *out)
{
	if (!base) /* a root commit: picked against the empty tree */
		base = &algo->empty_tree;
	if (rq_oid_eq(base, theirs)) {
		*out = *ours; /* the pick changes nothing */
		return 1;
	}
	if (rq_oid_eq(base, ours)) {
		*out = *theirs; /* ours is the base */
		return 1;
	}
	return 0;
}

void rq_merger_forget_renames(rq_merger *m)
{
	if (m && m->memory.renames)
		rq_rename_cache_chain_break(m->memory.renames);
}

/* A tree merge of the merger with mode (NULL: a pick), through the
 * trivial cases and the fallback as a pick goes. */
static int merge_with(rq_merger *m, const rq_ort_mode *mode, const rq_oid *base, const rq_oid *ours,
		      const rq_oid *theirs, rq_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	git_odb *odb = NULL;
	int rc;

	if (rq_merger_sync(m, err) < 0)
		return -1;
	odb = m->odb;
	if (trivial_result(m->config.algo, base, ours, theirs, out)) {
		m->stats.trivial++;
		rc = rq_canon_root(odb, m->config.reader, m->config.algo, out, out, err);
		if (rc < 0)
			return -1;
		rq_treemerge_trivial(&m->memory, base, ours, theirs, out);
		return 0;
	}
	m->stats.full++;
	rc = rq_treemerge(m->repo, odb, &m->config, &m->memory, mode, base, ours, theirs, out,
			  conflicts, err);
	if (rc != RQ_TREEMERGE_FALL_BACK)
		return rc;
	if (mode && !mode->accept &&
	    ((mode->base_marked && mode->base_marked->len) ||
	     (mode->ours_marked && mode->ours_marked->len))) {
		/* libgit2 would split conflict hunks: the resolution cannot be
		 * carried with it */
		m->stats.fallback++;
		if (rq_conflicts_add(conflicts, "", RQ_CONFLICT_RESOLUTION) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return 1;
	}
	/* it knows nothing of remembered renames */
	rc = fallback_merge(m, base, ours, theirs, out, conflicts, err);
	return rc == 1 && mode && mode->accept ? RQ_MERGE_NO_TREE : rc;
}

int rq_merger_merge(rq_merger *m, const rq_oid *base, const rq_oid *ours, const rq_oid *theirs,
		    rq_oid *out, rq_conflicts *conflicts, rq_error *err)
{
	return merge_with(m, NULL, base, ours, theirs, out, conflicts, err);
}

static void set_marks(rq_ort_mode *mode, const rq_merge_marks *marks)
{
	mode->marks.ours = marks->ours;
	mode->marks.base = marks->base;
	mode->marks.theirs = marks->theirs;
	mode->marks.size = marks->size;
}

int rq_merger_merge_accept(rq_merger *m, const rq_oid *base, const rq_oid *ours,
			   const rq_oid *theirs, const rq_merge_marks *marks, rq_oid *out,
			   rq_conflicts *conflicts, rq_conflict_details *details, rq_error *err)
{
	rq_ort_mode mode;
	size_t n0 = conflicts->n;
	int rc;

	memset(&mode, 0, sizeof(mode));
	mode.accept = 1;
	set_marks(&mode, marks);
	mode.accepted = details;
	/* a remerge's merges stand alone: no chain of renames before or after */
	rq_merger_forget_renames(m);
	rc = merge_with(m, &mode, base, ours, theirs, out, conflicts, err);
	rq_merger_forget_renames(m);
	if (rc == RQ_MERGE_NO_TREE || rc < 0)
		details->n = details->n < n0 ? details->n : n0;
	return rc;
}

int rq_merger_merge_remerge(rq_merger *m, const rq_oid *base, const rq_oid *ours,
			    const rq_oid *theirs, const rq_merge_marks *marks,
			    const rq_oidmap *base_marked, const rq_oidmap *ours_marked, rq_oid *out,
			    rq_conflicts *conflicts, rq_error *err)
{
	rq_ort_mode mode;
	int rc;

	memset(&mode, 0, sizeof(mode));
	set_marks(&mode, marks);
	mode.base_marked = base_marked;
	mode.ours_marked = ours_marked;
	rq_merger_forget_renames(m);
	rc = merge_with(m, &mode, base, ours, theirs, out, conflicts, err);
	rq_merger_forget_renames(m);
	return rc;
}
