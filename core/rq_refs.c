/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refs: apply a replay's ref updates in one checked transaction, or
 * format them for `git update-ref --stdin`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_refs.h"

/*
 * Every locked ref must get a target before the commit: libgit2 cannot
 * commit a lock without one.
 */
int rq_refs_apply(git_repository *repo, const rq_replay_result *result, const rq_ident *committer,
		  rq_error *err)
{
	git_transaction *tx = NULL;
	git_signature *sig = NULL;
	int rc = -1;

	if (!result->nupdates)
		return 0;
	if (git_signature_new(&sig, committer->name, committer->email, (git_time_t)committer->time,
			      committer->tz) < 0)
		return rq_error_git(err, "invalid committer identity");
	if (git_transaction_new(&tx, repo) < 0) {
		rq_error_git(err, "cannot start a ref transaction");
		goto out;
	}
	for (size_t i = 0; i < result->nupdates; i++) {
		const rq_ref_update *u = &result->updates[i];
		git_oid cur;
		int r;
		if (git_transaction_lock_ref(tx, u->ref) < 0) {
			const git_error *e = git_error_last();
			rq_error_set(err, RQ_E_REF_MOVED, "cannot lock ref '%s': %s", u->ref,
				     e && e->message ? e->message : "locked by another process");
			goto out;
		}
		r = git_reference_name_to_id(&cur, repo, u->ref);
		if (r == GIT_ENOTFOUND) {
			memset(&cur, 0, sizeof(cur));
		} else if (r < 0) {
			rq_error_git(err, "cannot read ref");
			goto out;
		}
		/* a ref already at its new value: a retried job applied before */
		if (!git_oid_equal(&cur, &u->old_id) && !git_oid_equal(&cur, &u->new_id)) {
			char have[GIT_OID_HEXSZ + 1], want[GIT_OID_HEXSZ + 1];
			git_oid_tostr(have, sizeof(have), &cur);
			git_oid_tostr(want, sizeof(want), &u->old_id);
			rq_error_set(err, RQ_E_REF_MOVED,
				     "cannot lock ref '%s': is at %s but expected %s", u->ref, have,
				     want);
			goto out;
		}
		if (git_transaction_set_target(tx, u->ref, &u->new_id, sig, result->reflog_msg) <
		    0) {
			rq_error_git(err, "cannot update ref");
			goto out;
		}
	}
	if (git_transaction_commit(tx) < 0) {
		rq_error_git(err, "cannot update refs");
		goto out;
	}
	rc = 0;
out:
	git_transaction_free(tx); /* releases every lock not committed */
	git_signature_free(sig);
	return rc;
}

char *rq_refs_format_updates(const rq_replay_result *result)
{
	size_t line = 8 + 2 * (GIT_OID_HEXSZ + 1) + 1;
	size_t size = 1;
	char *out, *p;

	for (size_t i = 0; i < result->nupdates; i++)
		size += line + strlen(result->updates[i].ref);
	if (!(out = malloc(size)))
		return NULL;
	p = out;
	*p = '\0';
	for (size_t i = 0; i < result->nupdates; i++) {
		char n[GIT_OID_HEXSZ + 1], o[GIT_OID_HEXSZ + 1];
		git_oid_tostr(n, sizeof(n), &result->updates[i].new_id);
		git_oid_tostr(o, sizeof(o), &result->updates[i].old_id);
		p += sprintf(p, "update %s %s %s\n", result->updates[i].ref, n, o);
	}
	return out;
}
