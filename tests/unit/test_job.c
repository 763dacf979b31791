/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_job: parsing and validation of untrusted job JSON. Every rule gets a
 * bad input that must fail with its code and a message that names the
 * field; valid jobs get their defaults; a full job round-trips through
 * rq_job_to_json.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_job.h"
#include "rq_job_train.h"

#define BASE_JOB                                                                                   \
	"{\"v\":1,\"id\":\"job-1\",\"repo\":\"group/project.git\",\"mode\":\"onto\","              \
	"\"target\":\"main\",\"revisions\":[\"main..topic\"]}"

/* The base job with the field `del` removed (NULL: none) and the members of
 * the JSON object `patch` (NULL: none) set. malloc'ed. */
static char *job_text(const char *del, const char *patch)
{
	json_error_t jerr;
	json_t *o = json_loads(BASE_JOB, 0, &jerr);
	char *s;

	assert_non_null(o);
	if (del)
		assert_int_equal(json_object_del(o, del), 0);
	if (patch) {
		json_t *p = json_loads(patch, 0, &jerr);
		if (!p)
			fail_msg("bad patch in the test: %s: %s", patch, jerr.text);
		assert_int_equal(json_object_update(o, p), 0);
		json_decref(p);
	}
	s = json_dumps(o, JSON_COMPACT);
	assert_non_null(s);
	json_decref(o);
	return s;
}

/* A string of n copies of c. malloc'ed. */
static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void assert_job_empty(const rq_job *job)
{
	assert_null(job->id);
	assert_null(job->repo);
	assert_null(job->target);
	assert_null(job->revisions);
	assert_int_equal(job->nrevisions, 0);
	assert_null(job->ref);
	assert_null(job->reply_to);
}

/* Parse text (length len) and expect failure with code and a message that
 * holds needle; the job is left empty and id_out is expect_id. */
static void expect_bad_len(const char *text, size_t len, rq_code code, const char *needle,
			   const char *expect_id)
{
	rq_job job;
	rq_error err;
	char id[RQ_JOB_ID_MAX + 1];

	memset(&job, 0xa5, sizeof(job)); /* the parser must not rely on a zeroed job */
	memset(id, 'x', sizeof(id));
	rq_error_clear(&err);
	if (rq_job_parse(text, len, &job, id, &err) >= 0) {
		rq_job_free(&job);
		fail_msg("job accepted, expected %s (%s): %.300s", rq_qerror_name(code), needle,
			 text);
	}
	if (err.code != code)
		fail_msg("job refused with %s (%s), expected %s: %.300s", rq_qerror_name(err.code),
			 err.msg, rq_qerror_name(code), text);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' does not name '%s': %.300s", err.msg, needle, text);
	assert_job_empty(&job);
	if (expect_id)
		assert_string_equal(id, expect_id);
	rq_job_free(&job); /* harmless on an empty job */
}

static void expect_bad(const char *text, rq_code code, const char *needle)
{
	expect_bad_len(text, strlen(text), code, needle, NULL);
}

/* The text a helper is checking; freed by the per-test teardown when a
 * check fails (cmocka leaves the test with a longjmp). */
static char *pending_text;

static int free_pending(void **state)
{
	(void)state;
	free(pending_text);
	pending_text = NULL;
	return 0;
}

/* The base job changed by del/patch must fail with code, naming needle;
 * the id is usable, so id_out must be "job-1". */
static void expect_bad_patch(const char *del, const char *patch, rq_code code, const char *needle)
{
	pending_text = job_text(del, patch);
	expect_bad_len(pending_text, strlen(pending_text), code, needle, "job-1");
	free_pending(NULL);
}

static void parse_ok(const char *text, rq_job *job)
{
	rq_error err;
	char id[RQ_JOB_ID_MAX + 1];

	rq_error_clear(&err);
	if (rq_job_parse(text, strlen(text), job, id, &err) < 0)
		fail_msg("job refused: %s: %s: %.300s", rq_qerror_name(err.code), err.msg, text);
	assert_string_equal(id, job->id);
}

static void expect_ok_patch(const char *del, const char *patch)
{
	rq_job job;
	pending_text = job_text(del, patch);
	parse_ok(pending_text, &job);
	rq_job_free(&job);
	free_pending(NULL);
}

/* --- the text as a whole --------------------------------------------------- */

static void test_not_json(void **state)
{
	(void)state;
	expect_bad("hello", RQ_E_INVALID_JOB, "JSON");
	expect_bad("", RQ_E_INVALID_JOB, "JSON");
	expect_bad("{'id':'x'}", RQ_E_INVALID_JOB, "JSON");
	/* a valid job followed by garbage */
	char *s = job_text(NULL, NULL), buf[1024];
	snprintf(buf, sizeof(buf), "%s xyz", s);
	expect_bad(buf, RQ_E_INVALID_JOB, "JSON");
	/* two objects */
	snprintf(buf, sizeof(buf), "%s%s", s, s);
	expect_bad(buf, RQ_E_INVALID_JOB, "JSON");
	free(s);
}

static void test_truncated_json(void **state)
{
	char *s = job_text(NULL, NULL);
	size_t n = strlen(s);
	(void)state;
	/* every proper prefix of a valid job is refused */
	for (size_t k = 0; k < n; k++)
		expect_bad_len(s, k, RQ_E_INVALID_JOB, "JSON", "");
	free(s);
}

static void test_embedded_nul(void **state)
{
	/* a NUL byte inside the text (the length covers it) and an escaped one */
	static const char text[] = "{\"id\":\"a\0b\",\"v\":1}";
	(void)state;
	expect_bad_len(text, sizeof(text) - 1, RQ_E_INVALID_JOB, "JSON", "");
	/* an escaped NUL inside a string */
	expect_bad("{\"v\":1,\"id\":\"job-1\",\"repo\":\"a\\u0000b\",\"mode\":\"onto\","
		   "\"target\":\"main\",\"revisions\":[\"main\"]}",
		   RQ_E_INVALID_JOB, "JSON");
}

static void test_not_an_object(void **state)
{
	(void)state;
	expect_bad("[]", RQ_E_INVALID_JOB, "object");
	expect_bad("[{\"id\":\"x\"}]", RQ_E_INVALID_JOB, "object");
	/* scalars at the top level are not JSON documents for jansson, or not objects */
	{
		rq_job job;
		rq_error err;
		static const char *const scalars[] = {"42", "\"job\"", "null", "true"};
		for (size_t i = 0; i < 4; i++) {
			assert_int_equal(
			    rq_job_parse(scalars[i], strlen(scalars[i]), &job, NULL, &err), -1);
			assert_int_equal(err.code, RQ_E_INVALID_JOB);
			assert_job_empty(&job);
		}
	}
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	expect_bad("{\"v\":1,\"id\":\"a\",\"id\":\"b\",\"repo\":\"r\",\"mode\":\"onto\","
		   "\"target\":\"main\",\"revisions\":[\"main\"]}",
		   RQ_E_INVALID_JOB, "duplicate");
	/* a duplicate "mode" must not let the last one win silently */
	expect_bad("{\"v\":1,\"id\":\"a\",\"repo\":\"r\",\"mode\":\"onto\",\"mode\":\"revert\","
		   "\"target\":\"main\",\"revisions\":[\"main\"]}",
		   RQ_E_INVALID_JOB, "mode");
	/* also inside the committer object */
	expect_bad("{\"v\":1,\"id\":\"a\",\"repo\":\"r\",\"mode\":\"onto\",\"target\":\"main\","
		   "\"revisions\":[\"main\"],\"committer\":{\"time\":1,\"time\":2}}",
		   RQ_E_INVALID_JOB, "time");
}

static void test_too_big(void **state)
{
	char *s = job_text(NULL, NULL);
	size_t n = strlen(s);
	char *big;
	rq_job job;
	rq_error err;
	char id[RQ_JOB_ID_MAX + 1];
	(void)state;

	/* exactly 64 KiB (padded with white space) is accepted */
	big = malloc(RQ_JOB_MAX_BYTES + 2);
	assert_non_null(big);
	memcpy(big, s, n);
	memset(big + n, ' ', RQ_JOB_MAX_BYTES + 1 - n);
	big[RQ_JOB_MAX_BYTES + 1] = '\0';
	assert_int_equal(rq_job_parse(big, RQ_JOB_MAX_BYTES, &job, id, &err), 0);
	assert_string_equal(job.id, "job-1");
	rq_job_free(&job);
	/* one byte more is refused, before parsing: id_out stays empty */
	expect_bad_len(big, RQ_JOB_MAX_BYTES + 1, RQ_E_INVALID_JOB, "bytes", "");
	expect_bad_len(big, RQ_JOB_MAX_BYTES + 1, RQ_E_INVALID_JOB, "65536", "");
	free(big);

	/* a job made big by its content: 1000 revisions of 100 bytes */
	{
		json_t *o = json_loads(s, 0, NULL), *a = json_array();
		char *rev = repeat('r', 100), *text;
		for (int i = 0; i < 1000; i++)
			json_array_append_new(a, json_string(rev));
		json_object_set_new(o, "revisions", a);
		text = json_dumps(o, JSON_COMPACT);
		assert_true(strlen(text) > RQ_JOB_MAX_BYTES);
		expect_bad(text, RQ_E_INVALID_JOB, "larger than");
		free(text);
		free(rev);
		json_decref(o);
	}
	free(s);
}

