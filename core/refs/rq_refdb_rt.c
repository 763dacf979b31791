/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's refs/reftable-backend.c in what lives where (the stacks of
 * worktrees, FETCH_HEAD and MERGE_HEAD as files) */
/*
 * rq_refdb_rt: libgit2's refdb over reftables (see rq_refdb_rt.h).
 */
#include "rq_refdb_rt.h"
#include "rq_refname.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <git2/sys/refdb_backend.h>
#include <git2/sys/refs.h>
#include <git2/sys/repository.h>

#include "rq_fs.h"
#include "rq_mem.h"
#include "rq_rtstack.h"
#include "rq_refdb_rt_iter.h"
#include "rq_refdb_rt_log.h"
#include "rq_rttx.h"

/* A ref a transaction holds, and what becomes of it. */
typedef struct held {
	char *name;
	int found, type; /* its value when locked */
	rq_oid id;
	char *target;
	int released;
	int outcome; /* 0 dropped, 1 update, 2 delete */
	rq_rttx_update u;
	rq_rttx_ident who;
	char *who_name, *who_email, *msg, *new_target;
} held;

struct rq_refdb_rt_backend {
	git_refdb_backend parent;
	git_repository *repo;
	const rq_oid_algo *algo; /* the repository's object format */
	char *gitdir, *commondir;
	int linked;	   /* a linked worktree: refs of its own in gitdir */
	rq_rtstack *st[2]; /* the common stack, the worktree's */
	int policy;	   /* core.logAllRefUpdates, -1 not read yet */
	rq_rttx *tx;	   /* the transaction of the held refs */
	int tx_stack;
	held **held;
	size_t nheld, capheld, nlocked;
	int batch_failed;
};

int rq_refdb_rt_fail(const rq_error *err)
{
	git_error_set_str(GIT_ERROR_REFERENCE, err->msg);
	return err->code == RQ_E_REF_LOCKED ? GIT_ELOCKED : -1;
}

int rq_refdb_rt_fail_str(int code, const char *msg)
{
	git_error_set_str(GIT_ERROR_REFERENCE, msg);
	return code;
}

/* libgit2 1.5's git_oid holds 20 bytes: the ids of a SHA-256 repository
 * are refused by name at this boundary, never cut. */
static int lg2_refused(const rq_oid_algo *algo, rq_error *err)
{
	return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
			    "libgit2 cannot carry the %s object ids of this reftable repository",
			    algo->name);
}

int rq_refdb_rt_to_git(git_oid *out, const rq_oid *id, const rq_oid_algo *algo, rq_error *err)
{
	return rq_oid_to_git(out, id, algo) < 0 ? lg2_refused(algo, err) : 0;
}

/* A libgit2 id as the stack's (SHA-1 only): 0, or -1 with err set. */
static int from_git(const rq_refdb_rt_backend *b, rq_oid *out, const git_oid *id, rq_error *err)
{
	if (b->algo->rawsz != rq_oid_sha1.rawsz)
		return lg2_refused(b->algo, err);
	rq_oid_from_git(out, id);
	return 0;
}

static char *trimmed(const char *path)
{
	char *s = strdup(path ? path : "");
	size_t n = s ? strlen(s) : 0;

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/* ---- which stack ---- */

static int pseudo(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!(isupper((unsigned char)*p) || *p == '_'))
			return 0;
	return *name != '\0';
}

int rq_refdb_rt_worktree_ref(const char *name)
{
	return pseudo(name) || rq_refname_worktree_prefix(name);
}

int rq_refdb_rt_which(const rq_refdb_rt_backend *b, const char **name)
{
	if (!strncmp(*name, "main-worktree/", 14)) {
		*name += 14;
		return 0;
	}
	return b->linked && rq_refdb_rt_worktree_ref(*name);
}

int rq_refdb_rt_linked(const rq_refdb_rt_backend *b)
{
	return b->linked;
}

/* The stack k, opened at first use, read again when it changed. */
int rq_refdb_rt_stack(rq_refdb_rt_backend *b, int k, rq_rtstack **out, rq_error *err)
{
	char dir[4096];

	if (!b->st[k]) {
		if (snprintf(dir, sizeof(dir), "%s/reftable", k ? b->gitdir : b->commondir) >=
		    (int)sizeof(dir))
			return rq_error_set(err, RQ_E_BAD_REPO, "repository path too long");
		if (rq_rtstack_open(&b->st[k], dir, b->algo, err) < 0)
			return -1;
	} else if (!b->tx && rq_rtstack_reload(b->st[k], 0, err) < 0) {
		return -1;
	}
	*out = b->st[k];
	return 0;
}

