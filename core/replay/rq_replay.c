/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's replay.c and builtin/replay.c (Elijah Newren, Christian Couder) */
/*
 * rq_replay: the replay driver. Resolves the revisions and the target,
 * walks the commits, picks each one with a tree merge, writes the new
 * commits into a temporary object directory, packs them, and computes the
 * ref updates the way git replay does.
 */
#define _GNU_SOURCE /* pipe2 */
#include "rq_replay.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_commit.h"
#include "rq_objdir.h"
#include "rq_oidmap.h"
#include "rq_revs.h"
#include "rq_walk.h"
#include "rq_buf.h"
#include "rq_mem.h"
#include "rq_memodb.h"
#include "rq_odb.h"
#include "rq_sha1.h"
#include "rq_testhook.h"

/* Heap a pick is expected to add (objects read and written, merge memory),
 * reserved ahead of the picks (rq_mem_reserve): measured about 13 KiB on
 * the 100k-file corpus. */
#define RQ_RESERVE_PER_PICK ((size_t)12 << 10)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Build with -DRQ_TRACE for a timestamped line per phase on stderr (each
 * worker's pid, CLOCK_MONOTONIC ms): where a replay's time goes. */
#ifdef RQ_TRACE
#define TRACE(what) fprintf(stderr, "[%d] %9.3f %s\n", (int)getpid(), now_ms(), what)
#else
#define TRACE(what) ((void)0)
#endif

static const char *mode_option(rq_mode mode)
{
	switch (mode) {
	case RQ_MODE_ADVANCE:
		return "--advance";
	case RQ_MODE_REVERT:
		return "--revert";
	default:
		return "--onto";
	}
}

/* Local branches (and a detached HEAD) by the commit they point at. */
typedef struct deco {
	git_oid oid;
	char *ref;
} deco;

typedef struct decos {
	deco *v;
	size_t n, cap;
} decos;

static void decos_free(decos *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].ref);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static int decos_add(decos *d, const char *ref, const git_oid *oid, rq_error *err)
{
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 32;
		deco *nv = realloc(d->v, ncap * sizeof(*nv));
		if (!nv)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		d->v = nv;
		d->cap = ncap;
	}
	if (!(d->v[d->n].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&d->v[d->n].oid, oid);
	d->n++;
	return 0;
}

static int cmp_deco_desc(const void *a, const void *b)
{
	return strcmp(((const deco *)b)->ref, ((const deco *)a)->ref);
}

/*
 * git lists a commit's decorations newest-added first, and adds the
 * branches in ref order and a detached HEAD after them: so per commit, a
 * detached HEAD comes first, then the branches in descending name order
 * (as upstream git replay prints them).
 */
