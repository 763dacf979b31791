/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's ident.c and date.c for the identities and date forms it takes */
/*
 * rq_ident: committer identity lookup and date parsing.
 */
#include "rq_ident.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const month_names[12] = {"jan", "feb", "mar", "apr", "may", "jun",
					    "jul", "aug", "sep", "oct", "nov", "dec"};

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_digits(const char **pp, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*pp)[i]))
			return -1;
		v = v * 10 + ((*pp)[i] - '0');
	}
	*pp += n;
	*out = v;
	return 0;
}

/* "+hhmm", "+hh:mm", "+hh", "Z"; returns chars consumed or -1. */
static int parse_tz(const char *p, int *tz)
{
	const char *s = p;
	int sign, hh, mm = 0;

	if (*p == 'Z' || *p == 'z') {
		*tz = 0;
		return 1;
	}
	if (*p != '+' && *p != '-')
		return -1;
	sign = *p == '-' ? -1 : 1;
	p++;
	if (parse_digits(&p, 2, &hh))
		return -1;
	if (*p == ':')
		p++;
	if (isdigit((unsigned char)*p) && parse_digits(&p, 2, &mm))
		return -1;
	if (hh > 14 || mm > 59)
		return -1;
	*tz = sign * (hh * 60 + mm);
	return (int)(p - s);
}

static int local_tz_at(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm))
		return 0;
	return (int)(tm.tm_gmtoff / 60);
}

/* A date and time as written, before its zone is applied. */
typedef struct wall_time {
	int y, mon, d, h, mi, s;
} wall_time;

/* Wall time to epoch, given a zone or the local zone (*tz set then). */
static int64_t wall_to_epoch(const wall_time *w, int have_tz, int *tz)
{
	int64_t t = days_from_civil(w->y, (unsigned)w->mon, (unsigned)w->d) * 86400 + w->h * 3600 +
		    w->mi * 60 + w->s;
	if (have_tz)
		return t - (int64_t)*tz * 60;
	/* local zone: guess with the offset at t, then correct once */
	int off = local_tz_at(t);
	int off2 = local_tz_at(t - (int64_t)off * 60);
	*tz = off2;
	return t - (int64_t)off2 * 60;
}

static int valid_wall_time(const wall_time *w)
{
	return w->y >= 1970 && w->y <= 9999 && w->mon >= 1 && w->mon <= 12 && w->d >= 1 &&
	       w->d <= 31 && w->h >= 0 && w->h <= 23 && w->mi >= 0 && w->mi <= 59 && w->s >= 0 &&
	       w->s <= 60;
}

/* "hh:mm" or "hh:mm:ss" at *pp (with_fraction: ISO 8601's ".sss" or ",sss"
 * after the seconds, skipped). */
static int parse_clock(const char **pp, int with_fraction, wall_time *w)
{
	const char *p = *pp;

	if (parse_digits(&p, 2, &w->h) || *p++ != ':' || parse_digits(&p, 2, &w->mi))
		return -1;
	if (*p == ':') {
		p++;
		if (parse_digits(&p, 2, &w->s))
			return -1;
		if (with_fraction && (*p == '.' || *p == ',')) {
			p++;
			while (isdigit((unsigned char)*p))
				p++;
		}
	}
	*pp = p;
	return 0;
}

/*
 * What may follow the time: a zone (with zone_names, RFC 2822's "GMT" and
 * "UTC" too) and nothing else. The date then becomes *time_out (without
 * a zone: in the local zone, *tz set to its offset).
 */
static int finish_date(const char *p, int zone_names, const wall_time *w, int64_t *time_out,
		       int *tz)
{
	int have_tz = 0, n;

	p = skip_spaces(p);
	if (*p) {
		if ((n = parse_tz(p, tz)) < 0) {
			if (!zone_names || (strncmp(p, "GMT", 3) && strncmp(p, "UTC", 3)))
				return -1;
			*tz = 0;
			n = 3;
		}
		have_tz = 1;
		p = skip_spaces(p + n);
	}
	if (*p || !valid_wall_time(w))
		return -1;
	*time_out = wall_to_epoch(w, have_tz, tz);
	return 0;
}

