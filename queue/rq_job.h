/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job: a replay job, parsed from untrusted JSON and validated before any
 * git work.
 *
 * {"v":1, "id":"...", "repo":"group/project.git", "mode":"onto",
 *  "target":"main", "revisions":["main..topic"], "contained":false,
 *  "ref":"refs/heads/x", "ref_action":"print", "empty":"drop",
 *  "committer":{"name":"Bot","email":"bot@example.com","time":1700000000,
 *               "tz":"+0000"},
 *  "timeout_ms":600000, "max_commits":10000, "reply_to":"name",
 *  "submitted_at":1700000000123, "keep_going":false, "sign":false,
 *  "group":"main-train"}
 *
 * A merge train has "mode":"train", its target branch, and cars instead of
 * revisions (no "contained", "ref" or "keep_going"):
 *
 * {"v":1, "id":"...", "repo":"...", "mode":"train", "target":"main",
 *  "method":"rebase"|"merge", "cars":[{"name":"mr-17",
 *  "revisions":["main..mr-17"], "skip":false}, ...],
 *  "ref_prefix":"refs/train/main/", "car_refs":true,
 *  "message":"Merge branch '{name}' into {target}", ...}
 *
 * A maintenance job has "mode":"maintain" and nothing to replay (only
 * "timeout_ms", "reply_to" and "submitted_at" besides v, id and repo): it
 * consolidates the packs replayq wrote in the repository
 * (core/odb/rq_odb_repack) and reports packs and bytes before and after.
 *
 * Every rule violation is RQ_E_INVALID_JOB (or RQ_E_BAD_REF /
 * RQ_E_BAD_REVISION / RQ_E_BAD_REPO for those fields) with a message that
 * names the field. Unknown fields are refused.
 */
#ifndef RQ_JOB_H
#define RQ_JOB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_qerror.h"
#include "rq_replay.h"
#include "rq_train.h"

#define RQ_JOB_MAX_BYTES      (64 * 1024)
#define RQ_JOB_ID_MAX	      128
#define RQ_JOB_REPO_MAX	      1024
#define RQ_JOB_REVS_MAX	      1000
#define RQ_JOB_REV_LEN_MAX    1024
#define RQ_JOB_NAME_MAX	      255
#define RQ_JOB_TIMEOUT_MAX_MS 3600000
#define RQ_JOB_TIMEOUT_DEF_MS 600000
#define RQ_JOB_COMMITS_MAX    100000
#define RQ_JOB_MOVED_ATTEMPTS 5 /* "on_ref_moved": "retry": replays at most */
#define RQ_JOB_COMMITS_DEF    10000
#define RQ_JOB_REPLY_MAX      200
#define RQ_JOB_CAR_REVS_MAX   16

/* One car of a train job. */
typedef struct rq_job_car {
	char *name;
	char **revisions;
	size_t nrevisions;
	int skip;
} rq_job_car;

typedef struct rq_job {
	char *id;
	char *repo;
	rq_mode mode;
	char *target;
	char **revisions;
	size_t nrevisions;
	int contained;
	char *ref;
	int ref_update; /* ref_action "update" */
	rq_empty empty;
	int has_name; /* committer name/email given */
	int has_time; /* committer time given */
	rq_ident committer;
	int64_t timeout_ms;
	size_t max_commits;
	char *reply_to;
	int64_t submitted_at; /* ms since the epoch, 0 if unknown */
	int keep_going;	      /* every branch gets its own outcome */
	int maintain;	      /* mode "maintain": no replay, the packs consolidated */
	int sign;	      /* "sign": the worker signs the new commits with its key */
	char *group;	      /* "group": one job of it runs at a time, in order; NULL: none */
	int retry_moved;      /* "on_ref_moved": "retry" (worker/jobrun) */
	/* mode "train" (mode is then RQ_MODE_ONTO for the engine's sake) */
	int train;
	rq_train_method method;
	rq_job_car *cars;
	size_t ncars;
	char *ref_prefix; /* NULL: refs/train/<target>/ */
	int no_car_refs;  /* "car_refs": false */
	char *message;	  /* merge message template */
} rq_job;

/*
 * Parse and validate. On failure *job is empty, and if the text held a
 * usable "id" it is copied to id_out (size RQ_JOB_ID_MAX + 1) so that an
 * error result can name the job; otherwise id_out is "".
 */
int rq_job_parse(const char *text, size_t len, rq_job *job, char *id_out, rq_error *err);
void rq_job_free(rq_job *job);

/* 1 if s is a valid job id: 1..128 of [A-Za-z0-9._:@/+-]. */
int rq_job_id_valid(const char *s);

/* 1 if a repo path is acceptable: relative, no "..", no empty parts. */
int rq_job_repo_valid(const char *s);

/* The job as JSON (all fields, defaults filled in); NULL when memory runs
 * out. */
json_t *rq_job_to_json(const rq_job *job);

/*
 * What makes two jobs with one id the same job: the job as JSON with its
 * defaults filled in and without "submitted_at" and "reply_to" (when and
 * to whom a copy was sent), keys sorted, compact. malloc'ed; NULL when out
 * of memory.
 */
char *rq_job_content(const rq_job *job);

/*
 * The content digest of a job's text, as a worker's claim of its id
 * records it (rq_queue_claim): the sha1 of rq_job_content when the text
 * is a valid job, else of the text itself; 40 hex digits and a NUL in out.
 * 0, or -1 out of memory.
 */
int rq_job_digest(const char *text, size_t len, char out[41]);

/*
 * The committer time (seconds) of a job that gives none: its submission
 * time, else the time in its stream entry id ("<ms>-<seq>"; NULL or "":
 * none), else now; so that a retried job yields the same commits.
 */
int64_t rq_job_default_time(const rq_job *job, const char *entry_id);

/* Engine options for the job; valid while job and revs live. */
void rq_job_replay_opts(const rq_job *job, rq_replay_opts *opts);

#endif
