/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's revision.c (ranges, shorthands, ref sets) */
/*
 * rq_revs: parse revision arguments like git does; each name in them is
 * resolved by rq_revname.
 */
#include "rq_revs.h"
#include "rq_cobj.h"
#include "rq_mem.h"
#include "rq_odb_read.h"
#include "rq_reach.h"
#include "rq_refdb.h"
#include "rq_refname.h"
#include "rq_revname.h"
#include "rq_pattern.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int rq_revs_dwim_ref(git_repository *repo, const char *name, char **fullname, rq_oid *oid,
		     rq_error *err)
{
	return rq_revname_dwim(repo, NULL, name, fullname, oid, err);
}

int rq_revs_resolve_commit(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
			   const char *expr, rq_oid *out, rq_error *err)
{
	rq_commits *own = NULL;
	int rc;

	if (!commits && rq_commits_open(&own, repo, algo, err) < 0)
		return -1;
	rc = rq_revname_resolve(repo, commits ? commits : own, algo, NULL, expr, out, NULL, NULL,
				err);
	rq_commits_free(own);
	return rc;
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
	rq_commits_free(revs->commits);
	memset(revs, 0, sizeof(*revs));
}

static int push_rev(git_repository *repo, const rq_revname_refs *refs, rq_revs *revs, size_t *cap,
		    const char *name, size_t len, int negative, const rq_oid *known, rq_error *err)
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
		r->oid = *known;
		return 0;
	}
	if (rq_revname_resolve(repo, revs->commits, revs->algo, refs, r->name, &r->oid, &r->fullref,
			       &n, err) < 0)
		return -1;
	if (n) /* looked up as a ref already */
		return 0;
	n = rq_revname_dwim(repo, refs, r->name, &r->fullref, NULL, err);
	if (n < 0)
		return -1;
	if (n != 1) {
		free(r->fullref);
		r->fullref = NULL;
	}
	return 0;
}

static int add_merge_bases(git_repository *repo, rq_revs *revs, size_t *cap, const rq_oid *a,
			   const rq_oid *b, rq_error *err)
{
	rq_reach_reader rd = rq_cobj_reach_reader(rq_commits_cache(revs->commits));
	rq_oid *bases = NULL;
	size_t n = 0;
	int rc = rq_reach_bases(&rd, NULL, a, b, 1, &bases, &n, err);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rq_oid_fmt(hex, &bases[i], revs->algo);
		rc = push_rev(repo, NULL, revs, cap, hex, revs->algo->hexsz, 1, &bases[i], err);
	}
	free(bases);
	return rc < 0 ? -1 : 0;
}

/* An unknown part of a range or shorthand: git names the whole argument. */
static int whole_arg(rq_error *err, const char *arg)
{
	if (err && err->code == RQ_E_BAD_REVISION && !strncmp(err->msg, "ambiguous argument", 18))
		return rq_revname_unknown(err, arg);
	return -1;
}

/* The commit an expression names, by id (its name counts as no ref). */
static int commit_of(git_repository *repo, const rq_revs *revs, const rq_revname_refs *refs,
		     const char *expr, size_t len, const rq_cobj_commit **out, rq_error *err)
{
	char *name = strndup(expr, len);
	rq_oid oid;
	int n = 0, rc;

	*out = NULL;
	if (!name)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = rq_revname_resolve(repo, revs->commits, revs->algo, refs, name, &oid, NULL, &n, err);
	free(name);
	if (rc < 0)
		return -1;
	return rq_cobj_get(rq_commits_cache(revs->commits), &oid, out, err);
}

/*
 * git's parent shorthands (gitrevisions(7)): X^! is X without its parents,
 * X^@ all of X's parents, X^-N (N default 1) is ^X^N X. The commits they
 * add are named by the argument, so none of them is a ref to update (as in
 * git replay). 1 when arg was one of them, 0 when not, -1 on error.
 */
static int parse_parent_shorthand(git_repository *repo, const rq_revname_refs *refs, rq_revs *revs,
				  size_t *cap, const char *arg, rq_error *err)
{
	size_t len = strlen(arg), base;
	long nth = -1;
	const rq_cobj_commit *c = NULL;
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
	if (commit_of(repo, revs, refs, arg, base, &c, err) < 0)
		return whole_arg(err, arg);
	if (kind == '-' && (nth < 1 || (unsigned long)nth > c->nparents))
		return rq_revname_unknown(err, arg);
	for (size_t i = 0; i < c->nparents && rc == 0; i++)
		if (kind != '-' || i + 1 == (size_t)nth)
			rc = push_rev(repo, refs, revs, cap, arg, len, kind != '@', &c->parents[i],
				      err);
	if (rc == 0 && kind != '@')
		rc = push_rev(repo, refs, revs, cap, arg, len, 0, &c->id, err);
	return rc < 0 ? -1 : 1;
}

