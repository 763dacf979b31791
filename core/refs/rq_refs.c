/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refs: apply a replay's ref updates, every ref locked and checked
 * before the first is written, or format them for `git update-ref --stdin`.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_confine.h"
#include "rq_fs.h"
#include "rq_oid.h"
#include "rq_reffile.h"
#include "rq_refname.h"
#include "rq_refread.h"
#include "rq_refdb.h"
#include "rq_refdb_rt.h"
#include "rq_refmark.h"
#include "rq_refs.h"
#include "rq_refspace.h"
#include "rq_repofmt.h"
#include "rq_rtstack.h"
#include "rq_rttx.h"
#include "rq_testhook.h"

/* Where the lock of a ref lives, for messages. */
static int lock_path(git_repository *repo, const char *ref, char *out, size_t size)
{
	const char *dir =
	    rq_refspace_own_dir(ref) ? git_repository_path(repo) : git_repository_commondir(repo);
	int n = snprintf(out, size, "%s%s%s.lock", dir,
			 dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", ref);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

void rq_refs_clean_stale(git_repository *repo)
{
	rq_refmark m;
	rq_error err;

	if (rq_refmark_open(&m, repo, &err) < 0)
		return;
	rq_refmark_guard(&m, &err); /* (cleans) */
	rq_refmark_close(&m);
}

/* The repository's object format, which its refs are read and written
 * at (read once per call of this module's API). */
static const rq_oid_algo *repo_algo(git_repository *repo)
{
	return rq_repofmt_algo(repo);
}

/* ---- refs that cannot be created: directory/file conflicts ---- */

/* 1 when name is a loose ref file (or a link: a loose symbolic ref) under
 * d, reached without following a link. */
static int loose_file(const rq_refmark *d, const char *name)
{
	const char *leaf;
	struct stat st;
	int dir = rq_fs_parent_at(rq_refspace_own_dir(name) ? d->own : d->common, name, &leaf), r;

	if (dir < 0)
		return 0;
	r = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);
	close(dir);
	return r;
}

/* 1 when the directory fd (taken) holds a file at any depth (a link, a
 * lock, a broken ref: anything but empty directories), as git's lock
 * would find it in the way; deeper than 64 levels counts as holding one. */
static int holds_files(int fd, int depth)
{
	DIR *dh = fdopendir(fd);
	struct dirent *e;
	int found = 0;

	if (!dh) {
		close(fd);
		return 0;
	}
	while (!found && (e = readdir(dh))) {
		struct stat st;
		int sub;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode) || depth >= 64)
			found = 1;
		else if ((sub = openat(dirfd(dh), e->d_name,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			found = holds_files(sub, depth + 1);
	}
	closedir(dh);
	return found;
}

/* The first ref of an iteration (the smallest name) into *clash. */
static int first_ref(const rq_refdb_ref *ref, void *arg)
{
	char **clash = arg;

	return (*clash = strdup(ref->name)) ? 1 : -1;
}

/* The smallest existing ref under name/ (loose or packed), into *clash
 * (malloc'ed): 1, 0 when there is none, -1 on error. */
static int ref_below(git_repository *repo, const char *name, char **clash, rq_error *err)
{
	size_t len = strlen(name);
	char *prefix = malloc(len + 2);
	rq_refdb *db = NULL;
	int r;

	if (!prefix)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(prefix, name, len);
	memcpy(prefix + len, "/", 2);
	free(*clash);
	*clash = NULL;
	r = rq_refdb_open(&db, repo, err) < 0
		? -1
		: rq_refdb_each(db, prefix, NULL, first_ref, clash, err);
	rq_refdb_free(db);
	free(prefix);
	if (r == -1 && !*clash && err->code != RQ_E_NOMEM)
		return rq_refdb_fail(err, "cannot list the refs");
	if (r == -1)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return *clash != NULL;
}

/* 1 when the ref name exists (a symbolic one too, not followed): read by
 * rq_refread in a files repository (rd), else by libgit2. A ref that
 * cannot be read does not count. */
static int ref_exists(git_repository *repo, const rq_refread *rd, const char *name)
{
	rq_refdb *db = NULL;
	char *target = NULL;
	rq_oid id;
	rq_error err;
	int r;

	if (!rd) {
		r = rq_refdb_open(&db, repo, &err) == 0 &&
		    rq_refdb_read(db, name, &id, &target, &err) == RQ_REFDB_FOUND;
		rq_refdb_free(db);
		free(target);
		return r;
	}
	r = rq_refread_raw(rd, name, &id, &target, &err) == RQ_REFREAD_FOUND;
	free(target);
	return r;
}

/* The existing ref that keeps name from being created: one of its leading
 * directories (refs/heads/main for refs/heads/main/sub), else the
 * smallest one beneath it (refs/heads/team/x for refs/heads/team), into
 * *clash (malloc'ed): 1, 0 none, -1 on error. */
static int ref_clash(git_repository *repo, const rq_refread *rd, const char *name, char **clash,
		     rq_error *err)
{
	char *up = strdup(name);

	*clash = NULL;
	if (!up)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (char *p = strchr(up + 5, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (ref_exists(repo, rd, up)) {
			*clash = up;
			return 1;
		}
		*p = '/';
	}
	free(up);
	return ref_below(repo, name, clash, err);
}

/* One ref to create: refused (RQ_E_BAD_REF, in git's words) when an
 * existing ref or a non-empty directory is in its way. */
static int creatable(git_repository *repo, const rq_refmark *d, const rq_refread *rd,
		     const char *name, rq_error *err)
{
	const char *leaf;
	char *clash = NULL;
	int r = ref_clash(repo, rd, name, &clash, err), dir, sub = -1;

	if (r < 0)
		return -1;
	if (r > 0) { /* git names the lock when a loose file is in the way */
		r = loose_file(d, clash) || loose_file(d, name)
			? rq_error_set(err, RQ_E_BAD_REF,
				       "cannot lock ref '%s': '%s' exists; cannot create '%s'",
				       name, clash, name)
			: rq_error_set(err, RQ_E_BAD_REF, "'%s' exists; cannot create '%s'", clash,
				       name);
		free(clash);
		return r;
	}
	if ((dir = rq_fs_parent_at(rq_refspace_own_dir(name) ? d->own : d->common, name, &leaf)) <
	    0)
		return 0;
	sub = openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (sub >= 0 && holds_files(sub, 0))
		return rq_error_set(err, RQ_E_BAD_REF,
				    "cannot lock ref '%s': there is a non-empty directory '%s' "
				    "blocking reference '%s'",
				    name, name, name);
	return 0;
}

/* 1 when a is one of b's leading directories. */
static int dir_of(const char *a, const char *b)
{
	size_t n = strlen(a);
	return !strncmp(a, b, n) && b[n] == '/';
}

int rq_refs_check_creatable(git_repository *repo, const rq_ref_updates *result, rq_error *err)
{
	rq_refmark d;
	rq_refread rd;
	int rc = 0, files = !rq_repofmt_reftable(repo);

	if (rq_refmark_open(&d, repo, err) < 0)
		return -1;
	rd = (rq_refread){.common = d.common, .own = d.own, .algo = repo_algo(repo)};
	for (size_t i = 0; rc == 0 && i < result->nupdates; i++) {
		const rq_ref_update *u = &result->updates[i];
		if (!rq_oid_is_zero(&u->old_id) || strncmp(u->ref, "refs/", 5))
			continue; /* it exists: nothing stands in its way */
		for (size_t k = 0; rc == 0 && k < result->nupdates; k++)
			if (dir_of(u->ref, result->updates[k].ref) ||
			    dir_of(result->updates[k].ref, u->ref))
				rc = rq_error_set(err, RQ_E_BAD_REF,
						  "cannot process '%s' and '%s' at the same time",
						  u->ref, result->updates[k].ref);
		if (rc == 0)
			rc = creatable(repo, &d, files ? &rd : NULL, u->ref, err);
	}
	rq_refmark_close(&d);
	return rc;
}

int rq_refs_apply(git_repository *repo, const rq_ref_updates *result, const rq_ident *committer,
		  rq_error *err)
{
	return rq_refs_apply_fenced(repo, result, committer, NULL, err);
}

/* The error of a lock that could not be taken (err says why, errno too):
 * a lock file another live process holds is worth a retry
 * (RQ_E_REF_LOCKED), a full disk is RQ_E_IO, anything else is not. */
static int lock_failed(git_repository *repo, const char *ref, rq_error *err)
{
	char lock[PATH_MAX], why[RQ_ERROR_MSG_MAX];
	int e = errno;

	if (err->code == RQ_E_REF_LOCKED && lock_path(repo, ref, lock, sizeof(lock)) == 0)
		return rq_error_set(err, RQ_E_REF_LOCKED,
				    "cannot lock ref '%s': '%s' exists: another process "
				    "is updating it",
				    ref, lock);
	snprintf(why, sizeof(why), "%s", err->msg);
	return rq_error_set(err, e == ENOSPC || e == EDQUOT ? RQ_E_IO : RQ_E_REF_MOVED,
			    "cannot lock ref '%s': %s", ref, why);
}

/* One ref of a files update: its lock, and its reflog entry. */
typedef struct file_update {
	rq_reffile lock;
	int todo;    /* locked, written, to commit */
	int logged;  /* its reflog gets the entry (HEAD's too, when HEAD points at it) */
	char *entry; /* the reflog entry */
	size_t len;
} file_update;

/* An update in progress: the files one a ref (the space its commits take,
 * taken), or a reftable repository's update; the ref that failed to
 * lock. */
typedef struct update_run {
	git_repository *repo;
	const rq_ref_updates *res;
	const rq_ident *who;
	const rq_oid_algo *algo;
	rq_refmark *m;	      /* the git directories, open */
	file_update *f;	      /* files: one an update */
	int sync, policy;     /* fsync the refs; core.logAllRefUpdates */
	char *head;	      /* what HEAD points at, when it is a symbolic ref */
	rq_refspace *space;   /* files: the space the commits take */
	const char *failed;   /* the key of the lock that could not be taken */
	struct rt_update *rt; /* a reftable repository's update, else NULL */
} update_run;

/* The directory (open) that keeps ref, or its reflog. */
static int ref_dir(const update_run *u, const char *ref)
{
	return rq_refspace_own_dir(ref) ? u->m->own : u->m->common;
}

static int log_dir(const update_run *u, const char *ref)
{
	return rq_reffile_log_own(ref) ? u->m->own : u->m->common;
}

/* The id ref holds (zero when it does not exist) into *cur: read by
 * rq_refread in a files repository, by libgit2 (the reftable refdb) in a
 * reftable one. 0, or -1 with err set. */
static int ref_value(const update_run *u, const char *ref, rq_oid *cur, rq_error *err)
{
	rq_refread rd = {.common = u->m->common, .own = u->m->own, .algo = u->algo};
	char why[RQ_ERROR_MSG_MAX];
	int r;

	if (u->rt) {
		r = rq_refdb_lookup(u->repo, ref, cur, err);
		if (r < 0)
			return rq_refdb_fail(err, "cannot read ref");
		if (r == RQ_REFDB_MISSING)
			memset(cur, 0, sizeof(*cur));
		return 0;
	}
	if ((r = rq_refread_resolve(&rd, ref, cur, err)) == RQ_REFREAD_MISSING)
		memset(cur, 0, sizeof(*cur));
	if (r >= 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err->msg);
	if (rq_refread_is_broken(err)) /* git's words */
		return rq_error_set(err, err->code,
				    "failed to commit ref transaction: cannot lock ref '%s': %s",
				    ref, why);
	return rq_error_set(err, err->code, "cannot read ref: %s", why);
}

/* Where up's ref is, under its lock: 0 at its old id (to move), 1 at its
 * new id already, -1 elsewhere (RQ_E_REF_MOVED) or unreadable. */
static int ref_state(const update_run *u, const rq_ref_update *up, rq_error *err)
{
	char have[RQ_OID_MAX_HEXSZ + 1], want[RQ_OID_MAX_HEXSZ + 1];
	rq_oid c;

	if (ref_value(u, up->ref, &c, err) < 0)
		return -1;
	if (rq_oid_eq(&c, &up->new_id))
		return 1;
	if (rq_oid_eq(&c, &up->old_id))
		return 0;
	return rq_error_set(err, RQ_E_REF_MOVED, "cannot lock ref '%s': is at %s but expected %s",
			    up->ref, rq_oid_fmt(have, &c, u->algo),
			    rq_oid_fmt(want, &up->old_id, u->algo));
}

/* Whether update i gets reflog entries, and the entry (the move from its
 * old id, which the ref holds under its lock, to its new one). */
static int log_prepare(update_run *u, size_t i, rq_error *err)
{
	const rq_ref_update *up = &u->res->updates[i];
	file_update *f = &u->f[i];

	f->logged = rq_reffile_logged(u->policy, up->ref,
				      rq_reffile_log_exists(log_dir(u, up->ref), up->ref));
	if (!f->logged)
		return 0;
	return rq_reffile_log_entry(&f->entry, &f->len, &up->old_id, &up->new_id, u->algo, u->who,
				    u->res->reflog_msg, err);
}

/*
 * Lock update i's ref and check it; its lock gets the new id, ready to
 * commit, unless the ref holds its new value already (a retried job
 * applied it before: nothing to write, no reflog entry, as git does for
 * an update that changes nothing; the lock is let go). 0, or -1 with err
 * set (RQ_E_REF_MOVED when the ref is anywhere else).
 */
static int lock_one(update_run *u, size_t i, rq_error *err)
{
	const rq_ref_update *up = &u->res->updates[i];
	file_update *f = &u->f[i];
	int r;

	if (rq_reffile_lock(&f->lock, ref_dir(u, up->ref), up->ref, err) < 0)
		return lock_failed(u->repo, up->ref, err);
	if ((r = ref_state(u, up, err)) < 0)
		return -1;
	if (r == 1) {
		rq_reffile_release(&f->lock);
		return 0;
	}
	if (rq_reffile_write(&f->lock, &up->new_id, u->algo, u->sync, err) < 0)
		return -1;
	f->todo = 1;
	return log_prepare(u, i, err);
}

/* Lock and check every ref, and take the space its commit needs (test
 * hook point "refs-locking" after the first): 0, or -1 with err set. */
static int lock_all(update_run *u, rq_error *err)
{
	const rq_ref_updates *res = u->res;

	for (size_t i = 0; i < res->nupdates; i++) {
		u->failed = res->updates[i].ref;
		if (lock_one(u, i, err) < 0)
			return -1;
		u->failed = NULL;
		if (u->f[i].todo && u->f[i].logged &&
		    rq_refspace_take(u->space, i, &res->updates[i], u->f[i].len, err) < 0)
			return -1;
		if (i == 0 && res->nupdates > 1)
			rq_testhook_hold("refs-locking");
	}
	return 0;
}

/* 1 when ref holds id. */
static int ref_at(const update_run *u, const char *ref, const rq_oid *id)
{
	rq_oid cur;
	rq_error err;

	return ref_value(u, ref, &cur, &err) == 0 && rq_oid_eq(&cur, id);
}

/* Commit update i: its reflog entry (and HEAD's, when HEAD points at it),
 * then its lock renamed over it. 0, or -1 with err set. */
static int commit_one(update_run *u, size_t i, rq_error *err)
{
	const char *ref = u->res->updates[i].ref;
	file_update *f = &u->f[i];

	if (f->logged) {
		if (rq_reffile_log_append(log_dir(u, ref), ref, f->entry, f->len, u->sync, err) < 0)
			return -1;
		if (u->head && !strcmp(u->head, ref) &&
		    rq_reffile_log_append(u->m->own, "HEAD", f->entry, f->len, u->sync, err) < 0)
			return -1;
	}
	return rq_reffile_commit(&f->lock, u->sync, err);
}

/* Commit the locked refs one by one, in order (test hook point
 * "refs-committed" after the first of several). A failure leaves the
 * refs before it moved (the error says how many), and the reflogs of the
 * one that failed as they were. */
static int commit_all(update_run *u, size_t *moved, rq_error *err)
{
	const rq_ref_updates *res = u->res;
	size_t done = 0, todo = 0;

	for (size_t i = 0; i < res->nupdates; i++)
		todo += u->f[i].todo;
	for (size_t i = 0; i < res->nupdates; i++) {
		char why[RQ_ERROR_MSG_MAX];
		if (!u->f[i].todo)
			continue;
		if (commit_one(u, i, err) == 0) {
			*moved = ++done;
			if (done == 1 && todo > 1)
				rq_testhook_hold("refs-committed");
			continue;
		}
		if (u->space && !ref_at(u, res->updates[i].ref, &res->updates[i].new_id))
			rq_refspace_undo(u->space, i);
		snprintf(why, sizeof(why), "%s", err->msg);
		return rq_error_set(err, err->code,
				    "cannot update ref '%s' (%zu of %zu moved before it): %s",
				    res->updates[i].ref, done, todo, why);
	}
	return 0;
}

/* ---- reftable: every ref in one table, all at once (rq_rttx) ---- */

typedef struct rt_update {
	rq_rtstack *st;
	rq_rttx *tx;
	rq_rttx_update *u; /* the refs that change */
	size_t n;
	rq_rttx_ident who;
	char lock[PATH_MAX]; /* tables.list.lock's path under the common directory */
} rt_update;

static void rt_free(rt_update *rt)
{
	if (!rt)
		return;
	rq_rttx_free(rt->tx); /* releases the lock if still held */
	rq_rtstack_free(rt->st);
	free(rt->u);
	free(rt);
}

/* dir/name without a doubled '/'. */
static int join(char *out, size_t size, const char *dir, const char *name)
{
	size_t n = strlen(dir);
	int w =
	    snprintf(out, size, "%.*s/%s", (int)(n && dir[n - 1] == '/' ? n - 1 : n), dir, name);
	return w < 0 || (size_t)w >= size ? -1 : 0;
}

/* The update of a reftable repository, its stack open: the common one,
 * or a linked worktree's own for its own refs (HEAD), not both at once.
 * NULL with err set. */
static rt_update *rt_new(git_repository *repo, const rq_ref_updates *res, rq_error *err)
{
	const char *common = git_repository_commondir(repo), *own = git_repository_path(repo);
	int linked = strcmp(common, own) != 0,
	    k = linked && rq_refdb_rt_worktree_ref(res->updates[0].ref);
	rt_update *rt = calloc(1, sizeof(*rt));
	char dir[PATH_MAX];

	if (!rt || !(rt->u = calloc(res->nupdates, sizeof(*rt->u)))) {
		free(rt);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 1; i < res->nupdates; i++)
		if ((linked && rq_refdb_rt_worktree_ref(res->updates[i].ref)) != k) {
			rq_error_set(err, RQ_E_BAD_REF,
				     "cannot update a worktree's own refs and shared refs at once "
				     "('%s', '%s')",
				     res->updates[0].ref, res->updates[i].ref);
			rt_free(rt);
			return NULL;
		}
	if (join(dir, sizeof(dir), k ? own : common, "reftable") < 0 ||
	    rq_rtstack_open(&rt->st, dir, repo_algo(repo), err) < 0) {
		if (!rt->st)
			rq_error_set(err, RQ_E_BAD_REPO, "cannot open the reftable stack");
		rt_free(rt);
		return NULL;
	}
	return rt;
}

/* Every lock file rq_rttx takes, written down in the marker first. */
static int rt_note(void *arg, const char *path)
{
	rq_error err;
	return rq_refmark_lockfile(arg, path, &err);
}

/* One ref that changes, checked again at the commit. */
static void rt_add(rt_update *rt, const rq_ref_update *r, const char *msg)
{
	rq_rttx_update *x = &rt->u[rt->n];

	memset(x, 0, sizeof(*x));
	x->name = r->ref;
	x->new_type = RQ_RTABLE_VAL1;
	x->new_id = r->new_id;
	x->old_id = r->old_id;
	x->check = RQ_RTTX_ID;
	x->log = RQ_RTTX_LOG_AUTO;
	x->who = &rt->who;
	x->message = msg;
	rt->n++;
}

/* Under the guard: tables.list.lock taken (noted in the marker first,
 * with the token the new tables are named with) and every ref checked
 * under it. 0, or -1 with err set (RQ_E_REF_LOCKED naming the lock). */
static int rt_lock(update_run *u, rq_refmark *m, rq_error *err)
{
	rt_update *rt = u->rt;
	rq_rttx_opts o = {0};
	const char *rel;

	o.log_policy = rq_rttx_log_policy(u->repo);
	o.note_lock = rt_note;
	o.note_arg = m;
	if (!(o.token = rq_refmark_token(m, err)) ||
	    join(rt->lock, sizeof(rt->lock), rq_rtstack_dir(rt->st), "tables.list.lock") < 0)
		return -1;
	if (rq_rttx_begin(&rt->tx, rt->st, &o, err) < 0) {
		u->failed = (rel = rq_refmark_rel(m, rt->lock)) ? rel : rt->lock;
		return -1;
	}
	rt->who.name = u->who->name;
	rt->who.email = u->who->email;
	rt->who.time = u->who->time;
	rt->who.tz = u->who->tz;
	for (size_t i = 0; i < u->res->nupdates; i++) {
		int r = ref_state(u, &u->res->updates[i], err);
		if (r < 0)
			return -1;
		if (r == 0)
			rt_add(rt, &u->res->updates[i], u->res->reflog_msg);
	}
	return 0;
}

/* The one table written and published (test hook point "refs-written"
 * right before the rename of tables.list, in rq_rttx). */
static int rt_commit(update_run *u, size_t *moved, rq_error *err)
{
	rt_update *rt = u->rt;

	if (rt->n && rq_rttx_commit(rt->tx, rt->u, rt->n, err) < 0)
		return -1;
	*moved = rt->n;
	return 0;
}

/* Before anything is locked: every ref a name git takes and reached
 * through no symbolic link (rq_confine: libgit2 would write through it),
 * and every ref to create free of directory/file conflicts. */
static int check_updates(git_repository *repo, const rq_ref_updates *result, rq_error *err)
{
	char why[RQ_ERROR_MSG_MAX];

	for (size_t i = 0; i < result->nupdates; i++) {
		const char *ref = result->updates[i].ref;
		if (!rq_refname_lockable(ref))
			return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname", ref);
		if (rq_confine_ref(repo, ref, err) < 0)
			return -1;
	}
	if (rq_refs_check_creatable(repo, result, err) == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err->msg);
	return rq_error_set(err, err->code, "failed to commit ref transaction: %s",
			    why); /* git's words */
}

/* Why an update failed, from its error: a lock's holder judged by the
 * markers (under the guard, or right after it). */
static rq_refs_verdict verdict_of(rq_refmark *m, const rq_error *err, const char *key)
{
	static const rq_refs_verdict held[] = {RQ_REFS_LOCKED_OTHER, RQ_REFS_LOCKED_LIVE,
					       RQ_REFS_LOCKED_DEAD};

	if (err->code == RQ_E_REF_MOVED)
		return RQ_REFS_MOVED;
	if (err->code != RQ_E_REF_LOCKED)
		return RQ_REFS_FAILED;
	return key && m->common >= 0 ? held[rq_refmark_holder(m, key)] : RQ_REFS_LOCKED_OTHER;
}

/* Under the guard: the stale locks cleaned, the marker written, every ref
 * locked and its space taken; the guard released. 0, or -1 with err. */
static int lock_under_guard(update_run *u, rq_refmark *m, rq_error *err)
{
	int rc;

	if (rq_refmark_open(m, u->repo, err) < 0 ||
	    (!u->rt &&
	     rq_refspace_new(&u->space, u->repo, m->common, m->own, u->res->nupdates, err) < 0) ||
	    rq_refmark_guard(m, err) < 0)
		return -1;
	if (u->rt)
		rc = rt_lock(u, m, err);
	else {
		u->head = rq_reffile_head_target(m->own);
		rc = rq_refmark_refs(m, u->res, err) < 0 || lock_all(u, err) < 0 ? -1 : 0;
	}
	rq_refmark_unguard(m); /* every lock is taken: the next may clean and lock */
	return rc;
}

/* The update once its names are checked, in the order of the protocol
 * (with its hold points): locks, fence, commit. One replayq process at a
 * time cleans, writes its marker and takes its locks in a repository: a
 * cleaner cannot judge a lock that another is taking right then. */
static int update(update_run *u, rq_refs_fence *fence, rq_error *err)
{
	rq_refmark m = {.common = -1, .own = -1, .guard = -1, .mark.fd = -1};
	int rc = -1;

	u->m = &m;
	rq_testhook_hold("refs-start");
	if (lock_under_guard(u, &m, err) < 0)
		goto out;
	rq_testhook_hold("refs-locked");
	if (fence->may_commit && fence->may_commit(fence->arg) != 0) {
		rq_error_set(err, RQ_E_INTERRUPTED,
			     "the job is no longer ours: its refs are left as they were");
		goto out;
	}
	fence->passed = 1;
	rq_testhook_hold("refs-fenced");
	if ((u->rt ? rt_commit(u, &fence->moved, err) : commit_all(u, &fence->moved, err)) < 0)
		goto out;
	rq_refmark_released(&m); /* every lock renamed or let go */
	rq_testhook_hold("refs-done");
	rc = 0;
out:
	if (rc < 0)
		fence->verdict = verdict_of(&m, err, u->failed);
	for (size_t i = 0; u->f && i < u->res->nupdates; i++) {
		rq_reffile_release(&u->f[i].lock); /* every lock not committed goes */
		free(u->f[i].entry);
	}
	free(u->head);
	rq_refspace_free(u->space);
	rt_free(u->rt);	      /* releases tables.list.lock if still held */
	rq_refmark_close(&m); /* the marker goes after the locks */
	return rc;
}

/* The committer's identity as a reflog takes it: 0, or -1 with err set
 * (RQ_E_IDENT). */
static int ident_ok(const rq_ident *who, const rq_oid_algo *algo, rq_error *err)
{
	static const rq_oid zero;
	char *entry;
	size_t len;

	if (rq_reffile_log_entry(&entry, &len, &zero, &zero, algo, who, NULL, err) < 0)
		return -1;
	free(entry);
	return 0;
}

/* The update's state for the files backend, or the reftable one. */
static int run_init(update_run *u, rq_refs_fence *fence, rq_error *err)
{
	fence->atomic = rq_repofmt_reftable(u->repo);
	if (fence->atomic)
		return (u->rt = rt_new(u->repo, u->res, err)) ? 0 : -1;
	if (!(u->f = calloc(u->res->nupdates, sizeof(*u->f))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < u->res->nupdates; i++)
		u->f[i].lock = (rq_reffile)RQ_REFFILE_INIT;
	u->sync = rq_reffile_sync(u->repo);
	u->policy = rq_rttx_log_policy(u->repo);
	return 0;
}

int rq_refs_apply_fenced(git_repository *repo, const rq_ref_updates *result,
			 const rq_ident *committer, rq_refs_fence *fence, rq_error *err)
{
	rq_refs_fence none = {0};
	update_run u = {.repo = repo, .res = result, .who = committer, .algo = repo_algo(repo)};
	int rc;

	if (!fence)
		fence = &none;
	fence->passed = 0;
	fence->moved = 0;
	fence->atomic = 0;
	fence->verdict = RQ_REFS_APPLIED;
	if (!result->nupdates)
		return 0;
	fence->verdict = RQ_REFS_FAILED;
	if (check_updates(repo, result, err) < 0 || ident_ok(committer, u.algo, err) < 0)
		return -1;
	rc = run_init(&u, fence, err) < 0 ? -1 : update(&u, fence, err);
	free(u.f);
	if (rc == 0)
		fence->verdict = RQ_REFS_APPLIED;
	return rc;
}

char *rq_refs_format_updates(const rq_ref_updates *result)
{
	const rq_oid_algo *algo = rq_ref_updates_algo(result);
	size_t line = 8 + 2 * (algo->hexsz + 1) + 1;
	size_t size = 1;
	char *out, *p;

	for (size_t i = 0; i < result->nupdates; i++)
		size += line + strlen(result->updates[i].ref);
	if (!(out = malloc(size)))
		return NULL;
	p = out;
	*p = '\0';
	for (size_t i = 0; i < result->nupdates; i++) {
		char n[RQ_OID_MAX_HEXSZ + 1], o[RQ_OID_MAX_HEXSZ + 1];
		const rq_ref_update *up = &result->updates[i];
		p += sprintf(p, "update %s %s %s\n", up->ref, rq_oid_fmt(n, &up->new_id, algo),
			     rq_oid_fmt(o, &up->old_id, algo));
	}
	return out;
}
