/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refproto: the exactly-once ref-update protocol (see the header). The
 * parts, in the order of the protocol: the rule; the intent and its JSON;
 * the job's process (the go, the fence, a stored intent finished); the
 * worker's side in Redis (the intent recorded, the fence and its grant,
 * what a delivery is handed).
 */
#include "rq_refproto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_refdb.h"
#include "rq_result_json.h"
#include "rq_testhook.h"

int rq_refproto_applies(int rc, const rq_replay_result *res, int partial)
{
	return rc == 0 || (rc == 1 && partial && res->upd.nupdates);
}

/* ---- the intent ---- */

json_t *rq_refproto_intent_json(json_t *result, const rq_replay_result *res)
{
	int bad = !result;

	bad |= json_object_set_new(result, "updates", rq_result_json_updates(res));
	bad |=
	    json_object_set_new(result, "reflog_msg", rq_result_json_refname(res->upd.reflog_msg));
	if (!bad)
		return result;
	json_decref(result);
	return NULL;
}

void rq_refproto_intent_free(rq_refproto_intent *in)
{
	for (size_t i = 0; in->upd.updates && i < in->upd.nupdates; i++)
		free(in->upd.updates[i].ref);
	free(in->upd.updates);
	json_decref(in->result);
	memset(in, 0, sizeof(*in));
}

/* One update of a stored intent, its ids exactly of algo's width: 0, or
 * -1 when it is not one. */
static int update_parse(json_t *u, const rq_oid_algo *algo, rq_ref_update *out)
{
	json_t *o = json_object_get(u, "old"), *n = json_object_get(u, "new");

	if (!json_is_string(o) || !json_is_string(n) ||
	    rq_oid_parse(&out->old_id, algo, json_string_value(o), json_string_length(o)) < 0 ||
	    rq_oid_parse(&out->new_id, algo, json_string_value(n), json_string_length(n)) < 0)
		return -1;
	return (out->ref = rq_result_json_refname_bytes(json_object_get(u, "ref"))) ? 0 : -1;
}

int rq_refproto_intent_parse(const char *text, const rq_oid_algo *algo, rq_refproto_intent *out,
			     rq_error *err)
{
	json_t *o = json_loads(text, 0, NULL), *ups = json_object_get(o, "updates"), *u;
	char *msg = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(o) || !json_is_array(ups)) {
		json_decref(o);
		return rq_error_set(err, RQ_E_INTERNAL, "a stored intent that is not one");
	}
	out->result = o;
	out->upd.algo = algo;
	if (!(out->upd.updates = calloc(json_array_size(ups) + 1, sizeof(*out->upd.updates))))
		goto nomem;
	json_array_foreach(ups, i, u)
	{
		if (update_parse(u, algo, &out->upd.updates[i]) < 0) {
			free(out->upd.updates[i].ref);
			rq_refproto_intent_free(out);
			return rq_error_set(err, RQ_E_INTERNAL,
					    "a stored intent's update is not one");
		}
		out->upd.nupdates++;
	}
	if (json_object_get(o, "reflog_msg") &&
	    !(msg = rq_result_json_refname_bytes(json_object_get(o, "reflog_msg"))))
		goto nomem;
	snprintf(out->upd.reflog_msg, sizeof(out->upd.reflog_msg), "%s", msg ? msg : "replay");
	free(msg);
	json_object_del(o, "reflog_msg");
	out->prior = json_is_true(json_object_get(o, "already_applied"));
	return 0;
nomem:
	rq_refproto_intent_free(out);
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* What an intent's updates are checked against, opened once for all of
 * them: the refs, and the objects through replayq's reader (ids of the
 * repository's width; libgit2's odb API takes 20-byte ids only). */
typedef struct where_ctx {
	rq_refdb *db;
	git_odb *odb;
	rq_odb_read *rd;
} where_ctx;

static void where_close(where_ctx *w)
{
	rq_odb_read_free(w->rd);
	git_odb_free(w->odb);
	rq_refdb_free(w->db);
	memset(w, 0, sizeof(*w));
}

/* 0, or -1 (cannot be opened: the refs cannot be checked). */
static int where_open(where_ctx *w, git_repository *repo)
{
	rq_error e;

	memset(w, 0, sizeof(*w));
	if (rq_refdb_open(&w->db, repo, &e) < 0 || git_repository_odb(&w->odb, repo) < 0 ||
	    rq_odb_read_open(&w->rd, w->odb) < 0) {
		where_close(w);
		return -1;
	}
	return 0;
}

/* Where one update's ref stands: 0 at its new id, 1 at its old id with
 * its new commit there (to do), -1 elsewhere (err set), -2 unusable (it
 * cannot be read, or its commit is gone). */
