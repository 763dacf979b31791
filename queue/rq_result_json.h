/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_result_json: a replay's outcome as a JSON result object (v1).
 *
 * {"v":1, "status":"ok"|"conflict"|"error", "updates":[{"ref","old","new"}],
 *  "applied":bool, "conflict":{"commit", "paths":[{"path","kind"}]},
 *  "error":{"code","message"}, "stats":{...}}
 * "conflict" is present only with status "conflict", "error" only with
 * status "error"; "signed": true only when the new commits were signed
 * (rq_result_set_signed). A keep-going replay (res->keep_going) adds "refs":
 * [{"ref", "status": "ok"|"conflict"|"blocked", "old", "new" (null unless
 * ok), "conflict": {...} (conflict), "blocked_by": {"ref", "commit"}
 * (blocked)}], and its "updates" are the clean refs' also with status
 * "conflict" ("applied" says whether they were applied).
 */
#ifndef RQ_RESULT_JSON_H
#define RQ_RESULT_JSON_H

#include <jansson.h>

#include "rq_odb_repack.h"
#include "rq_qerror.h"
#include "rq_replay.h"
#include "rq_train.h"

/*
 * rc: what rq_replay_run (or a later step) returned: 0, 1 or negative.
 * res may be NULL (an error before any replay: empty updates and stats).
 * NULL when memory runs out (never a result with a part missing).
 */
json_t *rq_result_to_json(const rq_replay_result *res, int rc, const rq_error *err, int applied);

/*
 * A train's result: the fields above (updates: the cars' refs, also with
 * status "conflict"; conflict: the first conflicting car's) and
 * "train": {"target", "method", "base", "head", "virtual_fallbacks"},
 * "cars": [{"name", "status": "ok"|"conflict"|"skipped", "onto", "tip",
 * "commit", "ref", "conflict", rebase: "commits", "picked", "dropped";
 * merge: "merge_bases", "up_to_date"}]. NULL when memory runs out.
 */
json_t *rq_result_train_to_json(const rq_train_result *res, int rc, const rq_error *err,
				int applied);

/*
 * A maintenance job's result: status "ok" (or "error" with its "error"),
 * "updates": [], "applied": false, and "maintain": {"packs_before",
 * "packs_after", "bytes_before", "bytes_after" (every pack of the
 * repository), "replayq_packs_before", "replayq_packs_after", "merged"
 * (replayq's packs made into one), "objects", "pack" (its name, or null),
 * "pack_bytes", "busy" (another process was consolidating: nothing done)}.
 * NULL when memory runs out.
 */
json_t *rq_result_maintain_to_json(const rq_odb_repack_stats *st, int rc, const rq_error *err);

/*
 * Mark a result whose new commits were signed: "signed": true, unless it
 * is an error. o may be NULL. 0, or -1 out of memory.
 */
int rq_result_set_signed(json_t *o);

/*
 * A JSON string for n bytes that need not be UTF-8 (ref names, paths,
 * messages quoting them, what Redis holds): each byte that is not part of
 * valid UTF-8 becomes the text \\xNN (a NUL is a character of the
 * string). NULL when memory runs out.
 */
json_t *rq_result_json_bytesn(const char *s, size_t n);

/*
 * The result JSON text (malloc'ed; NULL when out of memory) of a job that
 * failed before or outside a replay: status "error", the code and message,
 * with the job's id, repo (may be NULL), delivery and worker.
 */
char *rq_result_error_text(const char *id, const char *repo, rq_code code, const char *msg,
			   long attempt, const char *worker);

#endif