/* --- id --------------------------------------------------------------------- */

static void test_id_missing(void **state)
{
	char *s;
	(void)state;
	s = job_text("id", NULL);
	expect_bad_len(s, strlen(s), RQ_E_INVALID_JOB, "'id'", "");
	free(s);
	/* null, a number, an empty string */
	static const char *const bad_ids[] = {"{\"id\":null}", "{\"id\":42}", "{\"id\":\"\"}",
					      "{\"id\":[\"a\"]}"};
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		s = job_text(NULL, bad_ids[i]);
		expect_bad_len(s, strlen(s), RQ_E_INVALID_JOB, "'id'", "");
		free(s);
	}
}

static void test_id_invalid(void **state)
{
	static const char *const bad_ids[] = {
	    "a b",    "a\\tb",	"a\\nb", "caf\\u00e9", "a#b", "a?b",   "a*b", "a;b",
	    "a\\\\b", "a\\\"b", "$(id)", "a,b",	       "a'b", "a%20b", "a~b", "a^b",
	    "a=b",    "<a>",	"a|b",	 "a&b",	       "a!b", " a",    "a ",  "\\u007f"};
	char patch[512], *s;
	(void)state;

	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"id\":\"%s\"}", bad_ids[i]);
		s = job_text(NULL, patch);
		expect_bad_len(s, strlen(s), RQ_E_INVALID_JOB, "'id'", "");
		free(s);
	}
	/* 129 characters: too long; 128 is fine */
	{
		char *long_id = repeat('i', RQ_JOB_ID_MAX + 1);
		snprintf(patch, sizeof(patch), "{\"id\":\"%s\"}", long_id);
		s = job_text(NULL, patch);
		expect_bad_len(s, strlen(s), RQ_E_INVALID_JOB, "'id'", "");
		free(s);
		long_id[RQ_JOB_ID_MAX] = '\0';
		snprintf(patch, sizeof(patch), "{\"id\":\"%s\"}", long_id);
		s = job_text(NULL, patch);
		{
			rq_job job;
			rq_error err;
			char id[RQ_JOB_ID_MAX + 1];
			assert_int_equal(rq_job_parse(s, strlen(s), &job, id, &err), 0);
			assert_string_equal(job.id, long_id);
			assert_string_equal(id, long_id);
			rq_job_free(&job);
		}
		free(s);
		free(long_id);
	}
}

static void test_id_out(void **state)
{
	rq_job job;
	rq_error err;
	char id[RQ_JOB_ID_MAX + 1];
	char *s;
	(void)state;

	/* usable id, a later field bad: the id is reported */
	s = job_text("repo", "{\"id\":\"org/proj:42@x+y.z_-\"}");
	memset(id, 'x', sizeof(id));
	assert_int_equal(rq_job_parse(s, strlen(s), &job, id, &err), -1);
	assert_string_equal(id, "org/proj:42@x+y.z_-");
	assert_int_equal(err.code, RQ_E_INVALID_JOB);
	free(s);
	/* unknown field: the id is reported too */
	s = job_text(NULL, "{\"colour\":\"red\"}");
	memset(id, 'x', sizeof(id));
	assert_int_equal(rq_job_parse(s, strlen(s), &job, id, &err), -1);
	assert_string_equal(id, "job-1");
	free(s);
	/* not usable: empty */
	s = job_text(NULL, "{\"id\":\"a b\",\"repo\":\"/abs\"}");
	memset(id, 'x', sizeof(id));
	assert_int_equal(rq_job_parse(s, strlen(s), &job, id, &err), -1);
	assert_string_equal(id, "");
	free(s);
	/* not JSON: empty */
	memset(id, 'x', sizeof(id));
	assert_int_equal(rq_job_parse("{\"id\":\"job-1\"", 13, &job, id, &err), -1);
	assert_string_equal(id, "");
	/* success: filled */
	s = job_text(NULL, NULL);
	memset(id, 'x', sizeof(id));
	assert_int_equal(rq_job_parse(s, strlen(s), &job, id, &err), 0);
	assert_string_equal(id, "job-1");
	rq_job_free(&job);
	/* id_out may be NULL, on success and on failure */
	assert_int_equal(rq_job_parse(s, strlen(s), &job, NULL, &err), 0);
	rq_job_free(&job);
	free(s);
	s = job_text(NULL, "{\"mode\":\"x\"}");
	assert_int_equal(rq_job_parse(s, strlen(s), &job, NULL, &err), -1);
	assert_int_equal(err.code, RQ_E_INVALID_JOB);
	free(s);
}

/* --- top-level fields --------------------------------------------------------- */

static void test_unknown_field(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"colour\":\"red\"}", RQ_E_INVALID_JOB, "'colour'");
	expect_bad_patch(NULL, "{\"Repo\":\"x\"}", RQ_E_INVALID_JOB, "'Repo'");
	expect_bad_patch(NULL, "{\"onto\":\"main\"}", RQ_E_INVALID_JOB, "'onto'");
	/* an unknown field with a null value is still refused */
	expect_bad_patch(NULL, "{\"extra\":null}", RQ_E_INVALID_JOB, "'extra'");
}

static void test_version(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"v\":2}", RQ_E_INVALID_JOB, "'v'");
	expect_bad_patch(NULL, "{\"v\":0}", RQ_E_INVALID_JOB, "'v'");
	expect_bad_patch(NULL, "{\"v\":\"1\"}", RQ_E_INVALID_JOB, "'v'");
	expect_bad_patch(NULL, "{\"v\":1.0}", RQ_E_INVALID_JOB, "'v'");
	expect_bad_patch(NULL, "{\"v\":true}", RQ_E_INVALID_JOB, "'v'");
	expect_ok_patch(NULL, "{\"v\":1}");
}

static void test_repo_missing(void **state)
{
	(void)state;
	expect_bad_patch("repo", NULL, RQ_E_INVALID_JOB, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":null}", RQ_E_INVALID_JOB, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":\"\"}", RQ_E_INVALID_JOB, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":42}", RQ_E_INVALID_JOB, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":[\"a\"]}", RQ_E_INVALID_JOB, "'repo'");
}

static void test_repo_absolute(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"repo\":\"/srv/git/project.git\"}", RQ_E_BAD_REPO, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":\"/\"}", RQ_E_BAD_REPO, "'repo'");
	expect_bad_patch(NULL, "{\"repo\":\"//host/share\"}", RQ_E_BAD_REPO, "'repo'");
}

static void test_repo_dotdot(void **state)
{
	static const char *const bad[] = {"..",	   "../x", "a/../b", "a/..", "a/b/../../..",
					  ".",	   "./a",  "a/./b",  "a/.",  "../../etc/passwd",
					  "a/../", "../",  "./"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"repo\":\"%s\"}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_BAD_REPO, "'repo'");
	}
	/* names that only start with dots are fine */
	expect_ok_patch(NULL, "{\"repo\":\"...\"}");
	expect_ok_patch(NULL, "{\"repo\":\"a/..b/c.git\"}");
	expect_ok_patch(NULL, "{\"repo\":\".hidden/x\"}");
}

static void test_repo_empty_parts(void **state)
{
	static const char *const bad[] = {"a//b", "a///b", "//", "a/b//c", "a//", "a/b//"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"repo\":\"%s\"}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_BAD_REPO, "'repo'");
	}
}

static void test_repo_control_chars(void **state)
{
	static const char *const bad[] = {"a\\nb",    "a\\tb",	   "a\\rb",  "\\u0001x",
					  "x\\u001f", "a\\u007fb", "a\\\\b", "a\\u001b[31m"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"repo\":\"%s\"}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_BAD_REPO, "'repo'");
	}
}

