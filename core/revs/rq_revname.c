/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's object-name.c (DWIM ref rules, suffixes, abbreviated ids) */
/*
 * rq_revname: one revision name resolved as git resolves it (see
 * rq_revname.h).
 */
#include "rq_revname.h"
#include "rq_mem.h"
#include "rq_refdb.h"
#include "rq_revat.h"
#include "rq_revparse.h"
#include "rq_tree.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const dwim_rules[] = {
    "%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD",
};

static int refent_eq(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const rq_revname_refs *)ctx)->v[i].name, key);
}

static size_t refent_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const rq_revname_refs *)ctx)->v[i].name);
}

static const rq_revname_ref *refset_get(const rq_revname_refs *rs, const char *name)
{
	long k = rq_hindex_find(&rs->index, rq_hindex_hash_str(name), refent_eq, rs, name);
	return k < 0 ? NULL : &rs->v[k];
}

/* Room for one more name in the array and the index; -1 out of memory. */
static int refset_reserve(rq_revname_refs *rs)
{
	rq_revname_ref *v = rq_mem_grow(rs->v, &rs->cap, rs->n + 1, sizeof(*v), 128);

	if (!v)
		return -1;
	rs->v = v;
	return rq_hindex_reserve(&rs->index, 256, rs->n, refent_hash, rs);
}

/* One ref into the set (a broken one as a name only: a DWIM candidate
 * that is read, to be warned about as git does). 0, or -1 out of
 * memory. */
static int refset_add(const rq_refdb_ref *ref, void *arg)
{
	rq_revname_refs *rs = arg;
	size_t h = rq_hindex_hash_str(ref->name);
	rq_revname_ref *e;

	if (rq_hindex_find(&rs->index, h, refent_eq, rs, ref->name) >= 0)
		return 0;
	if (refset_reserve(rs) < 0)
		return -1;
	e = &rs->v[rs->n];
	memset(e, 0, sizeof(*e));
	if (!(e->name = strdup(ref->name)))
		return -1;
	if (!ref->target && !ref->broken) {
		e->direct = 1;
		e->oid = ref->id;
	}
	rq_hindex_add(&rs->index, h, rs->n);
	rs->n++;
	return 0;
}

void rq_revname_refs_free(rq_revname_refs *rs)
{
	for (size_t k = 0; k < rs->n; k++)
		free(rs->v[k].name);
	free(rs->v);
	free(rs->index.slot);
	memset(rs, 0, sizeof(*rs));
}

/* What identifies one version of packed-refs (all zero: no such file). */
typedef struct packed_stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
} packed_stamp;

static int packed_stamp_read(const char *path, packed_stamp *st)
{
	struct stat sb;

	memset(st, 0, sizeof(*st));
	if (stat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -1;
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	st->size = sb.st_size;
	st->mtime = sb.st_mtim;
	st->ctime = sb.st_ctim;
	return 0;
}

static int packed_stamp_eq(const packed_stamp *a, const packed_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static int refset_iterate(git_repository *repo, rq_revname_refs *rs)
{
	rq_refdb *db;
	rq_error err;
	int rc;

	memset(rs, 0, sizeof(*rs));
	if (rq_refdb_open(&db, repo, &err) < 0)
		return -1;
	rc = rq_refdb_each(db, NULL, NULL, refset_add, rs, &err);
	rq_refdb_free(db);
	if (rc != 0 || !rs->n) {
		rq_revname_refs_free(rs);
		return -1;
	}
	return 0;
}

/*
 * 0, or -1: no set (the caller then looks every candidate up).
 *
 * The iteration reads the loose refs, then packed-refs: a concurrent `git
 * pack-refs` (run by `git gc`) that writes packed-refs and deletes the
 * loose files in between makes refs vanish from the set. Such a set is not
 * used: packed-refs must be the same file before and after the iteration
 * (it is replaced, never rewritten in place), else the set is read again.
 */
int rq_revname_refs_load(git_repository *repo, rq_revname_refs *rs)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%spacked-refs", git_repository_commondir(repo));

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	for (int attempt = 0; attempt < 4; attempt++) {
		packed_stamp before, after;
		if (packed_stamp_read(path, &before) < 0 || refset_iterate(repo, rs) < 0)
			return -1;
		if (packed_stamp_read(path, &after) == 0 && packed_stamp_eq(&before, &after))
			return 0;
		rq_revname_refs_free(rs);
	}
	return -1;
}

static int is_pseudoref_like(const char *name)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!(isupper((unsigned char)*p) || *p == '_'))
			return 0;
	return 1;
}

