/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the stack) */
/*
 * rq_rtstack: the stack of reftables, read (see rq_rtstack.h).
 */
#include "rq_rtstack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_mem.h"

#define LIST_MAX    (1 << 20) /* bytes of tables.list read at most */
#define LOAD_TRIES  16	      /* reads of a changing tables.list */
#define NAME_MAX_RT 255

/* A table, shared by the stack and the iterators that use it. */
typedef struct tab {
	rq_rtable *t;
	int refs;
} tab;

struct rq_rtstack {
	char *dir, *list;
	const rq_oid_algo *algo; /* the repository's object format */
	tab **tabs;
	size_t n;
	int have_list; /* tables.list existed at the last read */
	struct stat list_st;
	/* that tables.list, kept open (as git does): while it is, no later
	 * list can have its inode number, so a stat tells it from its
	 * successors even within one tick of the file times */
	int list_fd;
	rq_rtable_iter it; /* the lookups' */
};

typedef struct sub {
	rq_rtable_iter it;
	int ended;
	rq_rtable_ref ref;
	rq_rtable_log log;
} sub;

struct rq_rtstack_iter {
	int logs, with_del;
	tab **tabs;
	size_t n;
	sub *s;
	char *key;    /* refs: the prefix; logs: the refname (NULL: all) */
	size_t klen;  /* its length */
	long pending; /* the record last returned, to move past next time */
};

static void tab_put(tab *x)
{
	if (x && --x->refs == 0) {
		rq_rtable_free(x->t);
		free(x);
	}
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---- tables.list ---- */

static int valid_name(const char *s, size_t n)
{
	return n && n <= NAME_MAX_RT && s[0] != '.' && !memchr(s, '/', n) && !memchr(s, 0, n);
}

static int parse_list(const rq_rtstack *st, const char *buf, size_t len, char ***names, size_t *n,
		      rq_error *err)
{
	size_t cap = 0;

	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((nl ? nl : end) - p);
		char **v;
		if (l && !valid_name(p, l))
			return rq_error_set(err, RQ_E_BAD_REPO, "'%s' names a table '%.*s'",
					    st->list, (int)(l > 100 ? 100 : l), p);
		if (l) {
			if (!(v = rq_mem_grow(*names, &cap, *n + 1, sizeof(*v), 8)))
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			*names = v;
			if (!(v[*n] = strndup(p, l)))
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			(*n)++;
		}
		p += l + 1;
	}
	return 0;
}

/* Read tables.list: its names (none when it does not exist, *present 0),
 * what it was (for rq_rtstack_reload) and, in *fdp, the file, open (-1
 * when there is none). */
