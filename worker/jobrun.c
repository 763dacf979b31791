/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobrun: a pool child's one job (see jobrun.h). The parts, in the order a
 * child meets them: its limits (worker/joblimits) and test hooks; the
 * repository under the root (worker/jobrepo); the handshake with the
 * parent around the ref update; an earlier delivery's intent or a prior
 * result; the replay itself; what it does after its result.
 */
#include "jobrun.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobrepo.h"
#include "joblimits.h"
#include "rq_clock.h"
#include "rq_child.h"
#include "rq_job_train.h"
#include "rq_odb.h"
#include "rq_odb_repack.h"
#include "rq_odb_tmpdir.h"
#include "rq_qerror.h"
#include "rq_refproto.h"
#include "rq_refs.h"
#include "rq_replay.h"
#include "rq_result_json.h"
#include "rq_sign.h"
#include "rq_testhook.h"
#include "rq_train.h"

/* The messages a child sends, rq_refproto's and this file's, are told
 * apart by their type alone. */
_Static_assert(RQ_JOBRUN_MSG_RESULT != RQ_REFPROTO_ASK_GO &&
		   RQ_JOBRUN_MSG_RESULT != RQ_REFPROTO_ASK_COMMIT &&
		   RQ_JOBRUN_MSG_RESULT != RQ_REFPROTO_AGAIN &&
		   RQ_JOBRUN_MSG_AFTER != RQ_REFPROTO_ASK_GO &&
		   RQ_JOBRUN_MSG_AFTER != RQ_REFPROTO_ASK_COMMIT &&
		   RQ_JOBRUN_MSG_AFTER != RQ_REFPROTO_AGAIN &&
		   RQ_JOBRUN_MSG_STOPPED != RQ_REFPROTO_ASK_GO &&
		   RQ_JOBRUN_MSG_STOPPED != RQ_REFPROTO_ASK_COMMIT &&
		   RQ_JOBRUN_MSG_STOPPED != RQ_REFPROTO_AGAIN,
	       "a child's message types are distinct");

/* The child's job and its pipes to the parent. */
typedef struct child_job {
	const rq_jobrun_env *env;
	const rq_jobrun_task *task;
	const rq_job *job;
	int report_fd;
	int answer_fd; /* -1: the job moves no ref and asks nothing */
} child_job;

/* Test hook REPLAYQ_TEST_LATE: a child whose clock is late, as one that
 * finished after its deadline would be. */
static long long clock_skew_ms;

/* "on_ref_moved": "retry": how many times the job was replayed (0: not
 * yet); its result says it as "attempts". */
static int replays;

/* ---- messages to the parent ---- */

/* One message: "<clock> <json>". 0 or -1. */
static int send_json(const child_job *cj, char type, const char *json)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%lld ", rq_clock_mono_ms() + clock_skew_ms);
	struct iovec parts[2] = {{head, (size_t)n}, {(void *)json, strlen(json)}};

	return rq_child_sendv(cj->report_fd, type, parts, 2);
}

/* Ask the parent and wait: its answer, 0 when none came (it closed its
 * end), -1 when the question could not be sent. */
static int ask_json(const child_job *cj, char type, const char *json)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%lld ", rq_clock_mono_ms() + clock_skew_ms);
	struct iovec parts[2] = {{head, (size_t)n}, {(void *)json, strlen(json)}};

	return rq_child_ask(cj->report_fd, cj->answer_fd, type, parts, 2);
}

const char *rq_jobrun_payload_json(const char *payload, long long *sent_ms)
{
	char *end;

	*sent_ms = strtoll(payload, &end, 10);
	return end != payload && *end == ' ' ? end + 1 : NULL;
}

/* A result with the job's id, repo, attempt and worker, as text; NULL
 * when memory runs out. Takes j (may be NULL). */
