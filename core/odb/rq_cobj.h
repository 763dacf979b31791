/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cobj: replayq's reader of commits and tags, at the width of the
 * repository's object format (core/odb, see rq_odb.h for the family), in
 * place of libgit2's git_commit and git_tag (20-byte ids only).
 *
 * A commit is parsed as git's parse_commit_buffer parses it: a first line
 * `tree <hexsz digits>` (else git's "bogus commit object <id>", or "bad
 * tree pointer in commit <id>" when the digits are no id), any number of
 * `parent <hexsz digits>` lines (a damaged one: "bad parents in commit
 * <id>"), and the committer date as git's parse_commit_date reads it: 0
 * unless an author line comes first and a committer line next, the number
 * after the committer line's last '>'. Everything else is kept as it is
 * written for the callers (the walk's filters, the commit writer, the
 * outcome): the first author and committer lines, the other headers
 * (encoding, gpgsig, gpgsig-sha256, mergetag, anything), the message.
 * Hex digits are read as git's get_oid_hex reads them (either case).
 *
 * A tag gives its `object` and `type` lines (git's parse_tag_buffer),
 * which peeling follows (rq_cobj_peel).
 *
 * The cache holds the commits of one job, parsed once each, their bytes
 * and parents in an arena of large blocks and an index by id (rq_hindex):
 * no allocation per commit, pointers that stay valid until the cache is
 * freed. It reads through a callback (rq_cobj_read_odb over rq_odb_read,
 * or anything else in a test), and takes grafts through another.
 */
#ifndef RQ_COBJ_H
#define RQ_COBJ_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_reach.h"

/* A commit as parsed; the pointers are into its bytes (raw). */
typedef struct rq_cobj_commit {
	rq_oid id;
	rq_oid tree;
	const rq_oid *parents;
	size_t nparents;
	uint64_t date; /* the committer date as git's walk reads it (0: none) */
	int tz;	       /* the committer line's zone as written (-0130: -130; 0: none) */
	const char *raw;
	size_t len;
	/* the value of the first author and committer lines (after "author ");
	 * NULL when there is none */
	const char *author, *committer;
	size_t author_len, committer_len;
	/* the header lines after the parents, up to the blank line, as written */
	const char *headers;
	size_t headers_len;
	/* the encoding header's value (NULL: none) */
	const char *encoding;
	size_t encoding_len;
	/* after the blank line ("" when there is none) */
	const char *message;
	size_t message_len;
} rq_cobj_commit;

/*
 * Parse commit id's bytes raw[0..len) (they must outlive *out) in the
 * format algo; the parents' ids go to alloc(actx, n * sizeof(rq_oid))
 * (NULL alloc, or no parent: none needed). 0, or -1 with err set:
 * RQ_E_CORRUPT_OBJECT with git's words, RQ_E_NOMEM.
 */
int rq_cobj_parse_commit(rq_cobj_commit *out, const rq_oid_algo *algo, const rq_oid *id,
			 const char *raw, size_t len, rq_odb_read_alloc alloc, void *actx,
			 rq_error *err);

/* The value of the first header line `key value` among c's headers (its
 * continuation lines, which start with a space, included), *len its
 * length; NULL when none. */
const char *rq_cobj_header(const rq_cobj_commit *c, const char *key, size_t *len);
/* git's parse_commit_date() over a commit's text from the line after its
 * parents to tail: the author line must come first and the committer line
 * next; the date after the committer line's last '>', read as strtoumax
 * reads it (a sign wraps, an overflow saturates); anything else 0. */
uint64_t rq_cobj_commit_date(const char *after_parents, const char *tail);
/* A date's digits in [p, e) read as strtoumax reads them (git's
 * parse_timestamp): a sign wraps, an overflow saturates. */
uint64_t rq_cobj_timestamp(const char *p, const char *e);

/* A tag's `object` and `type` lines. */
typedef struct rq_cobj_tag {
	rq_oid object;
	git_object_t type; /* GIT_OBJECT_INVALID: a type git does not know */
} rq_cobj_tag;

/* Parse tag id's bytes (git's parse_tag_buffer): 0, or -1 with err set
 * (RQ_E_CORRUPT_OBJECT: "bad tag object <id>", "unknown tag type '<t>' in
 * <id>"). */
int rq_cobj_parse_tag(rq_cobj_tag *out, const rq_oid_algo *algo, const rq_oid *id, const char *raw,
		      size_t len, rq_error *err);

/* Read object id into alloc(actx, len + 1) (as rq_odb_read_into: 0,
 * GIT_ENOTFOUND, or an error with libgit2's last error set). */
typedef int (*rq_cobj_read_fn)(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
			       rq_odb_read_obj *out);
/* The read of rq_odb_read (ctx: an rq_odb_read *). */
int rq_cobj_read_odb(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
		     rq_odb_read_obj *out);

typedef struct rq_cobj_cache rq_cobj_cache;

/* A cache of commits in the format algo, read through read(ctx, ...).
 * NULL: out of memory. */
rq_cobj_cache *rq_cobj_cache_new(const rq_oid_algo *algo, rq_cobj_read_fn read, void *ctx);
void rq_cobj_cache_free(rq_cobj_cache *c);
/*
 * Grafts (git's commit_graft: the info/grafts file, a shallow clone's
 * boundary): fn(ctx, id, &parents) gives -1 when commit id has none, else
 * the number of parents that replace its own (0: a shallow boundary) with
 * *parents. A commit's own parent lines are checked all the same, as git
 * checks them. Before the first rq_cobj_get.
 */
typedef long (*rq_cobj_graft_fn)(void *ctx, const rq_oid *id, const rq_oid **parents);
void rq_cobj_cache_grafts(rq_cobj_cache *c, rq_cobj_graft_fn fn, void *ctx);
/* The commits it holds. */
size_t rq_cobj_cache_count(const rq_cobj_cache *c);

/*
 * Commit id, read and parsed the first time it is asked for: 0 with *out
 * (valid until the cache is freed); -1 with err set: RQ_E_BAD_REVISION
 * "bad object <id>" (missing), "object <id> is a <type>, not a commit",
 * RQ_E_CORRUPT_OBJECT (damaged, or git's parse errors), RQ_E_NOMEM.
 */
int rq_cobj_get(rq_cobj_cache *c, const rq_oid *id, const rq_cobj_commit **out, rq_error *err);

/*
 * Peel id (a tag, a chain of tags, a commit, a tree) to an object of type
 * want (GIT_OBJECT_COMMIT or GIT_OBJECT_TREE; a commit peels to its tree),
 * as git's peel_to_type: 0 with *out; -1 with err set: RQ_E_BAD_REVISION
 * "<name>: expected <want> type, but the object dereferences to <type>
 * type" (name: how the caller names id), "bad object <id>", or a damaged
 * object's error.
 */
int rq_cobj_peel(rq_cobj_cache *c, const rq_oid *id, git_object_t want, const char *name,
		 rq_oid *out, rq_error *err);

/* rq_reach's reader over cache c (its commits' dates and parents). */
rq_reach_reader rq_cobj_reach_reader(rq_cobj_cache *c);

#endif
