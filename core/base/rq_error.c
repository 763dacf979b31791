/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_error: error codes, their stable names, and message formatting.
 */
#include "rq_error.h"

#include <git2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const code_names[RQ_E_CORE_END] = {
    [RQ_OK] = "ok",
    [RQ_E_USAGE] = "usage",
    [RQ_E_BAD_REPO] = "bad_repo",
    [RQ_E_BAD_REVISION] = "bad_revision",
    [RQ_E_AMBIGUOUS] = "ambiguous_ref",
    [RQ_E_NOT_A_REF] = "not_a_ref",
    [RQ_E_BAD_REF] = "bad_ref",
    [RQ_E_NOTHING] = "nothing_to_replay",
    [RQ_E_MERGE_COMMIT] = "merge_commit",
    [RQ_E_EMPTY_COMMIT] = "empty_commit",
    [RQ_E_TOO_MANY_COMMITS] = "too_many_commits",
    [RQ_E_IDENT] = "no_identity",
    [RQ_E_BAD_DATE] = "bad_date",
    [RQ_E_REF_MOVED] = "ref_moved",
    [RQ_E_REF_LOCKED] = "ref_locked",
    [RQ_E_CORRUPT_OBJECT] = "corrupt_object",
    [RQ_E_IO] = "io",
    [RQ_E_GIT] = "git",
    [RQ_E_NOMEM] = "out_of_memory",
    [RQ_E_CRASHED] = "crashed",
    [RQ_E_INTERRUPTED] = "interrupted",
    [RQ_E_INTERNAL] = "internal",
    [RQ_E_UNSUPPORTED_REPO] = "unsupported_repository",
    [RQ_E_SIGN_KEY] = "sign_key",
    [RQ_E_SIGN_FAILED] = "sign_failed",
    [RQ_E_TREE_TOO_DEEP] = "tree_too_deep",
};

void rq_error_clear(rq_error *err)
{
	if (!err)
		return;
	err->code = RQ_OK;
	err->msg[0] = '\0';
}

int rq_error_set(rq_error *err, rq_code code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int rq_error_git(rq_error *err, const char *what)
{
	const git_error *e = git_error_last();

	if (e && e->klass == GIT_ERROR_NOMEMORY)
		return rq_error_set(err, RQ_E_NOMEM, "%s: out of memory", what);
	/* a damaged object says which one it is; what was being done adds nothing */
	if (rq_error_git_corrupt(err) < 0)
		return -1;
	if (e && e->klass == RQ_ERROR_GIT_TOO_DEEP)
		return rq_error_set(err, RQ_E_TREE_TOO_DEEP, "%s", e->message);
	return rq_error_set(err, RQ_E_GIT, "%s: %s", what,
			    e && e->message ? e->message : "unknown error");
}

int rq_error_git_corrupt(rq_error *err)
{
	const git_error *e = git_error_last();

	if (e && (e->klass == RQ_ERROR_GIT_CORRUPT || e->klass == GIT_ERROR_ZLIB))
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "%s", e->message);
	return 0;
}

const char *rq_error_code_name(rq_code code)
{
	if (code < 0 || code >= RQ_E_CORE_END || !code_names[code])
		return "internal";
	return code_names[code];
}

void rq_error_to_git(const rq_error *err)
{
	int klass = GIT_ERROR_INVALID;

	if (err->code == RQ_E_NOMEM) {
		git_error_set_oom();
		return;
	}
	if (err->code == RQ_E_CORRUPT_OBJECT)
		klass = RQ_ERROR_GIT_CORRUPT;
	else if (err->code == RQ_E_TREE_TOO_DEEP)
		klass = RQ_ERROR_GIT_TOO_DEEP;
	git_error_set_str(klass, err->msg);
}
