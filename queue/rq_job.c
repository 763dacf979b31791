/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job: job JSON parsing and validation (one field read: rq_job_field;
 * a train's own fields: rq_job_train); the job written back as JSON, its
 * content and digest; its options for the engine.
 */
#include "rq_job.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_job_field.h"
#include "rq_job_train.h"
#include "rq_revs.h"
#include "rq_sha1.h"
#include "rq_testhook.h"

static const char *const known_fields[] = {
    "v",	  "id",		"repo",	       "mode",	       "target",
    "revisions",  "contained",	"ref",	       "ref_action",   "empty",
    "committer",  "timeout_ms", "max_commits", "reply_to",     "submitted_at",
    "keep_going", "method",	"cars",	       "ref_prefix",   "car_refs",
    "message",	  "sign",	"group",       "on_ref_moved", NULL};

/* The fields of a train job only. */
static const char *const train_fields[] = {"method",   "cars",	  "ref_prefix",
					   "car_refs", "message", NULL};
/* What a maintenance job does not take: it replays nothing. */
static const char *const maintain_fields[] = {
    "target",	 "revisions",	"contained", "ref",	"keep_going", "method",
    "cars",	 "ref_prefix",	"car_refs",  "message", "ref_action", "empty",
    "committer", "max_commits", "sign",	     NULL};

int rq_job_id_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return 0;
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (!(isalnum(c) || strchr("._:@/+-", c)))
			return 0;
	}
	return n <= RQ_JOB_ID_MAX;
}

int rq_job_repo_valid(const char *s)
{
	const char *p;
	size_t len;

	if (!s || !*s || s[0] == '/' || (len = strlen(s)) > RQ_JOB_REPO_MAX)
		return 0;
	for (p = s; *p; p++)
		if ((unsigned char)*p < 32 || *p == '\\' || *p == 0x7f)
			return 0;
	/* every component: not empty, not "." or ".." */
	p = s;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 && e && e[1] == '\0' && p != s && p[-1] != '/')
			return 1; /* one trailing slash */
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return 1;
}

static int parse_tz(const char *s, int *tz)
{
	if (strlen(s) != 5 || (s[0] != '+' && s[0] != '-'))
		return -1;
	for (int i = 1; i < 5; i++)
		if (!isdigit((unsigned char)s[i]))
			return -1;
	int hh = (s[1] - '0') * 10 + (s[2] - '0'), mm = (s[3] - '0') * 10 + (s[4] - '0');
	if (hh > 14 || mm > 59)
		return -1;
	*tz = (s[0] == '-' ? -1 : 1) * (hh * 60 + mm);
	return 0;
}

/* The committer's fields as given (NULL, -1: not given). */
typedef struct committer_fields {
	char *name, *email, *tz;
	int64_t time;
} committer_fields;

/* The committer's fields, checked together, into the job. */
static int set_committer(const committer_fields *f, rq_job *job, rq_error *err)
{
	if (!!f->name != !!f->email)
		return rq_job_field_bad(err, "field '%s' needs both name and email", "committer");
	if (f->name) {
		if (rq_ident_set(&job->committer, f->name, f->email, err) < 0) {
			char msg[RQ_ERROR_MSG_MAX];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			return rq_error_set(err, RQ_E_INVALID_JOB,
					    "field 'committer.name'/'committer.email': %s", msg);
		}
		job->has_name = 1;
	}
	if (f->tz && parse_tz(f->tz, &job->committer.tz) < 0)
		return rq_job_field_bad(err, "field '%s' must look like +0100", "committer.tz");
	if (f->time >= 0) {
		job->committer.time = f->time;
		job->has_time = 1;
	} else if (f->tz) {
		return rq_job_field_bad(err, "field '%s' needs committer.time", "committer.tz");
	}
	return 0;
}

