/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_canon: tree entry modes as git reads them.
 *
 * git reads every tree entry's mode through canon_mode() (tree-walk.c;
 * here rq_tree_canon_mode, core/base/rq_tree.h):
 * a regular file is 100644, or 100755 when its owner may execute it
 * (100664 from 2005's trees, 100600, 100775 ...); a symlink 120000; a
 * directory 40000; anything else a gitlink, 160000. merge-ort writes
 * every directory it opens from those modes, so a tree with other modes
 * (or a zero-padded "040000") comes out of a merge written again. A
 * directory merge-ort takes whole keeps its bytes.
 */
#ifndef RQ_CANON_H
#define RQ_CANON_H

#include <git2.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb_read.h"
#include "rq_oid.h"

/*
 * The top-level tree a merge-ort merge that opens only the top level
 * writes for tree: its entries with their modes written canonically.
 * 0: tree is written so already (*out = *tree); 1: *out is the tree
 * written again (into odb); -1: error. Ids of algo's format.
 */
int rq_canon_root(git_odb *odb, rq_odb_read *rd, const rq_oid_algo *algo, const rq_oid *tree,
		  rq_oid *out, rq_error *err);

#endif
