#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The worker's /healthz and /readyz (on its --metrics-listen port) and
# replayq_build_info: /healthz 200 while the loop turns, whatever Redis
# does; /readyz 503 before the worker has its queue, 200 once connected,
# 503 while Redis is away and 200 when it is back, 503 while draining
# (a job held at its hold point keeps the drain going); build_info
# carries the version `replayq version` prints, the commit and libgit2's
# version. A real worker, a real redis-server, curl.
. "$(dirname "$0")/../lib.sh"
require jq redis-server curl
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" one
export REPLAYQ_QUEUE=hq
# get PATH: the status code, the body in $T/body
get() { curl -sS --max-time 60 -o "$T/body" -w '%{http_code}' "http://$ADDR$1"; }
status_is() { [ "$(get "$1")" = "$2" ]; }

section "a worker started before its Redis"
PORT=$(free_port)
REPLAYQ_REDIS_URL=redis://127.0.0.1:$PORT/0 REPLAYQ_TEST_HOLD=job:held \
	start_worker h1 --repo-root="$ROOT" --jobs=1 --metrics-listen=127.0.0.1:0 --grace=600
W=$WORKER_PID
wait_for "the metrics address in the log" 60 grep -qs '"metrics listening"' "$T/h1.log"
ADDR=$(grep -m1 '"metrics listening"' "$T/h1.log" | jq -r .address)
wait_for "a failed connection attempt" 60 grep -qs 'cannot connect to Redis yet' "$T/h1.log"
check_eq "no Redis: /healthz 200 (it lives, its loop turns)" 200 "$(get /healthz)"
check_contains "and says so" "ok: the loop turned" "$(cat "$T/body")"
check_eq "no Redis: /readyz 503" 503 "$(get /readyz)"
check_contains "and says why" "not connected to the queue yet" "$(cat "$T/body")"

section "connected"
REDIS_PORT=$PORT
start_redis
worker_started h1 60
check_eq "connected: /readyz 200" 200 "$(get /readyz)"
check_eq "ready" "ready" "$(cat "$T/body")"
check_eq "/healthz 200" 200 "$(get /healthz)"
check_eq "another path: 404" 404 "$(get /nothing)"
check_eq "/metrics 200" 200 "$(get /metrics)"
VERSION=$("$REPLAYQ" version | awk '{print $3}')
info=$(grep '^replayq_build_info{' "$T/body")
check_contains "build_info names the version" "version=\"$VERSION\"" "$info"
check "build_info names libgit2's version" grep -Eq 'libgit2="[0-9]+\.[0-9]+\.[0-9]+"' <<<"$info"
check "build_info names a commit" grep -Eq 'commit="[0-9a-f]{7,}(-dirty)?"|commit="unknown"' <<<"$info"
check "build_info is 1" grep -Eq '\} 1$' <<<"$info"
check_contains "its HELP line" "# TYPE replayq_build_info gauge" "$(cat "$T/body")"

section "Redis away and back"
stop_redis
check "Redis away: /readyz 503" wait_for "readyz 503" 60 status_is /readyz 503
check_contains "and says why" "not connected to Redis" "$(cat "$T/body")"
check_eq "Redis away: /healthz still 200" 200 "$(get /healthz)"
REDIS_PORT=$PORT
start_redis
check "Redis back: /readyz 200" wait_for "readyz 200" 60 status_is /readyz 200

section "draining"
run_rq submit <<<'{"v":1,"id":"held","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"]}'
HP=$(hold_pid job:held)
kill -TERM "$W"
wait_for "the drain" 60 grep -qs '"draining"' "$T/h1.log"
check_eq "draining: /readyz 503" 503 "$(get /readyz)"
check_contains "and says why" "draining" "$(cat "$T/body")"
check_eq "draining: /healthz 200" 200 "$(get /healthz)"
kill -USR1 "$HP"
wait "$W"
check_eq "the worker exits 0 after its drain" 0 "$?"
run_rq result held
check_eq "the held job finished" ok "$(jq -r .status <<<"$OUT")"
finish
