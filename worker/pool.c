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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rq_objdir.h"
#include "rq_replay.h"
#include "rq_result_json.h"

#define EXIT_NOMEM 3
#define EXIT_ABORT 5 /* the parent could not record the intent */

typedef struct slot {
	pid_t pid;
	int fd;
	int go_fd;    /* parent -> child: 'g' to apply the ref updates */
	int prepared; /* the child's intent was handled */
	int aborted;
	char *buf;
	size_t len, cap;
	long long deadline;
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
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *rq_error_result(const char *id, const char *repo, rq_code code, const char *msg, long attempt,
		      const char *worker)
{
	rq_error e;
	json_t *o;
	char *s;

	rq_error_set(&e, code, "%s", msg);
	o = rq_result_to_json(NULL, -1, &e, 0);
	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_string(id ? id : ""));
	if (repo)
		json_object_set_new(o, "repo", json_string(repo));
	json_object_set_new(o, "attempt", json_integer(attempt));
	json_object_set_new(o, "worker", json_string(worker ? worker : ""));
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(o);
	return s;
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
		p->slots[i].fd = p->slots[i].go_fd = -1;
	*out = p;
	return 0;
}

static void slot_clear(slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->go_fd >= 0)
		close(s->go_fd);
	free(s->buf);
	free(s->id);
	free(s->repo);
	memset(s, 0, sizeof(*s));
	s->fd = s->go_fd = -1;
}

void rq_pool_free(rq_pool *p)
{
	if (!p)
		return;
	rq_pool_kill_all(p, NULL, NULL);
	free(p->slots);
	free(p);
}

int rq_pool_free_slots(const rq_pool *p)
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

/* The intent's updates are all in place already: 1, else 0. */
static int intent_applied(git_repository *repo, const char *intent)
{
	json_t *o = json_loads(intent, 0, NULL), *u;
	size_t i;
	int all = 0;

	if (o && json_is_array(json_object_get(o, "updates")) &&
	    json_array_size(json_object_get(o, "updates")) > 0) {
		all = 1;
		json_array_foreach(json_object_get(o, "updates"), i, u)
		{
			const char *ref = json_string_value(json_object_get(u, "ref"));
			const char *nw = json_string_value(json_object_get(u, "new"));
			git_oid want, cur;
			if (!ref || !nw || git_oid_fromstr(&want, nw) < 0 ||
			    git_reference_name_to_id(&cur, repo, ref) < 0 ||
			    !git_oid_equal(&cur, &want))
				all = 0;
		}
	}
	json_decref(o);
	return all;
}

static int write_all(int fd, const char *s, size_t n);

/* Send a framed message: a type byte, the JSON, a NUL. */
static int send_msg(int fd, char type, const char *json)
{
	if (write_all(fd, &type, 1) < 0 || write_all(fd, json, strlen(json) + 1) < 0)
		return -1;
	return 0;
}

static char *run_job(const rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		     const char *intent, int out_fd, int go_fd)
{
	char path[PATH_MAX];
	git_repository *repo = NULL;
	rq_replay_opts o;
	rq_replay_result res;
	rq_ident ident;
	rq_error err;
	int rc = -1, applied = 0;
	json_t *j;
	char *s;

	memset(&res, 0, sizeof(res));
	rq_error_clear(&err);
	if (resolve_repo(p->root, job->repo, path, &err) < 0)
		goto done;
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		rq_error_set(&err, RQ_E_BAD_REPO, "'%s' is not a git repository", job->repo);
		goto done;
	}
	rq_objdir_clean_stale(repo, 300, NULL);
	if (job->ref_update && intent && intent_applied(repo, intent)) {
		/* an earlier delivery applied these updates, then its worker died */
		git_repository_free(repo);
		j = json_loads(intent, 0, NULL);
		if (j)
			json_object_set_new(j, "recovered", json_true());
		return result_text(j, p, job, attempt);
	}
	if (job_committer(repo, job, default_time, &ident, &err) < 0)
		goto done;
	rq_job_replay_opts(job, &o);
	o.committer = &ident;
	rc = rq_replay_run(repo, &o, &res, &err);
	if (rc == 0 && job->ref_update) {
		if (go_fd >= 0) {
			/* write-ahead: the parent records the result before any ref moves */
			char go = 0, *prepared = result_text(rq_result_to_json(&res, 0, &err, 1), p,
							     job, attempt);
			ssize_t r;
			if (!prepared || send_msg(out_fd, 'P', prepared) < 0)
				_exit(prepared ? 1 : EXIT_NOMEM);
			free(prepared);
			while ((r = read(go_fd, &go, 1)) < 0 && errno == EINTR)
				;
			if (r != 1 || go != 'g')
				_exit(EXIT_ABORT);
		}
		if (rq_replay_apply(repo, &res, &ident, &err) < 0)
			rc = -1;
		else
			applied = 1;
	}
