/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool: forked children that run one job each and report over a pipe.
 */
#include "pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rq_confine.h"
#include "rq_objdir.h"
#include "rq_odb.h"
#include "rq_refs.h"
#include "rq_replay.h"
#include "rq_result_json.h"
#include "rq_testhook.h"

#define EXIT_NOMEM	     3
#define EXIT_ABORT	     5 /* intent or commit refused, or a granted commit failed */
#define RQ_POOL_MEM_CHECK_MS 5 /* how often the parent reads a child's resident set */
#define RQ_POOL_REAP_MS	     2 /* without a pidfd: how soon to look again at an exiting child */

typedef struct slot {
	pid_t pid;
	int fd;
	int pidfd;    /* readable when the child exits; -1 if the kernel has none */
	int go_fd;    /* parent -> child: 'g' to apply the ref updates */
	int prepared; /* the child's intent was handled */
	int aborted;
	int committed; /* told to move refs: no limit interrupts it any more */
	int checked;   /* its commit check was answered */
	char *buf;
	size_t len, cap;
	long long deadline;
	long long timeout_ms;
	long long killed_at;   /* when the parent killed it (deadline, memory) */
	long long finished_at; /* the child's clock when it sent its result */
	long long exited_at;   /* when the parent saw it exit */
	uint64_t rss_at_kill;
	int timed_out;
	int over_memory;
	int reaped;
	int wstatus;
	long attempt;
	char *id;
	char *repo;
	void *ctx;
} slot;

struct rq_pool {
	rq_pool_opts opts;
	char root[PATH_MAX];
	char worker[128];
	slot *slots;
	int running;
	long long next_mem_check;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rq_pool_new(rq_pool **out, const rq_pool_opts *opts, rq_error *err)
{
	rq_pool *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	p->opts = *opts;
	if (p->opts.jobs < 1)
		p->opts.jobs = 1;
	if (!realpath(opts->repo_root, p->root)) {
		rq_error_set(err, RQ_E_BAD_REPO, "repository root '%s': %s", opts->repo_root,
			     strerror(errno));
		free(p);
		return -1;
	}
	snprintf(p->worker, sizeof(p->worker), "%s", opts->worker ? opts->worker : "");
	p->opts.worker = p->worker;
	p->opts.repo_root = p->root;
	p->slots = calloc((size_t)p->opts.jobs, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < p->opts.jobs; i++)
		p->slots[i].fd = p->slots[i].go_fd = p->slots[i].pidfd = -1;
	*out = p;
	return 0;
}

static void slot_clear(slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s->buf);
	free(s->id);
	free(s->repo);
	memset(s, 0, sizeof(*s));
	s->fd = s->go_fd = s->pidfd = -1;
}

void rq_pool_free(rq_pool *p)
{
	if (!p)
		return;
	rq_pool_kill_all(p, NULL, NULL);
	free(p->slots);
	free(p);
}

int rq_pool_idle_slots(const rq_pool *p)
{
	return p->opts.jobs - p->running;
}

int rq_pool_running(const rq_pool *p)
{
	return p->running;
}

/* --- the child ---------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Resolve the job's repository under the root; symlinks may not escape. */
static int resolve_repo(const char *root, const char *rel, char *out, rq_error *err)
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

#define SHOWN_MAX (PATH_MAX + RQ_JOB_REPO_MAX + 16)

/*
 * Open the job's repository and hold it to the root: every path its files
 * name resolves inside (rq_confine), and its objects are read through
 * rq_odb with the root's alternates policy. shown receives how messages
 * name its objects directory (the job's repo, not the worker's path).
 */