static int load_decorations(git_repository *repo, int with_head, decos *d, rq_error *err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	int rc;

	if (git_reference_iterator_glob_new(&it, repo, "refs/heads/*") < 0)
		return rq_error_git(err, "cannot list branches");
	while ((rc = git_reference_next(&ref, it)) == 0) {
		if (git_reference_type(ref) == GIT_REFERENCE_DIRECT &&
		    decos_add(d, git_reference_name(ref), git_reference_target(ref), err) < 0) {
			git_reference_free(ref);
			git_reference_iterator_free(it);
			return -1;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return rq_error_git(err, "cannot list branches");
	qsort(d->v, d->n, sizeof(*d->v), cmp_deco_desc);
	if (with_head && git_repository_head_detached(repo) == 1) {
		git_oid head;
		deco h;
		if (git_reference_name_to_id(&head, repo, "HEAD") != 0)
			return 0;
		if (decos_add(d, "HEAD", &head, err) < 0)
			return -1;
		h = d->v[d->n - 1];
		memmove(d->v + 1, d->v, (d->n - 1) * sizeof(*d->v));
		d->v[0] = h;
	}
	return 0;
}

static int add_update(rq_replay_result *r, size_t *cap, const char *ref, const git_oid *new_id,
		      const git_oid *old_id, rq_error *err)
{
	if (r->nupdates == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		rq_ref_update *nv = realloc(r->updates, ncap * sizeof(*nv));
		if (!nv)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		r->updates = nv;
		*cap = ncap;
	}
	if (!(r->updates[r->nupdates].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_oid_cpy(&r->updates[r->nupdates].new_id, new_id);
	git_oid_cpy(&r->updates[r->nupdates].old_id, old_id);
	r->nupdates++;
	return 0;
}

static int is_positive_ref(const rq_revs *revs, const char *ref)
{
	for (size_t i = 0; i < revs->n; i++)
		if (!revs->v[i].negative && revs->v[i].fullref && !strcmp(revs->v[i].fullref, ref))
			return 1;
	return 0;
}

static int commit_tree(git_repository *repo, const git_oid *commit, git_oid *tree, rq_error *err)
{
	git_commit *c = NULL;
	if (git_commit_lookup(&c, repo, commit) < 0)
		return rq_error_git(err, "cannot read commit");
	git_oid_cpy(tree, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

static int validate(const rq_replay_opts *o, rq_error *err)
{
	if (!o->target) /* an empty one is judged as git does, by resolve_target */
		return rq_error_set(err, RQ_E_USAGE,
				    "exactly one of --onto, --advance, or --revert is required");
	if (o->mode != RQ_MODE_ONTO && o->mode != RQ_MODE_ADVANCE && o->mode != RQ_MODE_REVERT)
		return rq_error_set(err, RQ_E_USAGE, "unknown replay mode");
	if (o->contained && o->mode != RQ_MODE_ONTO)
		return rq_error_set(err, RQ_E_USAGE,
				    "options '%s' and '%s' cannot be used together",
				    mode_option(o->mode), "--contained");
	if (o->ref && o->contained)
		return rq_error_set(err, RQ_E_USAGE,
				    "options '%s' and '%s' cannot be used together", "--ref",
				    "--contained");
	if (o->ref && (!rq_revs_refname_valid(o->ref) || !strncmp(o->ref, "HEAD", 5)))
		return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname",
				    o->ref); /* git's words */
	if (o->empty != RQ_EMPTY_DROP && o->empty != RQ_EMPTY_KEEP && o->empty != RQ_EMPTY_ABORT)
		return rq_error_set(err, RQ_E_USAGE, "unknown empty-commit mode");
	if (!o->nrevisions)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	return 0;
}

typedef struct child {
	pid_t pid;
	int fd;
	rq_buf out;
	int status;
	int reaped;
	int done; /* it reported "D": it took part (and saved its objects) */
} child;

/*
 * The workers of a parallel replay (the parent and its children) take
 * groups from one shared list, biggest first, through a counter in a
 * shared page, so a worker that is slowed down takes fewer groups. They
 * also share the lowest index of a failed pick: a pick after it cannot
 * change the result (a sequential replay stops there), so it is skipped.
 */
typedef struct sched {
	atomic_size_t next; /* next entry of order[] to take */
	atomic_size_t fail; /* lowest failed pick so far; SIZE_MAX: none */
	/* the parent's resolution of the revisions and the target: a child
	 * that resolved differently (a ref moved in between) takes no group */
	atomic_int resolved;
	unsigned char digest[20];
} sched;

typedef struct state {
	git_repository *repo;
	const rq_replay_opts *opts;
	rq_replay_result *res;
	rq_error *err;
	rq_revs revs;
	rq_walk walk;
	decos decos;
	rq_objdir *objdir;
	rq_merger *merger;
	git_odb *odb;
	rq_oidmap map;	  /* original commit -> index in new_ids */
	git_oid *new_ids; /* replayed form of walk.commits[i] */
	git_oid *new_trees;
	git_oid onto, onto_tree;
	char *branch; /* --advance/--revert: full name */
	char committer[2 * RQ_IDENT_FIELD_MAX + 64];
	char author[2 * RQ_IDENT_FIELD_MAX + 64]; /* of a revert */
	size_t ucap;
	/* a parallel replay's workers, forked once the revisions are resolved
	 * (fork_workers): in the parent, its children; in a child, its number
	 * (from 1) and where its report goes */
	child ch[RQ_MAX_JOBS];
	int nch, workers;
	sched *sh;
	unsigned child_idx;
	int child_fd;
	pid_t parent_pid; /* in a child: the parent it was forked from */
} state;

/* How many different commits the positive revisions name. */
static size_t distinct_tips(const rq_revs *revs)
{
	size_t n = 0;

	for (size_t i = 0; i < revs->n; i++) {
		size_t k = 0;
		if (revs->v[i].negative)
			continue;
		while (k < i &&
		       (revs->v[k].negative || !git_oid_equal(&revs->v[k].oid, &revs->v[i].oid)))
			k++;
		n += k == i;
	}
	return n;
}

static int resolve_target(state *s)
{
	const rq_replay_opts *o = s->opts;
	rq_error *err = s->err;

	if (!s->revs.npositive)
		return rq_error_set(err, RQ_E_NOTHING, "need some commits to replay");
	if (o->mode == RQ_MODE_ONTO) {
		if (rq_revs_resolve_commit(s->repo, o->target, &s->onto, err) < 0) {
			if (err->code == RQ_E_BAD_REVISION) /* git's words */
				rq_error_set(err, RQ_E_BAD_REVISION,
					     "'%s' is not a valid commit-ish for --onto",
					     o->target);
			return -1;
		}
		if (o->ref && distinct_tips(&s->revs) > 1) /* as git: the same tip twice is one */
			return rq_error_set(err, RQ_E_USAGE,
					    "'--ref' cannot be used with multiple revision ranges");
		/* a positive revision that is no ref (an id, X^!) is replayed and
		 * updates nothing, as in git replay */
	} else {
		int n = rq_revs_dwim_ref(s->repo, o->target, &s->branch, NULL, err);
		if (n < 0)
			return -1;
		if (n > 1)
			return rq_error_set(err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.",
					    o->target);
		if (n == 0)
			return rq_error_set(err, RQ_E_NOT_A_REF,
					    "argument to %s must be a reference",
					    mode_option(o->mode));
		if (rq_revs_resolve_commit(s->repo, o->target, &s->onto, err) < 0)
			return -1;
		if (s->revs.npositive > 1)
			return rq_error_set(err, RQ_E_USAGE,
					    "'%s' cannot be used with multiple revision ranges "
					    "because the ordering would be ill-defined",
					    mode_option(o->mode));
	}
	return commit_tree(s->repo, &s->onto, &s->onto_tree, err);
}

static int decorate_updates(state *s, const git_commit *c, const git_oid *new_id)
{
	const git_oid *id = git_commit_id(c);

	for (size_t i = 0; i < s->decos.n; i++) {
		const deco *d = &s->decos.v[i];
		if (!git_oid_equal(&d->oid, id))
			continue;
		if (!s->opts->contained && !is_positive_ref(&s->revs, d->ref))
			continue;
		if (add_update(s->res, &s->ucap, d->ref, new_id, id, s->err) < 0)
			return -1;
	}
	return 0;
}

static int ensure_empty_tree(state *s)
{
	git_oid id;
	if (rq_memodb_write(&id, s->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(s->err, "cannot write the empty tree");
	return 0;
}

/* Pick (or revert) walk.commits[i]; 1 on conflict. */
static int final_updates(state *s, const git_oid *last);

static int pick_one(state *s, size_t i, const git_oid *last, const git_oid *last_tree)
{
	git_commit *c = s->walk.commits[i];
	const git_oid *pick_tree = git_commit_tree_id(c);
	git_oid parent_tree, merged, new_id, empty;
	const git_oid *base_id, *base_tree = NULL, *ours_id, *ours_tree;
	int have_parent = git_commit_parentcount(c) > 0, rc;
	size_t pidx;

	rq_objdir_keepalive(s->objdir, RQ_OBJDIR_KEEPALIVE_SECONDS);
	git_oid_fromstr(&empty, RQ_EMPTY_TREE_HEX);
	if (have_parent) {
		base_id = git_commit_parent_id(c, 0);
		if (commit_tree(s->repo, base_id, &parent_tree, s->err) < 0)
			return -1;
		base_tree = &parent_tree;
	}
	if (s->opts->mode == RQ_MODE_REVERT) {
		ours_id = last;
		ours_tree = last_tree;
	} else if (have_parent && rq_oidmap_get(&s->map, git_commit_parent_id(c, 0), &pidx)) {
		ours_id = &s->new_ids[pidx];
		ours_tree = &s->new_trees[pidx];
	} else {
		ours_id = &s->onto;
		ours_tree = &s->onto_tree;
	}

	if (s->opts->mode == RQ_MODE_REVERT) {
		if (!base_tree && ensure_empty_tree(s) < 0)
			return -1;
		rc =
		    rq_merger_merge(s->merger, pick_tree, ours_tree, base_tree ? base_tree : &empty,
				    &merged, &s->res->conflicts, s->err);
	} else {
		rc = rq_merger_merge(s->merger, base_tree, ours_tree, pick_tree, &merged,
				     &s->res->conflicts, s->err);
	}
	if (rc < 0)
		return -1;
	if (rc == 1) {
		s->res->conflicted = 1;
		git_oid_cpy(&s->res->conflict_commit, git_commit_id(c));
		return 1;
	}

	int was_empty = git_oid_equal(pick_tree, base_tree ? base_tree : &empty);
	if (git_oid_equal(&merged, ours_tree) && !was_empty) {
		if (s->opts->empty == RQ_EMPTY_ABORT) {
			char hex[GIT_OID_HEXSZ + 1];
			git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
			return rq_error_set(s->err, RQ_E_EMPTY_COMMIT, "commit %s became empty",
					    hex);
		}
		if (s->opts->empty == RQ_EMPTY_DROP) {
			git_oid_cpy(&new_id, ours_id);
			s->res->stats.dropped++;
			goto mapped;
		}
	}
	if (s->opts->mode == RQ_MODE_REVERT)
		rc = rq_commit_revert(s->odb, git_commit_id(c), &merged, ours_id, s->author,
				      s->committer, &new_id, s->err);
	else
		rc = rq_commit_pick(s->odb, git_commit_id(c), &merged, ours_id, s->committer,
				    &new_id, s->err);
	if (rc < 0)
		return -1;
	s->res->stats.picked++;
mapped:
	git_oid_cpy(&s->new_ids[i], &new_id);
	git_oid_cpy(&s->new_trees[i], &merged);
	if (rq_oidmap_put(&s->map, git_commit_id(c), i) < 0)
		return rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/*
 * Pick every commit, in order.
 * 0 clean, 1 conflict, -1 error; *fail is the index of the failing pick.
 */
static int pick_range(state *s, size_t *fail)
{
	git_oid last, last_tree;

	git_oid_cpy(&last, &s->onto);
	git_oid_cpy(&last_tree, &s->onto_tree);
	if (s->walk.n)
		rq_testhook_hold("pick");
	for (size_t i = 0; i < s->walk.n; i++) {
		int r;
		if (s->opts->cancel && *s->opts->cancel) {
			*fail = i;
			return rq_error_set(s->err, RQ_E_INTERRUPTED, "interrupted");
		}
		r = pick_one(s, i, &last, &last_tree);
		if (r != 0) {
			*fail = i;
			return r;
		}
		git_oid_cpy(&last, &s->new_ids[i]);
		git_oid_cpy(&last_tree, &s->new_trees[i]);
	}
	return 0;
}

/* ---- parallel replay: independent groups of commits in forked children ---- */

static size_t uf_find(size_t *p, size_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/*
 * Groups: a commit is in its parent's group when the parent is replayed
 * too, so a stacked branch goes with the branch below it. Returns the
 * number of groups; group[i] numbers them from 0 in order of appearance.
 */
static size_t compute_groups(state *s, size_t *group, rq_error *err)
{
	size_t n = s->walk.n, k = 0;
	size_t *uf = malloc((n + 1) * sizeof(*uf)), *label = malloc((n + 1) * sizeof(*label));
	rq_oidmap idx;

	rq_oidmap_init(&idx);
	if (!uf || !label) {
		free(uf);
		free(label);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		uf[i] = i;
		label[i] = SIZE_MAX;
		if (rq_oidmap_put(&idx, git_commit_id(s->walk.commits[i]), i) < 0) {
			rq_error_set(err, RQ_E_NOMEM, "out of memory");
			k = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t p;
		git_commit *c = s->walk.commits[i];
		if (git_commit_parentcount(c) &&
		    rq_oidmap_get(&idx, git_commit_parent_id(c, 0), &p))
			uf[uf_find(uf, i)] = uf_find(uf, p);
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = uf_find(uf, i);
		if (label[r] == SIZE_MAX)
			label[r] = k++;
		group[i] = label[r];
	}
out:
	rq_oidmap_free(&idx);
	free(uf);
	free(label);
	return k;
}

static void wb_fmt(rq_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wb_fmt(rq_buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		rq_buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

typedef struct plan {
	size_t ngroups;
	size_t *order;	 /* groups, biggest first */
	size_t *start;	 /* group g's commits: members[start[g] .. start[g + 1]) */
	size_t *members; /* commit indexes, in walk order within each group */
} plan;

/* What one worker saw: its earliest failed pick (none: fail SIZE_MAX). */
typedef struct wresult {
	size_t fail;
	int kind; /* 1 conflict (conf), -1 error (err) */
	rq_conflicts conf;
	rq_error err;
} wresult;

static void lower_fail(sched *sh, size_t i)
{
	size_t cur = atomic_load(&sh->fail);
	while (i < cur && !atomic_compare_exchange_weak(&sh->fail, &cur, i))
		;
}

/*
 * Take groups until none is left; did[i] is set for every commit picked.
 * A failed pick ends its group (the group's later commits come after it).
 * Returns 0, or -1 when interrupted (s->err set).
 */
static int run_groups(state *s, const plan *pl, unsigned char *did, wresult *wr)
{
	for (;;) {
		size_t k = atomic_fetch_add(&s->sh->next, 1), g;
		if (k >= pl->ngroups)
			return 0;
		g = pl->order[k];
		for (size_t j = pl->start[g]; j < pl->start[g + 1]; j++) {
			size_t i = pl->members[j];
			int r;
			if (i > atomic_load(&s->sh->fail))
				break;
			if (s->opts->cancel && *s->opts->cancel)
				return rq_error_set(s->err, RQ_E_INTERRUPTED, "interrupted");
			r = pick_one(s, i, &s->onto, &s->onto_tree);
			if (r == 0) {
				did[i] = 1;
				continue;
			}
			/* i is below every failure seen so far, this worker's too */
			wr->fail = i;
			wr->kind = r;
			rq_conflicts_free(&wr->conf);
			if (r == 1) {
				wr->conf = s->res->conflicts;
				memset(&s->res->conflicts, 0, sizeof(s->res->conflicts));
				s->res->conflicted = 0;
			} else {
				wr->err = *s->err;
				rq_error_clear(s->err);
			}
			lower_fail(s->sh, i);
			break;
		}
	}
}

/* Write a child's report to its parent and exit. */
static void child_send(state *s, const char *p, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t w = write(s->child_fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(4);
		off += (size_t)w;
	}
	/* the parent sees the end of the report now, not after this process's
	 * memory is torn down */
	close(s->child_fd);
	TRACE("child reported");
	_exit(0);
}

/* In a child that takes no group (the replay is not parallel after all,
 * its walk failed and the parent meets the same failure, or it ran out of
 * memory before its first group): say so and exit. Allocates nothing. */
static void child_giveup(state *s)
{
	child_send(s, "X\n", 2);
}

static void child_report(state *s, rq_buf *b)
{
	if (b->oom)
		_exit(3);
	child_send(s, b->p, b->len);
}

/* Runs in a child: pick groups, hand the new objects over as a part file,
 * report what happened, exit. */
static void child_run(state *s, const plan *pl)
{
	size_t mark = rq_objdir_mark(s->objdir);
	unsigned idx = s->child_idx;
	rq_buf b = {0};
	wresult wr = {.fail = SIZE_MAX};
	unsigned char *did = calloc(s->walk.n + 1, 1);
	const rq_merge_stats *ms;
	int r;

	if (!did)
		child_giveup(s); /* before any group: the other workers take them */
	rq_error_clear(&wr.err);
	TRACE("child groups start");
	r = run_groups(s, pl, did, &wr);
	TRACE("child groups done");
	/* my new objects go to the parent through the temporary directory;
	 * not when the replay fails, here or in another worker already */
	if (r == 0 && wr.fail == SIZE_MAX && atomic_load(&s->sh->fail) == SIZE_MAX &&
	    rq_objdir_save_part(s->objdir, mark, idx, s->err) < 0)
		r = -1;
	for (size_t i = 0; i < s->walk.n; i++) {
		char a[GIT_OID_HEXSZ + 1], t[GIT_OID_HEXSZ + 1];
		if (!did[i])
			continue;
		git_oid_tostr(a, sizeof(a), &s->new_ids[i]);
		git_oid_tostr(t, sizeof(t), &s->new_trees[i]);
		wb_fmt(&b, "N %zu %s %s\n", i, a, t);
	}
	ms = rq_merger_stats(s->merger);
	wb_fmt(&b, "S %zu %zu %zu %zu %zu %zu %zu\n", s->res->stats.picked, s->res->stats.dropped,
	       ms->trivial, ms->full, ms->fallback, ms->scores_computed, ms->scores_reused);
	if (wr.fail != SIZE_MAX && wr.kind == 1) {
		wb_fmt(&b, "C %zu\n", wr.fail);
		for (size_t k = 0; k < wr.conf.n; k++) {
			size_t len = strlen(wr.conf.v[k].path);
			wb_fmt(&b, "P %d %zu\n", (int)wr.conf.v[k].kind, len);
			rq_buf_add(&b, wr.conf.v[k].path, len);
			rq_buf_add(&b, "\n", 1);
		}
	} else if (wr.fail != SIZE_MAX) {
		size_t len = strlen(wr.err.msg);
		wb_fmt(&b, "E %zu %d %zu\n", wr.fail, (int)wr.err.code, len);
		rq_buf_add(&b, wr.err.msg, len);
		rq_buf_add(&b, "\n", 1);
	}
	if (r < 0) {
		/* not a pick's failure (no part file, say): it fails the replay,
		 * unless a pick failed, which is what --jobs=1 would report */
		size_t len = strlen(s->err->msg);
		wb_fmt(&b, "F %d %zu\n", (int)s->err->code, len);
		rq_buf_add(&b, s->err->msg, len);
		rq_buf_add(&b, "\n", 1);
	}
	rq_buf_add(&b, "D\n", 2);
	child_report(s, &b);
}

/* A report ends with "D" (done) or "X" (took no group) on a line. */
static int report_complete(const rq_buf *out)
{
	const char *p = out->p;
	size_t n = out->len;
	if (out->oom || n < 2 || p[n - 1] != '\n' || (p[n - 2] != 'D' && p[n - 2] != 'X'))
		return 0;
	return n == 2 || p[n - 3] == '\n';
}

/* Parse one child's report into the state. fail/fail_kind: earliest failure. */
static int absorb(state *s, child *c, size_t *fail, int *fail_kind, rq_conflicts *fconf,
		  rq_error *ferr, rq_error *other, int *has_other)
{
	char *p = c->out.p, *end = c->out.p ? c->out.p + c->out.len : NULL;
	int done = 0;

	while (p && p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		*nl = '\0';
		if (p[0] == 'N') {
			size_t i;
			char a[GIT_OID_HEXSZ + 1], t[GIT_OID_HEXSZ + 1];
			if (sscanf(p, "N %zu %40s %40s", &i, a, t) != 3 || i >= s->walk.n ||
			    git_oid_fromstr(&s->new_ids[i], a) < 0 ||
			    git_oid_fromstr(&s->new_trees[i], t) < 0)
				return -1;
		} else if (p[0] == 'S') {
			size_t v[7];
			if (sscanf(p, "S %zu %zu %zu %zu %zu %zu %zu", &v[0], &v[1], &v[2], &v[3],
				   &v[4], &v[5], &v[6]) != 7)
				return -1;
			s->res->stats.picked += v[0];
			s->res->stats.dropped += v[1];
			s->res->stats.merges_trivial += v[2];
			s->res->stats.merges_full += v[3];
			s->res->stats.merges_fallback += v[4];
			s->res->stats.scores_computed += v[5];
			s->res->stats.scores_reused += v[6];
		} else if (p[0] == 'C' || p[0] == 'E') {
			size_t i, len = 0;
			int code = 0;
			if (p[0] == 'C' ? sscanf(p, "C %zu", &i) != 1
					: sscanf(p, "E %zu %d %zu", &i, &code, &len) != 3)
				return -1;
			int better = i < *fail;
			if (p[0] == 'E') {
				if (nl + 1 + len > end)
					return -1;
				if (better) {
					char msg[RQ_ERROR_MSG_MAX];
					snprintf(msg, sizeof(msg), "%.*s", (int)len, nl + 1);
					rq_error_set(ferr, (rq_code)code, "%s", msg);
				}
				nl += len + 1;
			}
			if (better) {
				rq_conflicts_free(fconf);
				*fail = i;
				*fail_kind = p[0] == 'C' ? 1 : -1;
			}
			/* conflict paths follow as P lines; keep them only for the winner */
			while (p[0] == 'C' && nl + 1 < end && nl[1] == 'P') {
				char *q = nl + 1, *ql = memchr(q, '\n', (size_t)(end - q));
				int kind;
				size_t plen;
				if (!ql)
					return -1;
				*ql = '\0';
				if (sscanf(q, "P %d %zu", &kind, &plen) != 2 || ql + 1 + plen > end)
					return -1;
				if (better) {
					if (fconf->n == fconf->cap) {
						size_t ncap = fconf->cap ? fconf->cap * 2 : 8;
						rq_conflict *nv =
						    realloc(fconf->v, ncap * sizeof(*nv));
						if (!nv)
							return -1;
						fconf->v = nv;
						fconf->cap = ncap;
					}
					fconf->v[fconf->n].path = strndup(ql + 1, plen);
					fconf->v[fconf->n].kind = (rq_conflict_kind)kind;
					if (!fconf->v[fconf->n].path)
						return -1;
					fconf->n++;
				}
				nl = ql + 1 + plen;
			}
		} else if (p[0] == 'F') {
			int code;
			size_t len;
			if (sscanf(p, "F %d %zu", &code, &len) != 2 || nl + 1 + len > end)
				return -1;
			if (!*has_other) {
				rq_error_set(other, (rq_code)code, "%.*s", (int)len, nl + 1);
				*has_other = 1;
			}
			nl += len + 1;
		} else if (p[0] == 'D' || p[0] == 'X') {
			/* X: the child took no group (and left no part file) */
			c->done = p[0] == 'D';
			done = 1;
		}
		p = nl + 1;
	}
	return done ? 0 : -1;
}

/* Reap one child (retrying when a signal interrupts the wait). */
static void reap(child *c)
{
	pid_t r;
	do
		r = waitpid(c->pid, &c->status, 0);
	while (r < 0 && errno == EINTR);
	if (r == c->pid || (r < 0 && errno == ECHILD))
		c->reaped = 1;
}

static void kill_children(child *ch, int n)
{
	for (int i = 0; i < n; i++)
		if (ch[i].pid > 0 && !ch[i].reaped) {
			kill(ch[i].pid, SIGKILL);
			reap(&ch[i]);
		}
}

typedef struct gsz {
	size_t size, g;
} gsz;

static int cmp_gsz(const void *pa, const void *pb)
{
	const gsz *a = pa, *b = pb;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

/* The groups' member lists and the order they are taken in. */
static int make_plan(state *s, const size_t *group, size_t ngroups, plan *pl)
{
	size_t n = s->walk.n, *fill;
	gsz *by = malloc(ngroups * sizeof(*by));

	memset(pl, 0, sizeof(*pl));
	pl->ngroups = ngroups;
	pl->order = malloc(ngroups * sizeof(*pl->order));
	pl->start = calloc(ngroups + 1, sizeof(*pl->start));
	pl->members = malloc((n + 1) * sizeof(*pl->members));
	fill = calloc(ngroups + 1, sizeof(*fill));
	if (!by || !pl->order || !pl->start || !pl->members || !fill) {
		free(by);
		free(fill);
		return rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		pl->start[group[i] + 1]++;
	for (size_t g = 0; g < ngroups; g++) {
		by[g].size = pl->start[g + 1];
		by[g].g = g;
		pl->start[g + 1] += pl->start[g];
	}
	for (size_t i = 0; i < n; i++)
		pl->members[pl->start[group[i]] + fill[group[i]]++] = i;
	qsort(by, ngroups, sizeof(*by), cmp_gsz);
	for (size_t k = 0; k < ngroups; k++)
		pl->order[k] = by[k].g;
	free(by);
	free(fill);
	return 0;
}

static void free_plan(plan *pl)
{
	free(pl->order);
	free(pl->start);
	free(pl->members);
}

/*
 * Replay the groups with `jobs` workers: this process and jobs - 1 forked
 * children. Children hand their objects over as part files; this process
 * keeps its own in memory. 0 clean, 1 conflict, -1 error.
 */
/* What the revisions and the target resolved to. */
static void resolution_digest(const state *s, unsigned char out[20])
{
	rq_sha1 h;
	rq_sha1_init(&h);
	rq_sha1_update(&h, s->onto.id, GIT_OID_RAWSZ);
	for (size_t i = 0; i < s->revs.n; i++) {
		const rq_rev *r = &s->revs.v[i];
		unsigned char neg = (unsigned char)r->negative;
		rq_sha1_update(&h, &neg, 1);
		rq_sha1_update(&h, r->oid.id, GIT_OID_RAWSZ);
		if (r->fullref)
			rq_sha1_update(&h, r->fullref, strlen(r->fullref) + 1);
	}
	if (s->branch)
		rq_sha1_update(&h, s->branch, strlen(s->branch) + 1);
	rq_sha1_final(&h, out);
}

/*
 * The parent publishes its resolution; a child compares its own with it
 * (waiting for it if need be). 0: the same (go on), -1: not (give up).
 */
static int agree_on_resolution(state *s)
{
	unsigned char mine[20];

	resolution_digest(s, mine);
	if (!s->child_idx) {
		memcpy(s->sh->digest, mine, sizeof(mine));
		atomic_store(&s->sh->resolved, 1);
		return 0;
	}
	while (!atomic_load(&s->sh->resolved)) {
		struct timespec ts = {0, 20000};
		if (getppid() != s->parent_pid)
			_exit(5); /* the parent is gone */
		nanosleep(&ts, NULL);
	}
	return memcmp(mine, s->sh->digest, sizeof(mine)) ? -1 : 0;
}

/* Positive revisions the arguments name, before they are resolved: "A",
 * "A..B" one each, "A...B" two; "^A" none. */
static size_t positive_args(const rq_replay_opts *o)
{
	size_t n = 0;
	for (size_t i = 0; i < o->nrevisions; i++) {
		const char *a = o->revisions[i];
		if (a[0] == '^')
			continue;
		n += strstr(a, "...") ? 2 : 1;
	}
	return n;
}

/*
 * Fork jobs - 1 workers before the revisions are resolved, while this
 * process is small: each worker resolves and walks itself (the same walk,
 * once agree_on_resolution() checked they resolved the same) and builds
 * its own caches. Forking later, with the walk's and the picks' memory
 * shared copy-on-write, made every worker slower (measured: 240 ms
 * instead of 195 ms for 3,000 picks). Workers share the open repository,
 * its mapped pack indexes and the temporary object directory. In a child
 * this returns with s->child_idx set. What cannot be forked (no shared
 * page, no process or descriptor left) leaves fewer workers, or none.
 */
static void fork_workers(state *s, int jobs)
{
	git_oid zero;

	s->sh =
	    mmap(NULL, sizeof(sched), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->sh == MAP_FAILED) {
		s->sh = NULL; /* this process replays alone */
		return;
	}
	atomic_init(&s->sh->next, 0);
	atomic_init(&s->sh->fail, SIZE_MAX);
	atomic_init(&s->sh->resolved, 0);
	s->workers = jobs;
	/* a lookup that misses visits every pack: all their indexes get mapped
	 * here, once, for every worker */
	memset(&zero, 0, sizeof(zero));
	(void)git_odb_exists(s->odb, &zero);
	fflush(NULL);
	s->parent_pid = getpid();
	for (int c = 1; c < jobs; c++) {
		int fds[2];
		pid_t pid;
		s->ch[c].fd = -1;
		/* close-on-exec: a program a threaded host starts meanwhile must
		 * not hold a report pipe open */
		if (pipe2(fds, O_CLOEXEC) < 0)
			pid = -1;
		else if ((pid = fork()) < 0) {
			close(fds[0]);
			close(fds[1]);
		}
		if (pid < 0) {
			/* out of processes or descriptors: fewer workers, or none */
			s->workers = c;
			if (c == 1) {
				munmap(s->sh, sizeof(sched));
				s->sh = NULL;
			}
			return;
		}
		if (pid == 0) {
			close(fds[0]);
			for (int o = 1; o < c; o++)
				close(s->ch[o].fd);
			memset(s->ch, 0, sizeof(s->ch));
			s->nch = 0;
			s->child_idx = (unsigned)c;
			s->child_fd = fds[1];
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			/* the parent decides; it kills us if it must */
			signal(SIGINT, SIG_IGN);
			signal(SIGHUP, SIG_IGN);
			signal(SIGTERM, SIG_DFL);
			if (getppid() != s->parent_pid)
				_exit(5); /* the parent is gone already */
			if (s->opts->child_hook)
				s->opts->child_hook((unsigned)c, s->opts->child_hook_arg);
			rq_testhook_hold("replay-child");
			return;
		}
		close(fds[1]);
		s->ch[c].pid = pid;
		s->ch[c].fd = fds[0];
		s->nch = c;
	}
	return;
}

/* Kill and reap the children (when they are not needed, or on failure). */
static void drop_workers(state *s)
{
	kill_children(s->ch, s->nch + 1);
	for (int c = 1; c <= s->nch; c++) {
		if (s->ch[c].fd >= 0)
			close(s->ch[c].fd);
		s->ch[c].fd = -1;
		free(s->ch[c].out.p);
		s->ch[c].out.p = NULL;
	}
	s->nch = 0;
	if (s->sh)
		munmap(s->sh, sizeof(sched));
	s->sh = NULL;
}

/*
 * Replay the groups with the workers fork_workers() made: this process is
 * worker 0. Children hand their objects over as part files; this process
 * keeps its own in memory. In a child this does not return. 0 clean,
 * 1 conflict, -1 error.
 */
static int pick_parallel(state *s, const size_t *group, size_t ngroups)
{
	size_t n = s->walk.n, fail, mark;
	int nch = s->nch, fail_kind, rc = -1, has_other = 0;
	child *ch = s->ch;
	unsigned char *did = calloc(n + 1, 1);
	wresult wr = {.fail = SIZE_MAX};
	rq_error other; /* the first failure that is not a pick's */
	plan pl;

	rq_error_clear(&wr.err);
	rq_error_clear(&other);
	if (make_plan(s, group, ngroups, &pl) < 0) {
		if (s->child_idx)
			child_giveup(s);
		goto out;
	}
	rq_mem_reserve(n / (size_t)s->workers * RQ_RESERVE_PER_PICK);
	if (s->child_idx)
		child_run(s, &pl);
	if (!did) {
		rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	mark = rq_objdir_mark(s->objdir);
	/* this process picks too, and compresses what it wrote while the
	 * children finish */
	TRACE("groups start");
	if (run_groups(s, &pl, did, &wr) < 0)
		goto out;
	TRACE("groups done");
	/* a failure to compress counts only if no pick failed (a child's
	 * report may still bring one): --jobs=1 would have reported that */
	if (wr.fail == SIZE_MAX && atomic_load(&s->sh->fail) == SIZE_MAX &&
	    rq_objdir_encode(s->objdir, mark, &other) < 0)
		has_other = 1;
	/* read every child's report; a child that dies takes the others down */
	for (;;) {
		struct pollfd pfd[RQ_MAX_JOBS];
		int idx[RQ_MAX_JOBS], np = 0;
		for (int c = 1; c <= nch; c++)
			if (ch[c].fd >= 0) {
				pfd[np].fd = ch[c].fd;
				pfd[np].events = POLLIN;
				idx[np++] = c;
			}
		if (!np)
			break;
		if (poll(pfd, (nfds_t)np, 1000) < 0 && errno != EINTR) {
			rq_error_set(s->err, RQ_E_IO, "poll: %s", strerror(errno));
			goto out;
		}
		if (s->opts->cancel && *s->opts->cancel) {
			rq_error_set(s->err, RQ_E_INTERRUPTED, "interrupted");
			goto out;
		}
		for (int k = 0; k < np; k++) {
			child *c = &ch[idx[k]];
			char buf[65536];
			ssize_t r;
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(c->fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r > 0) {
				rq_buf_add(&c->out, buf, (size_t)r);
				continue;
			}
			close(c->fd);
			c->fd = -1;
			/* a whole report: the child is done (reaped at the end, while
			 * its exit runs); else it died, and how matters */
			if (report_complete(&c->out))
				continue;
			reap(c);
			if (!c->reaped || !WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
				rq_error_set(s->err, RQ_E_CRASHED,
					     "a replay child died (%s %d); the replay is abandoned",
					     WIFSIGNALED(c->status) ? "signal" : "status",
					     WIFSIGNALED(c->status) ? WTERMSIG(c->status)
								    : WEXITSTATUS(c->status));
				goto out;
			}
		}
	}
	TRACE("reports in");
	/* the earliest failure wins, this process's own included */
	fail = wr.fail;
	fail_kind = wr.kind;
	for (int c = 1; c <= nch; c++) {
		if (ch[c].out.oom) {
			rq_error_set(s->err, RQ_E_NOMEM, "out of memory");
			goto out;
		}
		if (absorb(s, &ch[c], &fail, &fail_kind, &wr.conf, &wr.err, &other, &has_other) <
		    0) {
			rq_error_set(s->err, RQ_E_INTERNAL,
				     "unreadable report from a replay child");
			goto out;
		}
	}
	if (fail != SIZE_MAX && fail_kind == 1) {
		s->res->conflicted = 1;
		git_oid_cpy(&s->res->conflict_commit, git_commit_id(s->walk.commits[fail]));
		s->res->conflicts = wr.conf;
		memset(&wr.conf, 0, sizeof(wr.conf));
		rc = 1;
	} else if (fail != SIZE_MAX) {
		*s->err = wr.err;
		rc = -1;
	} else if (has_other) {
		*s->err = other;
		rc = -1;
	} else {
		for (int c = 1; c <= nch; c++)
			if (ch[c].done && rq_objdir_load_part(s->objdir, (unsigned)c, s->err) < 0)
				goto out;
		rc = 0;
	}
out:
	/* on success the children, done, are reaped at the end of the replay */
	if (rc != 0)
		drop_workers(s);
	rq_conflicts_free(&wr.conf);
	free_plan(&pl);
	free(did);
	return rc;
}

static int make_updates(state *s)
{
	if (s->opts->mode == RQ_MODE_ONTO && !s->opts->ref)
		for (size_t i = 0; i < s->walk.n; i++)
			if (decorate_updates(s, s->walk.commits[i], &s->new_ids[i]) < 0)
				return -1;
	return final_updates(s, s->walk.n ? &s->new_ids[s->walk.n - 1] : &s->onto);
}

static int final_updates(state *s, const git_oid *last)
{
	const char *ref = s->opts->ref ? s->opts->ref : s->branch;
	git_oid old;

	if (!ref) /* with nothing replayed too: the ref goes to onto, as in git */
		return 0;
	if (s->opts->ref) {
		int r = git_reference_name_to_id(&old, s->repo, ref);
		if (r == GIT_ENOTFOUND)
			memset(&old, 0, sizeof(old));
		else if (r < 0)
			return rq_error_git(s->err, "cannot read ref");
	} else {
		git_oid_cpy(&old, &s->onto);
	}
	return add_update(s->res, &s->ucap, ref, last, &old, s->err);
}

static void free_updates(rq_replay_result *r)
{
	for (size_t i = 0; i < r->nupdates; i++)
		free(r->updates[i].ref);
	free(r->updates);
	r->updates = NULL;
	r->nupdates = 0;
}

/* The temporary object directory and the odb that writes into it (once). */
static int open_objects(state *s)
{
	if (s->objdir)
		return 0;
	if (rq_objdir_open(&s->objdir, s->repo, s->opts->objects, s->err) < 0)
		return -1;
	if (git_repository_odb(&s->odb, s->repo) < 0)
		return rq_error_git(s->err, "cannot open the object database");
	return 0;
}

int rq_replay_run(git_repository *repo, const rq_replay_opts *opts, rq_replay_result *result,
		  rq_error *err)
{
	state s;
	rq_ident ident;
	const rq_ident *committer = opts->committer;
	double t0 = now_ms(), t;
	int rc = -1, jobs = opts->jobs > RQ_MAX_JOBS ? RQ_MAX_JOBS : opts->jobs;

	memset(result, 0, sizeof(*result));
	memset(&s, 0, sizeof(s));
	s.repo = repo;
	s.opts = opts;
	s.res = result;
	s.err = err;
	rq_oidmap_init(&s.map);
	git_error_clear(); /* an error left by an earlier call says nothing here */

	if (validate(opts, err) < 0)
		goto out;
	/* every read goes through the checking loose reader (rq_odb) */
	if (rq_odb_install(repo, opts->objects, err) < 0)
		goto out;
	if (!committer) {
		if (rq_ident_default(repo, &ident, err) < 0)
			goto out;
		committer = &ident;
	}
	if (rq_ident_format(committer, s.committer, sizeof(s.committer)) < 0 ||
	    rq_ident_format(opts->author ? opts->author : committer, s.author, sizeof(s.author)) <
		0) {
		rq_error_set(err, RQ_E_IDENT, "identity too long");
		goto out;
	}
	/* several branches and --jobs: the workers are forked now, while the
	 * process is small; each resolves and walks (those build per-process
	 * caches, which copy-on-write sharing would slow down) */
	{
		size_t npos = positive_args(opts);
		if (jobs > 1 && opts->mode != RQ_MODE_REVERT && npos > 1 &&
		    (!opts->jobs_auto || npos >= RQ_PARALLEL_AUTO_MIN_REVS)) {
			if (open_objects(&s) < 0)
				goto out;
			fork_workers(&s, npos < (size_t)jobs ? (int)npos : jobs);
		}
	}
	TRACE("forked");
	if (rq_revs_parse(repo, opts->revisions, opts->nrevisions, &s.revs, err) < 0)
		goto out;
	TRACE("parsed");
	if (resolve_target(&s) < 0)
		goto out;
	TRACE("target");
	if (s.sh && agree_on_resolution(&s) < 0)
		goto out; /* a child that saw other refs: the parent replays without it */
	if (opts->mode == RQ_MODE_ONTO) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &s.onto);
		snprintf(result->reflog_msg, sizeof(result->reflog_msg), "replay --onto %s", hex);
	} else {
		/* the branch as the user gave it, as git does */
		snprintf(result->reflog_msg, sizeof(result->reflog_msg), "replay %s %s",
			 mode_option(opts->mode), opts->target);
	}
	t = now_ms();
	result->stats.ms_resolve = t - t0;

	if (rq_walk_run(repo, &s.revs, opts->mode == RQ_MODE_REVERT, opts->max_commits, &s.walk,
			err) < 0)
		goto out;
	result->stats.commits = s.walk.n;
	if (opts->mode == RQ_MODE_ONTO && !opts->ref && !s.child_idx &&
	    load_decorations(repo, opts->contained || is_positive_ref(&s.revs, "HEAD"), &s.decos,
			     err) < 0)
		goto out;
	result->stats.ms_walk = now_ms() - t;
	TRACE("walked");
	t = now_ms();

	s.new_ids = calloc(s.walk.n + 1, sizeof(*s.new_ids));
	s.new_trees = calloc(s.walk.n + 1, sizeof(*s.new_trees));
	if (!s.new_ids || !s.new_trees) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	if (open_objects(&s) < 0)
		goto out;
	if (rq_merger_new(&s.merger, repo, err) < 0)
		goto out;
	TRACE("merger");

	{
		size_t ngroups = 0, fail = 0, *group = NULL;
		int r;
		if ((s.nch || s.child_idx) &&
		    s.walk.n >=
			(opts->jobs_auto ? RQ_PARALLEL_AUTO_MIN : RQ_PARALLEL_MIN_COMMITS)) {
			if (!(group = malloc(s.walk.n * sizeof(*group)))) {
				rq_error_set(err, RQ_E_NOMEM, "out of memory");
				goto out;
			}
			ngroups = compute_groups(&s, group, err);
			if (!ngroups) {
				free(group);
				goto out;
			}
		}
		if (ngroups > 1) {
			int workers = s.nch + 1;
			r = pick_parallel(&s, group, ngroups);
			result->stats.parallel =
			    ngroups < (size_t)workers ? ngroups : (size_t)workers;
		} else {
			/* one process after all */
			if (s.child_idx)
				child_giveup(&s);
			drop_workers(&s);
			rq_mem_reserve(s.walk.n * RQ_RESERVE_PER_PICK);
			r = pick_range(&s, &fail);
			result->stats.parallel = 1;
		}
		{
			/* this process's merges (the children's came with their reports) */
			const rq_merge_stats *ms = rq_merger_stats(s.merger);
			result->stats.merges_trivial += ms->trivial;
			result->stats.merges_full += ms->full;
			result->stats.merges_fallback += ms->fallback;
			result->stats.scores_computed += ms->scores_computed;
			result->stats.scores_reused += ms->scores_reused;
		}
		result->stats.groups = ngroups ? ngroups : 1;
		free(group);
		if (r < 0)
			goto out;
		if (r == 1) {
			rc = 1;
			goto out;
		}
	}
	if (make_updates(&s) < 0)
		goto out;
	result->stats.ms_replay = now_ms() - t;
	TRACE("updates");
	t = now_ms();
	{
		rq_objdir_stats os;
		git_odb_free(s.odb);
		s.odb = NULL;
		if (rq_objdir_finish(s.objdir, &os, err) < 0)
			goto out;
		result->stats.objects = os.objects;
		result->stats.pack_bytes = os.pack_bytes;
		memcpy(result->stats.pack_name, os.pack_name, sizeof(os.pack_name));
	}
	result->stats.ms_pack = now_ms() - t;
	TRACE("packed");
	rc = 0;
out:
	if (s.child_idx)
		child_giveup(&s); /* the parent meets the same failure */
	drop_workers(&s);
	if (rc != 0)
		free_updates(result);
	git_odb_free(s.odb);
	rq_objdir_free(s.objdir);
	rq_merger_free(s.merger);
	rq_oidmap_free(&s.map);
	free(s.new_ids);
	free(s.new_trees);
	free(s.branch);
	decos_free(&s.decos);
	rq_walk_free(&s.walk);
	rq_revs_free(&s.revs);
	result->stats.ms_total = now_ms() - t0;
	return rc;
}

void rq_replay_result_free(rq_replay_result *result)
{
	if (!result)
		return;
	free_updates(result);
	rq_conflicts_free(&result->conflicts);
}