/* ---- reading ---- */

/* FETCH_HEAD and MERGE_HEAD are files of the git directory: their first
 * object id, read from a regular file reached without a symbolic link
 * (neither a FIFO nor a link out of the repository is read). 1, 0
 * (none), -1 (not one of them), -2 (err set). */
static int special_file(const rq_refdb_rt_backend *b, const char *name, rq_oid *id, rq_error *err)
{
	char path[4096], hex[RQ_OID_MAX_HEXSZ + 1];
	size_t want = b->algo->hexsz;
	ssize_t n;
	int fd;

	if (strcmp(name, "FETCH_HEAD") && strcmp(name, "MERGE_HEAD"))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", b->gitdir, name);
	if ((fd = rq_fs_open_regular(path, 0, NULL)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		rq_error_set(err, RQ_E_BAD_REPO, "'%s' is %s", name,
			     errno == ELOOP ? "a symbolic link" : rq_fs_strerror(errno));
		return -2;
	}
	n = read(fd, hex, want);
	close(fd);
	return n == (ssize_t)want && rq_oid_parse(id, b->algo, hex, want) == 0 ? 1 : 0;
}

/* Look name up: 1 (r filled), 0 not found, -1 (err). */
static int read_ref(rq_refdb_rt_backend *b, const char *name, rq_rtstack_ref *r, rq_error *err)
{
	rq_rtstack *st;
	int k = special_file(b, name, &r->value, err);

	if (k == -2)
		return -1;
	if (k >= 0) {
		r->type = RQ_RTABLE_VAL1;
		return k;
	}
	k = rq_refdb_rt_which(b, &name);
	if (!strncmp(name, "worktrees/", 10))
		return 0; /* another worktree's refs: not looked into */
	if (rq_refdb_rt_stack(b, k, &st, err) < 0)
		return -1;
	return rq_rtstack_read(st, name, r, err);
}

int rq_refdb_rt_make_ref(git_reference **out, const rq_refdb_rt_backend *b, const char *name,
			 const rq_rtstack_ref *r, rq_error *err)
{
	git_oid value, peeled;

	if (r->type == RQ_RTABLE_SYMREF)
		*out = git_reference__alloc_symbolic(name, r->target.p);
	else if (rq_refdb_rt_to_git(&value, &r->value, b->algo, err) < 0 ||
		 rq_refdb_rt_to_git(&peeled, &r->peeled, b->algo, err) < 0)
		return -1;
	else
		*out =
		    git_reference__alloc(name, &value, r->type == RQ_RTABLE_VAL2 ? &peeled : NULL);
	return *out ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

static int be_exists(int *exists, git_refdb_backend *_b, const char *name)
{
	rq_rtstack_ref r = {0};
	rq_error err;
	int k = read_ref((rq_refdb_rt_backend *)_b, name, &r, &err);

	rq_rtstack_ref_release(&r);
	if (k < 0)
		return rq_refdb_rt_fail(&err);
	*exists = k;
	return 0;
}

static int be_lookup(git_reference **out, git_refdb_backend *_b, const char *name)
{
	rq_rtstack_ref r = {0};
	rq_error err;
	int k = read_ref((rq_refdb_rt_backend *)_b, name, &r, &err);
	char msg[300];

	*out = NULL;
	if (k == 1 && rq_refdb_rt_make_ref(out, (rq_refdb_rt_backend *)_b, name, &r, &err) < 0)
		k = -1;
	rq_rtstack_ref_release(&r);
	if (k < 0)
		return rq_refdb_rt_fail(&err);
	if (k == 0) {
		snprintf(msg, sizeof(msg), "reference '%s' not found", name);
		return rq_refdb_rt_fail_str(GIT_ENOTFOUND, msg);
	}
	return 0;
}

/* ---- writing ---- */

/* core.logAllRefUpdates, read once. */
static int log_policy(rq_refdb_rt_backend *b)
{
	if (b->policy < 0)
		b->policy = rq_rttx_log_policy(b->repo);
	return b->policy;
}

static rq_rttx_opts tx_opts(rq_refdb_rt_backend *b)
{
	rq_rttx_opts o = {0};

	o.log_policy = log_policy(b);
	return o;
}

/* An annotated tag's peeled id (git stores it with the ref): 1, or 0. */
static int peel(rq_refdb_rt_backend *b, const git_oid *id, git_oid *peeled)
{
	git_odb *odb;
	git_object *tag, *target;
	git_object_t type = GIT_OBJECT_INVALID;
	size_t len;
	int rc = 0;

	if (git_repository_odb(&odb, b->repo) == 0) {
		if (git_odb_read_header(&len, &type, odb, id) < 0)
			type = GIT_OBJECT_INVALID;
		git_odb_free(odb);
	}
	if (type == GIT_OBJECT_TAG && git_object_lookup(&tag, b->repo, id, GIT_OBJECT_TAG) == 0) {
		if (git_object_peel(&target, tag, GIT_OBJECT_ANY) == 0) {
			git_oid_cpy(peeled, git_object_id(target));
			git_object_free(target);
			rc = 1;
		}
		git_object_free(tag);
	}
	git_error_clear();
	return rc;
}

/* The update's new value from a libgit2 reference: 0, or -1 with err
 * set. */
static int set_new(rq_refdb_rt_backend *b, rq_rttx_update *u, const git_reference *ref,
		   rq_error *err)
{
	git_oid peeled;

	if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		u->new_type = RQ_RTABLE_SYMREF;
		u->new_target = git_reference_symbolic_target(ref);
		return 0;
	}
	if (from_git(b, &u->new_id, git_reference_target(ref), err) < 0)
		return -1;
	u->new_type = RQ_RTABLE_VAL1;
	if (peel(b, git_reference_target(ref), &peeled)) {
		u->new_type = RQ_RTABLE_VAL2;
		rq_oid_from_git(&u->new_peeled, &peeled);
	}
	return 0;
}

static void set_who(rq_rttx_ident *id, const git_signature *sig)
{
	id->name = sig->name;
	id->email = sig->email;
	id->time = sig->when.time;
	id->tz = sig->when.offset;
}

static int write_failed(const rq_rttx_update *u, const rq_error *err)
{
	int code = rq_refdb_rt_fail(err);

	if (err->code == RQ_E_REF_MOVED)
		code = u->check == RQ_RTTX_ABSENT ? GIT_EEXISTS : GIT_EMODIFIED;
	return code;
}

static int write_one(rq_refdb_rt_backend *b, rq_rttx_update *u)
{
	rq_rttx_opts o = tx_opts(b);
	const char *name = u->name;
	int k = rq_refdb_rt_which(b, &name);
	rq_rtstack *st;
	rq_error err;

	u->name = name;
	if (rq_refdb_rt_stack(b, k, &st, &err) < 0 || rq_rttx_apply(st, u, 1, &o, &err) < 0)
		return write_failed(u, &err);
	return 0;
}

static int be_write(git_refdb_backend *_b, const git_reference *ref, int force,
		    const git_signature *who, const char *message, const git_oid *old,
		    const char *old_target)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	rq_rttx_update u = {0};
	rq_rttx_ident id;
	rq_error err;

	if (b->tx)
		return rq_refdb_rt_fail_str(GIT_ELOCKED, "the refs are locked by a transaction");
	u.name = git_reference_name(ref);
	if (set_new(b, &u, ref, &err) < 0 || (old && from_git(b, &u.old_id, old, &err) < 0))
		return rq_refdb_rt_fail(&err);
	/* as libgit2's files backend: without force the ref must not exist;
	 * with it, an old value given is checked */
	u.check = !force       ? RQ_RTTX_ABSENT
		  : old	       ? RQ_RTTX_ID
		  : old_target ? RQ_RTTX_SYMREF
			       : RQ_RTTX_ANY;
	u.old_target = old_target;
	if (who) {
		set_who(&id, who);
		u.who = &id;
	}
	u.message = message;
	return write_one(b, &u);
}

