/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_approxidate: the approximate dates git takes for --since and --until
 * ("2.weeks.ago", "yesterday", "last friday", "noon", "dec 5", "10am",
 * "1.month.2.days.ago", "never"), read as git's approxidate reads them
 * (git's date.c, approxidate_str and its helpers: the algorithm is git's,
 * the code replayq's).
 *
 * A date is read word by word against the current local time: a number is
 * held until the next word says what it counts (seconds to years, a
 * weekday, a month) or, at the end, taken as a day of the month, a month or
 * a year; "N units" moves the time back by N units (calendar months and
 * years, fixed lengths below); special words set the day or the hour.
 * Calendar arithmetic uses the process's time zone (mktime, localtime_r),
 * as git does. "Now" is the time of the call, or GIT_TEST_DATE_NOW (an
 * epoch) when it is set, as git's tests set it.
 */
#ifndef RQ_APPROXIDATE_H
#define RQ_APPROXIDATE_H

#include <stdint.h>

/* The time approximate dates are relative to: GIT_TEST_DATE_NOW, or now. */
int64_t rq_approxidate_now(void);

/*
 * Read s relative to now into *out (an epoch). 0 when a word of s was
 * understood (the result then follows git's, whatever the other words);
 * -1 when none was (git would take such a string as "now"; replayq
 * refuses it).
 */
int rq_approxidate(const char *s, int64_t now, int64_t *out);

#endif
