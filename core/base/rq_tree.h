/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_tree: a tree object's entries, read as git reads them (tree-walk.c's
 * decode_tree_entry), for the walks over trees that must not depend on
 * libgit2's tree parser: the tree merge's walk (core/merge/ort) and the
 * pathspec filter (core/revs/rq_revfilter.c).
 *
 * Why not git_tree_lookup(): libgit2 1.5 keeps a name's length in 16 bits
 * and refuses a tree with a longer name ("can't parse filename"), where git
 * takes names of any length; and it reports a damaged tree as any libgit2
 * error. Here every entry is checked when the tree is opened, with git's
 * words for what is wrong: "too-short tree object", "malformed mode in tree
 * entry", "empty filename in tree entry" (RQ_E_CORRUPT_OBJECT), and modes
 * are made canonical as git's canon_mode() makes them (a regular file is
 * 100644 or 100755, anything of no known kind a gitlink).
 *
 * The entries point into the object's data: they live as long as the
 * rq_tree is open. Ids are of the repository's object format (rq_oid.h):
 * 20 bytes for SHA-1, 32 for SHA-256; each width has its own inline copy.
 */
#ifndef RQ_TREE_H
#define RQ_TREE_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_oid.h"

/* git's default core.maxTreeDepth (git 2.55): a walk that must open a
 * directory nested deeper fails (RQ_E_TREE_TOO_DEEP). */
#define RQ_TREE_MAX_DEPTH 2048

/*
 * Where rq_tree_open_with reads a tree (core/base reads no object database
 * itself: core/odb gives one over rq_odb_read, rq_odb_read_trees). read: object
 * id's bytes (*data, *len, *type) and what release needs to free them
 * (*mem, *owner): 0, or < 0 with libgit2's last error set (GIT_ENOTFOUND,
 * GIT_ERROR).
 */
typedef struct rq_tree_reader {
	int (*read)(void *ctx, const rq_oid *id, const unsigned char **data, size_t *len,
		    git_object_t *type, void **mem, void **owner);
	void (*release)(void *ctx, void *mem, void *owner);
	void *ctx;
} rq_tree_reader;

typedef struct rq_tree {
	const rq_tree_reader *rd; /* who read it (NULL: opened from data) */
	void *mem, *owner;	  /* what rd->release frees */
	const unsigned char *data;
	size_t size;
	size_t n;     /* entries */
	size_t rawsz; /* the width of its ids (the repository's format) */
} rq_tree;

typedef struct rq_tree_entry {
	const char *name; /* NUL-terminated, inside the object */
	size_t len;
	uint32_t mode; /* canonical */
	rq_oid id;
} rq_tree_entry;

/* git's canon_mode(). */
uint32_t rq_tree_canon_mode(uint32_t mode);

/* git's base_name_compare(), the order of a tree's entries: names compare
 * bytewise, and a directory (a_dir, b_dir) as if its name ended in '/'.
 * <0, 0 or >0. */
int rq_tree_name_cmp(const char *a, size_t alen, int a_dir, const char *b, size_t blen, int b_dir);

/*
 * Read tree id through rd (which must outlive t) and check all its
 * entries, whose ids are of algo's width ("<mode> <name>\0<rawsz-byte
 * id>"). 0, or -1 with err set (RQ_E_CORRUPT_OBJECT for a damaged tree or
 * an object that is no tree; "cannot read tree: <libgit2's last error>"
 * for a read that failed); t is closed then. Every reader of replayq's
 * goes through core/odb/rq_odb_read.h (rq_odb_read_trees), at either
 * width: no tree is read through libgit2's object database (20-byte ids).
 */
int rq_tree_open_with(rq_tree *t, const rq_tree_reader *rd, const rq_oid_algo *algo,
		      const rq_oid *id, rq_error *err);

/* The same over a tree's bytes already read (data, size bytes; kept by the
 * caller as long as t is open). */
int rq_tree_open_data(rq_tree *t, const rq_oid_algo *algo, const void *data, size_t size,
		      rq_error *err);

/* The entry at *pos (start at 0) into e, *pos moved past it: 1, or 0 at
 * the end. */
int rq_tree_next(const rq_tree *t, size_t *pos, rq_tree_entry *e);

/* NULL-safe; t may be reused after. */
void rq_tree_close(rq_tree *t);

#endif
