/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_redis_url_parse / rq_redis_url_display: the forms of a Redis URL
 * (redis://, unix://, redis+cluster:// with its seeds, redis+sentinel://
 * with its sentinels and master), the bad ones, and a display that never
 * shows the password.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_redis.h"

static void parse_ok(const char *url, rq_redis_url *u)
{
	rq_error err;

	rq_error_clear(&err);
	if (rq_redis_url_parse(url, u, &err) < 0)
		fail_msg("URL '%s' refused: %s", url, err.msg);
}

/* A bad URL: RQ_E_USAGE, a message, and never the password in it. */
static void parse_bad(const char *url, const char *needle, const char *password)
{
	rq_redis_url u;
	rq_error err;

	rq_error_clear(&err);
	if (rq_redis_url_parse(url, &u, &err) >= 0)
		fail_msg("URL '%s' accepted (host '%s' port %d db %d path '%s')",
			 url ? url : "NULL", u.host, u.port, u.db, u.path);
	assert_int_equal(err.code, RQ_E_USAGE);
	assert_true(err.msg[0] != '\0');
	if (needle && !strstr(err.msg, needle))
		fail_msg("message '%s' for '%s' does not say '%s'", err.msg, url, needle);
	if (password && strstr(err.msg, password))
		fail_msg("message '%s' shows the password '%s'", err.msg, password);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_host(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://localhost", &u);
	assert_int_equal(u.is_unix, 0);
	assert_string_equal(u.host, "localhost");
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 0);
	assert_string_equal(u.user, "");
	assert_string_equal(u.password, "");
	assert_string_equal(u.path, "");

	parse_ok("redis://redis.example.com/", &u);
	assert_string_equal(u.host, "redis.example.com");
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 0);
}

static void test_host_port(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://127.0.0.1:6380", &u);
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 0);
	parse_ok("redis://h:1", &u);
	assert_int_equal(u.port, 1);
	parse_ok("redis://h:65535", &u);
	assert_int_equal(u.port, 65535);
}

static void test_db(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://127.0.0.1:6380/5", &u);
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 5);
	parse_ok("redis://h/15", &u);
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 15);
	parse_ok("redis://h/0", &u);
	assert_int_equal(u.db, 0);
}

static void test_user_password(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://bot:s3cret@redis.local:6390/2", &u);
	assert_string_equal(u.user, "bot");
	assert_string_equal(u.password, "s3cret");
	assert_string_equal(u.host, "redis.local");
	assert_int_equal(u.port, 6390);
	assert_int_equal(u.db, 2);

	/* a password with characters that are not separators here */
	parse_ok("redis://bot:p:a#ss!@h", &u);
	assert_string_equal(u.user, "bot");
	assert_string_equal(u.password, "p:a#ss!");
	assert_string_equal(u.host, "h");
}

static void test_password_only(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://:s3cret@127.0.0.1:6379/0", &u);
	assert_string_equal(u.user, "");
	assert_string_equal(u.password, "s3cret");
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 6379);
	assert_int_equal(u.db, 0);

	parse_ok("redis://:pw@h", &u);
	assert_string_equal(u.password, "pw");
	assert_string_equal(u.host, "h");
}

/* User and password are percent-decoded: a password with '@', '/' or ':'. */
static void test_percent_decoding(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://bot:p%40ss%2Fw%3Ard@h:6390/2", &u);
	assert_string_equal(u.user, "bot");
	assert_string_equal(u.password, "p@ss/w:rd");
	assert_string_equal(u.host, "h");
	assert_int_equal(u.port, 6390);
	assert_int_equal(u.db, 2);
	parse_ok("redis://b%6Ft%3a1:%25%2f@h", &u);
	assert_string_equal(u.user, "bot:1");
	assert_string_equal(u.password, "%/");
	/* a raw '@' in the password: the last '@' ends the credentials */
	parse_ok("redis://:p@ss@h", &u);
	assert_string_equal(u.password, "p@ss");
	assert_string_equal(u.host, "h");
	/* a password that decodes to the longest one fits */
	{
		char url[1024] = "redis://:";
		for (int i = 0; i < 255; i++)
			strcat(url, "%41");
		strcat(url, "@h");
		parse_ok(url, &u);
		assert_int_equal(strlen(u.password), 255);
		assert_int_equal(u.password[254], 'A');
	}
}

