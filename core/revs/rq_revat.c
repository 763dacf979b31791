/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's object-name.c (the "@{...}" forms, ":/text") */
/*
 * rq_revat: revision names read from reflogs, the branch configuration
 * and commit messages (see rq_revat.h).
 */
#include "rq_revat.h"
#include "rq_approxidate.h"
#include "rq_mem.h"
#include "rq_oidmap.h"
#include "rq_refdb.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct prior {
	long nth;
	char *name;
	int nomem;
} prior;

/* One entry of HEAD's reflog, newest first: 1 (stop) at the nth
 * "checkout: moving from <name> to ...". */
static int prior_one(const rq_refdb_log *e, void *arg)
{
	static const char from[] = "checkout: moving from ";
	prior *p = arg;
	const char *msg = e->message, *to;

	if (!msg || strncmp(msg, from, sizeof(from) - 1) ||
	    !(to = strstr(msg + sizeof(from) - 1, " to ")) || --p->nth > 0)
		return 0;
	msg += sizeof(from) - 1;
	p->name = strndup(msg, (size_t)(to - msg));
	p->nomem = !p->name;
	return 1;
}

int rq_revat_prior(git_repository *repo, long nth, char **name, rq_error *err)
{
	prior p = {.nth = nth};
	rq_refdb *db;
	rq_error e;

	*name = NULL;
	if (rq_refdb_open(&db, repo, &e) < 0)
		return e.code == RQ_E_NOMEM ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 1;
	rq_refdb_reflog(db, "HEAD", prior_one, &p, &e);
	rq_refdb_free(db);
	if (p.nomem)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	*name = p.name;
	return p.name ? 0 : 1;
}

/* base[0..len) as "@{-N}": 1 with *nth, else 0. */
static int is_prior(const char *base, size_t len, long *nth)
{
	rq_revparse p;
	char *s = strndup(base, len);
	int yes = 0;

	if (s && rq_revparse_read(s, &p) == 0) {
		yes = p.at == RQ_REVPARSE_AT_PRIOR && !p.nsteps;
		*nth = p.at_n;
		rq_revparse_free(&p);
	}
	free(s);
	return yes;
}

/*
 * The full name of the ref an "@{...}" form is about, into *ref: no base
 * means the branch HEAD is on; "HEAD" with own_head (a reflog) HEAD itself;
 * "@{-N}" the Nth branch checked out before; else the first DWIM match
 * (git takes the first). 0; 1 none; -1 error (err set).
 */
static int at_ref(git_repository *repo, const rq_revname_refs *known, const rq_revparse *p,
		  int own_head, char **ref, rq_error *err)
{
	char *name = NULL;
	long nth;
	int rc;

	*ref = NULL;
	if (own_head && p->base_len == 4 && !memcmp(p->base, "HEAD", 4))
		return (*ref = strdup("HEAD")) ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!p->base_len)
		name = strdup("HEAD");
	else if (is_prior(p->base, p->base_len, &nth)) {
		if ((rc = rq_revat_prior(repo, nth, &name, err)) != 0)
			return rc;
	} else
		name = strndup(p->base, p->base_len);
	if (!name)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = rq_revname_dwim_log(repo, known, name, ref, err); /* (git warns not) */
	free(name);
	return rc < 0 ? -1 : rc == 0;
}

typedef struct log_pick {
	const rq_revparse *p;
	int64_t when;
	long i;
	int have;
	rq_oid id;
} log_pick;

/* One reflog entry, newest first: 1 (stop) once the one wanted is seen
 * ("@{N}": the Nth; by date: the newest made by then, else the oldest). */
static int log_pick_one(const rq_refdb_log *e, void *arg)
{
	log_pick *k = arg;

	if (k->p->at == RQ_REVPARSE_AT_REFLOG) {
		if (k->i++ < k->p->at_n)
			return 0;
		k->id = e->new_id;
		k->have = 1;
		return 1;
	}
	k->id = e->new_id;
	k->have = 1;
	return e->time <= k->when;
}

/* The entry of ref's reflog p names ("@{N}", "@{<date>}") into *out: 0;
 * 1 none; -1 error. */
