/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cluster: the slot map from CLUSTER SLOTS replies (made here the way
 * a redis-server 7 sends them), MOVED updates, and the redirections'
 * texts.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "rq_cluster.h"

static redisReply *node_reply(int type)
{
	redisReply *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->type = type;
	return r;
}

static redisReply *str_reply(const char *s)
{
	redisReply *r = node_reply(REDIS_REPLY_STRING);
	r->str = strdup(s);
	r->len = strlen(s);
	return r;
}

static redisReply *int_reply(long long v)
{
	redisReply *r = node_reply(REDIS_REPLY_INTEGER);
	r->integer = v;
	return r;
}

/* An array of n replies. */
static redisReply *array_reply(size_t n, redisReply **items)
{
	redisReply *r = node_reply(REDIS_REPLY_ARRAY);
	r->elements = n;
	r->element = calloc(n ? n : 1, sizeof(*r->element));
	assert_non_null(r->element);
	if (n)
		memcpy(r->element, items, n * sizeof(*items));
	return r;
}

/* [host, port, id, {}]: host NULL for nil */
static redisReply *node(const char *host, int port)
{
	redisReply *items[4] = {host ? str_reply(host) : node_reply(REDIS_REPLY_NIL),
				int_reply(port), str_reply("0123abcd"), array_reply(0, NULL)};
	return array_reply(4, items);
}

static redisReply *range(int start, int end, redisReply *master, redisReply *replica)
{
	redisReply *items[4] = {int_reply(start), int_reply(end), master, replica};
	return array_reply(replica ? 4 : 3, items);
}

static const rq_redis_addr from = {"10.0.0.9", 7009};

static void check_owner(const rq_cluster *m, int slot, const char *host, int port)
{
	const rq_cluster_node *n = rq_cluster_owner(m, slot);
	assert_non_null(n);
	assert_string_equal(n->addr.host, host);
	assert_int_equal(n->addr.port, port);
}

static void test_load(void **state)
{
	redisReply *items[3] = {range(0, 5460, node("127.0.0.1", 7000), node("127.0.0.1", 7003)),
				range(5461, 10922, node("", 7001), node("127.0.0.1", 7004)),
				range(10923, 16383, node("127.0.0.1", 7002), NULL)};
	redisReply *rep = array_reply(3, items);
	rq_cluster m;
	rq_error err;
	rq_redis_addr a = {"127.0.0.1", 7003};
	(void)state;

	rq_cluster_init(&m);
	assert_null(rq_cluster_owner(&m, 0));
	assert_int_equal(rq_cluster_load(&m, rep, &from, &err), 0);
	check_owner(&m, 0, "127.0.0.1", 7000);
	check_owner(&m, 5460, "127.0.0.1", 7000);
	check_owner(&m, 7450, "10.0.0.9", 7001); /* an empty host: the node asked */
	check_owner(&m, 16383, "127.0.0.1", 7002);
	assert_int_equal(rq_cluster_owner(&m, 0)->replicas, 1);
	assert_int_equal(rq_cluster_owner(&m, 16383)->replicas, 0);
	assert_null(rq_cluster_owner(&m, -1));
	assert_null(rq_cluster_owner(&m, RQ_SLOT_COUNT));
	assert_int_equal(m.nnodes, 5); /* replicas are known nodes too */
	assert_non_null(rq_cluster_find(&m, &a));
	/* a MOVED: one slot changes hands, the rest stays */
	assert_int_equal(rq_cluster_set_owner(&m, 7450, &a), 0);
	check_owner(&m, 7450, "127.0.0.1", 7003);
	check_owner(&m, 7449, "10.0.0.9", 7001);
	assert_int_equal(m.nnodes, 5);
	a.port = 7777; /* a node the map did not know */
	assert_int_equal(rq_cluster_set_owner(&m, 1, &a), 0);
	check_owner(&m, 1, "127.0.0.1", 7777);
	assert_int_equal(m.nnodes, 6);
	assert_int_equal(rq_cluster_set_owner(&m, RQ_SLOT_COUNT, &a), -1);
	freeReplyObject(rep);
	rq_cluster_free(&m);
}

/* A reply that is not a map leaves the map as it was. */
static void test_load_bad(void **state)
{
	redisReply *good_items[1] = {range(0, 16383, node("h", 1), NULL)};
	redisReply *good = array_reply(1, good_items);
	redisReply *bad_range[1] = {range(10, 5, node("h", 2), NULL)};
	redisReply *unknown[1] = {range(0, 16383, node("?", 2), NULL)};
	redisReply *bad_port[1] = {range(0, 16383, node("h", 0), NULL)};
	redisReply *reps[5] = {array_reply(1, bad_range), array_reply(0, NULL),
			       array_reply(1, unknown), array_reply(1, bad_port), str_reply("OK")};
	rq_cluster m;
	rq_error err;
	(void)state;

	rq_cluster_init(&m);
	assert_int_equal(rq_cluster_load(&m, good, &from, &err), 0);
	for (int i = 0; i < 5; i++) {
		rq_error_clear(&err);
		assert_int_equal(rq_cluster_load(&m, reps[i], &from, &err), -1);
		assert_int_equal(err.code, RQ_E_REDIS);
		check_owner(&m, 100, "h", 1);
		freeReplyObject(reps[i]);
	}
	assert_int_equal(rq_cluster_load(&m, NULL, &from, &err), -1);
	freeReplyObject(good);
	rq_cluster_free(&m);
}

static void test_redirect(void **state)
{
	rq_redis_addr to;
	int slot = -1;
	(void)state;

	assert_int_equal(rq_cluster_redirect("MOVED 3999 127.0.0.1:6381", &from, &slot, &to),
			 RQ_CLUSTER_MOVED);
	assert_int_equal(slot, 3999);
	assert_string_equal(to.host, "127.0.0.1");
	assert_int_equal(to.port, 6381);
	assert_int_equal(rq_cluster_redirect("ASK 7450 10.1.2.3:7001", &from, &slot, &to),
			 RQ_CLUSTER_ASK);
	assert_int_equal(slot, 7450);
	assert_string_equal(to.host, "10.1.2.3");
	/* an endpoint the server does not know: the host of the node asked */
	assert_int_equal(rq_cluster_redirect("MOVED 1 :7005", &from, &slot, &to), RQ_CLUSTER_MOVED);
	assert_string_equal(to.host, "10.0.0.9");
	assert_int_equal(to.port, 7005);
	assert_int_equal(rq_cluster_redirect("MOVED 2 ::1:7006", &from, &slot, &to),
			 RQ_CLUSTER_MOVED);
	assert_string_equal(to.host, "::1");
	assert_int_equal(to.port, 7006);
	assert_int_equal(rq_cluster_redirect("MOVED 2 [::1]:7006", &from, &slot, &to),
			 RQ_CLUSTER_MOVED);
	assert_string_equal(to.host, "::1");
	{
		static const char *const not [] = {
		    "MOVED",	   "MOVED x 1.2.3.4:5", "MOVED 16384 h:1", "MOVED 1 h",
		    "MOVED 1 h:0", "MOVED 1 h:70000",	"ASK 1",	   "TRYAGAIN Multiple keys",
		    "ERR moved",   "MOVED -1 h:1"};
		for (size_t i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
			if (rq_cluster_redirect(not [i], &from, &slot, &to))
				fail_msg("'%s' taken as a redirection", not [i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_load_bad),
	    cmocka_unit_test(test_redirect),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
