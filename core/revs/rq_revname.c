/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's object-name.c (DWIM ref rules, suffixes, abbreviated ids) */
/*
 * rq_revname: one revision name resolved as git resolves it (see
 * rq_revname.h).
 */
#include "rq_revname.h"
#include "rq_mem.h"

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

static int refset_add(rq_revname_refs *rs, const git_reference *ref)
{
	const char *name = git_reference_name(ref);
	size_t h = rq_hindex_hash_str(name);
	rq_revname_ref *e;

	if (rq_hindex_find(&rs->index, h, refent_eq, rs, name) >= 0)
		return 0;
	if (refset_reserve(rs) < 0)
		return -1;
	e = &rs->v[rs->n];
	memset(e, 0, sizeof(*e));
	if (!(e->name = strdup(name)))
		return -1;
	if (git_reference_type(ref) == GIT_REFERENCE_DIRECT && git_reference_target(ref)) {
		e->direct = 1;
		git_oid_cpy(&e->oid, git_reference_target(ref));
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
	git_reference_iterator *it = NULL;
	git_reference *ref;
	int rc;

	memset(rs, 0, sizeof(*rs));
	if (git_reference_iterator_new(&it, repo) < 0)
		return -1;
	while ((rc = git_reference_next(&ref, it)) == 0) {
		int bad = refset_add(rs, ref) < 0;
		git_reference_free(ref);
		if (bad)
			break;
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER || !rs->n) {
		rq_revname_refs_free(rs);
		return -1;
	}
	return 0;
}

/*
 * 0, or -1: no set (the caller then looks every candidate up).
 *
 * The iterator reads packed-refs, then the loose refs: a concurrent `git
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

int rq_revname_dwim(git_repository *repo, const rq_revname_refs *known, const char *name,
		    char **fullname, git_oid *oid, rq_error *err)
{
	int found = 0;
	size_t len = strlen(name);

	if (fullname)
		*fullname = NULL;
	if (!len || len > 4096)
		return 0;
	for (size_t i = 0; i < sizeof(dwim_rules) / sizeof(dwim_rules[0]); i++) {
		char cand[4200];
		git_reference *ref = NULL, *resolved = NULL;
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
			/* as read by the iterator: no second lookup */
			if (!found && oid)
				git_oid_cpy(oid, &e->oid);
			if (!found && fullname && !(*fullname = strdup(cand)))
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			found++;
			continue;
		}
		int rc = git_reference_lookup(&ref, repo, cand);
		if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
			continue;
		if (rc < 0)
			return rq_error_git(err, "cannot read ref");
		rc = git_reference_resolve(&resolved, ref);
		git_reference_free(ref);
		if (rc < 0)
			continue; /* dangling symref: ignored, as git does */
		if (!found) {
			if (oid)
				git_oid_cpy(oid, git_reference_target(resolved));
			if (fullname) {
				*fullname = strdup(git_reference_name(resolved));
				if (!*fullname) {
					git_reference_free(resolved);
					return rq_error_set(err, RQ_E_NOMEM, "out of memory");
				}
			}
		}
		found++;
		git_reference_free(resolved);
	}
	return found;
}

static int all_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
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

/* "@{-N}", "<branch>@{u}", "@{upstream}", "@{push}": names of a branch
 * (so a ref to update, as in git), unlike a reflog entry "@{N}". */
static int names_branch(const char *base)
{
	const char *at = strstr(base, "@{");
	return at && (at[2] == '-' || !strcmp(at, "@{u}") || !strcmp(at, "@{upstream}") ||
		      !strcmp(at, "@{push}"));
}

/* The @{...} forms and ":/text", through libgit2's rev-parse. */
static int resolve_special(git_repository *repo, const char *expr, const char *base, git_oid *out,
			   char **fullname, int *named, rq_error *err)
{
	git_object *obj = NULL;
	git_reference *ref = NULL;

	if (git_revparse_ext(&obj, &ref, repo, base) < 0)
		return rq_revname_unknown(err, expr);
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
	if (fullname && ref && names_branch(base)) {
		git_reference *resolved = NULL;
		if (git_reference_resolve(&resolved, ref) == 0) {
			*fullname = strdup(git_reference_name(ref));
			git_reference_free(resolved);
			if (!*fullname) {
				git_reference_free(ref);
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			}
			*named = 1;
		}
	}
	git_reference_free(ref);
	return 0;
}

/*
 * An abbreviated id: the one object it names, found by id alone (a prefix
 * read would hand back the data of whichever reader has it last, not what
 * the object database's view of replaced and grafted objects gives:
 * rq_odb_view.h). The object is read by its full id later.
 */