/* redis://user@host: a user whose password comes from elsewhere. */
static void test_user_only(void **state)
{
	rq_redis_url u;
	char buf[256];
	(void)state;

	parse_ok("redis://replayq@redis.local:6379/0", &u);
	assert_string_equal(u.user, "replayq");
	assert_string_equal(u.password, "");
	assert_string_equal(u.host, "redis.local");
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "redis://replayq@redis.local:6379/0");
	snprintf(u.password, sizeof(u.password), "%s", "fromfile");
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "redis://replayq:***@redis.local:6379/0");
}

static void test_errors_percent(void **state)
{
	static const char *const bad[] = {"redis://:Hunter2pw%@h",    "redis://:Hunter2pw%4@h",
					  "redis://:Hunter2pw%zz@h",  "redis://:Hunter2pw%00@h",
					  "redis://bot%:Hunter2pw@h", "redis://%g1:Hunter2pw@h"};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], "escape", "Hunter2pw");
}

/* Permanent error replies are told from passing ones by their prefix. */
static void test_error_permanent(void **state)
{
	static const char *const permanent[] = {
	    "WRONGTYPE Operation against a key holding the wrong kind of value",
	    "ERR Error running script (call to f_1): @user_script:1: oops",
	    "OOM command not allowed when used memory > 'maxmemory'.",
	    "NOSCRIPT No matching script",
	    "BUSYGROUP Consumer Group name already exists",
	    "WRONGTYPEX no such prefix",
	    "EXECABORT Transaction discarded",
	    "ERR LOADING is not the prefix here",
	    ""};
	static const char *const transient[] = {
	    "LOADING Redis is loading the dataset in memory",
	    "BUSY Redis is busy running a script",
	    "TRYAGAIN Multiple keys request during rehashing of slot",
	    "CLUSTERDOWN The cluster is down",
	    "MASTERDOWN Link with MASTER is down",
	    "READONLY You can't write against a read only replica.",
	    "NOAUTH Authentication required.",
	    "NOPERM this user has no permissions to run the 'xadd' command",
	    "MISCONF Redis is configured to save RDB snapshots",
	    "MOVED 3999 127.0.0.1:6381",
	    "ERR Script attempted to access a non local key in a cluster node script: 1f0e, on "
	    "@user_script:1.",
	    "LOADING"};
	(void)state;
	for (size_t i = 0; i < sizeof(permanent) / sizeof(permanent[0]); i++)
		if (!rq_redis_error_permanent(permanent[i]))
			fail_msg("'%s' taken as transient", permanent[i]);
	for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
		if (rq_redis_error_permanent(transient[i]))
			fail_msg("'%s' taken as permanent", transient[i]);
	assert_int_equal(rq_redis_error_permanent(NULL), 0);
}

static void test_ipv6(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis://[::1]:6380", &u);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 0);
	parse_ok("redis://[::1]", &u);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 6379);
	parse_ok("redis://:pw@[fe80::1:2]:7000/3", &u);
	assert_string_equal(u.host, "fe80::1:2");
	assert_string_equal(u.password, "pw");
	assert_int_equal(u.port, 7000);
	assert_int_equal(u.db, 3);
}

static void test_unix(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("unix:///var/run/redis/redis.sock", &u);
	assert_int_equal(u.is_unix, 1);
	assert_string_equal(u.path, "/var/run/redis/redis.sock");
	assert_int_equal(u.db, 0);
	assert_string_equal(u.host, "");

	parse_ok("unix:///tmp/r.sock?db=3", &u);
	assert_int_equal(u.is_unix, 1);
	assert_string_equal(u.path, "/tmp/r.sock");
	assert_int_equal(u.db, 3);
}

