/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's object-name.c (DWIM ref rules) and revision.c (ranges, shorthands) */
/*
 * rq_revs: parse revision arguments and resolve names like git does.
 */
#include "rq_revs.h"
#include "rq_hindex.h"
#include "rq_mem.h"
#include "rq_refname.h"
#include "rq_pattern.h"

#include <ctype.h>
#include <fnmatch.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const dwim_rules[] = {
    "%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD",
};

/*
 * The names of all refs, read once when many names are to be resolved: a
 * DWIM candidate under refs/ that is not in the set needs no lookup. (Six
 * rules per name, each a stat of a loose ref and a check of packed-refs,
 * cost ~80 us per name; with 200 branches in one replay that was 15 ms.)
 */
#define REFSET_MIN_NAMES 16

typedef struct refent {
	char *name;
	int direct; /* a direct ref: oid is its target */
	git_oid oid;
} refent;

typedef struct refset {
	refent *v; /* n names, cap allocated */
	size_t n, cap;
	rq_hindex index; /* over v by name */
} refset;

static int refent_eq(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const refset *)ctx)->v[i].name, key);
}

static size_t refent_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const refset *)ctx)->v[i].name);
}

static const refent *refset_get(const refset *rs, const char *name)
{
	long k = rq_hindex_find(&rs->index, rq_hindex_hash_str(name), refent_eq, rs, name);
	return k < 0 ? NULL : &rs->v[k];
}

/* Room for one more name in the array and the index; -1 out of memory. */
static int refset_reserve(refset *rs)
{
	refent *v = rq_mem_grow(rs->v, &rs->cap, rs->n + 1, sizeof(*v), 128);

	if (!v)
		return -1;
	rs->v = v;
	return rq_hindex_reserve(&rs->index, 256, rs->n, refent_hash, rs);
}

static int refset_add(refset *rs, const git_reference *ref)
{
	const char *name = git_reference_name(ref);
	size_t h = rq_hindex_hash_str(name);
	refent *e;

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

static void refset_free(refset *rs)
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

static int refset_iterate(git_repository *repo, refset *rs)
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
		refset_free(rs);
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
static int refset_load(git_repository *repo, refset *rs)
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
		refset_free(rs);
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

int rq_revs_refname_valid(const char *s)
{
	int valid = 0;

	if (!s)
		return 0;
	if (!strcmp(s, "HEAD"))
		return 1;
	if (strncmp(s, "refs/", 5) != 0 || !rq_refname_format_ok(s))
		return 0; /* git's rules first: libgit2 takes a DEL */
	if (git_reference_name_is_valid(&valid, s) < 0)
		return 0;
	return valid;
}

static int dwim_ref(git_repository *repo, const refset *known, const char *name, char **fullname,
		    git_oid *oid, rq_error *err)
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
		const refent *e = in_set ? refset_get(known, cand) : NULL;
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

int rq_revs_dwim_ref(git_repository *repo, const char *name, char **fullname, git_oid *oid,
		     rq_error *err)
{
	return dwim_ref(repo, NULL, name, fullname, oid, err);
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
static int unknown_revision(rq_error *err, const char *expr)
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
		return unknown_revision(err, expr);
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
		return unknown_revision(err, expr);
	if (git_repository_odb(&odb, repo) < 0)
		return rq_error_git(err, "cannot open the object database");
	rc = git_odb_exists_prefix(out, odb, &prefix, len);
	git_odb_free(odb);
	if (rc == GIT_EAMBIGUOUS)
		return rq_error_set(err, RQ_E_AMBIGUOUS, "short object ID %s is ambiguous", base);
	if (rc < 0)
		return unknown_revision(err, expr);
	return 0;
}

/*
 * Resolve the base name (before any ~ ^ suffix) to an object id.
 * *fullname (when not NULL): the ref the name resolved through, when the
 * name was looked up as a ref (*named set); NULL if it named no ref.
 */
static int resolve_base(git_repository *repo, const refset *known, const char *expr,
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
			return unknown_revision(err, expr);
		return 0;
	}
	n = dwim_ref(repo, known, base, fullname, out, err);
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
	return unknown_revision(err, expr);
}

/*
 * fullref (may be NULL): when *named comes back set, *fullref is what
 * dwim_ref() gives for the whole expression (a plain name was looked up
 * once for both).
 */
