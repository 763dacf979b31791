/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ident: date parsing, identity clean-up and formatting, default
 * identity, with git itself as the oracle.
 */
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rq_ident.h"

static tu_repo *repo;

/* Per-test: the group's environment, TZ=UTC. */
static int reset_env(void **state)
{
	(void)state;
	setenv("GIT_COMMITTER_NAME", TU_COMMITTER_NAME, 1);
	setenv("GIT_COMMITTER_EMAIL", TU_COMMITTER_EMAIL, 1);
	setenv("GIT_COMMITTER_DATE", "@1700000000 +0000", 1);
	unsetenv("EMAIL");
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	repo = tu_repo_new(0);
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(repo);
	repo = NULL;
	return tu_group_teardown(state);
}

/* What git records as "<epoch> <tz>" for a commit made with GIT_COMMITTER_DATE=s. */
static char *git_date(const char *s)
{
	char *out;

	assert_null(strchr(s, '\''));
	out = tu_capture(repo,
			 "GIT_COMMITTER_DATE='%s' git commit -q --allow-empty -m d && "
			 "git show -s --format=%%cd --date=raw HEAD",
			 s);
	assert_non_null(out);
	return out;
}

static void check_date_like_git(const char *s)
{
	int64_t t = -1;
	int tz = 9999;
	rq_error err;
	char mine[64];
	char *theirs = git_date(s);

	rq_error_clear(&err);
	if (rq_ident_parse_date(s, &t, &tz, &err) != 0)
		fail_msg("rq_ident_parse_date(\"%s\") failed: %s (git: %s)", s, err.msg, theirs);
	assert_int_equal(err.code, RQ_OK);
	snprintf(mine, sizeof(mine), "%" PRId64 " %c%02d%02d", t, tz < 0 ? '-' : '+', abs(tz) / 60,
		 abs(tz) % 60);
	if (strcmp(mine, theirs) != 0)
		fail_msg("date \"%s\": rq %s, git %s", s, mine, theirs);
	free(theirs);
}

static void test_date_epoch_forms(void **state)
{
	int64_t t;
	int tz;

	(void)state;
	assert_int_equal(rq_ident_parse_date("@1700000000 +0100", &t, &tz, NULL), 0);
	assert_int_equal(t, 1700000000);
	assert_int_equal(tz, 60);
	assert_int_equal(rq_ident_parse_date("1700000000 -0230", &t, &tz, NULL), 0);
	assert_int_equal(t, 1700000000);
	assert_int_equal(tz, -150);
	check_date_like_git("@1700000000 +0100");
	check_date_like_git("1700000000 -0230");
	check_date_like_git("@1700000000 +01:30");
	check_date_like_git("@1700000000 +01");
	check_date_like_git("  @1234567890 -0700");
}

static void test_date_iso8601(void **state)
{
	int64_t t;
	int tz;

	(void)state;
	assert_int_equal(rq_ident_parse_date("2005-04-07T22:13:13Z", &t, &tz, NULL), 0);
	assert_int_equal(t, 1112911993);
	assert_int_equal(tz, 0);
	assert_int_equal(rq_ident_parse_date("2005-04-07T22:13:13+02:00", &t, &tz, NULL), 0);
	assert_int_equal(t, 1112904793);
	assert_int_equal(tz, 120);
	check_date_like_git("2005-04-07T22:13:13Z");
	check_date_like_git("2005-04-07T22:13:13+02:00");
	check_date_like_git("2005-04-07 22:13:13 +0200");
	check_date_like_git("2005-04-07T22:13:13.123+05:30");
	check_date_like_git("2005-04-07T22:13:13-0800");
	check_date_like_git("2024-02-29T00:00:00+00:00");
	check_date_like_git("1999-12-31 23:59:59 -1200");
}

static void test_date_rfc2822(void **state)
{
	int64_t t;
	int tz;

	(void)state;
	assert_int_equal(rq_ident_parse_date("Thu, 07 Apr 2005 22:13:13 +0200", &t, &tz, NULL), 0);
	assert_int_equal(t, 1112904793);
	assert_int_equal(tz, 120);
	check_date_like_git("Thu, 07 Apr 2005 22:13:13 +0200");
	check_date_like_git("Thu, 07 Apr 2005 22:13:13 GMT");
	check_date_like_git("7 Apr 2005 22:13:13 -0700");
	check_date_like_git("Sun, 31 Dec 2023 23:59:59 +1400");
}