static void test_repo_too_long(void **state)
{
	char *name = repeat('r', RQ_JOB_REPO_MAX + 1), *patch;
	(void)state;

	patch = malloc(RQ_JOB_REPO_MAX + 64);
	assert_non_null(patch);
	snprintf(patch, RQ_JOB_REPO_MAX + 64, "{\"repo\":\"%s\"}", name);
	/* a size cap: a job rule (invalid_job), naming the field */
	expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'repo'");
	/* components of 1 byte so that the length is the only problem */
	for (size_t i = 1; i < RQ_JOB_REPO_MAX + 1; i += 2)
		name[i] = '/';
	name[RQ_JOB_REPO_MAX] = 'r';
	snprintf(patch, RQ_JOB_REPO_MAX + 64, "{\"repo\":\"%s\"}", name);
	expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'repo'");
	/* 1024 bytes is fine */
	name[RQ_JOB_REPO_MAX] = '\0';
	name[RQ_JOB_REPO_MAX - 1] = 'r';
	snprintf(patch, RQ_JOB_REPO_MAX + 64, "{\"repo\":\"%s\"}", name);
	expect_ok_patch(NULL, patch);
	free(patch);
	free(name);
}

static void test_mode(void **state)
{
	(void)state;
	expect_bad_patch("mode", NULL, RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":null}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":\"\"}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":\"rebase\"}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":\"ONTO\"}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":\"onto \"}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":1}", RQ_E_INVALID_JOB, "'mode'");
	expect_bad_patch(NULL, "{\"mode\":\"advance-and-a-very-long-mode-name\"}", RQ_E_INVALID_JOB,
			 "'mode'");
}

static void test_target(void **state)
{
	(void)state;
	expect_bad_patch("target", NULL, RQ_E_INVALID_JOB, "'target'");
	expect_bad_patch(NULL, "{\"target\":null}", RQ_E_INVALID_JOB, "'target'");
	expect_bad_patch(NULL, "{\"target\":\"\"}", RQ_E_INVALID_JOB, "'target'");
	expect_bad_patch(NULL, "{\"target\":7}", RQ_E_INVALID_JOB, "'target'");
	expect_bad_patch(NULL, "{\"target\":\"--all\"}", RQ_E_BAD_REVISION, "'target'");
	expect_bad_patch(NULL, "{\"target\":\"-n\"}", RQ_E_BAD_REVISION, "'target'");
	expect_bad_patch(NULL, "{\"target\":\"--exec=rm -rf /\"}", RQ_E_BAD_REVISION, "'target'");
	{
		char *t = repeat('t', RQ_JOB_REV_LEN_MAX + 1), *patch = malloc(2048);
		snprintf(patch, 2048, "{\"target\":\"%s\"}", t);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'target'");
		free(patch);
		free(t);
	}
}

static void test_revisions_shape(void **state)
{
	(void)state;
	expect_bad_patch("revisions", NULL, RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":\"main..topic\"}", RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":{\"a\":\"b\"}}", RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":[]}", RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":[1]}", RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":[\"main\",null]}", RQ_E_INVALID_JOB, "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":[\"main\",[\"x\"]]}", RQ_E_INVALID_JOB,
			 "'revisions'");
	expect_bad_patch(NULL, "{\"revisions\":null}", RQ_E_INVALID_JOB, "'revisions'");
}

static void test_revisions_option_like(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"revisions\":[\"--stdin\"]}", RQ_E_BAD_REVISION, "revisions[0]");
	expect_bad_patch(NULL, "{\"revisions\":[\"--output=/etc/x\"]}", RQ_E_BAD_REVISION,
			 "revisions[0]");
	expect_bad_patch(NULL, "{\"revisions\":[\"--max-count=x\"]}", RQ_E_BAD_REVISION,
			 "revisions[0]");
	expect_bad_patch(NULL, "{\"revisions\":[\"--grep=a\\nb\"]}", RQ_E_BAD_REVISION,
			 "control character");
	expect_bad_patch(NULL, "{\"revisions\":[\"-\"]}", RQ_E_BAD_REVISION, "revisions[0]");
	expect_bad_patch(NULL, "{\"revisions\":[\"main\",\"--\"]}", RQ_E_BAD_REVISION,
			 "revisions[1]");
	expect_bad_patch(NULL, "{\"revisions\":[\"--since=2.weeks.ago\"]}", RQ_E_BAD_REVISION,
			 "revisions[0]");
	/* the revision-walk options replayq takes, as on the command line */
	expect_ok_patch(NULL, "{\"revisions\":[\"main\",\"--branches\"]}");
	expect_ok_patch(NULL, "{\"revisions\":[\"-n1\",\"--branches=t*\",\"^main\"]}");
	expect_ok_patch(NULL, "{\"revisions\":[\"--author=A U Thor\",\"--not\",\"main\"]}");
}

static void test_revisions_too_many(void **state)
{
	json_t *o, *a;
	char *text;
	(void)state;

	for (int n = RQ_JOB_REVS_MAX; n <= RQ_JOB_REVS_MAX + 1; n++) {
		text = job_text(NULL, NULL);
		o = json_loads(text, 0, NULL);
		free(text);
		a = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(a, json_string("main"));
		json_object_set_new(o, "revisions", a);
		text = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (n == RQ_JOB_REVS_MAX) {
			rq_job job;
			parse_ok(text, &job);
			assert_int_equal(job.nrevisions, RQ_JOB_REVS_MAX);
			assert_null(job.revisions[RQ_JOB_REVS_MAX]);
			rq_job_free(&job);
		} else {
			expect_bad_len(text, strlen(text), RQ_E_INVALID_JOB, "'revisions'",
				       "job-1");
		}
		free(text);
	}
}

static void test_revisions_too_long(void **state)
{
	char *rev = repeat('a', RQ_JOB_REV_LEN_MAX + 1), *patch = malloc(4096);
	(void)state;
	snprintf(patch, 4096, "{\"revisions\":[\"main\",\"%s\"]}", rev);
	expect_bad_patch(NULL, patch, RQ_E_BAD_REVISION, "revisions[1]");
	rev[RQ_JOB_REV_LEN_MAX] = '\0';
	snprintf(patch, 4096, "{\"revisions\":[\"main\",\"%s\"]}", rev);
	expect_ok_patch(NULL, patch);
	expect_bad_patch(NULL, "{\"revisions\":[\"\"]}", RQ_E_BAD_REVISION, "revisions[0]");
	free(patch);
	free(rev);
}

static void test_revisions_bad_chars(void **state)
{
	static const char *const bad[] = {"main:file.txt", ":/message", "main topic", "main\\t",
					  "a\\nb",	   "a\\u007fb", "a\\\\b",     " main",
					  "HEAD:",	   "main\\r"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"revisions\":[\"%s\"]}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_BAD_REVISION, "revisions[0]");
	}
	/* the usual revision forms are fine */
	expect_ok_patch(NULL, "{\"revisions\":[\"^main\",\"topic~2\",\"a...b\",\"v1^{commit}\","
			      "\"@\",\"HEAD^2\",\"0123abcd\",\"refs/heads/x\"]}");
}

static void test_contained(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"mode\":\"advance\",\"contained\":true}", RQ_E_INVALID_JOB,
			 "'contained'");
	expect_bad_patch(NULL, "{\"mode\":\"revert\",\"contained\":true}", RQ_E_INVALID_JOB,
			 "'contained'");
	expect_bad_patch(NULL, "{\"contained\":\"yes\"}", RQ_E_INVALID_JOB, "'contained'");
	expect_bad_patch(NULL, "{\"contained\":1}", RQ_E_INVALID_JOB, "'contained'");
	/* false is fine with any mode */
	expect_ok_patch(NULL, "{\"mode\":\"advance\",\"contained\":false}");
	expect_ok_patch(NULL, "{\"contained\":true}");
}

static void test_ref(void **state)
{
	static const char *const bad[] = {"main",
					  "heads/main",
					  "HEAD",
					  "refs/heads/a..b",
					  "refs/heads/x y",
					  "refs/heads/x.lock",
					  "refs/heads/",
					  "refs/heads/x~1",
					  "refs/heads/a^b",
					  "refs/heads/a:b",
					  "refs/heads/a\\\\b",
					  "refs/heads/a@{1}",
					  "",
					  "refs//heads/x",
					  "/refs/heads/x",
					  "refs/heads/a\\nb"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"ref\":\"%s\"}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_BAD_REF, "'ref'");
	}
	expect_bad_patch(NULL, "{\"ref\":42}", RQ_E_INVALID_JOB, "'ref'");
	expect_ok_patch(NULL, "{\"ref\":\"refs/heads/new\"}");
	expect_ok_patch(NULL, "{\"ref\":\"refs/replay/x/y\"}");
	expect_ok_patch(NULL, "{\"ref\":null}");
}

static void test_ref_with_contained(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"ref\":\"refs/heads/x\",\"contained\":true}", RQ_E_INVALID_JOB,
			 "'ref'");
	expect_bad_patch(NULL, "{\"ref\":\"refs/heads/x\",\"contained\":true}", RQ_E_INVALID_JOB,
			 "'contained'");
}

