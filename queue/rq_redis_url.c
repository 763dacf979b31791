/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_url: parsing and showing Redis URLs (see rq_redis_url.h).
 */
#include "rq_redis_url.h"
#include "rq_oid.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const schemes[] = {"redis://", "", "redis+cluster://", "redis+sentinel://"};

static int copy_part(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

static int parse_int(const char *s, size_t n, int min, int max, int *out)
{
	int v = 0;
	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Copy src[0..n) into dst, decoding %XX: -1 too long, -2 a bad escape or a
 * NUL byte. */
static int copy_decoded(char *dst, size_t size, const char *src, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)src[i], hi, lo;
		if (c == '%') {
			if (i + 2 >= n || (hi = rq_oid_hex_digit(src[i + 1])) < 0 ||
			    (lo = rq_oid_hex_digit(src[i + 2])) < 0)
				return -2;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return -2;
		if (k + 1 >= size)
			return -1;
		dst[k++] = (char)c;
	}
	dst[k] = '\0';
	return 0;
}

/* user[:password] before the last '@' of the authority, percent-decoded. */
static int parse_credentials(const char *p, size_t n, rq_redis_url *u, rq_error *err)
{
	const char *colon = memchr(p, ':', n);
	int r = copy_decoded(u->user, sizeof(u->user), p, colon ? (size_t)(colon - p) : n);

	if (r == 0 && colon)
		r = copy_decoded(u->password, sizeof(u->password), colon + 1,
				 n - (size_t)(colon - p) - 1);
	if (r == -1)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: credentials too long");
	if (r < 0)
		return rq_error_set(err, RQ_E_USAGE,
				    "bad Redis URL: bad %%-escape in the credentials (write a "
				    "'%%' as %%25, '@' as %%40, '/' as %%2F)");
	return 0;
}

static int parse_unix(const char *url, rq_redis_url *u, rq_error *err)
{
	const char *q = strchr(url + 7, '?');
	size_t n = q ? (size_t)(q - (url + 7)) : strlen(url + 7);

	u->is_unix = 1;
	u->kind = RQ_REDIS_UNIX;
	if (n == 0 || url[7] != '/' || copy_part(u->path, sizeof(u->path), url + 7, n) < 0)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: expected unix:///path");
	if (q &&
	    (strncmp(q, "?db=", 4) != 0 || parse_int(q + 4, strlen(q + 4), 0, 100000, &u->db) < 0))
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: expected ?db=N");
	return 0;
}

/* host[:port] or [ipv6][:port] in p..host_end, into a (its port stays
 * as it is when none is given) */
static int parse_host(const char *p, const char *host_end, rq_redis_addr *a, rq_error *err)
{
	if (*p == '[') { /* [ipv6]:port */
		const char *rb = memchr(p, ']', (size_t)(host_end - p));
		if (!rb || copy_part(a->host, sizeof(a->host), p + 1, (size_t)(rb - p - 1)) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(host_end - p));
		const char *he = colon ? colon : host_end;
		if (copy_part(a->host, sizeof(a->host), p, (size_t)(he - p)) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
		p = he;
	}
	if (!a->host[0])
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: no host");
	if (*p == ':') {
		if (parse_int(p + 1, (size_t)(host_end - p - 1), 1, 65535, &a->port) < 0)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: port");
	} else if (p != host_end) {
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: host");
	}
	return 0;
}

/* host[:port],host[:port]... in p..end: the seeds (or sentinels). */
static int parse_seeds(const char *p, const char *end, rq_redis_url *u, rq_error *err)
{
	int port = u->kind == RQ_REDIS_SENTINEL ? 26379 : 6379;

	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *he = comma ? comma : end;
		rq_redis_addr *a;
		if (u->nseeds == RQ_REDIS_MAX_SEEDS)
			return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: more than %d hosts",
					    RQ_REDIS_MAX_SEEDS);
		a = &u->seeds[u->nseeds++];
		a->port = port;
		if (parse_host(p, he, a, err) < 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	snprintf(u->host, sizeof(u->host), "%s", u->seeds[0].host);
	u->port = u->seeds[0].port;
	return 0;
}

/* One option "name=value" of p[0..n). */
static int parse_option(const char *p, size_t n, rq_redis_url *u, rq_error *err)
{
	const char *eq = memchr(p, '=', n);
	size_t k = eq ? (size_t)(eq - p) : n, vn = eq ? n - k - 1 : 0;

	if (eq && k == 4 && !strncmp(p, "wait", 4) &&
	    parse_int(eq + 1, vn, 0, 16, &u->wait_replicas) == 0)
		return 0;
	if (eq && k == 15 && !strncmp(p, "wait_timeout_ms", 15) &&
	    parse_int(eq + 1, vn, 1, 60000, &u->wait_timeout_ms) == 0)
		return 0;
	return rq_error_set(err, RQ_E_USAGE,
			    "bad Redis URL: option '%.*s' (known: wait=0..16, "
			    "wait_timeout_ms=1..60000)",
			    (int)(n > 64 ? 64 : n), p);
}

/* "?opt=v&opt=v" (q NULL: none). */
static int parse_options(const char *q, rq_redis_url *u, rq_error *err)
{
	if (!q)
		return 0;
	for (const char *p = q + 1;;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		if (parse_option(p, n, u, err) < 0)
			return -1;
		if (!amp)
			return 0;
		p = amp + 1;
	}
}

/* What follows the hosts of a cluster URL: "", "/" or "/0", options. */
static int parse_cluster_path(const char *p, rq_redis_url *u, rq_error *err)
{
	const char *q = strchr(p, '?');
	size_t n = q ? (size_t)(q - p) : strlen(p);

	if (!(n == 0 || (n == 1 && *p == '/') || (n == 2 && !strncmp(p, "/0", 2))))
		return rq_error_set(err, RQ_E_USAGE,
				    "bad Redis URL: a cluster has database 0 only "
				    "(redis+cluster://host:port,host:port/)");
	return parse_options(q, u, err);
}

/* What follows the sentinels: "/master[/db]", options. */
static int parse_sentinel_path(const char *p, rq_redis_url *u, rq_error *err)
{
	const char *q = strchr(p, '?'), *end = q ? q : p + strlen(p), *slash;
	size_t n;

	if (*p != '/')
		goto bad;
	p++;
	slash = memchr(p, '/', (size_t)(end - p));
	n = (size_t)((slash ? slash : end) - p);
	if (n == 0 || copy_part(u->master, sizeof(u->master), p, n) < 0)
		goto bad;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || p[i] == '%')
			goto bad;
	if (slash && parse_int(slash + 1, (size_t)(end - slash - 1), 0, 100000, &u->db) < 0)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: database number");
	return parse_options(q, u, err);
bad:
	return rq_error_set(err, RQ_E_USAGE,
			    "bad Redis URL: expected redis+sentinel://host:port,host:port/"
			    "<master name>[/db]");
}

/* After the scheme of redis://, redis+cluster:// or redis+sentinel://. */
static int parse_authority(const char *p, rq_redis_url *u, rq_error *err)
{
	const char *at = NULL, *end;

	if (u->kind == RQ_REDIS_TCP)
		end = strchr(p, '/');
	else
		end = p + strcspn(p, "/?");
	if (!end)
		end = p + strlen(p);
	for (const char *c = p; c < end; c++)
		if (*c == '@')
			at = c; /* the last one: a raw '@' in a password still works */
	if (at) {
		if (parse_credentials(p, (size_t)(at - p), u, err) < 0)
			return -1;
		p = at + 1;
	}
	if (u->kind == RQ_REDIS_CLUSTER)
		return parse_seeds(p, end, u, err) < 0 ? -1 : parse_cluster_path(end, u, err);
	if (u->kind == RQ_REDIS_SENTINEL)
		return parse_seeds(p, end, u, err) < 0 ? -1 : parse_sentinel_path(end, u, err);
	u->seeds[0].port = 6379;
	if (parse_host(p, end, &u->seeds[0], err) < 0)
		return -1;
	snprintf(u->host, sizeof(u->host), "%s", u->seeds[0].host);
	u->port = u->seeds[0].port;
	u->nseeds = 1;
	if (*end == '/' && end[1] && parse_int(end + 1, strlen(end + 1), 0, 100000, &u->db) < 0)
		return rq_error_set(err, RQ_E_USAGE, "bad Redis URL: database number");
	return 0;
}

size_t rq_redis_url_scheme_len(const char *url)
{
	for (int k = RQ_REDIS_TCP; url && k <= RQ_REDIS_SENTINEL; k++)
		if (k != RQ_REDIS_UNIX && !strncmp(url, schemes[k], strlen(schemes[k])))
			return strlen(schemes[k]);
	return 0;
}

int rq_redis_url_parse(const char *url, rq_redis_url *u, rq_error *err)
{
	size_t n;

	memset(u, 0, sizeof(*u));
	u->port = 6379;
	u->wait_replicas = 1;
	u->wait_timeout_ms = RQ_REDIS_WAIT_TIMEOUT_MS;
	if (!url || !*url)
		return rq_error_set(err, RQ_E_USAGE, "empty Redis URL");
	if (!strncmp(url, "unix://", 7))
		return parse_unix(url, u, err);
	if (!(n = rq_redis_url_scheme_len(url)))
		return rq_error_set(
		    err, RQ_E_USAGE,
		    "bad Redis URL: redis://[user:password@]host:port/db, "
		    "redis+cluster://host:port,host:port/, "
		    "redis+sentinel://host:port,host:port/master/db or unix:///path");
	u->kind = n == strlen(schemes[RQ_REDIS_CLUSTER])    ? RQ_REDIS_CLUSTER
		  : n == strlen(schemes[RQ_REDIS_SENTINEL]) ? RQ_REDIS_SENTINEL
							    : RQ_REDIS_TCP;
	return parse_authority(url + n, u, err);
}

/* Append to buf (size bytes, *len used), cutting what does not fit. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < size - *len ? (size_t)n : size - *len - 1;
}

static void append_addr(char *buf, size_t size, size_t *len, const rq_redis_addr *a)
{
	int v6 = strchr(a->host, ':') != NULL;
	append(buf, size, len, "%s%s%s:%d", v6 ? "[" : "", a->host, v6 ? "]" : "", a->port);
}

void rq_redis_url_display(const rq_redis_url *u, char *buf, size_t size)
{
	size_t len = 0;

	if (!size)
		return;
	buf[0] = '\0';
	if (u->is_unix) {
		append(buf, size, &len, "unix://%s?db=%d", u->path, u->db);
		return;
	}
	append(buf, size, &len, "%s", schemes[u->kind]);
	if (u->password[0])
		append(buf, size, &len, "%s:***@", u->user);
	else if (u->user[0])
		append(buf, size, &len, "%s@", u->user);
	if (u->kind == RQ_REDIS_TCP) {
		rq_redis_addr a;
		snprintf(a.host, sizeof(a.host), "%s", u->host);
		a.port = u->port;
		append_addr(buf, size, &len, &a);
	}
	for (int i = 0; u->kind != RQ_REDIS_TCP && i < u->nseeds; i++) {
		append(buf, size, &len, "%s", i ? "," : "");
		append_addr(buf, size, &len, &u->seeds[i]);
	}
	if (u->kind == RQ_REDIS_SENTINEL)
		append(buf, size, &len, "/%s", u->master);
	append(buf, size, &len, "/%d", u->db);
}
