/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_approxidate: approximate dates as git's approxidate reads them (see
 * rq_approxidate.h). Follows git's date.c (approxidate_str,
 * approxidate_alpha, approxidate_digit, match_multi_number, update_tm,
 * pending_number); the code is replayq's.
 */
#include "rq_approxidate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The date being read: the fields set so far (-1: not yet), "now", the
 * number waiting for a unit, and whether any word was understood. */
typedef struct approx {
	struct tm tm;
	struct tm now;
	time_t now_t;
	long num;
	int touched;
} approx;

int64_t rq_approxidate_now(void)
{
	const char *t = getenv("GIT_TEST_DATE_NOW");
	char *end;
	long long v;

	if (t && *t) {
		v = strtoll(t, &end, 10);
		if (!*end)
			return v;
	}
	return (int64_t)time(NULL);
}

/*
 * How many letters of word s spells, case-insensitively: s's run of
 * letters and digits must be a prefix of name (0 if it goes on past it or
 * differs), as git's match_string.
 */
static size_t word_match(const char *s, const char *name)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (toupper((unsigned char)s[i]) == toupper((unsigned char)name[i]))
			continue;
		if (!isalnum((unsigned char)s[i]))
			break;
		return 0;
	}
	return i;
}

/*
 * Fill the day, month and year not given from now (a month later in the
 * year than now's means last year), move back sec seconds and normalise,
 * as git's update_tm. A day of the month below -1 is a deferred "that
 * many days before today" (-2: yesterday), taken only when nothing else
 * moved the time. Returns the resulting epoch.
 */
static time_t move_back(approx *a, time_t sec)
{
	time_t t;

	if (a->tm.tm_mday < 0) {
		int days = -(a->tm.tm_mday + 1);
		if (sec == 0 && days > 0)
			sec = (time_t)days * 24 * 60 * 60;
		a->tm.tm_mday = a->now.tm_mday;
	}
	if (a->tm.tm_mon < 0)
		a->tm.tm_mon = a->now.tm_mon;
	if (a->tm.tm_year < 0) {
		a->tm.tm_year = a->now.tm_year;
		if (a->tm.tm_mon > a->now.tm_mon)
			a->tm.tm_year--;
	}
	t = mktime(&a->tm) - sec;
	localtime_r(&t, &a->tm);
	return t;
}

/* A number no unit claimed: a day of the month, else a month, else a
 * year (git's pending_number). */
static void settle_number(approx *a)
{
	long n = a->num;

	if (!n)
		return;
	a->num = 0;
	if (a->tm.tm_mday < 0 && n < 32)
		a->tm.tm_mday = (int)n;
	else if (a->tm.tm_mon < 0 && n < 13)
		a->tm.tm_mon = (int)n - 1;
	else if (a->tm.tm_year < 0) {
		if (n > 1969 && n < 2100)
			a->tm.tm_year = (int)n - 1900;
		else if (n > 69 && n < 100)
			a->tm.tm_year = (int)n;
		else if (n < 38)
			a->tm.tm_year = 100 + (int)n;
	}
}

/* "noon", "midnight", "tea": that hour today, or yesterday if it is still
 * to come and no day was given (git's date_time: the day is deferred, so
 * that "noon yesterday" is yesterday's noon). */
static void set_hour(approx *a, int hour)
{
	if (a->tm.tm_mday < 0 && a->tm.tm_hour < hour)
		a->tm.tm_mday = -2;
	a->tm.tm_hour = hour;
	a->tm.tm_min = 0;
	a->tm.tm_sec = 0;
}

static void at_hour(approx *a, int hour)
{
	settle_number(a);
	set_hour(a, hour);
}

/* "today": the current day (midnight when no time was given), whatever
 * day was named before. */
static void today(approx *a)
{
	if (a->tm.tm_hour == a->now.tm_hour && a->tm.tm_min == a->now.tm_min &&
	    a->tm.tm_sec == a->now.tm_sec)
		set_hour(a, 0);
	a->num = 0;
	a->tm.tm_mday = -1;
	move_back(a, 0);
}

/* "PM" / "AM": the pending number (or the hour so far) on that half. */
static void half_day(approx *a, int pm)
{
	int hour = a->tm.tm_hour;

	if (a->num) {
		hour = (int)a->num;
		a->tm.tm_min = 0;
		a->tm.tm_sec = 0;
	}
	a->num = 0;
	a->tm.tm_hour = hour % 12 + (pm ? 12 : 0);
}

