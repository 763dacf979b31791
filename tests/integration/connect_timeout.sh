#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The client commands (submit, result, queue) against a Redis that is not
# there: a clear error naming --connect-timeout, after the timeout (2 s by
# default), not after the 10 s of command retries; a bad value is a usage
# error; a longer --connect-timeout (a slow network) waits for a Redis
# that comes up meanwhile. Exit statuses as documented: submit 2, result
# and queue 128.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
PORT=$(free_port)
DEAD=redis://127.0.0.1:$PORT/0
JOB='{"v":1,"id":"c1","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"]}'

run_rq submit --redis="$DEAD" <<<"$JOB"
check_eq "submit, no Redis: exit 2" 2 "$RC"
check_contains "a clear error" "fatal: cannot connect to Redis" "$ERR"
check_contains "naming the timeout and how to change it" \
	"(gave up after 2 s; wait longer with --connect-timeout or REPLAYQ_CONNECT_TIMEOUT)" "$ERR"
run_rq queue stats --redis="$DEAD" --connect-timeout=1
check_eq "queue, no Redis: exit 128" 128 "$RC"
check_contains "--connect-timeout=1" "gave up after 1 s" "$ERR"
REPLAYQ_CONNECT_TIMEOUT=3 run_rq result --redis="$DEAD" c1
check_eq "result, no Redis: exit 128" 128 "$RC"
check_contains "REPLAYQ_CONNECT_TIMEOUT=3" "gave up after 3 s" "$ERR"
for bad in 0 x 3601 -1; do
	run_rq queue stats --redis="$DEAD" --connect-timeout="$bad"
	check_eq "--connect-timeout=$bad: usage error" 129 "$RC"
	check_contains "--connect-timeout=$bad: said" "--connect-timeout takes seconds from 1 to 3600" "$ERR"
done
run_rq submit --redis="$DEAD" --connect-timeout=x <<<"$JOB"
check_eq "submit --connect-timeout=x: usage error" 129 "$RC"

# a slow network: the submission waits up to its timeout for Redis to answer
"$REPLAYQ" submit --redis="$DEAD" --queue=ct --connect-timeout=120 <<<"$JOB" >"$T/sub.out" 2>"$T/sub.err" &
SUB=$!
BG_PIDS+=("$SUB")
REDIS_PORT=$PORT
start_redis
wait "$SUB"
check_eq "with --connect-timeout=120, submit waits for a Redis that comes up" 0 "$?"
check_eq "and queues the job" c1 "$(cat "$T/sub.out")"
check_eq "it is in the stream" 1 "$(rcli XLEN 'replayq:{ct}:jobs')"
finish