done:
	j = rq_result_to_json(&res, rc, &err, applied);
	rq_replay_result_free(&res);
	git_repository_free(repo);
	s = result_text(j, p, job, attempt);
	return s;
}

static void child_main(const rq_pool *p, int fd, int go_fd, pid_t parent, const rq_job *job,
		       int64_t default_time, long attempt, const char *intent)
{
	char *s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGINT, SIG_IGN); /* a terminal's ^C drains the worker, not the job */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("REPLAYQ_TEST_CRASH") && !strcmp(getenv("REPLAYQ_TEST_CRASH"), job->id))
		raise(SIGSEGV);		    /* test hook: a child that crashes */
	if (getenv("REPLAYQ_TEST_DELAY")) { /* test hook: "<job id>:<ms>", a slow child */
		const char *d = getenv("REPLAYQ_TEST_DELAY"), *c = strrchr(d, ':');
		if (c && (size_t)(c - d) == strlen(job->id) &&
		    !strncmp(d, job->id, (size_t)(c - d))) {
			long ms = atol(c + 1);
			struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
	}
	git_libgit2_init();
	s = run_job(p, job, default_time, attempt, intent, fd, go_fd);
	if (!s)
		_exit(EXIT_NOMEM);
	if (send_msg(fd, 'R', s) < 0)
		_exit(1);
	close(fd);
	_exit(0);
}

int rq_pool_spawn(rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		  const char *intent, void *ctx, rq_error *err)
{
	int fds[2], go[2] = {-1, -1};
	slot *s = NULL;
	pid_t pid, parent = getpid();

	for (int i = 0; i < p->opts.jobs; i++)
		if (!p->slots[i].pid) {
			s = &p->slots[i];
			break;
		}
	if (!s)
		return rq_error_set(err, RQ_E_INTERNAL, "no free slot");
	if (pipe(fds) < 0)
		return rq_error_set(err, RQ_E_IO, "pipe: %s", strerror(errno));
	if (p->opts.intent && job->ref_update && pipe(go) < 0) {
		close(fds[0]);
		close(fds[1]);
		return rq_error_set(err, RQ_E_IO, "pipe: %s", strerror(errno));
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		if (go[0] >= 0) {
			close(go[0]);
			close(go[1]);
		}
		return rq_error_set(err, RQ_E_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		if (go[1] >= 0)
			close(go[1]);
		for (int i = 0; i < p->opts.jobs; i++) {
			if (p->slots[i].fd >= 0)
				close(p->slots[i].fd);
			if (p->slots[i].go_fd >= 0)
				close(p->slots[i].go_fd);
		}
		child_main(p, fds[1], go[0], parent, job, default_time, attempt, intent);
		_exit(1);
	}
	close(fds[1]);
	if (go[0] >= 0) {
		close(go[0]);
		fcntl(go[1], F_SETFD, FD_CLOEXEC);
	}
	s->go_fd = go[1];
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	s->pid = pid;
	s->fd = fds[0];
	s->deadline = now_ms() + job->timeout_ms;
	s->attempt = attempt;
	s->id = strdup(job->id);
	s->repo = strdup(job->repo);
	s->ctx = ctx;
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
		char dir[PATH_MAX * 2], prefix[64];
		snprintf(dir, sizeof(dir), "%s/%s", path, objdirs[i]);
		snprintf(prefix, sizeof(prefix), "replayq-tmp-%ld@", (long)s->pid);
		DIR *d = opendir(dir);
		struct dirent *e;
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char victim[PATH_MAX * 3];
			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(victim, sizeof(victim), "%s/%s", dir, e->d_name);
			rq_rmtree(victim);
		}
		closedir(d);
	}
}

/* A complete 'P' (prepare) message at the head of the buffer: record the
 * intent through the callback, then let the child apply or abort. */
static void handle_prepare(rq_pool *p, slot *s)
{
	char *nul;
	char go;
	size_t mlen;

	if (s->prepared || s->len < 2 || s->buf[0] != 'P' || !(nul = memchr(s->buf, '\0', s->len)))
		return;
	s->prepared = 1;
	go = p->opts.intent && p->opts.intent(p->opts.intent_arg, s->ctx, s->buf + 1) == 0 ? 'g'
											   : 'a';
	if (go != 'g')
		s->aborted = 1;
	if (s->go_fd >= 0) {
		if (write_all(s->go_fd, &go, 1) < 0)
			s->aborted = 1;
		close(s->go_fd);
		s->go_fd = -1;
	}
	mlen = (size_t)(nul - s->buf) + 1;
	memmove(s->buf, nul + 1, s->len - mlen);
	s->len -= mlen;
}