/* The special words, matched whole (git's special[] table). */
static int special_word(approx *a, const char *w)
{
	static const char *const names[] = {"yesterday", "noon",  "midnight", "tea",  "PM",
					    "AM",	 "never", "now",      "today"};
	size_t k;
	time_t zero = 0;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (word_match(w, names[k]) == strlen(names[k]))
			break;
	switch (k) {
	case 0:
		a->num = 0;
		a->tm.tm_mday = -1;
		move_back(a, 24 * 60 * 60);
		return 1;
	case 1:
	case 2:
	case 3:
		at_hour(a, k == 1 ? 12 : k == 2 ? 0 : 17);
		return 1;
	case 4:
	case 5:
		half_day(a, k == 4);
		return 1;
	case 6:
		localtime_r(&zero, &a->tm);
		a->num = 0;
		return 1;
	case 7:
		a->num = 0;
		move_back(a, 0);
		return 1;
	case 8:
		today(a);
		return 1;
	}
	return 0;
}

/* "one" to "ten" and "last" (1), when no number is pending. */
static int number_word(approx *a, const char *w)
{
	static const char *const names[] = {"one", "two",   "three", "four", "five",
					    "six", "seven", "eight", "nine", "ten"};

	for (size_t k = 0; k < 10; k++)
		if (word_match(w, names[k]) == strlen(names[k])) {
			a->num = (long)k + 1;
			return 1;
		}
	if (word_match(w, "last") == 4) {
		a->num = 1;
		return 1;
	}
	return 0;
}

/* "N weekdays": back to the N-th such weekday before today (git's rule:
 * "last friday" on a Friday is a week ago). */
static void weekday_back(approx *a, int wday)
{
	long n = a->num - 1;
	long diff = a->tm.tm_wday - wday;

	a->num = 0;
	if (diff <= 0)
		n++;
	diff += 7 * n;
	move_back(a, (time_t)diff * 24 * 60 * 60);
}

/* "N months" / "N years": calendar arithmetic on the fields. */
static void calendar_back(approx *a, int years)
{
	move_back(a, 0);
	if (years) {
		a->tm.tm_year -= (int)a->num;
	} else {
		long m = a->tm.tm_mon - a->num;
		while (m < 0) {
			m += 12;
			a->tm.tm_year--;
		}
		a->tm.tm_mon = (int)m;
	}
	a->num = 0;
}

/* A unit after a pending number: 1 when w was one. */
static int unit_word(approx *a, const char *w)
{
	static const char *const units[] = {"seconds", "minutes", "hours", "days", "weeks"};
	static const time_t secs[] = {1, 60, 60 * 60, 24 * 60 * 60, 7 * 24 * 60 * 60};
	static const char *const days[] = {"Sundays",	"Mondays", "Tuesdays", "Wednesdays",
					   "Thursdays", "Fridays", "Saturdays"};

	for (size_t k = 0; k < 5; k++)
		if (word_match(w, units[k]) >= strlen(units[k]) - 1) {
			move_back(a, secs[k] * (time_t)a->num);
			a->num = 0;
			return 1;
		}
	for (int k = 0; k < 7; k++)
		if (word_match(w, days[k]) >= 3) {
			weekday_back(a, k);
			return 1;
		}
	if (word_match(w, "months") >= 5 || word_match(w, "years") >= 4) {
		calendar_back(a, word_match(w, "years") >= 4);
		return 1;
	}
	return 0;
}

/* A word of letters (git's approxidate_alpha): a month name, a special
 * word, a number word, or a unit for the pending number. */
static const char *alpha_word(approx *a, const char *w)
{
	static const char *const months[] = {"January",	  "February", "March",	  "April",
					     "May",	  "June",     "July",	  "August",
					     "September", "October",  "November", "December"};
	const char *end = w + 1;

	while (isalpha((unsigned char)*end))
		end++;
	for (int k = 0; k < 12; k++)
		if (word_match(w, months[k]) >= 3) {
			a->tm.tm_mon = k;
			a->touched = 1;
			return end;
		}
	if (special_word(a, w) || (!a->num && number_word(a, w)) || (a->num && unit_word(a, w)))
		a->touched = 1;
	return end;
}

/* The epoch of broken-down UTC fields, 1970-2099 only, else -1 (git's
 * tm_to_time_t, which ignores the weekday and the day of the year). */