/* ISO 8601: "2005-04-07T22:13:13+02:00", "2005-04-07 22:13:13 +0200". */
static int parse_iso(const char *p, int64_t *time_out, int *tz)
{
	wall_time w = {0};

	if (parse_digits(&p, 4, &w.y) || *p++ != '-' || parse_digits(&p, 2, &w.mon) ||
	    *p++ != '-' || parse_digits(&p, 2, &w.d))
		return -1;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -1; /* a date without a time: git refuses it too */
	p++;
	if (parse_clock(&p, 1, &w) < 0)
		return -1;
	return finish_date(p, 0, &w, time_out, tz);
}

/* A month's English name (its first three letters, any case, count) at
 * *pp: 1-12, or -1. */
static int parse_month(const char **pp)
{
	const char *p = *pp;
	char mname[4];
	int n, mon = -1;

	for (n = 0; n < 3 && isalpha((unsigned char)p[n]); n++)
		mname[n] = (char)tolower((unsigned char)p[n]);
	mname[n] = '\0';
	for (int i = 0; i < 12; i++)
		if (n == 3 && !strcmp(mname, month_names[i]))
			mon = i + 1;
	if (mon < 0)
		return -1;
	p += 3;
	while (isalpha((unsigned char)*p))
		p++;
	*pp = p;
	return mon;
}

/* RFC 2822: "Thu, 07 Apr 2005 22:13:13 +0200" (the weekday optional). */
static int parse_rfc2822(const char *p, int64_t *time_out, int *tz)
{
	wall_time w = {0};

	if (isalpha((unsigned char)*p)) {
		while (isalpha((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		p = skip_spaces(p);
	}
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p) && w.d < 100)
		w.d = w.d * 10 + (*p++ - '0');
	p = skip_spaces(p);
	if ((w.mon = parse_month(&p)) < 0)
		return -1;
	p = skip_spaces(p);
	if (parse_digits(&p, 4, &w.y))
		return -1;
	p = skip_spaces(p);
	if (parse_clock(&p, 0, &w) < 0)
		return -1;
	return finish_date(p, 1, &w, time_out, tz);
}

static int parse_epoch(const char *p, int64_t *time_out, int *tz, int need_big)
{
	char *end;
	int n;

	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || v > (unsigned long long)INT64_MAX / 2)
		return -1;
	if (need_big && v < 100000000ULL)
		return -1;
	p = skip_spaces(end);
	if (!*p) {
		*time_out = (int64_t)v;
		*tz = local_tz_at((int64_t)v);
		return 0; /* "<epoch>" alone: local zone, as git does */
	}
	if ((n = parse_tz(p, tz)) < 0 || *skip_spaces(p + n))
		return -1;
	*time_out = (int64_t)v;
	return 0;
}

int rq_ident_parse_date(const char *s, int64_t *time_out, int *tz, rq_error *err)
{
	const char *p;

	if (!s)
		return rq_error_set(err, RQ_E_BAD_DATE, "no date given");
	p = skip_spaces(s);
	if (*p == '@') {
		if (!parse_epoch(p + 1, time_out, tz, 0))
			return 0;
	} else if (!parse_epoch(p, time_out, tz, 1) || !parse_iso(p, time_out, tz) ||
		   !parse_rfc2822(p, time_out, tz)) {
		return 0;
	}
	return rq_error_set(err, RQ_E_BAD_DATE, "invalid date format: %s", s);
}

static int is_crud(unsigned char c)
{
	return c <= 32 || c == ',' || c == ':' || c == ';' || c == '<' || c == '>' || c == '"' ||
	       c == '\\' || c == '\'';
}

static int copy_clean(char *dst, size_t size, const char *src)
{
	size_t len, j = 0;

	while (*src && is_crud((unsigned char)*src))
		src++;
	len = strlen(src);
	while (len > 0 && is_crud((unsigned char)src[len - 1]))
		len--;
	for (size_t i = 0; i < len; i++) {
		char c = src[i];
		if (c == '\n' || c == '<' || c == '>')
			continue;
		if (j + 1 >= size)
			return -1;
		dst[j++] = c;
	}
	dst[j] = '\0';
	return 0;
}

