/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb: refs and reflogs of either backend (see the header). The
 * reflog line is git's refs/files-backend.c format ("<old> <new> <ident>
 * <time> <tz>\t<msg>\n"); the code is replayq's own.
 */
#define _GNU_SOURCE
#include "rq_refdb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2/sys/refdb_backend.h>
#include <git2/sys/repository.h>

#include "rq_fs.h"
#include "rq_mem.h"
#include "rq_refdb_rt.h"
#include "rq_reffile.h"
#include "rq_refname.h"
#include "rq_refread.h"
#include "rq_repofmt.h"
#include "rq_rtstack.h"

struct rq_refdb {
	rq_refread rd;	   /* files, and FETCH_HEAD/MERGE_HEAD of reftable */
	int reftable;	   /* extensions.refStorage = reftable */
	int linked;	   /* a linked worktree: own refs in own */
	rq_rtstack *st[2]; /* reftable: common, own (opened at first use) */
	char *dir[2];	   /* their git directories */
	const rq_oid_algo *algo;
};

static int nomem(rq_error *err)
{
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

int rq_refdb_open_dirs(rq_refdb **out, const char *common, const char *own, const rq_oid_algo *algo,
		       int reftable, rq_error *err)
{
	rq_refdb *db = calloc(1, sizeof(*db));

	*out = NULL;
	if (!db)
		return nomem(err);
	db->algo = algo ? algo : &rq_oid_sha1;
	db->reftable = reftable;
	db->rd.algo = db->algo;
	db->rd.common = db->rd.own = -1;
	db->dir[0] = strdup(common);
	db->dir[1] = strdup(own ? own : common);
	if (!db->dir[0] || !db->dir[1]) {
		rq_refdb_free(db);
		return nomem(err);
	}
	db->linked = strcmp(db->dir[0], db->dir[1]) != 0;
	db->rd.common = rq_fs_opendir(db->dir[0]);
	db->rd.own = db->linked ? rq_fs_opendir(db->dir[1]) : db->rd.common;
	if (db->rd.common < 0 || db->rd.own < 0) {
		rq_error_set(err, RQ_E_IO, "cannot open the git directory: %s", strerror(errno));
		rq_refdb_free(db);
		return -1;
	}
	*out = db;
	return 0;
}

int rq_refdb_open(rq_refdb **out, git_repository *repo, rq_error *err)
{
	return rq_refdb_open_dirs(out, git_repository_commondir(repo), git_repository_path(repo),
				  rq_repofmt_algo(repo), rq_repofmt_reftable(repo), err);
}

void rq_refdb_free(rq_refdb *db)
{
	if (!db)
		return;
	if (db->rd.own >= 0 && db->rd.own != db->rd.common)
		close(db->rd.own);
	if (db->rd.common >= 0)
		close(db->rd.common);
	for (int k = 0; k < 2; k++) {
		rq_rtstack_free(db->st[k]);
		free(db->dir[k]);
	}
	free(db);
}

const rq_oid_algo *rq_refdb_algo(const rq_refdb *db)
{
	return db->algo;
}

/* ---- reftable ---- */

/* The stack that keeps name (k), open and current. 0, or -1. */
static int rt_stack(rq_refdb *db, const char **name, rq_rtstack **st, rq_error *err)
{
	int k = 0;
	char dir[4096];

	if (!strncmp(*name, "main-worktree/", 14))
		*name += 14;
	else
		k = db->linked && rq_refdb_rt_worktree_ref(*name);
	if (db->st[k]) {
		*st = db->st[k];
		return rq_rtstack_reload(db->st[k], 0, err);
	}
	size_t n = strlen(db->dir[k]);
	snprintf(dir, sizeof(dir), "%.*s/reftable",
		 (int)(n && db->dir[k][n - 1] == '/' ? n - 1 : n), db->dir[k]);
	if (rq_rtstack_open(&db->st[k], dir, db->algo, err) < 0)
		return -1;
	*st = db->st[k];
	return 0;
}

static int rt_read(rq_refdb *db, const char *name, rq_oid *id, char **target, rq_error *err)
{
	rq_rtstack *st;
	rq_rtstack_ref r;
	int rc;

	if (!strcmp(name, "FETCH_HEAD") || !strcmp(name, "MERGE_HEAD"))
		return rq_refread_raw(&db->rd, name, id, target, err);
	if (!rq_refname_format_ok(name) && (strchr(name, '/') || !*name))
		return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname", name);
	if (rt_stack(db, &name, &st, err) < 0)
		return -1;
	memset(&r, 0, sizeof(r));
	rc = rq_rtstack_read(st, name, &r, err);
	if (rc == 1 && r.type == RQ_RTABLE_SYMREF)
		rc = (*target = strdup((const char *)r.target.p)) ? 1 : nomem(err);
	else if (rc == 1)
		*id = r.value;
	rq_rtstack_ref_release(&r);
	return rc < 0 ? -1 : rc ? RQ_REFDB_FOUND : RQ_REFDB_MISSING;
}

/* ---- one ref ---- */

int rq_refdb_read(rq_refdb *db, const char *name, rq_oid *id, char **target, rq_error *err)
{
	*target = NULL;
	if (db->reftable)
		return rt_read(db, name, id, target, err);
	return rq_refread_raw(&db->rd, name, id, target, err);
}

int rq_refdb_resolve(rq_refdb *db, const char *name, rq_oid *id, char **full, rq_error *err)
{
	char *cur = NULL, *target;

	if (full)
		*full = NULL;
	for (int depth = 0; depth < RQ_REFREAD_MAXDEPTH; depth++) {
		int rc = rq_refdb_read(db, cur ? cur : name, id, &target, err);
		if (rc != RQ_REFDB_FOUND || !target) {
			if (rc == RQ_REFDB_FOUND && full && !(*full = cur ? cur : strdup(name)))
				return nomem(err);
			if (!(rc == RQ_REFDB_FOUND && full))
				free(cur);
			return rc;
		}
		free(cur);
		cur = target;
	}
	free(cur);
	return rq_error_set(err, RQ_E_BAD_REPO,
			    "unable to resolve reference '%s': more than %d symbolic refs", name,
			    RQ_REFREAD_MAXDEPTH - 1);
}

int rq_refdb_lookup(git_repository *repo, const char *name, rq_oid *id, rq_error *err)
{
	rq_refdb *db;
	int rc;

	if (rq_refdb_open(&db, repo, err) < 0)
		return -1;
	rc = rq_refdb_resolve(db, name, id, NULL, err);
	rq_refdb_free(db);
	return rc;
}

int rq_refdb_broken(const rq_error *err)
{
	return rq_refread_is_broken(err);
}

static rq_refdb_warn_fn warn_sink;

void rq_refdb_set_warn(rq_refdb_warn_fn fn)
{
	warn_sink = fn;
}

void rq_refdb_warn(const char *fmt, ...)
{
	char msg[4400];
	va_list ap;

	if (!warn_sink)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn_sink(msg);
}

int rq_refdb_fail(rq_error *err, const char *what)
{
	char msg[sizeof(err->msg)];

	if (err->code == RQ_E_NOMEM)
		return -1;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	return rq_error_set(err, err->code == RQ_E_BAD_REPO ? RQ_E_BAD_REPO : RQ_E_GIT, "%s: %s",
			    what, msg);
}

/* ---- iteration ---- */

typedef struct entry {
	char *name, *target;
	rq_oid id, peeled;
	int peeled_known, broken, loose;
} entry;

typedef struct list {
	entry *v;
	size_t n, cap;
	const char *prefix, *glob;
	int last_packed; /* packed-refs' last ref line was added as the last entry */
} list;

static void list_free(list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].target);
	}
	free(l->v);
}