static char *result_text(const child_job *cj, json_t *j)
{
	char *s = NULL;

	if (j && !json_object_set_new(j, "id", json_string(cj->job->id)) &&
	    !json_object_set_new(j, "repo", json_string(cj->job->repo)) &&
	    !json_object_set_new(j, "attempt", json_integer(cj->task->attempt)) &&
	    !json_object_set_new(j, "worker", json_string(cj->env->worker)) &&
	    (!cj->job->retry_moved || !cj->job->ref_update || !replays ||
	     !json_object_set_new(j, "attempts", json_integer(replays))))
		s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	return s;
}

/* ---- test hooks (test builds only: rq_testhook.h) ---- */

#ifdef RQ_TEST_HOOKS

/* The value of a test hook "<job id>:<value>" ("*": every job) for this
 * job, or NULL. */
static const char *hook_value(const char *var, const char *id)
{
	const char *v = getenv(var), *c = v ? strrchr(v, ':') : NULL;

	if (c && c - v == 1 && *v == '*')
		return c + 1;
	if (!c || (size_t)(c - v) != strlen(id) || strncmp(v, id, (size_t)(c - v)) != 0)
		return NULL;
	return c + 1;
}

/* Allocate and touch MiB of memory; an allocation the kernel refuses ends
 * the job as out of memory, as the engine would. */
static void hook_alloc(const child_job *cj, long mib)
{
	size_t n = (size_t)mib << 20;
	char *m = malloc(n), *res;

	if (m) {
		memset(m, 1, n);
		__asm__ volatile("" : : "r"(m) : "memory"); /* keep it */
		return;
	}
	res = rq_result_error_text(cj->job->id, cj->job->repo, RQ_E_NOMEM, "out of memory",
				   cj->task->attempt, cj->env->worker);
	if (!res)
		_exit(RQ_JOBRUN_EXIT_NOMEM);
	send_json(cj, RQ_JOBRUN_MSG_RESULT, res);
	free(res);
	_exit(0);
}

/*
 * Test hooks: REPLAYQ_TEST_CRASH=<id> crashes the child;
 * REPLAYQ_TEST_ALLOC=<id>:<MiB> makes it allocate and touch that much
 * memory; REPLAYQ_TEST_LATE=<id>[@<delivery>]:<ms> makes its clock that
 * much late, as a child that finished after its deadline would be; the
 * rq_testhook points "job:<id>" and "job:<id>@<delivery>" (see
 * rq_testhook.h) hold it.
 */
static void child_test_hooks(const child_job *cj)
{
	const char *crash = getenv("REPLAYQ_TEST_CRASH"), *v, *id = cj->job->id;
	char point[RQ_JOB_ID_MAX + 32];

	if (crash && !strcmp(crash, id))
		raise(SIGSEGV);
	if ((v = hook_value("REPLAYQ_TEST_ALLOC", id)))
		hook_alloc(cj, atol(v));
	snprintf(point, sizeof(point), "%s@%ld", id, cj->task->attempt);
	if ((v = hook_value("REPLAYQ_TEST_LATE", id)) ||
	    (v = hook_value("REPLAYQ_TEST_LATE", point)))
		clock_skew_ms = atoll(v);
	snprintf(point, sizeof(point), "job:%s", id);
	rq_testhook_hold(point);
	snprintf(point, sizeof(point), "job:%s@%ld", id, cj->task->attempt);
	rq_testhook_hold(point);
}
#else
static void child_test_hooks(const child_job *cj)
{
	(void)cj;
}
#endif

/* ---- the ref-update protocol's questions (queue/rq_refproto) ---- */

/* A question to the parent: the intent as a result (with the job's id,
 * repo, attempt and worker), the fence as it comes. Takes msg. */
static int link_ask(void *arg, char type, json_t *msg)
{
	const child_job *cj = arg;
	char *text;
	int answer;

	if (type == RQ_REFPROTO_ASK_GO) {
		text = result_text(cj, msg);
	} else {
		text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
		json_decref(msg);
	}
	if (!text)
		return -1;
	answer = ask_json(cj, type, text);
	free(text);
	return answer;
}

static void link_going(void *arg)
{
	(void)arg;
	rq_joblimits_lift();
}

