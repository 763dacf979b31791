/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (update transactions)
 * and git's refs/reftable-backend.c (the reflog entries of an update) */
/*
 * rq_rttx: ref updates on a reftable stack (see rq_rttx.h); their files
 * are rq_rtfile's, the compaction after them rq_rtcompact's.
 */
#include "rq_rttx.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "rq_mem.h"
#include "rq_rtcompact.h"
#include "rq_rtfile.h"
#include "rq_rtwrite.h"

#define MSG_MAX	      2048 /* git cuts a reflog message at half a block */
#define RESOLVE_DEPTH 5

/* ---- the transaction ---- */

int rq_rttx_begin(rq_rttx **out, rq_rtstack *st, const rq_rttx_opts *opts, rq_error *err)
{
	rq_rttx *tx = calloc(1, sizeof(*tx));
	long timeout;

	*out = NULL;
	if (!tx)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	tx->st = st;
	tx->fd = -1;
	if (opts)
		tx->o = *opts;
	if (tx->o.token && strlen(tx->o.token) == 8 && strspn(tx->o.token, "0123456789abcdef") == 8)
		memcpy(tx->token, tx->o.token, 9);
	else
		rq_rtfile_new_token(tx->token);
	timeout = tx->o.lock_timeout_ms ? tx->o.lock_timeout_ms : RQ_RTFILE_LOCK_TIMEOUT_MS;
	if (rq_rtfile_path(st, "tables.list", ".lock", tx->lock, err) < 0 ||
	    (tx->fd = rq_rtfile_lock(tx, tx->lock, timeout, err)) < 0 ||
	    rq_rtstack_reload(st, 0, err) < 0) {
		rq_rttx_free(tx);
		return -1;
	}
	*out = tx;
	return 0;
}

void rq_rttx_free(rq_rttx *tx)
{
	if (!tx)
		return;
	rq_rtfile_unlock(tx);
	free(tx);
}

/* One update, with what the stack holds for it under the lock. */
typedef struct upd {
	rq_rttx_update *u;
	int found;
	rq_rtstack_ref cur;
	rq_oid old_res, new_res; /* the ids before and after, through symbolic refs */
	char *msg;		 /* the reflog message as written */
} upd;

typedef struct logvec {
	rq_rtable_log *v;
	size_t n, cap;
} logvec;

static const rq_oid zero_id;

/* What name resolves to, through symbolic refs: 1, 0 (nothing), -1. */
static int resolve(rq_rtstack *st, const char *name, rq_oid *out, rq_error *err)
{
	rq_rtstack_ref r = {0};
	char *n = strdup(name);
	int k = 0;

	for (int depth = 0; n && depth < RESOLVE_DEPTH; depth++) {
		if ((k = rq_rtstack_read(st, n, &r, err)) <= 0 || r.type != RQ_RTABLE_SYMREF)
			break;
		free(n);
		n = strdup(r.target.p);
		k = 0;
	}
	if (k == 1 && r.type != RQ_RTABLE_SYMREF)
		*out = r.value;
	else if (k >= 0)
		k = 0;
	if (!n)
		k = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	free(n);
	rq_rtstack_ref_release(&r);
	return k;
}

static int moved(rq_error *err, const rq_oid_algo *algo, const char *name, const rq_oid *have,
		 const rq_oid *want)
{
	char h[RQ_OID_MAX_HEXSZ + 1], w[RQ_OID_MAX_HEXSZ + 1];

	rq_oid_fmt(h, have, algo);
	rq_oid_fmt(w, want, algo);
	if (rq_oid_is_zero(want))
		return rq_error_set(err, RQ_E_REF_MOVED,
				    "cannot lock ref '%s': reference already exists", name);
	if (rq_oid_is_zero(have))
		return rq_error_set(err, RQ_E_REF_MOVED,
				    "cannot lock ref '%s': reference is missing but expected %s",
				    name, w);
	return rq_error_set(err, RQ_E_REF_MOVED, "cannot lock ref '%s': is at %s but expected %s",
			    name, h, w);
}

/* The update's old-value check against what the stack holds (ids of
 * the format algo). */