static int resolve_commit(git_repository *repo, const refset *known, const char *expr, git_oid *out,
			  char **fullref, int *named, rq_error *err)
{
	size_t blen = strcspn(expr, "~^");
	char *base;
	git_oid oid;
	git_object *obj = NULL, *peeled = NULL;
	int rc, n = 0;

	if (!strncmp(expr, ":/", 2))
		blen = strlen(expr); /* the text may hold ~ and ^ */
	if (!*expr || expr[0] == '-' || (strchr(expr, ':') && strncmp(expr, ":/", 2)) || blen == 0)
		return unknown_revision(err, expr);
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
			return unknown_revision(err, expr);
		git_oid_tostr(hex, sizeof(hex), &oid);
		snprintf(spec, sizeof(spec), "%s%s", hex, expr + blen);
		if (git_revparse_single(&obj, repo, spec) < 0)
			return unknown_revision(err, expr);
	} else if (git_object_lookup(&obj, repo, &oid, GIT_OBJECT_ANY) < 0) {
		return unknown_revision(err, expr);
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

int rq_revs_resolve_commit(git_repository *repo, const char *expr, git_oid *out, rq_error *err)
{
	return resolve_commit(repo, NULL, expr, out, NULL, NULL, err);
}

void rq_revs_free(rq_revs *revs)
{
	if (!revs)
		return;
	for (size_t i = 0; i < revs->n; i++) {
		free(revs->v[i].name);
		free(revs->v[i].fullref);
	}
	free(revs->v);
	rq_revfilter_free(&revs->filter);
	memset(revs, 0, sizeof(*revs));
}

static int push_rev(git_repository *repo, const refset *refs, rq_revs *revs, size_t *cap,
		    const char *name, size_t len, int negative, const git_oid *known, rq_error *err)
{
	rq_rev *r;
	int n = 0;

	if (!(r = rq_mem_grow(revs->v, cap, revs->n + 1, sizeof(*r), 8)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	revs->v = r;
	r = &revs->v[revs->n];
	memset(r, 0, sizeof(*r));
	r->negative = negative;
	/* an empty side of a range, and "@" alone, mean HEAD */
	r->name = len && !(len == 1 && *name == '@') ? strndup(name, len) : strdup("HEAD");
	if (!r->name)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	revs->n++;
	if (negative)
		revs->nnegative++;
	else
		revs->npositive++;
	if (known) {
		git_oid_cpy(&r->oid, known);
		return 0;
	}
	if (resolve_commit(repo, refs, r->name, &r->oid, &r->fullref, &n, err) < 0)
		return -1;
	if (n) /* looked up as a ref already */
		return 0;
	n = dwim_ref(repo, refs, r->name, &r->fullref, NULL, err);
	if (n < 0)
		return -1;
	if (n != 1) {
		free(r->fullref);
		r->fullref = NULL;
	}
	return 0;
}

static int add_merge_bases(git_repository *repo, rq_revs *revs, size_t *cap, const git_oid *a,
			   const git_oid *b, rq_error *err)
{
	git_oidarray bases = {0};
	int rc = git_merge_bases(&bases, repo, a, b);

	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rq_error_git(err, "cannot compute merge bases");
	for (size_t i = 0; i < bases.count; i++) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &bases.ids[i]);
		if (push_rev(repo, NULL, revs, cap, hex, GIT_OID_HEXSZ, 1, &bases.ids[i], err) <
		    0) {
			git_oidarray_dispose(&bases);
			return -1;
		}
	}
	git_oidarray_dispose(&bases);
	return 0;
}

/* An unknown part of a range or shorthand: git names the whole argument. */
static int whole_arg(rq_error *err, const char *arg)
{
	if (err && err->code == RQ_E_BAD_REVISION && !strncmp(err->msg, "ambiguous argument", 18))
		return unknown_revision(err, arg);
	return -1;
}

/* The commit an expression names, by id (its name counts as no ref). */
static int commit_of(git_repository *repo, const refset *refs, const char *expr, size_t len,
		     git_commit **out, rq_error *err)
{
	char *name = strndup(expr, len);
	git_oid oid;
	int n = 0, rc;

	*out = NULL;
	if (!name)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = resolve_commit(repo, refs, name, &oid, NULL, &n, err);
	free(name);
	if (rc < 0)
		return -1;
	if (git_commit_lookup(out, repo, &oid) < 0)
		return rq_error_git(err, "cannot read commit");
	return 0;
}

/*
 * git's parent shorthands (gitrevisions(7)): X^! is X without its parents,
 * X^@ all of X's parents, X^-N (N default 1) is ^X^N X. The commits they
 * add are named by the argument, so none of them is a ref to update (as in
 * git replay). 1 when arg was one of them, 0 when not, -1 on error.
 */
static int parse_parent_shorthand(git_repository *repo, const refset *refs, rq_revs *revs,
				  size_t *cap, const char *arg, rq_error *err)
{
	size_t len = strlen(arg), base;
	long nth = -1;
	git_commit *c = NULL;
	int rc = 0, kind;
	char *end;

	if (len > 2 && (!strcmp(arg + len - 2, "^!") || !strcmp(arg + len - 2, "^@"))) {
		kind = arg[len - 1];
		base = len - 2;
	} else if ((end = strstr(arg, "^-")) && end > arg &&
		   strspn(end + 2, "0123456789") == strlen(end + 2)) {
		kind = '-';
		base = (size_t)(end - arg);
		nth = end[2] ? strtol(end + 2, NULL, 10) : 1;
	} else {
		return 0;
	}
	if (commit_of(repo, refs, arg, base, &c, err) < 0)
		return whole_arg(err, arg);
	if (kind == '-' && (nth < 1 || (unsigned long)nth > git_commit_parentcount(c))) {
		git_commit_free(c);
		return unknown_revision(err, arg);
	}
	for (unsigned i = 0; i < git_commit_parentcount(c) && rc == 0; i++)
		if (kind != '-' || i + 1 == (unsigned)nth)
			rc = push_rev(repo, refs, revs, cap, arg, len, kind != '@',
				      git_commit_parent_id(c, i), err);
	if (rc == 0 && kind != '@')
		rc = push_rev(repo, refs, revs, cap, arg, len, 0, git_commit_id(c), err);
	git_commit_free(c);
	return rc < 0 ? -1 : 1;
}

static int parse_one(git_repository *repo, const refset *refs, rq_revs *revs, size_t *cap,
		     const char *arg, rq_error *err)
{
	const char *dots = strstr(arg, "..");
	int r;

	if (!*arg)
		return unknown_revision(err, arg);
	if (!dots && arg[0] != '^' && (r = parse_parent_shorthand(repo, refs, revs, cap, arg, err)))
		return r < 0 ? -1 : 0;
	if (dots) {
		int symmetric = dots[2] == '.';
		const char *right = dots + (symmetric ? 3 : 2);
		size_t llen = (size_t)(dots - arg);
		size_t first;

		if (arg[0] == '^' || strstr(right, ".."))
			return unknown_revision(err, arg);
		first = revs->n;
		if (push_rev(repo, refs, revs, cap, arg, llen, !symmetric, NULL, err) < 0 ||
		    push_rev(repo, refs, revs, cap, right, strlen(right), 0, NULL, err) < 0)
			return whole_arg(err, arg);
		if (symmetric)
			return add_merge_bases(repo, revs, cap, &revs->v[first].oid,
					       &revs->v[first + 1].oid, err);
		return 0;
	}
	if (arg[0] == '^') {
		if (!arg[1])
			return unknown_revision(err, arg);
		return push_rev(repo, refs, revs, cap, arg + 1, strlen(arg + 1), 1, NULL, err);
	}
	return push_rev(repo, refs, revs, cap, arg, strlen(arg), 0, NULL, err);
}

/* --- ref sets: --all, --branches, --tags, --remotes, --glob ----------------- */

typedef struct refsel {
	char **exclude; /* --exclude patterns for the next set */
	size_t nexclude;
	int negate; /* after an odd number of --not */
} refsel;

static int has_glob(const char *p)
{
	return strpbrk(p, "?*[") != NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int excluded(const refsel *sel, const char *name, size_t prefix)
{
	for (size_t i = 0; i < sel->nexclude; i++)
		if (!fnmatch(sel->exclude[i], name + prefix, 0))
			return 1;
	return 0;
}

/* The refs under prefix matching pattern, sorted by name (git's order). */
static int matching_refs(git_repository *repo, const char *pattern, char ***out, size_t *n,
			 rq_error *err)
{
	git_reference_iterator *it = NULL;
	const char *name;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (git_reference_iterator_new(&it, repo) < 0)
		return rq_error_git(err, "cannot list refs");
	while (rc == 0 && git_reference_next_name(&name, it) == 0) {
		if (fnmatch(pattern, name, 0))
			continue;
		char **nv = rq_mem_grow(*out, &cap, *n + 1, sizeof(*nv), 16);
		if (!nv) {
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
			break;
		}
		*out = nv;
		if (!((*out)[*n] = strdup(name)))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			(*n)++;
	}
	git_reference_iterator_free(it);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_names);
	return rc;
}

/* Push every ref of a set (prefix: what --exclude patterns are relative
 * to) that points at a commit, as a ref to update. */
static int push_set(git_repository *repo, rq_revs *revs, size_t *cap, refsel *sel,
		    const char *pattern, size_t prefix, int with_head, rq_error *err)
{
	char **names;
	size_t n;
	int rc = matching_refs(repo, pattern, &names, &n, err);

	for (size_t i = 0; i < n; i++) {
		git_object *o = NULL, *c = NULL;
		if (rc == 0 && !excluded(sel, names[i], prefix) &&
		    git_revparse_single(&o, repo, names[i]) == 0 &&
		    git_object_peel(&c, o, GIT_OBJECT_COMMIT) == 0) {
			rc = push_rev(repo, NULL, revs, cap, names[i], strlen(names[i]),
				      sel->negate, git_object_id(c), err);
			if (rc == 0 && !(revs->v[revs->n - 1].fullref = strdup(names[i])))
				rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
		git_object_free(c);
		git_object_free(o);
		free(names[i]);
	}
	free(names);
	if (rc == 0 && with_head && git_repository_head_unborn(repo) != 1)
		rc = push_rev(repo, NULL, revs, cap, "HEAD", 4, sel->negate, NULL, err);
	for (size_t i = 0; i < sel->nexclude; i++)
		free(sel->exclude[i]);
	free(sel->exclude);
	sel->exclude = NULL;
	sel->nexclude = 0;
	return rc;
}

/* "--branches[=<pat>]"-style: 1 taken, 0 not such an option, -1 error. */
static int ref_set_option(git_repository *repo, rq_revs *revs, size_t *cap, refsel *sel,
			  const char *a, rq_error *err)
{
	static const struct {
		const char *opt, *prefix;
	} sets[] = {{"--branches", "refs/heads/"},
		    {"--tags", "refs/tags/"},
		    {"--remotes", "refs/remotes/"},
		    {"--glob", "refs/"}};
	char pat[1024];

	if (!strcmp(a, "--all"))
		return push_set(repo, revs, cap, sel, "refs/*", 0, 1, err) < 0 ? -1 : 1;
	for (size_t i = 0; i < sizeof(sets) / sizeof(*sets); i++) {
		size_t ol = strlen(sets[i].opt), pl = strlen(sets[i].prefix);
		const char *v = !strncmp(a, sets[i].opt, ol) && a[ol] == '=' ? a + ol + 1 : NULL;
		int glob = i == 3;
		if (strcmp(a, sets[i].opt) && !v)
			continue;
		if (glob && !v)
			return rq_error_set(err, RQ_E_USAGE, "option '--glob' requires a value");
		if (glob && !strncmp(v, "refs/", 5))
			v += 5;
		snprintf(pat, sizeof(pat), "%s%s%s", sets[i].prefix, v ? v : "*",
			 v && !has_glob(v) ? "/*" : "");
		return push_set(repo, revs, cap, sel, pat, glob ? 0 : pl, 0, err) < 0 ? -1 : 1;
	}
	if (!strncmp(a, "--exclude=", 10)) {
		char **nv = realloc(sel->exclude, (sel->nexclude + 1) * sizeof(*nv));
		if (!nv || !(nv[sel->nexclude] = strdup(a + 10))) {
			if (nv)
				sel->exclude = nv;
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
		sel->exclude = nv;
		sel->nexclude++;
		return 1;
	}
	if (!strcmp(a, "--not")) {
		sel->negate = !sel->negate;
		return 1;
	}
	return 0;
}

/* An option among the revisions: a ref set or a walk option (rq_revfilter). */
static int parse_option(git_repository *repo, rq_revs *revs, size_t *cap, refsel *sel,
			const char *a, rq_error *err)
{
	int r = ref_set_option(repo, revs, cap, sel, a, err);

	if (r == 0)
		r = rq_revfilter_option(&revs->filter, a, err);
	if (r == 0 && rq_revfilter_git_only(a))
		return rq_error_set(err, RQ_E_USAGE,
				    "revision-walk option '%s' is not supported by replayq", a);
	if (r == 0) /* git's words for an option it does not know either */
		return rq_error_set(err, RQ_E_USAGE, "unrecognized argument: %s", a);
	return r < 0 ? -1 : 0;
}

/*
 * A pathspec after "--". git replay takes one only when it names something
 * in the working tree (or holds a wildcard), with git's messages otherwise:
 * the first as an unknown revision, the next ones as missing paths; in a
 * bare repository no path exists. 0 or -1.
 */
static int add_pathspec(git_repository *repo, rq_revfilter *f, const char *path, int first,
			rq_error *err)
{
	const char *wd = git_repository_workdir(repo);
	char full[4096];
	struct stat st;

	if (!has_glob(path) &&
	    (!wd || snprintf(full, sizeof(full), "%s%s", wd, path) >= (int)sizeof(full) ||
	     lstat(full, &st) < 0)) {
		if (first)
			return unknown_revision(err, path);
		return rq_error_set(err, RQ_E_BAD_REVISION, "%s: no such path in the working tree.",
				    path);
	}
	return rq_revfilter_path(f, path, err) < 0 ? -1 : 0;
}

/* Every pattern valid and within rq_pattern's limit: 0, or -1 (err set). */
static int patterns_bounded(char **v, size_t n, int syntax, rq_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (rq_pattern_bounded(v[i], syntax, err) < 0)
			return -1;
	return 0;
}

int rq_revs_syntax_option(const char *a, int syntax)
{
	if (!strcmp(a, "-E") || !strcmp(a, "--extended-regexp"))
		return 'E';
	if (!strcmp(a, "-F") || !strcmp(a, "--fixed-strings"))
		return 'F';
	return strcmp(a, "--basic-regexp") ? syntax : 0;
}

int rq_revs_option_check(const char *a, int syntax, rq_error *err)
{
	static const char *const sets[] = {"--all", "--branches", "--tags", "--remotes", "--not"};
	static const char *const valued[] = {
	    "--branches=", "--tags=", "--remotes=", "--glob=", "--exclude="};
	rq_revfilter f;
	int r;

	for (size_t i = 0; i < sizeof(sets) / sizeof(*sets); i++)
		if (!strcmp(a, sets[i]))
			return 0;
	for (size_t i = 0; i < sizeof(valued) / sizeof(*valued); i++)
		if (!strncmp(a, valued[i], strlen(valued[i])))
			return 0;
	rq_revfilter_init(&f);
	f.absolute_dates = 1; /* a job's dates: the same commits on every retry */
	r = rq_revfilter_option(&f, a, err);
	if (r == 0)
		rq_error_set(err, RQ_E_USAGE, "unrecognized argument: %s", a);
	/* a pattern is checked, never compiled: compiling is unbounded
	 * (rq_pattern); the job's child compiles it, under its limits */
	if (r == 1 && (patterns_bounded(f.author, f.nauthor, syntax, err) < 0 ||
		       patterns_bounded(f.committer, f.ncommitter, syntax, err) < 0 ||
		       patterns_bounded(f.grep, f.ngrep, syntax, err) < 0))
		r = -1;
	rq_revfilter_free(&f);
	return r == 1 ? 0 : -1;
}

int rq_revs_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != '\0';
}

int rq_revs_parse(git_repository *repo, const char *const *args, size_t nargs, rq_revs *out,
		  rq_error *err)
{
	size_t cap = 0;
	refset refs;
	refsel sel = {NULL, 0, 0};
	int have_refs = nargs >= REFSET_MIN_NAMES && refset_load(repo, &refs) == 0, rc = 0;

	memset(out, 0, sizeof(*out));
	rq_revfilter_init(&out->filter);
	for (size_t i = 0; i < nargs && rc == 0; i++) {
		size_t before = out->n;
		if (!strcmp(args[i], "--")) { /* the rest are pathspecs */
			for (size_t k = i + 1; rc == 0 && k < nargs; k++)
				rc = add_pathspec(repo, &out->filter, args[k], k == i + 1, err);
			break;
		}
		if (rq_revs_is_option(args[i]))
			rc = parse_option(repo, out, &cap, &sel, args[i], err);
		else
			rc = parse_one(repo, have_refs ? &refs : NULL, out, &cap, args[i], err);
		for (size_t k = before;
		     rc == 0 && sel.negate && k < out->n && !rq_revs_is_option(args[i]); k++)
			out->v[k].negative = !out->v[k].negative;
	}
	if (rc == 0)
		rc = rq_revfilter_ready(&out->filter, err);
	out->npositive = out->nnegative = 0;
	for (size_t k = 0; k < out->n; k++)
		out->v[k].negative ? out->nnegative++ : out->npositive++;
	for (size_t i = 0; i < sel.nexclude; i++)
		free(sel.exclude[i]);
	free(sel.exclude);
	if (have_refs)
		refset_free(&refs);
	if (rc < 0)
		rq_revs_free(out);
	return rc;
}