static int parse_committer(json_t *o, rq_job *job, rq_error *err)
{
	json_t *c = json_object_get(o, "committer"), *v;
	committer_fields f = {NULL, NULL, NULL, -1};
	const char *key;
	int rc = -1;

	if (!c || json_is_null(c))
		return 0;
	if (!json_is_object(c))
		return rq_job_field_bad(err, "field '%s' must be an object", "committer");
	json_object_foreach(c, key, v)
	{
		if (strcmp(key, "name") && strcmp(key, "email") && strcmp(key, "time") &&
		    strcmp(key, "tz"))
			return rq_error_set(err, RQ_E_INVALID_JOB, "unknown field 'committer.%s'",
					    key);
	}
	if (rq_job_field_string(c, "name", 0, RQ_JOB_NAME_MAX, &f.name, err) == 0 &&
	    rq_job_field_string(c, "email", 0, RQ_JOB_NAME_MAX, &f.email, err) == 0 &&
	    rq_job_field_string(c, "tz", 0, 5, &f.tz, err) == 0 &&
	    rq_job_field_int(c, "time", 0, INT64_C(253402300799), &f.time, err) == 0)
		rc = set_committer(&f, job, err);
	free(f.name);
	free(f.email);
	free(f.tz);
	return rc;
}

static int parse_revisions(json_t *o, rq_job *job, rq_error *err)
{
	json_t *a = json_object_get(o, "revisions"), *v;
	size_t i;
	int syntax = 0;

	if (!a)
		return rq_job_field_bad(err, "field '%s' is required", "revisions");
	if (!json_is_array(a))
		return rq_job_field_bad(err, "field '%s' must be an array of strings", "revisions");
	if (json_array_size(a) == 0)
		return rq_job_field_bad(err, "field '%s' must not be empty", "revisions");
	if (json_array_size(a) > RQ_JOB_REVS_MAX)
		return rq_error_set(err, RQ_E_INVALID_JOB,
				    "field 'revisions' has more than %d entries", RQ_JOB_REVS_MAX);
	job->revisions = calloc(json_array_size(a) + 1, sizeof(char *));
	if (!job->revisions)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	/* the patterns' syntax: what the options say, wherever they are */
	json_array_foreach(a, i, v)
	{
		if (json_is_string(v) && !strcmp(json_string_value(v), "--"))
			break;
		if (json_is_string(v))
			syntax = rq_revs_syntax_option(json_string_value(v), syntax);
	}
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v))
			return rq_job_field_bad(err, "field '%s' must be an array of strings",
						"revisions");
		if (rq_job_field_revision(json_string_value(v), json_string_length(v), "revisions",
					  i, syntax, err) < 0)
			return -1;
		if (!(job->revisions[i] = strdup(json_string_value(v))))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		job->nrevisions++;
	}
	return 0;
}

/*
 * A ref a job may give its result to: not refs/HEAD (after it, every HEAD
 * in the repository is ambiguous); not a namespace of its own,
 * refs/<name> (refs/heads, refs/tags: a file there hides every ref in
 * it), so at least refs/<namespace>/<name>; not one whose last component
 * is "@" (git's revisions read "@" alone as HEAD: nothing could name it
 * by its short name); and under refs/heads/ only a name `git
 * check-ref-format --branch` takes (not "HEAD", not starting with '-').
 */
static int ref_a_job_may_create(const char *ref)
{
	const char *b = !strncmp(ref, "refs/heads/", 11) ? ref + 11 : NULL,
		   *last = strrchr(ref, '/');

	if (!strcmp(ref, "refs/HEAD") || !strchr(ref + 5, '/') || (last && !strcmp(last, "/@")))
		return 0;
	return !b || (strcmp(b, "HEAD") && b[0] != '-');
}

/* Only the fields a job may have. */
static int check_known_fields(json_t *o, rq_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v)
	{
		int known = 0;
		for (int i = 0; known_fields[i]; i++)
			known |= !strcmp(known_fields[i], key);
		if (!known)
			return rq_error_set(err, RQ_E_INVALID_JOB, "unknown field '%.64s'", key);
	}
	return 0;
}

