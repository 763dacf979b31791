/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job_field: reading one field of a job's JSON (internal to the job's
 * modules, rq_job and rq_job_train): of the type and within the bounds it
 * must have, an error naming the field otherwise (RQ_E_INVALID_JOB; a
 * revision's, RQ_E_BAD_REVISION). A field that is absent or null is
 * left as it is (an error when it is required).
 */
#ifndef RQ_JOB_FIELD_H
#define RQ_JOB_FIELD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rq_qerror.h"

/* RQ_E_INVALID_JOB with fmt naming the field: -1. */
int rq_job_field_bad(rq_error *err, const char *fmt, const char *field);

/* A string of at most max bytes without a NUL, in *out (malloc'ed; NULL
 * when absent); required: present and not empty. */
int rq_job_field_string(json_t *o, const char *key, int required, size_t max, char **out,
			rq_error *err);
/* true or false, in *out. */
int rq_job_field_bool(json_t *o, const char *key, int *out, rq_error *err);
/* An integer within [min, max], in *out. */
int rq_job_field_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *out,
		     rq_error *err);

/* A field that names one of names (NULL-terminated): its index in *out
 * (left alone when the field is absent and not required); said: the
 * names for the message. */
int rq_job_field_choice(json_t *o, const char *key, int required, const char *const *names,
			const char *said, int *out, rq_error *err);

/* A field of names that is there: the first, as an error (fmt names it). */
int rq_job_field_absent(json_t *o, const char *const *names, const char *fmt, rq_error *err);

/* Each revision (field[i]: what messages call it): not empty, not too
 * long; a revision-walk option must be printable and one replayq takes
 * (syntax: the patterns' syntax the options give, rq_revs_syntax_option);
 * a revision has no space, control character, ':' or '\\'. */
int rq_job_field_revision(const char *s, size_t len, const char *field, size_t i, int syntax,
			  rq_error *err);

#endif
