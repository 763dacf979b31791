/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobrun: a pool child's one job (see jobrun.h). The parts, in the order a
 * child meets them: its limits and test hooks; the repository under the
 * root; the handshake with the parent around the ref update; an earlier
 * delivery's intent or a prior result; the replay itself.
 */
#include "jobrun.h"

#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "rq_child.h"
#include "rq_confine.h"
#include "rq_odb.h"
#include "rq_odb_repack.h"
#include "rq_odb_tmpdir.h"
#include "rq_qerror.h"
#include "rq_refs.h"
#include "rq_replay.h"
#include "rq_repofmt.h"
#include "rq_result_json.h"
#include "rq_sign.h"
#include "rq_testhook.h"
#include "rq_train.h"

#define SHOWN_MAX (PATH_MAX + RQ_JOB_REPO_MAX + 16)

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
	    !json_object_set_new(j, "worker", json_string(cj->env->worker)))
		s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	return s;
}

/* ---- limits the kernel enforces in the child ---- */

/* The child's private data (VmData) in bytes, 0 if unknown. */
static uint64_t own_data_bytes(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* Lower a soft limit to want, unless the hard limit is lower still. */
static void lower_limit(int resource, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) == 0 && (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max)) {
		rl.rlim_cur = want;
		setrlimit(resource, &rl);
	}
}

/*
 * A child stops by itself even when the parent cannot watch it in time
 * (busy storing a result while Redis is away, stopped, swapped out):
 * SIGALRM at the deadline, SIGXCPU one second of CPU time after it, and,
 * with a memory limit, no private memory beyond twice the limit above what
 * it inherited (RLIMIT_DATA counts memory reserved, not only touched, so it
 * is looser than the parent's resident-set limit).
 */
static void child_limits(const child_job *cj)
{
	long long left = cj->task->deadline - rq_clock_mono_ms();
	struct itimerval it;

	if (left <= 0)
		raise(SIGALRM);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(left / 1000);
	it.it_value.tv_usec = (suseconds_t)(left % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	lower_limit(RLIMIT_CPU, (rlim_t)(cj->job->timeout_ms / 1000 + 2));
	if (cj->env->memory_limit && cj->env->data_limit)
		lower_limit(RLIMIT_DATA, (rlim_t)(own_data_bytes() + 2 * cj->env->memory_limit));
}

/* Before the ref updates: nothing may interrupt them half-way, not even
 * the worker's death (the update finishes; the redelivered job finds it
 * done through its intent). */
static void child_lift_limits(void)
{
	struct itimerval it;
	struct rlimit rl;

	prctl(PR_SET_PDEATHSIG, 0);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (getrlimit(RLIMIT_CPU, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CPU, &rl);
	}
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

/* ---- the repository ---- */

int rq_jobrun_resolve_repo(const char *root, const char *rel, char *out, rq_error *err)
{
	char joined[PATH_MAX * 2];
	size_t rl = strlen(root);

	snprintf(joined, sizeof(joined), "%s/%s", root, rel);
	if (!realpath(joined, out))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "repository '%s' not found under the root: %s", rel,
				    strerror(errno));
	if (strncmp(out, root, rl) != 0 || (out[rl] != '/' && out[rl] != '\0'))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "repository '%s' resolves outside the repository root", rel);
	return 0;
}

/* How messages name the repository's objects directory: as the job's
 * repo names it, not by the worker's path, into shown (SHOWN_MAX). */