static void test_date_local_zone(void **state)
{
	int64_t t;
	int tz;

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(rq_ident_parse_date("2005-04-07 22:13:13", &t, &tz, NULL), 0);
	assert_int_equal(t, 1112911993);
	assert_int_equal(tz, 0);
	check_date_like_git("2005-04-07 22:13:13");
	check_date_like_git("2005-04-07T22:13:13");
	check_date_like_git("Thu, 07 Apr 2005 22:13:13");
	check_date_like_git("@1700000000");

	/* a zone with daylight saving time, if the system has it */
	if (!tu_exists("/usr/share/zoneinfo/Europe/Berlin"))
		return;
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	assert_int_equal(rq_ident_parse_date("2005-04-07 22:13:13", &t, &tz, NULL), 0);
	assert_int_equal(t, 1112904793);
	assert_int_equal(tz, 120);
	check_date_like_git("2005-04-07 22:13:13"); /* summer time */
	check_date_like_git("2005-01-07 22:13:13"); /* winter time */
	check_date_like_git("2005-03-27 02:30:00"); /* in the spring-forward gap */
	check_date_like_git("2005-10-30 02:30:00"); /* in the repeated hour */
	check_date_like_git("@1700000000");
	check_date_like_git("Thu, 07 Apr 2005 22:13:13");
}

