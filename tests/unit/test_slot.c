/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_slot: the hash slot of keys against what a Redis 7 server says
 * (`redis-cli cluster keyslot <key>`), hash tags by Redis's rules, and
 * which key of a command decides where it goes.
 */
#include "testutil.h"

#include <string.h>

#include "rq_slot.h"

static unsigned slot(const char *key)
{
	return rq_slot_of_key(key, strlen(key));
}

/* Values a redis-server 7.0 answered to CLUSTER KEYSLOT. */
static void test_known_slots(void **state)
{
	static const struct {
		const char *key;
		unsigned slot;
	} known[] = {{"{q1}", 7450},
		     {"{q2}", 11641},
		     {"foo", 12182},
		     {"{user1000}.following", 3443},
		     {"foo{}{bar}", 8363},
		     {"foo{{bar}}zap", 4015},
		     {"foo{bar}{zap}", 5061},
		     {"", 0},
		     {"replayq:{default}:jobs", 5718},
		     {"123456789", 12739},
		     {"{", 4092},
		     {"}{a}", 15495},
		     {"a{b", 13340}};
	(void)state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (slot(known[i].key) != known[i].slot)
			fail_msg("slot of '%s': %u, Redis says %u", known[i].key,
				 slot(known[i].key), known[i].slot);
}

static void test_crc16(void **state)
{
	(void)state;
	/* CRC-16/XMODEM's check value */
	assert_int_equal(rq_slot_crc16("123456789", 9), 0x31C3);
	assert_int_equal(rq_slot_crc16("", 0), 0);
	/* bytes above 0x7f and NUL bytes count as they are (slots that
	 * `cluster keyslot "a\x00b"` and "\xff\xfe" fed to redis-cli on stdin printed) */
	assert_int_equal(rq_slot_of_key("a\0b", 3), 8383);
	assert_int_equal(rq_slot_of_key("\xff\xfe", 2), 3374);
}

/* Every key of a queue shares the slot of its tag. */
static void test_hash_tags(void **state)
{
	static const char *const keys[] = {"replayq:{default}:jobs", "replayq:{default}:stats",
					   "replayq:{default}:result:job-1",
					   "replayq:{default}:reply:box"};
	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(slot(keys[i]), slot("{default}"));
	assert_int_equal(slot("x{default}y"), slot("default"));
	assert_int_equal(slot("{a}{b}"), slot("a"));
	/* an empty tag: the whole key (Redis: 10595; "x" alone: 16287) */
	assert_int_equal(slot("{}x"), 10595);
	assert_int_equal(slot("x"), 16287);
}

static int cmd_slot(int argc, const char **argv)
{
	return rq_slot_of_command(argc, argv, NULL);
}

static void test_commands(void **state)
{
	const int q = (int)slot("{q}");
	const char *get[] = {"GET", "replayq:{q}:result:1"};
	const char *eval[] = {"EVAL", "return 1", "2", "replayq:{q}:jobs", "x"};
	const char *eval0[] = {"EVAL", "return 1", "0"};
	const char *evalsha[] = {"evalsha", "abc", "1", "replayq:{q}:jobs"};
	const char *xrg[] = {"XREADGROUP", "GROUP", "workers", "w1",	  "COUNT",
			     "1",	   "BLOCK", "10",      "STREAMS", "replayq:{q}:jobs",
			     ">"};
	const char *xgroup[] = {"XGROUP", "CREATE", "replayq:{q}:jobs", "workers", "0"};
	const char *ping[] = {"PING"};
	const char *wait[] = {"WAIT", "1", "100"};
	const char *cluster[] = {"CLUSTER", "SLOTS"};
	const char *blpop[] = {"BLPOP", "replayq:{q}:reply:box", "1.000"};
	(void)state;

	assert_int_equal(cmd_slot(2, get), q);
	assert_int_equal(cmd_slot(5, eval), q);
	assert_int_equal(cmd_slot(3, eval0), -1);
	assert_int_equal(cmd_slot(4, evalsha), q);
	assert_int_equal(cmd_slot(11, xrg), q);
	assert_int_equal(cmd_slot(9, xrg), -1); /* no stream after STREAMS */
	assert_int_equal(cmd_slot(5, xgroup), q);
	assert_int_equal(cmd_slot(1, ping), -1);
	assert_int_equal(cmd_slot(3, wait), -1);
	assert_int_equal(cmd_slot(2, cluster), -1);
	assert_int_equal(cmd_slot(3, blpop), q);
	{
		const size_t lens[] = {3, 4};
		const char *bin[] = {"GET", "{q}x"};
		assert_int_equal(rq_slot_of_command(2, bin, lens), q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_slots),
	    cmocka_unit_test(test_crc16),
	    cmocka_unit_test(test_hash_tags),
	    cmocka_unit_test(test_commands),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