/* "repo": a relative path that stays inside the root. */
static int parse_repo(json_t *o, rq_job *job, rq_error *err)
{
	if (rq_job_field_string(o, "repo", 1, RQ_JOB_REPO_MAX, &job->repo, err) < 0)
		return -1;
	if (!rq_job_repo_valid(job->repo))
		return rq_error_set(
		    err, RQ_E_BAD_REPO,
		    "field 'repo' must be a relative path without '..' or empty parts");
	return 0;
}

/* "mode" and its "target", then "revisions", "contained" and
 * "keep_going" (a train: its own fields). */
static int parse_mode(json_t *o, rq_job *job, rq_error *err)
{
	static const char *const modes[] = {"onto", "advance", "revert", "train", "maintain", NULL};
	int mode = 0;

	if (rq_job_field_choice(o, "mode", 1, modes, "onto, advance, revert, train or maintain",
				&mode, err) < 0)
		return -1;
	if ((job->maintain = mode == 4)) /* the repository's packs consolidated */
		return rq_job_field_absent(o, maintain_fields,
					   "field '%s' does not apply to mode maintain", err);
	job->train = mode == 3;
	job->mode = job->train ? RQ_MODE_ONTO : (rq_mode)mode;
	if (rq_job_field_string(o, "target", 1, RQ_JOB_REV_LEN_MAX, &job->target, err) < 0)
		return -1;
	if (job->target[0] == '-')
		return rq_error_set(err, RQ_E_BAD_REVISION, "field 'target' looks like an option");
	if (job->train)
		return rq_job_train_parse(o, job, err);
	if (rq_job_field_absent(o, train_fields, "field '%s' needs mode train", err) < 0 ||
	    rq_job_field_bool(o, "keep_going", &job->keep_going, err) < 0)
		return -1;
	if (parse_revisions(o, job, err) < 0 ||
	    rq_job_field_bool(o, "contained", &job->contained, err) < 0)
		return -1;
	if (job->contained && job->mode != RQ_MODE_ONTO)
		return rq_job_field_bad(err, "field '%s' needs mode onto", "contained");
	return 0;
}

/* "ref": a valid fully qualified name a job may write, not with
 * "contained"; then "ref_action" and "empty". */
static int parse_ref(json_t *o, rq_job *job, rq_error *err)
{
	static const char *const actions[] = {"print", "update", NULL};
	int empty = RQ_EMPTY_DROP;

	if (rq_job_field_string(o, "ref", 0, RQ_JOB_REV_LEN_MAX, &job->ref, err) < 0)
		return -1;
	if (job->ref && (!rq_revs_refname_valid(job->ref) || !strcmp(job->ref, "HEAD")))
		return rq_error_set(err, RQ_E_BAD_REF,
				    "field 'ref' is not a valid fully qualified ref name");
	if (job->ref && !ref_a_job_may_create(job->ref))
		return rq_error_set(
		    err, RQ_E_BAD_REF,
		    "field 'ref' names a ref a job may not write ('%.200s': refs/HEAD, a "
		    "namespace refs/<name>, a name ending in /@, or a branch git would refuse "
		    "as a branch name)",
		    job->ref);
	if (job->ref && job->contained)
		return rq_job_field_bad(
		    err, "fields 'ref' and 'contained' cannot be used together%s", "");
	if (rq_job_field_choice(o, "ref_action", 0, actions, "print or update", &job->ref_update,
				err) < 0 ||
	    rq_job_field_choice(o, "empty", 0, rq_replay_empty_names, "drop, keep or abort", &empty,
				err) < 0)
		return -1;
	job->empty = (rq_empty)empty;
	return 0;
}

