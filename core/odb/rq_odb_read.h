/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_read: objects read from an rq_odb database (rq_odb_new,
 * rq_odb_install, with the memory store rq_odb_tmpdir puts on it) without
 * libgit2's object API, whose ids are 20 bytes: ids are rq_oid, of the
 * width the database's packs and loose objects were opened with (core/odb,
 * see rq_odb.h for the family).
 *
 * The backends are asked in libgit2's order (priority, then as added: the
 * memory store, the view, the packs, the loose objects, alternates), so a
 * read gives what git_odb_read gives, with the same errors (a damaged
 * object: RQ_ERROR_GIT_CORRUPT, "packed object <id> (stored in <dir>) is
 * corrupt" or "loose object ... is corrupt"; none: GIT_ENOTFOUND, "object
 * not found - no match for id (<hex>)"), the empty tree known without
 * being stored, and a miss listing the packs again once. What it does not
 * do: libgit2's object cache (callers keep what they read: rq_cobj), and
 * the view's rewriting of commits libgit2 cannot parse (rq_cobj parses
 * them as git does). The view's replace refs are applied (the bytes of
 * git's read_object, as rq_odb_view_read_stored gives them); its grafts
 * are a commit parser's to apply, as in git.
 *
 * Errors are libgit2's conventions, so callers keep theirs
 * (rq_error_git): 0, GIT_ENOTFOUND, GIT_EAMBIGUOUS, GIT_ERROR with
 * libgit2's last error set.
 *
 * A packed object is read into the buffer its inflation made (no copy);
 * rq_odb_read_into hands it to the caller's allocator instead (an arena).
 */
#ifndef RQ_ODB_READ_H
#define RQ_ODB_READ_H

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <stddef.h>

#include "rq_error.h"
#include "rq_oid.h"
#include "rq_tree.h"

typedef struct rq_odb_read rq_odb_read;

/* An object read. data: len bytes and a NUL after them. */
typedef struct rq_odb_read_obj {
	unsigned char *data;
	size_t len;
	git_object_t type;
	git_odb_backend *owner; /* (who allocated data: NULL malloc) */
} rq_odb_read_obj;

/* Where rq_odb_read_into puts an object: n bytes, NULL out of memory. */
typedef void *(*rq_odb_read_alloc)(void *ctx, size_t n);

/*
 * A reader over odb (not owned: it must outlive the reader). The
 * backends are looked at again when their number changes (the memory
 * store added after). 0, or -1 out of memory (set).
 */
int rq_odb_read_open(rq_odb_read **out, git_odb *odb);
void rq_odb_read_free(rq_odb_read *rd);
/* The database's object format: its packs' (the first), else its loose
 * objects', else SHA-1 (any other odb). */
const rq_oid_algo *rq_odb_read_algo(rq_odb_read *rd);

/* Object id: 0 with *out (free with rq_odb_read_obj_free), or an error
 * as above. */
int rq_odb_read_object(rq_odb_read *rd, const rq_oid *id, rq_odb_read_obj *out);
void rq_odb_read_obj_free(rq_odb_read_obj *o);
/* The same into alloc(ctx, len + 1), the caller's (out->owner NULL;
 * not to be freed with rq_odb_read_obj_free). */
int rq_odb_read_into(rq_odb_read *rd, const rq_oid *id, rq_odb_read_alloc alloc, void *ctx,
		     rq_odb_read_obj *out);
/* Its type and size: 0, or an error as a read (git_odb_read_header). */
int rq_odb_read_header(rq_odb_read *rd, const rq_oid *id, size_t *len, git_object_t *type);
/* 1 when the database holds id, else 0 (git_odb_exists: the zero id
 * never, a miss lists the packs again). */