static int be_del(git_refdb_backend *_b, const char *name, const git_oid *old_id,
		  const char *old_target)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	rq_rttx_update u = {0};
	rq_error err;

	if (b->tx)
		return rq_refdb_rt_fail_str(GIT_ELOCKED, "the refs are locked by a transaction");
	if (old_id && from_git(b, &u.old_id, old_id, &err) < 0)
		return rq_refdb_rt_fail(&err);
	u.name = name;
	u.new_type = RQ_RTABLE_DELETION;
	u.check = old_id ? RQ_RTTX_ID : old_target ? RQ_RTTX_SYMREF : RQ_RTTX_ANY;
	u.old_target = old_target;
	return write_one(b, &u);
}

static int be_rename(git_reference **out, git_refdb_backend *b, const char *old_name,
		     const char *new_name, int force, const git_signature *who, const char *message)
{
	(void)b, (void)old_name, (void)new_name, (void)force, (void)who, (void)message;
	*out = NULL;
	return rq_refdb_rt_fail_str(-1, "replayq does not rename refs of a reftable repository");
}

static int be_has_log(git_refdb_backend *_b, const char *name)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	int k = rq_refdb_rt_which(b, &name), r;
	rq_rtstack *st;
	rq_error err;

	if (rq_refdb_rt_stack(b, k, &st, &err) < 0 || (r = rq_rtstack_has_log(st, name, &err)) < 0)
		return rq_refdb_rt_fail(&err);
	return r;
}

