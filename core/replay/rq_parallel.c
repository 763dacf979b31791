/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_parallel: forked workers for a replay's independent groups (see
 * rq_parallel.h). The parts, in the order a replay meets them: the
 * shared page and the fork; the agreement on what was resolved; the plan
 * (groups, biggest first); the groups loop every worker runs; a child's
 * report; the parent's reading of the reports and choice of the
 * earliest failure. The report's messages, written and read, are in
 * rq_parallel_report.c.
 */
#include "rq_parallel.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rq_child.h"
#include "rq_parallel_report.h"
#include "rq_testhook.h"
#include "rq_trace.h"

/* Exit statuses of a child that could not report (the parent says crashed). */
#define CHILD_EXIT_WRITE  4 /* its report pipe failed */
#define CHILD_EXIT_NOMEM  3 /* no memory for its report */
#define CHILD_EXIT_ORPHAN 5 /* its parent is gone */

/* The page the workers share. */
typedef struct shared_page {
	atomic_size_t next; /* next entry of the plan's order to take */
	atomic_size_t fail; /* lowest failed pick so far; SIZE_MAX: none */
	/* the parent's resolution of the revisions and the target: a child
	 * that resolved differently (a ref moved in between) takes no group */
	atomic_int resolved;
	unsigned char digest[20];
} shared_page;

/* The parent's view of one child. */
typedef struct child_proc {
	pid_t pid;
	rq_child_in in; /* its report */
	int status;
	int reaped;
	int done; /* it reported "D": it took part (and saved its objects) */
} child_proc;

struct rq_parallel {
	shared_page *page;
	int workers;   /* this process and its children */
	unsigned self; /* 0: the parent; k: child k */
	struct {
		child_proc ch[RQ_MAX_JOBS]; /* 1 .. n */
		int n;
	} parent;
	struct {
		int fd;		  /* its report pipe */
		pid_t parent_pid; /* the parent it was forked from */
	} child;
};

/* The groups' member lists and the order they are taken in. */
typedef struct plan {
	size_t ngroups;
	size_t *order;	 /* groups, biggest first */
	size_t *start;	 /* group g's commits: members[start[g] .. start[g + 1]) */
	size_t *members; /* commit indexes, in walk order within each group */
} plan;

void rq_parallel_kept_free(rq_parallel_kept *k)
{
	for (size_t i = 0; i < k->n; i++)
		rq_conflicts_free(&k->v[i].conflicts);
	free(k->v);
	memset(k, 0, sizeof(*k));
}

/* Append a conflict of pick i (taking *conf); 0, or -1 out of memory
 * (*conf freed). */
int rq_parallel_kept_add(rq_parallel_kept *k, size_t i, rq_conflicts *conf)
{
	if (k->n == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 8;
		rq_parallel_conflict *nv = realloc(k->v, ncap * sizeof(*nv));
		if (!nv) {
			rq_conflicts_free(conf);
			return -1;
		}
		k->v = nv;
		k->cap = ncap;
	}
	k->v[k->n].index = i;
	k->v[k->n++].conflicts = *conf;
	memset(conf, 0, sizeof(*conf));
	return 0;
}

int rq_parallel_workers(const rq_parallel *p)
{
	return p ? p->workers : 1;
}

int rq_parallel_is_child(const rq_parallel *p)
{
	return p && p->self != 0;
}

/* ---- the fork ---- */

/* In a new child: its own state, its signals, the test hooks. */
static void child_start(rq_parallel *p, unsigned self, int fd, const rq_parallel_hooks *hooks)
{
	for (int o = 1; o <= p->parent.n; o++)
		close(p->parent.ch[o].in.fd);
	memset(&p->parent, 0, sizeof(p->parent));
	p->self = self;
	p->child.fd = fd;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent decides; it kills us if it must */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	if (getppid() != p->child.parent_pid)
		_exit(CHILD_EXIT_ORPHAN); /* the parent is gone already */
	if (hooks && hooks->child)
		hooks->child(self, hooks->arg);
	rq_testhook_hold("replay-child");
}