static int wanted(const list *l, const char *name)
{
	if (strncmp(name, "refs/", 5) || strncmp(name, l->prefix, strlen(l->prefix)))
		return 0;
	return !l->glob || !fnmatch(l->glob, name, 0);
}

/* A new entry named name[0..len), or NULL (out of memory). */
static entry *list_add(list *l, const char *name, size_t len)
{
	entry *v = rq_mem_grow(l->v, &l->cap, l->n + 1, sizeof(*v), 64);

	if (!v)
		return NULL;
	l->v = v;
	memset(&v[l->n], 0, sizeof(*v));
	if (!(v[l->n].name = strndup(name, len)))
		return NULL;
	return &v[l->n++];
}

static int rt_collect(rq_refdb *db, list *l, rq_error *err)
{
	for (int k = 0; k < 1 + db->linked; k++) {
		const char *probe = k ? "refs/worktree/" : "refs/";
		rq_rtstack *st;
		rq_rtstack_iter *it;
		const rq_rtable_ref *r;
		int rc;
		if (rt_stack(db, &probe, &st, err) < 0 ||
		    rq_rtstack_refs(&it, st, "refs/", err) < 0)
			return -1;
		while ((rc = rq_rtstack_next_ref(it, &r, err)) == 0) {
			entry *e;
			if (db->linked && rq_refdb_rt_worktree_ref(r->name) != k)
				continue;
			if (!wanted(l, r->name))
				continue;
			if (!(e = list_add(l, r->name, strlen(r->name))) ||
			    (r->type == RQ_RTABLE_SYMREF && !(e->target = strdup(r->target)))) {
				rc = nomem(err);
				break;
			}
			e->id = r->value;
			e->peeled = r->peeled;
			e->peeled_known = r->type == RQ_RTABLE_VAL2;
		}
		rq_rtstack_iter_free(it);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The loose refs under dir/path (path ends in '/'): the worktree's own
 * (own 1), the shared ones (0) or all (-1). 0, or -1. */
static int loose_walk(rq_refdb *db, list *l, int dir, char *path, size_t len, int own,
		      rq_error *err)
{
	int fd, rc = 0;
	DIR *d;
	struct dirent *de;

	path[len - 1] = '\0';
	fd = rq_fs_open_at(dir, path, O_RDONLY | O_DIRECTORY, 0);
	path[len - 1] = '/';
	d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0; /* no such directory: no refs */
	}
	while (rc == 0 && (de = readdir(d))) {
		size_t k = strlen(de->d_name);
		if (de->d_name[0] == '.' || len + k + 2 > 4096)
			continue;
		memcpy(path + len, de->d_name, k + 1);
		int type = de->d_type;
		struct stat st;
		if (type == DT_UNKNOWN &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			type = S_ISDIR(st.st_mode)   ? DT_DIR
			       : S_ISREG(st.st_mode) ? DT_REG
			       : S_ISLNK(st.st_mode) ? DT_LNK
						     : DT_UNKNOWN;
		if (type == DT_DIR) {
			path[len + k] = '/';
			path[len + k + 1] = '\0';
			rc = loose_walk(db, l, dir, path, len + k + 1, own, err);
		} else if ((type == DT_REG || type == DT_LNK) && rq_refname_format_ok(path) &&
			   (own < 0 || rq_refread_own(path) == own) && wanted(l, path)) {
			entry *e = list_add(l, path, len + k);
			if (!e)
				rc = nomem(err);
			else
				e->loose = 1;
		}
	}
	closedir(d);
	return rc;
}

/* Each loose entry read (a broken one kept as a name). */
static int loose_read(rq_refdb *db, list *l, rq_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		rq_error e;
		int rc = rq_refread_raw(&db->rd, l->v[i].name, &l->v[i].id, &l->v[i].target, &e);
		if (rc < 0 && e.code == RQ_E_NOMEM) {
			*err = e;
			return -1;
		}
		l->v[i].broken = rc < 0 ? 1 : rc == RQ_REFREAD_MISSING ? 2 : 0;
	}
	return 0;
}

/* dir[k]/name into out. 0, or -1 (too long). */
static int path_of(const rq_refdb *db, int k, const char *name, char *out, size_t size)
{
	size_t n = strlen(db->dir[k]);
	int w = snprintf(out, size, "%.*s/%s", (int)(n && db->dir[k][n - 1] == '/' ? n - 1 : n),
			 db->dir[k], name);
	return w < 0 || (size_t)w >= size ? -1 : 0;
}

/* packed-refs' line p[0..n) into l (its "^" line into the last entry). */
static int packed_line(const rq_refdb *db, list *l, const char *p, size_t n, rq_error *err)
{
	size_t hexsz = db->algo->hexsz;
	rq_oid id;

	if (n && p[0] == '#')
		return 0;
	if (n == hexsz + 1 && p[0] == '^' && rq_oid_parse(&id, db->algo, p + 1, hexsz) == 0) {
		if (l->last_packed) {
			l->v[l->n - 1].peeled = id;
			l->v[l->n - 1].peeled_known = 1;
		}
		return 0;
	}
	l->last_packed = 0;
	if (n < hexsz + 2 || p[hexsz] != ' ' || rq_oid_parse(&id, db->algo, p, hexsz) < 0)
		return rq_error_set(err, RQ_E_BAD_REPO, "unexpected line in packed-refs: '%.*s'",
				    (int)n, p);
	p += hexsz + 1;
	n -= hexsz + 1;
	if (n >= 4096 || memchr(p, '\0', n))
		return rq_error_set(err, RQ_E_BAD_REPO, "bad ref name in packed-refs");
	char name[4096];
	memcpy(name, p, n);
	name[n] = '\0';
	if (!wanted(l, name))
		return 0;
	entry *e = list_add(l, name, n);
	if (!e)
		return nomem(err);
	e->id = id;
	l->last_packed = 1;
	return 0;
}

static int packed_collect(const rq_refdb *db, list *l, rq_error *err)
{
	char path[4096], *buf = NULL;
	size_t len = 0;
	int rc = 0;

	if (path_of(db, 0, "packed-refs", path, sizeof(path)) < 0)
		return rq_error_set(err, RQ_E_IO, "packed-refs: path too long");
	rc = rq_fs_read_regular(path, 0, (size_t)1 << 32, &buf, &len);
	if (rc < 0)
		return rq_error_set(err, RQ_E_IO, "cannot read packed-refs: %s", strerror(errno));
	rc = 0;
	for (size_t at = 0; buf && rc == 0 && at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		if (!nl) {
			rc = rq_error_set(err, RQ_E_BAD_REPO, "unterminated line in packed-refs");
			break;
		}
		rc = packed_line(db, l, buf + at, (size_t)(nl - (buf + at)), err);
		at = (size_t)(nl - buf) + 1;
	}
	free(buf);
	return rc;
}

/* Sorted by name, a loose entry before its packed line. */
static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : y->loose - x->loose;
}

