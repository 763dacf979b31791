/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revparse: the syntax of one revision name, without a repository:
 * suffixes read from the right as git reads them, the "@{...}" forms,
 * ":/text", the names git does not take, and ids read at either object
 * format's width (a 40-digit name is a full id in SHA-1, an abbreviation
 * in SHA-256). Resolution against git rev-parse: unit/test_revs.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_revparse.h"

/* The parsed name as text: "base|at|step;step" (at: "-N", "u", "push",
 * "N", "d:<date>"; step: "~N", "^N", "{}", "{commit}"..., "{/text}"). */
static char *describe(const rq_revparse *p)
{
	static const char *const types[] = {"", "commit", "tree", "blob", "tag"};
	static char buf[512];
	size_t n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%.*s|", p->search_all ? ":/" : "",
			      (int)p->base_len, p->base);
	if (p->at == RQ_REVPARSE_AT_PRIOR)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "-%ld", p->at_n);
	else if (p->at == RQ_REVPARSE_AT_UPSTREAM)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "u");
	else if (p->at == RQ_REVPARSE_AT_PUSH)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "push");
	else if (p->at == RQ_REVPARSE_AT_REFLOG)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%ld", p->at_n);
	else if (p->at == RQ_REVPARSE_AT_DATE)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "d:%.*s", (int)p->at_len,
				      p->at_text);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "|");
	for (size_t i = 0; i < p->nsteps; i++) {
		const rq_revparse_step *s = &p->steps[i];
		const char *sep = i ? ";" : "";
		if (s->kind == RQ_REVPARSE_ANCESTOR || s->kind == RQ_REVPARSE_PARENT)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%c%ld", sep,
					      s->kind == RQ_REVPARSE_ANCESTOR ? '~' : '^', s->n);
		else if (s->kind == RQ_REVPARSE_PEEL)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s{%s}", sep,
					      types[s->type]);
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s{/%.*s}", sep,
					      (int)s->len, s->text);
	}
	return buf;
}

static void check_read(const char *expr, const char *want)
{
	rq_revparse p;
	int rc = rq_revparse_read(expr, &p);

	if (rc != 0)
		fail_msg("rq_revparse_read(%s) = %d, want 0", expr, rc);
	if (strcmp(describe(&p), want))
		fail_msg("rq_revparse_read(%s): %s, want %s", expr, describe(&p), want);
	rq_revparse_free(&p);
}

static void check_refused(const char *expr)
{
	rq_revparse p;
	int rc = rq_revparse_read(expr, &p);

	if (rc != 1)
		fail_msg("rq_revparse_read(%s) = %d, want 1 (%s)", expr, rc,
			 rc == 0 ? describe(&p) : "");
	assert_null(p.steps);
	rq_revparse_free(&p);
}

static void test_suffixes(void **state)
{
	(void)state;
	check_read("main", "main||");
	check_read("main~", "main||~1");
	check_read("main^", "main||^1");
	check_read("main~3", "main||~3");
	check_read("main^2", "main||^2");
	check_read("main^0", "main||^0");
	check_read("main~~", "main||~1;~1");
	check_read("main^^2~10", "main||^1;^2;~10");
	check_read("v1^{}", "v1||{}");
	check_read("v1^{commit}~1", "v1||{commit};~1");
	check_read("v1^{tree}", "v1||{tree}");
	check_read("v1^{tag}^{blob}", "v1||{tag};{blob}");
	/* a search's text may hold what would be suffixes: the last "^{"
	 * opens it, as in git */
	check_read("main^{/a~1^2}", "main||{/a~1^2}");
	check_read("main^{/a}b}", "main||{/a}b}");
	check_read("main^{/fix}~1", "main||{/fix};~1");
	check_read("@", "@||");
	check_read("@~1", "@||~1");
	check_read("HEAD^2", "HEAD||^2");
	/* '^' or '~' not followed by a count only: part of the name */
	check_read("a^b", "a^b||");
	check_read("a~b~2", "a~b||~2");
	check_read("2~3", "2||~3");
}