static void test_errors_empty_and_scheme(void **state)
{
	(void)state;
	parse_bad(NULL, "empty", NULL);
	parse_bad("", "empty", NULL);
	parse_bad("http://h:6379", "redis://", NULL);
	parse_bad("rediss://h:6379", "redis://", NULL);
	parse_bad("redis:/h", "redis://", NULL);
	parse_bad("REDIS://h", "redis://", NULL);
	parse_bad("h:6379", "redis://", NULL);
	parse_bad("127.0.0.1", "redis://", NULL);
	parse_bad("unix:/tmp/x", "redis://", NULL);
}

static void test_errors_host(void **state)
{
	(void)state;
	parse_bad("redis://", "host", NULL);
	parse_bad("redis:///0", "host", NULL);
	parse_bad("redis://:6379", "host", NULL);
	parse_bad("redis://:pw@", "host", NULL); /* the password: test_errors_hide_password */
	parse_bad("redis://[::1", "host", NULL);
	parse_bad("redis://[::1]x", "host", NULL);
	parse_bad("redis://[]:6379", "host", NULL);
	{
		char *h = repeat('h', 256), url[400];
		snprintf(url, sizeof(url), "redis://%s:6379", h);
		parse_bad(url, "host", NULL);
		free(h);
	}
}

static void test_errors_port(void **state)
{
	static const char *const bad[] = {
	    "redis://h:0",	"redis://h:70000",	 "redis://h:65536",  "redis://h:abc",
	    "redis://h:",	"redis://h:-1",		 "redis://h:12ab",   "redis://h:+80",
	    "redis://h: 80",	"redis://h:99999999999", "redis://h:6379:1", "redis://[::1]:0",
	    "redis://[::1]:abc"};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], "port", NULL);
}

static void test_errors_db(void **state)
{
	static const char *const bad[] = {"redis://h/abc", "redis://h:6379/-1",
					  "redis://h/1x",  "redis://h/1/2",
					  "redis://h/ 1",  "redis://h/99999999999"};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], "database", NULL);
}

static void test_errors_unix(void **state)
{
	(void)state;
	parse_bad("unix://", "unix:///path", NULL);
	parse_bad("unix://?db=1", "unix:///path", NULL);
	parse_bad("unix://relative/path", "unix:///path", NULL);
	parse_bad("unix:///tmp/r.sock?db=x", "db=N", NULL);
	parse_bad("unix:///tmp/r.sock?db=", "db=N", NULL);
	parse_bad("unix:///tmp/r.sock?database=1", "db=N", NULL);
	parse_bad("unix:///tmp/r.sock?db=-1", "db=N", NULL);
	{
		char *p = repeat('p', 600), url[700];
		snprintf(url, sizeof(url), "unix:///%s", p);
		parse_bad(url, "bad Redis URL", NULL); /* the message is cut at 512 bytes */
		free(p);
	}
}

static void test_errors_credentials_too_long(void **state)
{
	char *user = repeat('u', 128), *pw = repeat('p', 256), url[1024];
	rq_redis_url u;
	(void)state;

	snprintf(url, sizeof(url), "redis://%s:pw@h", user);
	parse_bad(url, "credentials", "pw@");
	snprintf(url, sizeof(url), "redis://bot:%s@h", pw);
	parse_bad(url, "credentials", pw);
	snprintf(url, sizeof(url), "redis://:%s@h", pw);
	parse_bad(url, "credentials", pw);
	snprintf(url, sizeof(url), "redis://%s@h", pw);
	parse_bad(url, "credentials", pw);
	/* one byte less fits */
	user[127] = '\0';
	pw[255] = '\0';
	snprintf(url, sizeof(url), "redis://%s:%s@h", user, pw);
	parse_ok(url, &u);
	assert_string_equal(u.user, user);
	assert_string_equal(u.password, pw);
	free(user);
	free(pw);
}

