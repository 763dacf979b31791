/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_slot: hash slots of keys and commands (see rq_slot.h).
 */
#include "rq_slot.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned rq_slot_crc16(const char *buf, size_t len)
{
	unsigned crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned)(unsigned char)buf[i] << 8;
		for (int bit = 0; bit < 8; bit++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return crc;
}

unsigned rq_slot_of_key(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	if (open) {
		size_t from = (size_t)(open - key) + 1;
		close = memchr(open + 1, '}', len - from);
		if (close && close > open + 1)
			return rq_slot_crc16(open + 1, (size_t)(close - open - 1)) % RQ_SLOT_COUNT;
	}
	return rq_slot_crc16(key, len) % RQ_SLOT_COUNT;
}

static size_t len_of(const char **argv, const size_t *lens, int i)
{
	return lens ? lens[i] : strlen(argv[i]);
}

/* 1 when argv[i] is the word w, in any case. */
static int word_is(const char **argv, const size_t *lens, int i, const char *w)
{
	return len_of(argv, lens, i) == strlen(w) && !strncasecmp(argv[i], w, strlen(w));
}

/* The index of the first key of a command, or -1. */
static int first_key(int argc, const char **argv, const size_t *lens)
{
	static const char *const keyless[] = {
	    "PING",	"WAIT",	     "CLUSTER", "ASKING",  "READONLY", "READWRITE", "AUTH",
	    "SELECT",	"ROLE",	     "INFO",	"SCRIPT",  "SENTINEL", "CLIENT",    "CONFIG",
	    "HELLO",	"COMMAND",   "ECHO",	"TIME",	   "DBSIZE",   "MULTI",	    "EXEC",
	    "DISCARD",	"FLUSHALL",  "FLUSHDB", "ACL",	   "FUNCTION", "DEBUG",	    "QUIT",
	    "SCAN",	"RANDOMKEY", "KEYS",	"LATENCY", "SLOWLOG",  "MEMORY",    "MONITOR",
	    "SHUTDOWN", NULL};

	if (argc < 2)
		return -1;
	for (int i = 0; keyless[i]; i++)
		if (word_is(argv, lens, 0, keyless[i]))
			return -1;
	if (word_is(argv, lens, 0, "EVAL") || word_is(argv, lens, 0, "EVALSHA") ||
	    word_is(argv, lens, 0, "EVAL_RO") || word_is(argv, lens, 0, "EVALSHA_RO") ||
	    word_is(argv, lens, 0, "FCALL") || word_is(argv, lens, 0, "FCALL_RO"))
		return argc > 3 && atoi(argv[2]) > 0 ? 3 : -1;
	if (word_is(argv, lens, 0, "XREAD") || word_is(argv, lens, 0, "XREADGROUP")) {
		for (int i = 1; i + 1 < argc; i++)
			if (word_is(argv, lens, i, "STREAMS"))
				return i + 1;
		return -1;
	}
	if (word_is(argv, lens, 0, "XGROUP") || word_is(argv, lens, 0, "XINFO") ||
	    word_is(argv, lens, 0, "OBJECT"))
		return argc > 2 ? 2 : -1;
	return 1;
}

int rq_slot_of_command(int argc, const char **argv, const size_t *lens)
{
	int k = first_key(argc, argv, lens);

	return k < 0 ? -1 : (int)rq_slot_of_key(argv[k], len_of(argv, lens, k));
}