/* A round ended before its fence (nothing moved) and another follows: the
 * parent is told (it watches the limits again) and the child's own limits
 * are back, with the time left. */
static void link_again(void *arg)
{
	const child_job *cj = arg;

	send_json(cj, RQ_REFPROTO_AGAIN, "{}");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	rq_joblimits_set(cj->env, cj->task);
}

/* How this child asks its parent; NULL when it asks nothing. */
static const rq_refproto_link *parent_link(const child_job *cj, rq_refproto_link *l)
{
	l->ask = link_ask;
	l->going = link_going;
	l->again = link_again;
	l->arg = (void *)cj;
	return cj->answer_fd >= 0 ? l : NULL;
}

/* An update that ends without a result (refused; failed after its grant,
 * which the next delivery finishes from the intent; or the question could
 * not be asked) ends the child. After a grant the error goes to the
 * parent all the same, as a stopped message (never published as the
 * result, which the next delivery makes), for a parent that has no next
 * delivery (run). */
static void end_if_stopped(const child_job *cj, rq_refproto_outcome how, const rq_error *err)
{
	char *res;

	if (how == RQ_REFPROTO_PARTIAL &&
	    (res = rq_result_error_text(cj->job->id, cj->job->repo, err->code, err->msg,
					cj->task->attempt, cj->env->worker))) {
		send_json(cj, RQ_JOBRUN_MSG_STOPPED, res);
		free(res);
	}
	if (how == RQ_REFPROTO_STOPPED || how == RQ_REFPROTO_PARTIAL)
		_exit(RQ_JOBRUN_EXIT_ABORT);
	if (how == RQ_REFPROTO_LOST)
		_exit(1);
}

/*
 * What a stored intent says for this delivery (an earlier delivery's, or a
 * --force copy's prior result): 1 with *out the result, 0 replay, -1 err
 * set.
 */
static int answer_from_intent(const child_job *cj, git_repository *repo, const rq_ident *ident,
			      json_t **out, rq_error *err)
{
	rq_refproto_link l;
	rq_refproto_outcome how;
	int rc;

	*out = NULL;
	if (!cj->job->ref_update || !cj->task->intent)
		return 0;
	rc = rq_refproto_answer_stored(parent_link(cj, &l), repo, cj->task->intent, ident, out,
				       &how, err);
	/* "on_ref_moved": "retry": a ref of an intent no process was granted
	 * (none of its refs moved by it) is elsewhere: replay from there */
	if (rc < 0 && how == RQ_REFPROTO_FAILED && err->code == RQ_E_REF_MOVED &&
	    cj->job->retry_moved && !cj->task->granted) {
		rq_error_clear(err);
		return 0;
	}
	if (rc < 0)
		end_if_stopped(cj, how, err);
	return rc;
}

/* ---- the replay ---- */

/* The updates of res (result: what they make true, taken), applied as
 * the parent allows (rq_refproto): 0, or -1 when the update failed;
 * *applied. */
static int apply_job(const child_job *cj, git_repository *repo, const rq_replay_result *res,
		     json_t *result, const rq_ident *ident, int *applied, rq_refs_verdict *v,
		     rq_error *err)
{
	json_t *intent = rq_refproto_intent_json(result, res);
	rq_refproto_link l;
	rq_refproto_outcome how;

	/* a signed job's intent says so, for a retry that finishes it */
	if (!intent || (cj->job->sign && rq_result_set_signed(intent) < 0))
		_exit(RQ_JOBRUN_EXIT_NOMEM);
	how = rq_refproto_apply(parent_link(cj, &l), repo, intent, res, ident, v, err);
	end_if_stopped(cj, how, err);
	if (how != RQ_REFPROTO_APPLIED)
		return -1;
	*applied = 1;
	return 0;
}

/*
 * "on_ref_moved": "retry": a round whose update failed because a ref
 * moved before the fence (nothing moved, no grant) is worth another
 * replay from the refs as they are now, up to RQ_JOB_MOVED_ATTEMPTS in
 * all: 1 (err cleared, the round ended, after a short pause), 0 not.
 */