static int be_ensure_log(git_refdb_backend *b, const char *name)
{
	int r = be_has_log(b, name);

	return r != 0
		   ? (r > 0 ? 0 : r)
		   : rq_refdb_rt_fail_str(-1, "replayq does not create empty reflogs in a reftable "
					      "repository");
}

static int be_reflog_write(git_refdb_backend *b, git_reflog *reflog)
{
	(void)b, (void)reflog;
	return rq_refdb_rt_fail_str(-1,
				    "replayq does not rewrite reflogs of a reftable repository");
}

static int be_reflog_rename(git_refdb_backend *b, const char *old_name, const char *new_name)
{
	(void)b, (void)old_name, (void)new_name;
	return rq_refdb_rt_fail_str(-1, "replayq does not rename reflogs of a reftable repository");
}

static int be_reflog_delete(git_refdb_backend *b, const char *name)
{
	(void)b, (void)name;
	return rq_refdb_rt_fail_str(-1, "replayq does not delete reflogs of a reftable repository");
}

/* ---- transactions: the locks of a git_transaction, taken together ---- */

static void held_free(held *h)
{
	if (!h)
		return;
	free(h->name);
	free(h->target);
	free(h->who_name);
	free(h->who_email);
	free(h->msg);
	free(h->new_target);
	free(h);
}

static void batch_end(rq_refdb_rt_backend *b)
{
	for (size_t i = 0; i < b->nheld; i++)
		held_free(b->held[i]);
	b->nheld = b->nlocked = 0;
	b->batch_failed = 0;
	rq_rttx_free(b->tx);
	b->tx = NULL;
}

/* A new held ref, with its value as the stack has it under the lock. */
static held *hold(rq_refdb_rt_backend *b, rq_rtstack *st, const char *name, rq_error *err)
{
	rq_rtstack_ref r = {0};
	held *h = calloc(1, sizeof(*h)), **v;

	if (!h || !(h->name = strdup(name)) ||
	    !(v = rq_mem_grow(b->held, &b->capheld, b->nheld + 1, sizeof(*v), 8))) {
		held_free(h);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return NULL;
	}
	b->held = v;
	if ((h->found = rq_rtstack_read(st, name, &r, err)) < 0 ||
	    (r.type == RQ_RTABLE_SYMREF && !(h->target = strdup(r.target.p)))) {
		rq_rtstack_ref_release(&r);
		held_free(h);
		return NULL;
	}
	h->type = r.type;
	h->id = r.value;
	rq_rtstack_ref_release(&r);
	b->held[b->nheld++] = h;
	return h;
}

static int be_lock(void **payload, git_refdb_backend *_b, const char *refname)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	const char *name = refname;
	int k = rq_refdb_rt_which(b, &name);
	rq_rttx_opts o = tx_opts(b);
	rq_rtstack *st;
	rq_error err;
	held *h;

	*payload = NULL;
	if (b->nlocked && k != b->tx_stack)
		return rq_refdb_rt_fail_str(
		    -1, "a worktree's own refs and shared refs in one transaction");
	for (size_t i = 0; i < b->nheld; i++)
		if (!b->held[i]->released && !strcmp(b->held[i]->name, name))
			return rq_refdb_rt_fail_str(GIT_ELOCKED, "the ref is locked already");
	if (!b->nlocked) {
		if (rq_refdb_rt_stack(b, k, &st, &err) < 0 ||
		    rq_rttx_begin(&b->tx, st, &o, &err) < 0)
			return rq_refdb_rt_fail(&err);
		b->tx_stack = k;
	}
	st = b->st[k];
	if (!(h = hold(b, st, name, &err))) {
		if (!b->nlocked)
			batch_end(b);
		return rq_refdb_rt_fail(&err);
	}
	b->nlocked++;
	*payload = h;
	return 0;
}

/* The held ref's update: the new value, checked against the one it had
 * when locked. 0, or -1 with err set. */