/* A plain argument that named nothing: git looks it up once more before
 * it dies (setup_revisions, maybe_die_on_misspelt_object_name), and says
 * its warnings about refs again. -1. */
static int plain_unknown(git_repository *repo, const rq_revname_refs *refs, rq_revs *revs,
			 const char *arg, rq_error *err)
{
	rq_error e;
	rq_oid id;
	char *full = NULL;
	int named = 0;

	if (err->code == RQ_E_BAD_REVISION && !strncmp(err->msg, "ambiguous argument", 18)) {
		(void)rq_revname_resolve(repo, revs->commits, revs->algo, refs, arg, &id, &full,
					 &named, &e);
		free(full);
	}
	return -1;
}

/* A negated name that names nothing: git dies on it at once, without
 * its hint (setup_revisions: "bad revision '^X'"). -1. */
static int bad_negated(rq_error *err, const char *arg)
{
	if (arg[1] &&
	    !(err->code == RQ_E_BAD_REVISION && !strncmp(err->msg, "ambiguous argument", 18)))
		return -1; /* (a damaged object, out of memory: said as itself) */
	return rq_error_set(err, RQ_E_BAD_REVISION, "bad revision '%s'", arg);
}

static int parse_one(git_repository *repo, const rq_revname_refs *refs, rq_revs *revs, size_t *cap,
		     const char *arg, rq_error *err)
{
	const char *dots = strstr(arg, "..");
	int r;

	if (!*arg)
		return rq_revname_unknown(err, arg);
	if (!dots && arg[0] != '^' && (r = parse_parent_shorthand(repo, refs, revs, cap, arg, err)))
		return r < 0 ? -1 : 0;
	if (dots) {
		int symmetric = dots[2] == '.';
		const char *right = dots + (symmetric ? 3 : 2);
		size_t llen = (size_t)(dots - arg);
		size_t first;

		if (arg[0] == '^' || strstr(right, ".."))
			return rq_revname_unknown(err, arg);
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
		if (arg[1] &&
		    push_rev(repo, refs, revs, cap, arg + 1, strlen(arg + 1), 1, NULL, err) == 0)
			return 0;
		return bad_negated(err, arg);
	}
	if (push_rev(repo, refs, revs, cap, arg, strlen(arg), 0, NULL, err) < 0)
		return plain_unknown(repo, refs, revs, arg, err);
	return 0;
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

static int excluded(const refsel *sel, const char *name, size_t prefix)
{
	for (size_t i = 0; i < sel->nexclude; i++)
		if (!fnmatch(sel->exclude[i], name + prefix, 0))
			return 1;
	return 0;
}

/* What a ref of a set resolves to: zero, a dangling symbolic ref (skipped,
 * as git skips it); broken, a ref that holds no id (git dies on it). */
typedef struct ref_target {
	rq_oid id;
	int broken;
} ref_target;

typedef struct ref_match {
	rq_refdb *db;
	char **names;
	ref_target *ids; /* what each resolves to */
	size_t n, cap, idcap;
	rq_error *err;
} ref_match;

static int match_one(const rq_refdb_ref *ref, void *arg)
{
	ref_match *m = arg;
	char **nv = rq_mem_grow(m->names, &m->cap, m->n + 1, sizeof(*nv), 16);
	ref_target *iv = nv ? rq_mem_grow(m->ids, &m->idcap, m->n + 1, sizeof(*iv), 16) : NULL;
	rq_error e;

	if (nv)
		m->names = nv;
	if (iv)
		m->ids = iv;
	if (!nv || !iv || !(m->names[m->n] = strdup(ref->name)))
		return rq_error_set(m->err, RQ_E_NOMEM, "out of memory");
	memset(&m->ids[m->n], 0, sizeof(*m->ids));
	m->ids[m->n].broken = ref->broken;
	if (!ref->broken && !ref->target)
		m->ids[m->n].id = ref->id;
	else if (!ref->broken &&
		 rq_refdb_resolve(m->db, ref->name, &m->ids[m->n].id, NULL, &e) != 0)
		memset(&m->ids[m->n].id, 0, sizeof(m->ids[m->n].id));
	m->n++;
	return 0;
}

/* The refs matching pattern and what they resolve to, sorted by name
 * (git's order). */
static int matching_refs(rq_refdb *db, const char *pattern, char ***out, ref_target **ids,
			 size_t *n, rq_error *err)
{
	ref_match m = {.db = db, .err = err};
	int rc = rq_refdb_each(db, NULL, pattern, match_one, &m, err);

	if (rc < 0)
		rq_refdb_fail(err, "cannot list refs");
	*out = m.names;
	*ids = m.ids;
	*n = m.n;
	return rc < 0 ? -1 : 0;
}

/* 1 when HEAD is a symbolic ref to a branch yet to be born. */
static int head_unborn(rq_refdb *db)
{
	char *target = NULL;
	rq_oid id;
	rq_error e;
	int unborn = rq_refdb_read(db, "HEAD", &id, &target, &e) == RQ_REFDB_FOUND && target &&
		     rq_refdb_resolve(db, "HEAD", &id, NULL, &e) == RQ_REFDB_MISSING;

	free(target);
	return unborn;
}

/* One ref of a set (name: as the set names it, prefix bytes into full):
 * pushed when it leads to a commit; a broken ref or one whose object is
 * missing is git's "bad object <name>" (setup_revisions dies on it), a
 * dangling symbolic ref or another object is left out. */
static int push_member(git_repository *repo, rq_revs *revs, size_t *cap, const refsel *sel,
		       const char *full, size_t prefix, const ref_target *t, rq_error *err)
{
	rq_odb_read *rd = rq_commits_reader(revs->commits);
	rq_oid c;

	if (excluded(sel, full, prefix) || (!t->broken && rq_oid_is_zero(&t->id)))
		return 0;
	/* (whether the object is there is asked only when the peel failed) */
	if (t->broken || rq_cobj_peel(rq_commits_cache(revs->commits), &t->id, GIT_OBJECT_COMMIT,
				      full, &c, NULL) != 0)
		return t->broken || (rd && !rq_odb_read_exists(rd, &t->id))
			   ? rq_error_set(err, RQ_E_BAD_REVISION, "bad object %s", full + prefix)
			   : 0;
	if (push_rev(repo, NULL, revs, cap, full, strlen(full), sel->negate, &c, err) < 0)
		return -1;
	if (!(revs->v[revs->n - 1].fullref = strdup(full)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* Push every ref of a set (prefix: what --exclude patterns and git's
 * names of the set's refs are relative to) that points at a commit, as a
 * ref to update. */
static int push_set(git_repository *repo, rq_revs *revs, size_t *cap, refsel *sel,
		    const char *pattern, size_t prefix, int with_head, rq_error *err)
{
	char **names = NULL;
	ref_target *ids = NULL;
	size_t n = 0;
	rq_refdb *db = NULL;
	int rc = rq_refdb_open(&db, repo, err) < 0
		     ? -1
		     : matching_refs(db, pattern, &names, &ids, &n, err);

	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = push_member(repo, revs, cap, sel, names[i], prefix, &ids[i], err);
		free(names[i]);
	}
	free(names);
	free(ids);
	if (rc == 0 && with_head && !head_unborn(db))
		rc = push_rev(repo, NULL, revs, cap, "HEAD", 4, sel->negate, NULL, err);
	for (size_t i = 0; i < sel->nexclude; i++)
		free(sel->exclude[i]);
	free(sel->exclude);
	sel->exclude = NULL;
	sel->nexclude = 0;
	rq_refdb_free(db);
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
			return rq_revname_unknown(err, path);
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

int rq_revs_parse(git_repository *repo, const rq_oid_algo *algo, const char *const *args,
		  size_t nargs, rq_revs *out, rq_error *err)
{
	size_t cap = 0;
	rq_revname_refs refs;
	refsel sel = {NULL, 0, 0};
	int have_refs = nargs >= RQ_REVNAME_REFS_MIN && rq_revname_refs_load(repo, &refs) == 0,
	    rc = 0;

	memset(out, 0, sizeof(*out));
	out->algo = algo ? algo : &rq_oid_sha1;
	rq_revfilter_init(&out->filter);
	if (rq_commits_open(&out->commits, repo, out->algo, err) < 0) {
		if (have_refs)
			rq_revname_refs_free(&refs);
		return -1;
	}
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
		rq_revname_refs_free(&refs);
	if (rc < 0)
		rq_revs_free(out);
	return rc;
}
