/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool: forked children that run one job each (worker/jobrun) and report
 * over a pipe (core/base/rq_child). The parts: the slots; starting a
 * child; the children's questions (intent, commit check); deadlines and
 * memory; a finished child: its result (worker/pool_result: published as
 * soon as its report is in, or the error result the parent writes for it
 * when it ends without one), what it did after its result (its consolidation); in the loop
 * (worker/evloop): the function of a child's descriptor that fired, its
 * timer, the memory checks.
 */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_clock.h"
#include "jobrepo.h"
#include "jobrun.h"
#include "log.h"
#include "pool_result.h"
#include "pool_slot.h"
#include "rq_child.h"
#include "rq_fs.h"
#include "rq_odb_tmpdir.h"
#include "rq_refproto.h"
#include "rq_sign.h"
#include "stop.h"

#define RQ_POOL_MEM_CHECK_MS 5	 /* how often the parent reads a child's resident set */
#define RQ_POOL_REAP_MS	     2	 /* without a pidfd: how soon to look again at an exiting child */
#define RQ_POOL_STALE_S	     300 /* what has no owner marker is stale after (as elsewhere) */

/* ---- the pool and its slots ---- */

static void slot_init(rq_pool_slot *s, rq_pool *p)
{
	memset(s, 0, sizeof(*s));
	rq_child_in_init(&s->report, -1);
	s->exit_fd = s->answer_fd = -1;
	s->pool = p;
}

static long long check_memory(void *arg, long long now);

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
	if (p->slots && p->opts.memory_limit)
		p->mem_timer = rq_evloop_timer_add(p->opts.loop, -1, check_memory, p);
	if (!p->slots || (p->opts.memory_limit && !p->mem_timer)) {
		free(p->slots);
		free(p);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < p->opts.jobs; i++)
		slot_init(&p->slots[i], p);
	*out = p;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Out of the loop first: the descriptors close after. */
static void slot_clear(rq_pool *p, rq_pool_slot *s)
{
	rq_evloop_watch_del(p->opts.loop, s->on_report);
	rq_evloop_watch_del(p->opts.loop, s->on_exit);
	rq_evloop_timer_del(p->opts.loop, s->timer);
	rq_child_in_free(&s->report);
	close_fd(&s->answer_fd);
	close_fd(&s->exit_fd);
	free(s->id);
	free(s->repo);
	slot_init(s, p);
}

void rq_pool_free(rq_pool *p)
{
	if (!p)
		return;
	rq_pool_kill_all(p, NULL, NULL);
	rq_evloop_timer_del(p->opts.loop, p->mem_timer);
	rq_sign_free(p->opts.signer);
	free(p->slots);
	free(p);
}

int rq_pool_fds(int jobs)
{
	return 3 * jobs + 2;
}

int rq_pool_idle_count(const rq_pool *p)
{
	return p->opts.jobs - p->running;
}

int rq_pool_running(const rq_pool *p)
{
	return p->running;
}

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

/* ---- starting a child ---- */

/* The child's side of rq_pool_spawn: never returns. It keeps its own two
 * pipes and nothing else of the parent's: an answer pipe of another child
 * it kept open would hide its closing from that child, and the parent's
 * sockets are not the job's. */
static void child_start(rq_pool *p, const rq_jobrun_task *task, pid_t parent, int report_fd,
			int answer_fd)
{
	rq_jobrun_env env = {p->root,
			     p->opts.alternates_anywhere,
			     p->opts.memory_limit,
			     rq_pool_kernel_memory_limit(),
			     p->worker,
			     p->opts.no_consolidate,
			     p->opts.signer,
			     p->opts.confine_flags};
	const int keep[] = {report_fd, answer_fd};

	rq_stop_detach_child(keep, 2);
	rq_jobrun_child(&env, task, parent, report_fd, answer_fd);
}

/* A started child's slot; -1 out of memory. */
static int slot_start(rq_pool_slot *s, pid_t pid, int report_fd, int answer_fd,
		      const rq_jobrun_task *task, void *ctx)
{
	s->pid = pid;
	rq_child_in_init(&s->report, report_fd);
	fcntl(report_fd, F_SETFL, fcntl(report_fd, F_GETFL) | O_NONBLOCK);
	s->answer_fd = answer_fd;
	s->exit_fd = rq_child_exit_fd(pid);
	s->deadline = task->deadline;
	s->timeout_ms = task->job->timeout_ms;
	s->attempt = task->attempt;
	s->ctx = ctx;
	s->id = strdup(task->job->id);
	s->repo = strdup(task->job->repo);
	return s->id && s->repo ? 0 : -1;
}