static int update_where(const where_ctx *w, const rq_oid_algo *algo, const rq_ref_update *u,
			rq_error *err)
{
	char at[RQ_OID_MAX_HEXSZ + 1], o[RQ_OID_MAX_HEXSZ + 1], n[RQ_OID_MAX_HEXSZ + 1];
	rq_oid cur = {{0}};
	rq_error e;
	int r = rq_refdb_resolve(w->db, u->ref, &cur, NULL, &e);

	if (r < 0)
		return -2;
	if (r == RQ_REFDB_MISSING)
		memset(&cur, 0, sizeof(cur));
	if (rq_oid_eq(&cur, &u->new_id))
		return 0;
	if (!rq_oid_eq(&cur, &u->old_id)) {
		rq_error_set(err, RQ_E_REF_MOVED,
			     "ref '%s' is at %s; an earlier attempt of this job was to move it "
			     "from %s to %s",
			     u->ref, rq_oid_fmt(at, &cur, algo), rq_oid_fmt(o, &u->old_id, algo),
			     rq_oid_fmt(n, &u->new_id, algo));
		return -1;
	}
	return rq_odb_read_exists(w->rd, &u->new_id) ? 1 : -2;
}

/* The updates of in still to make into todo (allocated): as
 * rq_refproto_intent_todo. */
static int todo_fill(const where_ctx *w, const rq_refproto_intent *in, rq_replay_result *todo,
		     rq_error *err)
{
	for (size_t i = 0; i < in->upd.nupdates; i++) {
		int r = update_where(w, rq_ref_updates_algo(&in->upd), &in->upd.updates[i], err);
		if (r < 0)
			return r == -1 ? -1 : 0;
		if (r == 1)
			todo->upd.updates[todo->upd.nupdates++] = in->upd.updates[i];
	}
	return 1;
}

int rq_refproto_intent_todo(git_repository *repo, const rq_refproto_intent *in,
			    rq_replay_result *todo, rq_error *err)
{
	where_ctx w;
	int rc;

	memset(todo, 0, sizeof(*todo));
	todo->upd.algo = in->upd.algo;
	if (!in->upd.nupdates)
		return 0;
	if (where_open(&w, repo) < 0)
		return 0; /* the refs cannot be read: replay again */
	if (!(todo->upd.updates = calloc(in->upd.nupdates, sizeof(*todo->upd.updates)))) {
		where_close(&w);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	rc = todo_fill(&w, in, todo, err);
	where_close(&w);
	if (rc != 1) {
		free(todo->upd.updates);
		todo->upd.updates = NULL;
		todo->upd.nupdates = 0;
		return rc;
	}
	snprintf(todo->upd.reflog_msg, sizeof(todo->upd.reflog_msg), "%s", in->upd.reflog_msg);
	return 1;
}

/* ---- the job's process ---- */

typedef struct fence_ask {
	const rq_refproto_link *link;
	int refused;
} fence_ask;

/* The fence, asked under the locks. */
static int ask_commit(void *arg)
{
	fence_ask *a = arg;

	if (a->link->ask(a->link->arg, RQ_REFPROTO_ASK_COMMIT, json_object()) != RQ_REFPROTO_COMMIT)
		return a->refused = -1;
	return 0;
}

void rq_refproto_backoff(long base_ms, long cap_ms, int n)
{
	static unsigned seed;
	long ms = base_ms;
	struct timespec pause;

	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	while (n-- > 0 && ms < cap_ms)
		ms <<= 1;
	ms = ms > cap_ms ? cap_ms : ms;
	ms = ms / 2 + (ms > 1 ? rand_r(&seed) % (ms - ms / 2 + 1) : 0);
	pause.tv_sec = ms / 1000;
	pause.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&pause, NULL);
}

/* A failed try of step 3 worth another one after a pause (the same
 * intent; every lock was released; the fence not asked): a lock that a
 * live process holds, or no replayq process of this machine. 1 after
 * the pause, 0 not. */
static int lock_wait(const rq_refs_fence *f, int tries, rq_error *err)
{
	if (f->passed || tries + 1 >= RQ_REFPROTO_LOCK_TRIES ||
	    (f->verdict != RQ_REFS_LOCKED_LIVE && f->verdict != RQ_REFS_LOCKED_OTHER))
		return 0;
	rq_testhook_hold("refs-lock-wait");
	rq_refproto_backoff(2, 250, tries);
	rq_error_clear(err);
	return 1;
}

void rq_refproto_again(const rq_refproto_link *link, int n)
{
	if (link && link->again)
		link->again(link->arg);
	rq_refproto_backoff(4, 100, n);
}

