/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log: JSON-lines logging for the worker.
 */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static const char *const level_names[] = {"debug", "info", "warn", "error"};
static int min_level = RQ_LOG_INFO;
static char worker_name[128] = "";

int rq_log_setup(const char *level, const char *worker)
{
	if (worker)
		snprintf(worker_name, sizeof(worker_name), "%s", worker);
	if (!level)
		return 0;
	for (int i = 0; i < 4; i++)
		if (!strcmp(level, level_names[i])) {
			min_level = i;
			return 0;
		}
	return -1;
}

/* The line, compact; NULL when memory runs out. */
static char *log_line(const char *ts, int level, const char *msg, json_t *extra)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "time", ts, "level", level_names[level],
			      "worker", worker_name, "msg", msg);
	char *line = NULL;

	if (o && (!extra || !json_is_object(extra) || json_object_update(o, extra) == 0))
		line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(o);
	return line;
}

void rq_log(int level, const char *msg, json_t *extra)
{
	struct timeval tv;
	struct tm tm;
	char ts[96];
	char *line;

	if (level < min_level) {
		json_decref(extra);
		return;
	}
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long)(tv.tv_usec / 1000));
	line = log_line(ts, level, msg, extra);
	json_decref(extra);
	if (line)
		fprintf(stderr, "%s\n", line);
	else /* a line that says a line was lost (no JSON library needed) */
		fprintf(stderr,
			"{\"time\":\"%s\",\"level\":\"error\",\"msg\":\"out of memory: a log line "
			"was lost\"}\n",
			ts);
	fflush(stderr);
	free(line);
}
