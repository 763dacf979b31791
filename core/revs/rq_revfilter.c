/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's revision.c for the meaning of the rev-list options it takes */
/*
 * rq_revfilter: rev-list's commit filters and counts for a replay.
 */
#include "rq_revfilter.h"
#include "rq_approxidate.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_ident.h"
#include "rq_pathfilter.h"
#include "rq_pattern.h"

typedef struct compiled {
	regex_t *author, *committer, *grep;
	rq_pathfilter *paths; /* NULL without pathspecs */
} compiled;

void rq_revfilter_init(rq_revfilter *f)
{
	memset(f, 0, sizeof(*f));
	f->max_count = -1;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void free_regexps(regex_t *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		regfree(&r[i]);
	free(r);
}

void rq_revfilter_free(rq_revfilter *f)
{
	compiled *c = f->compiled;

	if (c) {
		free_regexps(c->author, f->nauthor);
		free_regexps(c->committer, f->ncommitter);
		free_regexps(c->grep, f->ngrep);
		rq_pathfilter_free(c->paths);
		free(c);
	}
	free_list(f->author, f->nauthor);
	free_list(f->committer, f->ncommitter);
	free_list(f->grep, f->ngrep);
	free_list(f->ancestry, f->nancestry);
	free_list(f->paths, f->npaths);
	rq_revfilter_init(f);
}

/* Append a copy of s to the list v of n strings: 1, or -1 out of memory. */
static int list_add(char ***v, size_t *n, const char *s, rq_error *err)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	(*n)++;
	return 1;
}

static int number(const char *s, const char *opt, long *out, rq_error *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0)
		return rq_error_set(err, RQ_E_USAGE, "'%s': not a non-negative integer", opt);
	*out = v;
	return 1;
}

/* A date git would take: its own formats (an epoch, "@<epoch>", ISO 8601,
 * RFC 2822), else an approximate one read as git's approxidate reads it.
 * A string with no word git's approxidate knows is refused (git would
 * take it as "now"). */
static int date_value(const rq_revfilter *f, const char *s, const char *opt, int64_t *out,
		      rq_error *err)
{
	int tz;
	rq_error e;
	char buf[64];
	const char *given = s;

	if (*s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 20) {
		snprintf(buf, sizeof(buf), "@%s +0000", s);
		s = buf;
	}
	if (rq_ident_parse_date(s, out, &tz, &e) == 0) {
		if (!*out)
			*out = 1; /* 0 means "not given" */
		return 1;
	}
	if (f->absolute_dates)
		return rq_error_set(err, RQ_E_USAGE,
				    "option '%s': '%.64s' is not an absolute date (an epoch, ISO "
				    "8601 or RFC 2822 date)",
				    opt, given);
	if (rq_approxidate(given, rq_approxidate_now(), out) < 0)
		return rq_error_set(err, RQ_E_USAGE, "option '%s': cannot read the date '%.64s'",
				    opt, given);
	if (!*out)
		*out = 1;
	return 1;
}

/* "--name=value": the value, or NULL. */
static const char *value_of(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && arg[n] == '=' ? arg + n + 1 : NULL;
}

static const char *const valued[] = {"--author", "--committer", "--grep",   "--since",
				     "--after",	 "--until",	"--before", "--max-count",
				     "--skip",	 "-n",		NULL};

int rq_revfilter_wants_value(const char *arg)
{
	for (size_t i = 0; valued[i]; i++)
		if (!strcmp(arg, valued[i]))
			return 1;
	return 0;
}

/* Options without a value. 1, or 0 (not one of them). */
static int take_flag(rq_revfilter *f, const char *a)
{
	if (!strcmp(a, "--first-parent"))
		f->first_parent = 1;
	else if (!strcmp(a, "--no-merges") || !strcmp(a, "--max-parents=1"))
		f->merges = 2;
	else if (!strcmp(a, "--merges") || !strcmp(a, "--min-parents=2"))
		f->merges = 1;
	else if (!strcmp(a, "--ancestry-path"))
		f->ancestry_path |= 1;
	else if (!strcmp(a, "-i") || !strcmp(a, "--regexp-ignore-case"))
		f->icase = 1;
	else if (!strcmp(a, "--invert-grep"))
		f->invert_grep = 1;
	else if (!strcmp(a, "--all-match"))
		f->all_match = 1;
	else if (!strcmp(a, "-E") || !strcmp(a, "--extended-regexp"))
		f->syntax = 'E';
	else if (!strcmp(a, "-F") || !strcmp(a, "--fixed-strings"))
		f->syntax = 'F';
	else if (!strcmp(a, "--basic-regexp"))
		f->syntax = 0;
	else if (!strcmp(a, "--topo-order"))
		; /* what a replay uses anyway */
	else if (!strcmp(a, "--date-order") || !strcmp(a, "--author-date-order"))
		f->warn_sort = 1;
	else if (!strcmp(a, "--reverse"))
		f->warn_reverse = 1;
	else
		return 0;
	return 1;
}