rq_refproto_outcome rq_refproto_apply(const rq_refproto_link *link, git_repository *repo,
				      json_t *intent, const rq_replay_result *todo,
				      const rq_ident *committer, rq_refs_verdict *verdict,
				      rq_error *err)
{
	int asks = link && link->ask, answer, rc, tries = 0;
	fence_ask a = {link, 0};
	rq_refs_fence f = {0};

	if (verdict)
		*verdict = RQ_REFS_FAILED;
	if (!asks) {
		json_decref(intent);
	} else if (!intent || (answer = link->ask(link->arg, RQ_REFPROTO_ASK_GO, intent)) < 0) {
		return RQ_REFPROTO_LOST;
	} else if (answer != RQ_REFPROTO_GO) {
		return RQ_REFPROTO_STOPPED;
	} else if (link->going) {
		link->going(link->arg);
	}
	if (asks) {
		f.may_commit = ask_commit;
		f.arg = &a;
	}
	while ((rc = rq_refs_apply_fenced(repo, &todo->upd, committer, &f, err)) < 0 &&
	       !a.refused && lock_wait(&f, tries++, err))
		;
	if (verdict)
		*verdict = f.verdict;
	if (a.refused)
		return RQ_REFPROTO_STOPPED;
	/* failed after the grant (refs may have moved): the next delivery
	 * finishes from the intent */
	if (rc < 0 && asks && f.passed && !f.atomic)
		return RQ_REFPROTO_PARTIAL;
	return rc < 0 ? RQ_REFPROTO_FAILED : RQ_REFPROTO_APPLIED;
}

/* A prior result (a --force copy's): 1 with *out it when every ref it
 * moved still holds its new id, else 0 (the copy replays anew). */
static int prior_holds(git_repository *repo, rq_refproto_intent *in, json_t **out)
{
	rq_error ignored;
	where_ctx w;
	int holds = where_open(&w, repo) == 0;

	for (size_t i = 0; holds && i < in->upd.nupdates; i++)
		holds = update_where(&w, rq_ref_updates_algo(&in->upd), &in->upd.updates[i],
				     &ignored) == 0;
	where_close(&w);
	if (!holds)
		return 0;
	json_object_del(in->result, "recovered");
	*out = in->result;
	in->result = NULL;
	return 1;
}

/* A stored intent finished: see rq_refproto_answer_stored. */
static int finish_intent(const rq_refproto_link *link, git_repository *repo, rq_refproto_intent *in,
			 const rq_ident *committer, json_t **out, rq_refproto_outcome *how,
			 rq_error *err)
{
	rq_replay_result todo, all;
	int rc = rq_refproto_intent_todo(repo, in, &todo, err);

	if (rc == 1 && !todo.upd.nupdates) /* done before: its killed owner's marker may be left */
		rq_refs_clean_stale(repo);
	if (rc == 1 && todo.upd.nupdates) {
		/* the same intent again, reflog message included */
		memset(&all, 0, sizeof(all));
		all.upd.updates = in->upd.updates;
		all.upd.nupdates = in->upd.nupdates;
		all.upd.algo = in->upd.algo;
		memcpy(all.upd.reflog_msg, in->upd.reflog_msg, sizeof(all.upd.reflog_msg));
		*how = rq_refproto_apply(link, repo,
					 rq_refproto_intent_json(json_deep_copy(in->result), &all),
					 &todo, committer, NULL, err);
		if (*how != RQ_REFPROTO_APPLIED)
			rc = -1;
	}
	free(todo.upd.updates); /* (the names are the intent's) */
	if (rc == 1) {
		/* out of memory, the result stands without its mark: the refs
		 * are where it says */
		json_object_set_new(in->result, "recovered", json_true());
		*out = in->result;
		in->result = NULL;
	}
	return rc;
}

int rq_refproto_answer_stored(const rq_refproto_link *link, git_repository *repo,
			      const char *stored, const rq_ident *committer, json_t **out,
			      rq_refproto_outcome *how, rq_error *err)
{
	rq_refproto_intent in;
	rq_error ignored;
	git_odb *odb = NULL;
	const rq_oid_algo *algo;
	int rc;

	*out = NULL;
	*how = RQ_REFPROTO_FAILED;
	/* the ids at the width the opener installed the database with */
	algo = git_repository_odb(&odb, repo) == 0 ? rq_odb_algo(odb) : &rq_oid_sha1;
	git_odb_free(odb);
	if (!stored || rq_refproto_intent_parse(stored, algo, &in, &ignored) < 0)
		return 0; /* of no use: replay */
	rc = in.prior ? prior_holds(repo, &in, out)
		      : finish_intent(link, repo, &in, committer, out, how, err);
	rq_refproto_intent_free(&in);
	return rc;
}

/* ---- the worker's side, in Redis ---- */

/* KEYS: intent result  ARGV: intent ttl. A job that has its result
 * already (another worker finished it) gets no intent: 0. */
static const char intent_lua[] = "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
				 "redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])\n"
				 "return 1\n";