/* Errors in URLs that carry a password must not repeat the password. */
static void test_errors_hide_password(void **state)
{
	static const char *const bad[] = {
	    "redis://:Hunter2pw@h:abc",	   "redis://bot:Hunter2pw@h:0",
	    "redis://bot:Hunter2pw@h/xyz", "redis://:Hunter2pw@[::1",
	    "redis://:Hunter2pw@h:6379x",  "rediss://bot:Hunter2pw@h:6379",
	    "redis://:Hunter2pw@"};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], NULL, "Hunter2pw");
}

static void test_display(void **state)
{
	rq_redis_url u;
	char buf[512];
	(void)state;

	parse_ok("redis://h", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "redis://h:6379/0");

	parse_ok("redis://bot:s3cret@h:6390/2", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_null(strstr(buf, "s3cret"));
	assert_string_equal(buf, "redis://bot:***@h:6390/2");

	parse_ok("redis://:s3cret@h", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_null(strstr(buf, "s3cret"));
	assert_string_equal(buf, "redis://:***@h:6379/0");

	parse_ok("unix:///tmp/r.sock?db=3", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "unix:///tmp/r.sock?db=3");

	/* a password set by the program (REPLAYQ_REDIS_PASSWORD) is hidden too */
	parse_ok("redis://h:1/1", &u);
	snprintf(u.password, sizeof(u.password), "%s", "fromenv");
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_null(strstr(buf, "fromenv"));
	assert_non_null(strstr(buf, "***"));

	parse_ok("unix:///tmp/r.sock", &u);
	snprintf(u.password, sizeof(u.password), "%s", "fromenv");
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_null(strstr(buf, "fromenv"));
}

/* The longest password, any buffer size: never a byte of it, never past
 * the buffer. */
static void test_display_small_buffers(void **state)
{
	rq_redis_url u;
	char buf[512];
	(void)state;

	{
		char *pw = repeat('Z', 255), url[512];
		snprintf(url, sizeof(url), "redis://bot:%s@h", pw);
		parse_ok(url, &u);
		for (size_t size = 1; size < 64; size++) {
			char small[64];
			memset(small, 'x', sizeof(small));
			rq_redis_url_display(&u, small, size);
			assert_true(strlen(small) < size);
			assert_null(strchr(small, 'Z'));
		}
		rq_redis_url_display(&u, buf, sizeof(buf));
		assert_null(strchr(buf, 'Z'));
		free(pw);
	}
}

/* The display of a URL without a password is a URL that parses back to it. */
static void test_display_round_trip(void **state)
{
	static const char *const urls[] = {"redis://h", "redis://10.1.2.3:7000/4",
					   "redis://[::1]:6380/2", "unix:///tmp/r.sock?db=9"};
	(void)state;
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		rq_redis_url a, b;
		rq_error err;
		char buf[512];
		parse_ok(urls[i], &a);
		rq_redis_url_display(&a, buf, sizeof(buf));
		if (rq_redis_url_parse(buf, &b, &err) < 0)
			fail_msg("display '%s' of '%s' does not parse: %s", buf, urls[i], err.msg);
		assert_int_equal(a.is_unix, b.is_unix);
		assert_string_equal(a.host, b.host);
		assert_int_equal(a.port, b.port);
		assert_int_equal(a.db, b.db);
		assert_string_equal(a.path, b.path);
	}
}

/* redis+cluster://: seeds, default ports, database 0 only, options. */
static void test_cluster(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis+cluster://127.0.0.1:7000,127.0.0.1:7001/", &u);
	assert_int_equal(u.kind, RQ_REDIS_CLUSTER);
	assert_int_equal(u.is_unix, 0);
	assert_int_equal(u.nseeds, 2);
	assert_string_equal(u.seeds[0].host, "127.0.0.1");
	assert_int_equal(u.seeds[0].port, 7000);
	assert_int_equal(u.seeds[1].port, 7001);
	assert_string_equal(u.host, "127.0.0.1"); /* the first seed */
	assert_int_equal(u.port, 7000);
	assert_int_equal(u.db, 0);
	assert_int_equal(u.wait_replicas, 1);
	assert_int_equal(u.wait_timeout_ms, RQ_REDIS_WAIT_TIMEOUT_MS);

	parse_ok("redis+cluster://node-a,node-b:7002,[::1]:7003,[fe80::1]", &u);
	assert_int_equal(u.nseeds, 4);
	assert_string_equal(u.seeds[0].host, "node-a");
	assert_int_equal(u.seeds[0].port, 6379);
	assert_int_equal(u.seeds[1].port, 7002);
	assert_string_equal(u.seeds[2].host, "::1");
	assert_int_equal(u.seeds[2].port, 7003);
	assert_string_equal(u.seeds[3].host, "fe80::1");
	assert_int_equal(u.seeds[3].port, 6379);

	parse_ok("redis+cluster://bot:p%40ss@h:7000/0?wait=2&wait_timeout_ms=50", &u);
	assert_string_equal(u.user, "bot");
	assert_string_equal(u.password, "p@ss");
	assert_int_equal(u.nseeds, 1);
	assert_int_equal(u.wait_replicas, 2);
	assert_int_equal(u.wait_timeout_ms, 50);
	parse_ok("redis+cluster://h?wait=0", &u);
	assert_int_equal(u.wait_replicas, 0);
	parse_ok("redis+cluster://:pw@h1,h2", &u);
	assert_string_equal(u.password, "pw");
	assert_int_equal(u.nseeds, 2);
}

/* redis+sentinel://: sentinels (port 26379), the master's name, the db. */
static void test_sentinel(void **state)
{
	rq_redis_url u;
	(void)state;

	parse_ok("redis+sentinel://s1:26379,s2:26380/mymaster/0", &u);
	assert_int_equal(u.kind, RQ_REDIS_SENTINEL);
	assert_int_equal(u.nseeds, 2);
	assert_string_equal(u.seeds[0].host, "s1");
	assert_int_equal(u.seeds[0].port, 26379);
	assert_int_equal(u.seeds[1].port, 26380);
	assert_string_equal(u.master, "mymaster");
	assert_int_equal(u.db, 0);

	parse_ok("redis+sentinel://s1,s2,s3/queue-master.1", &u);
	assert_int_equal(u.nseeds, 3);
	assert_int_equal(u.seeds[2].port, 26379);
	assert_string_equal(u.master, "queue-master.1");
	assert_int_equal(u.db, 0);

	parse_ok("redis+sentinel://replayq:s3cret@[::1]:5000/m/3?wait_timeout_ms=1000", &u);
	assert_string_equal(u.user, "replayq");
	assert_string_equal(u.password, "s3cret");
	assert_string_equal(u.seeds[0].host, "::1");
	assert_int_equal(u.seeds[0].port, 5000);
	assert_string_equal(u.master, "m");
	assert_int_equal(u.db, 3);
	assert_int_equal(u.wait_timeout_ms, 1000);
}

static void test_errors_cluster_sentinel(void **state)
{
	char url[8192] = "redis+cluster://";
	(void)state;

	parse_bad("redis+cluster://", "host", NULL);
	parse_bad("redis+cluster:///", "host", NULL);
	parse_bad("redis+cluster://h1,,h2", "host", NULL);
	parse_bad("redis+cluster://h1,", "host", NULL);
	parse_bad("redis+cluster://h1:0", "port", NULL);
	parse_bad("redis+cluster://h1,h2:x", "port", NULL);
	parse_bad("redis+cluster://h/1", "database 0 only", NULL);
	parse_bad("redis+cluster://h/0/0", "database 0 only", NULL);
	parse_bad("redis+cluster://h?wait=17", "option", NULL);
	parse_bad("redis+cluster://h?wait=", "option", NULL);
	parse_bad("redis+cluster://h?wait_timeout_ms=0", "option", NULL);
	parse_bad("redis+cluster://h?bogus=1", "option", NULL);
	parse_bad("redis+cluster://h?wait=1&", "option", NULL);
	parse_bad("redis+cluster://:Hunter2pw@h/5", NULL, "Hunter2pw");
	for (int i = 0; i <= RQ_REDIS_MAX_SEEDS; i++)
		strcat(url, i ? ",h:1" : "h:1");
	parse_bad(url, "more than", NULL);
	parse_bad("redis+sentinel://s1", "master name", NULL);
	parse_bad("redis+sentinel://s1/", "master name", NULL);
	parse_bad("redis+sentinel://s1//0", "master name", NULL);
	parse_bad("redis+sentinel://s1/my master", "master name", NULL);
	parse_bad("redis+sentinel://s1/m/x", "database", NULL);
	parse_bad("redis+sentinel://s1:99999/m", "port", NULL);
	parse_bad("redis+sentinel://:Hunter2pw@s1/m/x", NULL, "Hunter2pw");
	parse_bad("redis+sentinel://s1/m?wait=x", "option", NULL);
	parse_bad("redis+clusters://h", "redis+cluster://", NULL);
	/* options belong to the forms that have replicas to wait for */
	parse_bad("redis://h/0?wait=1", "database", NULL);
}

static void test_display_cluster_sentinel(void **state)
{
	static const char *const urls[] = {"redis+cluster://a:7000,b:7001,[::1]:7002/0",
					   "redis+sentinel://s1:26379,s2:26380/mymaster/2"};
	rq_redis_url u, back;
	rq_error err;
	char buf[512];
	(void)state;

	parse_ok("redis+cluster://bot:s3cret@a:7000,b/", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "redis+cluster://bot:***@a:7000,b:6379/0");
	parse_ok("redis+sentinel://:s3cret@s1/mymaster/1", &u);
	rq_redis_url_display(&u, buf, sizeof(buf));
	assert_string_equal(buf, "redis+sentinel://:***@s1:26379/mymaster/1");
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		parse_ok(urls[i], &u);
		rq_redis_url_display(&u, buf, sizeof(buf));
		assert_string_equal(buf, urls[i]);
		if (rq_redis_url_parse(buf, &back, &err) < 0)
			fail_msg("display '%s' does not parse: %s", buf, err.msg);
		assert_int_equal(back.nseeds, u.nseeds);
		assert_string_equal(back.master, u.master);
	}
	assert_int_equal(rq_redis_url_scheme_len("redis+sentinel://s/m"), 17);
	assert_int_equal(rq_redis_url_scheme_len("redis+cluster://h"), 16);
	assert_int_equal(rq_redis_url_scheme_len("redis://h"), 8);
	assert_int_equal(rq_redis_url_scheme_len("unix:///s"), 0);
	assert_int_equal(rq_redis_url_scheme_len(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host),
	    cmocka_unit_test(test_host_port),
	    cmocka_unit_test(test_db),
	    cmocka_unit_test(test_user_password),
	    cmocka_unit_test(test_password_only),
	    cmocka_unit_test(test_percent_decoding),
	    cmocka_unit_test(test_user_only),
	    cmocka_unit_test(test_errors_percent),
	    cmocka_unit_test(test_error_permanent),
	    cmocka_unit_test(test_ipv6),
	    cmocka_unit_test(test_unix),
	    cmocka_unit_test(test_errors_empty_and_scheme),
	    cmocka_unit_test(test_errors_host),
	    cmocka_unit_test(test_errors_port),
	    cmocka_unit_test(test_errors_db),
	    cmocka_unit_test(test_errors_unix),
	    cmocka_unit_test(test_errors_credentials_too_long),
	    cmocka_unit_test(test_errors_hide_password),
	    cmocka_unit_test(test_display),
	    cmocka_unit_test(test_display_small_buffers),
	    cmocka_unit_test(test_display_round_trip),
	    cmocka_unit_test(test_cluster),
	    cmocka_unit_test(test_sentinel),
	    cmocka_unit_test(test_errors_cluster_sentinel),
	    cmocka_unit_test(test_display_cluster_sentinel),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