static void test_at_forms(void **state)
{
	(void)state;
	check_read("topic@{1}", "topic|1|");
	check_read("topic@{0}~2", "topic|0|~2");
	check_read("@{1}", "|1|");
	check_read("@{-1}", "|-1|");
	check_read("@{-12}^2", "|-12|^2");
	check_read("main@{u}", "main|u|");
	check_read("main@{upstream}~1", "main|u|~1");
	check_read("@{u}", "|u|");
	check_read("main@{push}", "main|push|");
	check_read("main@{yesterday}", "main|d:yesterday|");
	check_read("main@{2 days ago}^{commit}", "main|d:2 days ago|{commit}");
	check_read("@{-1}@{1}", "@{-1}|1|");
	check_read("@{-1}@{u}", "@{-1}|u|");
	/* ":/": the whole rest is the text */
	check_read(":/t2", ":/t2||");
	check_read(":/fix~1^2", ":/fix~1^2||");
	/* an unclosed "@{": part of the name, which no ref has */
	check_read("a@{1", "a@{1||");
}

static void test_refused(void **state)
{
	(void)state;
	check_refused("");
	check_refused("~1");
	check_refused("^2");
	check_refused("^{commit}");
	check_refused("main^{object}"); /* as before: libgit2 did not take it */
	check_refused("main^{bogus}");
	check_refused("main^{/}");
	check_refused(":/");
	check_refused("main@{-1}");
	check_refused("@{-0}");
	check_refused("@{-}");
	check_refused("@{-x}");
	check_refused("main~2147483648");
	check_refused("main@{99999999999}");
	check_refused("main^99999999999^{}");
}

static void check_hex(const rq_oid_algo *algo, const char *s, int want, const char *prefix)
{
	rq_oid got, expect;
	int rc = rq_revparse_hex(algo, s, strlen(s), &got);

	if (rc != want)
		fail_msg("rq_revparse_hex(%s, %s) = %d, want %d", algo->name, s, rc, want);
	if (!want)
		return;
	if (want == 2)
		assert_int_equal(rq_oid_parse(&expect, algo, prefix, strlen(prefix)), 0);
	else
		assert_int_equal(rq_oid_parse_prefix(&expect, algo, prefix, strlen(prefix)), 0);
	assert_true(rq_oid_eq(&got, &expect));
}

static void test_hex_widths(void **state)
{
	const char *h40 = "0123456789abcdef0123456789abcdef01234567";
	const char *h64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char up[65];

	(void)state;
	check_hex(&rq_oid_sha1, h40, 2, h40);
	check_hex(&rq_oid_sha1, "0123", 1, "0123");
	check_hex(&rq_oid_sha1, "01234", 1, "01234");
	check_hex(&rq_oid_sha1, "012", 0, NULL);
	check_hex(&rq_oid_sha1, "0123456789abcdef0123456789abcdef0123456", 1,
		  "0123456789abcdef0123456789abcdef0123456");
	check_hex(&rq_oid_sha1, h64, 0, NULL); /* longer than a SHA-1 id */
	check_hex(&rq_oid_sha1, "main", 0, NULL);
	check_hex(&rq_oid_sha1, "012g", 0, NULL);
	/* git reads upper case digits too */
	for (size_t i = 0; i <= 40; i++)
		up[i] = (char)(h40[i] >= 'a' ? h40[i] - 'a' + 'A' : h40[i]);
	check_hex(&rq_oid_sha1, up, 2, h40);
	check_hex(&rq_oid_sha1, "ABCD", 1, "abcd");
	/* SHA-256: 64 digits are an id, 40 an abbreviation */
	check_hex(&rq_oid_sha256, h64, 2, h64);
	check_hex(&rq_oid_sha256, h40, 1, h40);
	check_hex(&rq_oid_sha256, "0123", 1, "0123");
	check_hex(&rq_oid_sha256,
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0", 0, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_suffixes),
	    cmocka_unit_test(test_at_forms),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_hex_widths),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
