/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revat: the revision names that read more than one ref, for
 * rq_revname: the "@{...}" forms (a reflog entry by number or date, the
 * upstream branch, the branch checked out before) and the commit-message
 * searches (":/text", "X^{/text}"), as git's object-name.c takes them
 * (rq_revparse reads the syntax). Refs and reflogs are read through
 * core/refs (rq_refdb), commits through the job's rq_commits, at the
 * repository's width.
 */
#ifndef RQ_REVAT_H
#define RQ_REVAT_H

#include <git2.h>

#include "rq_commits.h"
#include "rq_error.h"
#include "rq_revname.h"
#include "rq_revparse.h"

/*
 * p's base (p->search_all or an "@{...}" other than "@{-N}") into *out
 * (the object it names, not yet peeled): 0, or -1 with err set (git's
 * "unknown revision" when it names nothing). *fullname (may be NULL):
 * the upstream branch of "@{u}"/"@{upstream}" (a ref to update, as in
 * git), and then *named set.
 */
int rq_revat_resolve(git_repository *repo, rq_commits *commits, const rq_revname_refs *known,
		     const char *expr, const rq_revparse *p, rq_oid *out, char **fullname,
		     int *named, rq_error *err);

/* The nth (>= 1) branch (or id) checked out before, from HEAD's reflog
 * ("checkout: moving from <name> to ..."), into *name (to free): 0; 1
 * there is no such entry; -1 out of memory (err set). */
int rq_revat_prior(git_repository *repo, long nth, char **name, rq_error *err);

/*
 * The youngest commit (by committer date, as git walks) reachable from
 * from (NULL: from every ref and HEAD) whose message matches the POSIX
 * extended regular expression text[0..len), into *out: 0; 1 none (or a
 * bad expression); -1 an error reading the history. The commits are read
 * through commits (the job's).
 */
int rq_revat_search(git_repository *repo, rq_commits *commits, const rq_oid *from, const char *text,
		    size_t len, rq_oid *out);

#endif
