/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revname: one revision name resolved the way git's object-name.c
 * resolves it, for rq_revs (which parses the arguments: ranges,
 * shorthands, ref sets, options): a ref name by git's DWIM rules (X,
 * refs/X, refs/tags/X, refs/heads/X, refs/remotes/X,
 * refs/remotes/X/HEAD; two matches are ambiguous), a full or abbreviated
 * object id, "HEAD"/"@", the @{...} forms and ":/text", then "~N", "^N"
 * and "^{...}" suffixes, peeled to a commit; with the names of all refs
 * read once when many names are to be resolved. The name is read by
 * rq_revparse (ids at the repository's width); the @{...} forms and the
 * message searches are looked up by rq_revat.
 */
#ifndef RQ_REVNAME_H
#define RQ_REVNAME_H

#include <git2.h>
#include <stddef.h>

#include "rq_commits.h"
#include "rq_error.h"
#include "rq_hindex.h"
#include "rq_oid.h"

/*
 * The names of all refs, read once when many names are to be resolved: a
 * DWIM candidate under refs/ that is not in the set needs no lookup. (Six
 * rules per name, each a stat of a loose ref and a check of packed-refs,
 * cost ~80 us per name; with 200 branches in one replay that was 15 ms.)
 */
#define RQ_REVNAME_REFS_MIN 16 /* names to resolve worth reading the set for */

typedef struct rq_revname_ref {
	char *name;
	int direct; /* a direct ref: oid is its target */
	rq_oid oid;
} rq_revname_ref;

typedef struct rq_revname_refs {
	rq_revname_ref *v; /* n names, cap allocated */
	size_t n, cap;
	rq_hindex index; /* over v by name */
} rq_revname_refs;

/* The set of repo's refs into *rs: 0, or -1: no set (the caller then
 * looks every candidate up; nothing to free). */
int rq_revname_refs_load(git_repository *repo, rq_revname_refs *rs);
void rq_revname_refs_free(rq_revname_refs *rs);

/* DWIM name to refs (known: the set of refs, or NULL): as rq_revs_dwim_ref.
 * A broken ref or a symbolic ref to nothing among the candidates is
 * skipped with git's warning (rq_refdb_warn: "ignoring broken ref <ref>",
 * "ignoring dangling symref <ref>"), as refs.c's expand_ref does. */
int rq_revname_dwim(git_repository *repo, const rq_revname_refs *known, const char *name,
		    char **fullname, rq_oid *oid, rq_error *err);
/* The same without the warnings: git's dwim_log, for "@{...}" forms. */
int rq_revname_dwim_log(git_repository *repo, const rq_revname_refs *known, const char *name,
			char **fullname, rq_error *err);

/* The commit expr (no range) names into *out (known: the set of refs, or
 * NULL; algo: the repository's object format, ids are read at its
 * width): 0, or -1 with err set. *named (may be NULL): whether expr was
 * looked up as a ref, and then *fullref (may be NULL) the ref. commits:
 * the job's commits, through which every object is read (ids checked,
 * abbreviations, suffixes, peeling). */
int rq_revname_resolve(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		       const rq_revname_refs *known, const char *expr, rq_oid *out, char **fullref,
		       int *named, rq_error *err);

/*
 * The tree expr names, as git reads attr.tree and GIT_ATTR_SOURCE
 * (attr.c: repo_get_oid_treeish, then the tree under it): expr resolved
 * as rq_revname_resolve resolves a name (refs, ids, suffixes; every
 * object read through commits, at algo's width), or "<rev>:<path>" (the
 * entry at path in rev's tree), then peeled to a tree (tags followed, a
 * commit's tree). 0 with *out; 1 when expr names an object with no tree
 * under it (git then reads no attributes from it: no error); -1 with err
 * set (RQ_E_BAD_REVISION: a name that names nothing).
 */
int rq_revname_tree(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		    const char *expr, rq_oid *out, rq_error *err);

/* git's error for a name that resolves to nothing (RQ_E_BAD_REVISION),
 * unless a damaged object was read: -1. */
int rq_revname_unknown(rq_error *err, const char *expr);

#endif