static int resolve_abbrev(git_repository *repo, const char *expr, const char *base, size_t len,
			  git_oid *out, rq_error *err)
{
	git_odb *odb = NULL;
	git_oid prefix;
	int rc;

	if (git_oid_fromstrn(&prefix, base, len) < 0)
		return rq_revname_unknown(err, expr);
	if (git_repository_odb(&odb, repo) < 0)
		return rq_error_git(err, "cannot open the object database");
	rc = git_odb_exists_prefix(out, odb, &prefix, len);
	git_odb_free(odb);
	if (rc == GIT_EAMBIGUOUS)
		return rq_error_set(err, RQ_E_AMBIGUOUS, "short object ID %s is ambiguous", base);
	if (rc < 0)
		return rq_revname_unknown(err, expr);
	return 0;
}

/*
 * Resolve the base name (before any ~ ^ suffix) to an object id.
 * *fullname (when not NULL): the ref the name resolved through, when the
 * name was looked up as a ref (*named set); NULL if it named no ref.
 */
static int resolve_base(git_repository *repo, const rq_revname_refs *known, const char *expr,
			const char *base, git_oid *out, char **fullname, int *named, rq_error *err)
{
	size_t len = strlen(base);
	int n;

	if (!strcmp(base, "@")) {
		base = "HEAD";
		fullname = NULL; /* "@" itself names no ref */
	}
	if (strstr(base, "@{") || !strncmp(base, ":/", 2))
		return resolve_special(repo, expr, base, out, fullname, named, err);
	if (len == GIT_OID_HEXSZ && all_hex(base, len) && git_oid_fromstr(out, base) == 0) {
		git_odb *odb = NULL;
		int exists = 0;
		if (git_repository_odb(&odb, repo) == 0) {
			exists = git_odb_exists(odb, out);
			git_odb_free(odb);
		}
		if (!exists)
			return rq_revname_unknown(err, expr);
		return 0;
	}
	n = rq_revname_dwim(repo, known, base, fullname, out, err);
	if (n < 0)
		return -1;
	if (n > 1)
		return rq_error_set(err, RQ_E_AMBIGUOUS, "refname '%s' is ambiguous.", base);
	if (fullname)
		*named = 1;
	if (n == 1)
		return 0;
	if (len >= 4 && len < GIT_OID_HEXSZ && all_hex(base, len))
		return resolve_abbrev(repo, expr, base, len, out, err);
	return rq_revname_unknown(err, expr);
}

/*
 * fullref (may be NULL): when *named comes back set, *fullref is what
 * rq_revname_dwim() gives for the whole expression (a plain name was looked up
 * once for both).
 */
int rq_revname_resolve(git_repository *repo, const rq_revname_refs *known, const char *expr,
		       git_oid *out, char **fullref, int *named, rq_error *err)
{
	size_t blen = strcspn(expr, "~^");
	char *base;
	git_oid oid;
	git_object *obj = NULL, *peeled = NULL;
	int rc, n = 0;

	if (!strncmp(expr, ":/", 2))
		blen = strlen(expr); /* the text may hold ~ and ^ */
	if (!*expr || expr[0] == '-' || (strchr(expr, ':') && strncmp(expr, ":/", 2)) || blen == 0)
		return rq_revname_unknown(err, expr);
	base = strndup(expr, blen);
	if (!base)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = resolve_base(repo, known, expr, base, &oid, fullref && !expr[blen] ? fullref : NULL,
			  &n, err);
	free(base);
	if (rc < 0) {
		if (fullref) {
			free(*fullref);
			*fullref = NULL;
		}
		return -1;
	}
	if (named)
		*named = n;
	if (expr[blen]) {
		char spec[GIT_OID_HEXSZ + 1 + 256];
		char hex[GIT_OID_HEXSZ + 1];
		if (strlen(expr + blen) > 255)
			return rq_revname_unknown(err, expr);
		git_oid_tostr(hex, sizeof(hex), &oid);
		snprintf(spec, sizeof(spec), "%s%s", hex, expr + blen);
		if (git_revparse_single(&obj, repo, spec) < 0)
			return rq_revname_unknown(err, expr);
	} else if (git_object_lookup(&obj, repo, &oid, GIT_OBJECT_ANY) < 0) {
		return rq_revname_unknown(err, expr);
	}
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0 && rq_error_git_corrupt(err) < 0)
		return -1;
	if (rc < 0)
		return rq_error_set(err, RQ_E_BAD_REVISION, "'%s' does not name a commit", expr);
	git_oid_cpy(out, git_object_id(peeled));
	git_object_free(peeled);
	return 0;
}
