/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job_train: a merge train job's own fields, parsed and validated,
 * and given to the engine (see rq_job_train.h).
 */
#include "rq_job_train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_job_field.h"

/* The fields a train job does not take. */
static const char *const replay_fields[] = {"revisions", "contained", "ref", "keep_going", NULL};

/* A train's ref_prefix: refs/<namespace>/ at least (the cars' refs are
 * <prefix><car name>: refs/ alone would let a car named "heads" write
 * refs/heads). */
static int prefix_a_job_may_use(const char *prefix)
{
	const char *slash = strchr(prefix + 5, '/');
	return rq_train_prefix_valid(prefix) && slash && slash > prefix + 5;
}

/* A car's revisions: 1-16 revisions (no walk options). */
static int parse_car_revisions(json_t *c, size_t k, rq_job_car *car, rq_error *err)
{
	json_t *a = json_object_get(c, "revisions"), *v;
	char field[48];
	size_t i;

	snprintf(field, sizeof(field), "cars[%zu].revisions", k);
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > RQ_JOB_CAR_REVS_MAX)
		return rq_error_set(err, RQ_E_INVALID_JOB,
				    "field '%s' must be an array of 1-%d strings", field,
				    RQ_JOB_CAR_REVS_MAX);
	if (!(car->revisions = calloc(json_array_size(a) + 1, sizeof(char *))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	json_array_foreach(a, i, v)
	{
		const char *s = json_string_value(v);
		if (!s)
			return rq_error_set(err, RQ_E_INVALID_JOB,
					    "field '%s' must be an array of 1-%d strings", field,
					    RQ_JOB_CAR_REVS_MAX);
		if (rq_job_field_revision(s, json_string_length(v), field, i, 0, err) < 0)
			return -1;
		if (s[0] == '-')
			return rq_error_set(err, RQ_E_BAD_REVISION,
					    "%s[%zu] must be a revision, not an option", field, i);
		if (!(car->revisions[i] = strdup(s)))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		car->nrevisions++;
	}
	return 0;
}

/* Car k: {"name", "revisions", "skip"}; a name no car before it has. */
static int parse_car(json_t *c, size_t k, rq_job *job, rq_error *err)
{
	rq_job_car *car = &job->cars[k];
	const char *key;
	json_t *v;

	if (!json_is_object(c))
		return rq_error_set(err, RQ_E_INVALID_JOB, "field 'cars[%zu]' must be an object",
				    k);
	json_object_foreach(c, key, v)
	{
		if (strcmp(key, "name") && strcmp(key, "revisions") && strcmp(key, "skip"))
			return rq_error_set(err, RQ_E_INVALID_JOB,
					    "unknown field 'cars[%zu].%.64s'", k, key);
	}
	v = json_object_get(c, "name");
	if (!json_is_string(v) || !rq_train_name_valid(json_string_value(v)) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return rq_error_set(
		    err, RQ_E_INVALID_JOB,
		    "field 'cars[%zu].name' must be 1-%d of [A-Za-z0-9._-], starting "
		    "with a letter or digit, without '..' or a '.lock' end",
		    k, RQ_TRAIN_NAME_MAX);
	for (size_t j = 0; j < k; j++)
		if (!strcmp(job->cars[j].name, json_string_value(v)))
			return rq_error_set(
			    err, RQ_E_INVALID_JOB,
			    "field 'cars[%zu].name': car '%s' is in the train twice", k,
			    job->cars[j].name);
	if (!(car->name = strdup(json_string_value(v))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rq_job_field_bool(c, "skip", &car->skip, err) < 0)
		return rq_error_set(err, RQ_E_INVALID_JOB,
				    "field 'cars[%zu].skip' must be true or false", k);
	return parse_car_revisions(c, k, car, err);
}

/* "cars": 1-200 cars, at most RQ_JOB_REVS_MAX revisions in all. */
static int parse_cars(json_t *o, rq_job *job, rq_error *err)
{
	json_t *a = json_object_get(o, "cars"), *v;
	size_t i, total = 0;

	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > RQ_TRAIN_CARS_MAX)
		return rq_error_set(
		    err, RQ_E_INVALID_JOB,
		    "field 'cars' is required with mode train: an array of 1-%d cars",
		    RQ_TRAIN_CARS_MAX);
	if (!(job->cars = calloc(json_array_size(a) + 1, sizeof(*job->cars))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	json_array_foreach(a, i, v)
	{
		job->ncars = i + 1; /* freed as far as it got */
		if (parse_car(v, i, job, err) < 0)
			return -1;
		total += job->cars[i].nrevisions;
	}
	if (total > RQ_JOB_REVS_MAX)
		return rq_error_set(err, RQ_E_INVALID_JOB, "the cars hold more than %d revisions",
				    RQ_JOB_REVS_MAX);
	return 0;
}

/* "message": a merge train's template, printable (newlines and tabs too). */
static int parse_message(json_t *o, rq_job *job, rq_error *err)
{
	if (rq_job_field_string(o, "message", 0, RQ_TRAIN_MESSAGE_MAX, &job->message, err) < 0)
		return -1;
	if (!job->message)
		return 0;
	if (!*job->message)
		return rq_job_field_bad(err, "field '%s' must not be empty", "message");
	if (job->method != RQ_TRAIN_MERGE)
		return rq_job_field_bad(err, "field '%s' needs method merge", "message");
	for (const char *p = job->message; *p; p++)
		if (((unsigned char)*p < ' ' && *p != '\n' && *p != '\t') || *p == 0x7f)
			return rq_job_field_bad(err, "field '%s' holds a control character",
						"message");
	return 0;
}

/* A train: "method", "ref_prefix", "car_refs", "message", "cars"; none
 * of a replay's own fields. */
int rq_job_train_parse(json_t *o, rq_job *job, rq_error *err)
{
	static const char *const methods[] = {"rebase", "merge", NULL};
	int method = RQ_TRAIN_REBASE, refs = 1;

	if (rq_job_field_absent(o, replay_fields, "field '%s' does not apply to mode train", err) <
		0 ||
	    rq_job_field_choice(o, "method", 0, methods, "rebase or merge", &method, err) < 0 ||
	    rq_job_field_bool(o, "car_refs", &refs, err) < 0)
		return -1;
	job->method = (rq_train_method)method;
	job->no_car_refs = !refs;
	if (rq_job_field_string(o, "ref_prefix", 0, RQ_TRAIN_PREFIX_MAX, &job->ref_prefix, err) < 0)
		return -1;
	if (job->ref_prefix && !prefix_a_job_may_use(job->ref_prefix))
		return rq_error_set(
		    err, RQ_E_BAD_REF,
		    "field 'ref_prefix' must be refs/<namespace>/... ending in '/' and make "
		    "valid ref names");
	if (parse_message(o, job, err) < 0)
		return -1;
	return parse_cars(o, job, err);
}

void rq_job_train_opts(const rq_job *job, rq_train_opts *o, rq_train_car *cars)
{
	memset(o, 0, sizeof(*o));
	for (size_t k = 0; k < job->ncars; k++) {
		cars[k].name = job->cars[k].name;
		cars[k].revisions = (const char *const *)job->cars[k].revisions;
		cars[k].nrevisions = job->cars[k].nrevisions;
		cars[k].skip = job->cars[k].skip;
	}
	o->target = job->target;
	o->method = job->method;
	o->cars = cars;
	o->ncars = job->ncars;
	o->ref_prefix = job->ref_prefix;
	o->no_refs = job->no_car_refs;
	o->message = job->message;
	o->empty = job->empty;
	o->max_commits = job->max_commits;
}