/* The directory under refs/ that holds every loose ref l wants (its
 * prefix, else its glob's part before the first special character, cut
 * after its last '/') into path: its length. */
static size_t walk_start(const list *l, char *path, size_t size)
{
	const char *from = *l->prefix ? l->prefix : l->glob ? l->glob : "";
	size_t n = *l->prefix ? strlen(from) : l->glob ? strcspn(from, "*?[\\") : 0;

	while (n && from[n - 1] != '/')
		n--;
	if (n < 5 || n >= size || strncmp(from, "refs/", 5)) {
		strcpy(path, "refs/");
		return 5;
	}
	memcpy(path, from, n);
	path[n] = '\0';
	return n;
}

static int files_collect(rq_refdb *db, list *l, rq_error *err)
{
	char path[4096];
	size_t n = walk_start(l, path, sizeof(path));

	if (loose_walk(db, l, db->rd.common, path, n, db->linked ? 0 : -1, err) < 0)
		return -1;
	n = walk_start(l, path, sizeof(path));
	if (db->linked && loose_walk(db, l, db->rd.own, path, n, 1, err) < 0)
		return -1;
	if (loose_read(db, l, err) < 0)
		return -1;
	return packed_collect(db, l, err);
}

int rq_refdb_each(rq_refdb *db, const char *prefix, const char *glob, rq_refdb_each_fn fn,
		  void *arg, rq_error *err)
{
	list l = {.prefix = prefix ? prefix : "", .glob = glob};
	int rc = db->reftable ? rt_collect(db, &l, err) : files_collect(db, &l, err);

	if (rc == 0 && l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_entry);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const entry *e = &l.v[i];
		if ((i && !strcmp(e->name, l.v[i - 1].name)) || e->broken == 2)
			continue;
		rq_refdb_ref r = {.name = e->name,
				  .target = e->target,
				  .id = e->id,
				  .peeled_known = e->peeled_known,
				  .peeled = e->peeled,
				  .broken = e->broken};
		rc = fn(&r, arg);
	}
	list_free(&l);
	return rc;
}