static int check_old(const upd *x, const rq_oid_algo *algo, rq_error *err)
{
	const rq_rttx_update *u = x->u;
	int sym = x->found && x->cur.type == RQ_RTABLE_SYMREF;

	switch (u->check) {
	case RQ_RTTX_ABSENT:
		return x->found ? moved(err, algo, u->name, &x->old_res, &zero_id) : 0;
	case RQ_RTTX_ID:
		return rq_oid_eq(&x->old_res, &u->old_id)
			   ? 0
			   : moved(err, algo, u->name, &x->old_res, &u->old_id);
	case RQ_RTTX_SYMREF:
		if (!sym)
			return rq_error_set(err, RQ_E_REF_MOVED,
					    "cannot lock ref '%s': expected symref with target "
					    "'%s': but is a regular ref",
					    u->name, u->old_target ? u->old_target : "");
		if (!u->old_target || strcmp(x->cur.target.p, u->old_target) != 0)
			return rq_error_set(err, RQ_E_REF_MOVED,
					    "verifying symref target: '%s': is at %s but expected "
					    "%s",
					    u->name, x->cur.target.p,
					    u->old_target ? u->old_target : "");
		return 0;
	default:
		return 0;
	}
}

/* Read the ref under the lock, check it, and see whether it changes. */
static int check_one(rq_rttx *tx, upd *x, rq_error *err)
{
	rq_rttx_update *u = x->u;
	int r;

	if ((x->found = rq_rtstack_read(tx->st, u->name, &x->cur, err)) < 0 ||
	    (r = resolve(tx->st, u->name, &x->old_res, err)) < 0)
		return -1;
	if (r == 0)
		x->old_res = zero_id;
	if (check_old(x, rq_rtstack_algo(tx->st), err) < 0)
		return -1;
	if (u->new_type == RQ_RTABLE_SYMREF) {
		if ((r = resolve(tx->st, u->new_target, &x->new_res, err)) < 0)
			return -1;
		if (r == 0)
			x->new_res = zero_id;
	} else if (u->new_type == RQ_RTABLE_DELETION) {
		x->new_res = zero_id;
	} else {
		x->new_res = u->new_id;
	}
	/* a move to where it is changes nothing, and logs nothing (git) */
	u->unchanged = u->new_type == RQ_RTABLE_DELETION
			   ? !x->found
			   : u->new_type != RQ_RTABLE_SYMREF && x->found &&
				 x->cur.type != RQ_RTABLE_SYMREF &&
				 rq_oid_eq(&x->cur.value, &u->new_id);
	return 0;
}

/* git's reflog message: white space runs collapsed to one space, none at
 * either end, cut at 2048 bytes, then "\n". */
static char *normalize(const char *msg)
{
	size_t n = msg ? strlen(msg) : 0, o = 0;
	char *out = malloc(n + 2);
	int was_space = 1;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = msg[i];
		int sp = c == ' ' || c == '\t' || c == '\n' || c == '\r';
		if (was_space && sp)
			continue;
		was_space = sp;
		out[o++] = sp ? ' ' : c;
	}
	while (o && out[o - 1] == ' ')
		o--;
	if (o > MSG_MAX)
		o = MSG_MAX;
	out[o++] = '\n';
	out[o] = '\0';
	return out;
}

static int autocreate(const char *name)
{
	return !strcmp(name, "HEAD") || !strncmp(name, "refs/heads/", 11) ||
	       !strncmp(name, "refs/remotes/", 13) || !strncmp(name, "refs/notes/", 11);
}

/* Whether name's update writes a reflog entry: 1, 0, -1. */
static int should_log(rq_rttx *tx, const char *name, int mode, rq_error *err)
{
	if (mode == RQ_RTTX_LOG_SKIP)
		return 0;
	if (mode == RQ_RTTX_LOG_FORCE || tx->o.log_policy == RQ_RTTX_LOG_ALWAYS)
		return 1;
	if (tx->o.log_policy == RQ_RTTX_LOG_NORMAL && autocreate(name))
		return 1;
	return rq_rtstack_has_log(tx->st, name, err);
}

static rq_rtable_log *log_push(logvec *lv)
{
	rq_rtable_log *v = rq_mem_grow(lv->v, &lv->cap, lv->n + 1, sizeof(*v), 8);

	if (!v)
		return NULL;
	lv->v = v;
	memset(&v[lv->n], 0, sizeof(*v));
	return &v[lv->n++];
}

/* The zone as git writes it in a reftable: the number of "+HHMM". */
static int hhmm(int minutes)
{
	int a = minutes < 0 ? -minutes : minutes, v = a / 60 * 100 + a % 60;

	return minutes < 0 ? -v : v;
}

static int log_entry(logvec *lv, const char *refname, const upd *x, uint64_t ui)
{
	const rq_rttx_ident *who = x->u->who;
	rq_rtable_log *l = log_push(lv);

	if (!l)
		return -1;
	l->refname = refname;
	l->update_index = ui;
	l->type = RQ_RTABLE_LOG_UPDATE;
	l->old_id = x->old_res;
	l->new_id = x->new_res;
	l->name = who->name ? who->name : "";
	l->email = who->email ? who->email : "";
	l->time = who->time > 0 ? (uint64_t)who->time : 0;
	l->tz = hhmm(who->tz);
	l->message = x->msg;
	return 0;
}