/* Many generated dates in the three formats: rq and git (git var) agree on each. */
static void test_date_generated_like_git(void **state)
{
	enum { N = 120 };
	static const char *const wdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const mons[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	static const int zones[] = {0, 60, -60, 120, -300, 330, 345, -150, 840, -720, 545, 0};
	char dates[N][64];
	char *cmd, *out, *line;
	size_t size = N * 128 + 1;
	unsigned long long x = 12345;

	(void)state;
	cmd = calloc(size, 1);
	assert_non_null(cmd);
	for (int i = 0; i < N; i++) {
		time_t t;
		struct tm tm;
		int tz = zones[i % (int)(sizeof(zones) / sizeof(zones[0]))], atz = abs(tz);
		char sign = tz < 0 ? '-' : '+';

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		t = (time_t)((x >> 20) % 4102444800ULL); /* 1970 .. 2099 */
		t += (time_t)tz * 60;			 /* the wall time in that zone */
		assert_non_null(gmtime_r(&t, &tm));
		if (tm.tm_year + 1900 > 2099 || tm.tm_year < 70)
			tm.tm_year = 100;
		switch (i % 4) {
		case 0:
			snprintf(dates[i], sizeof(dates[i]),
				 "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
				 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, sign,
				 atz / 60, atz % 60);
			break;
		case 1:
			snprintf(dates[i], sizeof(dates[i]),
				 "%04d-%02d-%02d %02d:%02d:%02d %c%02d%02d", tm.tm_year + 1900,
				 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, sign,
				 atz / 60, atz % 60);
			break;
		case 2:
			snprintf(dates[i], sizeof(dates[i]),
				 "%s, %02d %s %04d %02d:%02d:%02d %c%02d%02d", wdays[tm.tm_wday],
				 tm.tm_mday, mons[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
				 tm.tm_min, tm.tm_sec, sign, atz / 60, atz % 60);
			break;
		default:
			snprintf(dates[i], sizeof(dates[i]), "@%lld %c%02d%02d",
				 (long long)(x >> 20) % 4102444800LL, sign, atz / 60, atz % 60);
			break;
		}
		snprintf(cmd + strlen(cmd), size - strlen(cmd),
			 "GIT_COMMITTER_DATE='%s' git var GIT_COMMITTER_IDENT && ", dates[i]);
	}
	strcat(cmd, "true");
	out = tu_capture(repo, "%s", cmd);
	assert_non_null(out);
	line = out;
	for (int i = 0; i < N; i++) {
		char *nl = strchr(line, '\n'), mine[64], *theirs;
		int64_t t;
		int tz;
		if (nl)
			*nl = '\0';
		/* "Name <email> <epoch> <tz>": the last two fields */
		theirs = strrchr(line, '>');
		assert_non_null(theirs);
		theirs += 2;
		if (rq_ident_parse_date(dates[i], &t, &tz, NULL) != 0)
			fail_msg("rq_ident_parse_date refused \"%s\" (git: %s)", dates[i], theirs);
		snprintf(mine, sizeof(mine), "%" PRId64 " %c%02d%02d", t, tz < 0 ? '-' : '+',
			 abs(tz) / 60, abs(tz) % 60);
		if (strcmp(mine, theirs) != 0)
			fail_msg("date \"%s\": rq %s, git %s", dates[i], mine, theirs);
		if (i < N - 1) {
			assert_non_null(nl);
			line = nl + 1;
		}
	}
	free(out);
	free(cmd);
}

static void test_date_garbage(void **state)
{
	static const char *const bad[] = {"not a date",	    "@abc",    "@",
					  "12345678 +0000", "garbage", "yesterday-ish"};
	int64_t t = 5;
	int tz = 7;
	rq_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rq_error_clear(&err);
		if (rq_ident_parse_date(bad[i], &t, &tz, &err) != -1)
			fail_msg("rq_ident_parse_date accepted \"%s\"", bad[i]);
		assert_int_equal(err.code, RQ_E_BAD_DATE);
		assert_non_null(strstr(err.msg, bad[i]));
	}
	/* git refuses every one of them too */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(
		    tu_run(repo,
			   "GIT_COMMITTER_DATE='%s' git commit -q --allow-empty -m d "
			   "2>/dev/null",
			   bad[i]),
		    0);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_parse_date("", &t, &tz, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_DATE);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_parse_date(NULL, &t, &tz, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_DATE);
	/* err may be NULL */
	assert_int_equal(rq_ident_parse_date("garbage", &t, &tz, NULL), -1);
}

/* The committer line git writes for GIT_COMMITTER_NAME/EMAIL = name/email. */
static char *git_ident(const char *name, const char *email)
{
	char *out;

	setenv("GIT_COMMITTER_NAME", name, 1);
	setenv("GIT_COMMITTER_EMAIL", email, 1);
	out = tu_capture(repo, "git commit -q --allow-empty -m i && "
			       "git cat-file commit HEAD | sed -n 's/^committer //p'");
	setenv("GIT_COMMITTER_NAME", TU_COMMITTER_NAME, 1);
	setenv("GIT_COMMITTER_EMAIL", TU_COMMITTER_EMAIL, 1);
	assert_non_null(out);
	return out;
}

static void check_ident_like_git(const char *name, const char *email)
{
	rq_ident id;
	rq_error err;
	char line[1024];
	char *theirs;

	memset(&id, 0, sizeof(id));
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, name, email, &err), 0);
	id.time = 1700000000;
	id.tz = 0;
	assert_int_equal(rq_ident_format(&id, line, sizeof(line)), 0);
	theirs = git_ident(name, email);
	if (strcmp(line, theirs) != 0)
		fail_msg("ident \"%s\" \"%s\": rq \"%s\", git \"%s\"", name, email, line, theirs);
	free(theirs);
}