int rq_revfilter_option(rq_revfilter *f, const char *a, rq_error *err)
{
	const char *v;

	if (take_flag(f, a))
		return 1;
	if ((v = value_of(a, "--author")))
		return list_add(&f->author, &f->nauthor, v, err);
	if ((v = value_of(a, "--committer")))
		return list_add(&f->committer, &f->ncommitter, v, err);
	if ((v = value_of(a, "--grep")))
		return list_add(&f->grep, &f->ngrep, v, err);
	if ((v = value_of(a, "--ancestry-path"))) {
		f->ancestry_path |= 2;
		return list_add(&f->ancestry, &f->nancestry, v, err);
	}
	if ((v = value_of(a, "--since")) || (v = value_of(a, "--after")))
		return date_value(f, v, "--since", &f->since, err);
	if ((v = value_of(a, "--until")) || (v = value_of(a, "--before")))
		return date_value(f, v, "--until", &f->until, err);
	if ((v = value_of(a, "--max-count")))
		return number(v, "--max-count", &f->max_count, err);
	if ((v = value_of(a, "--skip")))
		return number(v, "--skip", &f->skip, err);
	if (!strncmp(a, "-n", 2) && a[2])
		return number(a[2] == '=' ? a + 3 : a + 2, "-n", &f->max_count, err);
	if (a[0] == '-' && isdigit((unsigned char)a[1]))
		return number(a + 1, a, &f->max_count, err);
	return 0;
}