static int reflog_entry(git_repository *repo, const char *ref, const rq_revparse *p, rq_oid *out,
			rq_error *err)
{
	log_pick k = {.p = p};
	rq_refdb *db;
	rq_error e;

	if (p->at == RQ_REVPARSE_AT_REFLOG && p->at_n == 0)
		return rq_refdb_lookup(repo, ref, out, &e) == RQ_REFDB_FOUND ? 0 : 1;
	if (p->at == RQ_REVPARSE_AT_DATE) {
		char *text = strndup(p->at_text, p->at_len);
		int bad = !text || rq_approxidate(text, rq_approxidate_now(), &k.when) < 0;
		free(text);
		if (bad)
			return text ? 1 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (rq_refdb_open(&db, repo, &e) < 0)
		return 1;
	if (rq_refdb_reflog(db, ref, log_pick_one, &k, &e) < 0)
		k.have = 0;
	rq_refdb_free(db);
	if (k.have)
		*out = k.id;
	return !k.have;
}

/* The upstream of branch (a full name) into *out: 0; 1 none; -1 error. */
static int upstream(git_repository *repo, const char *branch, rq_oid *out, char **fullname,
		    int *named, rq_error *err)
{
	git_buf up = {0};
	rq_error e;
	int rc;

	if (strncmp(branch, "refs/heads/", 11) || git_branch_upstream_name(&up, repo, branch) < 0)
		return 1;
	rc = rq_refdb_lookup(repo, up.ptr, out, &e) != RQ_REFDB_FOUND;
	if (rc == 0 && fullname) {
		if (!(*fullname = strdup(up.ptr)))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			*named = 1;
	}
	git_buf_dispose(&up);
	return rc;
}

int rq_revat_resolve(git_repository *repo, rq_commits *commits, const rq_revname_refs *known,
		     const char *expr, const rq_revparse *p, rq_oid *out, char **fullname,
		     int *named, rq_error *err)
{
	char *ref = NULL;
	int rc;

	if (p->search_all)
		rc = rq_revat_search(repo, commits, NULL, p->base, p->base_len, out);
	else if (p->at == RQ_REVPARSE_AT_PUSH) /* not supported: as before */
		rc = 1;
	else if ((rc = at_ref(repo, known, p, p->at != RQ_REVPARSE_AT_UPSTREAM, &ref, err)) != 0)
		;
	else if (p->at == RQ_REVPARSE_AT_UPSTREAM)
		rc = upstream(repo, ref, out, fullname, named, err);
	else
		rc = reflog_entry(repo, ref, p, out, err);
	free(ref);
	if (rc > 0 || (rc < 0 && p->search_all))
		return rq_revname_unknown(err, expr);
	return rc;
}

/*
 * The search, in git's order (object-name.c, get_oid_oneline): a list of
 * commits sorted by committer date, youngest first; the first is taken
 * out, looked at, and its parents not seen yet go in after every commit at
 * least as young (commit_list_insert_by_date). Commits of the same date
 * (scripts, imports) are so looked at in git's order. Here the list is an
 * array with its head at the end. The commits are the job's (rq_commits:
 * read once, at the repository's width, valid until the job ends).
 */
typedef struct search_list {
	const rq_cobj_commit **v;
	size_t n, cap;
	rq_oidmap seen;
	rq_cobj_cache *cache;
} search_list;

static void search_list_free(search_list *l)
{
	free(l->v);
	rq_oidmap_free(&l->seen);
}

/* c in at its date, after the commits at least as young. */
static int insert_by_date(search_list *l, const rq_cobj_commit *c)
{
	const rq_cobj_commit **v = rq_mem_grow(l->v, &l->cap, l->n + 1, sizeof(*v), 64);
	size_t i = l->n;

	if (!v)
		return -1;
	l->v = v;
	while (i > 0 && v[i - 1]->date >= c->date)
		i--;
	memmove(v + i + 1, v + i, (l->n - i) * sizeof(*v));
	v[i] = c;
	l->n++;
	return rq_oidmap_put(&l->seen, &c->id, 0);
}

/* Take the youngest out and put its parents not seen yet in: the commit,
 * or NULL (an error reading a parent). */
static const rq_cobj_commit *pop_youngest(search_list *l)
{
	const rq_cobj_commit *c = l->v[--l->n];
	size_t dummy;

	for (size_t i = 0; i < c->nparents; i++) {
		const rq_cobj_commit *parent;
		rq_error e;
		if (rq_oidmap_get(&l->seen, &c->parents[i], &dummy))
			continue;
		if (rq_cobj_get(l->cache, &c->parents[i], &parent, &e) < 0 ||
		    insert_by_date(l, parent) < 0)
			return NULL;
	}
	return c;
}

/* The commit a full ref name names, tags peeled, or NULL when it names
 * none (a dangling symbolic ref, a tag of a tree: skipped, as in git). */
static const rq_cobj_commit *ref_commit(git_repository *repo, rq_cobj_cache *cache,
					const char *name)
{
	const rq_cobj_commit *c = NULL;
	rq_oid rid, cid;
	rq_error e;

	if (rq_refdb_lookup(repo, name, &rid, &e) == RQ_REFDB_FOUND &&
	    rq_cobj_peel(cache, &rid, GIT_OBJECT_COMMIT, name, &cid, &e) == 0 &&
	    rq_cobj_get(cache, &cid, &c, &e) < 0)
		c = NULL;
	git_error_clear();
	return c;
}

typedef struct name_list {
	char **v;
	size_t n, cap;
} name_list;

static int name_one(const rq_refdb_ref *ref, void *arg)
{
	name_list *l = arg;
	char **v = rq_mem_grow(l->v, &l->cap, l->n + 1, sizeof(*v), 64);

	if (v)
		l->v = v;
	if (!v || !(v[l->n] = strdup(ref->name)))
		return -1;
	l->n++;
	return 0;
}

/* The names of all refs, sorted as git lists them. */
static int ref_names(git_repository *repo, char ***out, size_t *n)
{
	name_list l = {0};
	rq_refdb *db;
	rq_error e;
	int rc = rq_refdb_open(&db, repo, &e);

	if (rc == 0)
		rc = rq_refdb_each(db, NULL, NULL, name_one, &l, &e) != 0 ? -1 : 0;
	rq_refdb_free(db);
	*out = l.v;
	*n = l.n;
	return rc;
}

/*
 * The list ":/text" starts from: every ref's commit, then HEAD's, each put
 * at the head of the list, which is then sorted by date, keeping the
 * order of commits of the same date (git's handle_one_ref,
 * commit_list_sort_by_date). Inserting them by date from the last to the
 * first does just that.
 */
static int start_all(search_list *l, git_repository *repo)
{
	char **names;
	size_t n;
	int rc = ref_names(repo, &names, &n);
	const rq_cobj_commit *head = rc == 0 ? ref_commit(repo, l->cache, "HEAD") : NULL;

	if (head)
		rc = insert_by_date(l, head);
	for (size_t i = n; i-- > 0;) {
		const rq_cobj_commit *c = rc == 0 ? ref_commit(repo, l->cache, names[i]) : NULL;
		if (c)
			rc = insert_by_date(l, c);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int start_one(search_list *l, const rq_oid *from)
{
	const rq_cobj_commit *c;
	rq_error e;

	if (rq_cobj_get(l->cache, from, &c, &e) < 0)
		return -1;
	return insert_by_date(l, c);
}

/* What the search matches c's message from: after its leading newlines
 * (as libgit2's git_commit_message gave it). */
static const char *search_text(const rq_cobj_commit *c)
{
	const char *m = c->message;

	while (*m == '\n')
		m++;
	return m;
}

int rq_revat_search(git_repository *repo, rq_commits *commits, const rq_oid *from, const char *text,
		    size_t len, rq_oid *out)
{
	search_list l = {.cache = rq_commits_cache(commits)};
	char *pattern = strndup(text, len);
	regex_t re;
	int rc = 1;

	if (!pattern)
		return -1;
	if (!len || regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB)) {
		free(pattern);
		return 1;
	}
	free(pattern);
	rq_oidmap_init(&l.seen);
	if ((from ? start_one(&l, from) : start_all(&l, repo)) < 0)
		rc = -1;
	while (rc == 1 && l.n) {
		const rq_cobj_commit *c = pop_youngest(&l);
		if (!c) {
			rc = -1;
			break;
		}
		if (!regexec(&re, search_text(c), 0, NULL, 0)) {
			*out = c->id;
			rc = 0;
		}
	}
	search_list_free(&l);
	regfree(&re);
	return rc;
}