static void test_ref_action_and_empty(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"ref_action\":\"apply\"}", RQ_E_INVALID_JOB, "'ref_action'");
	expect_bad_patch(NULL, "{\"ref_action\":\"\"}", RQ_E_INVALID_JOB, "'ref_action'");
	expect_bad_patch(NULL, "{\"ref_action\":\"Update\"}", RQ_E_INVALID_JOB, "'ref_action'");
	expect_bad_patch(NULL, "{\"ref_action\":true}", RQ_E_INVALID_JOB, "'ref_action'");
	expect_bad_patch(NULL, "{\"empty\":\"skip\"}", RQ_E_INVALID_JOB, "'empty'");
	expect_bad_patch(NULL, "{\"empty\":\"\"}", RQ_E_INVALID_JOB, "'empty'");
	expect_bad_patch(NULL, "{\"empty\":0}", RQ_E_INVALID_JOB, "'empty'");
	expect_bad_patch(NULL, "{\"empty\":\"dropped-and-a-very-long-value\"}", RQ_E_INVALID_JOB,
			 "'empty'");
}

/* --- committer ------------------------------------------------------------------ */

static void test_committer_not_object(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"committer\":\"Bot <bot@example.com>\"}", RQ_E_INVALID_JOB,
			 "'committer'");
	expect_bad_patch(NULL, "{\"committer\":[\"Bot\"]}", RQ_E_INVALID_JOB, "'committer'");
	expect_bad_patch(NULL, "{\"committer\":1}", RQ_E_INVALID_JOB, "'committer'");
	expect_ok_patch(NULL, "{\"committer\":null}");
	expect_ok_patch(NULL, "{\"committer\":{}}");
}

static void test_committer_unknown_subfield(void **state)
{
	(void)state;
	expect_bad_patch(NULL,
			 "{\"committer\":{\"name\":\"Bot\",\"email\":\"b@x\",\"date\":\"now\"}}",
			 RQ_E_INVALID_JOB, "'committer.date'");
	expect_bad_patch(NULL, "{\"committer\":{\"Name\":\"Bot\"}}", RQ_E_INVALID_JOB,
			 "'committer.Name'");
}

static void test_committer_name_email(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"committer\":{\"name\":\"Bot\"}}", RQ_E_INVALID_JOB, "committer");
	expect_bad_patch(NULL, "{\"committer\":{\"email\":\"bot@example.com\"}}", RQ_E_INVALID_JOB,
			 "committer");
	expect_bad_patch(NULL, "{\"committer\":{\"name\":1,\"email\":\"b@x\"}}", RQ_E_INVALID_JOB,
			 "name");
	expect_bad_patch(NULL, "{\"committer\":{\"name\":\"Bot\",\"email\":false}}",
			 RQ_E_INVALID_JOB, "email");
	{
		char *n = repeat('n', RQ_JOB_NAME_MAX + 1), *patch = malloc(1024);
		snprintf(patch, 1024, "{\"committer\":{\"name\":\"%s\",\"email\":\"b@x\"}}", n);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "name");
		free(patch);
		free(n);
	}
}

static void test_committer_empty_name(void **state)
{
	(void)state;
	/* git refuses an empty ident name; so must a job (invalid_job, not ident) */
	expect_bad_patch(NULL, "{\"committer\":{\"name\":\"\",\"email\":\"b@x\"}}",
			 RQ_E_INVALID_JOB, "committer");
	/* a name that is empty once cleaned the way git cleans it */
	expect_bad_patch(NULL, "{\"committer\":{\"name\":\"<>\",\"email\":\"b@x\"}}",
			 RQ_E_INVALID_JOB, "committer");
}

static void test_committer_tz(void **state)
{
	static const char *const bad[] = {"+1",	   "0100", "+01:0", "+1a00", "+2400", "-1500",
					  "+0060", "UTC",  "",	    "++100", " 0100", "+0-10"};
	char patch[256];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch),
			 "{\"committer\":{\"time\":1700000000,\"tz\":\"%s\"}}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "tz");
	}
	expect_bad_patch(NULL, "{\"committer\":{\"time\":1700000000,\"tz\":\"+01:00\"}}",
			 RQ_E_INVALID_JOB, "tz");
	expect_bad_patch(NULL, "{\"committer\":{\"time\":1700000000,\"tz\":100}}", RQ_E_INVALID_JOB,
			 "tz");
}

static void test_committer_time(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"committer\":{\"time\":-1}}", RQ_E_INVALID_JOB, "time");
	expect_bad_patch(NULL, "{\"committer\":{\"time\":253402300800}}", RQ_E_INVALID_JOB, "time");
	expect_bad_patch(NULL, "{\"committer\":{\"time\":\"1700000000\"}}", RQ_E_INVALID_JOB,
			 "time");
	expect_bad_patch(NULL, "{\"committer\":{\"time\":1.5}}", RQ_E_INVALID_JOB, "time");
	expect_ok_patch(NULL, "{\"committer\":{\"time\":0}}");
	expect_ok_patch(NULL, "{\"committer\":{\"time\":253402300799}}");
}

static void test_committer_tz_without_time(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"committer\":{\"tz\":\"+0100\"}}", RQ_E_INVALID_JOB,
			 "committer.time");
	expect_bad_patch(NULL,
			 "{\"committer\":{\"name\":\"B\",\"email\":\"b@x\",\"tz\":\"+0100\"}}",
			 RQ_E_INVALID_JOB, "committer.tz");
}

/* --- limits and reply_to ---------------------------------------------------------- */

static void test_timeout(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"timeout_ms\":0}", RQ_E_INVALID_JOB, "'timeout_ms'");
	expect_bad_patch(NULL, "{\"timeout_ms\":-5}", RQ_E_INVALID_JOB, "'timeout_ms'");
	expect_bad_patch(NULL, "{\"timeout_ms\":3600001}", RQ_E_INVALID_JOB, "'timeout_ms'");
	expect_bad_patch(NULL, "{\"timeout_ms\":9223372036854775807}", RQ_E_INVALID_JOB,
			 "'timeout_ms'");
	expect_bad_patch(NULL, "{\"timeout_ms\":\"10\"}", RQ_E_INVALID_JOB, "'timeout_ms'");
	expect_bad_patch(NULL, "{\"timeout_ms\":1e3}", RQ_E_INVALID_JOB, "'timeout_ms'");
	expect_ok_patch(NULL, "{\"timeout_ms\":1}");
	expect_ok_patch(NULL, "{\"timeout_ms\":3600000}");
}

static void test_max_commits(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"max_commits\":0}", RQ_E_INVALID_JOB, "'max_commits'");
	expect_bad_patch(NULL, "{\"max_commits\":-1}", RQ_E_INVALID_JOB, "'max_commits'");
	expect_bad_patch(NULL, "{\"max_commits\":100001}", RQ_E_INVALID_JOB, "'max_commits'");
	expect_bad_patch(NULL, "{\"max_commits\":false}", RQ_E_INVALID_JOB, "'max_commits'");
	expect_ok_patch(NULL, "{\"max_commits\":1}");
	expect_ok_patch(NULL, "{\"max_commits\":100000}");
}

static void test_reply_to(void **state)
{
	static const char *const bad[] = {"", "a b", "a\\nb", "reply#1", "a*"};
	char patch[512];
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(patch, sizeof(patch), "{\"reply_to\":\"%s\"}", bad[i]);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'reply_to'");
	}
	expect_bad_patch(NULL, "{\"reply_to\":5}", RQ_E_INVALID_JOB, "'reply_to'");
	{
		char *r = repeat('r', RQ_JOB_ID_MAX + 1);
		snprintf(patch, sizeof(patch), "{\"reply_to\":\"%s\"}", r);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'reply_to'");
		free(r);
		r = repeat('r', RQ_JOB_REPLY_MAX + 1);
		snprintf(patch, sizeof(patch), "{\"reply_to\":\"%s\"}", r);
		expect_bad_patch(NULL, patch, RQ_E_INVALID_JOB, "'reply_to'");
		free(r);
	}
	expect_ok_patch(NULL, "{\"reply_to\":\"submit-123-456\"}");
}

static void test_submitted_at(void **state)
{
	(void)state;
	expect_bad_patch(NULL, "{\"submitted_at\":-1}", RQ_E_INVALID_JOB, "'submitted_at'");
	expect_bad_patch(NULL, "{\"submitted_at\":\"now\"}", RQ_E_INVALID_JOB, "'submitted_at'");
	expect_bad_patch(NULL, "{\"submitted_at\":253402300799001}", RQ_E_INVALID_JOB,
			 "'submitted_at'");
}