static rq_parallel *parallel_new(int jobs)
{
	rq_parallel *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->page = mmap(NULL, sizeof(shared_page), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->page == MAP_FAILED) {
		free(p);
		return NULL;
	}
	atomic_init(&p->page->next, 0);
	atomic_init(&p->page->fail, SIZE_MAX);
	atomic_init(&p->page->resolved, 0);
	p->workers = jobs;
	p->child.fd = -1;
	p->child.parent_pid = getpid();
	return p;
}

static void parallel_free(rq_parallel *p)
{
	munmap(p->page, sizeof(shared_page));
	free(p);
}

unsigned rq_parallel_fork(rq_parallel **out, int jobs, git_odb *odb, const rq_parallel_hooks *hooks)
{
	rq_parallel *p = parallel_new(jobs);
	git_oid zero; /* (a lookup through libgit2's odb API) */

	*out = NULL;
	if (!p)
		return 0; /* this process replays alone */
	/* a lookup that misses visits every pack: all their indexes get mapped
	 * here, once, for every worker */
	memset(&zero, 0, sizeof(zero));
	(void)git_odb_exists(odb, &zero);
	for (int c = 1; c < jobs; c++) {
		int fd;
		pid_t pid = rq_child_fork(&fd);
		if (pid < 0) {
			/* out of processes or descriptors: fewer workers, or none */
			p->workers = c;
			break;
		}
		if (pid == 0) {
			child_start(p, (unsigned)c, fd, hooks);
			*out = p;
			return (unsigned)c;
		}
		p->parent.ch[c].pid = pid;
		rq_child_in_init(&p->parent.ch[c].in, fd);
		p->parent.n = c;
	}
	if (p->workers == 1) {
		parallel_free(p);
		return 0;
	}
	*out = p;
	return 0;
}

int rq_parallel_agree(rq_parallel *p, const unsigned char digest[20])
{
	if (!p->self) {
		memcpy(p->page->digest, digest, sizeof(p->page->digest));
		atomic_store(&p->page->resolved, 1);
		return 0;
	}
	while (!atomic_load(&p->page->resolved)) {
		struct timespec ts = {0, 20000};
		if (getppid() != p->child.parent_pid)
			_exit(CHILD_EXIT_ORPHAN); /* the parent is gone */
		nanosleep(&ts, NULL);
	}
	return memcmp(digest, p->page->digest, sizeof(p->page->digest)) ? -1 : 0;
}

/* ---- the plan ---- */

typedef struct group_size {
	size_t size, g;
} group_size;