static int read_list(const rq_rtstack *st, char ***names, size_t *n, struct stat *sb, int *present,
		     int *fdp, rq_error *err)
{
	/* (O_NONBLOCK: a FIFO never blocks; it is refused below) */
	int fd = open(st->list, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), rc;
	char *buf;
	ssize_t got = 0, r;

	*names = NULL;
	*n = 0;
	*present = fd >= 0;
	*fdp = -1;
	memset(sb, 0, sizeof(*sb));
	if (fd < 0 && errno == ELOOP)
		return rq_error_set(err, RQ_E_BAD_REPO, "'%s' is a symbolic link", st->list);
	if (fd < 0)
		return errno == ENOENT ? 0
				       : rq_error_set(err, RQ_E_IO, "cannot read '%s': %s",
						      st->list, strerror(errno));
	if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode) || sb->st_size > LIST_MAX) {
		close(fd);
		return rq_error_set(err, RQ_E_BAD_REPO, "'%s' is not a list of tables", st->list);
	}
	if (!(buf = malloc((size_t)sb->st_size + 1))) {
		close(fd);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	while (got < sb->st_size && (r = read(fd, buf + got, (size_t)(sb->st_size - got))) > 0)
		got += r;
	rc = parse_list(st, buf, (size_t)got, names, n, err);
	free(buf);
	if (rc < 0) {
		close(fd);
		names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return rc;
	}
	*fdp = fd;
	return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The tables of names, those already open shared: 0, 1 when one is
 * missing (*missing names it), -1. */
static int open_tables(rq_rtstack *st, char **names, size_t n, tab **out, const char **missing,
		       rq_error *err)
{
	char path[4096];

	for (size_t i = 0; i < n; i++) {
		tab *x = NULL;
		for (size_t j = 0; !x && j < st->n; j++)
			if (!strcmp(rq_rtable_name(st->tabs[j]->t), names[i]))
				x = st->tabs[j];
		if (x) {
			x->refs++;
			out[i] = x;
			continue;
		}
		if (snprintf(path, sizeof(path), "%s/%s", st->dir, names[i]) >= (int)sizeof(path))
			return rq_error_set(err, RQ_E_BAD_REPO, "reftable path too long");
		if (!(x = calloc(1, sizeof(*x))))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		if (rq_rtable_open(&x->t, path, names[i], st->algo, err) < 0) {
			int gone = err->code == RQ_E_IO && errno == ENOENT;
			free(x);
			*missing = names[i];
			return gone ? 1 : -1;
		}
		x->refs = 1;
		out[i] = x;
	}
	return 0;
}

static void install(rq_rtstack *st, tab **tabs, size_t n, const struct stat *sb, int present,
		    int fd)
{
	for (size_t i = 0; i < st->n; i++)
		tab_put(st->tabs[i]);
	free(st->tabs);
	st->tabs = tabs;
	st->n = n;
	st->list_st = *sb;
	st->have_list = present;
	if (st->list_fd >= 0)
		close(st->list_fd);
	st->list_fd = fd;
}

/* One read of the list and its tables: 0, 1 (a table is missing), -1. */
static int load_once(rq_rtstack *st, int force, struct stat *sb, const char **missing,
		     char ***names, size_t *n, rq_error *err)
{
	int present, r, fd;
	tab **tabs;

	if (read_list(st, names, n, sb, &present, &fd, err) < 0)
		return -1;
	r = !force && present == st->have_list && (!present || same_file(sb, &st->list_st));
	if (r || !(tabs = calloc(*n ? *n : 1, sizeof(*tabs)))) {
		if (fd >= 0)
			close(fd);
		return r ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if ((r = open_tables(st, *names, *n, tabs, missing, err)) != 0) {
		for (size_t i = 0; i < *n; i++)
			tab_put(tabs[i]);
		free(tabs);
		if (fd >= 0)
			close(fd);
		return r;
	}
	install(st, tabs, *n, sb, present, fd);
	return 0;
}

int rq_rtstack_reload(rq_rtstack *st, int force, rq_error *err)
{
	struct stat before, sb;
	int r = 1;

	/* the common case, a stat: the list is replaced, never rewritten */
	if (!force && (lstat(st->list, &sb) == 0 ? st->have_list && same_file(&sb, &st->list_st)
						 : errno == ENOENT && !st->have_list))
		return 0;
	memset(&before, 0, sizeof(before));
	for (int i = 0; i < LOAD_TRIES && r == 1; i++) {
		const char *missing = NULL;
		char **names;
		size_t n;
		r = load_once(st, force, &sb, &missing, &names, &n, err);
		if (r == 1 && i > 0 && same_file(&sb, &before))
			r = rq_error_set(err, RQ_E_BAD_REPO,
					 "'%s' names the table '%s', which does not exist",
					 st->list, missing);
		before = sb;
		force = 1;
		names_free(names, n);
	}
	return r == 1 ? rq_error_set(err, RQ_E_BAD_REPO, "'%s' keeps changing", st->list) : r;
}

int rq_rtstack_open(rq_rtstack **out, const char *dir, const rq_oid_algo *algo, rq_error *err)
{
	rq_rtstack *st = calloc(1, sizeof(*st));
	size_t dl = strlen(dir);

	*out = NULL;
	if (st) {
		st->list_fd = -1;
		st->algo = algo ? algo : &rq_oid_sha1;
	}
	if (!st || !(st->dir = strdup(dir)) || !(st->list = malloc(dl + sizeof("/tables.list")))) {
		rq_rtstack_free(st);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	memcpy(st->list, dir, dl);
	memcpy(st->list + dl, "/tables.list", sizeof("/tables.list"));
	rq_rtable_iter_init(&st->it);
	if (rq_rtstack_reload(st, 1, err) < 0) {
		rq_rtstack_free(st);
		return -1;
	}
	*out = st;
	return 0;
}

void rq_rtstack_free(rq_rtstack *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		tab_put(st->tabs[i]);
	free(st->tabs);
	if (st->list_fd >= 0)
		close(st->list_fd);
	rq_rtable_iter_release(&st->it);
	free(st->dir);
	free(st->list);
	free(st);
}

const char *rq_rtstack_dir(const rq_rtstack *st)
{
	return st->dir;
}

const rq_oid_algo *rq_rtstack_algo(const rq_rtstack *st)
{
	return st->algo;
}

size_t rq_rtstack_ntables(const rq_rtstack *st)
{
	return st->n;
}

const rq_rtable *rq_rtstack_table(const rq_rtstack *st, size_t i)
{
	return i < st->n ? st->tabs[i]->t : NULL;
}

uint64_t rq_rtstack_next_update_index(const rq_rtstack *st)
{
	return st->n ? rq_rtable_max_update_index(st->tabs[st->n - 1]->t) + 1 : 1;
}

/* ---- lookups ---- */

static int fill_ref(rq_rtstack_ref *out, const rq_rtable_ref *r, rq_error *err)
{
	out->type = r->type;
	out->update_index = r->update_index;
	out->value = r->value;
	out->peeled = r->peeled;
	out->target.len = 0;
	if (r->type == RQ_RTABLE_SYMREF)
		rq_buf_str(&out->target, r->target);
	return out->target.oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 1;
}

int rq_rtstack_read(rq_rtstack *st, const char *name, rq_rtstack_ref *out, rq_error *err)
{
	for (size_t i = st->n; i-- > 0;) {
		rq_rtable_ref r;
		int k;
		if (rq_rtable_seek_ref(&st->it, st->tabs[i]->t, name, err) < 0 ||
		    (k = rq_rtable_next_ref(&st->it, &r, err)) < 0)
			return -1;
		if (k == 1 || strcmp(r.name, name) != 0)
			continue;
		if (r.type == RQ_RTABLE_DELETION)
			return 0;
		return fill_ref(out, &r, err);
	}
	return 0;
}

void rq_rtstack_ref_release(rq_rtstack_ref *r)
{
	free(r->target.p);
	memset(r, 0, sizeof(*r));
}

int rq_rtstack_has_log(rq_rtstack *st, const char *refname, rq_error *err)
{
	rq_rtstack_iter *it;
	const rq_rtable_log *l;
	int r;

	if (rq_rtstack_logs(&it, st, refname, err) < 0)
		return -1;
	r = rq_rtstack_next_log(it, &l, err);
	rq_rtstack_iter_free(it);
	return r < 0 ? -1 : r == 0;
}

/* ---- merged iteration ---- */

static int advance(rq_rtstack_iter *it, size_t i, rq_error *err)
{
	sub *s = &it->s[i];
	int r = it->logs ? rq_rtable_next_log(&s->it, &s->log, err)
			 : rq_rtable_next_ref(&s->it, &s->ref, err);

	if (r < 0)
		return -1;
	s->ended = r;
	return 0;
}

static int cmp(const rq_rtstack_iter *it, size_t a, size_t b)
{
	const sub *x = &it->s[a], *y = &it->s[b];
	int c;

	if (!it->logs)
		return strcmp(x->ref.name, y->ref.name);
	if ((c = strcmp(x->log.refname, y->log.refname)) != 0)
		return c;
	return (x->log.update_index < y->log.update_index) -
	       (x->log.update_index > y->log.update_index);
}

static int in_range(const rq_rtstack_iter *it, size_t w)
{
	if (!it->key)
		return 1;
	if (it->logs)
		return !strcmp(it->s[w].log.refname, it->key);
	return !strncmp(it->s[w].ref.name, it->key, it->klen);
}

static int deleted(const rq_rtstack_iter *it, size_t w)
{
	return it->logs ? it->s[w].log.type == RQ_RTABLE_LOG_DELETION
			: it->s[w].ref.type == RQ_RTABLE_DELETION;
}

/* The newest record of the smallest key: 0 (it->pending), 1 at the end. */
static int merged_next(rq_rtstack_iter *it, rq_error *err)
{
	for (;;) {
		long w = -1;
		if (it->pending >= 0 && advance(it, (size_t)it->pending, err) < 0)
			return -1;
		it->pending = -1;
		for (size_t i = 0; i < it->n; i++)
			if (!it->s[i].ended && (w < 0 || cmp(it, i, (size_t)w) <= 0))
				w = (long)i; /* on a tie the newer table wins */
		if (w < 0)
			return 1;
		for (size_t i = 0; i < (size_t)w; i++) /* the older records of that key */
			if (!it->s[i].ended && cmp(it, i, (size_t)w) == 0 &&
			    advance(it, i, err) < 0)
				return -1;
		if (!in_range(it, (size_t)w))
			return 1;
		it->pending = w;
		if (it->with_del || !deleted(it, (size_t)w))
			return 0;
	}
}

static int iter_new(rq_rtstack_iter **out, rq_rtstack *st, size_t first, size_t n, int logs,
		    const char *key, int with_del, rq_error *err)
{
	rq_rtstack_iter *it = calloc(1, sizeof(*it));
	int r = 0;

	*out = NULL;
	if (first > st->n || n > st->n - first)
		n = 0;
	if (!it || !(it->s = calloc(n ? n : 1, sizeof(*it->s))) ||
	    !(it->tabs = calloc(n ? n : 1, sizeof(*it->tabs))) ||
	    (key && !(it->key = strdup(key)))) {
		rq_rtstack_iter_free(it);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	it->klen = key ? strlen(key) : 0;
	it->logs = logs;
	it->with_del = with_del;
	it->pending = -1;
	for (size_t i = 0; r == 0 && i < n; i++, it->n++) {
		sub *s = &it->s[i];
		it->tabs[i] = st->tabs[first + i];
		it->tabs[i]->refs++;
		rq_rtable_iter_init(&s->it);
		r = logs ? rq_rtable_seek_log(&s->it, it->tabs[i]->t, key ? key : "", UINT64_MAX,
					      err)
			 : rq_rtable_seek_ref(&s->it, it->tabs[i]->t, key ? key : "", err);
		if (r == 0)
			r = advance(it, i, err);
	}
	if (r < 0) {
		rq_rtstack_iter_free(it);
		return -1;
	}
	*out = it;
	return 0;
}

int rq_rtstack_refs_range(rq_rtstack_iter **out, rq_rtstack *st, size_t first, size_t n,
			  const char *prefix, int with_deletions, rq_error *err)
{
	return iter_new(out, st, first, n, 0, prefix && *prefix ? prefix : NULL, with_deletions,
			err);
}

int rq_rtstack_refs(rq_rtstack_iter **out, rq_rtstack *st, const char *prefix, rq_error *err)
{
	return rq_rtstack_refs_range(out, st, 0, st->n, prefix, 0, err);
}

int rq_rtstack_logs_range(rq_rtstack_iter **out, rq_rtstack *st, size_t first, size_t n,
			  const char *refname, int with_deletions, rq_error *err)
{
	return iter_new(out, st, first, n, 1, refname && *refname ? refname : NULL, with_deletions,
			err);
}

int rq_rtstack_logs(rq_rtstack_iter **out, rq_rtstack *st, const char *refname, rq_error *err)
{
	return rq_rtstack_logs_range(out, st, 0, st->n, refname, 0, err);
}

int rq_rtstack_next_ref(rq_rtstack_iter *it, const rq_rtable_ref **out, rq_error *err)
{
	int r = it->logs ? rq_error_set(err, RQ_E_INTERNAL, "not a ref iterator")
			 : merged_next(it, err);

	if (r == 0)
		*out = &it->s[it->pending].ref;
	return r;
}

int rq_rtstack_next_log(rq_rtstack_iter *it, const rq_rtable_log **out, rq_error *err)
{
	int r = !it->logs ? rq_error_set(err, RQ_E_INTERNAL, "not a log iterator")
			  : merged_next(it, err);

	if (r == 0)
		*out = &it->s[it->pending].log;
	return r;
}

void rq_rtstack_iter_free(rq_rtstack_iter *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->n; i++) {
		rq_rtable_iter_release(&it->s[i].it);
		tab_put(it->tabs[i]);
	}
	free(it->s);
	free(it->tabs);
	free(it->key);
	free(it);
}