/* --- valid jobs ----------------------------------------------------------------- */

static void test_defaults(void **state)
{
	rq_job job;
	char *s = job_text(NULL, NULL);
	(void)state;

	parse_ok(s, &job);
	assert_string_equal(job.id, "job-1");
	assert_string_equal(job.repo, "group/project.git");
	assert_int_equal(job.mode, RQ_MODE_ONTO);
	assert_string_equal(job.target, "main");
	assert_int_equal(job.nrevisions, 1);
	assert_string_equal(job.revisions[0], "main..topic");
	assert_null(job.revisions[1]); /* NULL-terminated */
	assert_int_equal(job.contained, 0);
	assert_null(job.ref);
	assert_int_equal(job.ref_update, 0); /* ref_action print */
	assert_int_equal(job.empty, RQ_EMPTY_DROP);
	assert_int_equal(job.has_name, 0);
	assert_int_equal(job.has_time, 0);
	assert_int_equal(job.timeout_ms, RQ_JOB_TIMEOUT_DEF_MS);
	assert_int_equal(job.timeout_ms, 600000);
	assert_int_equal(job.max_commits, RQ_JOB_COMMITS_DEF);
	assert_int_equal(job.max_commits, 10000);
	assert_null(job.reply_to);
	assert_int_equal(job.submitted_at, 0);

	/* to_json fills the defaults in */
	{
		json_t *o = rq_job_to_json(&job);
		assert_non_null(o);
		assert_int_equal(json_integer_value(json_object_get(o, "v")), 1);
		assert_string_equal(json_string_value(json_object_get(o, "ref_action")), "print");
		assert_string_equal(json_string_value(json_object_get(o, "empty")), "drop");
		assert_int_equal(json_integer_value(json_object_get(o, "timeout_ms")), 600000);
		assert_int_equal(json_integer_value(json_object_get(o, "max_commits")), 10000);
		assert_true(json_is_false(json_object_get(o, "contained")));
		assert_null(json_object_get(o, "ref"));
		assert_null(json_object_get(o, "committer"));
		assert_null(json_object_get(o, "reply_to"));
		assert_null(json_object_get(o, "submitted_at"));
		json_decref(o);
	}
	rq_job_free(&job);
	rq_job_free(&job); /* twice is harmless */
	free(s);

	/* null members count as absent */
	s = job_text(NULL, "{\"ref\":null,\"ref_action\":null,\"empty\":null,\"contained\":null,"
			   "\"timeout_ms\":null,\"max_commits\":null,\"reply_to\":null,"
			   "\"v\":null,\"submitted_at\":null}");
	parse_ok(s, &job);
	assert_null(job.ref);
	assert_int_equal(job.ref_update, 0);
	assert_int_equal(job.empty, RQ_EMPTY_DROP);
	assert_int_equal(job.timeout_ms, 600000);
	assert_int_equal(job.max_commits, 10000);
	rq_job_free(&job);
	free(s);
}

static void test_modes_and_values(void **state)
{
	rq_job job;
	char *s;
	(void)state;

	s = job_text(NULL, "{\"mode\":\"advance\",\"target\":\"release\",\"ref_action\":"
			   "\"update\",\"empty\":\"keep\"}");
	parse_ok(s, &job);
	assert_int_equal(job.mode, RQ_MODE_ADVANCE);
	assert_string_equal(job.target, "release");
	assert_int_equal(job.ref_update, 1);
	assert_int_equal(job.empty, RQ_EMPTY_KEEP);
	rq_job_free(&job);
	free(s);

	s = job_text(NULL, "{\"mode\":\"revert\",\"ref_action\":\"print\",\"empty\":\"abort\"}");
	parse_ok(s, &job);
	assert_int_equal(job.mode, RQ_MODE_REVERT);
	assert_int_equal(job.ref_update, 0);
	assert_int_equal(job.empty, RQ_EMPTY_ABORT);
	rq_job_free(&job);
	free(s);

	/* committer: name+email only, then time only (tz +0000), negative tz */
	s = job_text(NULL, "{\"committer\":{\"name\":\"Bot\",\"email\":\"bot@example.com\"}}");
	parse_ok(s, &job);
	assert_int_equal(job.has_name, 1);
	assert_int_equal(job.has_time, 0);
	assert_string_equal(job.committer.name, "Bot");
	assert_string_equal(job.committer.email, "bot@example.com");
	rq_job_free(&job);
	free(s);

	s = job_text(NULL, "{\"committer\":{\"time\":1700000000}}");
	parse_ok(s, &job);
	assert_int_equal(job.has_name, 0);
	assert_int_equal(job.has_time, 1);
	assert_int_equal(job.committer.time, 1700000000);
	assert_int_equal(job.committer.tz, 0);
	rq_job_free(&job);
	free(s);

	s = job_text(NULL, "{\"committer\":{\"time\":1,\"tz\":\"-0530\"}}");
	parse_ok(s, &job);
	assert_int_equal(job.committer.tz, -330);
	rq_job_free(&job);
	free(s);

	s = job_text(NULL, "{\"committer\":{\"time\":1,\"tz\":\"+1400\"}}");
	parse_ok(s, &job);
	assert_int_equal(job.committer.tz, 14 * 60);
	rq_job_free(&job);
	free(s);
}

static void assert_jobs_equal(const rq_job *a, const rq_job *b)
{
	assert_string_equal(a->id, b->id);
	assert_string_equal(a->repo, b->repo);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->maintain, b->maintain);
	if (!a->maintain) /* a maintenance job has no target */
		assert_string_equal(a->target, b->target);
	if (a->group || b->group) {
		assert_non_null(a->group);
		assert_non_null(b->group);
		assert_string_equal(a->group, b->group);
	}
	assert_int_equal(a->nrevisions, b->nrevisions);
	for (size_t i = 0; i < a->nrevisions; i++)
		assert_string_equal(a->revisions[i], b->revisions[i]);
	assert_int_equal(a->contained, b->contained);
	if (a->ref || b->ref) {
		assert_non_null(a->ref);
		assert_non_null(b->ref);
		assert_string_equal(a->ref, b->ref);
	}
	assert_int_equal(a->ref_update, b->ref_update);
	assert_int_equal(a->empty, b->empty);
	assert_int_equal(a->has_name, b->has_name);
	assert_int_equal(a->has_time, b->has_time);
	if (a->has_name) {
		assert_string_equal(a->committer.name, b->committer.name);
		assert_string_equal(a->committer.email, b->committer.email);
	}
	if (a->has_time) {
		assert_int_equal(a->committer.time, b->committer.time);
		assert_int_equal(a->committer.tz, b->committer.tz);
	}
	assert_int_equal(a->timeout_ms, b->timeout_ms);
	assert_int_equal(a->max_commits, b->max_commits);
	if (a->reply_to || b->reply_to) {
		assert_non_null(a->reply_to);
		assert_non_null(b->reply_to);
		assert_string_equal(a->reply_to, b->reply_to);
	}
	assert_int_equal(a->submitted_at, b->submitted_at);
}

/* parse -> to_json -> text -> parse: the same job, the same JSON */
static void round_trip(const char *text)
{
	rq_job a, b;
	json_t *ja, *jb, *orig;
	char *s;

	parse_ok(text, &a);
	ja = rq_job_to_json(&a);
	assert_non_null(ja);
	s = json_dumps(ja, JSON_COMPACT);
	assert_non_null(s);
	parse_ok(s, &b);
	assert_jobs_equal(&a, &b);
	jb = rq_job_to_json(&b);
	assert_true(json_equal(ja, jb));
	/* every member of the original is in the JSON with the same value */
	orig = json_loads(text, 0, NULL);
	assert_non_null(orig);
	{
		const char *k;
		json_t *v;
		json_object_foreach(orig, k, v)
		{
			if (json_is_null(v))
				continue;
			if (!json_equal(v, json_object_get(ja, k)))
				fail_msg("member '%s' changed in the round trip: %s", k, s);
		}
	}
	json_decref(orig);
	json_decref(ja);
	json_decref(jb);
	free(s);
	rq_job_free(&a);
	rq_job_free(&b);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip("{\"v\":1,\"id\":\"org/proj:pr-42@x+1.2_3\",\"repo\":\"group/sub/project.git\","
		   "\"mode\":\"onto\",\"target\":\"origin/main\","
		   "\"revisions\":[\"^main\",\"topic\",\"other~2..stack\"],"
		   "\"ref\":\"refs/heads/result\",\"ref_action\":\"update\",\"empty\":\"keep\","
		   "\"committer\":{\"name\":\"Replay Bot\",\"email\":\"bot@example.com\","
		   "\"time\":1700000123,\"tz\":\"-0730\"},"
		   "\"timeout_ms\":12345,\"max_commits\":77,\"reply_to\":\"replies-1\","
		   "\"submitted_at\":1700000123456,\"contained\":false}");
	round_trip("{\"v\":1,\"id\":\"c\",\"repo\":\"r\",\"mode\":\"onto\",\"target\":\"main\","
		   "\"revisions\":[\"main..topic\"],\"contained\":true,\"empty\":\"abort\","
		   "\"committer\":{\"time\":0,\"tz\":\"+1400\"}}");
	round_trip("{\"v\":1,\"id\":\"r\",\"repo\":\"r\",\"mode\":\"revert\",\"target\":\"main\","
		   "\"revisions\":[\"main~2..main\"],\"committer\":{\"name\":\"N\",\"email\":"
		   "\"e@x\"}}");
	round_trip("{\"v\":1,\"id\":\"a\",\"repo\":\"r\",\"mode\":\"advance\",\"target\":"
		   "\"release\",\"revisions\":[\"v1..fix\"]}");
	/* a maintenance job keeps its group (one job of it at a time) */
	round_trip("{\"v\":1,\"id\":\"m\",\"repo\":\"r\",\"mode\":\"maintain\","
		   "\"timeout_ms\":5000,\"reply_to\":\"box\",\"group\":\"r:main\"}");
	round_trip(BASE_JOB);
}