static time_t fields_epoch(const struct tm *tm)
{
	static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
	long year = tm->tm_year - 70, month = tm->tm_mon, day = tm->tm_mday;

	if (year < 0 || year > 129 || month < 0 || month > 11)
		return -1;
	if (month < 2 || (year + 2) % 4)
		day--;
	return (time_t)((year * 365 + (year + 1) / 4 + before[month] + day) * 24 * 60 * 60 +
			tm->tm_hour * 60 * 60 + tm->tm_min * 60 + tm->tm_sec);
}

/*
 * Take year, month, day (year -1: not given) if they make a date; with
 * refuse (now's UTC fields), a date more than ten days ahead of now is
 * refused (git's set_date). 0 taken, -1 not.
 */
static int take_date(approx *a, long year, long month, long day, const struct tm *refuse)
{
	struct tm check = a->tm, *r = refuse ? &check : &a->tm;

	if (month <= 0 || month >= 13 || day <= 0 || day >= 32)
		return -1;
	r->tm_mon = (int)month - 1;
	r->tm_mday = (int)day;
	if (year == -1) {
		if (!refuse)
			return 0;
		r->tm_year = refuse->tm_year;
	} else if (year >= 1970 && year < 2100)
		r->tm_year = (int)year - 1900;
	else if (year > 70 && year < 100)
		r->tm_year = (int)year;
	else if (year < 38)
		r->tm_year = (int)year + 100;
	else
		return -1;
	if (!refuse)
		return 0;
	time_t when = fields_epoch(r);
	if (when != -1 && a->now_t + 10 * 24 * 3600 < when)
		return -1;
	a->tm.tm_mon = r->tm_mon;
	a->tm.tm_mday = r->tm_mday;
	if (year != -1)
		a->tm.tm_year = r->tm_year;
	return 0;
}

/* n1 c n2 [c n3] as a date, in git's order of guesses. */
static int take_date_guess(approx *a, long n1, char c, long n2, long n3)
{
	struct tm now_utc, *refuse = gmtime_r(&a->now_t, &now_utc) ? &now_utc : NULL;

	if (n1 > 70 && (!take_date(a, n1, n2, n3, NULL) || !take_date(a, n1, n3, n2, NULL)))
		return 0;
	if (c != '.' && !take_date(a, n3, n1, n2, refuse))
		return 0;
	if (!take_date(a, n3, n2, n1, refuse))
		return 0;
	if (c == '.' && !take_date(a, n3, n1, n2, refuse))
		return 0;
	return -1;
}

/* "h:m[:s]" or a date "a-b[-c]" (also with '/' and '.'), as git's
 * match_multi_number; returns where it ends, or NULL when it is neither. */
static const char *multi_number(approx *a, long n1, const char *p)
{
	char c = *p, *end;
	long n2 = strtol(p + 1, &end, 10), n3 = -1;

	if (*end == c && isdigit((unsigned char)end[1]))
		n3 = strtol(end + 1, &end, 10);
	if (c == ':') {
		if (n3 < 0)
			n3 = 0;
		if (n1 < 0 || n1 > 24 || n2 < 0 || n2 >= 60 || n3 < 0 || n3 > 60)
			return NULL;
		a->tm.tm_hour = (int)n1;
		a->tm.tm_min = (int)n2;
		a->tm.tm_sec = (int)n3;
		return end;
	}
	return take_date_guess(a, n1, c, n2, n3) == 0 ? end : NULL;
}

/* A run of digits (git's approxidate_digit). */
static const char *digit_word(approx *a, const char *w)
{
	char *end;
	long n = strtol(w, &end, 10);

	if (strchr(":./-", *end) && *end && isdigit((unsigned char)end[1])) {
		const char *after = multi_number(a, n, end);
		if (after)
			return after;
	}
	if (w[0] != '0' || end - w <= 2)
		a->num = n;
	return end;
}

int rq_approxidate(const char *s, int64_t now, int64_t *out)
{
	approx a;

	memset(&a, 0, sizeof(a));
	a.now_t = (time_t)now;
	if (!localtime_r(&a.now_t, &a.tm))
		return -1;
	a.now = a.tm;
	a.tm.tm_year = a.tm.tm_mon = a.tm.tm_mday = -1;
	while (*s) {
		if (isdigit((unsigned char)*s)) {
			settle_number(&a);
			s = digit_word(&a, s);
			a.touched = 1;
		} else if (isalpha((unsigned char)*s)) {
			s = alpha_word(&a, s);
		} else {
			s++;
		}
	}
	settle_number(&a);
	if (!a.touched)
		return -1;
	*out = (int64_t)move_back(&a, 0);
	return 0;
}