typedef struct odb_refs {
	rq_refdb *db;
	int (*fn)(const char *name, const rq_oid *id, void *fn_arg);
	void *fn_arg;
} odb_refs;

static int odb_ref_one(const rq_refdb_ref *ref, void *arg)
{
	odb_refs *o = arg;
	rq_oid id = ref->id;
	rq_error e;

	if (ref->broken ||
	    (ref->target && rq_refdb_resolve(o->db, ref->name, &id, NULL, &e) != RQ_REFDB_FOUND))
		return 0;
	return o->fn(ref->name, &id, o->fn_arg);
}

int rq_refdb_odb_refs(void *repo, const char *prefix,
		      int (*fn)(const char *name, const rq_oid *id, void *fn_arg), void *fn_arg,
		      rq_error *err)
{
	odb_refs o = {.fn = fn, .fn_arg = fn_arg};
	int rc;

	if (rq_refdb_open(&o.db, repo, err) < 0)
		return -1;
	rc = rq_refdb_each(o.db, prefix, NULL, odb_ref_one, &o, err);
	rq_refdb_free(o.db);
	return rc;
}

/* ---- reflogs ---- */

/* One line of a reflog file, p[0..n) without its newline, into e. 0, or
 * -1 when it is no entry (skipped, as git skips it). */