/* The content of a job as rq_job_content gives it. malloc'ed. */
static char *content_of(const char *patch)
{
	rq_job job;
	char *text = job_text(NULL, patch), *c;

	parse_ok(text, &job);
	c = rq_job_content(&job);
	assert_non_null(c);
	rq_job_free(&job);
	free(text);
	return c;
}

/* Two entries with one id are the same job when they are equal but for
 * when and to whom they were sent, defaults spelt out or not, members in
 * any order. */
static void test_content(void **state)
{
	static const char *const same[] = {"{\"submitted_at\":1700000000123}",
					   "{\"reply_to\":\"box\"}", "{\"ref_action\":\"print\"}",
					   "{\"empty\":\"drop\",\"contained\":false}",
					   "{\"timeout_ms\":600000,\"max_commits\":10000,\"v\":1}"};
	static const char *const other[] = {"{\"target\":\"other\"}",
					    "{\"repo\":\"x\"}",
					    "{\"revisions\":[\"a..b\"]}",
					    "{\"ref_action\":\"update\"}",
					    "{\"empty\":\"keep\"}",
					    "{\"timeout_ms\":1}",
					    "{\"committer\":{\"time\":1,\"tz\":\"+0000\"}}",
					    "{\"ref\":\"refs/heads/x\"}",
					    "{\"id\":\"job-2\"}"};
	const char *reordered = "{\"revisions\":[\"main..topic\"],\"target\":\"main\",\"mode\":"
				"\"onto\",\"repo\":\"group/project.git\",\"id\":\"job-1\"}";
	char *base = content_of(NULL), *c;
	rq_job job;
	(void)state;

	assert_null(strstr(base, "submitted_at"));
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		c = content_of(same[i]);
		if (strcmp(c, base))
			fail_msg("%s changes the content: %s vs %s", same[i], c, base);
		free(c);
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		c = content_of(other[i]);
		if (!strcmp(c, base))
			fail_msg("%s does not change the content", other[i]);
		free(c);
	}
	parse_ok(reordered, &job);
	c = rq_job_content(&job);
	assert_string_equal(c, base);
	free(c);
	rq_job_free(&job);
	free(base);
}

/* --- helpers ---------------------------------------------------------------- */

static void test_id_valid(void **state)
{
	char *s;
	(void)state;
	assert_true(rq_job_id_valid("a"));
	assert_true(rq_job_id_valid("Job_1.2:3@host/x+y-z"));
	assert_true(rq_job_id_valid("0123456789"));
	assert_true(rq_job_id_valid("."));
	assert_true(rq_job_id_valid("-"));
	assert_false(rq_job_id_valid(NULL));
	assert_false(rq_job_id_valid(""));
	assert_false(rq_job_id_valid("a b"));
	assert_false(rq_job_id_valid("a\nb"));
	assert_false(rq_job_id_valid("a\tb"));
	assert_false(rq_job_id_valid("caf\xc3\xa9"));
	assert_false(rq_job_id_valid("a#b"));
	assert_false(rq_job_id_valid("a{b}"));
	assert_false(rq_job_id_valid("a*"));
	assert_false(rq_job_id_valid("\x7f"));
	s = repeat('x', RQ_JOB_ID_MAX);
	assert_true(rq_job_id_valid(s));
	free(s);
	s = repeat('x', RQ_JOB_ID_MAX + 1);
	assert_false(rq_job_id_valid(s));
	free(s);
	s = repeat('x', 100000);
	assert_false(rq_job_id_valid(s));
	free(s);
}

static void test_repo_valid(void **state)
{
	static const char *const good[] = {
	    "a",       "a/b",	 "group/project.git", "...", "a/..b",
	    ".hidden", "x.git/", "a-b_c/d.e",	      "a b", "caf\xc3\xa9"};
	static const char *const bad[] = {
	    "",	    "/",  "/a",	  "..",	  "../a", "a/..", "a/../b", ".",   "./a",   "a/./b", "a/.",
	    "a//b", "//", "a\\b", "a\nb", "a\tb", "\x7f", "a\x01",  "a//", "a/b//", "a/../", "./"};
	char *s;
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!rq_job_repo_valid(good[i]))
			fail_msg("repo '%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rq_job_repo_valid(bad[i]))
			fail_msg("repo '%s' accepted", bad[i]);
	assert_false(rq_job_repo_valid(NULL));
	s = repeat('r', RQ_JOB_REPO_MAX);
	assert_true(rq_job_repo_valid(s));
	free(s);
	s = repeat('r', RQ_JOB_REPO_MAX + 1);
	assert_false(rq_job_repo_valid(s));
	free(s);
}

static void test_replay_opts(void **state)
{
	rq_job job;
	rq_replay_opts o;
	char *s;
	(void)state;

	s = job_text(NULL, "{\"mode\":\"advance\",\"target\":\"release\",\"revisions\":[\"a\","
			   "\"^b\"],\"ref\":\"refs/heads/out\",\"empty\":\"abort\","
			   "\"max_commits\":42,\"committer\":{\"name\":\"N\",\"email\":\"e@x\"}}");
	parse_ok(s, &job);
	memset(&o, 0x5a, sizeof(o));
	rq_job_replay_opts(&job, &o);
	assert_int_equal(o.mode, RQ_MODE_ADVANCE);
	assert_ptr_equal(o.target, job.target);
	assert_string_equal(o.target, "release");
	assert_int_equal(o.contained, 0);
	assert_ptr_equal(o.ref, job.ref);
	assert_string_equal(o.ref, "refs/heads/out");
	assert_int_equal(o.nrevisions, 2);
	assert_string_equal(o.revisions[0], "a");
	assert_string_equal(o.revisions[1], "^b");
	assert_int_equal(o.empty, RQ_EMPTY_ABORT);
	assert_int_equal(o.max_commits, 42);
	assert_null(o.committer); /* the pool decides the committer */
	rq_job_free(&job);
	free(s);

	s = job_text(NULL, "{\"contained\":true}");
	parse_ok(s, &job);
	rq_job_replay_opts(&job, &o);
	assert_int_equal(o.mode, RQ_MODE_ONTO);
	assert_int_equal(o.contained, 1);
	assert_null(o.ref);
	assert_int_equal(o.empty, RQ_EMPTY_DROP);
	assert_int_equal(o.max_commits, 10000);
	rq_job_free(&job);
	free(s);
}

/* --- keep_going and trains ------------------------------------------------ */

static void test_keep_going(void **state)
{
	rq_job job;
	rq_replay_opts o;
	char *a, *b;
	(void)state;

	expect_ok_patch(NULL, "{\"keep_going\":false}");
	expect_bad_patch(NULL, "{\"keep_going\":\"yes\"}", RQ_E_INVALID_JOB, "keep_going");
	expect_bad_patch(NULL, "{\"keep_going\":1}", RQ_E_INVALID_JOB, "keep_going");
	pending_text = job_text(NULL, "{\"keep_going\":true}");
	parse_ok(pending_text, &job);
	assert_int_equal(job.keep_going, 1);
	rq_job_replay_opts(&job, &o);
	assert_int_equal(o.keep_going, 1);
	rq_job_free(&job);
	free_pending(NULL);
	round_trip("{\"v\":1,\"id\":\"k\",\"repo\":\"r\",\"mode\":\"onto\",\"target\":\"main\","
		   "\"revisions\":[\"^main\",\"a\",\"b\"],\"keep_going\":true}");
	/* a job without the field keeps the content it had; false is the default */
	a = content_of(NULL);
	b = content_of("{\"keep_going\":false}");
	assert_string_equal(a, b);
	assert_null(strstr(a, "keep_going"));
	free(a);
	free(b);
	a = content_of("{\"keep_going\":true}");
	assert_non_null(strstr(a, "\"keep_going\":true"));
	free(a);
}

