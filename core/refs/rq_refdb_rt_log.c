/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refdb_rt_log: the reflogs of rq_refdb_rt, read into libgit2's
 * git_reflog (see rq_refdb_rt_log.h).
 */
#include "rq_refdb_rt_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/refdb_backend.h>

#include "rq_mem.h"

/*
 * libgit2 1.5's git_reflog (src/libgit2/reflog.h) and git_vector
 * (src/util/vector.h): a backend's reflog_read must return one, and
 * libgit2 declares it only privately. Entries go in through the public
 * git_reflog_append; rq_refdb_rt_log_layout_ok checks the layout
 * against a reflog libgit2 made itself (the unit tests run it), and other
 * libgit2 versions are refused.
 */
typedef struct git2_vector {
	size_t alloc;
	void *cmp;
	void **contents;
	size_t length;
	uint32_t flags;
} git2_vector;

typedef struct git2_reflog {
	git_refdb *db;
	char *ref_name;
	git2_vector entries;
} git2_reflog;

static int layout_known(void)
{
	int major = 0, minor = 0, rev = 0;

	git_libgit2_version(&major, &minor, &rev);
	return major == 1 && minor == 5;
}

int rq_refdb_rt_log_layout_ok(git_repository *files_repo, const char *refname)
{
	git_reflog *log;
	git_refdb *db;
	git2_reflog *m;
	int ok;

	if (!layout_known() || git_reflog_read(&log, files_repo, refname) < 0)
		return 0;
	if (git_repository_refdb(&db, files_repo) < 0) {
		git_reflog_free(log);
		return 0;
	}
	m = (git2_reflog *)log;
	ok = m->db == db && m->ref_name && !strcmp(m->ref_name, refname) &&
	     m->entries.length == git_reflog_entrycount(log) && m->entries.length > 0 &&
	     m->entries.contents[m->entries.length - 1] == git_reflog_entry_byindex(log, 0);
	git_refdb_free(db);
	git_reflog_free(log);
	return ok;
}

/* One entry as read, kept until the entries go in oldest first. */
typedef struct entry {
	git_oid old_id, new_id;
	char *name, *email, *msg;
	int64_t time;
	int tz;
} entry;

static git_signature *entry_sig(const entry *e)
{
	int a = e->tz < 0 ? -e->tz : e->tz, minutes = a / 100 * 60 + a % 100;
	git_signature *sig = NULL;
	char buf[600];

	if (e->tz < 0)
		minutes = -minutes;
	if (git_signature_new(&sig, e->name, e->email, e->time, minutes) == 0)
		return sig;
	/* an identity libgit2 would not make (empty, or with <>): as parsed */
	snprintf(buf, sizeof(buf), "%.250s <%.250s> %lld %c%04d", e->name, e->email,
		 (long long)e->time, e->tz < 0 ? '-' : '+', a);
	if (git_signature_from_buffer(&sig, buf) == 0 ||
	    git_signature_new(&sig, "unknown", "unknown", e->time, minutes) == 0)
		return sig;
	return NULL;
}

static int entries_read(rq_rtstack *st, const char *name, entry **out, size_t *n, rq_error *err)
{
	rq_rtstack_iter *it;
	const rq_rtable_log *l;
	size_t cap = 0;
	int r;

	if (rq_rtstack_logs(&it, st, name, err) < 0)
		return -1;
	while ((r = rq_rtstack_next_log(it, &l, err)) == 0) {
		entry *v = rq_mem_grow(*out, &cap, *n + 1, sizeof(*v), 16), *e;
		size_t ml = strlen(l->message);
		if (!v) {
			r = rq_error_set(err, RQ_E_NOMEM, "out of memory");
			break;
		}
		*out = v;
		e = &v[(*n)++];
		memset(e, 0, sizeof(*e));
		if (rq_refdb_rt_to_git(&e->old_id, &l->old_id, rq_rtstack_algo(st), err) < 0 ||
		    rq_refdb_rt_to_git(&e->new_id, &l->new_id, rq_rtstack_algo(st), err) < 0) {
			r = -1;
			break;
		}
		e->time = (int64_t)l->time;
		e->tz = l->tz;
		e->name = strdup(l->name);
		e->email = strdup(l->email);
		e->msg = strndup(l->message, ml && l->message[ml - 1] == '\n' ? ml - 1 : ml);
		if (!e->name || !e->email || !e->msg) {
			r = rq_error_set(err, RQ_E_NOMEM, "out of memory");
			break;
		}
	}
	rq_rtstack_iter_free(it);
	return r < 0 ? -1 : 0;
}

/* The entries, oldest first, into log: each with its own old id. */
static int entries_append(git_reflog *log, const entry *v, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		git_signature *sig = entry_sig(&v[i]);
		int r = sig ? git_reflog_append(log, &v[i].new_id, sig, v[i].msg) : -1;
		git_signature_free(sig);
		if (r < 0)
			return -1;
		git_oid_cpy((git_oid *)git_reflog_entry_id_old(git_reflog_entry_byindex(log, 0)),
			    &v[i].old_id);
	}
	return 0;
}

int rq_refdb_rt_log_read(git_reflog **out, git_refdb_backend *_b, const char *refname)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	const char *name = refname;
	int k = rq_refdb_rt_which(b, &name), rc = -1;
	git2_reflog *log;
	entry *v = NULL;
	size_t n = 0;
	rq_rtstack *st;
	rq_error err;

	*out = NULL;
	if (!layout_known())
		return rq_refdb_rt_fail_str(
		    -1, "reading the reflogs of a reftable repository needs libgit2 1.5");
	if (!(log = calloc(1, sizeof(*log))) || !(log->ref_name = strdup(refname))) {
		free(log);
		return rq_refdb_rt_fail_str(-1, "out of memory");
	}
	if (rq_refdb_rt_stack(b, k, &st, &err) < 0 || entries_read(st, name, &v, &n, &err) < 0)
		rc = rq_refdb_rt_fail(&err);
	else if ((rc = entries_append((git_reflog *)log, v, n)) == 0)
		*out = (git_reflog *)log;
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].email);
		free(v[i].msg);
	}
	free(v);
	if (rc < 0)
		git_reflog_free((git_reflog *)log);
	return rc;
}
