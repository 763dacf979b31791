/* SPDX-License-Identifier: GPL-2.0-only */
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

/* Broken-down local wall time to epoch, given a zone or the local zone. */
static int64_t wall_to_epoch(int y, int mon, int d, int h, int mi, int s, int have_tz, int *tz)
{
	int64_t t = days_from_civil(y, (unsigned)mon, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
	if (have_tz)
		return t - (int64_t)*tz * 60;
	/* local zone: guess with the offset at t, then correct once */
	int off = local_tz_at(t);
	int off2 = local_tz_at(t - (int64_t)off * 60);
	*tz = off2;
	return t - (int64_t)off2 * 60;
}

static int valid_ymd(int y, int m, int d, int h, int mi, int s)
{
	return y >= 1970 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= 31 && h >= 0 &&
	       h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 60;
}

static int parse_iso(const char *p, int64_t *time_out, int *tz)
{
	int y, mon, d, h = 0, mi = 0, s = 0, have_tz = 0, n;

	if (parse_digits(&p, 4, &y) || *p++ != '-' || parse_digits(&p, 2, &mon) || *p++ != '-' ||
	    parse_digits(&p, 2, &d))
		return -1;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -1; /* a date without a time: git refuses it too */
	{
		p++;
		if (parse_digits(&p, 2, &h) || *p++ != ':' || parse_digits(&p, 2, &mi))
			return -1;
		if (*p == ':') {
			p++;
			if (parse_digits(&p, 2, &s))
				return -1;
			if (*p == '.' || *p == ',') {
				p++;
				while (isdigit((unsigned char)*p))
					p++;
			}
		}
	}
	p = skip_spaces(p);
	if (*p) {
		if ((n = parse_tz(p, tz)) < 0)
			return -1;
		have_tz = 1;
		p = skip_spaces(p + n);
	}
	if (*p || !valid_ymd(y, mon, d, h, mi, s))
		return -1;
	*time_out = wall_to_epoch(y, mon, d, h, mi, s, have_tz, tz);
	return 0;
}

static int parse_rfc2822(const char *p, int64_t *time_out, int *tz)
{
	int y, mon = -1, d, h, mi, s = 0, have_tz = 0, n;
	char mname[4];

	/* optional weekday */
	if (isalpha((unsigned char)*p)) {
		while (isalpha((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		p = skip_spaces(p);
	}
	if (!isdigit((unsigned char)*p))
		return -1;
	d = 0;
	while (isdigit((unsigned char)*p) && d < 100)
		d = d * 10 + (*p++ - '0');
	p = skip_spaces(p);
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
	p = skip_spaces(p);
	if (parse_digits(&p, 4, &y))
		return -1;
	p = skip_spaces(p);
	if (parse_digits(&p, 2, &h) || *p++ != ':' || parse_digits(&p, 2, &mi))
		return -1;
	if (*p == ':') {
		p++;
		if (parse_digits(&p, 2, &s))
			return -1;
	}
	p = skip_spaces(p);
	if (*p) {
		if ((n = parse_tz(p, tz)) < 0) {
			if (!strncmp(p, "GMT", 3) || !strncmp(p, "UTC", 3)) {
				*tz = 0;
				n = 3;
			} else {
				return -1;
			}
		}
		have_tz = 1;
		p = skip_spaces(p + n);
	}
	if (*p || !valid_ymd(y, mon, d, h, mi, s))
		return -1;
	*time_out = wall_to_epoch(y, mon, d, h, mi, s, have_tz, tz);
	return 0;
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

int rq_date_parse(const char *s, int64_t *time_out, int *tz, rq_error *err)
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

static char *config_string(git_config *snap, const char *key)
{
	const char *v = NULL;

	if (!snap || git_config_get_string(&v, snap, key) < 0 || !v)
		return NULL;
	return strdup(v);
}

/*
 * The identity git gives a role ("COMMITTER" or "AUTHOR"): GIT_<ROLE>_NAME
 * and _EMAIL, else <role>.name/.email, else user.name/.email (else $EMAIL
 * for the address), and GIT_<ROLE>_DATE (else now, local zone).
 */
static int role_ident(git_repository *repo, const char *role, const char *lrole, rq_ident *id,
		      rq_error *err)
{
	git_config *cfg = NULL, *snap = NULL;
	char *cname = NULL, *cemail = NULL, key[32];
	const char *name, *email, *date;
	int rc = -1;

	memset(id, 0, sizeof(*id));
	if (repo && git_repository_config(&cfg, repo) == 0) {
		if (git_config_snapshot(&snap, cfg) < 0)
			snap = NULL;
	}
	snprintf(key, sizeof(key), "%s.name", lrole);
	if (!(cname = config_string(snap, key)))
		cname = config_string(snap, "user.name");
	snprintf(key, sizeof(key), "%s.email", lrole);
	if (!(cemail = config_string(snap, key)))
		cemail = config_string(snap, "user.email");
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
	if (rq_ident_set(id, name, email, err))
		goto out;
	snprintf(key, sizeof(key), "GIT_%s_DATE", role);
	date = getenv(key);
	if (date && *date) {
		if (rq_date_parse(date, &id->time, &id->tz, err))
			goto out;
	} else {
		id->time = (int64_t)time(NULL);
		id->tz = local_tz_at(id->time);
	}
	rc = 0;
out:
	free(cname);
	free(cemail);
	git_config_free(snap);
	git_config_free(cfg);
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
