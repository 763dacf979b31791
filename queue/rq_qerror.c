/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_qerror: names of the queue's codes; the core names its own.
 */
#include "rq_qerror.h"

static const char *const queue_names[RQ_E_QUEUE_END - RQ_E_CORE_END] = {
    [RQ_E_INVALID_JOB - RQ_E_CORE_END] = "invalid_job",
    [RQ_E_TIMEOUT - RQ_E_CORE_END] = "timeout",
    [RQ_E_DEAD - RQ_E_CORE_END] = "dead_letter",
    [RQ_E_REDIS - RQ_E_CORE_END] = "redis",
    [RQ_E_SIGN_UNAVAILABLE - RQ_E_CORE_END] = "sign_unavailable",
    [RQ_E_ID_CONFLICT - RQ_E_CORE_END] = "id_conflict",
};

const char *rq_qerror_name(rq_code code)
{
	if (code >= RQ_E_CORE_END && code < RQ_E_QUEUE_END)
		return queue_names[code - RQ_E_CORE_END];
	return rq_error_code_name(code);
}