static void test_ident_set_cleanup(void **state)
{
	rq_ident id;
	rq_error err;

	(void)state;
	memset(&id, 0, sizeof(id));
	assert_int_equal(rq_ident_set(&id, "  Jane Doe \t", " jane@example.com ", NULL), 0);
	assert_string_equal(id.name, "Jane Doe");
	assert_string_equal(id.email, "jane@example.com");
	assert_int_equal(rq_ident_set(&id, " ,;<Jo>hn \"Doe\"; ", " <j<o>e@x.org>; ", NULL), 0);
	assert_string_equal(id.name, "John \"Doe");
	assert_string_equal(id.email, "joe@x.org");
	assert_int_equal(rq_ident_set(&id, "A\nB", "a\n@b", NULL), 0);
	assert_string_equal(id.name, "AB");
	assert_string_equal(id.email, "a@b");

	check_ident_like_git("  Jane Doe \t", " jane@example.com ");
	check_ident_like_git(" ,;<Jo>hn \"Doe\"; ", " <j<o>e@x.org>; ");
	check_ident_like_git("'quoted' \\name\\:", "\"mail@example.com\"");
	check_ident_like_git("A\nB", "a\n@b");
	check_ident_like_git("Ren\xc3\xa9 <x> Z", "r@e.fr");

	/* nothing but crud: empty name, refused */
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, "<>", "a@b", &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, "", "a@b", &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, " ;: ", "a@b", &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	/* git refuses an empty name as well */
	setenv("GIT_COMMITTER_NAME", "<>", 1);
	assert_int_not_equal(tu_run(repo, "git commit -q --allow-empty -m x 2>/dev/null"), 0);
	setenv("GIT_COMMITTER_NAME", TU_COMMITTER_NAME, 1);
	/* NULL and too long */
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, NULL, "a@b", &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_set(&id, "n", NULL, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	{
		char longname[RQ_IDENT_FIELD_MAX + 10];
		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		rq_error_clear(&err);
		assert_int_equal(rq_ident_set(&id, longname, "a@b", &err), -1);
		assert_int_equal(err.code, RQ_E_IDENT);
		/* the longest that fits */
		longname[RQ_IDENT_FIELD_MAX - 1] = '\0';
		assert_int_equal(rq_ident_set(&id, longname, "a@b", NULL), 0);
		assert_int_equal(strlen(id.name), RQ_IDENT_FIELD_MAX - 1);
	}
}

static void test_ident_format(void **state)
{
	rq_ident id;
	char buf[128];

	(void)state;
	memset(&id, 0, sizeof(id));
	assert_int_equal(rq_ident_set(&id, "C O Mitter", "committer@example.com", NULL), 0);
	id.time = 1700000000;
	id.tz = -150;
	assert_int_equal(rq_ident_format(&id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "C O Mitter <committer@example.com> 1700000000 -0230");
	id.tz = 330;
	assert_int_equal(rq_ident_format(&id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "C O Mitter <committer@example.com> 1700000000 +0530");
	id.tz = 0;
	id.time = 0;
	assert_int_equal(rq_ident_format(&id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "C O Mitter <committer@example.com> 0 +0000");
	id.tz = -720;
	id.time = 4102444800LL; /* past 2038 */
	assert_int_equal(rq_ident_format(&id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "C O Mitter <committer@example.com> 4102444800 -1200");
	/* exactly fitting, and one byte short */
	size_t need = strlen(buf) + 1;
	assert_int_equal(rq_ident_format(&id, buf, need), 0);
	assert_int_equal(rq_ident_format(&id, buf, need - 1), -1);
	assert_int_equal(rq_ident_format(&id, buf, 4), -1);
}

static void unset_all_ident_env(void)
{
	unsetenv("GIT_COMMITTER_NAME");
	unsetenv("GIT_COMMITTER_EMAIL");
	unsetenv("EMAIL");
}

static void check_default_like_git(git_repository *r)
{
	rq_ident id;
	rq_error err;
	char line[600];
	char *theirs;

	rq_error_clear(&err);
	if (rq_ident_default(r, &id, &err) != 0)
		fail_msg("rq_ident_default: %s", err.msg);
	assert_int_equal(rq_ident_format(&id, line, sizeof(line)), 0);
	theirs = tu_capture(repo, "git var GIT_COMMITTER_IDENT");
	assert_non_null(theirs);
	assert_string_equal(line, theirs);
	free(theirs);
}

static void test_ident_default_env(void **state)
{
	rq_ident id;
	rq_error err;

	(void)state;
	setenv("GIT_COMMITTER_NAME", "Env Name", 1);
	setenv("GIT_COMMITTER_EMAIL", "env@example.com", 1);
	setenv("GIT_COMMITTER_DATE", "2005-04-07T22:13:13+02:00", 1);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(NULL, &id, &err), 0);
	assert_string_equal(id.name, "Env Name");
	assert_string_equal(id.email, "env@example.com");
	assert_int_equal(id.time, 1112904793);
	assert_int_equal(id.tz, 120);
	check_default_like_git(tu_repo_open(repo));

	/* the environment wins over the repository's config */
	tu_git(repo, "git config user.name 'Cfg User' && git config user.email cfg@example.com");
	assert_int_equal(rq_ident_default(tu_repo_open(repo), &id, &err), 0);
	assert_string_equal(id.name, "Env Name");
	assert_string_equal(id.email, "env@example.com");
	check_default_like_git(tu_repo_open(repo));
	tu_git(repo, "git config --unset user.name && git config --unset user.email");

	/* a bad date is refused */
	setenv("GIT_COMMITTER_DATE", "yesterday-ish", 1);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(NULL, &id, &err), -1);
	assert_int_equal(err.code, RQ_E_BAD_DATE);

	/* no date: now, in the local zone (UTC here) */
	unsetenv("GIT_COMMITTER_DATE");
	time_t before = time(NULL);
	assert_int_equal(rq_ident_default(NULL, &id, &err), 0);
	time_t after = time(NULL);
	assert_true(id.time >= (int64_t)before && id.time <= (int64_t)after);
	assert_int_equal(id.tz, 0);
	/* an empty date also means now */
	setenv("GIT_COMMITTER_DATE", "", 1);
	assert_int_equal(rq_ident_default(NULL, &id, &err), 0);
	assert_true(id.time >= (int64_t)before);
}

static void test_ident_default_config(void **state)
{
	git_repository *r;
	rq_ident id;
	rq_error err;

	(void)state;
	unset_all_ident_env();
	tu_git(repo, "git config user.name ' Cfg User ' && git config user.email cfg@example.com");
	r = tu_repo_open(repo);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(r, &id, &err), 0);
	assert_string_equal(id.name, "Cfg User");
	assert_string_equal(id.email, "cfg@example.com");
	assert_int_equal(id.time, 1700000000);
	check_default_like_git(r);

	/* name from the environment, email from the config */
	setenv("GIT_COMMITTER_NAME", "Env Name", 1);
	assert_int_equal(rq_ident_default(r, &id, &err), 0);
	assert_string_equal(id.name, "Env Name");
	assert_string_equal(id.email, "cfg@example.com");
	check_default_like_git(r);
	unsetenv("GIT_COMMITTER_NAME");

	/* $EMAIL when there is no user.email */
	tu_git(repo, "git config --unset user.email");
	setenv("EMAIL", "fallback@example.com", 1);
	assert_int_equal(rq_ident_default(r, &id, &err), 0);
	assert_string_equal(id.name, "Cfg User");
	assert_string_equal(id.email, "fallback@example.com");
	check_default_like_git(r);
	/* but user.email wins over $EMAIL */
	tu_git(repo, "git config user.email cfg2@example.com");
	assert_int_equal(rq_ident_default(r, &id, &err), 0);
	assert_string_equal(id.email, "cfg2@example.com");
	check_default_like_git(r);
	tu_git(repo, "git config --unset user.name && git config --unset user.email");
}

static void test_ident_default_none(void **state)
{
	rq_ident id;
	rq_error err;

	(void)state;
	unset_all_ident_env();
	/* HOME has no config, the system config is not read */
	{
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/.gitconfig", tu_scratch());
		assert_false(tu_exists(path));
	}
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(tu_repo_open(repo), &id, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	assert_true(strlen(err.msg) > 0);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(NULL, &id, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	/* only a name is not enough */
	setenv("GIT_COMMITTER_NAME", "Only Name", 1);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(NULL, &id, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	/* only an email is not enough */
	unsetenv("GIT_COMMITTER_NAME");
	setenv("GIT_COMMITTER_EMAIL", "only@example.com", 1);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(tu_repo_open(repo), &id, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
	/* an empty name from the environment is refused */
	setenv("GIT_COMMITTER_NAME", "  ", 1);
	rq_error_clear(&err);
	assert_int_equal(rq_ident_default(NULL, &id, &err), -1);
	assert_int_equal(err.code, RQ_E_IDENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_date_epoch_forms, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_date_iso8601, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_date_rfc2822, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_date_local_zone, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_date_generated_like_git, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_date_garbage, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_ident_set_cleanup, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_ident_format, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_ident_default_env, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_ident_default_config, reset_env, reset_env),
	    cmocka_unit_test_setup_teardown(test_ident_default_none, reset_env, reset_env),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