static int objects_shown(git_repository *repo, const char *path, const char *rel, char *shown,
			 rq_error *err)
{
	git_buf objects = GIT_BUF_INIT;
	size_t pl = strlen(path);

	if (git_repository_item_path(&objects, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0) {
		git_buf_dispose(&objects);
		return rq_error_git(err, "cannot find the objects directory");
	}
	while (objects.size > 1 && objects.ptr[objects.size - 1] == '/')
		objects.ptr[--objects.size] = '\0';
	if (!strncmp(objects.ptr, path, pl) && objects.ptr[pl] == '/')
		snprintf(shown, SHOWN_MAX, "%s/%s", rel, objects.ptr + pl + 1);
	else
		snprintf(shown, SHOWN_MAX, "%s/objects", rel);
	git_buf_dispose(&objects);
	return 0;
}

/* rq_confine_open's opener: the repository's format decides how it is
 * opened (rq_repofmt: a reftable ref database, an unsupported format
 * named). */
static int open_format(git_repository **out, const char *path, rq_error *err)
{
	return rq_repofmt_open(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, err);
}

/*
 * Open the job's repository and hold it to the root: every path its files
 * name resolves inside (rq_confine), and its objects are read through
 * rq_odb with the root's alternates policy (oo, whose objects_shown points
 * into shown).
 */
static int open_repo(const child_job *cj, char *path, char *shown, rq_odb_opts *oo,
		     git_repository **repo, rq_error *err)
{
	const char *rel = cj->job->repo;

	path[0] = '\0';
	if (rq_jobrun_resolve_repo(cj->env->root, rel, path, err) < 0)
		return -1;
	/* nothing outside the root is opened, libgit2's own reading included;
	 * the repository's format decides how (rq_repofmt: reftable refs) */
	if (rq_confine_open(repo, path, cj->env->root, cj->env->confine_flags, open_format, err) <
		0 ||
	    objects_shown(*repo, path, rel, shown, err) < 0)
		return -1;
	oo->root = cj->env->root;
	oo->alternates_anywhere = cj->env->alternates_anywhere;
	oo->objects_shown = shown;
	/* the pack is kept from git's repack and gc until its refs moved */
	oo->keep_pack = cj->job->ref_update;
	return rq_odb_install(*repo, oo, err);
}

/* Messages name the repository as the job did: the worker's paths (the
 * resolved repository, then the root) become the job's repo. */
static void name_repo_as_job(rq_error *err, const char *path, const char *root, const char *repo)
{
	const char *from[2] = {path, root};
	char out[RQ_ERROR_MSG_MAX];

	for (int k = 0; k < 2; k++) {
		size_t fl = strlen(from[k]), o = 0;
		const char *m = err->msg, *hit;
		if (fl < 2 || !strstr(m, from[k]))
			continue;
		while ((hit = strstr(m, from[k])) && o < sizeof(out) - 1) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s%s", (int)(hit - m), m,
					      k ? "<root>" : repo);
			m = hit + fl;
		}
		if (o < sizeof(out) - 1)
			snprintf(out + o, sizeof(out) - o, "%s", m);
		memcpy(err->msg, out, sizeof(out));
	}
}

/* The committer: the job's, else REPLAYQ_COMMITTER_NAME/EMAIL, else the
 * repository's; the job's time, else the default time. */
static int job_committer(git_repository *repo, const rq_jobrun_task *task, rq_ident *id,
			 rq_error *err)
{
	const char *n = getenv("REPLAYQ_COMMITTER_NAME"), *e = getenv("REPLAYQ_COMMITTER_EMAIL");
	const rq_job *job = task->job;

	if (job->has_name) {
		*id = job->committer;
	} else if (n && e) {
		if (rq_ident_set(id, n, e, err) < 0)
			return -1;
	} else if (rq_ident_default(repo, id, err) < 0) {
		return -1;
	}
	id->time = job->has_time ? job->committer.time : task->default_time;
	id->tz = job->has_time ? job->committer.tz : 0;
	return 0;
}

/* ---- the handshake around the ref update ---- */

/* The write-ahead handshake before any ref moves: the parent records the
 * intent (the result this job is about to make true), then says go. Takes
 * intent. Returns only with the go. */
static void ask_to_apply(const child_job *cj, json_t *intent)
{
	char *text;
	int answer;

	if (cj->answer_fd < 0) {
		json_decref(intent);
		return;
	}
	if (!(text = result_text(cj, intent)))
		_exit(RQ_JOBRUN_EXIT_NOMEM);
	answer = ask_json(cj, RQ_JOBRUN_MSG_INTENT, text);
	free(text);
	if (answer < 0)
		_exit(1);
	if (answer != RQ_JOBRUN_ANSWER_GO)
		_exit(RQ_JOBRUN_EXIT_ABORT);
	child_lift_limits();
}

/* The commit check, under the ref locks: the parent confirms the job is
 * still this worker's ('c'), or not (the locks are released, nothing
 * moves, the child ends as aborted). */
typedef struct commit_ask {
	const child_job *cj;
	int refused, granted;
} commit_ask;

