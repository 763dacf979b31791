/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of rq_approxidate: approximate dates read as git reads them.
 * The expected epochs were printed by upstream git 2.55
 * (`GIT_TEST_DATE_NOW=<now> TZ=<zone> git rev-parse --since=<date>`), for
 * two zones (one with summer time) and two "now"s (one on the day summer
 * time starts in New York); tests/integration/revwalk.sh compares replays
 * with such dates against upstream git replay itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "rq_approxidate.h"

static const struct {
	const char *tz;
	int64_t now;
	const char *date;
	int64_t want;
} cases[] = {
    {"UTC", 1800000000, "2.days.ago", 1799827200},
    {"UTC", 1800000000, "1.year.ago", 1768464000},
    {"UTC", 1800000000, "yesterday", 1799913600},
    {"UTC", 1800000000, "3 hours ago", 1799989200},
    {"UTC", 1800000000, "last week", 1799395200},
    {"UTC", 1800000000, "noon", 1799928000},
    {"UTC", 1800000000, "1 month ago", 1797321600},
    {"UTC", 1800000000, "12:30", 1800016200},
    {"UTC", 1800000000, "last friday", 1799395200},
    {"UTC", 1800000000, "3.fridays.ago", 1798185600},
    {"UTC", 1800000000, "two weeks ago", 1798790400},
    {"UTC", 1800000000, "dec 5", 1796457600},
    {"UTC", 1800000000, "1.month.2.days.ago", 1797148800},
    {"UTC", 1800000000, "10am", 1800007200},
    {"UTC", 1800000000, "3pm yesterday", 1799938800},
    {"UTC", 1800000000, "never", 0},
    {"UTC", 1800000000, "06.months", 1784102400},
    {"UTC", 1800000000, "midnight", 1799971200},
    {"UTC", 1800000000, "tea", 1799946000},
    {"UTC", 1800000000, "1.5.2026", 1777622400},
    {"UTC", 1800000000, "05/01/26", 1777622400},
    {"UTC", 1800000000, "2026.03.04", 1772611200},
    {"UTC", 1800000000, "now", 1800000000},
    {"UTC", 1800000000, "ten years ago", 1484467200},
    {"UTC", 1800000000, "feb 29", 1772352000},
    {"UTC", 1800000000, "13 months ago", 1765785600},
    {"UTC", 1800000000, "noon yesterday", 1799928000},
    {"UTC", 1800000000, "yesterday 10:30", 1799922600},
    {"UTC", 1800000000, "last sunday", 1799568000},
    {"UTC", 1800000000, "12am", 1799971200},
    {"UTC", 1800000000, "jan 31 2025", 1738310400},
    {"UTC", 1800000000, "31.12.2025", 1767168000},
    {"UTC", 1800000000, "4 days 3 hours ago", 1799643600},
    {"UTC", 1800000000, "today", 1799971200},
    {"UTC", 1800000000, "noon today", 1800014400},
    {"UTC", 1800000000, "jan 5 today", 1799971200},
    {"UTC", 1800000000, "tea last saturday", 1799514000},
    {"UTC", 1800000000, "5 noon", 1799150400},
    {"UTC", 1800000000, "9:15am yesterday", 1799918100},
    {"UTC", 1710054000, "2.days.ago", 1709881200},
    {"UTC", 1710054000, "1.year.ago", 1678431600},
    {"UTC", 1710054000, "yesterday", 1709967600},
    {"UTC", 1710054000, "3 hours ago", 1710043200},
    {"UTC", 1710054000, "last week", 1709449200},
    {"UTC", 1710054000, "noon", 1709985600},
    {"UTC", 1710054000, "1 month ago", 1707548400},
    {"UTC", 1710054000, "12:30", 1710073800},
    {"UTC", 1710054000, "last friday", 1709881200},
    {"UTC", 1710054000, "3.fridays.ago", 1708671600},
    {"UTC", 1710054000, "two weeks ago", 1708844400},
    {"UTC", 1710054000, "dec 5", 1701759600},
    {"UTC", 1710054000, "1.month.2.days.ago", 1707375600},
    {"UTC", 1710054000, "10am", 1710064800},
    {"UTC", 1710054000, "3pm yesterday", 1709996400},
    {"UTC", 1710054000, "never", 0},
    {"UTC", 1710054000, "06.months", 1694329200},
    {"UTC", 1710054000, "midnight", 1710028800},
    {"UTC", 1710054000, "tea", 1710003600},
    {"UTC", 1710054000, "1.5.2026", 1777618800},
    {"UTC", 1710054000, "05/01/26", 1706252400},
    {"UTC", 1710054000, "2026.03.04", 1772607600},
    {"UTC", 1710054000, "now", 1710054000},
    {"UTC", 1710054000, "ten years ago", 1394434800},
    {"UTC", 1710054000, "feb 29", 1709190000},
    {"UTC", 1710054000, "13 months ago", 1676012400},
    {"UTC", 1710054000, "noon yesterday", 1709985600},
    {"UTC", 1710054000, "yesterday 10:30", 1709980200},
    {"UTC", 1710054000, "last sunday", 1709449200},
    {"UTC", 1710054000, "12am", 1710028800},
    {"UTC", 1710054000, "jan 31 2025", 1738306800},
    {"UTC", 1710054000, "31.12.2025", 1767164400},
    {"UTC", 1710054000, "4 days 3 hours ago", 1709697600},
    {"UTC", 1710054000, "today", 1710028800},
    {"UTC", 1710054000, "noon today", 1710072000},
    {"UTC", 1710054000, "jan 5 today", 1704844800},
    {"UTC", 1710054000, "tea last saturday", 1710003600},
    {"UTC", 1710054000, "5 noon", 1709640000},
    {"UTC", 1710054000, "9:15am yesterday", 1709975700},
    {"America/New_York", 1800000000, "2.days.ago", 1799827200},
    {"America/New_York", 1800000000, "1.year.ago", 1768464000},
    {"America/New_York", 1800000000, "yesterday", 1799913600},
    {"America/New_York", 1800000000, "3 hours ago", 1799989200},
    {"America/New_York", 1800000000, "last week", 1799395200},
    {"America/New_York", 1800000000, "noon", 1799946000},
    {"America/New_York", 1800000000, "1 month ago", 1797321600},
    {"America/New_York", 1800000000, "12:30", 1800034200},
    {"America/New_York", 1800000000, "last friday", 1799395200},
    {"America/New_York", 1800000000, "3.fridays.ago", 1798185600},
    {"America/New_York", 1800000000, "two weeks ago", 1798790400},
    {"America/New_York", 1800000000, "dec 5", 1796457600},
    {"America/New_York", 1800000000, "1.month.2.days.ago", 1797148800},
    {"America/New_York", 1800000000, "10am", 1800025200},
    {"America/New_York", 1800000000, "3pm yesterday", 1799956800},
    {"America/New_York", 1800000000, "never", 0},
    {"America/New_York", 1800000000, "06.months", 1784102400},
    {"America/New_York", 1800000000, "midnight", 1799989200},
    {"America/New_York", 1800000000, "tea", 1799964000},
    {"America/New_York", 1800000000, "1.5.2026", 1777622400},
    {"America/New_York", 1800000000, "05/01/26", 1777622400},
    {"America/New_York", 1800000000, "2026.03.04", 1772611200},
    {"America/New_York", 1800000000, "now", 1800000000},
    {"America/New_York", 1800000000, "ten years ago", 1484467200},
    {"America/New_York", 1800000000, "feb 29", 1772352000},
    {"America/New_York", 1800000000, "13 months ago", 1765785600},
    {"America/New_York", 1800000000, "noon yesterday", 1799946000},
    {"America/New_York", 1800000000, "yesterday 10:30", 1799940600},
    {"America/New_York", 1800000000, "last sunday", 1799568000},
    {"America/New_York", 1800000000, "12am", 1799989200},
    {"America/New_York", 1800000000, "jan 31 2025", 1738310400},
    {"America/New_York", 1800000000, "31.12.2025", 1767168000},
    {"America/New_York", 1800000000, "4 days 3 hours ago", 1799643600},
    {"America/New_York", 1800000000, "today", 1799989200},
    {"America/New_York", 1800000000, "noon today", 1800032400},
    {"America/New_York", 1800000000, "jan 5 today", 1799989200},
    {"America/New_York", 1800000000, "tea last saturday", 1799532000},
    {"America/New_York", 1800000000, "5 noon", 1799168400},
    {"America/New_York", 1800000000, "9:15am yesterday", 1799936100},
    {"America/New_York", 1710054000, "2.days.ago", 1709881200},
    {"America/New_York", 1710054000, "1.year.ago", 1678431600},
    {"America/New_York", 1710054000, "yesterday", 1709967600},
    {"America/New_York", 1710054000, "3 hours ago", 1710043200},
    {"America/New_York", 1710054000, "last week", 1709449200},
    {"America/New_York", 1710054000, "noon", 1710000000},
    {"America/New_York", 1710054000, "1 month ago", 1707548400},
    {"America/New_York", 1710054000, "12:30", 1710088200},
    {"America/New_York", 1710054000, "last friday", 1709881200},
    {"America/New_York", 1710054000, "3.fridays.ago", 1708671600},
    {"America/New_York", 1710054000, "two weeks ago", 1708844400},
    {"America/New_York", 1710054000, "dec 5", 1701759600},
    {"America/New_York", 1710054000, "1.month.2.days.ago", 1707375600},
    {"America/New_York", 1710054000, "10am", 1710079200},
    {"America/New_York", 1710054000, "3pm yesterday", 1710010800},
    {"America/New_York", 1710054000, "never", 0},
    {"America/New_York", 1710054000, "06.months", 1694329200},
    {"America/New_York", 1710054000, "midnight", 1710043200},
    {"America/New_York", 1710054000, "tea", 1710018000},
    {"America/New_York", 1710054000, "1.5.2026", 1777618800},
    {"America/New_York", 1710054000, "05/01/26", 1706252400},
    {"America/New_York", 1710054000, "2026.03.04", 1772607600},
    {"America/New_York", 1710054000, "now", 1710054000},
    {"America/New_York", 1710054000, "ten years ago", 1394434800},
    {"America/New_York", 1710054000, "feb 29", 1709190000},
    {"America/New_York", 1710054000, "13 months ago", 1676012400},
    {"America/New_York", 1710054000, "noon yesterday", 1710000000},
    {"America/New_York", 1710054000, "yesterday 10:30", 1709998200},
    {"America/New_York", 1710054000, "last sunday", 1709449200},
    {"America/New_York", 1710054000, "12am", 1710043200},
    {"America/New_York", 1710054000, "jan 31 2025", 1738306800},
    {"America/New_York", 1710054000, "31.12.2025", 1767164400},
    {"America/New_York", 1710054000, "4 days 3 hours ago", 1709697600},
    {"America/New_York", 1710054000, "today", 1710043200},
    {"America/New_York", 1710054000, "noon today", 1710086400},
    {"America/New_York", 1710054000, "jan 5 today", 1704859200},
    {"America/New_York", 1710054000, "tea last saturday", 1710018000},
    {"America/New_York", 1710054000, "5 noon", 1709654400},
    {"America/New_York", 1710054000, "9:15am yesterday", 1709990100},
};