int rq_odb_read_exists(rq_odb_read *rd, const rq_oid *id);
/*
 * The one object whose id starts with the first nhex digits of prefix
 * (rq_oid_parse_prefix's): 0 with *full; GIT_EAMBIGUOUS with git's
 * "short object ID <p> is ambiguous"; GIT_ENOTFOUND ("no match for id
 * prefix (<p>)"); fewer than RQ_OID_MIN_PREFIX digits: GIT_EAMBIGUOUS
 * "prefix length too short" (libgit2's). nhex = hexsz: the id itself,
 * when held.
 */
int rq_odb_read_prefix(rq_odb_read *rd, const rq_oid *prefix, size_t nhex, rq_oid *full);

/* Trees read through *rd (core/base/rq_tree.h's rq_tree_open_with): at
 * the reader's width, with rq_odb_read_object's errors. rd is followed
 * where it points at each read (a caller that reopens its reader keeps
 * the same rq_tree_reader); it must outlive the trees opened. The last
 * 32 trees read (each up to 256 KiB) are kept by the reader and handed
 * out again without a read (as libgit2's object cache kept them). */
rq_tree_reader rq_odb_read_trees(rq_odb_read **rd);

/*
 * Internal: what the backends of rq_odb's database give this module
 * (defined in rq_odb.c, rq_odb_mem.c and rq_odb_view.c, next to the
 * backends; they move to those modules' headers once the rq_oid API of
 * rq_odb.h is merged).
 */
struct rq_odb_packread;
/* The pack reader of b when it is an rq_odb packs backend, else NULL. */
struct rq_odb_packread *rq_odb_packs_reader(const git_odb_backend *b);
/* What a read of pack reader b's failed with (rc < 0:
 * RQ_ODB_PACKREAD_DAMAGED, _BADPACK, -1) as the packs backend says it:
 * GIT_ERROR with git's words set. */
int rq_odb_packs_failed(const git_odb_backend *b, const rq_oid *id, int rc);
/* Object id as libgit2's pack backend reads what our reader leaves (an
 * index of version 1; SHA-1 only, else GIT_ENOTFOUND): the content
 * (from git_odb_backend_data_alloc) or, data NULL, its type and size. 0,
 * GIT_ENOTFOUND, GIT_ERROR. */
int rq_odb_packs_fallback(git_odb_backend *b, const rq_oid *id, void **data, size_t *len,
			  git_object_t *type);
/* rq_odb_new in the object format algo (NULL: SHA-1): its packs, loose
 * objects and view at that width, libgit2's callbacks refused when it is
 * not SHA-1 (rq_odb_read_refused). What rq_odb_opts.algo is given to. */
struct rq_odb_opts;
int rq_odb_new_at(git_odb **out, git_repository *repo, const struct rq_odb_opts *opts,
		  const rq_oid_algo *algo, rq_error *err);
/* The tripwire of the backends' libgit2 callbacks: 0 when algo is SHA-1
 * (or NULL), else GIT_ERROR with "libgit2 has no SHA-256: <what>" set. */
int rq_odb_read_refused(const rq_oid_algo *algo, const char *what);
/* When b is a memory store: its object id copied (malloc'd, NUL after
 * it) or only its type and size (data NULL): 1 held, 0 not, -1 out of
 * memory or unreadable (set). -2: b is no memory store. */
int rq_odb_mem_backend_read(git_odb_backend *b, const rq_oid *id, void **data, size_t *len,
			    git_object_t *type);
/* When b is a memory store: its one object whose id starts with the
 * nhex digits of prefix: 1 with *full, 0 none, GIT_EAMBIGUOUS. -2: no
 * memory store. */
int rq_odb_mem_backend_prefix(git_odb_backend *b, const rq_oid *prefix, size_t nhex, rq_oid *full);
/* When b is rq_odb_view's backend: 1 with *to the id a read of id gives
 * (replace refs followed), or -1 with git's "replace depth too high for
 * object <id>" set. 0: b is no view. */
int rq_odb_view_redirect(const git_odb_backend *b, const rq_oid *id, rq_oid *to);

#endif