static int ask_to_commit(void *arg)
{
	commit_ask *a = arg;

	if (a->cj->answer_fd < 0)
		return 0;
	if (ask_json(a->cj, RQ_JOBRUN_MSG_CHECK, "{}") != RQ_JOBRUN_ANSWER_COMMIT)
		return a->refused = -1;
	a->granted = 1;
	return 0;
}

/* Apply under the commit check; a refused commit ends the child. So does
 * a commit that failed after it was granted (some refs may have moved):
 * no result is sent, the job is left for a retry, which finishes the
 * update from its intent, so that no error result is stored while refs
 * moved. */
static int apply_checked(const child_job *cj, git_repository *repo, const rq_replay_result *res,
			 const rq_ident *ident, rq_error *err)
{
	commit_ask a = {cj, 0, 0};
	int rc = rq_refs_apply_checked(repo, res, ident, ask_to_commit, &a, err);

	if (a.refused || (rc < 0 && a.granted && cj->answer_fd >= 0))
		_exit(RQ_JOBRUN_EXIT_ABORT);
	return rc;
}

/* ---- an earlier delivery's intent, a prior result ---- */

/* One update of an earlier delivery's intent, checked against where the
 * ref is now: 0 already at new, 1 still at old (to do), -1 elsewhere (err
 * set), -2 unusable (the intent cannot be trusted: replay again). */