#define TRAIN_PATCH(extra)                                                                         \
	"{\"mode\":\"train\",\"cars\":[{\"name\":\"mr-1\",\"revisions\":[\"main..mr-1\"]},"        \
	"{\"name\":\"mr-2\",\"revisions\":[\"mr-2\"],\"skip\":true}]" extra "}"

/* "sign": a boolean; in the content only when true (a job without it
 * keeps the content it had). */
static void test_sign(void **state)
{
	rq_job job;
	char *a, *b;
	(void)state;

	expect_bad_patch(NULL, "{\"sign\":\"yes\"}", RQ_E_INVALID_JOB, "sign");
	expect_bad_patch(NULL, "{\"sign\":1}", RQ_E_INVALID_JOB, "sign");
	pending_text = job_text(NULL, "{\"sign\":true}");
	parse_ok(pending_text, &job);
	assert_int_equal(job.sign, 1);
	rq_job_free(&job);
	free_pending(NULL);
	pending_text = job_text("revisions", TRAIN_PATCH(",\"sign\":true"));
	parse_ok(pending_text, &job);
	assert_int_equal(job.sign, 1);
	assert_int_equal(job.train, 1);
	rq_job_free(&job);
	free_pending(NULL);
	a = content_of(NULL);
	b = content_of("{\"sign\":false}");
	assert_string_equal(a, b);
	assert_null(strstr(a, "sign"));
	free(a);
	free(b);
	a = content_of("{\"sign\":true}");
	assert_non_null(strstr(a, "\"sign\":true"));
	free(a);
}

/* "group": 1-128 of the id's characters; in the content only when given;
 * rq_job_digest is the sha1 of the content (of the text when it is no
 * valid job), what a worker's claim records. */
static void test_group(void **state)
{
	char *a, *b, d1[41], d2[41], *t;
	rq_job job;
	(void)state;

	expect_bad_patch(NULL, "{\"group\":1}", RQ_E_INVALID_JOB, "group");
	expect_bad_patch(NULL, "{\"group\":\"\"}", RQ_E_INVALID_JOB, "group");
	expect_bad_patch(NULL, "{\"group\":\"a b\"}", RQ_E_INVALID_JOB, "group");
	expect_bad_patch(NULL, "{\"group\":\"x{y}\"}", RQ_E_INVALID_JOB, "group");
	a = repeat('g', 129);
	b = malloc(160);
	snprintf(b, 160, "{\"group\":\"%s\"}", a);
	expect_bad_patch(NULL, b, RQ_E_INVALID_JOB, "group");
	free(b);
	free(a);
	pending_text = job_text(NULL, "{\"group\":\"main-train:a/b@c+1\"}");
	parse_ok(pending_text, &job);
	assert_string_equal(job.group, "main-train:a/b@c+1");
	rq_job_free(&job);
	free_pending(NULL);
	a = content_of(NULL);
	assert_null(strstr(a, "\"group\""));
	b = content_of("{\"group\":\"g\"}");
	assert_non_null(strstr(b, "\"group\":\"g\""));
	free(b);
	t = job_text(NULL, "{\"submitted_at\":5}");
	assert_int_equal(rq_job_digest(t, strlen(t), d1), 0);
	free(t);
	t = job_text(NULL, "{\"reply_to\":\"box\"}");
	assert_int_equal(rq_job_digest(t, strlen(t), d2), 0);
	free(t);
	assert_string_equal(d1, d2);
	assert_int_equal(strlen(d1), 40);
	assert_int_equal(rq_job_digest("not json", 8, d1), 0);
	/* sha1("not json") */
	assert_string_equal(d1, "ed0d1292643d9ed818d9a191829b0f419867f874");
	free(a);
}

/* "on_ref_moved": "fail" (the default) or "retry"; in the content only
 * when "retry", so that the content of a job without it stays the same. */
static void test_on_ref_moved(void **state)
{
	char *a, *b;
	rq_job job;
	(void)state;

	expect_bad_patch(NULL, "{\"on_ref_moved\":\"again\"}", RQ_E_INVALID_JOB,
			 "field 'on_ref_moved' must be fail or retry");
	expect_bad_patch(NULL, "{\"on_ref_moved\":true}", RQ_E_INVALID_JOB, "on_ref_moved");
	expect_bad_patch(NULL, "{\"on_ref_moved\":\"\"}", RQ_E_INVALID_JOB, "on_ref_moved");
	pending_text = job_text(NULL, "{\"on_ref_moved\":\"retry\"}");
	parse_ok(pending_text, &job);
	assert_int_equal(job.retry_moved, 1);
	rq_job_free(&job);
	free_pending(NULL);
	pending_text = job_text(NULL, "{\"on_ref_moved\":\"fail\"}");
	parse_ok(pending_text, &job);
	assert_int_equal(job.retry_moved, 0);
	rq_job_free(&job);
	free_pending(NULL);
	a = content_of(NULL);
	b = content_of("{\"on_ref_moved\":\"fail\"}");
	assert_string_equal(a, b);
	assert_null(strstr(a, "on_ref_moved"));
	free(a);
	free(b);
	a = content_of("{\"on_ref_moved\":\"retry\"}");
	assert_non_null(strstr(a, "\"on_ref_moved\":\"retry\""));
	free(a);
}

static void test_train_ok(void **state)
{
	rq_job job;
	rq_train_opts o;
	rq_train_car cars[2];
	(void)state;

	pending_text =
	    job_text("revisions", TRAIN_PATCH(",\"method\":\"merge\",\"ref_prefix\":"
					      "\"refs/ci/t/\",\"car_refs\":false,"
					      "\"message\":\"Merge {name}\\n\\nInto {target}\""));
	parse_ok(pending_text, &job);
	assert_int_equal(job.train, 1);
	assert_int_equal(job.method, RQ_TRAIN_MERGE);
	assert_int_equal(job.ncars, 2);
	assert_string_equal(job.cars[1].name, "mr-2");
	assert_string_equal(job.cars[0].revisions[0], "main..mr-1");
	assert_int_equal(job.cars[1].skip, 1);
	assert_int_equal(job.no_car_refs, 1);
	rq_job_train_opts(&job, &o, cars);
	assert_string_equal(o.target, "main");
	assert_int_equal(o.ncars, 2);
	assert_ptr_equal(o.cars, cars);
	assert_string_equal(cars[0].name, "mr-1");
	assert_int_equal(cars[1].skip, 1);
	assert_string_equal(o.ref_prefix, "refs/ci/t/");
	assert_int_equal(o.no_refs, 1);
	assert_non_null(strstr(o.message, "Into {target}"));
	rq_job_free(&job);
	free_pending(NULL);
	round_trip("{\"v\":1,\"id\":\"t\",\"repo\":\"r\",\"mode\":\"train\",\"target\":\"main\","
		   "\"method\":\"merge\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"^main\",\"a\"],"
		   "\"skip\":false},{\"name\":\"b.c_d-1\",\"revisions\":[\"b\"],\"skip\":true}],"
		   "\"ref_prefix\":\"refs/train/x/\",\"car_refs\":true,\"message\":\"m {name}\","
		   "\"ref_action\":\"update\"}");
	round_trip("{\"v\":1,\"id\":\"t\",\"repo\":\"r\",\"mode\":\"train\",\"target\":\"main\","
		   "\"cars\":[{\"name\":\"a\",\"revisions\":[\"a\"],\"skip\":false}]}");
}

