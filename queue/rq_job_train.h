/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job_train: the fields of a merge train job ("mode":"train", see
 * rq_job.h): "method", "cars", "ref_prefix", "car_refs", "message";
 * parsed and validated for rq_job_parse, and handed to the engine as
 * rq_train_opts.
 */
#ifndef RQ_JOB_TRAIN_H
#define RQ_JOB_TRAIN_H

#include <jansson.h>

#include "rq_job.h"

/* A train: "method", "ref_prefix", "car_refs", "message", "cars"; none
 * of a replay's own fields. 0, or -1 with err set. */
int rq_job_train_parse(json_t *o, rq_job *job, rq_error *err);

/* A train job's options; cars (job->ncars of them) is filled too. Valid
 * while job lives. */
void rq_job_train_opts(const rq_job *job, rq_train_opts *opts, rq_train_car *cars);

#endif