static int intent_ref(git_repository *repo, json_t *u, rq_ref_update *out, rq_error *err)
{
	const char *ref = json_string_value(json_object_get(u, "ref"));
	const char *o = json_string_value(json_object_get(u, "old"));
	const char *n = json_string_value(json_object_get(u, "new"));
	git_oid cur;
	git_odb *odb = NULL;
	int r, have;

	if (!ref || !o || !n || git_oid_fromstr(&out->old_id, o) < 0 ||
	    git_oid_fromstr(&out->new_id, n) < 0)
		return -2;
	r = git_reference_name_to_id(&cur, repo, ref);
	if (r == GIT_ENOTFOUND)
		memset(&cur, 0, sizeof(cur));
	else if (r < 0)
		return -2;
	if (git_oid_equal(&cur, &out->new_id))
		return 0;
	if (!git_oid_equal(&cur, &out->old_id)) {
		char at[GIT_OID_HEXSZ + 1];
		git_oid_tostr(at, sizeof(at), &cur);
		rq_error_set(err, RQ_E_REF_MOVED,
			     "ref '%s' is at %s; an earlier attempt of this job was to move it "
			     "from %s to %s",
			     ref, at, o, n);
		return -1;
	}
	if (git_repository_odb(&odb, repo) < 0)
		return -2;
	have = git_odb_exists(odb, &out->new_id);
	git_odb_free(odb);
	if (!have)
		return -2; /* its objects are gone: replay again */
	if (!(out->ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 1;
}

/* The updates of an intent still to do, into todo: 1 some or none to do,
 * 0 the intent is of no use, -1 a ref moved elsewhere (err set). */
static int intent_todo(git_repository *repo, json_t *intent, rq_replay_result *todo, rq_error *err)
{
	json_t *ups = json_object_get(intent, "updates"), *u;
	const char *msg = json_string_value(json_object_get(intent, "reflog_msg"));
	size_t i, n = json_array_size(ups);

	if (!n)
		return 0;
	if (!(todo->updates = calloc(n, sizeof(*todo->updates))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	json_array_foreach(ups, i, u)
	{
		int r = intent_ref(repo, u, &todo->updates[todo->nupdates], err);
		if (r < 0)
			return r == -1 ? -1 : 0;
		todo->nupdates += (size_t)r;
	}
	snprintf(todo->reflog_msg, sizeof(todo->reflog_msg), "%s", msg ? msg : "replay");
	return 1;
}

/*
 * A redelivered job whose earlier delivery recorded an intent: finish that
 * same update instead of replaying again from refs it may have moved
 * already. Refs at their new value are done, refs at their old value are
 * moved (their commits are in the pack the earlier delivery wrote before
 * its intent), a ref anywhere else is ref_moved. 1 with *out the result
 * (the intent, "recovered": true), 0 when the intent is of no use, -1 with
 * err set.
 */
static int resume_intent(const child_job *cj, git_repository *repo, const rq_ident *ident,
			 json_t **out, rq_error *err)
{
	json_t *o = json_loads(cj->task->intent, 0, NULL);
	rq_replay_result todo;
	int rc;

	*out = NULL;
	memset(&todo, 0, sizeof(todo));
	rc = o ? intent_todo(repo, o, &todo, err) : 0;
	if (rc == 1 && !todo.nupdates) /* done before: its killed owner's marker may be left */
		rq_refs_clean_stale(repo);
	if (rc == 1 && todo.nupdates) {
		/* the same intent again, reflog message included */
		ask_to_apply(cj, json_deep_copy(o));
		if (apply_checked(cj, repo, &todo, ident, err) < 0)
			rc = -1;
	}
	if (rc == 1) {
		json_object_del(o, "reflog_msg");
		/* out of memory, the result stands without its mark: the refs
		 * are where it says */
		json_object_set_new(o, "recovered", json_true());
		*out = o;
		o = NULL;
	}
	for (size_t i = 0; i < todo.nupdates; i++)
		free(todo.updates[i].ref);
	free(todo.updates);
	json_decref(o);
	return rc;
}

/* 1 when the intent is a --force copy's prior result. */
static int marked_prior(const char *intent)
{
	json_t *o = json_loads(intent, 0, NULL);
	int r = json_is_true(json_object_get(o, "already_applied"));

	json_decref(o);
	return r;
}

/* A --force copy's prior result (an intent marked "already_applied"): 1
 * with *out that result when every ref it moved still holds its new id,
 * else 0 (the job replays anew). */
static int prior_holds(git_repository *repo, const char *intent, json_t **out)
{
	json_t *o = json_loads(intent, 0, NULL), *u;
	rq_ref_update tmp;
	rq_error err;
	size_t i;
	int held = o != NULL;

	json_array_foreach(json_object_get(o, "updates"), i, u)
	{
		memset(&tmp, 0, sizeof(tmp));
		if (intent_ref(repo, u, &tmp, &err) != 0)
			held = 0;
		free(tmp.ref);
	}
	if (!held) {
		json_decref(o);
		return 0;
	}
	json_object_del(o, "recovered");
	*out = o;
	return 1;
}

/*
 * What an intent says for this delivery: 1 with *out the result (a prior
 * that holds, or a finished intent), 0 replay, -1 err set.
 */
static int answer_from_intent(const child_job *cj, git_repository *repo, const rq_ident *ident,
			      json_t **out, rq_error *err)
{
	const char *intent = cj->task->intent;
	int prior;

	*out = NULL;
	if (!cj->job->ref_update || !intent)
		return 0;
	prior = marked_prior(intent);
	if (prior)
		return prior_holds(repo, intent, out);
	return resume_intent(cj, repo, ident, out, err);
}

/* ---- the replay ---- */

/* The updates of res (intent the result they make true, taken), applied
 * as the parent allows: 0, or -1 when the update failed; *applied. */
static int apply_job(const child_job *cj, git_repository *repo, const rq_replay_result *res,
		     json_t *intent, const rq_ident *ident, int *applied, rq_error *err)
{
	/* the intent also keeps the reflog message, for a retry to finish with */
	if (!intent ||
	    json_object_set_new(intent, "reflog_msg", json_string(res->reflog_msg)) < 0 ||
	    (cj->job->sign && rq_result_set_signed(intent) < 0))
		_exit(RQ_JOBRUN_EXIT_NOMEM);
	ask_to_apply(cj, intent);
	if (apply_checked(cj, repo, res, ident, err) < 0)
		return -1;
	*applied = 1;
	return 0;
}

/* Replay the job, and apply its updates as the parent allows (keep-going:
 * the clean refs' even when others conflicted): what rq_replay_run
 * returned, -1 when the update failed; *applied. */
static int replay_job(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
		      const rq_ident *ident, rq_replay_result *res, int *applied, rq_error *err)
{
	rq_replay_opts o;
	int rc;

	rq_job_replay_opts(cj->job, &o);
	o.committer = ident;
	o.objects = oo;
	o.sign = cj->job->sign ? cj->env->signer : NULL;
	rc = rq_replay_run(repo, &o, res, err);
	/* a ref the job would create where git cannot (refs/heads/main/sub
	 * beside refs/heads/main): refused in print mode too */
	if (rc >= 0 && res->nupdates && rq_refs_check_creatable(repo, res, err) < 0)
		return -1;
	if (rc < 0 || !cj->job->ref_update || (rc == 1 && (!res->keep_going || !res->nupdates)))
		return rc;
	if (apply_job(cj, repo, res, rq_result_to_json(res, rc, err, 1), ident, applied, err) < 0)
		return -1;
	return rc;
}

/* A train job, and the refs of its cars that went in applied as the
 * parent allows: what rq_train_run returned, -1 when the update failed;
 * *applied. */
static int train_job(const child_job *cj, git_repository *repo, const rq_odb_opts *oo,
		     const rq_ident *ident, rq_train_result *res, int *applied, rq_error *err)
{
	rq_train_car *cars = calloc(cj->job->ncars + 1, sizeof(*cars));
	rq_train_opts o;
	int rc;

	if (!cars)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_job_train_opts(cj->job, &o, cars);
	o.committer = ident;
	o.objects = oo;
	o.sign = cj->job->sign ? cj->env->signer : NULL;
	rc = rq_train_run(repo, &o, res, err);
	free(cars);
	if (rc >= 0 && res->replay.nupdates && rq_refs_check_creatable(repo, &res->replay, err) < 0)
		return -1;
	if (rc < 0 || !cj->job->ref_update || !res->replay.nupdates)
		return rc;
	if (apply_job(cj, repo, &res->replay, rq_result_train_to_json(res, rc, err, 1), ident,
		      applied, err) < 0)
		return -1;
	return rc;
}

/* What a child does after its result is sent: consolidate replayq's
 * packs, when due (rq_odb_repack_due), in the objects directory. */
typedef struct after_job {
	int due;
	unsigned threshold;
	char objects[PATH_MAX];
} after_job;

/* A maintenance job: replayq's packs consolidated as `replayq maintain`
 * does. 0, or -1 with err set. */
static int maintain_job(git_repository *repo, rq_odb_repack_stats *st, rq_error *err)
{
	rq_odb_repack_opts o = {0, 1, 0};
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
	if (pack[0] && !cj->env->no_consolidate)
		after->due = rq_odb_repack_due(repo, after->objects, sizeof(after->objects),
					       &after->threshold);
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
	char path[PATH_MAX], shown[SHOWN_MAX];
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
	if (sign_check(cj, &err) == 0 && open_repo(cj, path, shown, &oo, &repo, &err) == 0) {
		rq_odb_tmpdir_clean_stale(repo, 300, NULL);
		if (maintain)
			rc = maintain_job(repo, &mst, &err);
		else if (job_committer(repo, cj->task, &ident, &err) == 0 &&
			 (rc = answer_from_intent(cj, repo, &ident, &j, &err)) == 0)
			rc = replay_or_train(cj, repo, &oo, &ident, &res, &tres, &applied, after,
					     &err);
	}
	if (!j) { /* not an intent's answer */
		name_repo_as_job(&err, path, cj->env->root, cj->job->repo);
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

/* The limits of what a child does after its result: the job's deadline
 * and CPU time no longer apply (the job is over, and a short job's
 * deadline would cut every consolidation after it), a timer of
 * RQ_JOBRUN_AFTER_MS does, and the child goes with the worker (its death
 * signal set again: it was lifted before a ref update). */
static void after_limits(void)
{
	struct itimerval it;

	child_lift_limits();
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = RQ_JOBRUN_AFTER_MS / 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/*
 * After the result, which ends the job's report (the parent publishes it
 * as soon as it is in): replayq's packs consolidated when due, and what
 * that did sent as one more message, the after message. Nothing here
 * changes the result: a failure, or a kill anywhere, leaves every object
 * readable, and the next consolidation finishes the work
 * (rq_odb_repack.h). So it may be cut short at any point (after_limits).
 * Test hold point "job-after": the result sent, before the consolidation.
 */
static void after_result(const child_job *cj, const after_job *after, pid_t parent)
{
	rq_odb_repack_opts o = {after->threshold, 0, RQ_ODB_REPACK_WAIT_MS};
	rq_odb_repack_stats st;
	rq_error err;
	char *text;
	int rc;

	if (!after->due)
		return;
	after_limits();
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
	after_job after = {0, 0, ""};
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
	child_limits(&cj);
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