int rq_refproto_record(rq_queue *q, const char *id, const char *intent, rq_error *err)
{
	char k[512], rk[512], ttl[32];
	redisReply *rep;
	int rc;

	rq_queue_key(q, k, sizeof(k), "intent", id);
	rq_queue_key(q, rk, sizeof(rk), "result", id);
	snprintf(ttl, sizeof(ttl), "%d", rq_queue_result_ttl(q));
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", intent_lua, "2", k, rk, intent, ttl,
			    NULL);
	if (rq_queue_reply_error(rep, err, "cannot record the intent") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1 ? 0 : 1;
	freeReplyObject(rep);
	if (rc)
		rq_error_set(err, RQ_E_REDIS, "the job has a result already");
	else
		rq_queue_replicate(q);
	return rc;
}

/* KEYS: jobs result granted  ARGV: group sid consumer deliveries ttl. 1
 * when the job has no result and its stream entry is pending with this
 * consumer at this delivery; the grant "<consumer> <delivery>" is then
 * recorded in the same step, for later deliveries to see that a process
 * may be committing. */
static const char fence_lua[] = RQ_QUEUE_LUA_WANT
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)\n"
    "if #p ~= 1 or p[1][2] ~= ARGV[3] or tonumber(p[1][4]) ~= tonumber(ARGV[4]) then\n"
    "  return 0\n"
    "end\n"
    "local bad = want(KEYS[3], 'string')\n"
    "if bad then return redis.error_reply(bad) end\n"
    "redis.call('SET', KEYS[3], ARGV[3] .. ' ' .. ARGV[4], 'EX', ARGV[5])\n"
    "return 1\n";

int rq_refproto_fence(rq_queue *q, const rq_queue_msg *m, const char *id, const char *consumer,
		      rq_error *err)
{
	char rk[512], gk[512], deliveries[32], ttl[32];
	redisReply *rep;
	int rc;

	rq_queue_key(q, rk, sizeof(rk), "result", id);
	rq_queue_key(q, gk, sizeof(gk), "granted", id);
	snprintf(deliveries, sizeof(deliveries), "%ld", m->deliveries);
	snprintf(ttl, sizeof(ttl), "%d", rq_queue_result_ttl(q));
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EVAL", fence_lua, "3", rq_queue_jobs_key(q),
			    rk, gk, RQ_QUEUE_GROUP, m->sid, consumer, deliveries, ttl, NULL);
	if (rq_queue_reply_error(rep, err, "cannot check who owns the job") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	if (rc)
		rq_queue_replicate(q);
	return rc;
}

int rq_refproto_granted(rq_queue *q, const char *id, rq_error *err)
{
	char k[512];
	redisReply *rep;
	int rc;

	rq_queue_key(q, k, sizeof(k), "granted", id);
	rep = rq_redis_cmdv(rq_queue_redis(q), 0, err, "EXISTS", k, NULL);
	if (rq_queue_reply_error(rep, err, "cannot read the grant") < 0)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	return rc;
}

/* The intent an earlier delivery recorded, or NULL: none (err cleared)
 * or an error (err set). */
static char *intent_get(rq_queue *q, const char *id, rq_error *err)
{
	char k[512];

	rq_queue_key(q, k, sizeof(k), "intent", id);
	return rq_queue_string_reply(rq_redis_cmdv(rq_queue_redis(q), 0, err, "GET", k, NULL), err,
				     "cannot read the intent");
}

/*
 * A --force copy's prior result: when it moved refs, the copy is handed
 * it marked "already_applied", and if every ref is still where it put
 * them, that is the answer (nothing replayed again on refs it moved). 0
 * (*out NULL when it is of no use), -1 out of memory.
 */
static int prior_intent(const char *prior, char **out)
{
	json_t *o = prior ? json_loads(prior, 0, NULL) : NULL;
	const char *status = json_string_value(json_object_get(o, "status"));
	int rc = 0;

	*out = NULL;
	if (o && status && !strcmp(status, "ok") && json_is_true(json_object_get(o, "applied")) &&
	    json_array_size(json_object_get(o, "updates")) &&
	    (json_object_set_new(o, "already_applied", json_true()) < 0 ||
	     !(*out = json_dumps(o, JSON_COMPACT))))
		rc = -1;
	json_decref(o);
	return rc;
}

int rq_refproto_stored(rq_queue *q, const rq_queue_msg *m, const char *id, int prior_same,
		       char **intent, int *granted, rq_error *err)
{
	rq_error_clear(err);
	*granted = 0;
	*intent = m->deliveries > 1 ? intent_get(q, id, err) : NULL;
	if (*intent && (*granted = rq_refproto_granted(q, id, err)) < 0) {
		free(*intent);
		*intent = NULL;
	}
	if (!*intent && err->code == RQ_OK && prior_same && prior_intent(m->prior, intent) < 0)
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return *intent || err->code == RQ_OK ? 0 : -1;
}