/* Every train rule, with its code and the field it names. */
static void test_train_bad(void **state)
{
	static const struct {
		const char *del, *patch;
		rq_code code;
		const char *needle;
	} cases[] = {
	    {"revisions", "{\"mode\":\"train\"}", RQ_E_INVALID_JOB, "cars"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[]}", RQ_E_INVALID_JOB, "cars"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":{}}", RQ_E_INVALID_JOB, "cars"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[\"a\"]}", RQ_E_INVALID_JOB, "cars[0]"},
	    {NULL, TRAIN_PATCH(""), RQ_E_INVALID_JOB, "'revisions' does not apply to mode train"},
	    {"revisions", TRAIN_PATCH(",\"contained\":true"), RQ_E_INVALID_JOB, "contained"},
	    {"revisions", TRAIN_PATCH(",\"ref\":\"refs/heads/x\""), RQ_E_INVALID_JOB, "'ref'"},
	    {"revisions", TRAIN_PATCH(",\"keep_going\":true"), RQ_E_INVALID_JOB, "keep_going"},
	    {"revisions", TRAIN_PATCH(",\"method\":\"squash\""), RQ_E_INVALID_JOB, "method"},
	    {"revisions", TRAIN_PATCH(",\"car_refs\":1"), RQ_E_INVALID_JOB, "car_refs"},
	    {"revisions", TRAIN_PATCH(",\"ref_prefix\":\"refs/x\""), RQ_E_BAD_REF, "ref_prefix"},
	    {"revisions", TRAIN_PATCH(",\"ref_prefix\":\"heads/x/\""), RQ_E_BAD_REF, "ref_prefix"},
	    {"revisions", TRAIN_PATCH(",\"message\":\"m\""), RQ_E_INVALID_JOB,
	     "needs method merge"},
	    {"revisions", TRAIN_PATCH(",\"method\":\"merge\",\"message\":\"\""), RQ_E_INVALID_JOB,
	     "message"},
	    {"revisions", TRAIN_PATCH(",\"method\":\"merge\",\"message\":\"a\\u0001\""),
	     RQ_E_INVALID_JOB, "control character"},
	    {NULL, "{\"method\":\"merge\"}", RQ_E_INVALID_JOB, "'method' needs mode train"},
	    {NULL, "{\"cars\":[]}", RQ_E_INVALID_JOB, "'cars' needs mode train"},
	    {NULL, "{\"message\":\"x\"}", RQ_E_INVALID_JOB, "'message' needs mode train"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"a\"],"
	     "\"x\":1}]}",
	     RQ_E_INVALID_JOB, "cars[0].x"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[{\"revisions\":[\"a\"]}]}",
	     RQ_E_INVALID_JOB, "cars[0].name"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[{\"name\":\"-a\",\"revisions\":[\"a\"]}]}",
	     RQ_E_INVALID_JOB, "cars[0].name"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a/b\",\"revisions\":[\"a\"]}]}",
	     RQ_E_INVALID_JOB, "cars[0].name"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"a\"]},"
	     "{\"name\":\"a\",\"revisions\":[\"b\"]}]}",
	     RQ_E_INVALID_JOB, "twice"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\"}]}", RQ_E_INVALID_JOB,
	     "cars[0].revisions"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[]}]}",
	     RQ_E_INVALID_JOB, "cars[0].revisions"},
	    {"revisions", "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[1]}]}",
	     RQ_E_INVALID_JOB, "cars[0].revisions"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"--all\"]}]}",
	     RQ_E_BAD_REVISION, "cars[0].revisions[0]"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"a b\"]}]}",
	     RQ_E_BAD_REVISION, "cars[0].revisions[0]"},
	    {"revisions",
	     "{\"mode\":\"train\",\"cars\":[{\"name\":\"a\",\"revisions\":[\"a\"],\"skip\":\"no\"}]"
	     "}",
	     RQ_E_INVALID_JOB, "cars[0].skip"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad_patch(cases[i].del, cases[i].patch, cases[i].code, cases[i].needle);
}

/* The limits: cars, revisions per car, revisions in all. */
static void test_train_limits(void **state)
{
	json_t *o = json_loads(BASE_JOB, 0, NULL), *cars = json_array();
	(void)state;

	json_object_del(o, "revisions");
	json_object_set_new(o, "mode", json_string("train"));
	for (int k = 0; k <= RQ_TRAIN_CARS_MAX; k++) {
		char name[16];
		snprintf(name, sizeof(name), "c%d", k);
		json_array_append_new(cars,
				      json_pack("{s:s, s:[s]}", "name", name, "revisions", name));
	}
	json_object_set_new(o, "cars", cars);
	pending_text = json_dumps(o, JSON_COMPACT);
	expect_bad_len(pending_text, strlen(pending_text), RQ_E_INVALID_JOB, "1-200 cars", "job-1");
	free_pending(NULL);
	json_array_remove(cars, 0);
	pending_text = json_dumps(o, JSON_COMPACT);
	{
		rq_job job;
		parse_ok(pending_text, &job);
		assert_int_equal(job.ncars, RQ_TRAIN_CARS_MAX);
		rq_job_free(&job);
	}
	free_pending(NULL);
	json_array_clear(cars);
	json_array_append_new(cars, json_pack("{s:s, s:[sssssssssssssssss]}", "name", "a",
					      "revisions", "a", "a", "a", "a", "a", "a", "a", "a",
					      "a", "a", "a", "a", "a", "a", "a", "a", "a"));
	pending_text = json_dumps(o, JSON_COMPACT);
	expect_bad_len(pending_text, strlen(pending_text), RQ_E_INVALID_JOB, "1-16", "job-1");
	free_pending(NULL);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_not_json, free_pending),
	    cmocka_unit_test_teardown(test_truncated_json, free_pending),
	    cmocka_unit_test_teardown(test_embedded_nul, free_pending),
	    cmocka_unit_test_teardown(test_not_an_object, free_pending),
	    cmocka_unit_test_teardown(test_duplicate_keys, free_pending),
	    cmocka_unit_test_teardown(test_too_big, free_pending),
	    cmocka_unit_test_teardown(test_id_missing, free_pending),
	    cmocka_unit_test_teardown(test_id_invalid, free_pending),
	    cmocka_unit_test_teardown(test_id_out, free_pending),
	    cmocka_unit_test_teardown(test_unknown_field, free_pending),
	    cmocka_unit_test_teardown(test_version, free_pending),
	    cmocka_unit_test_teardown(test_repo_missing, free_pending),
	    cmocka_unit_test_teardown(test_repo_absolute, free_pending),
	    cmocka_unit_test_teardown(test_repo_dotdot, free_pending),
	    cmocka_unit_test_teardown(test_repo_empty_parts, free_pending),
	    cmocka_unit_test_teardown(test_repo_control_chars, free_pending),
	    cmocka_unit_test_teardown(test_repo_too_long, free_pending),
	    cmocka_unit_test_teardown(test_mode, free_pending),
	    cmocka_unit_test_teardown(test_target, free_pending),
	    cmocka_unit_test_teardown(test_revisions_shape, free_pending),
	    cmocka_unit_test_teardown(test_revisions_option_like, free_pending),
	    cmocka_unit_test_teardown(test_revisions_too_many, free_pending),
	    cmocka_unit_test_teardown(test_revisions_too_long, free_pending),
	    cmocka_unit_test_teardown(test_revisions_bad_chars, free_pending),
	    cmocka_unit_test_teardown(test_contained, free_pending),
	    cmocka_unit_test_teardown(test_ref, free_pending),
	    cmocka_unit_test_teardown(test_ref_with_contained, free_pending),
	    cmocka_unit_test_teardown(test_ref_action_and_empty, free_pending),
	    cmocka_unit_test_teardown(test_committer_not_object, free_pending),
	    cmocka_unit_test_teardown(test_committer_unknown_subfield, free_pending),
	    cmocka_unit_test_teardown(test_committer_name_email, free_pending),
	    cmocka_unit_test_teardown(test_committer_empty_name, free_pending),
	    cmocka_unit_test_teardown(test_committer_tz, free_pending),
	    cmocka_unit_test_teardown(test_committer_time, free_pending),
	    cmocka_unit_test_teardown(test_committer_tz_without_time, free_pending),
	    cmocka_unit_test_teardown(test_timeout, free_pending),
	    cmocka_unit_test_teardown(test_max_commits, free_pending),
	    cmocka_unit_test_teardown(test_reply_to, free_pending),
	    cmocka_unit_test_teardown(test_submitted_at, free_pending),
	    cmocka_unit_test_teardown(test_defaults, free_pending),
	    cmocka_unit_test_teardown(test_modes_and_values, free_pending),
	    cmocka_unit_test_teardown(test_round_trip, free_pending),
	    cmocka_unit_test(test_content),
	    cmocka_unit_test_teardown(test_id_valid, free_pending),
	    cmocka_unit_test_teardown(test_repo_valid, free_pending),
	    cmocka_unit_test_teardown(test_replay_opts, free_pending),
	    cmocka_unit_test_teardown(test_keep_going, free_pending),
	    cmocka_unit_test_teardown(test_sign, free_pending),
	    cmocka_unit_test_teardown(test_group, free_pending),
	    cmocka_unit_test_teardown(test_on_ref_moved, free_pending),
	    cmocka_unit_test_teardown(test_train_ok, free_pending),
	    cmocka_unit_test_teardown(test_train_bad, free_pending),
	    cmocka_unit_test_teardown(test_train_limits, free_pending),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
