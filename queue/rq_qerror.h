/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_qerror: the error codes of the queue and the worker, above the core's
 * (core/base/rq_error.h), and the names of every code a job result can
 * carry.
 *
 * The core knows nothing of jobs, deadlines or Redis; these codes are for
 * what happens around a replay when it runs as a job. Their names are
 * part of the result format (README, "Error codes") and never change.
 */
#ifndef RQ_QERROR_H
#define RQ_QERROR_H

#include "rq_error.h"

enum rq_queue_code {
	RQ_E_INVALID_JOB = RQ_E_CORE_END, /* a job that is not valid JSON or breaks a rule */
	RQ_E_TIMEOUT,			  /* a job ran past its deadline */
	RQ_E_DEAD,			  /* a job dead-lettered after too many deliveries */
	RQ_E_REDIS,			  /* the queue server failed or refused a command */
	RQ_E_SIGN_UNAVAILABLE,		  /* a job asks for signing from a worker with no key */
	RQ_E_ID_CONFLICT,		  /* a job id taken by another job with different content */
	RQ_E_QUEUE_END			  /* one past the last code of any layer */
};

/*
 * Stable snake_case name of any code, the core's included ("invalid_job",
 * "bad_revision", ...); "internal" for a value that is no code.
 */
const char *rq_qerror_name(rq_code code);

#endif