static void test_as_upstream_git(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = -1;
		setenv("TZ", cases[i].tz, 1);
		tzset();
		if (rq_approxidate(cases[i].date, cases[i].now, &got) != 0 || got != cases[i].want)
			fail_msg("TZ=%s now=%lld '%s': got %lld, git says %lld", cases[i].tz,
				 (long long)cases[i].now, cases[i].date, (long long)got,
				 (long long)cases[i].want);
	}
	unsetenv("TZ");
	tzset();
}

static void test_unknown_words_refused(void **state)
{
	(void)state;
	int64_t out = 7;
	assert_int_equal(rq_approxidate("garbage", 1800000000, &out), -1);
	assert_int_equal(rq_approxidate("", 1800000000, &out), -1);
	assert_int_equal(rq_approxidate("--", 1800000000, &out), -1);
	assert_int_equal(out, 7);
}

static void test_now_from_git_test_date_now(void **state)
{
	(void)state;
	setenv("GIT_TEST_DATE_NOW", "1234567890", 1);
	assert_int_equal(rq_approxidate_now(), 1234567890);
	setenv("GIT_TEST_DATE_NOW", "12x", 1);
	assert_true(rq_approxidate_now() > 1700000000);
	unsetenv("GIT_TEST_DATE_NOW");
	assert_true(rq_approxidate_now() > 1700000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_as_upstream_git),
	    cmocka_unit_test(test_unknown_words_refused),
	    cmocka_unit_test(test_now_from_git_test_date_now),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