static int cmp_group_size(const void *pa, const void *pb)
{
	const group_size *a = pa, *b = pb;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

static void plan_free(plan *pl)
{
	free(pl->order);
	free(pl->start);
	free(pl->members);
	memset(pl, 0, sizeof(*pl));
}

static int plan_make(const rq_parallel_job *job, plan *pl)
{
	size_t n = job->n, ng = job->ngroups, *fill = calloc(ng + 1, sizeof(*fill));
	group_size *by = malloc(ng * sizeof(*by));

	pl->ngroups = ng;
	pl->order = malloc(ng * sizeof(*pl->order));
	pl->start = calloc(ng + 1, sizeof(*pl->start));
	pl->members = malloc((n + 1) * sizeof(*pl->members));
	if (!by || !pl->order || !pl->start || !pl->members || !fill) {
		free(by);
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		pl->start[job->group[i] + 1]++;
	for (size_t g = 0; g < ng; g++) {
		by[g].size = pl->start[g + 1];
		by[g].g = g;
		pl->start[g + 1] += pl->start[g];
	}
	for (size_t i = 0; i < n; i++)
		pl->members[pl->start[job->group[i]] + fill[job->group[i]]++] = i;
	qsort(by, ng, sizeof(*by), cmp_group_size);
	for (size_t k = 0; k < ng; k++)
		pl->order[k] = by[k].g;
	free(by);
	free(fill);
	return 0;
}

/* ---- the groups loop, in every worker ---- */

static void lower_fail(shared_page *page, size_t i)
{
	size_t cur = atomic_load(&page->fail);
	while (i < cur && !atomic_compare_exchange_weak(&page->fail, &cur, i))
		;
}

/* A pick of commit i failed: it is below every failure this worker saw. */
static void note_failure(rq_parallel *p, rq_parallel_report_failure *wf, size_t i, int kind,
			 rq_conflicts *conf, rq_error *perr)
{
	wf->fail = i;
	wf->kind = kind;
	rq_conflicts_free(&wf->conf);
	if (kind == 1) {
		wf->conf = *conf;
		memset(conf, 0, sizeof(*conf));
	} else {
		wf->err = *perr;
	}
	lower_fail(p->page, i);
}

/*
 * Take groups until none is left; did[i] is set for every commit picked.
 * A failed pick ends its group (the group's later commits come after it);
 * with keep-going a conflict does not (wf->kept). Returns 0, or -1 when
 * interrupted or out of memory (err set).
 */
static int run_groups(rq_parallel *p, const rq_parallel_job *job, const plan *pl,
		      unsigned char *did, rq_parallel_report_failure *wf, rq_error *err)
{
	for (;;) {
		size_t k = atomic_fetch_add(&p->page->next, 1), g;
		if (k >= pl->ngroups)
			return 0;
		g = pl->order[k];
		for (size_t j = pl->start[g]; j < pl->start[g + 1]; j++) {
			size_t i = pl->members[j];
			rq_conflicts conf = {0};
			rq_error perr;
			int r;
			if (i > atomic_load(&p->page->fail))
				break;
			if (job->cancel && *job->cancel)
				return rq_error_set(err, RQ_E_INTERRUPTED, "interrupted");
			rq_error_clear(&perr);
			r = job->pick(job->arg, i, &conf, &perr);
			if (r == 0)
				did[i] = 1;
			if (r == 0 || r == 2) /* 2: below a conflict (keep-going) */
				continue;
			if (r == 1 && job->keep_going) {
				if (rq_parallel_kept_add(&wf->kept, i, &conf) < 0)
					return rq_error_set(err, RQ_E_NOMEM, "out of memory");
				continue;
			}
			note_failure(p, wf, i, r, &conf, &perr);
			rq_conflicts_free(&conf);
			break;
		}
	}
}

/* ---- a child's report ---- */

/* Send the report and exit; allocates nothing. */
static void child_exit(rq_parallel *p, const char *msgs, size_t len)
{
	if (rq_child_write(p->child.fd, msgs, len) < 0)
		_exit(CHILD_EXIT_WRITE);
	/* the parent sees the end of the report now, not after this process's
	 * memory is torn down */
	close(p->child.fd);
	RQ_TRACE_AT("child reported");
	_exit(0);
}

/* A child that takes no group (the replay is not parallel after all, its
 * walk failed and the parent meets the same failure, or it ran out of
 * memory before its first group): "X", and exit. */
static void child_giveup(rq_parallel *p)
{
	static const char took_none[] = "X0:"; /* a frame, with its NUL */
	child_exit(p, took_none, sizeof(took_none));
}

/* Runs in a child: pick groups, hand the new objects over as a part file,
 * report what happened, exit. */
static void child_run(rq_parallel *p, const rq_parallel_job *job, const plan *pl)
{
	size_t mark = rq_odb_tmpdir_mark(job->tmpdir);
	rq_buf b = {0};
	rq_parallel_report_failure wf = {.fail = SIZE_MAX};
	unsigned char *did = calloc(job->n + 1, 1);
	rq_error err;
	int r;

	if (!did)
		child_giveup(p); /* before any group: the other workers take them */
	rq_error_clear(&wf.err);
	rq_error_clear(&err);
	RQ_TRACE_AT("child groups start");
	r = run_groups(p, job, pl, did, &wf, &err);
	RQ_TRACE_AT("child groups done");
	/* my new objects go to the parent through the temporary directory;
	 * not when the replay fails, here or in another worker already */
	if (r == 0 && wf.fail == SIZE_MAX && atomic_load(&p->page->fail) == SIZE_MAX &&
	    rq_odb_tmpdir_save_part(job->tmpdir, mark, p->self, &err) < 0)
		r = -1;
	rq_parallel_report_picks(&b, job, did);
	rq_parallel_report_counts(&b, job);
	rq_parallel_report_failed(&b, &wf);
	rq_parallel_report_kept(&b, &wf);
	/* not a pick's failure (no part file, say): it fails the replay,
	 * unless a pick failed, which is what --jobs=1 would report */
	if (r < 0)
		rq_parallel_report_fmt(&b, 'F', "%d %s", (int)err.code, err.msg);
	rq_child_frame(&b, 'D', "", 0);
	if (b.oom)
		_exit(CHILD_EXIT_NOMEM);
	child_exit(p, b.p, b.len);
}

/* ---- the parent: the children's reports ---- */

/* Why a child ended without a whole report. */
static int child_died(child_proc *c, rq_error *err)
{
	c->reaped = rq_child_reap(c->pid, &c->status);
	if (c->reaped && WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0)
		return 0; /* its report is judged when it is read */
	return rq_error_set(err, RQ_E_CRASHED,
			    "a replay child died (%s %d); the replay is abandoned",
			    WIFSIGNALED(c->status) ? "signal" : "status",
			    WIFSIGNALED(c->status) ? WTERMSIG(c->status) : WEXITSTATUS(c->status));
}

/* Read from the children that have something; 0 or -1 (err set). */
static int read_ready(rq_parallel *p, struct pollfd *pfd, const int *idx, int np, rq_error *err)
{
	for (int k = 0; k < np; k++) {
		child_proc *c = &p->parent.ch[idx[k]];
		int r;
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if ((r = rq_child_in_read(&c->in)) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		/* a whole report: the child is done (reaped at the end, while its
		 * exit runs); else it died, and how matters */
		if (r == 0 && !rq_parallel_report_complete(&c->in) && child_died(c, err) < 0)
			return -1;
	}
	return 0;
}

/* Read every child's report to its end; a child that dies takes the others
 * down. 0 or -1 (err set). */
static int read_reports(rq_parallel *p, const rq_parallel_job *job, rq_error *err)
{
	for (;;) {
		struct pollfd pfd[RQ_MAX_JOBS];
		int idx[RQ_MAX_JOBS], np = 0;
		for (int c = 1; c <= p->parent.n; c++)
			if (p->parent.ch[c].in.fd >= 0) {
				pfd[np].fd = p->parent.ch[c].in.fd;
				pfd[np].events = POLLIN;
				idx[np++] = c;
			}
		if (!np)
			return 0;
		if (poll(pfd, (nfds_t)np, 1000) < 0 && errno != EINTR)
			return rq_error_set(err, RQ_E_IO, "poll: %s", strerror(errno));
		if (job->cancel && *job->cancel)
			return rq_error_set(err, RQ_E_INTERRUPTED, "interrupted");
		if (read_ready(p, pfd, idx, np, err) < 0)
			return -1;
	}
}

/* ---- the parent: the outcome ---- */

static void kill_children(rq_parallel *p)
{
	for (int c = 1; c <= p->parent.n; c++) {
		child_proc *ch = &p->parent.ch[c];
		if (ch->pid > 0 && !ch->reaped) {
			rq_child_kill(ch->pid, &ch->status);
			ch->reaped = 1;
		}
		rq_child_in_free(&ch->in);
	}
	p->parent.n = 0;
}

/* Every report read into v; 0 or -1 (err set). */
static int gather(rq_parallel *p, const rq_parallel_job *job, rq_parallel_report_verdict *v,
		  rq_error *err)
{
	if (read_reports(p, job, err) < 0)
		return -1;
	RQ_TRACE_AT("reports in");
	for (int c = 1; c <= p->parent.n; c++) {
		if (p->parent.ch[c].in.buf.oom)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		if (rq_parallel_report_read(job, v, &p->parent.ch[c].in, &p->parent.ch[c].done) < 0)
			return rq_error_set(err, RQ_E_INTERNAL,
					    "unreadable report from a replay child");
	}
	return 0;
}

/* The earliest failure wins, this process's own included; with none, the
 * children's objects join this process's. */
static int decide(rq_parallel *p, const rq_parallel_job *job, rq_parallel_report_verdict *v,
		  rq_parallel_outcome *out, rq_error *err)
{
	out->fail = v->first.fail;
	if (v->first.fail != SIZE_MAX && v->first.kind == 1) {
		out->conflicts = v->first.conf;
		memset(&v->first.conf, 0, sizeof(v->first.conf));
		return 1;
	}
	if (v->first.fail != SIZE_MAX) {
		*err = v->first.err;
		return -1;
	}
	if (v->has_other) {
		*err = v->other;
		return -1;
	}
	/* keep-going: this process's conflicts and the children's, together */
	for (size_t k = 0; k < v->first.kept.n; k++)
		if (rq_parallel_kept_add(&v->kept, v->first.kept.v[k].index,
					 &v->first.kept.v[k].conflicts) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	out->kept = v->kept;
	memset(&v->kept, 0, sizeof(v->kept));
	for (int c = 1; c <= p->parent.n; c++)
		if (p->parent.ch[c].done &&
		    rq_odb_tmpdir_load_part(job->tmpdir, (unsigned)c, err) < 0)
			return -1;
	return 0;
}

/* This process is worker 0: it picks too, and compresses what it wrote
 * while the children finish. */
static int parent_run(rq_parallel *p, const rq_parallel_job *job, const plan *pl,
		      rq_parallel_report_verdict *v, rq_error *err)
{
	size_t mark = rq_odb_tmpdir_mark(job->tmpdir);
	unsigned char *did = calloc(job->n + 1, 1);
	int rc = -1;

	if (!did)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	RQ_TRACE_AT("groups start");
	if (run_groups(p, job, pl, did, &v->first, err) < 0)
		goto out;
	RQ_TRACE_AT("groups done");
	/* a failure to compress counts only if no pick failed (a child's
	 * report may still bring one): --jobs=1 would have reported that */
	if (v->first.fail == SIZE_MAX && atomic_load(&p->page->fail) == SIZE_MAX &&
	    rq_odb_tmpdir_encode(job->tmpdir, mark, &v->other) < 0)
		v->has_other = 1;
	rc = gather(p, job, v, err);
out:
	free(did);
	return rc;
}

int rq_parallel_run(rq_parallel *p, const rq_parallel_job *job, rq_parallel_outcome *out,
		    rq_error *err)
{
	rq_parallel_report_verdict v = {.first = {.fail = SIZE_MAX}};
	plan pl = {0};
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->fail = SIZE_MAX;
	out->workers = (size_t)p->workers;
	rq_error_clear(&v.first.err);
	rq_error_clear(&v.other);
	if (plan_make(job, &pl) < 0) {
		if (p->self)
			child_giveup(p);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	} else if (p->self) {
		child_run(p, job, &pl); /* does not return */
	} else if (parent_run(p, job, &pl, &v, err) == 0) {
		rc = decide(p, job, &v, out, err);
	}
	out->children = v.counts;
	/* on success the children, done, are reaped by rq_parallel_end() */
	if (rc != 0)
		kill_children(p);
	if (rc < 0)
		rq_parallel_kept_free(&out->kept);
	rq_conflicts_free(&v.first.conf);
	rq_parallel_kept_free(&v.first.kept);
	rq_parallel_kept_free(&v.kept);
	plan_free(&pl);
	return rc;
}

void rq_parallel_end(rq_parallel *p)
{
	if (!p)
		return;
	if (p->self)
		child_giveup(p); /* the parent meets the same failure, or replays alone */
	kill_children(p);
	parallel_free(p);
}