int rq_ident_set(rq_ident *id, const char *name, const char *email, rq_error *err)
{
	if (!name || copy_clean(id->name, sizeof(id->name), name))
		return rq_error_set(err, RQ_E_IDENT, "committer name missing or too long");
	if (!email || copy_clean(id->email, sizeof(id->email), email))
		return rq_error_set(err, RQ_E_IDENT, "committer email missing or too long");
	if (!id->name[0])
		return rq_error_set(err, RQ_E_IDENT, "empty ident name (for <%s>) not allowed",
				    id->email);
	return 0;
}

/* The value of key, else of fallback (malloc'ed in *out; NULL: neither is
 * set). 0, or -1 out of memory. */
static int config_string(git_config *snap, const char *key, const char *fallback, char **out)
{
	const char *v = NULL;

	*out = NULL;
	if (!snap || ((git_config_get_string(&v, snap, key) < 0 || !v) &&
		      (git_config_get_string(&v, snap, fallback) < 0 || !v)))
		return 0;
	return (*out = strdup(v)) ? 0 : -1;
}

/* <role>.name and <role>.email, else user.name and user.email, from the
 * repository's configuration (none without a repository). */
static int config_identity(git_repository *repo, const char *lrole, char **name, char **email,
			   rq_error *err)
{
	git_config *cfg = NULL, *snap = NULL;
	char key[32];
	int rc = 0;

	if (repo && git_repository_config(&cfg, repo) == 0) {
		if (git_config_snapshot(&snap, cfg) < 0)
			snap = NULL;
	}
	snprintf(key, sizeof(key), "%s.name", lrole);
	if (config_string(snap, key, "user.name", name) < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	snprintf(key, sizeof(key), "%s.email", lrole);
	if (rc == 0 && config_string(snap, key, "user.email", email) < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_config_free(snap);
	git_config_free(cfg);
	return rc;
}

/* GIT_<ROLE>_DATE, else now in the local zone. */
static int role_date(const char *role, rq_ident *id, rq_error *err)
{
	char key[32];
	const char *date;

	snprintf(key, sizeof(key), "GIT_%s_DATE", role);
	date = getenv(key);
	if (date && *date)
		return rq_ident_parse_date(date, &id->time, &id->tz, err);
	id->time = (int64_t)time(NULL);
	id->tz = local_tz_at(id->time);
	return 0;
}

/*
 * The identity git gives a role ("COMMITTER" or "AUTHOR"): GIT_<ROLE>_NAME
 * and _EMAIL, else <role>.name/.email, else user.name/.email (else $EMAIL
 * for the address), and GIT_<ROLE>_DATE (else now, local zone).
 */
static int role_ident(git_repository *repo, const char *role, const char *lrole, rq_ident *id,
		      rq_error *err)
{
	char *cname = NULL, *cemail = NULL, key[32];
	const char *name, *email;
	int rc = -1;

	memset(id, 0, sizeof(*id));
	if (config_identity(repo, lrole, &cname, &cemail, err) < 0)
		goto out;
	snprintf(key, sizeof(key), "GIT_%s_NAME", role);
	if (!(name = getenv(key)))
		name = cname;
	snprintf(key, sizeof(key), "GIT_%s_EMAIL", role);
	if (!(email = getenv(key)))
		email = cemail;
	if (!email)
		email = getenv("EMAIL");
	if (!name || !email) {
		rq_error_set(err, RQ_E_IDENT,
			     "%c%s identity unknown: set user.name and user.email (git config) "
			     "or GIT_%s_NAME and GIT_%s_EMAIL",
			     role[0], lrole + 1, role, role);
		goto out;
	}
	if (rq_ident_set(id, name, email, err) == 0 && role_date(role, id, err) == 0)
		rc = 0;
out:
	free(cname);
	free(cemail);
	return rc;
}

int rq_ident_default(git_repository *repo, rq_ident *id, rq_error *err)
{
	return role_ident(repo, "COMMITTER", "committer", id, err);
}

int rq_ident_author_default(git_repository *repo, rq_ident *id, rq_error *err)
{
	return role_ident(repo, "AUTHOR", "author", id, err);
}

int rq_ident_format(const rq_ident *id, char *buf, size_t size)
{
	int tz = id->tz < 0 ? -id->tz : id->tz;
	int n = snprintf(buf, size, "%s <%s> %" PRId64 " %c%02d%02d", id->name, id->email, id->time,
			 id->tz < 0 ? '-' : '+', tz / 60, tz % 60);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}
