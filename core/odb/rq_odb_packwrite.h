/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packwrite: a pack and its index written from pack entries
 * (rq_odb_pack encodes them; core/odb, see rq_odb.h for the family): the
 * replay's one pack (rq_odb_tmpdir) and a consolidation's (rq_odb_repack).
 * Each file is written through a buffer and hashed as it goes (each ends
 * with the hash of what comes before, SHA-1 or SHA-256 as the repository's
 * object format), synced, and renamed into place, the pack first.
 */
#ifndef RQ_ODB_PACKWRITE_H
#define RQ_ODB_PACKWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb_pack.h"
#include "rq_oid.h"

/* "pack-", the hex of the pack's checksum (up to 64 digits), a NUL */
#define RQ_ODB_PACK_NAME_MAX 72

/*
 * Write the n entries (distinct ids, in this order, ids and REF_DELTA bases
 * of algo's width; algo NULL: SHA-1) as dir/pack-<hash>.pack
 * and then dir/pack-<hash>.idx, each written to a temporary name
 * (dir/<tmp_prefix>pack_XXXXXX and dir/<tmp_prefix>idx_XXXXXX; NULL:
 * "tmp_", git's), synced to disk and renamed, the pack first: a reader of
 * dir never sees an index without its pack, and a failure leaves neither
 * (a pack of the same name already there stays). name receives
 * "pack-<hash>" (46 bytes with the NUL in SHA-1, 70 in SHA-256). The
 * index is version 2 with ids of algo's width, as `git index-pack` writes
 * it for the same pack.
 */
int rq_odb_packwrite(const char *dir, const char *tmp_prefix, const rq_oid_algo *algo,
		     const rq_odb_pack_entry *e, size_t n, char name[RQ_ODB_PACK_NAME_MAX],
		     uint64_t *pack_bytes, rq_error *err);

/*
 * The same, and before the pack moves in (its name known, both files
 * written and synced), before_move(ctx, name) runs: a .keep, a mark. When
 * it fails (-1, err set by it) nothing moves in; when the files cannot
 * move in after it, after_fail(ctx, name) undoes it. Either may be NULL.
 */
typedef int (*rq_odb_packwrite_hook)(void *ctx, const char *name, rq_error *err);
int rq_odb_packwrite_hooked(const char *dir, const char *tmp_prefix, const rq_oid_algo *algo,
			    const rq_odb_pack_entry *e, size_t n, rq_odb_packwrite_hook before_move,
			    rq_odb_packwrite_hook after_fail, void *ctx,
			    char name[RQ_ODB_PACK_NAME_MAX], uint64_t *pack_bytes, rq_error *err);

#endif
