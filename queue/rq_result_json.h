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
 * "conflict" ("applied" says whether they were applied). Ref names are
 * written without loss (rq_result_json_refname): "ref" of "updates", of
 * "refs" and of "blocked_by", a train's "target" and its cars' "ref".
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
 * "train": {"target", "method", "base", "head"},
 * "cars": [{"name", "status": "ok"|"conflict"|"skipped", "onto", "tip",
 * "commit", "ref", "conflict", rebase: "commits", "picked", "dropped";
 * merge: "merge_bases", "up_to_date"}]. NULL when memory runs out.
 */
json_t *rq_result_train_to_json(const rq_train_result *res, int rc, const rq_error *err,
				int applied);

/* res's updates, [{"ref", "old", "new"}]; NULL when memory runs out. */
json_t *rq_result_json_updates(const rq_replay_result *res);

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
 * A JSON string for n bytes that need not be UTF-8 (paths, messages, what
 * Redis holds), to be read by people: each byte that is not part of valid
 * UTF-8 becomes the text \\xNN (a NUL is a character of the string).
 * NULL when memory runs out.
 */
json_t *rq_result_json_bytesn(const char *s, size_t n);

/*
 * A ref name as a JSON string, without loss (a ref name is bytes): every
 * byte that is not part of valid UTF-8, and every backslash, is written as
 * the four characters \\xNN (NN its value in upper-case hex); everything
 * else is itself. A name that is valid UTF-8 and has no backslash (git
 * refuses backslashes in ref names) is therefore written as it is.
 * rq_result_json_refname_bytes reads it back. NULL when memory runs out.
 */
json_t *rq_result_json_refname(const char *name);

/*
 * The bytes of a ref name written by rq_result_json_refname (malloc'ed):
 * each \\xNN (two hex digits, either case) is the byte NN, every other
 * character its UTF-8 bytes. NULL when v is not a string, when a
 * backslash is not followed by x and two hex digits, when a byte would be
 * NUL, or when memory runs out.
 */
char *rq_result_json_refname_bytes(const json_t *v);

/*
 * The result JSON text (malloc'ed; NULL when out of memory) of a job that
 * failed before or outside a replay: status "error", the code and message,
 * with the job's id, repo (may be NULL), delivery and worker.
 */
char *rq_result_error_text(const char *id, const char *repo, rq_code code, const char *msg,
			   long attempt, const char *worker);

#endif
