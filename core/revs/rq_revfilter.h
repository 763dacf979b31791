/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revfilter: the revision-walk options a replay takes besides its
 * revisions, with git rev-list's meaning.
 *
 * Upstream git replay hands its arguments to git's revision machinery and
 * then forces reverse, topological order and no history simplification.
 * The options a replay's user would use are taken here: which commits
 * (--first-parent, --ancestry-path[=<commit>], --no-merges, --merges,
 * --author, --committer, --grep, --invert-grep, --all-match, -i, -E, -F,
 * --since/--after, --until/--before: git's date formats and its
 * approximate dates, core/base/rq_approxidate), how many (--max-count/-n/-<n>, --skip), and the
 * orders git accepts and then overrides (--topo-order silently,
 * --date-order, --author-date-order and --reverse with git's warning), and
 * pathspecs after "--" (a path, a directory prefix, or a glob whose '*'
 * crosses '/', as git's default pathspec magic).
 * The ref sets (--all, --branches, ...) are rq_revs' part. Any other
 * option is refused with RQ_E_USAGE naming it.
 *
 * As in rev-list, the filters apply to the selected commits in output
 * order (newest first): --skip, then --max-count, then the reverse that
 * makes it the replay order. A commit left out is simply not replayed;
 * one whose parent was left out is picked onto the new base.
 */
#ifndef RQ_REVFILTER_H
#define RQ_REVFILTER_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_cobj.h"
#include "rq_error.h"

typedef struct rq_revfilter {
	long max_count; /* -1: no limit */
	long skip;
	int merges; /* 0: all; 1: only merges (--merges); 2: none (--no-merges) */
	int first_parent;
	int ancestry_path; /* 1 with the negative revisions, 2 with given commits */
	char **ancestry;   /* the given commits (names; rq_revs resolves them) */
	size_t nancestry;
	char **author, **committer, **grep; /* patterns (POSIX basic regexps, as git) */
	size_t nauthor, ncommitter, ngrep;
	int icase, invert_grep, all_match;
	int syntax; /* 0: basic regexps (git's default), 'E' extended, 'F' fixed strings */
	int64_t since, until; /* committer dates; 0: not given */
	/* approximate dates ("2.weeks.ago", rq_approxidate) are read against
	 * now; with absolute_dates they are refused (a job retried later must
	 * select the same commits) */
	int absolute_dates;
	int warn_sort, warn_reverse;
	char **paths; /* pathspecs (after "--"): a commit that changes none is left out */
	size_t npaths;
	void *compiled; /* the compiled patterns, once rq_revfilter_ready() ran */
} rq_revfilter;

void rq_revfilter_init(rq_revfilter *f);
void rq_revfilter_free(rq_revfilter *f);

/*
 * Take arg if it is one of the options above: 1 (taken), 0 (not a walk
 * option), or -1 with RQ_E_USAGE (a value that is not valid).
 */
int rq_revfilter_option(rq_revfilter *f, const char *arg, rq_error *err);

/* 1 if arg names an option that takes a value and arg has none ("-n",
 * "--author"): a command line joins it with the next argument. */
int rq_revfilter_wants_value(const char *arg);

/* 1 if arg is a rev-list option git takes that replayq does not (history
 * simplification, symmetric-difference marks, reflog walks, stdin...). */
int rq_revfilter_git_only(const char *arg);

/* Compile the patterns (after the last option). 0 or -1 (RQ_E_USAGE: a
 * pattern that is no valid regular expression). */
int rq_revfilter_ready(rq_revfilter *f, rq_error *err);

/* 1 if any filter needs the commits' contents. */
int rq_revfilter_active(const rq_revfilter *f);

/* Add a pathspec (an argument after "--"). 1, or -1 out of memory. */
int rq_revfilter_path(rq_revfilter *f, const char *path, rq_error *err);

/* 1 if the commit passes --author, --committer, --grep, dates, merges, and
 * changes a path a pathspec names (git's TREESAME rule without history
 * simplification: compared with its first parent, a root with the empty
 * tree); -1 when its trees cannot be read. Commits come from cache, trees
 * are read through rd (the job's reader, rq_commits_reader), of format
 * algo. */
int rq_revfilter_match(const rq_revfilter *f, git_repository *repo, rq_cobj_cache *cache,
		       rq_odb_read *rd, const rq_oid_algo *algo, const rq_cobj_commit *c);

#endif