static void finish_slot(rq_pool *p, slot *s, rq_pool_done_fn done, void *arg)
{
	char *result = NULL;
	const char *status = "error";
	int transient = 0;
	json_t *j = NULL;

	if (s->aborted || (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == EXIT_ABORT)) {
		/* the intent could not be recorded: no ref moved; leave the job */
		clean_child_objdir(p, s);
		done(arg, s->ctx, NULL, "error", 1);
		slot_clear(s);
		p->running--;
		return;
	}
	if (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == 0 && s->buf && s->len > 1 &&
	    s->buf[0] == 'R') {
		s->buf[s->len] = '\0';
		j = json_loads(s->buf + 1, 0, NULL);
	}
	if (j && json_is_string(json_object_get(j, "status"))) {
		status = json_string_value(json_object_get(j, "status"));
		result = strdup(s->buf + 1);
	} else {
		char msg[256];
		rq_code code = RQ_E_CRASHED;
		if (s->over_memory) {
			code = RQ_E_NOMEM;
			snprintf(
			    msg, sizeof(msg),
			    "the job used more than its memory limit of %llu MiB and was killed",
			    (unsigned long long)(p->opts.memory_limit >> 20));
		} else if (s->timed_out) {
			code = RQ_E_TIMEOUT;
			snprintf(msg, sizeof(msg), "the job ran past its deadline and was killed");
		} else if (WIFSIGNALED(s->wstatus)) {
			snprintf(msg, sizeof(msg),
				 "the process running the job died of signal %d (%s)",
				 WTERMSIG(s->wstatus), strsignal(WTERMSIG(s->wstatus)));
		} else if (WIFEXITED(s->wstatus) && WEXITSTATUS(s->wstatus) == EXIT_NOMEM) {
			code = RQ_E_NOMEM;
			snprintf(msg, sizeof(msg), "the job ran out of memory");
		} else {
			snprintf(msg, sizeof(msg),
				 "the process running the job exited with status %d",
				 WIFEXITED(s->wstatus) ? WEXITSTATUS(s->wstatus) : -1);
		}
		transient = code == RQ_E_CRASHED || code == RQ_E_TIMEOUT;
		if (code != RQ_E_NOMEM)
			clean_child_objdir(p, s);
		result = rq_error_result(s->id, s->repo, code, msg, s->attempt, p->worker);
	}
	if (result)
		done(arg, s->ctx, result, status, transient);
	json_decref(j);
	free(result);
	slot_clear(s);
	p->running--;
}

int rq_pool_poll(rq_pool *p, int timeout_ms, rq_pool_done_fn done, void *arg)
{
	struct pollfd pfd[256];
	int n = 0;
	long long now;

	for (int i = 0; i < p->opts.jobs && n < 256; i++)
		if (p->slots[i].pid && p->slots[i].fd >= 0) {
			pfd[n].fd = p->slots[i].fd;
			pfd[n].events = POLLIN;
			n++;
		}
	if (n)
		poll(pfd, (nfds_t)n, timeout_ms);
	else if (p->running && timeout_ms > 0) {
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
	now = now_ms();
	for (int i = 0; i < p->opts.jobs; i++) {
		slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (s->fd >= 0)
			read_some(s);
		handle_prepare(p, s);
		if (!s->timed_out && !s->over_memory && now > s->deadline) {
			kill(s->pid, SIGKILL);
			s->timed_out = 1;
		}
		if (p->opts.memory_limit && !s->reaped && !s->timed_out && !s->over_memory &&
		    resident_bytes(s->pid) > p->opts.memory_limit) {
			kill(s->pid, SIGKILL);
			s->over_memory = 1;
		}
		if (!s->reaped) {
			pid_t r = waitpid(s->pid, &s->wstatus, WNOHANG);
			if (r == s->pid)
				s->reaped = 1;
		}
		if (s->reaped) {
			if (s->fd >= 0)
				read_some(s);
			handle_prepare(p, s);
			if (s->fd < 0)
				finish_slot(p, s, done, arg);
		}
	}
	return 0;
}

void rq_pool_kill_all(rq_pool *p, void (*dropped)(void *arg, void *ctx), void *arg)
{
	for (int i = 0; i < p->opts.jobs; i++) {
		slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (!s->reaped) {
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