/* The limits, the submission time and the reply list. */
static int parse_limits(json_t *o, rq_job *job, rq_error *err)
{
	int64_t timeout = RQ_JOB_TIMEOUT_DEF_MS, commits = RQ_JOB_COMMITS_DEF, sub = 0;

	if (rq_job_field_int(o, "timeout_ms", 1, RQ_JOB_TIMEOUT_MAX_MS, &timeout, err) < 0 ||
	    rq_job_field_int(o, "max_commits", 1, RQ_JOB_COMMITS_MAX, &commits, err) < 0 ||
	    rq_job_field_int(o, "submitted_at", 0, INT64_C(253402300799000), &sub, err) < 0)
		return -1;
	job->timeout_ms = timeout;
	job->max_commits = (size_t)commits;
	job->submitted_at = sub;
	if (rq_job_field_string(o, "reply_to", 0, RQ_JOB_REPLY_MAX, &job->reply_to, err) < 0)
		return -1;
	if (job->reply_to && !rq_job_id_valid(job->reply_to))
		return rq_job_field_bad(err, "field '%s' must be 1-128 of [A-Za-z0-9._:@/+-]",
					"reply_to");
	return 0;
}

/* "group": jobs of one group run one at a time, in order (rq_group). */
static int parse_group(json_t *o, rq_job *job, rq_error *err)
{
	if (rq_job_field_string(o, "group", 0, RQ_JOB_ID_MAX, &job->group, err) < 0)
		return -1;
	if (job->group && !rq_job_id_valid(job->group))
		return rq_job_field_bad(err, "field '%s' must be 1-128 of [A-Za-z0-9._:@/+-]",
					"group");
	return 0;
}

/* "on_ref_moved": "fail" (the default) or "retry": a ref that moved
 * between the replay and the commit makes the job replay again from the
 * refs as they are now (worker/jobrun), up to RQ_JOB_MOVED_ATTEMPTS. */
static int parse_on_ref_moved(json_t *o, rq_job *job, rq_error *err)
{
	static const char *const choices[] = {"fail", "retry", NULL};
	int c = 0;

	if (rq_job_field_choice(o, "on_ref_moved", 0, choices, "fail or retry", &c, err) < 0)
		return -1;
	job->retry_moved = c == 1;
	return 0;
}

static int parse_fields(json_t *o, rq_job *job, rq_error *err)
{
	int64_t ver = 1;

	if (check_known_fields(o, err) < 0 || rq_job_field_int(o, "v", 1, 1, &ver, err) < 0 ||
	    parse_repo(o, job, err) < 0 || parse_mode(o, job, err) < 0 ||
	    parse_ref(o, job, err) < 0 || parse_committer(o, job, err) < 0 ||
	    parse_limits(o, job, err) < 0 || rq_job_field_bool(o, "sign", &job->sign, err) < 0 ||
	    parse_group(o, job, err) < 0 || parse_on_ref_moved(o, job, err) < 0)
		return -1;
	return 0;
}

static int parse_text(const char *text, size_t len, rq_job *job, char *id_out, rq_error *err)
{
	json_error_t jerr;
	json_t *o = NULL, *idv;
	int rc = -1;

	memset(job, 0, sizeof(*job));
	if (id_out)
		id_out[0] = '\0';
	if (len > RQ_JOB_MAX_BYTES)
		return rq_error_set(err, RQ_E_INVALID_JOB, "job is larger than %d bytes",
				    RQ_JOB_MAX_BYTES);
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return rq_error_set(err, RQ_E_INVALID_JOB, "job is not valid JSON: %s (line %d)",
				    jerr.text, jerr.line);
	if (!json_is_object(o)) {
		rq_error_set(err, RQ_E_INVALID_JOB, "job must be a JSON object");
		goto out;
	}
	idv = json_object_get(o, "id");
	if (!idv || !json_is_string(idv) || !rq_job_id_valid(json_string_value(idv))) {
		rq_job_field_bad(err, "field '%s' is required: 1-128 of [A-Za-z0-9._:@/+-]", "id");
		goto out;
	}
	if (id_out)
		snprintf(id_out, RQ_JOB_ID_MAX + 1, "%s", json_string_value(idv));
	if (!(job->id = strdup(json_string_value(idv)))) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	rc = parse_fields(o, job, err);
out:
	json_decref(o);
	if (rc < 0)
		rq_job_free(job);
	return rc;
}