static int log_parse(const rq_oid_algo *algo, char *p, size_t n, rq_refdb_log *e)
{
	size_t hexsz = algo->hexsz;
	char *tab, *lt, *gt, *end;

	memset(e, 0, sizeof(*e));
	if (n < 2 * hexsz + 2 || p[hexsz] != ' ' || p[2 * hexsz + 1] != ' ' ||
	    rq_oid_parse(&e->old_id, algo, p, hexsz) < 0 ||
	    rq_oid_parse(&e->new_id, algo, p + hexsz + 1, hexsz) < 0)
		return -1;
	p[n] = '\0';
	p += 2 * hexsz + 2;
	if ((tab = strchr(p, '\t'))) {
		*tab = '\0';
		e->message = tab + 1;
	}
	if (!(lt = strchr(p, '<')) || !(gt = strchr(lt, '>')))
		return -1;
	*gt = '\0';
	e->email = lt + 1;
	if (lt > p && lt[-1] == ' ')
		lt--;
	*lt = '\0';
	e->name = p;
	e->time = strtoll(gt + 1, &end, 10);
	e->tz = (int)strtol(end, NULL, 10);
	return 0;
}

static int files_reflog(rq_refdb *db, const char *ref, rq_refdb_log_fn fn, void *arg, rq_error *err)
{
	char path[4096], logname[4096], *buf = NULL;
	size_t len = 0, end;
	int own = rq_reffile_log_own(ref) || (db->linked && rq_refread_own(ref)), rc;

	if (snprintf(logname, sizeof(logname), "logs/%s", ref) >= (int)sizeof(logname) ||
	    path_of(db, own && db->linked, logname, path, sizeof(path)) < 0)
		return 0;
	rc = rq_fs_read_regular(path, 0, (size_t)1 << 32, &buf, &len);
	if (rc <= 0)
		return 0; /* no reflog (or none readable): no entries, as libgit2 said */
	rc = 0;
	for (end = len; rc == 0 && end > 0;) {
		size_t start = end - 1;
		rq_refdb_log e;
		if (buf[start] == '\n')
			end = start;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (end > start && log_parse(db->algo, buf + start, end - start, &e) == 0)
			rc = fn(&e, arg);
		end = start;
	}
	free(buf);
	(void)err;
	return rc;
}

static int rt_reflog(rq_refdb *db, const char *ref, rq_refdb_log_fn fn, void *arg, rq_error *err)
{
	rq_rtstack *st;
	rq_rtstack_iter *it;
	const rq_rtable_log *r;
	int rc, stop = 0;

	if (rt_stack(db, &ref, &st, err) < 0 || rq_rtstack_logs(&it, st, ref, err) < 0)
		return -1;
	while ((rc = rq_rtstack_next_log(it, &r, err)) == 0) {
		char *msg = NULL;
		if (r->type != RQ_RTABLE_LOG_UPDATE)
			continue;
		if (r->message && !(msg = strdup(r->message))) {
			rc = nomem(err);
			break;
		}

		size_t n = msg ? strlen(msg) : 0;
		if (n && msg[n - 1] == '\n')
			msg[n - 1] = '\0';
		rq_refdb_log e = {.old_id = r->old_id,
				  .new_id = r->new_id,
				  .name = r->name,
				  .email = r->email,
				  .time = (int64_t)r->time,
				  .tz = r->tz,
				  .message = msg};
		stop = fn(&e, arg);
		free(msg);
		if (stop)
			break;
	}
	rq_rtstack_iter_free(it);
	return stop ? stop : rc == 1 ? 0 : rc;
}