/* cand read from db as a DWIM candidate: 1 a ref (its id and last name
 * stored unless *found), 0 none (missing, a bad name: ignored; a broken
 * ref, a symbolic ref to nothing: ignored with git's warning, as refs.c's
 * expand_ref says them), -1 error. */
static int dwim_read(rq_refdb *db, const char *cand, int found, char **fullname, rq_oid *oid,
		     int warn, rq_error *err)
{
	char *target = NULL, *full = NULL;
	rq_oid id;
	int rc = rq_refdb_read(db, cand, &id, &target, err);

	if (rc == RQ_REFDB_MISSING || (rc < 0 && err->code == RQ_E_BAD_REF))
		return 0;
	if (rc < 0 && rq_refdb_broken(err)) {
		if (warn && strchr(cand, '/'))
			rq_refdb_warn("ignoring broken ref %s", cand);
		rq_error_clear(err);
		return 0;
	}
	if (rc < 0)
		return -1; /* a link out of refs/, an unreadable file: the reader's words */
	if (target) {
		free(target);
		rq_error e;
		if (rq_refdb_resolve(db, cand, &id, fullname && !found ? &full : NULL, &e) != 0) {
			if (e.code == RQ_E_NOMEM)
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			if (warn && strcmp(cand, "HEAD")) /* an unborn HEAD is no news */
				rq_refdb_warn("ignoring dangling symref %s", cand);
			return 0;
		}
	} else if (fullname && !found && !(full = strdup(cand)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!found && oid)
		*oid = id;
	if (!found && fullname)
		*fullname = full;
	return 1;
}

/* rq_revname_dwim, with git's warnings or without (warn 0). */
static int dwim(git_repository *repo, const rq_revname_refs *known, const char *name,
		char **fullname, rq_oid *oid, int warn, rq_error *err)
{
	int found = 0, rc = 0;
	size_t len = strlen(name);
	rq_refdb *db = NULL;

	if (fullname)
		*fullname = NULL;
	if (!len || len > 4096)
		return 0;
	for (size_t i = 0; rc >= 0 && i < sizeof(dwim_rules) / sizeof(dwim_rules[0]); i++) {
		char cand[4200];
		int valid = 0;

		if (i == 0 && strncmp(name, "refs/", 5) != 0 && !is_pseudoref_like(name))
			continue;
		snprintf(cand, sizeof(cand), dwim_rules[i], name);
		/* most candidates are not refs: with a set, that is found out first */
		int in_set = known && !strncmp(cand, "refs/", 5);
		const rq_revname_ref *e = in_set ? refset_get(known, cand) : NULL;
		if ((in_set && !e) || git_reference_name_is_valid(&valid, cand) < 0 || !valid)
			continue;
		if (e && e->direct) {
			/* as read by the iteration: no second lookup */
			if (!found && oid)
				*oid = e->oid;
			if (!found && fullname && !(*fullname = strdup(cand)))
				rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
			found++;
			continue;
		}
		if (!db && rq_refdb_open(&db, repo, err) < 0)
			rc = -1;
		else if ((rc = dwim_read(db, cand, found, fullname, oid, warn, err)) > 0)
			found++;
	}
	rq_refdb_free(db);
	return rc < 0 ? -1 : found;
}

int rq_revname_dwim(git_repository *repo, const rq_revname_refs *known, const char *name,
		    char **fullname, rq_oid *oid, rq_error *err)
{
	return dwim(repo, known, name, fullname, oid, 1, err);
}

int rq_revname_dwim_log(git_repository *repo, const rq_revname_refs *known, const char *name,
			char **fullname, rq_error *err)
{
	return dwim(repo, known, name, fullname, NULL, 0, err);
}

/* A name that resolves to nothing, unless what failed was reading a
 * damaged object (that is said as itself: the name may well be right). */
int rq_revname_unknown(rq_error *err, const char *expr)
{
	if (rq_error_git_corrupt(err) < 0)
		return -1;
	return rq_error_set(
	    err, RQ_E_BAD_REVISION,
	    "ambiguous argument '%s': unknown revision or path not in the working tree.", expr);
}

/* The job's reader (NULL once the job let go of its database). */
static rq_odb_read *reader_of(rq_commits *commits)
{
	return commits ? rq_commits_reader(commits) : NULL;
}

/* A full object id: the object must exist. (algo: the repository's
 * object format, which ids are read at.) */
static int resolve_full_id(rq_commits *commits, const char *expr, const rq_oid *id, rq_oid *out,
			   rq_error *err)
{
	rq_odb_read *rd = reader_of(commits);

	*out = *id;
	return rd && rq_odb_read_exists(rd, id) ? 0 : rq_revname_unknown(err, expr);
}

/*
 * An abbreviated id: the one object it names, found by id alone (a prefix
 * read would hand back the data of whichever reader has it last, not what
 * the object database's view of replaced and grafted objects gives:
 * rq_odb_view.h). The object is read by its full id later.
 */
static int resolve_abbrev(rq_commits *commits, const char *expr, const char *name, const rq_oid *id,
			  size_t len, rq_oid *out, rq_error *err)
{
	rq_odb_read *rd = reader_of(commits);
	int rc;

	if (!rd)
		return rq_revname_unknown(err, expr);
	rc = rq_odb_read_prefix(rd, id, len, out);
	if (rc == GIT_EAMBIGUOUS)
		return rq_error_set(err, RQ_E_AMBIGUOUS, "short object ID %s is ambiguous", name);
	return rc < 0 ? rq_revname_unknown(err, expr) : 0;
}

/*
 * A plain name (no "@{...}", no suffix): a full id of the repository's
 * width, a ref by the DWIM rules, an abbreviated id, in git's order.
 * *fullname (when not NULL): the ref the name resolved through, when it
 * was looked up as a ref (*named set); NULL if it named no ref.
 */
static int resolve_name(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
			const rq_revname_refs *known, const char *expr, const char *name,
			rq_oid *out, char **fullname, int *named, rq_error *err)
{
	size_t len = strlen(name);
	rq_oid id;
	int n, hex;

	if (!strcmp(name, "@")) {
		name = "HEAD";
		len = 4;
		fullname = NULL; /* "@" itself names no ref */
	}
	hex = rq_revparse_hex(algo, name, len, &id);
	if (hex == 2)
		return resolve_full_id(commits, expr, &id, out, err);
	n = rq_revname_dwim(repo, known, name, fullname, out, err);
	if (n < 0)
		return -1;
	if (n > 1)
		return rq_error_set(err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.", name);
	if (fullname)
		*named = 1;
	if (n == 1)
		return 0;
	if (hex == 1)
		return resolve_abbrev(commits, expr, name, &id, len, out, err);
	return rq_revname_unknown(err, expr);
}

/* The base of a parsed name to an object id (see resolve_name). */
static int resolve_base(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
			const rq_revname_refs *known, const char *expr, const rq_revparse *p,
			rq_oid *out, char **fullname, int *named, rq_error *err)
{
	char *name;
	int rc;

	if (p->at == RQ_REVPARSE_AT_PRIOR) {
		/* "@{-N}" is the name of what was checked out: looked up as
		 * any name (a branch, so a ref to update, as in git) */
		if ((rc = rq_revat_prior(repo, p->at_n, &name, err)) != 0)
			return rc < 0 ? -1 : rq_revname_unknown(err, expr);
	} else if (p->search_all || p->at != RQ_REVPARSE_AT_NONE) {
		return rq_revat_resolve(repo, commits, known, expr, p, out, fullname, named, err);
	} else if (!(name = strndup(p->base, p->base_len))) {
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	rc = resolve_name(repo, commits, algo, known, expr, name, out, fullname, named, err);
	free(name);
	return rc;
}

/*
 * An object on the way through the suffixes, read whole as libgit2's
 * lookup read it (a damaged one is found out): its type, and where
 * peeling it leads (a commit's parse, the job's; a tag's object).
 */
typedef struct rev_obj {
	rq_oid id;
	git_object_t type;
	const rq_cobj_commit *commit; /* a commit */
	rq_oid tagged;		      /* a tag */
} rev_obj;

/* Object id into *o: 0, or -1 with err set. */
static int obj_load(rq_commits *commits, const rq_oid_algo *algo, const rq_oid *id, rev_obj *o,
		    rq_error *err)
{
	rq_odb_read *rd = reader_of(commits);
	rq_odb_read_obj raw;
	rq_cobj_tag tag;
	size_t len;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->id = *id;
	if (!rd)
		return rq_error_set(err, RQ_E_INTERNAL, "the object database was closed");
	if (rq_odb_read_header(rd, id, &len, &o->type) < 0)
		return rq_error_git(err, "cannot read an object");
	if (o->type == GIT_OBJECT_COMMIT)
		return rq_cobj_get(rq_commits_cache(commits), id, &o->commit, err);
	if (rq_odb_read_object(rd, id, &raw) < 0)
		return rq_error_git(err, "cannot read an object");
	if (o->type == GIT_OBJECT_TAG &&
	    (rc = rq_cobj_parse_tag(&tag, algo, id, (const char *)raw.data, raw.len, err)) == 0)
		o->tagged = tag.object;
	rq_odb_read_obj_free(&raw);
	return rc;
}

/* *o peeled to type as git's peel_to_type peels (tags followed, a commit
 * to its tree; ^{}: every tag and nothing else): 0, or -1 (err set). */
static int obj_peel(rq_commits *commits, const rq_oid_algo *algo, rev_obj *o, rq_revparse_type type,
		    rq_error *err)
{
	static const git_object_t want[] = {[RQ_REVPARSE_NONTAG] = GIT_OBJECT_ANY,
					    [RQ_REVPARSE_COMMIT] = GIT_OBJECT_COMMIT,
					    [RQ_REVPARSE_TREE] = GIT_OBJECT_TREE,
					    [RQ_REVPARSE_BLOB] = GIT_OBJECT_BLOB,
					    [RQ_REVPARSE_TAG] = GIT_OBJECT_TAG};

	for (int depth = 0; depth < 1000; depth++) {
		rq_oid next;
		if (type == RQ_REVPARSE_NONTAG ? o->type != GIT_OBJECT_TAG : o->type == want[type])
			return 0;
		if (o->type == GIT_OBJECT_TAG)
			next = o->tagged;
		else if (o->type == GIT_OBJECT_COMMIT && type != RQ_REVPARSE_NONTAG)
			next = o->commit->tree;
		else
			return rq_error_set(err, RQ_E_BAD_REVISION, "no %s under it",
					    git_object_type2string(want[type]));
		if (obj_load(commits, algo, &next, o, err) < 0)
			return -1;
	}
	return rq_error_set(err, RQ_E_BAD_REVISION, "a chain of tags that does not end");
}

/* The nth parent (from 0) of commit *o into *o, a commit: 0, or -1. */
static int obj_parent(rq_commits *commits, const rq_oid_algo *algo, rev_obj *o, size_t nth,
		      rq_error *err)
{
	if (nth >= o->commit->nparents)
		return rq_error_set(err, RQ_E_BAD_REVISION, "no such parent");
	if (obj_load(commits, algo, &o->commit->parents[nth], o, err) < 0)
		return -1;
	if (o->type != GIT_OBJECT_COMMIT)
		return rq_error_set(err, RQ_E_BAD_REVISION, "a parent that is no commit");
	return 0;
}

/* One suffix applied to *o: 0, or -1 (err set). */
static int apply_step(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		      const rq_revparse_step *st, rev_obj *o, rq_error *err)
{
	rq_oid found;

	if (st->kind == RQ_REVPARSE_PEEL)
		return obj_peel(commits, algo, o, st->type, err);
	if (obj_peel(commits, algo, o, RQ_REVPARSE_COMMIT, err) < 0)
		return -1;
	if (st->kind == RQ_REVPARSE_PARENT)
		return st->n == 0 ? 0 : obj_parent(commits, algo, o, (size_t)(st->n - 1), err);
	if (st->kind == RQ_REVPARSE_ANCESTOR) {
		for (long i = 0; i < st->n; i++)
			if (obj_parent(commits, algo, o, 0, err) < 0)
				return -1;
		return 0;
	}
	/* ":/text" after the commit: the youngest from it whose message matches */
	if (rq_revat_search(repo, commits, &o->id, st->text, st->len, &found) != 0)
		return rq_error_set(err, RQ_E_BAD_REVISION, "no commit matches");
	return obj_load(commits, algo, &found, o, err);
}

/* The suffixes of p applied in order to *id (replaced): 0, or -1 with
 * err set (git's "unknown revision" when they name nothing). */
static int apply_steps(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		       const char *expr, const rq_revparse *p, rq_oid *id, rq_error *err)
{
	rev_obj o;
	rq_error e = {0};
	int rc;

	git_error_clear(); /* what a read left says if an object was damaged */
	rc = obj_load(commits, algo, id, &o, &e);
	for (size_t i = 0; rc == 0 && i < p->nsteps; i++)
		rc = apply_step(repo, commits, algo, &p->steps[i], &o, &e);
	if (rc == 0) {
		*id = o.id;
		return 0;
	}
	if (e.code == RQ_E_CORRUPT_OBJECT || e.code == RQ_E_NOMEM) {
		if (err)
			*err = e;
		return -1;
	}
	return rq_revname_unknown(err, expr);
}

/* The object a name resolved to peeled to a commit through the job's
 * commits: a missing object names nothing, anything else is no commit. */
static int peel_cached(rq_cobj_cache *commits, const rq_oid_algo *algo, const rq_oid *oid,
		       const char *expr, rq_oid *out, rq_error *err)
{
	char hex[RQ_OID_MAX_HEXSZ + 1], missing[RQ_OID_MAX_HEXSZ + 16];

	if (rq_cobj_peel(commits, oid, GIT_OBJECT_COMMIT, expr, out, err) == 0)
		return 0;
	if (!err || err->code == RQ_E_CORRUPT_OBJECT || err->code == RQ_E_NOMEM)
		return -1;
	snprintf(missing, sizeof(missing), "bad object %s", rq_oid_fmt(hex, oid, algo));
	if (!strcmp(err->msg, missing)) /* the name's own object */
		return rq_revname_unknown(err, expr);
	return rq_error_set(err, RQ_E_BAD_REVISION, "'%s' does not name a commit", expr);
}

/*
 * The name is read by rq_revparse, its base looked up here (the "@{...}"
 * forms and ":/text" by rq_revat), its suffixes applied in order, and what
 * that gives peeled to a commit, every object read through the job's
 * commits. fullref (may be NULL): when *named comes back set, *fullref is
 * what rq_revname_dwim() gives for the whole expression (a plain name was
 * looked up once for both).
 */
int rq_revname_resolve(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		       const rq_revname_refs *known, const char *expr, rq_oid *out, char **fullref,
		       int *named, rq_error *err)
{
	rq_revparse p;
	rq_oid oid;
	int rc, n = 0;

	if (!*expr || expr[0] == '-' || (strchr(expr, ':') && strncmp(expr, ":/", 2)))
		return rq_revname_unknown(err, expr);
	if ((rc = rq_revparse_read(expr, &p)) != 0)
		return rc < 0 ? rq_error_set(err, RQ_E_NOMEM, "out of memory")
			      : rq_revname_unknown(err, expr);
	rc = resolve_base(repo, commits, algo, known, expr, &p, &oid,
			  fullref && !p.nsteps ? fullref : NULL, &n, err);
	if (rc == 0 && p.nsteps)
		rc = apply_steps(repo, commits, algo, expr, &p, &oid, err);
	rq_revparse_free(&p);
	if (rc == 0)
		rc = peel_cached(rq_commits_cache(commits), algo, &oid, expr, out, err);
	if (rc < 0 && fullref) {
		free(*fullref);
		*fullref = NULL;
	}
	if (rc == 0 && named)
		*named = n;
	return rc;
}

/* id (read through commits) peeled to a tree into *id: 0, or -1. */
static int peel_tree(rq_commits *commits, const rq_oid_algo *algo, rq_oid *id, rq_error *err)
{
	rev_obj o;

	if (obj_load(commits, algo, id, &o, err) < 0 ||
	    obj_peel(commits, algo, &o, RQ_REVPARSE_TREE, err) < 0)
		return -1;
	*id = o.id;
	return 0;
}

/* The entry name (n bytes) of tree-ish *id into *id: 0, or -1 (none:
 * RQ_E_BAD_REVISION). */
static int tree_step(rq_commits *commits, const rq_oid_algo *algo, const char *name, size_t n,
		     rq_oid *id, rq_error *err)
{
	rq_odb_read *rd = reader_of(commits);
	rq_tree_reader trees = rq_odb_read_trees(&rd);
	rq_tree t;
	rq_tree_entry e;
	size_t pos = 0;
	int found = 0;

	if (peel_tree(commits, algo, id, err) < 0 ||
	    rq_tree_open_with(&t, &trees, algo, id, err) < 0)
		return -1;
	while (!found && rq_tree_next(&t, &pos, &e))
		if ((found = e.len == n && !memcmp(e.name, name, n)))
			*id = e.id;
	rq_tree_close(&t);
	return found ? 0 : rq_error_set(err, RQ_E_BAD_REVISION, "no such path in the tree");
}

/* The entry at path ('/'-separated names) under tree-ish *id into *id:
 * 0, or -1. */
static int tree_path(rq_commits *commits, const rq_oid_algo *algo, const char *path, rq_oid *id,
		     rq_error *err)
{
	while (*path) {
		size_t n = strcspn(path, "/");
		if (n && tree_step(commits, algo, path, n, id, err) < 0)
			return -1;
		path += n + (path[n] == '/');
	}
	return 0;
}

int rq_revname_tree(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
		    const char *expr, rq_oid *out, rq_error *err)
{
	const char *colon = strncmp(expr, ":/", 2) ? strchr(expr, ':') : NULL;
	char *rev = colon ? strndup(expr, (size_t)(colon - expr)) : NULL;
	rq_revparse p;
	int rc, named = 0;

	if (colon && !rev)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!*expr || expr[0] == '-' || (rev && !*rev)) { /* ":path": the index's, not read */
		free(rev);
		return rq_revname_unknown(err, expr);
	}
	if ((rc = rq_revparse_read(rev ? rev : expr, &p)) != 0) {
		free(rev);
		return rc < 0 ? rq_error_set(err, RQ_E_NOMEM, "out of memory")
			      : rq_revname_unknown(err, expr);
	}
	rc = resolve_base(repo, commits, algo, NULL, expr, &p, out, NULL, &named, err);
	if (rc == 0 && p.nsteps)
		rc = apply_steps(repo, commits, algo, expr, &p, out, err);
	rq_revparse_free(&p);
	free(rev);
	if (rc == 0 && colon)
		rc = tree_path(commits, algo, colon + 1, out, err);
	if (rc < 0)
		return -1;
	if (peel_tree(commits, algo, out, err) == 0)
		return 0;
	return err && err->code == RQ_E_NOMEM ? -1 : 1;
}