int rq_job_parse(const char *text, size_t len, rq_job *job, char *id_out, rq_error *err)
{
	int rc = parse_text(text, len, job, id_out, err);

	/* the suite's schema check: every job text parsed, with its verdict
	 * (one too large, without its text) */
	rq_testhook_doc("job", rc < 0 ? rq_qerror_name(err->code) : "ok", text,
			len <= RQ_JOB_MAX_BYTES ? len : 0, rc < 0 ? err->msg : NULL);
	return rc;
}

void rq_job_free(rq_job *job)
{
	if (!job)
		return;
	free(job->id);
	free(job->repo);
	free(job->target);
	for (size_t i = 0; i < job->nrevisions; i++)
		free(job->revisions[i]);
	free(job->revisions);
	free(job->ref);
	free(job->reply_to);
	free(job->group);
	for (size_t k = 0; job->cars && k < job->ncars; k++) {
		free(job->cars[k].name);
		for (size_t i = 0; i < job->cars[k].nrevisions; i++)
			free(job->cars[k].revisions[i]);
		free(job->cars[k].revisions);
	}
	free(job->cars);
	free(job->ref_prefix);
	free(job->message);
	memset(job, 0, sizeof(*job));
}

/* The committer object of a job that gives one (name, email, time, tz
 * as given); NULL when memory runs out. */
static json_t *committer_json(const rq_job *job)
{
	json_t *c = json_object();
	int a = job->committer.tz < 0 ? -job->committer.tz : job->committer.tz, bad = !c;
	char tz[8];

	if (c && job->has_name) {
		bad |= json_object_set_new(c, "name", json_string(job->committer.name));
		bad |= json_object_set_new(c, "email", json_string(job->committer.email));
	}
	if (c && job->has_time) {
		snprintf(tz, sizeof(tz), "%c%02d%02d", job->committer.tz < 0 ? '-' : '+',
			 a / 60 % 100, a % 60);
		bad |= json_object_set_new(c, "time", json_integer(job->committer.time));
		bad |= json_object_set_new(c, "tz", json_string(tz));
	}
	if (bad) {
		json_decref(c);
		return NULL;
	}
	return c;
}

/* An array of strings; NULL when memory runs out. */
static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < n; i++)
		bad |= json_array_append_new(a, json_string(v[i]));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* A replay's own fields: revisions, contained, ref, keep_going (only when
 * set, so that the content of a job without it stays what it was). */
static int replay_json(json_t *o, const rq_job *job)
{
	int bad = 0;

	bad |= json_object_set_new(o, "revisions", strings_json(job->revisions, job->nrevisions));
	bad |= json_object_set_new(o, "contained", json_boolean(job->contained));
	if (job->ref)
		bad |= json_object_set_new(o, "ref", json_string(job->ref));
	if (job->keep_going)
		bad |= json_object_set_new(o, "keep_going", json_true());
	return bad;
}

/* A train's own fields: method, cars, ref_prefix, car_refs, message. */
static int train_json(json_t *o, const rq_job *job)
{
	json_t *cars = json_array();
	int bad = !cars;

	for (size_t k = 0; !bad && k < job->ncars; k++)
		bad |= json_array_append_new(
		    cars, json_pack("{s:s, s:o, s:b}", "name", job->cars[k].name, "revisions",
				    strings_json(job->cars[k].revisions, job->cars[k].nrevisions),
				    "skip", job->cars[k].skip));
	bad |= json_object_set_new(o, "cars", cars);
	bad |= json_object_set_new(o, "method", json_string(rq_train_method_name(job->method)));
	if (job->ref_prefix)
		bad |= json_object_set_new(o, "ref_prefix", json_string(job->ref_prefix));
	bad |= json_object_set_new(o, "car_refs", json_boolean(!job->no_car_refs));
	if (job->message)
		bad |= json_object_set_new(o, "message", json_string(job->message));
	return bad;
}

