/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb: the object database a replay reads from, built by replayq rather
 * than left to libgit2's defaults.
 *
 * core/odb is a replay's object store, one family of modules:
 *   rq_odb         the database a replay reads (this file): the packs,
 *                  the loose objects, alternates under a policy;
 *   rq_odb_loose   the loose objects, read and checked;
 *   rq_odb_mem     the new objects of a replay, held in memory: a backend
 *                  of that database that takes every write, over
 *   rq_odb_store   its objects, shared with
 *   rq_odb_compress the thread that encodes them as they come, and
 *   rq_odb_part    the part files a forked child hands them over in;
 *   rq_odb_tmpdir  a replay's temporary object directory: it sets the two
 *                  above up for the repository, takes a parallel replay's
 *                  part files, and at the end turns the new objects into
 *                  one pack in objects/pack (git's tmp-objdir, in spirit);
 *   rq_odb_pack    the pack format: entries encoded (whole or as deltas)
 *                  and read back, an index read;
 *   rq_odb_packwrite the pack and its index written;
 *   rq_odb_packread  the packs' entries read (delta chains, a cache of
 *                  bases), over
 *   rq_odb_packset the set of a directory's packs and where an object is
 *                  among them, without work per pack, with
 *   rq_odb_midx    git's multi-pack-index, read, and
 *   rq_odb_packtab replayq's table of the small packs' objects;
 *   rq_odb_own     what replayq keeps in objects/replayq (its packs'
 *                  marks), and the .keep of a pack on its way in;
 *   rq_odb_repack  replayq's packs consolidated geometrically;
 *   rq_sha1        SHA-1, for the pack's and the index's checksums;
 *   rq_hash        an object's id and a file's checksum in either object
 *                  format (SHA-1, or SHA-256 through rq_sha256): the
 *                  packs (read and written) and the loose objects take the
 *                  format when opened; the database itself is SHA-1.
 *
 * Packs are read by replayq's reader, libgit2's pack backend made only for
 * what it does not take. Loose objects are read by a backend of our own
 * (rq_odb_loose) that bounds every read, never loops on a truncated file,
 * and checks that the content hashes to the id asked for, like git does
 * ("hash mismatch"). Alternates are followed only where the caller's
 * policy allows: inside a root directory, or anywhere when asked.
 *
 * A damaged object is reported as RQ_E_CORRUPT_OBJECT naming the object
 * (rq_error_git recognises the errors set here and libgit2's zlib ones).
 */
#ifndef RQ_ODB_H
#define RQ_ODB_H

#include <git2.h>

#include "rq_error.h"
#include "rq_oid.h"

/* Each ref whose name starts with prefix, in name order, with the id it
 * resolves to (symbolic refs followed; broken and dangling ones left out),
 * given to fn(name, id, fn_arg) until fn answers non-zero (returned). 0,
 * or -1 with err set. */
typedef int (*rq_odb_ref_fn)(const char *name, const rq_oid *id, void *fn_arg);
typedef int (*rq_odb_refs_fn)(void *arg, const char *prefix, rq_odb_ref_fn fn, void *fn_arg,
			      rq_error *err);

typedef struct rq_odb_opts {
	const char *root;	   /* alternates must resolve under it (NULL: no rule) */
	int alternates_anywhere;   /* follow alternates outside root as well */
	const char *objects_shown; /* the objects directory as messages name it (NULL: its path) */
	/* a replay's pack stays kept (pack-<hex>.keep, see rq_odb_own.h) until
	 * rq_odb_tmpdir_release: refs will move to its objects after it is in.
	 * Its new objects all go into it, also those a pack holds already (see
	 * rq_odb_dedup) */
	int keep_pack;
	/* the repository's object format (rq_repofmt_algo); NULL: SHA-1 */
	const rq_oid_algo *algo;
	/* the refs the view reads (its replace refs: core/odb reads no refs
	 * itself; core/refs' rq_refdb_odb_refs with the repository as
	 * refs_arg); NULL: no replace refs */
	rq_odb_refs_fn refs;
	void *refs_arg;
} rq_odb_opts;

/*
 * A new object database for the repository's objects directory, made as
 * above. opts may be NULL. 0, or -1 with err set as for rq_odb_install.
 */
int rq_odb_new(git_odb **out, git_repository *repo, const rq_odb_opts *opts, rq_error *err);

/*
 * Replace the repository's object database with one made as above. opts
 * may be NULL (no root, display the path). 0, or -1 with RQ_E_BAD_REPO
 * (an alternate outside the root) or RQ_E_GIT / RQ_E_NOMEM.
 */
int rq_odb_install(git_repository *repo, const rq_odb_opts *opts, rq_error *err);

/*
 * The object format odb was made with (rq_odb_opts.algo): SHA-1 for any
 * other database. It walks the backends: read it once per job, replay or
 * merge, never per object.
 */
const rq_oid_algo *rq_odb_algo(git_odb *odb);

/*
 * Let odb read packs through the readers `from` has for the same
 * directories (both rq_odb databases, before odb reads anything): a
 * replay's database and the one installed before it share their mappings
 * of each pack and index. Anything else: nothing.
 */
void rq_odb_share_packs(git_odb *odb, git_odb *from);

/*
 * Blob id as the database's packs store it, when whole and of a size in
 * [min, max] (see rq_odb_packread_whole_blob): 1 with *entry and *content (malloc'd), 0
 * when no pack of odb holds it whole (or odb is no rq_odb database), -1
 * out of memory or damaged.
 */
int rq_odb_whole_blob(git_odb *odb, const rq_oid *id, size_t min, size_t max, unsigned char **entry,
		      size_t *entry_len, unsigned char **content, size_t *len);
/* 0 when b is the packs backend of a database made with keep_pack: a new
 * object that a pack already holds is written into the replay's pack all
 * the same (an unreachable object a `git repack -ad` may drop before the
 * refs move), else 1. */
int rq_odb_dedup(const git_odb_backend *b);

#endif