static int set_update(rq_refdb_rt_backend *b, held *h, int success, int update_reflog,
		      const git_reference *ref, const git_signature *sig, const char *message,
		      rq_error *err)
{
	rq_rttx_update *u = &h->u;

	u->name = h->name;
	if (success == 2)
		u->new_type = RQ_RTABLE_DELETION;
	else if (set_new(b, u, ref, err) < 0)
		return -1;
	if (u->new_target && !(u->new_target = h->new_target = strdup(u->new_target)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	u->check = !h->found			 ? RQ_RTTX_ABSENT
		   : h->type == RQ_RTABLE_SYMREF ? RQ_RTTX_SYMREF
						 : RQ_RTTX_ID;
	u->old_id = h->id;
	u->old_target = h->target;
	u->log = update_reflog ? RQ_RTTX_LOG_AUTO : RQ_RTTX_LOG_SKIP;
	if (sig) {
		if (!(h->who_name = strdup(sig->name)) || !(h->who_email = strdup(sig->email)))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		set_who(&h->who, sig);
		h->who.name = h->who_name;
		h->who.email = h->who_email;
		u->who = &h->who;
	}
	if (message && !(u->message = h->msg = strdup(message)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

/* The last lock released: the gathered updates as one table. */
static int batch_commit(rq_refdb_rt_backend *b)
{
	rq_rttx_update *u = calloc(b->nheld ? b->nheld : 1, sizeof(*u));
	size_t n = 0;
	rq_error err;
	int rc = 0;

	if (!u)
		rc = rq_error_set(&err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; u && i < b->nheld; i++)
		if (b->held[i]->outcome)
			u[n++] = b->held[i]->u;
	if (rc == 0 && n && rq_rttx_commit(b->tx, u, n, &err) < 0)
		rc = -1;
	free(u);
	batch_end(b);
	return rc < 0 ? rq_refdb_rt_fail(&err) : 0;
}

static int be_unlock(git_refdb_backend *_b, void *payload, int success, int update_reflog,
		     const git_reference *ref, const git_signature *sig, const char *message)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;
	held *h = payload;
	rq_error err;
	int rc = 0;

	if (!h || h->released || !b->nlocked)
		return rq_refdb_rt_fail_str(-1, "no such lock");
	if (success && set_update(b, h, success, update_reflog, ref, sig, message, &err) < 0) {
		rc = rq_refdb_rt_fail(&err);
		b->batch_failed = 1; /* then nothing is written */
	}
	h->released = 1;
	h->outcome = rc == 0 ? success : 0;
	if (--b->nlocked)
		return rc;
	if (b->batch_failed) {
		batch_end(b);
		return rc ? rc : rq_refdb_rt_fail_str(-1, "a ref update of the transaction failed");
	}
	return batch_commit(b);
}

/* ---- the backend ---- */

static void be_free(git_refdb_backend *_b)
{
	rq_refdb_rt_backend *b = (rq_refdb_rt_backend *)_b;

	batch_end(b);
	free(b->held);
	rq_rtstack_free(b->st[0]);
	rq_rtstack_free(b->st[1]);
	free(b->gitdir);
	free(b->commondir);
	free(b);
}

int rq_refdb_rt_install(git_repository *repo, const rq_oid_algo *algo, rq_error *err)
{
	rq_refdb_rt_backend *b = calloc(1, sizeof(*b));
	git_refdb *db = NULL;

	if (!b || git_refdb_init_backend(&b->parent, GIT_REFDB_BACKEND_VERSION) < 0) {
		free(b);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	b->parent.exists = be_exists;
	b->parent.lookup = be_lookup;
	b->parent.iterator = rq_refdb_rt_iter_new;
	b->parent.write = be_write;
	b->parent.rename = be_rename;
	b->parent.del = be_del;
	b->parent.has_log = be_has_log;
	b->parent.ensure_log = be_ensure_log;
	b->parent.free = be_free;
	b->parent.reflog_read = rq_refdb_rt_log_read;
	b->parent.reflog_write = be_reflog_write;
	b->parent.reflog_rename = be_reflog_rename;
	b->parent.reflog_delete = be_reflog_delete;
	b->parent.lock = be_lock;
	b->parent.unlock = be_unlock;
	b->repo = repo;
	b->algo = algo ? algo : &rq_oid_sha1;
	b->policy = -1;
	b->gitdir = trimmed(git_repository_path(repo));
	b->commondir = trimmed(git_repository_commondir(repo));
	if (!b->gitdir || !b->commondir || git_refdb_new(&db, repo) < 0) {
		be_free(&b->parent);
		return rq_error_git(err, "cannot make the reftable ref database");
	}
	b->linked = strcmp(b->gitdir, b->commondir) != 0;
	if (git_refdb_set_backend(db, &b->parent) < 0) {
		be_free(&b->parent);
		git_refdb_free(db);
		return rq_error_git(err, "cannot make the reftable ref database");
	}
	git_repository_set_refdb(repo, db);
	git_refdb_free(db);
	return 0;
}
