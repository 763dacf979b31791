/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_repack: replayq's packs consolidated geometrically (core/odb, see
 * rq_odb.h for the family).
 *
 * Every replay adds one small pack. When replayq's own packs (those
 * rq_odb_own marked) reach a threshold, a replay rolls the smallest of
 * them into one, as `git repack --geometric=2` does: sorted by object
 * count, the packs that do not form a progression in which each pack
 * holds at least twice the objects of all smaller ones together are
 * merged (git's split, from builtin/repack.c by Taylor Blau), so N
 * replays leave O(log N) packs. The merge copies the entries as they are
 * (an OFS_DELTA's distance to its base rewritten), each checked against
 * its index's CRC-32, an object held twice written once; nothing is
 * compressed again. It works at the repository's object format
 * (rq_odb_repack_opts.algo): SHA-1 packs as SHA-1 ("pack-" and 40 hex
 * digits, 20-byte ids and trailers), SHA-256 ones as SHA-256 (64 digits,
 * 32 bytes), the multi-pack-index read at that width too.
 *
 * What it never touches: a pack it did not mark (the platform's, git's),
 * a pack with a .keep (a replay whose refs have not moved yet, git's
 * receive-pack, an operator's), .promisor packs, cruft packs (.mtimes),
 * packs with a bitmap, packs git's multi-pack-index names (the platform's
 * housekeeping adopted them). Every object of a pack it removes is in the
 * new pack first, synced and in place: a reader that listed the packs
 * before finds the object again after one new listing (rq_odb_packset),
 * and git's readers do the same. The order, each step a test hold point
 * (rq_testhook), so that a kill anywhere leaves every object readable:
 *   repack-locked    objects/replayq/consolidate.lock taken (another
 *                    process consolidating: nothing done; a lock whose
 *                    owner is gone is taken over);
 *   repack-selected  the packs to merge chosen;
 *   repack-kept      the new pack written and synced under temporary
 *                    names, its .keep and mark made;
 *   repack-written   the new pack in place (the directory synced);
 *   repack-deleting  the first old pack's index removed (then its pack,
 *                    its reverse index and its mark; then the next);
 *   repack-deleted   every old pack gone;
 *   repack-done      the new pack's .keep removed, before the lock.
 * What a kill leaves is found later: temporary files and .keep files of
 * dead processes by the next listing of the pack directory, a marked
 * pack without its index and marks without their pack by the next
 * consolidation.
 */
#ifndef RQ_ODB_REPACK_H
#define RQ_ODB_REPACK_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_error.h"
#include "rq_odb_packwrite.h"
#include "rq_oid.h"

/* replayq's packs at which a replay consolidates them (the
 * replayq.consolidateAt setting changes it). */
#define RQ_ODB_REPACK_THRESHOLD 12

typedef struct rq_odb_repack_opts {
	unsigned threshold;	 /* own packs from which to merge; 0: RQ_ODB_REPACK_THRESHOLD */
	int all;		 /* `replayq maintain`: merge what the progression allows,
				  * below the threshold too, and count every pack */
	unsigned wait_ms;	 /* wait this long for another process's consolidation
				  * to end, then look again (0: busy, nothing done) */
	const rq_oid_algo *algo; /* the repository's object format (rq_repofmt_algo,
				  * known to the caller): its packs' names, ids,
				  * trailers; NULL: SHA-1 */
} rq_odb_repack_opts;

typedef struct rq_odb_repack_stats {
	size_t packs_before, packs_after;     /* packs in objects/pack (with opts.all) */
	uint64_t bytes_before, bytes_after;   /* their bytes (with opts.all) */
	size_t own_before, own_after;	      /* replayq's packs */
	size_t merged;			      /* replayq's packs merged into one */
	size_t objects;			      /* objects in the new pack */
	uint64_t pack_bytes;		      /* its size */
	char pack_name[RQ_ODB_PACK_NAME_MAX]; /* "pack-<hex>", "" when none was made */
	int busy;			      /* another process held the lock */
} rq_odb_repack_stats;

/*
 * Consolidate replayq's packs in the objects directory `objects` as above.
 * 0 (done, or nothing to do: stats say which), or -1 with err set
 * (nothing removed).
 */
int rq_odb_repack_run(const char *objects, const rq_odb_repack_opts *opts,
		      rq_odb_repack_stats *stats, rq_error *err);

/* How long a replay waits for another process's consolidation (then it
 * looks at the packs again: at most the threshold and the packs of the
 * replays still running stay, whatever the timing). */
#define RQ_ODB_REPACK_WAIT_MS 30000

/*
 * After a replay: consolidate when the repository lets it (config
 * replayq.consolidate, default true; replayq.consolidateAt, the threshold)
 * and replayq's packs reached the threshold, at the repository's object
 * format algo (rq_repofmt_algo; NULL: SHA-1). Cheap when they have not (a
 * listing of objects/replayq). 1 consolidated, 0 not, -1 failed (err set;
 * the replay's result stands).
 */
int rq_odb_repack_auto(git_repository *repo, const rq_oid_algo *algo, rq_error *err);

/* The part of rq_odb_repack_auto that needs the repository: 1 when a
 * consolidation is due, with the objects directory (n bytes of room) and
 * the threshold to run it with; 0 when not. */
int rq_odb_repack_due(git_repository *repo, char *objects, size_t n, unsigned *threshold);

/* The repository's settings: 1 consolidate after replays, 0 not;
 * *threshold the count. */
int rq_odb_repack_enabled(git_repository *repo, unsigned *threshold);

#endif