int rq_refdb_reflog(rq_refdb *db, const char *ref, rq_refdb_log_fn fn, void *arg, rq_error *err)
{
	if (db->reftable)
		return rt_reflog(db, ref, fn, arg, err);
	return files_reflog(db, ref, fn, arg, err);
}

/* ---- the tripwire ---- */

static int trip(void)
{
	git_error_set_str(GIT_ERROR_REFERENCE, "libgit2 has no SHA-256");
	return -1;
}

static int tw_exists(int *exists, git_refdb_backend *b, const char *name)
{
	(void)exists, (void)b, (void)name;
	return trip();
}

static int tw_lookup(git_reference **out, git_refdb_backend *b, const char *name)
{
	(void)out, (void)b, (void)name;
	return trip();
}

static int tw_iterator(git_reference_iterator **out, git_refdb_backend *b, const char *glob)
{
	(void)out, (void)b, (void)glob;
	return trip();
}

static int tw_write(git_refdb_backend *b, const git_reference *ref, int force,
		    const git_signature *who, const char *message, const git_oid *old,
		    const char *old_target)
{
	(void)b, (void)ref, (void)force, (void)who, (void)message, (void)old, (void)old_target;
	return trip();
}

static int tw_rename(git_reference **out, git_refdb_backend *b, const char *old_name,
		     const char *new_name, int force, const git_signature *who, const char *message)
{
	(void)out, (void)b, (void)old_name, (void)new_name, (void)force, (void)who, (void)message;
	return trip();
}

static int tw_del(git_refdb_backend *b, const char *name, const git_oid *old_id,
		  const char *old_target)
{
	(void)b, (void)name, (void)old_id, (void)old_target;
	return trip();
}

static int tw_name(git_refdb_backend *b, const char *name)
{
	(void)b, (void)name;
	return trip();
}

static int tw_reflog_read(git_reflog **out, git_refdb_backend *b, const char *name)
{
	(void)out, (void)b, (void)name;
	return trip();
}

static int tw_reflog_write(git_refdb_backend *b, git_reflog *reflog)
{
	(void)b, (void)reflog;
	return trip();
}

static int tw_reflog_rename(git_refdb_backend *b, const char *old_name, const char *new_name)
{
	(void)b, (void)old_name, (void)new_name;
	return trip();
}

static int tw_lock(void **payload, git_refdb_backend *b, const char *refname)
{
	(void)payload, (void)b, (void)refname;
	return trip();
}

static int tw_unlock(git_refdb_backend *b, void *payload, int success, int update_reflog,
		     const git_reference *ref, const git_signature *sig, const char *message)
{
	(void)b, (void)payload, (void)success, (void)update_reflog, (void)ref, (void)sig,
	    (void)message;
	return trip();
}

static void tw_free(git_refdb_backend *b)
{
	free(b);
}

int rq_refdb_tripwire_install(git_repository *repo, rq_error *err)
{
	git_refdb_backend *b = calloc(1, sizeof(*b));
	git_refdb *db = NULL;

	if (!b || git_refdb_init_backend(b, GIT_REFDB_BACKEND_VERSION) < 0) {
		free(b);
		return nomem(err);
	}
	b->exists = tw_exists;
	b->lookup = tw_lookup;
	b->iterator = tw_iterator;
	b->write = tw_write;
	b->rename = tw_rename;
	b->del = tw_del;
	b->has_log = tw_name;
	b->ensure_log = tw_name;
	b->free = tw_free;
	b->reflog_read = tw_reflog_read;
	b->reflog_write = tw_reflog_write;
	b->reflog_rename = tw_reflog_rename;
	b->reflog_delete = tw_name;
	b->lock = tw_lock;
	b->unlock = tw_unlock;
	if (git_refdb_new(&db, repo) < 0) {
		free(b);
		return rq_error_git(err, "cannot make the ref database");
	}
	if (git_refdb_set_backend(db, b) < 0) {
		free(b);
		git_refdb_free(db);
		return rq_error_git(err, "cannot make the ref database");
	}
	git_repository_set_refdb(repo, db);
	git_refdb_free(db);
	return 0;
}