/* A deleted ref's reflog goes with it: a tombstone for each entry. */
static int tombstones(rq_rttx *tx, const char *name, logvec *lv, rq_error *err)
{
	rq_rtstack_iter *it;
	const rq_rtable_log *l;
	int r;

	if (rq_rtstack_logs(&it, tx->st, name, err) < 0)
		return -1;
	while ((r = rq_rtstack_next_log(it, &l, err)) == 0) {
		rq_rtable_log *t = log_push(lv);
		if (!t) {
			r = rq_error_set(err, RQ_E_NOMEM, "out of memory");
			break;
		}
		t->refname = name;
		t->update_index = l->update_index;
		t->type = RQ_RTABLE_LOG_DELETION;
	}
	rq_rtstack_iter_free(it);
	return r < 0 ? -1 : 0;
}

/* HEAD's entry when HEAD is a symbolic ref to a ref that moves (and the
 * transaction does not update HEAD itself). */
static int head_log(rq_rttx *tx, upd *v, size_t n, uint64_t ui, logvec *lv, rq_error *err)
{
	rq_rtstack_ref head = {0};
	int r;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].u->name, "HEAD"))
			return 0;
	if ((r = rq_rtstack_read(tx->st, "HEAD", &head, err)) == 1 && head.type == RQ_RTABLE_SYMREF)
		for (size_t i = 0; i < n; i++) {
			const rq_rttx_update *u = v[i].u;
			if (strcmp(u->name, head.target.p) || u->unchanged || !u->who ||
			    u->new_type == RQ_RTABLE_DELETION || u->new_type == RQ_RTABLE_SYMREF ||
			    u->log == RQ_RTTX_LOG_SKIP)
				continue;
			if ((r = should_log(tx, "HEAD", RQ_RTTX_LOG_AUTO, err)) == 1)
				r = log_entry(lv, "HEAD", &v[i], ui) < 0
					? rq_error_set(err, RQ_E_NOMEM, "out of memory")
					: 0;
			break;
		}
	rq_rtstack_ref_release(&head);
	return r < 0 ? -1 : 0;
}

static int collect_logs(rq_rttx *tx, upd *v, size_t n, uint64_t ui, logvec *lv, rq_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const rq_rttx_update *u = v[i].u;
		int r;
		if (u->unchanged)
			continue;
		if (u->new_type == RQ_RTABLE_DELETION) {
			if (tombstones(tx, u->name, lv, err) < 0)
				return -1;
			continue;
		}
		if (!u->who || (u->new_type == RQ_RTABLE_SYMREF && rq_oid_is_zero(&v[i].new_res)))
			continue; /* git logs no dangling symbolic ref */
		if ((r = should_log(tx, u->name, u->log, err)) < 0)
			return -1;
		if (r && log_entry(lv, u->name, &v[i], ui) < 0)
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return head_log(tx, v, n, ui, lv, err);
}

static int logcmp(const void *a, const void *b)
{
	const rq_rtable_log *x = a, *y = b;
	int c = strcmp(x->refname, y->refname);

	return c ? c : (x->update_index < y->update_index) - (x->update_index > y->update_index);
}

static int updcmp(const void *a, const void *b)
{
	return strcmp(((const upd *)a)->u->name, ((const upd *)b)->u->name);
}

static int add_refs(rq_rtwrite *w, const upd *v, size_t n, uint64_t ui, rq_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const rq_rttx_update *u = v[i].u;
		rq_rtable_ref r = {0};
		if (u->unchanged)
			continue;
		r.name = u->name;
		r.update_index = ui;
		r.type = u->new_type;
		r.value = u->new_id;
		r.peeled = u->new_peeled;
		r.target = u->new_target;
		if (rq_rtwrite_add_ref(w, &r, err) < 0)
			return -1;
	}
	return 0;
}

/* The new table's bytes: 0, 1 when there is nothing to write, -1. */
static int build(rq_rttx *tx, upd *v, size_t n, uint64_t ui, rq_buf *table, rq_error *err)
{
	rq_rtwrite *w = rq_rtwrite_new(NULL, rq_rtstack_algo(tx->st), ui, ui);
	logvec lv = {0};
	int rc;

	if (!w)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = add_refs(w, v, n, ui, err);
	if (rc == 0)
		rc = collect_logs(tx, v, n, ui, &lv, err);
	if (rc == 0 && lv.n)
		qsort(lv.v, lv.n, sizeof(*lv.v), logcmp);
	for (size_t i = 0; rc == 0 && i < lv.n; i++)
		rc = rq_rtwrite_add_log(w, &lv.v[i], err);
	if (rc == 0)
		rc = rq_rtwrite_empty(w) ? 1 : rq_rtwrite_finish(w, table, err);
	free(lv.v);
	rq_rtwrite_free(w);
	return rc;
}

