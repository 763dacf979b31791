/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_slot: the Redis Cluster hash slot of a key and of a command.
 *
 * A key's slot is CRC16 (XMODEM: polynomial 0x1021, initial value 0, no
 * reflection) of the key modulo 16384; when the key holds a '{' with a
 * '}' after it and at least one byte between them, only those bytes
 * (the first such "hash tag") are hashed, so that "replayq:{Q}:jobs" and
 * "replayq:{Q}:stats" share a slot. A command's slot is the slot of the
 * first key it names: argv[1] for most commands, the first of the keys of
 * EVAL/EVALSHA/FCALL, the stream after STREAMS of XREAD/XREADGROUP, the
 * key after the subcommand of XGROUP/XINFO/OBJECT; none for commands that
 * name no key (PING, WAIT, CLUSTER, ...).
 */
#ifndef RQ_SLOT_H
#define RQ_SLOT_H

#include <stddef.h>

#define RQ_SLOT_COUNT 16384

/* The CRC16 Redis Cluster uses, of len bytes. */
unsigned rq_slot_crc16(const char *buf, size_t len);

/* The hash slot of a key (0..16383). */
unsigned rq_slot_of_key(const char *key, size_t len);

/* The slot of the first key of a command (lens NULL: C strings), or -1
 * when it names none. */
int rq_slot_of_command(int argc, const char **argv, const size_t *lens);

#endif