/* A maintenance job: its mode, limits and group (o holds v, id and repo). */
static json_t *maintain_json(json_t *o, const rq_job *job, int bad)
{
	bad |= json_object_set_new(o, "mode", json_string("maintain"));
	bad |= json_object_set_new(o, "timeout_ms", json_integer(job->timeout_ms));
	if (job->reply_to)
		bad |= json_object_set_new(o, "reply_to", json_string(job->reply_to));
	if (job->submitted_at)
		bad |= json_object_set_new(o, "submitted_at", json_integer(job->submitted_at));
	if (job->group)
		bad |= json_object_set_new(o, "group", json_string(job->group));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *rq_job_to_json(const rq_job *job)
{
	static const char *const modes[] = {"onto", "advance", "revert"};
	json_t *o = json_object();
	int bad = !o;

	bad |= json_object_set_new(o, "v", json_integer(1));
	bad |= json_object_set_new(o, "id", json_string(job->id));
	bad |= json_object_set_new(o, "repo", json_string(job->repo));
	if (job->maintain)
		return maintain_json(o, job, bad);
	bad |= json_object_set_new(o, "mode", json_string(job->train ? "train" : modes[job->mode]));
	bad |= json_object_set_new(o, "target", json_string(job->target));
	bad |= !o || (job->train ? train_json(o, job) : replay_json(o, job));
	bad |=
	    json_object_set_new(o, "ref_action", json_string(job->ref_update ? "update" : "print"));
	bad |= json_object_set_new(o, "empty", json_string(rq_replay_empty_names[job->empty]));
	if (job->has_name || job->has_time)
		bad |= json_object_set_new(o, "committer", committer_json(job));
	bad |= json_object_set_new(o, "timeout_ms", json_integer(job->timeout_ms));
	bad |= json_object_set_new(o, "max_commits", json_integer((json_int_t)job->max_commits));
	if (job->reply_to)
		bad |= json_object_set_new(o, "reply_to", json_string(job->reply_to));
	if (job->submitted_at)
		bad |= json_object_set_new(o, "submitted_at", json_integer(job->submitted_at));
	if (job->sign) /* only when set: a job without it keeps its content */
		bad |= json_object_set_new(o, "sign", json_true());
	if (job->group) /* the same */
		bad |= json_object_set_new(o, "group", json_string(job->group));
	if (job->retry_moved) /* the same */
		bad |= json_object_set_new(o, "on_ref_moved", json_string("retry"));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *rq_job_content(const rq_job *job)
{
	json_t *o = rq_job_to_json(job);
	char *s;

	if (!o)
		return NULL;
	json_object_del(o, "submitted_at");
	json_object_del(o, "reply_to");
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

int rq_job_digest(const char *text, size_t len, char out[41])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[20];
	char *content = NULL;
	rq_sha1 s;
	rq_job job;
	rq_error err;

	if (rq_job_parse(text, len, &job, NULL, &err) == 0) {
		content = rq_job_content(&job);
		rq_job_free(&job);
		if (!content)
			return -1;
	}
	rq_sha1_init(&s);
	/* (the claim hashes the text a worker hands it: up to a NUL) */
	rq_sha1_update(&s, content ? content : text,
		       content ? strlen(content) : strnlen(text, len));
	rq_sha1_final(&s, md);
	for (int i = 0; i < 20; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[40] = '\0';
	free(content);
	return 0;
}

void rq_job_replay_opts(const rq_job *job, rq_replay_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = job->mode;
	o->target = job->target;
	o->contained = job->contained;
	o->ref = job->ref;
	o->revisions = (const char *const *)job->revisions;
	o->nrevisions = job->nrevisions;
	o->empty = job->empty;
	o->max_commits = job->max_commits;
	o->keep_going = job->keep_going;
}

int64_t rq_job_default_time(const rq_job *job, const char *entry_id)
{
	if (job->submitted_at)
		return job->submitted_at / 1000;
	if (entry_id && *entry_id) {
		long long ms = strtoll(entry_id, NULL, 10);
		if (ms > 0)
			return ms / 1000;
	}
	return (int64_t)time(NULL);
}