static int open_repo(const rq_pool *p, const rq_job *job, char *path, char *shown,
		     git_repository **repo, rq_error *err)
{
	git_buf objects = GIT_BUF_INIT;
	rq_odb_opts oo = {p->root, p->opts.alternates_anywhere, NULL};
	size_t pl;
	int rc;

	path[0] = '\0';
	if (resolve_repo(p->root, job->repo, path, err) < 0)
		return -1;
	pl = strlen(path);
	if (git_repository_open_ext(repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return rq_error_set(err, RQ_E_BAD_REPO, "'%s' is not a git repository", job->repo);
	if (rq_confine_repo(*repo, p->root, err) < 0)
		return -1;
	if (git_repository_item_path(&objects, *repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0) {
		git_buf_dispose(&objects);
		return rq_error_git(err, "cannot find the objects directory");
	}
	while (objects.size > 1 && objects.ptr[objects.size - 1] == '/')
		objects.ptr[--objects.size] = '\0';
	if (!strncmp(objects.ptr, path, pl) && objects.ptr[pl] == '/')
		snprintf(shown, SHOWN_MAX, "%s/%s", job->repo, objects.ptr + pl + 1);
	else
		snprintf(shown, SHOWN_MAX, "%s/objects", job->repo);
	oo.objects_shown = shown;
	rc = rq_odb_install(*repo, &oo, err);
	git_buf_dispose(&objects);
	return rc;
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

static int job_committer(git_repository *repo, const rq_job *job, int64_t default_time,
			 rq_ident *id, rq_error *err)
{
	const char *n = getenv("REPLAYQ_COMMITTER_NAME"), *e = getenv("REPLAYQ_COMMITTER_EMAIL");

	if (job->has_name) {
		*id = job->committer;
	} else if (n && e) {
		if (rq_ident_set(id, n, e, err) < 0)
			return -1;
	} else if (rq_ident_default(repo, id, err) < 0) {
		return -1;
	}
	if (job->has_time) {
		id->time = job->committer.time;
		id->tz = job->committer.tz;
	} else {
		id->time = default_time;
		id->tz = 0;
	}
	return 0;
}

/* Serialize a result, with the job's id, repo, attempt and worker. */
static char *result_text(json_t *j, const rq_pool *p, const rq_job *job, long attempt)
{
	char *s;
	if (!j)
		return NULL;
	json_object_set_new(j, "id", json_string(job->id));
	json_object_set_new(j, "repo", json_string(job->repo));
	json_object_set_new(j, "attempt", json_integer(attempt));
	json_object_set_new(j, "worker", json_string(p->worker));
	s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	return s;
}

/*
 * Send a framed message: a type byte, the sender's monotonic clock in
 * milliseconds and a space, the JSON, a NUL. The parent judges a result
 * against its deadline by the time the child finished, not by the time the
 * parent got round to reading it.
 */
static long long clock_skew_ms; /* test hook REPLAYQ_TEST_LATE: a child that is late */

static int send_msg(int fd, char type, const char *json)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%c%lld ", type, now_ms() + clock_skew_ms);

	if (write_all(fd, head, (size_t)n) < 0 || write_all(fd, json, strlen(json) + 1) < 0)
		return -1;
	return 0;
}

/* --- limits the kernel enforces in the child ----------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#define RQ_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RQ_POOL_ASAN 1
#endif
#endif

int rq_pool_kernel_memory_limit(void)
{
#ifdef RQ_POOL_ASAN
	return 0; /* the sanitizer's shadow memory counts as data: no limit fits */
#else
	return 1;
#endif
}

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

/*
 * A child stops by itself even when the parent cannot watch it in time
 * (busy storing a result while Redis is away, stopped, swapped out):
 * SIGALRM at the deadline, SIGXCPU one second of CPU time after it, and,
 * with a memory limit, no private memory beyond twice the limit above what
 * it inherited (RLIMIT_DATA counts memory reserved, not only touched, so it
 * is looser than the parent's resident-set limit).
 */
static void child_limits(const rq_pool *p, long long deadline, long long timeout_ms)
{
	long long left = deadline - now_ms();
	struct itimerval it;
	struct rlimit rl;

	if (left <= 0)
		raise(SIGALRM);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(left / 1000);
	it.it_value.tv_usec = (suseconds_t)(left % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	if (getrlimit(RLIMIT_CPU, &rl) == 0) {
		rlim_t cpu = (rlim_t)(timeout_ms / 1000 + 2);
		if (rl.rlim_max == RLIM_INFINITY || cpu < rl.rlim_max) {
			rl.rlim_cur = cpu;
			setrlimit(RLIMIT_CPU, &rl);
		}
	}
	if (p->opts.memory_limit && rq_pool_kernel_memory_limit() &&
	    getrlimit(RLIMIT_DATA, &rl) == 0) {
		rlim_t data = (rlim_t)(own_data_bytes() + 2 * p->opts.memory_limit);
		if (rl.rlim_max == RLIM_INFINITY || data < rl.rlim_max) {
			rl.rlim_cur = data;
			setrlimit(RLIMIT_DATA, &rl);
		}
	}
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

/* The write-ahead handshake before any ref moves: the parent records the
 * intent (the result this job is about to make true), then says go. */
static void ask_to_apply(const rq_pool *p, const rq_job *job, long attempt, json_t *intent,
			 int out_fd, int go_fd)
{
	char go = 0, *text;
	ssize_t r;

	if (go_fd < 0) {
		json_decref(intent);
		return;
	}
	text = result_text(intent, p, job, attempt);
	if (!text || send_msg(out_fd, 'P', text) < 0)
		_exit(text ? 1 : EXIT_NOMEM);
	free(text);
	while ((r = read(go_fd, &go, 1)) < 0 && errno == EINTR)
		;
	if (r != 1 || go != 'g')
		_exit(EXIT_ABORT);
	child_lift_limits();
}

/* The commit check, under the ref locks: the parent confirms the job is
 * still this worker's ('c'), or not ('a': the locks are released, nothing
 * moves, the child ends as aborted). */
typedef struct commit_ask {
	int out_fd, go_fd, refused, granted;
} commit_ask;

static int ask_to_commit(void *arg)
{
	commit_ask *a = arg;
	char reply = 0;
	ssize_t r;

	if (a->go_fd < 0)
		return 0;
	if (send_msg(a->out_fd, 'C', "{}") < 0)
		return a->refused = -1;
	while ((r = read(a->go_fd, &reply, 1)) < 0 && errno == EINTR)
		;
	if (r != 1 || reply != 'c')
		return a->refused = -1;
	a->granted = 1;
	return 0;
}

/* Apply under the commit check; a refused commit ends the child. So does
 * a commit that failed after it was granted (some refs may have moved):
 * no result is sent, the job is left for a retry, which finishes the
 * update from its intent, so that no error result is stored while refs
 * moved. */
static int apply_checked(git_repository *repo, const rq_replay_result *res, const rq_ident *ident,
			 int out_fd, int go_fd, rq_error *err)
{
	commit_ask a = {out_fd, go_fd, 0, 0};
	int rc = rq_refs_apply_checked(repo, res, ident, ask_to_commit, &a, err);

	if (a.refused || (rc < 0 && a.granted && go_fd >= 0))
		_exit(EXIT_ABORT);
	return rc;
}

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
	if (!have || !(out->ref = strdup(ref)))
		return -2; /* its objects are gone: replay again */
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
static int resume_intent(const rq_pool *p, git_repository *repo, const rq_job *job, long attempt,
			 const char *intent, const rq_ident *ident, int fds[2], json_t **out,
			 rq_error *err)
{
	json_t *o = json_loads(intent, 0, NULL), *ups = o ? json_object_get(o, "updates") : NULL;
	rq_replay_result todo;
	size_t i, n = json_array_size(ups);
	json_t *u;
	int rc = 0;

	*out = NULL;
	memset(&todo, 0, sizeof(todo));
	if (!n || !(todo.updates = calloc(n, sizeof(*todo.updates))))
		goto done;
	json_array_foreach(ups, i, u)
	{
		int r = intent_ref(repo, u, &todo.updates[todo.nupdates], err);
		if (r < 0) {
			rc = r == -1 ? -1 : 0;
			goto done;
		}
		todo.nupdates += (size_t)r;
	}
	snprintf(todo.reflog_msg, sizeof(todo.reflog_msg), "%s",
		 json_string_value(json_object_get(o, "reflog_msg"))
		     ? json_string_value(json_object_get(o, "reflog_msg"))
		     : "replay");
	if (!todo.nupdates) /* done before: its killed owner's marker may be left */
		rq_refs_clean_stale(repo);
	if (todo.nupdates) {
		/* the same intent again, reflog message included */
		ask_to_apply(p, job, attempt, json_deep_copy(o), fds[0], fds[1]);
		if (apply_checked(repo, &todo, ident, fds[0], fds[1], err) < 0) {
			rc = -1;
			goto done;
		}
	}
	json_object_del(o, "reflog_msg");
	json_object_set_new(o, "recovered", json_true());
	*out = o;
	o = NULL;
	rc = 1;
done:
	for (i = 0; i < todo.nupdates; i++)
		free(todo.updates[i].ref);
	free(todo.updates);
	json_decref(o);
	return rc;
}

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

static char *run_job(const rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		     const char *intent, int out_fd, int go_fd)
{
	char path[PATH_MAX], shown[SHOWN_MAX];
	git_repository *repo = NULL;
	rq_odb_opts oo = {0};
	rq_replay_opts o;
	rq_replay_result res;
	rq_ident ident;
	rq_error err;
	int rc = -1, applied = 0;
	json_t *j;
	char *s;

	memset(&res, 0, sizeof(res));
	rq_error_clear(&err);
	if (open_repo(p, job, path, shown, &repo, &err) < 0)
		goto done;
	oo.root = p->root;
	oo.alternates_anywhere = p->opts.alternates_anywhere;
	oo.objects_shown = shown;
	rq_objdir_clean_stale(repo, 300, NULL);
	if (job_committer(repo, job, default_time, &ident, &err) < 0)
		goto done;
	int prior = job->ref_update && intent && marked_prior(intent);
	if (prior && prior_holds(repo, intent, &j)) {
		git_repository_free(repo);
		return result_text(j, p, job, attempt);
	}
	if (job->ref_update && intent && !prior) {
		int fds[2] = {out_fd, go_fd};
		int r = resume_intent(p, repo, job, attempt, intent, &ident, fds, &j, &err);
		if (r == 1) {
			git_repository_free(repo);
			return result_text(j, p, job, attempt);
		}
		if (r < 0)
			goto done;
	}
	rq_job_replay_opts(job, &o);
	o.committer = &ident;
	o.objects = &oo;
	rc = rq_replay_run(repo, &o, &res, &err);
	if (rc == 0 && job->ref_update) {
		json_t *pj = rq_result_to_json(&res, 0, &err, 1);
		/* the intent also keeps the reflog message, for a retry to finish with */
		if (pj)
			json_object_set_new(pj, "reflog_msg", json_string(res.reflog_msg));
		ask_to_apply(p, job, attempt, pj, out_fd, go_fd);
		if (apply_checked(repo, &res, &ident, out_fd, go_fd, &err) < 0)
			rc = -1;
		else
			applied = 1;
	}
done:
	name_repo_as_job(&err, path, p->root, job->repo);
	j = rq_result_to_json(&res, rc, &err, applied);
	rq_replay_result_free(&res);
	git_repository_free(repo);
	s = result_text(j, p, job, attempt);
	return s;
}

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
static void hook_alloc(const rq_pool *p, const rq_job *job, long attempt, int fd, long mib)
{
	size_t n = (size_t)mib << 20;
	char *m = malloc(n), *res;

	if (m) {
		memset(m, 1, n);
		__asm__ volatile("" : : "r"(m) : "memory"); /* keep it */
		return;
	}
	res = rq_result_error_text(job->id, job->repo, RQ_E_NOMEM, "out of memory", attempt,
				   p->worker);
	if (res)
		send_msg(fd, 'R', res);
	free(res);
	_exit(0);
}

/*
 * Test hooks: REPLAYQ_TEST_CRASH=<id> crashes the child;
 * REPLAYQ_TEST_ALLOC=<id>:<MiB> makes it allocate and touch that much
 * memory; REPLAYQ_TEST_LATE=<id>[@<delivery>]:<ms> makes its clock that
 * much late, as a child that finished after its deadline would be; the
 * rq_testhook points
 * "job:<id>" and "job:<id>@<delivery>" (see rq_testhook.h) hold it.
 */
static void child_test_hooks(const rq_pool *p, const rq_job *job, long attempt, int fd)
{
	const char *crash = getenv("REPLAYQ_TEST_CRASH"), *v;
	char point[RQ_JOB_ID_MAX + 32];

	if (crash && !strcmp(crash, job->id))
		raise(SIGSEGV);
	if ((v = hook_value("REPLAYQ_TEST_ALLOC", job->id)))
		hook_alloc(p, job, attempt, fd, atol(v));
	snprintf(point, sizeof(point), "%s@%ld", job->id, attempt);
	if ((v = hook_value("REPLAYQ_TEST_LATE", job->id)) ||
	    (v = hook_value("REPLAYQ_TEST_LATE", point)))
		clock_skew_ms = atoll(v);
	snprintf(point, sizeof(point), "job:%s", job->id);
	rq_testhook_hold(point);
	snprintf(point, sizeof(point), "job:%s@%ld", job->id, attempt);
	rq_testhook_hold(point);
}

static void child_main(const rq_pool *p, int fd, int go_fd, pid_t parent, const rq_job *job,
		       int64_t default_time, long attempt, const char *intent, long long deadline)
{
	char *s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGINT, SIG_IGN); /* a terminal's ^C drains the worker, not the job */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, SIG_DFL);
	signal(SIGXCPU, SIG_DFL);
	child_limits(p, deadline, job->timeout_ms);
	child_test_hooks(p, job, attempt, fd);
	git_libgit2_init();
	s = run_job(p, job, default_time, attempt, intent, fd, go_fd);
	if (!s)
		_exit(EXIT_NOMEM);
	if (send_msg(fd, 'R', s) < 0)
		_exit(1);
	close(fd);
	_exit(0);
}

static void close_pair(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

/* In a new child: close the parent's ends of the other children's pipes. */
static void child_close_others(const rq_pool *p, int go_write)
{
	if (go_write >= 0)
		close(go_write);
	for (int i = 0; i < p->opts.jobs; i++) {
		if (p->slots[i].fd >= 0)
			close(p->slots[i].fd);
		if (p->slots[i].go_fd >= 0)
			close(p->slots[i].go_fd);
		if (p->slots[i].pidfd >= 0)
			close(p->slots[i].pidfd);
	}
}

static void slot_start(slot *s, pid_t pid, int fd, int go_fd, const rq_job *job, long long deadline,
		       long attempt, void *ctx)
{
	s->pid = pid;
	s->fd = fd;
	s->go_fd = go_fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (go_fd >= 0)
		fcntl(go_fd, F_SETFD, FD_CLOEXEC);
#ifdef SYS_pidfd_open
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd >= 0)
		fcntl(s->pidfd, F_SETFD, FD_CLOEXEC);
#endif
	s->deadline = deadline;
	s->timeout_ms = job->timeout_ms;
	s->attempt = attempt;
	s->id = strdup(job->id);
	s->repo = strdup(job->repo);
	s->ctx = ctx;
}

int rq_pool_spawn(rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		  const char *intent, void *ctx, rq_error *err)
{
	int fds[2] = {-1, -1}, go[2] = {-1, -1};
	slot *s = NULL;
	pid_t pid, parent = getpid();
	long long deadline;

	for (int i = 0; i < p->opts.jobs && !s; i++)
		if (!p->slots[i].pid)
			s = &p->slots[i];
	if (!s)
		return rq_error_set(err, RQ_E_INTERNAL, "no free slot");
	/* a job that moves refs asks the parent first (go pipe), so that the
	 * parent knows when no limit may interrupt it any more */
	if (pipe(fds) < 0 || (job->ref_update && pipe(go) < 0)) {
		rq_error_set(err, RQ_E_IO, "pipe: %s", strerror(errno));
		close_pair(fds);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	deadline = now_ms() + job->timeout_ms;
	pid = fork();
	if (pid < 0) {
		rq_error_set(err, RQ_E_IO, "fork: %s", strerror(errno));
		close_pair(fds);
		close_pair(go);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child_close_others(p, go[1]);
		child_main(p, fds[1], go[0], parent, job, default_time, attempt, intent, deadline);
		_exit(1);
	}
	close(fds[1]);
	if (go[0] >= 0)
		close(go[0]);
	slot_start(s, pid, fds[0], go[1], job, deadline, attempt, ctx);
	p->running++;
	return 0;
}

/* Resident set size of a process, from /proc; 0 if unknown. */
static uint64_t resident_bytes(pid_t pid)
{
	char path[64];
	unsigned long long size = 0, resident = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void read_some(slot *s)
{
	for (;;) {
		if (s->cap - s->len < 4096) {
			size_t ncap = s->cap ? s->cap * 2 : 8192;
			char *nb = realloc(s->buf, ncap);
			if (!nb)
				return;
			s->buf = nb;
			s->cap = ncap;
		}
		ssize_t r = read(s->fd, s->buf + s->len, s->cap - s->len - 1);
		if (r > 0) {
			s->len += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		close(s->fd); /* EOF or error */
		s->fd = -1;
		return;
	}
}

/* Remove a killed child's temporary object directory right away. */
static void clean_child_objdir(const rq_pool *p, const slot *s)
{
	char path[PATH_MAX];
	static const char *const objdirs[] = {"objects", ".git/objects"};
	rq_error err;

	if (resolve_repo(p->root, s->repo, path, &err) < 0)
		return;
	for (int i = 0; i < 2; i++) {
		char dir[PATH_MAX * 2], real[PATH_MAX], prefix[64];
		size_t rl = strlen(p->root);
		DIR *d;
		struct dirent *e;
		snprintf(dir, sizeof(dir), "%s/%s", path, objdirs[i]);
		snprintf(prefix, sizeof(prefix), "replayq-tmp-%ld@", (long)s->pid);
		/* only inside the root, whatever the repository's links say */
		if (!realpath(dir, real) || strncmp(real, p->root, rl) || real[rl] != '/' ||
		    !(d = opendir(real)))
			continue;
		while ((e = readdir(d))) {
			char victim[PATH_MAX * 3];
			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(victim, sizeof(victim), "%s/%s", real, e->d_name);
			rq_objdir_rmtree(victim);
		}
		closedir(d);
	}
}

/* The JSON of a framed message (see send_msg); *ms: the sender's clock. */
static const char *msg_json(const char *m, long long *ms)
{
	char *end;

	*ms = strtoll(m + 1, &end, 10);
	return *end == ' ' ? end + 1 : NULL;
}

static void kill_slot(slot *s, long long now)
{
	kill(s->pid, SIGKILL);
	s->killed_at = now;
}

/* 1 when a whole message of this type heads the buffer. */
static int head_msg(const slot *s, char type)
{
	return s->len > 1 && s->buf[0] == type && memchr(s->buf, '\0', s->len) != NULL;
}

/* Drop the message at the head of the buffer. */
static void drop_msg(slot *s)
{
	size_t mlen = (size_t)((char *)memchr(s->buf, '\0', s->len) - s->buf) + 1;

	memmove(s->buf, s->buf + mlen, s->len - mlen);
	s->len -= mlen;
}

/* Answer the child on its go pipe; the pipe stays open only when kept. */
static void reply_go(slot *s, char reply, int keep)
{
	if (s->go_fd < 0)
		return;
	if (write_all(s->go_fd, &reply, 1) < 0) {
		s->aborted = 1;
		keep = 0;
	} else if (reply == 'g') {
		s->committed = 1;
	}
	if (!keep) {
		close(s->go_fd);
		s->go_fd = -1;
	}
}

/* A complete 'P' (prepare) message at the head of the buffer: record the
 * intent through the callback, then let the child apply or abort. Past its
 * deadline, a job may not start moving refs: it is killed as timed out. A
 * child already gone gets nothing: how it ended says what happened. */
static void handle_prepare(rq_pool *p, slot *s)
{
	long long sent, now = now_ms(); /* this very moment: the intent call blocks */
	const char *json;
	char go = 'a';

	if (s->prepared || !head_msg(s, 'P'))
		return;
	s->prepared = 1;
	json = msg_json(s->buf, &sent);
	if (!s->reaped) {
		if (now >= s->deadline && !s->timed_out && !s->over_memory) {
			s->timed_out = 1;
			kill_slot(s, now);
		} else if (json && !s->timed_out && !s->over_memory &&
			   (!p->opts.intent ||
			    p->opts.intent(p->opts.intent_arg, s->ctx, json) == 0)) {
			go = 'g';
		}
		if (go != 'g')
			s->aborted = 1;
		reply_go(s, go, go == 'g'); /* kept for the commit check */
	}
	drop_msg(s);
}

/* A complete 'C' (commit check) message, the child holding its ref locks:
 * the job must still be this worker's (owns), or nothing moves. */
static void handle_check(rq_pool *p, slot *s)
{
	char reply;

	if (!s->committed || s->checked || !head_msg(s, 'C'))
		return;
	s->checked = 1;
	reply = !p->opts.owns || p->opts.owns(p->opts.intent_arg, s->ctx) == 1 ? 'c' : 'a';
	if (reply != 'c')
		s->aborted = 1;
	reply_go(s, reply, 0);
	drop_msg(s);
}

/* The error result the parent writes for a job that gave none in time. */
static char *slot_error(const rq_pool *p, const slot *s, rq_code code, const char *msg,
			long long overrun)
{
	char *text = rq_result_error_text(s->id, s->repo, code, msg, s->attempt, p->worker), *out;
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;

	if (!j)
		return text;
	if (code == RQ_E_TIMEOUT) {
		json_object_set_new(j, "timeout_ms", json_integer(s->timeout_ms));
		json_object_set_new(j, "overrun_ms", json_integer(overrun));
	}
	if (s->over_memory)
		json_object_set_new(j, "rss_bytes", json_integer((json_int_t)s->rss_at_kill));
	out = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	free(text);
	return out;
}

/* Why a child that gave no usable result stopped, as an error result. */
static char *slot_failure(const rq_pool *p, slot *s, int *transient)
{
	char msg[256];
	rq_code code = RQ_E_CRASHED;
	long long overrun = 0;
	int sig = WIFSIGNALED(s->wstatus) ? WTERMSIG(s->wstatus) : 0;

	if (s->over_memory) {
		code = RQ_E_NOMEM;
		snprintf(msg, sizeof(msg),
			 "the job used %llu MiB, more than its memory limit of %llu MiB, and was "
			 "killed",
			 (unsigned long long)(s->rss_at_kill >> 20),
			 (unsigned long long)(p->opts.memory_limit >> 20));
	} else if (s->timed_out || sig == SIGALRM || sig == SIGXCPU) {
		long long at = s->killed_at ? s->killed_at : s->exited_at;
		code = RQ_E_TIMEOUT;
		overrun = at > s->deadline ? at - s->deadline : 0;
		snprintf(msg, sizeof(msg),
			 "the job ran past its deadline of %lld ms (by %lld ms) and was killed%s",
			 s->timeout_ms, overrun,
			 s->timed_out	  ? ""
			 : sig == SIGALRM ? " by its own deadline timer"
					  : " by its CPU time limit");
	} else if (sig) {
		snprintf(msg, sizeof(msg), "the process running the job died of signal %d (%s)",
			 sig, strsignal(sig));
	} else if (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == EXIT_NOMEM) {
		code = RQ_E_NOMEM;
		snprintf(msg, sizeof(msg), "the job ran out of memory");
	} else {
		snprintf(msg, sizeof(msg), "the process running the job exited with status %d",
			 WIFEXITED(s->wstatus) ? WEXITSTATUS(s->wstatus) : -1);
	}
	*transient = code == RQ_E_CRASHED || code == RQ_E_TIMEOUT;
	clean_child_objdir(p, s); /* also after a memory kill: SIGKILL cleans nothing */
	return slot_error(p, s, code, msg, overrun);
}

/* A result that came after the deadline: the job did not finish in time.
 * Not when it was already moving refs (committed, or applied without
 * asking): then the result is what happened, and it stands. */
static char *late_result(const rq_pool *p, slot *s, json_t *j, long long finished)
{
	char msg[256];
	long long overrun = finished - s->deadline;

	if (s->committed || overrun <= 0 || json_is_true(json_object_get(j, "applied")))
		return NULL;
	snprintf(msg, sizeof(msg),
		 "the job finished %lld ms past its deadline of %lld ms; its result was discarded",
		 overrun, s->timeout_ms);
	clean_child_objdir(p, s);
	return slot_error(p, s, RQ_E_TIMEOUT, msg, overrun);
}

static void finish_slot(rq_pool *p, slot *s, rq_pool_done_fn done, void *arg)
{
	char *result = NULL;
	const char *status = "error", *json = NULL;
	int transient = 0;
	long long finished = 0;
	json_t *j = NULL;

	if ((s->aborted && !s->timed_out && !s->over_memory) ||
	    (!s->timed_out && WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == EXIT_ABORT)) {
		/* the intent or the commit was refused (no ref moved), or a granted
		 * commit failed part-way: leave the job; its retry finishes it */
		clean_child_objdir(p, s);
		done(arg, s->ctx, NULL, "error", 1);
		slot_clear(s);
		p->running--;
		return;
	}
	if (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == 0 && s->buf && s->len > 1 &&
	    s->buf[0] == 'R') {
		s->buf[s->len] = '\0';
		if ((json = msg_json(s->buf, &finished)))
			j = json_loads(json, 0, NULL);
	}
	if (j && json_is_string(json_object_get(j, "status"))) {
		if ((result = late_result(p, s, j, finished))) {
			transient = 1;
		} else {
			const char *code =
			    json_string_value(json_object_get(json_object_get(j, "error"), "code"));
			status = json_string_value(json_object_get(j, "status"));
			result = strdup(json);
			/* a ref locked by a live process: the job is worth a retry */
			transient = code && !strcmp(code, "ref_locked");
		}
	} else {
		result = slot_failure(p, s, &transient);
	}
	if (result)
		done(arg, s->ctx, result, status, transient);
	json_decref(j);
	free(result);
	slot_clear(s);
	p->running--;
}

int rq_pool_pollfds(const rq_pool *p, struct pollfd *pfd, int max, int *timeout_ms)
{
	long long now = now_ms(), next = -1;
	int n = 0;

	for (int i = 0; i < p->opts.jobs; i++) {
		const slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (s->fd >= 0 && n < max)
			pfd[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
		if (s->pidfd >= 0 && !s->reaped && n < max)
			pfd[n++] = (struct pollfd){.fd = s->pidfd, .events = POLLIN};
		/* (a child whose whole result is in wakes us through its pidfd) */
		if (!s->committed && !s->timed_out && !head_msg(s, 'R') &&
		    (next < 0 || s->deadline < next))
			next = s->deadline;
		if (s->pidfd < 0 && s->fd < 0) /* exiting, and nothing to wait on */
			next =
			    next < 0 || now + RQ_POOL_REAP_MS < next ? now + RQ_POOL_REAP_MS : next;
	}
	if (p->running && p->opts.memory_limit && (next < 0 || p->next_mem_check < next))
		next = p->next_mem_check;
	if (next >= 0) {
		long long wait = next > now ? next - now : 0;
		if (*timeout_ms < 0 || wait < *timeout_ms)
			*timeout_ms = (int)wait;
	}
	return n;
}

/* Enforce the deadline and the memory limit of one child. */
static void watch_slot(const rq_pool *p, slot *s, long long now, int mem_check)
{
	uint64_t rss;

	if (s->committed || s->reaped || s->timed_out || s->over_memory)
		return;
	/* a whole result is in: judged by its own time when the child exits */
	if (head_msg(s, 'R'))
		return;
	if (now >= s->deadline) {
		s->timed_out = 1;
		kill_slot(s, now);
	} else if (mem_check && (rss = resident_bytes(s->pid)) > p->opts.memory_limit) {
		s->over_memory = 1;
		s->rss_at_kill = rss;
		kill_slot(s, now);
	}
}

void rq_pool_process(rq_pool *p, rq_pool_done_fn done, void *arg)
{
	long long now = now_ms();
	int mem_check = p->opts.memory_limit && now >= p->next_mem_check;

	if (mem_check)
		p->next_mem_check = now + RQ_POOL_MEM_CHECK_MS;
	for (int i = 0; i < p->opts.jobs; i++) {
		slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (s->fd >= 0)
			read_some(s);
		/* reap first: a child that ended by itself is not killed as well */
		if (!s->reaped && waitpid(s->pid, &s->wstatus, WNOHANG) == s->pid) {
			s->reaped = 1;
			s->exited_at = now_ms();
			if (s->fd >= 0)
				read_some(s);
		}
		handle_prepare(p, s);
		handle_check(p, s);
		watch_slot(p, s, now, mem_check);
		if (s->reaped && s->fd < 0)
			finish_slot(p, s, done, arg);
	}
}

int rq_pool_poll(rq_pool *p, int timeout_ms, rq_pool_done_fn done, void *arg)
{
	struct pollfd pfd[2 * RQ_POOL_MAX_JOBS];
	int n = rq_pool_pollfds(p, pfd, 2 * RQ_POOL_MAX_JOBS, &timeout_ms);

	if (n || timeout_ms > 0)
		poll(pfd, (nfds_t)n, timeout_ms);
	rq_pool_process(p, done, arg);
	return 0;
}

void rq_pool_kill_all(rq_pool *p, void (*dropped)(void *arg, void *ctx), void *arg)
{
	for (int i = 0; i < p->opts.jobs; i++) {
		slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (!s->reaped) {
			/* one moving refs is let finish: a kill could cut it half-way.
			 * Its pipes close first: a commit check it waits for is then
			 * refused (it releases its locks), a result it writes fails */
			if (s->go_fd >= 0) {
				close(s->go_fd);
				s->go_fd = -1;
			}
			if (s->fd >= 0) {
				close(s->fd);
				s->fd = -1;
			}
			if (!s->committed)
				kill(s->pid, SIGKILL);
			waitpid(s->pid, &s->wstatus, 0);
		}
		clean_child_objdir(p, s);
		if (dropped)
			dropped(arg, s->ctx);
		slot_clear(s);
		p->running--;
	}
}
