/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log: one JSON object per line on stderr (time, level, worker, message
 * and any fields given), filtered by level.
 */
#ifndef RQ_LOG_H
#define RQ_LOG_H

#include <jansson.h>

enum { RQ_LOG_DEBUG, RQ_LOG_INFO, RQ_LOG_WARN, RQ_LOG_ERROR };

/* Set the level ("debug", "info", "warn", "error") and worker name. */
int rq_log_setup(const char *level, const char *worker);
/*
 * Log msg with the fields of extra (stolen; may be NULL). Fields are best
 * effort: a caller whose json_pack found no memory passes NULL, and the
 * line goes without them; a line that cannot be made at all is replaced
 * by one that says so.
 */
void rq_log(int level, const char *msg, json_t *extra);

#endif