static int moved_again(const child_job *cj, rq_refs_verdict v, rq_error *err)
{
	rq_refproto_link l;

	if (!cj->job->retry_moved || v != RQ_REFS_MOVED || replays >= RQ_JOB_MOVED_ATTEMPTS)
		return 0;
	rq_refproto_again(parent_link(cj, &l), replays);
	rq_error_clear(err);
	return 1;
}

/*
 * The jobs with "on_ref_moved": "retry" on one repository replay and
 * commit one at a time: each holds an flock on
 * <commondir>/replayq-retry.guard (not followed if it is a link) from its
 * first replay to its last round's end, so that they never make each
 * other replay again: a retry is left for the other writers (git, a job
 * without it, another program). The descriptor, or -1: none (not such a
 * job, or the file cannot be had: the job runs unguarded).
 */
static int retry_guard(const child_job *cj, git_repository *repo)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (!cj->job->retry_moved || !cj->job->ref_update ||
	    snprintf(path, sizeof(path), "%s/replayq-retry.guard",
		     git_repository_commondir(repo)) >= (int)sizeof(path) ||
	    (fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

/* One round of a replay job: replay, and apply its updates as the parent
 * allows (keep-going: the clean refs' even when others conflicted): what
 * rq_replay_run returned, -1 when the update failed (*v why); *applied. */
static int replay_round(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
			const rq_ident *ident, rq_replay_result *res, int *applied,
			rq_refs_verdict *v, rq_error *err)
{
	rq_replay_opts o;
	int rc;

	*v = RQ_REFS_FAILED;
	replays++;
	rq_job_replay_opts(cj->job, &o);
	o.committer = ident;
	o.objects = oo;
	o.sign = cj->job->sign ? cj->env->signer : NULL;
	rc = rq_replay_run(repo, &o, res, err);
	/* a ref the job would create where git cannot (refs/heads/main/sub
	 * beside refs/heads/main): refused in print mode too */
	if (rc >= 0 && res->upd.nupdates && rq_refs_check_creatable(repo, &res->upd, err) < 0)
		return -1;
	if (rc < 0 || !cj->job->ref_update || !rq_refproto_applies(rc, res, res->keep_going))
		return rc;
	if (apply_job(cj, repo, res, rq_result_to_json(res, rc, err, 1), ident, applied, v, err) <
	    0)
		return -1;
	return rc;
}

/* The replay job, round after round while a moved ref calls for one. */
static int replay_job(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
		      const rq_ident *ident, rq_replay_result *res, int *applied, rq_error *err)
{
	rq_refs_verdict v;
	int rc, guard = retry_guard(cj, repo);

	while ((rc = replay_round(cj, repo, oo, ident, res, applied, &v, err)) < 0 &&
	       moved_again(cj, v, err)) {
		rq_replay_result_free(res);
		memset(res, 0, sizeof(*res));
	}
	if (guard >= 0)
		close(guard);
	return rc;
}

/* One round of a train job, and the refs of its cars that went in applied
 * as the parent allows: what rq_train_run returned, -1 when the update
 * failed (*v why); *applied. */
static int train_round(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
		       const rq_ident *ident, rq_train_result *res, int *applied,
		       rq_refs_verdict *v, rq_error *err)
{
	rq_train_car *cars = calloc(cj->job->ncars + 1, sizeof(*cars));
	rq_train_opts o;
	int rc;

	*v = RQ_REFS_FAILED;
	replays++;
	if (!cars)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_job_train_opts(cj->job, &o, cars);
	o.committer = ident;
	o.objects = oo;
	o.sign = cj->job->sign ? cj->env->signer : NULL;
	rc = rq_train_run(repo, &o, res, err);
	free(cars);
	if (rc >= 0 && res->replay.upd.nupdates &&
	    rq_refs_check_creatable(repo, &res->replay.upd, err) < 0)
		return -1;
	if (rc < 0 || !cj->job->ref_update || !rq_refproto_applies(rc, &res->replay, 1))
		return rc;
	if (apply_job(cj, repo, &res->replay, rq_result_train_to_json(res, rc, err, 1), ident,
		      applied, v, err) < 0)
		return -1;
	return rc;
}

/* The train job, round after round while a moved ref calls for one. */
static int train_job(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
		     const rq_ident *ident, rq_train_result *res, int *applied, rq_error *err)
{
	rq_refs_verdict v;
	int rc, guard = retry_guard(cj, repo);

	while ((rc = train_round(cj, repo, oo, ident, res, applied, &v, err)) < 0 &&
	       moved_again(cj, v, err)) {
		rq_train_result_free(res);
		memset(res, 0, sizeof(*res));
	}
	if (guard >= 0)
		close(guard);
	return rc;
}

/* What a child does after its result is sent: consolidate replayq's
 * packs, when due (rq_odb_repack_due), in the objects directory. */
typedef struct after_job {
	int due;
	unsigned threshold;
	const rq_oid_algo *algo; /* the repository's object format */
	char objects[PATH_MAX];
} after_job;

/* A maintenance job: replayq's packs consolidated as `replayq maintain`
 * does, at the repository's object format algo. 0, or -1 with err set. */
static int maintain_job(git_repository *repo, const rq_oid_algo *algo, rq_odb_repack_stats *st,
			rq_error *err)
{
	rq_odb_repack_opts o = {0, 1, 0, algo};
	git_buf dir = GIT_BUF_INIT;
	int rc;

	memset(st, 0, sizeof(*st));
	if (git_repository_item_path(&dir, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0)
		return rq_error_git(err, "cannot find the objects directory");
	while (dir.size > 1 && dir.ptr[dir.size - 1] == '/')
		dir.ptr[--dir.size] = '\0';
	rc = rq_odb_repack_run(dir.ptr, &o, st, err);
	git_buf_dispose(&dir);
	return rc;
}

/* A replay or a train, and what is due after it: its pack's .keep goes
 * (its refs moved, or will not), a consolidation may be due. */
static int replay_or_train(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
			   const rq_ident *ident, rq_replay_result *res, rq_train_result *tres,
			   int *applied, after_job *after, rq_error *err)
{
	int rc = cj->job->train ? train_job(cj, repo, oo, ident, tres, applied, err)
				: replay_job(cj, repo, oo, ident, res, applied, err);
	const char *pack = cj->job->train ? tres->replay.stats.pack_name : res->stats.pack_name;

	rq_odb_tmpdir_release(repo, pack);
	if (pack[0] && !cj->env->no_consolidate) {
		after->due = rq_odb_repack_due(repo, after->objects, sizeof(after->objects),
					       &after->threshold);
		after->algo = oo->algo;
	}
	return rc;
}

/* A job that asks for signed commits needs a worker with a key: 0, or -1
 * with RQ_E_SIGN_UNAVAILABLE (before any git work). */
static int sign_check(const child_job *cj, rq_error *err)
{
	if (!cj->job->sign || cj->env->signer)
		return 0;
	return rq_error_set(err, RQ_E_SIGN_UNAVAILABLE,
			    "the job asks for signed commits (\"sign\": true), and this worker "
			    "has no signing key (--sign-key, --sign-agent)");
}

/* The job from start to result text (NULL: out of memory). */
static char *run_job(const child_job *cj, after_job *after)
{
	char path[PATH_MAX], shown[RQ_JOBREPO_SHOWN_MAX];
	git_repository *repo = NULL;
	rq_odb_opts oo = {0};
	rq_replay_result res;
	rq_train_result tres;
	rq_odb_repack_stats mst;
	rq_ident ident;
	rq_error err;
	int rc = -1, applied = 0, train = cj->job->train, maintain = cj->job->maintain;
	json_t *j = NULL;

	memset(&res, 0, sizeof(res));
	memset(&tres, 0, sizeof(tres));
	memset(&mst, 0, sizeof(mst));
	rq_error_clear(&err);
	path[0] = '\0';
	if (sign_check(cj, &err) == 0 &&
	    rq_jobrepo_open(cj->env, cj->job, path, shown, &oo, &repo, &err) == 0) {
		rq_odb_tmpdir_clean_stale(repo, 300, NULL);
		if (maintain)
			rc = maintain_job(repo, oo.algo, &mst, &err);
		else if (rq_jobrepo_committer(repo, cj->task, &ident, &err) == 0 &&
			 (rc = answer_from_intent(cj, repo, &ident, &j, &err)) == 0)
			rc = replay_or_train(cj, repo, &oo, &ident, &res, &tres, &applied, after,
					     &err);
	}
	if (!j) { /* not an intent's answer */
		rq_jobrepo_name_as_job(&err, path, cj->env->root, cj->job->repo);
		j = maintain ? rq_result_maintain_to_json(&mst, rc, &err)
		    : train  ? rq_result_train_to_json(&tres, rc, &err, applied)
			     : rq_result_to_json(&res, rc, &err, applied);
		if (cj->job->sign && rq_result_set_signed(j) < 0) {
			json_decref(j);
			j = NULL; /* out of memory */
		}
	}
	rq_replay_result_free(&res);
	rq_train_result_free(&tres);
	git_repository_free(repo);
	return result_text(cj, j);
}

/* What a consolidation did, as the after message's JSON (see jobrun.h);
 * NULL out of memory. */
static char *after_text(int rc, const rq_odb_repack_stats *st, const rq_error *err)
{
	json_t *j = rc < 0 ? json_pack("{s:{s:s, s:s}}", "error", "code", rq_qerror_name(err->code),
				       "message", err->msg)
			   : json_pack("{s:I, s:I, s:I, s:b}", "merged", (json_int_t)st->merged,
				       "own_before", (json_int_t)st->own_before, "own_after",
				       (json_int_t)st->own_after, "busy", st->busy);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}

/*
 * After the result, which ends the job's report (the parent publishes it
 * as soon as it is in): replayq's packs consolidated when due, and what
 * that did sent as one more message, the after message. Nothing here
 * changes the result: a failure, or a kill anywhere, leaves every object
 * readable, and the next consolidation finishes the work
 * (rq_odb_repack.h). So it may be cut short at any point (rq_joblimits_after).
 * Test hold point "job-after": the result sent, before the consolidation.
 */
static void after_result(const child_job *cj, const after_job *after, pid_t parent)
{
	rq_odb_repack_opts o = {after->threshold, 0, RQ_ODB_REPACK_WAIT_MS, after->algo};
	rq_odb_repack_stats st;
	rq_error err;
	char *text;
	int rc;

	if (!after->due)
		return;
	rq_joblimits_after();
	if (getppid() != parent)
		return;
	rq_testhook_hold("job-after");
	rq_error_clear(&err);
	memset(&st, 0, sizeof(st));
	rc = rq_odb_repack_run(after->objects, &o, &st, &err);
	if ((text = after_text(rc, &st, &err)))
		send_json(cj, RQ_JOBRUN_MSG_AFTER, text);
	free(text);
}

void rq_jobrun_child(const rq_jobrun_env *env, const rq_jobrun_task *task, pid_t parent,
		     int report_fd, int answer_fd)
{
	rq_jobrun_env own = *env;
	child_job cj = {&own, task, task->job, report_fd, answer_fd};
	after_job after = {0, 0, NULL, ""};
	char *s;

	if (own.signer && !task->job->sign) { /* it holds only what it needs */
		rq_sign_free(own.signer);
		own.signer = NULL;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGINT, SIG_IGN); /* a terminal's ^C drains the worker, not the job */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, SIG_DFL);
	signal(SIGXCPU, SIG_DFL);
	rq_joblimits_set(cj.env, cj.task);
	child_test_hooks(&cj);
	git_libgit2_init();
	if (!(s = run_job(&cj, &after)))
		_exit(RQ_JOBRUN_EXIT_NOMEM);
	if (send_json(&cj, RQ_JOBRUN_MSG_RESULT, s) < 0)
		_exit(1);
	free(s);
	after_result(&cj, &after, parent);
	_exit(0);
}
