/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_attr: the merge driver of a path, from the attributes git reads for
 * it (attr.c, and ll-merge.c's choice of driver), for the tree merge's
 * content merges (rq_ort_content.c).
 *
 * Where attributes come from, as upstream git replay reads them (checked
 * against git 2.55 in integration/hostile_repos), highest first:
 *  - $GIT_COMMON_DIR/info/attributes;
 *  - the .gitattributes files of the path's directories, deepest first:
 *    from the tree GIT_ATTR_SOURCE or attr.tree names when one does
 *    (GIT_ATTR_SOURCE must name an object: "bad --attr-source or
 *    GIT_ATTR_SOURCE"; a bad attr.tree is ignored; an object with no tree
 *    under it gives none; the name is read by core/revs' rq_revname_tree,
 *    at either object format), else from the working
 *    tree of a non-bare repository (a symbolic link is not followed, as
 *    git does not; the index is not read, as git replay does not); a bare
 *    repository has none (git no longer reads HEAD's);
 *  - core.attributesFile (default $XDG_CONFIG_HOME/git/attributes or
 *    ~/.config/git/attributes), then /etc/gitattributes unless
 *    GIT_ATTR_NOSYSTEM: only without a root, i.e. not for a worker's job,
 *    whose merge follows its repository alone;
 *  - the built-in macro "binary" (-diff -merge -text).
 * Patterns, macros ("[attr]name ...", not in a subdirectory's file), "!",
 * "-" and "=value" mean what they mean to git; lines longer than 2048
 * bytes and files larger than 100 MB are skipped, as git skips them. With
 * a root every file must resolve inside it.
 *
 * The driver (ll-merge.c's find_ll_merge_driver): "merge" set is text,
 * unset ("-merge", "binary") is binary, unspecified is merge.default or
 * text, a name is the driver the configuration defines under
 * merge.<name>.* first, else the built-in of that name (text, binary,
 * union), else text.
 */
#ifndef RQ_ATTR_H
#define RQ_ATTR_H

#include <git2.h>

#include "rq_error.h"
#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_tree.h"

typedef enum {
	RQ_ATTR_DRIVER_TEXT,	  /* the 3-way line merge */
	RQ_ATTR_DRIVER_BINARY,	  /* keep side 1, conflict */
	RQ_ATTR_DRIVER_UNION,	  /* the line merge, both sides' lines where they clash */
	RQ_ATTR_DRIVER_EXTERNAL,  /* merge.<name>.driver: a command (never run) */
	RQ_ATTR_DRIVER_NO_COMMAND /* merge.<name>.* without a driver: git's error */
} rq_attr_driver;

typedef struct rq_attr rq_attr;

/* The attribute sources of repo (read when first needed), whose object
 * format is algo, its objects read through *reader and trees (the
 * merger's, rq_ortodb.h; they must outlive a); root: see above (NULL:
 * none). 0, or -1 with err set. */
int rq_attr_new(rq_attr **out, git_repository *repo, const rq_oid_algo *algo,
		rq_odb_read *const *reader, const rq_tree_reader *trees, const char *root,
		rq_error *err);
void rq_attr_free(rq_attr *a);

/*
 * The merge driver for path; *name: the driver's name (NULL for the
 * default), valid while a lives. 0, or -1 with err set (an attribute file
 * that leads outside the root, GIT_ATTR_SOURCE naming no tree, out of
 * memory).
 */
int rq_attr_merge_driver(rq_attr *a, const char *path, rq_attr_driver *out, const char **name,
			 rq_error *err);

#endif