static int slot_watch(rq_pool *p, rq_pool_slot *s);

int rq_pool_spawn(rq_pool *p, const rq_job *job, int64_t default_time, long attempt,
		  const char *intent, int granted, void *ctx, rq_error *err)
{
	rq_jobrun_task task = {job, default_time, attempt, intent, 0, granted};
	int report_fd = -1, answer_fd = -1;
	rq_pool_slot *s = NULL;
	pid_t pid, parent = getpid();

	for (int i = 0; i < p->opts.jobs && !s; i++)
		if (!p->slots[i].pid)
			s = &p->slots[i];
	if (!s)
		return rq_error_set(err, RQ_E_INTERNAL, "no free slot");
	task.deadline = rq_clock_mono_ms() + job->timeout_ms;
	/* a job that moves refs asks the parent first (the answer pipe), so
	 * that the parent knows when no limit may interrupt it any more */
	pid = job->ref_update ? rq_child_fork_asking(&report_fd, &answer_fd)
			      : rq_child_fork(&report_fd);
	if (pid < 0) {
		int e = errno;
		rq_error_set(err, RQ_E_IO, "cannot start a child: %s", strerror(e));
		return e == EMFILE || e == ENFILE || e == EAGAIN || e == ENOMEM ? RQ_POOL_BUSY : -1;
	}
	if (pid == 0)
		child_start(p, &task, parent, report_fd, answer_fd);
	p->running++;
	if (slot_start(s, pid, report_fd, answer_fd, &task, ctx) < 0 || slot_watch(p, s) < 0) {
		/* no name for its result, or no watch: it is dropped, the job
		 * left for a retry */
		rq_child_kill(pid, &s->wstatus);
		slot_clear(p, s);
		p->running--;
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* ---- the children's questions ---- */

static void kill_slot(rq_pool_slot *s, long long now)
{
	kill(s->pid, SIGKILL);
	s->killed_at = now;
}

/* Answer the child; its answer pipe stays open only when kept. */
static void answer(rq_pool_slot *s, char reply, int keep)
{
	if (s->answer_fd < 0)
		return;
	if (rq_child_answer(s->answer_fd, reply) < 0) {
		s->aborted = 1;
		keep = 0;
	} else if (reply == RQ_REFPROTO_GO) {
		s->committed = 1;
	}
	if (!keep)
		close_fd(&s->answer_fd);
}

/* A whole intent message first in line: record the intent through the
 * callback, then let the child apply or abort. Past its deadline, a job
 * may not start moving refs: it is killed as timed out. A child already
 * gone gets nothing: how it ended says what happened. */
static void handle_intent(rq_pool *p, rq_pool_slot *s)
{
	long long sent, now = rq_clock_mono_ms(); /* this very moment: the intent call blocks */
	const char *json;
	char reply = RQ_REFPROTO_ABORT;
	rq_child_msg m;

	if (s->prepared || !rq_pool_slot_msg(s, RQ_REFPROTO_ASK_GO, &m))
		return;
	s->prepared = 1;
	json = rq_jobrun_payload_json(m.data, &sent);
	if (!s->reaped) {
		if (now >= s->deadline && !s->timed_out && !s->over_memory) {
			s->timed_out = 1;
			kill_slot(s, now);
		} else if (json && !s->timed_out && !s->over_memory &&
			   (!p->opts.intent ||
			    p->opts.intent(p->opts.intent_arg, s->ctx, json) == 0)) {
			reply = RQ_REFPROTO_GO;
		}
		if (reply != RQ_REFPROTO_GO)
			s->aborted = 1;
		answer(s, reply, reply == RQ_REFPROTO_GO); /* kept for the commit check */
	}
	rq_child_in_drop(&s->report);
}

/* The child's round ended before its fence, nothing moved, and it will
 * ask go again ("on_ref_moved": "retry"): its limits count again, and its
 * next intent is handled as the first was. */
static void handle_again(rq_pool_slot *s)
{
	rq_child_msg m;

	if (!s->committed || s->checked || !rq_pool_slot_msg(s, RQ_REFPROTO_AGAIN, &m))
		return;
	s->committed = 0;
	s->prepared = 0;
	rq_child_in_drop(&s->report);
}

/* A whole commit check first in line, the child holding its ref locks:
 * the job must still be this worker's (owns), or nothing moves. */
static void handle_check(rq_pool *p, rq_pool_slot *s)
{
	char reply;
	rq_child_msg m;

	if (!s->committed || s->checked || !rq_pool_slot_msg(s, RQ_REFPROTO_ASK_COMMIT, &m))
		return;
	s->checked = 1;
	reply = !p->opts.owns || p->opts.owns(p->opts.intent_arg, s->ctx) == 1 ? RQ_REFPROTO_COMMIT
									       : RQ_REFPROTO_ABORT;
	if (reply != RQ_REFPROTO_COMMIT)
		s->aborted = 1;
	answer(s, reply, 0);
	rq_child_in_drop(&s->report);
}

/* ---- deadlines and memory ---- */

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

/* Kill the child if its resident set is past the memory limit. */
static void check_rss(const rq_pool *p, rq_pool_slot *s, long long now)
{
	uint64_t rss = resident_bytes(s->pid);

	if (rss > p->opts.memory_limit) {
		s->over_memory = 1;
		s->rss_at_kill = rss;
		kill_slot(s, now);
	}
}

/* Enforce the deadline and the memory limit of one child (the memory
 * when mem_check). Its result in, the deadline no longer applies (the
 * result is judged by the child's own clock), the memory limit still
 * does: what it does after its result (its consolidation) may be cut
 * short anywhere, its result stands. */
static void watch_slot(const rq_pool *p, rq_pool_slot *s, long long now, int mem_check)
{
	rq_child_msg m;

	if (s->reaped || s->timed_out || s->over_memory)
		return;
	if (s->published) {
		if (mem_check)
			check_rss(p, s, now);
		return;
	}
	/* moving refs, or a whole result in (published in this step) */
	if (s->committed || rq_pool_slot_msg(s, RQ_JOBRUN_MSG_RESULT, &m))
		return;
	if (now >= s->deadline) {
		s->timed_out = 1;
		kill_slot(s, now);
	} else if (mem_check) {
		check_rss(p, s, now);
	}
}

/* ---- a finished child ---- */

/* Remove what a killed child left in its repository's objects directory
 * right away: its temporary directory and pack files, whose owner marker
 * it no longer holds (rq_odb_tmpdir: everything a gone owner left goes). */
void rq_pool_clean_objdir(const rq_pool *p, const rq_pool_slot *s)
{
	static const char *const objdirs[] = {"objects", ".git/objects"};
	char path[PATH_MAX];
	size_t rl = strlen(p->root);
	rq_error err;

	if (rq_jobrepo_resolve(p->root, s->repo, path, &err) < 0)
		return;
	for (int i = 0; i < 2; i++) {
		char dir[PATH_MAX * 2], real[PATH_MAX];
		int fd;
		snprintf(dir, sizeof(dir), "%s/%s", path, objdirs[i]);
		/* only inside the root, whatever the repository's links say */
		if (!realpath(dir, real) || strncmp(real, p->root, rl) || real[rl] != '/' ||
		    (fd = rq_fs_opendir(real)) < 0)
			continue;
		rq_odb_tmpdir_clean_stale_at(fd, RQ_POOL_STALE_S);
		close(fd);
	}
}

/* Why a published child that did not report its consolidation ended,
 * into why; 0 when it just exited (nothing was due). */
static int after_death(const rq_pool_slot *s, char *why, size_t size)
{
	if (s->over_memory)
		snprintf(why, size, "killed: past the memory limit");
	else if (WIFSIGNALED(s->wstatus))
		snprintf(why, size, "died of signal %d (%s)", WTERMSIG(s->wstatus),
			 strsignal(WTERMSIG(s->wstatus)));
	else if (!WIFEXITED(s->wstatus) || WEXITSTATUS(s->wstatus) != 0)
		snprintf(why, size, "exited with status %d",
			 WIFEXITED(s->wstatus) ? WEXITSTATUS(s->wstatus) : -1);
	else
		return 0;
	return 1;
}

/* What a consolidation's after message (a) says it did. */
static const char *after_outcome(const json_t *a)
{
	if (json_object_get(a, "error"))
		return "failed";
	if (json_is_true(json_object_get(a, "busy")))
		return "busy";
	return json_integer_value(json_object_get(a, "merged")) > 0 ? "merged" : "nothing";
}

/*
 * A published child reaped: what it did after its result (its
 * consolidation), logged and handed to the after callback. Its result
 * stands whatever this says. Nothing when it exited without an after
 * message: no consolidation was due.
 */
static void finish_after(rq_pool *p, rq_pool_slot *s)
{
	rq_child_msg m;
	long long sent;
	const char *json = rq_pool_slot_msg(s, RQ_JOBRUN_MSG_AFTER, &m)
			       ? rq_jobrun_payload_json(m.data, &sent)
			       : NULL;
	json_t *a = json ? json_loads(json, 0, NULL) : NULL;
	json_t *f = json_pack("{s:s, s:s}", "job", s->id, "repo", s->repo);
	const char *outcome = "killed";
	char why[160];

	if (a) {
		outcome = after_outcome(a);
		json_object_update(f, a);
	} else if (after_death(s, why, sizeof(why))) {
		json_object_set_new(f, "reason", json_string(why));
		rq_pool_clean_objdir(p, s);
	} else {
		json_decref(f);
		return;
	}
	json_decref(a);
	json_object_set_new(f, "outcome", json_string(outcome));
	rq_log(!strcmp(outcome, "failed") || !strcmp(outcome, "killed") ? RQ_LOG_WARN : RQ_LOG_INFO,
	       "consolidation after a job; its result stands", f);
	if (p->opts.after)
		p->opts.after(p->opts.done_arg, outcome);
}

static void finish_slot(rq_pool *p, rq_pool_slot *s)
{
	rq_pool_done_fn done = p->opts.done;
	void *arg = p->opts.done_arg;
	const char *status;
	char *result = NULL;
	int transient;

	if (s->published) {
		finish_after(p, s);
	} else if ((s->aborted && !s->timed_out && !s->over_memory) ||
		   (!s->timed_out && WIFEXITED(s->wstatus) &&
		    WEXITSTATUS(s->wstatus) == RQ_JOBRUN_EXIT_ABORT)) {
		/* the intent or the commit was refused (no ref moved), or a granted
		 * commit failed part-way: leave the job; its retry finishes it.
		 * Without intents (run) nothing retries: the child's error, if it
		 * sent one, is the result */
		rq_pool_clean_objdir(p, s);
		if (!p->opts.intent && (result = rq_pool_result_stopped(s)))
			done(arg, s->ctx, result, "error", 0);
		else
			done(arg, s->ctx, NULL, "error", 1);
		free(result);
	} else if ((result = rq_pool_result_of(p, s, &status, &transient))) {
		done(arg, s->ctx, result, status, transient);
		free(result);
	} else { /* out of memory for its result: the job is left for a retry */
		done(arg, s->ctx, NULL, "error", 1);
	}
	if (s->discarded)
		rq_pool_clean_objdir(p, s);
	slot_clear(p, s);
	p->running--;
}

/* ---- in the loop: what fired, what is due ---- */

/* Read what the child sent (out of memory, the rest waits in the pipe). */
static void read_report(rq_pool_slot *s)
{
	if (s->report.fd >= 0)
		rq_child_in_read(&s->report);
}

/* When the slot's timer is next due: its deadline while one can cut it
 * short (no whole result in yet: a child whose result is in wakes us
 * through its pidfd), or soon, for a child exiting without a pidfd to
 * wake us; -1: nothing to wait for but its descriptors. */
static long long slot_next(const rq_pool_slot *s, long long now)
{
	rq_child_msg m;

	if (s->reaped)
		return -1;
	if (s->exit_fd < 0 && s->report.fd < 0) /* exiting, and nothing to wait on */
		return now + RQ_POOL_REAP_MS;
	if (s->committed || s->published || s->timed_out || s->over_memory ||
	    rq_pool_slot_msg(s, RQ_JOBRUN_MSG_RESULT, &m))
		return -1;
	return s->deadline;
}

/* After a step: out of the loop what needs no more watching (a pipe at
 * its end, the pidfd of a reaped child), the timer set anew. */
static void slot_sync(rq_pool *p, rq_pool_slot *s, long long now)
{
	if (s->on_report && s->report.fd < 0) {
		rq_evloop_watch_del(p->opts.loop, s->on_report);
		s->on_report = NULL;
	}
	if (s->on_exit && s->reaped) {
		rq_evloop_watch_del(p->opts.loop, s->on_exit);
		s->on_exit = NULL;
	}
	rq_evloop_timer_at(s->timer, slot_next(s, now));
}

/* Everything one child may need now: its messages read, reaped when it
 * exited, its questions answered, its limits enforced (the memory too
 * when mem_check), and done called when it is over. */
static void slot_step(rq_pool *p, rq_pool_slot *s, long long now, int mem_check)
{
	read_report(s);
	/* reap first: a child that ended by itself is not killed as well */
	if (!s->reaped && rq_child_try_reap(s->pid, &s->wstatus)) {
		s->reaped = 1;
		s->exited_at = rq_clock_mono_ms();
		read_report(s);
	}
	handle_again(s);
	handle_intent(p, s);
	handle_check(p, s);
	watch_slot(p, s, now, mem_check);
	rq_pool_result_publish(p, s);
	if (s->reaped && s->report.fd < 0)
		finish_slot(p, s);
	else
		slot_sync(p, s, now);
}

/* The child's report pipe or pidfd fired. */
static void slot_fired(void *arg, int fd, short revents)
{
	rq_pool_slot *s = arg;

	(void)fd;
	(void)revents;
	slot_step(s->pool, s, rq_clock_mono_ms(), 0);
}

/* The child's timer is due (slot_step set it anew). */
static long long slot_due(void *arg, long long now)
{
	rq_pool_slot *s = arg;

	slot_step(s->pool, s, now, 0);
	return -1;
}

/* The memory checks: every child's resident size, every few ms while
 * children run. */
static long long check_memory(void *arg, long long now)
{
	rq_pool *p = arg;

	for (int i = 0; i < p->opts.jobs; i++)
		if (p->slots[i].pid)
			slot_step(p, &p->slots[i], now, 1);
	return p->running ? now + RQ_POOL_MEM_CHECK_MS : -1;
}

/* A started child into the loop: its pipe, its pidfd, its timer; -1 out
 * of memory. */
static int slot_watch(rq_pool *p, rq_pool_slot *s)
{
	rq_evloop *l = p->opts.loop;

	s->on_report = rq_evloop_watch_add(l, s->report.fd, POLLIN, slot_fired, s);
	if (s->exit_fd >= 0)
		s->on_exit = rq_evloop_watch_add(l, s->exit_fd, POLLIN, slot_fired, s);
	s->timer = rq_evloop_timer_add(l, s->deadline, slot_due, s);
	if (!s->on_report || (s->exit_fd >= 0 && !s->on_exit) || !s->timer)
		return -1;
	if (p->mem_timer && rq_evloop_timer_when(p->mem_timer) < 0)
		rq_evloop_timer_at(p->mem_timer, rq_clock_mono_ms());
	return 0;
}

void rq_pool_kill_all(rq_pool *p, void (*dropped)(void *arg, void *ctx), void *arg)
{
	for (int i = 0; i < p->opts.jobs; i++) {
		rq_pool_slot *s = &p->slots[i];
		if (!s->pid)
			continue;
		if (!s->reaped) {
			/* one moving refs is let finish: a kill could cut it half-way
			 * (not once its result is in: what it does after may be cut
			 * anywhere). Its pipes close first: a commit check it waits
			 * for is then refused (it releases its locks), a result it
			 * writes fails */
			close_fd(&s->answer_fd);
			close_fd(&s->report.fd);
			if (!s->committed || s->published)
				kill(s->pid, SIGKILL);
			rq_child_reap(s->pid, &s->wstatus);
		}
		rq_pool_clean_objdir(p, s);
		if (dropped && !s->published) /* a published task is done already */
			dropped(arg, s->ctx);
		slot_clear(p, s);
		p->running--;
	}
}
