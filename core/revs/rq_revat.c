/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's object-name.c (the "@{...}" forms, ":/text") */
/*
 * rq_revat: revision names read from reflogs, the branch configuration
 * and commit messages (see rq_revat.h).
 */
#include "rq_revat.h"
#include "rq_approxidate.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

int rq_revat_prior(git_repository *repo, long nth, char **name, rq_error *err)
{
	static const char from[] = "checkout: moving from ";
	git_reflog *log = NULL;
	int rc = 1;

	*name = NULL;
	if (git_reflog_read(&log, repo, "HEAD") < 0)
		return 1;
	for (size_t i = 0; rc == 1 && i < git_reflog_entrycount(log); i++) {
		const char *msg = git_reflog_entry_message(git_reflog_entry_byindex(log, i)), *to;
		if (!msg || strncmp(msg, from, sizeof(from) - 1) ||
		    !(to = strstr(msg + sizeof(from) - 1, " to ")) || --nth > 0)
			continue;
		msg += sizeof(from) - 1;
		*name = strndup(msg, (size_t)(to - msg));
		rc = *name ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	git_reflog_free(log);
	return rc;
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
	rc = rq_revname_dwim(repo, known, name, ref, NULL, err);
	free(name);
	return rc < 0 ? -1 : rc == 0;
}

/* The entry of ref's reflog p names ("@{N}", "@{<date>}") into *out: 0;
 * 1 none; -1 error. */
static int reflog_entry(git_repository *repo, const char *ref, const rq_revparse *p, git_oid *out,
			rq_error *err)
{
	const git_reflog_entry *e = NULL;
	git_reflog *log = NULL;
	int64_t when = 0;
	size_t n;

	if (p->at == RQ_REVPARSE_AT_REFLOG && p->at_n == 0)
		return git_reference_name_to_id(out, repo, ref) < 0;
	if (p->at == RQ_REVPARSE_AT_DATE) {
		char *text = strndup(p->at_text, p->at_len);
		int bad = !text || rq_approxidate(text, rq_approxidate_now(), &when) < 0;
		free(text);
		if (bad)
			return text ? 1 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (git_reflog_read(&log, repo, ref) < 0)
		return 1;
	n = git_reflog_entrycount(log);
	if (p->at == RQ_REVPARSE_AT_REFLOG)
		e = (size_t)p->at_n < n ? git_reflog_entry_byindex(log, (size_t)p->at_n) : NULL;
	/* by date: the newest entry made by then, else the oldest */
	for (size_t i = 0; p->at == RQ_REVPARSE_AT_DATE && i < n; i++) {
		e = git_reflog_entry_byindex(log, i);
		if (git_reflog_entry_committer(e)->when.time <= when)
			break;
	}
	if (e)
		git_oid_cpy(out, git_reflog_entry_id_new(e));
	git_reflog_free(log);
	return !e;
}

/* The upstream of branch (a full name) into *out: 0; 1 none; -1 error. */
static int upstream(git_repository *repo, const char *branch, git_oid *out, char **fullname,
		    int *named, rq_error *err)
{
	git_buf up = {0};
	int rc;

	if (strncmp(branch, "refs/heads/", 11) || git_branch_upstream_name(&up, repo, branch) < 0)
		return 1;
	rc = git_reference_name_to_id(out, repo, up.ptr) < 0;
	if (rc == 0 && fullname) {
		if (!(*fullname = strdup(up.ptr)))
			rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
		else
			*named = 1;
	}
	git_buf_dispose(&up);
	return rc;
}

int rq_revat_resolve(git_repository *repo, const rq_revname_refs *known, const char *expr,
		     const rq_revparse *p, git_oid *out, char **fullname, int *named, rq_error *err)
{
	char *ref = NULL;
	int rc;

	if (p->search_all)
		rc = rq_revat_search(repo, NULL, p->base, p->base_len, out);
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

/* One ref's commit into the walk; a ref that names no commit (a dangling
 * symbolic ref, a tag of a tree) adds nothing, as in git. */
static int push_ref(git_revwalk *walk, git_repository *repo, const char *name)
{
	git_object *o = NULL, *c = NULL;
	git_oid id;
	int rc = 0;

	if (git_reference_name_to_id(&id, repo, name) == 0 &&
	    git_object_lookup(&o, repo, &id, GIT_OBJECT_ANY) == 0 &&
	    git_object_peel(&c, o, GIT_OBJECT_COMMIT) == 0)
		rc = git_revwalk_push(walk, git_object_id(c));
	git_object_free(c);
	git_object_free(o);
	git_error_clear();
	return rc;
}

/* Every ref's commit and HEAD's, for ":/text". */
static int push_all(git_revwalk *walk, git_repository *repo)
{
	git_reference_iterator *it = NULL;
	const char *name;
	int rc = 0, next;

	if (git_reference_iterator_new(&it, repo) < 0)
		return -1;
	while (rc == 0 && (next = git_reference_next_name(&name, it)) == 0)
		rc = push_ref(walk, repo, name);
	git_reference_iterator_free(it);
	if (rc == 0 && next != GIT_ITEROVER)
		return -1;
	return rc < 0 ? -1 : push_ref(walk, repo, "HEAD");
}

int rq_revat_search(git_repository *repo, const git_oid *from, const char *text, size_t len,
		    git_oid *out)
{
	git_revwalk *walk = NULL;
	char *pattern = strndup(text, len);
	regex_t re;
	git_oid id;
	int rc = 1;

	if (!pattern)
		return -1;
	if (!len || regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB)) {
		free(pattern);
		return 1;
	}
	free(pattern);
	if (git_revwalk_new(&walk, repo) < 0)
		rc = -1;
	else {
		git_revwalk_sorting(walk, GIT_SORT_TIME);
		if ((from ? git_revwalk_push(walk, from) : push_all(walk, repo)) < 0)
			rc = -1;
	}
	while (rc == 1 && git_revwalk_next(&id, walk) == 0) {
		git_commit *c = NULL;
		if (git_commit_lookup(&c, repo, &id) < 0) {
			rc = -1;
			break;
		}
		if (!regexec(&re, git_commit_message(c), 0, NULL, 0)) {
			git_oid_cpy(out, &id);
			rc = 0;
		}
		git_commit_free(c);
	}
	git_revwalk_free(walk);
	regfree(&re);
	return rc;
}