/* Every update checked under the lock, in name order. */
static int prepare(rq_rttx *tx, upd *v, rq_rttx_update *u, size_t n, rq_error *err)
{
	for (size_t i = 0; i < n; i++) {
		v[i].u = &u[i];
		u[i].unchanged = 0;
		if (!u[i].name || !*u[i].name || u[i].new_type < RQ_RTABLE_DELETION ||
		    u[i].new_type > RQ_RTABLE_SYMREF ||
		    (u[i].new_type == RQ_RTABLE_SYMREF && (!u[i].new_target || !*u[i].new_target)))
			return rq_error_set(err, RQ_E_INTERNAL, "bad ref update");
	}
	qsort(v, n, sizeof(*v), updcmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i].u->name, v[i - 1].u->name))
			return rq_error_set(err, RQ_E_BAD_REF,
					    "multiple updates for ref '%s' not allowed",
					    v[i].u->name);
	for (size_t i = 0; i < n; i++) {
		if (check_one(tx, &v[i], err) < 0)
			return -1;
		if (!(v[i].msg = normalize(v[i].u->message)))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* The new table in place, then named in tables.list. */
static int publish(rq_rttx *tx, const rq_buf *table, uint64_t ui, rq_error *err)
{
	size_t n = rq_rtstack_ntables(tx->st);
	const char **names = calloc(n + 1, sizeof(*names));
	char name[80], path[PATH_MAX];
	int rc = -1;

	if (!names)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rq_rtfile_write_table(tx->st, tx->token, ui, ui, table, name, sizeof(name), err) == 0) {
		for (size_t i = 0; i < n; i++)
			names[i] = rq_rtable_name(rq_rtstack_table(tx->st, i));
		names[n] = name;
		rc = rq_rtfile_write_list(tx, names, n + 1, "refs-written", err);
		if (rc < 0 && rq_rtfile_path(tx->st, name, "", path, err) == 0)
			unlink(path); /* not listed: nobody reads it */
	}
	free(names);
	return rc;
}

int rq_rttx_commit(rq_rttx *tx, rq_rttx_update *u, size_t n, rq_error *err)
{
	upd *v = calloc(n ? n : 1, sizeof(*v));
	uint64_t ui = rq_rtstack_next_update_index(tx->st);
	rq_buf table = {0};
	rq_error ignored;
	int rc;

	if (!v)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (tx->fd < 0)
		rc = rq_error_set(err, RQ_E_INTERNAL, "the reftable transaction holds no lock");
	else if ((rc = prepare(tx, v, u, n, err)) == 0 &&
		 (rc = build(tx, v, n, ui, &table, err)) == 0)
		rc = publish(tx, &table, ui, err);
	for (size_t i = 0; v && i < n; i++) {
		rq_rtstack_ref_release(&v[i].cur);
		free(v[i].msg);
	}
	free(v);
	rq_rtfile_unlock(tx);
	if (rc == 0 && table.len) {
		rq_rtstack_reload(tx->st, 0, &ignored);
		if (!tx->o.no_auto_compact)
			rq_rtcompact_run(tx->st, &tx->o, 0, &ignored); /* best effort */
	}
	free(table.p);
	return rc < 0 ? -1 : 0;
}

int rq_rttx_apply(rq_rtstack *st, rq_rttx_update *u, size_t n, const rq_rttx_opts *opts,
		  rq_error *err)
{
	rq_rttx *tx;
	int rc;

	if (rq_rttx_begin(&tx, st, opts, err) < 0)
		return -1;
	rc = rq_rttx_commit(tx, u, n, err);
	rq_rttx_free(tx);
	return rc;
}

/* ---- configuration ---- */

int rq_rttx_log_policy(git_repository *repo)
{
	int v = git_repository_is_bare(repo) ? RQ_RTTX_LOG_NONE : RQ_RTTX_LOG_NORMAL, on;
	git_config *cfg;
	const char *s;

	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		if (git_config_get_string(&s, cfg, "core.logallrefupdates") == 0) {
			if (!strcasecmp(s, "always"))
				v = RQ_RTTX_LOG_ALWAYS;
			else if (git_config_parse_bool(&on, s) == 0)
				v = on ? RQ_RTTX_LOG_NORMAL : RQ_RTTX_LOG_NONE;
		}
		git_config_free(cfg);
	}
	git_error_clear();
	return v;
}
