#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What a starting worker waits for and what stops it: a Redis at its
# memory limit refuses even the group's create (a write) when the group is
# there, and a Redis full of clients refuses the connection's first
# command (its SELECT); both pass, so the worker logs them and retries until they do
# (the workers are what drain a full Redis), then starts. A password Redis
# refuses stays fatal (exit 128).
. "$(dirname "$0")/../lib.sh"
require redis-server jq
ROOT=$T/root
Q=rstart
mkdir -p "$ROOT"
make_repo "$ROOT/proj" one
start_redis
export REPLAYQ_QUEUE=$Q

# --- Redis out of memory, the group already there --------------------------------
section "Redis at its memory limit"
rcli XGROUP CREATE "$(key $Q jobs)" workers 0 MKSTREAM >/dev/null
rcli CONFIG SET maxmemory 1 >/dev/null
check_contains "Redis refuses writes now" "OOM" "$(rcli XGROUP CREATE "$(key $Q jobs)" other 0 MKSTREAM 2>&1)"
start_worker oom --repo-root="$ROOT"
W=$WORKER_PID
check "the worker logs that it cannot create the group yet" \
	wait_for "the OOM retry" 60 grep -qs '"cannot create the group yet".*OOM' "$T/oom.log"
check "and keeps waiting" kill -0 "$W"
check "without 'fatal'" bash -c "! grep -q fatal '$T/oom.log'"
# a SIGTERM while it waits stops it there (exit 0), not after a start
start_worker oom2 --repo-root="$ROOT"
W2=$WORKER_PID
wait_for "oom2's retry" 60 grep -qs '"cannot create the group yet"' "$T/oom2.log"
check_workers_stop "$W2"
check_contains "SIGTERM while waiting: stopped before it started" \
	"worker stopped before it could start" "$(cat "$T/oom2.log")"
check "and never said it started" bash -c "! grep -q '\"worker started\"' '$T/oom2.log'"
rcli CONFIG SET maxmemory 0 >/dev/null
check "it starts once Redis takes writes again" worker_started oom 60
run_rq submit --wait=60 <<<"$(job after-oom)"
check_eq "and runs jobs" 0 "$RC"
check_workers_stop "$W"

# --- Redis full of clients ---------------------------------------------------------
section "Redis full of clients"
rcli CONFIG SET maxclients 1 >/dev/null
# one connection of this shell's, which stays open, takes the only place
# (a connection, not a client process: nothing that could exit meanwhile)
exec 7<>"/dev/tcp/127.0.0.1/$REDIS_PORT"
printf 'PING\r\n' >&7
read -r pong <&7
check_eq "the holding connection is there" "+PONG" "${pong%$'\r'}"
check_contains "a second client is refused" "max number of clients" "$(rcli PING 2>&1)"
# database 1: the connection's SELECT is the command refused (the worker
# must not inherit the holding connection)
start_worker full --repo-root="$ROOT" --redis="redis://127.0.0.1:$REDIS_PORT/1" 7>&-
W=$WORKER_PID
check "the worker logs that it cannot connect yet" \
	wait_for "the max-clients retry" 60 grep -qs 'cannot connect to Redis yet.*max number of clients' "$T/full.log"
check "and keeps waiting" kill -0 "$W"
exec 7>&-
# room for the worker's two connections (the worker may hold the one
# free place a moment while it tries: retried until the set gets through)
wait_for "maxclients raised" 30 eval 'rcli CONFIG SET maxclients 10000 2>/dev/null | grep -q OK'
check "it starts once there is room" worker_started full 60
check_workers_stop "$W"

# --- a refused password stays fatal --------------------------------------------------
section "a refused password"
rcli CONFIG SET requirepass s3cret >/dev/null
REDIS_AUTH="-a s3cret --no-auth-warning"
"$REPLAYQ" worker --name=badpw --repo-root="$ROOT" \
	--redis="redis://:wrong@127.0.0.1:$REDIS_PORT/0" 2>"$T/badpw.log"
check_eq "a wrong password: exit 128" 128 "$?"
check_contains "saying why" "WRONGPASS" "$(cat "$T/badpw.log")"
rcli CONFIG SET requirepass "" >/dev/null
REDIS_AUTH=

check "no ASan/UBSan report in the workers' logs" sanitizer_clean "$T/oom.log" "$T/oom2.log" "$T/full.log" "$T/badpw.log"
finish