/* A fixed string as a basic regular expression. */
static char *fixed(const char *p)
{
	char *q = malloc(strlen(p) * 2 + 1), *o = q;

	if (!q)
		return NULL;
	for (; *p; p++) {
		if (strchr(".[]*^$\\", *p))
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	return q;
}

static int cflags(const rq_revfilter *f)
{
	return REG_NOSUB | REG_NEWLINE | (f->icase ? REG_ICASE : 0) |
	       (f->syntax == 'E' ? REG_EXTENDED : 0);
}

/* Every pattern tried first in a process of its own, under a CPU-time
 * limit (rq_pattern_probe): one that takes too long or crashes glibc's
 * regex engine there is refused before it is compiled here. Fixed
 * strings need no trying. */
static int probe(const rq_revfilter *f, rq_error *err)
{
	size_t n = f->nauthor + f->ncommitter + f->ngrep, k = 0;
	char **all;
	int rc;

	if (!n || f->syntax == 'F')
		return 0;
	if (!(all = malloc(n * sizeof(*all))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < f->nauthor; i++)
		all[k++] = f->author[i];
	for (size_t i = 0; i < f->ncommitter; i++)
		all[k++] = f->committer[i];
	for (size_t i = 0; i < f->ngrep; i++)
		all[k++] = f->grep[i];
	rc = rq_pattern_probe(all, n, cflags(f), err);
	free(all);
	return rc;
}

static int compile(char **pat, size_t n, const rq_revfilter *f, regex_t **out, rq_error *err)
{
	int flags = cflags(f);

	*out = n ? calloc(n, sizeof(**out)) : NULL;
	if (n && !*out)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char *lit = f->syntax == 'F' ? fixed(pat[i]) : NULL;
		int oom = f->syntax == 'F' && !lit;
		int bad = oom || regcomp(&(*out)[i], lit ? lit : pat[i], flags) != 0;
		free(lit);
		if (bad) {
			for (size_t k = 0; k < i; k++)
				regfree(&(*out)[k]);
			free(*out);
			*out = NULL;
			if (oom)
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			return rq_error_set(err, RQ_E_USAGE, "invalid regular expression '%.64s'",
					    pat[i]);
		}
	}
	return 0;
}

int rq_revfilter_ready(rq_revfilter *f, rq_error *err)
{
	compiled *c;

	if (f->compiled)
		return 0;
	if (probe(f, err) < 0)
		return -1;
	if (!(c = calloc(1, sizeof(*c))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (compile(f->author, f->nauthor, f, &c->author, err) < 0 ||
	    compile(f->committer, f->ncommitter, f, &c->committer, err) < 0 ||
	    compile(f->grep, f->ngrep, f, &c->grep, err) < 0 ||
	    (f->npaths && rq_pathfilter_new(&c->paths, f->paths, f->npaths, err) < 0)) {
		free_regexps(c->author, c->author ? f->nauthor : 0);
		free_regexps(c->committer, c->committer ? f->ncommitter : 0);
		free_regexps(c->grep, c->grep ? f->ngrep : 0);
		free(c);
		return -1;
	}
	f->compiled = c;
	return 0;
}

int rq_revfilter_active(const rq_revfilter *f)
{
	return f->nauthor || f->ncommitter || f->ngrep || f->since || f->until || f->merges ||
	       f->npaths;
}

int rq_revfilter_path(rq_revfilter *f, const char *path, rq_error *err)
{
	return list_add(&f->paths, &f->npaths, path, err);
}

/*
 * Does the commit change a path the pathspecs name (compared with its first
 * parent, a root with the empty tree)? 1, 0, or -1 with libgit2's error set
 * to what went wrong (the walk reports libgit2's errors: a tree too deep or
 * damaged keeps its code there).
 */
static int touches_paths(const compiled *cp, git_repository *repo, rq_cobj_cache *cache,
			 rq_odb_read *rd, const rq_oid_algo *algo, const rq_cobj_commit *c)
{
	const rq_cobj_commit *parent = NULL;
	rq_error err;
	int rc;

	rq_error_clear(&err);
	if (c->nparents && rq_cobj_get(cache, &c->parents[0], &parent, &err) < 0) {
		rq_error_to_git(&err);
		return -1;
	}
	rc = rq_pathfilter_changes(cp->paths, repo, rd, algo, parent ? &parent->tree : NULL,
				   &c->tree, &err);
	if (rc < 0)
		rq_error_to_git(&err);
	return rc;
}

static int any(const regex_t *r, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (regexec(&r[i], s, 0, NULL, 0) == 0)
			return 1;
	return 0;
}

static int every(const regex_t *r, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (regexec(&r[i], s, 0, NULL, 0) != 0)
			return 0;
	return 1;
}

int rq_revfilter_git_only(const char *a)
{
	static const char *const opts[] = {"--simplify-by-decoration",
					   "--full-history",
					   "--dense",
					   "--sparse",
					   "--simplify-merges",
					   "--show-pulls",
					   "--cherry-pick",
					   "--cherry-mark",
					   "--cherry",
					   "--left-only",
					   "--right-only",
					   "--left-right",
					   "--boundary",
					   "--bisect",
					   "--walk-reflogs",
					   "-g",
					   "--reflog",
					   "--stdin",
					   "--ignore-missing",
					   "--no-walk",
					   "--do-walk",
					   "--in-commit-order",
					   "--remove-empty",
					   "--single-worktree",
					   "--alternate-refs",
					   "--indexed-objects",
					   "--exclude-hidden",
					   "--perl-regexp",
					   "-P",
					   "--min-age",
					   "--max-age",
					   "--min-parents",
					   "--max-parents",
					   "--no-min-parents",
					   "--no-max-parents",
					   "--exclude-first-parent-only",
					   "--unpacked",
					   "--filter",
					   NULL};
	size_t n = strcspn(a, "=");

	for (size_t i = 0; opts[i]; i++)
		if (strlen(opts[i]) == n && !strncmp(a, opts[i], n))
			return 1;
	return 0;
}

/* git matches --author/--committer against "Name <email>" (the ident
 * line up to its last '>', as libgit2's signature gave it). */
static int who_matches(const regex_t *r, size_t n, const char *who, size_t len)
{
	char buf[1024];
	size_t end = len;

	if (!n)
		return 1;
	while (end && who[end - 1] != '>')
		end--;
	snprintf(buf, sizeof(buf), "%.*s", (int)(end ? end : len), who ? who : "");
	return any(r, n, buf);
}

int rq_revfilter_match(const rq_revfilter *f, git_repository *repo, rq_cobj_cache *cache,
		       rq_odb_read *rd, const rq_oid_algo *algo, const rq_cobj_commit *c)
{
	const compiled *cp = f->compiled;
	int64_t t = c->date > INT64_MAX ? INT64_MAX : (int64_t)c->date;
	size_t np = c->nparents;

	if ((f->merges == 1 && np < 2) || (f->merges == 2 && np > 1))
		return 0;
	if ((f->since && t < f->since) || (f->until && t > f->until))
		return 0;
	if (!cp)
		return f->npaths ? -1 : 1; /* rq_revfilter_ready() did not run */
	if (!who_matches(cp->author, f->nauthor, c->author, c->author_len) ||
	    !who_matches(cp->committer, f->ncommitter, c->committer, c->committer_len))
		return 0;
	if (f->ngrep) {
		const char *msg = c->message;
		while (*msg == '\n')
			msg++; /* as libgit2's git_commit_message */
		int m =
		    f->all_match ? every(cp->grep, f->ngrep, msg) : any(cp->grep, f->ngrep, msg);
		if (m == f->invert_grep)
			return 0;
	}
	return f->npaths ? touches_paths(cp, repo, cache, rd, algo, c) : 1;
}
