/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job_field: one field of a job's JSON read with its type and bounds
 * checked (see rq_job_field.h).
 */
#include "rq_job_field.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_job.h"
#include "rq_revs.h"

int rq_job_field_bad(rq_error *err, const char *fmt, const char *field)
{
	return rq_error_set(err, RQ_E_INVALID_JOB, fmt, field);
}

int rq_job_field_string(json_t *o, const char *key, int required, size_t max, char **out,
			rq_error *err)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return rq_job_field_bad(err, "field '%s' is required", key);
		return 0;
	}
	if (!json_is_string(v))
		return rq_job_field_bad(err, "field '%s' must be a string", key);
	if (json_string_length(v) == 0 && required)
		return rq_job_field_bad(err, "field '%s' must not be empty", key);
	if (json_string_length(v) > max)
		return rq_error_set(err, RQ_E_INVALID_JOB, "field '%s' is longer than %zu bytes",
				    key, max);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return rq_job_field_bad(err, "field '%s' contains a NUL byte", key);
	if (!(*out = strdup(json_string_value(v))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return 0;
}

int rq_job_field_bool(json_t *o, const char *key, int *out, rq_error *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return rq_job_field_bad(err, "field '%s' must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

int rq_job_field_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *out,
		     rq_error *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return rq_job_field_bad(err, "field '%s' must be an integer", key);
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return rq_error_set(err, RQ_E_INVALID_JOB,
				    "field '%s' must be between %lld and %lld", key, (long long)min,
				    (long long)max);
	*out = json_integer_value(v);
	return 0;
}

/* A field that names one of names (NULL-terminated): its index in *out
 * (left alone when the field is absent and not required); said: the
 * names for the message. */
int rq_job_field_choice(json_t *o, const char *key, int required, const char *const *names,
			const char *said, int *out, rq_error *err)
{
	char *v = NULL;
	int rc = 0;

	if (rq_job_field_string(o, key, required, 16, &v, err) < 0)
		return -1;
	if (v) {
		rc = rq_error_set(err, RQ_E_INVALID_JOB, "field '%s' must be %s", key, said);
		for (int i = 0; names[i]; i++)
			if (!strcmp(v, names[i])) {
				*out = i;
				rc = 0;
			}
	}
	free(v);
	return rc;
}

/* A field of names that is there: the first, as an error (fmt names it). */
int rq_job_field_absent(json_t *o, const char *const *names, const char *fmt, rq_error *err)
{
	for (int i = 0; names[i]; i++)
		if (json_object_get(o, names[i]))
			return rq_error_set(err, RQ_E_INVALID_JOB, fmt, names[i]);
	return 0;
}

/* Each revision (field[i]: what messages call it): not empty, not too
 * long; a revision-walk option must be printable and one replayq takes;
 * a revision has no space, control character, ':' or '\\'. */
int rq_job_field_revision(const char *s, size_t len, const char *field, size_t i, int syntax,
			  rq_error *err)
{
	rq_error why;

	if (!*s || len > RQ_JOB_REV_LEN_MAX || strlen(s) != len)
		return rq_error_set(err, RQ_E_BAD_REVISION, "%s[%zu] is empty or too long", field,
				    i);
	if (s[0] == '-') { /* a revision-walk option: printable, known, valid */
		for (const char *p = s; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				return rq_error_set(err, RQ_E_BAD_REVISION,
						    "%s[%zu] holds a control character", field, i);
		if (rq_revs_option_check(s, syntax, &why) < 0)
			return rq_error_set(err, RQ_E_BAD_REVISION,
					    "%s[%zu] is not a revision-walk option "
					    "replayq takes: '%.64s' (%.300s)",
					    field, i, s, why.msg);
		return 0;
	}
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == ':' || *p == '\\')
			return rq_error_set(err, RQ_E_BAD_REVISION,
					    "%s[%zu] holds a character not allowed in a "
					    "revision: '%.64s'",
					    field, i, s);
	return 0;
}
