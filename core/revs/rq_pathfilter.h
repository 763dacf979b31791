/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pathfilter: does a commit change a path the pathspecs after "--"
 * name? The tree comparison behind rq_revfilter's pathspecs, walked the
 * way git's tree diff walks it for rev-list's TREESAME test
 * (tree-diff.c with revision.c's "quick" pruning options):
 *
 *  - the two trees are compared name by name in git's tree order, going
 *    into a directory only when it differs and a pathspec could name
 *    something in it (below its part without wildcards);
 *  - the first change of a file (added, removed, changed, or its mode) at
 *    a path a pathspec matches answers "changed" at once;
 *  - a directory nested deeper than core.maxTreeDepth (2048) is an error
 *    when the walk has to open it, as in git ("exceeded maximum allowed
 *    tree depth", RQ_E_TREE_TOO_DEEP);
 *  - trees are read as git reads them (rq_tree: names of any length),
 *    through replayq's reader (rq_odb_read), at the repository's width;
 *    directories wait on a stack of our own, never the C stack.
 *
 * A path matches as libgit2's pathspecs match (git_pathspec: a path, a
 * directory prefix, or a glob whose '*' crosses '/'), which is what the
 * replay has always used.
 */
#ifndef RQ_PATHFILTER_H
#define RQ_PATHFILTER_H

#include <git2.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_odb_read.h"
#include "rq_oid.h"

typedef struct rq_pathfilter rq_pathfilter;

/* A filter for the n pathspecs (copied). 0, or -1 with err set. */
int rq_pathfilter_new(rq_pathfilter **out, char *const *paths, size_t n, rq_error *err);
void rq_pathfilter_free(rq_pathfilter *pf);

/*
 * 1 when new_tree differs from old_tree (NULL: the empty tree) in a path
 * the pathspecs name, 0 when not, -1 with err set. The trees are read
 * through rd (the job's reader, rq_commits_reader: either object format,
 * algo's; NULL: the database was let go of, an error). repo's
 * core.maxTreeDepth is read at the first call.
 */
int rq_pathfilter_changes(rq_pathfilter *pf, git_repository *repo, rq_odb_read *rd,
			  const rq_oid_algo *algo, const rq_oid *old_tree, const rq_oid *new_tree,
			  rq_error *err);

#endif
