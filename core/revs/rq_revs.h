/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revs: revision arguments resolved the way git resolves them.
 *
 * Accepted forms: "A..B", "A...B" (symmetric difference: both sides
 * positive, their merge bases negative), "^A", "B"; each side a full or
 * abbreviated object id, a ref name resolved with git's DWIM rules
 * (X, refs/X, refs/tags/X, refs/heads/X, refs/remotes/X,
 * refs/remotes/X/HEAD), "HEAD"/"@", optionally followed by "~N", "^N" or
 * "^{...}" suffixes. A name that matches two refs is refused as ambiguous.
 */
#ifndef RQ_REVS_H
#define RQ_REVS_H

#include <git2.h>
#include <stddef.h>

#include "rq_commits.h"
#include "rq_error.h"
#include "rq_oid.h"
#include "rq_revfilter.h"

typedef struct rq_rev {
	char *name;    /* the expression for this side, without '^' */
	int negative;  /* excluded ("^A", left of "A..B", a merge base) */
	rq_oid oid;    /* the commit it names */
	char *fullref; /* full ref name when name is exactly one ref, else NULL */
} rq_rev;

typedef struct rq_revs {
	rq_rev *v;
	size_t n;
	const rq_oid_algo *algo; /* the repository's object format */
	size_t npositive;
	size_t nnegative;
	rq_revfilter filter; /* the walk options among the arguments */
	/* the job's commits (rq_commits: made by rq_revs_parse, read by the
	 * walk and the replay, freed by rq_revs_free) */
	rq_commits *commits;
} rq_revs;

/*
 * Parse and resolve every argument; on failure *out is left empty. An
 * argument starting with '-' is an option: a ref set (--all,
 * --branches[=<pat>], --tags[=<pat>], --remotes[=<pat>], --glob=<pat>,
 * each after its --exclude=<pat>s; refs sorted by name, as git lists them,
 * each a ref to update), --not (inverts the sense of what follows), or a
 * walk option of rq_revfilter. Anything else is RQ_E_USAGE.
 */
int rq_revs_parse(git_repository *repo, const rq_oid_algo *algo, const char *const *args,
		  size_t nargs, rq_revs *out, rq_error *err);
void rq_revs_free(rq_revs *revs);

/* 1 if a revision argument is an option (for rq_revs_parse to take). */
int rq_revs_is_option(const char *arg);

/* Whether arg is an option rq_revs_parse takes, with a valid value
 * (checked without a repository: for a job's validation). None of them
 * reads a file or standard input, or writes anything. A pattern (--grep,
 * ...) is checked by rq_pattern_bounded in syntax (0: basic, 'E', 'F':
 * what rq_revs_syntax_option made of all the job's arguments), never
 * compiled. 0, or -1 with err saying why not. */
int rq_revs_option_check(const char *arg, int syntax, rq_error *err);

/* The patterns' syntax after arg, syntax before it: -E and
 * --extended-regexp make it 'E', -F and --fixed-strings 'F',
 * --basic-regexp 0 (the last one counts for every pattern, as in git). */
int rq_revs_syntax_option(const char *arg, int syntax);

/*
 * DWIM a name to a ref. Returns the number of refs that match (0, 1, 2...)
 * or -1 on error; when at least one matches, *fullname (may be NULL: not
 * wanted) receives the first match's full name, with symbolic refs
 * followed (HEAD -> refs/heads/main), and *oid its target.
 */
int rq_revs_dwim_ref(git_repository *repo, const char *name, char **fullname, rq_oid *oid,
		     rq_error *err);

/* Resolve a commit-ish expression (no ranges) to a commit id, reading
 * through commits (the job's; NULL: commits opened for this one call, for
 * a caller that has none yet) in the object format algo. */
int rq_revs_resolve_commit(git_repository *repo, rq_commits *commits, const rq_oid_algo *algo,
			   const char *expr, rq_oid *out, rq_error *err);

/* 1 if s is a valid, fully qualified ref name ("refs/..." or "HEAD"), by
 * git's rules (rq_refname) and libgit2's. */
int rq_revs_refname_valid(const char *s);

#endif
