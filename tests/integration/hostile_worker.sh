#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile producer against the worker's parent: nothing that can cost
# unbounded memory or time runs there. A regex bomb in --grep is refused by
# the job's validation, which checks patterns and never compiles one, also
# for an entry delivered past --max-deliveries; a stream entry far past the
# 64 KiB a job may have is answered from its size, before anything parses
# it (not even for its reply list); the worker sizes itself to its
# descriptor limit: a --jobs it cannot serve is refused before it takes a
# job, one that fits runs every job, a job that cannot start for want of a
# descriptor is held (not redelivered, not dead-lettered as crashed) until
# it can; out of descriptors is never called a damaged index. The parent's
# peak resident size (VmHWM) is read from /proc. A real redis-server, real
# workers, real repositories.
. "$(dirname "$0")/../lib.sh"
require jq redis-server redis-cli prlimit
unset REPLAYQ_QUEUE REPLAYQ_JOBS REPLAYQ_TEST_CRASH REPLAYQ_TEST_HOLD
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" proj 13
start_redis

has_key() { [ "$(rcli EXISTS "$1")" = 1 ]; }
# hwm_kb pid: the process's peak resident size so far, in KiB
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
# result_of Q ID: "<status> <code> <message>" of the job's stored result
result_of() { rcli GET "$(key "$1" "result:$2")" | jq -r '"\(.status) \(.error.code) \(.error.message)"'; }

# --- 4. a regex bomb ----------------------------------------------------------
section "4. a regex bomb is never compiled by the worker's parent"
Q=bomb
BOMB='{"v":1,"id":"ID","repo":"proj","mode":"onto","target":"main","revisions":["--grep=a\\{0,32767\\}","base..topic"]}'
# bomb2 first: taken by a consumer that went away, delivered 5 times, so
# that the worker reclaims it past its --max-deliveries
rcli XGROUP CREATE "$(key $Q jobs)" workers 0 MKSTREAM >/dev/null
S2=$(rcli XADD "$(key $Q jobs)" '*' id bomb2 job "${BOMB/ID/bomb2}")
rcli XREADGROUP GROUP workers ghost COUNT 1 STREAMS "$(key $Q jobs)" '>' >/dev/null
rcli XCLAIM "$(key $Q jobs)" workers ghost 0 "$S2" IDLE 100000 RETRYCOUNT 5 >/dev/null
start_worker w4 --repo-root="$ROOT" --queue=$Q --jobs=1 --max-deliveries=1 --visibility-timeout=1
W4=$WORKER_PID
check "w4 started" worker_started w4
rcli XADD "$(key $Q jobs)" '*' id bomb1 job "${BOMB/ID/bomb1}" >/dev/null
check "the bomb is answered" wait_for "result of bomb1" 60 has_key "$(key $Q result:bomb1)"
check "the bomb past --max-deliveries is answered" wait_for "result of bomb2" 60 has_key "$(key $Q result:bomb2)"
for id in bomb1 bomb2; do
	R=$(result_of $Q $id)
	check_contains "$id: refused as a bad revision" "error bad_revision" "$R"
	check_contains "$id: the message says why" "too large" "$R"
done
check_eq "bomb2: not dead-lettered as crashed" 0 "$(rcli XLEN "$(key $Q dead)")"
check_eq "both acknowledged" 0 "$(pending_count $Q)"
HWM=$(hwm_kb "$W4")
check "the parent's peak stayed small: ${HWM} KiB" test "$HWM" -lt 307200
check_workers_stop "$W4"

# --- 4b. the review's patterns -----------------------------------------------
section "4b. patterns that crashed or hung glibc are bad revisions, at once"
# each crashed the job's child (glibc's back-reference stack overflow) or
# held it to its deadline (regcomp for minutes), or was refused in the
# wrong syntax; now the worker's validation refuses them, and one its
# count lets through is stopped by the child's probe (its CPU limit cut
# to 300 ms here: it takes seconds to minutes): bad_revision at the first
# delivery, never crashed or timeout, not retried
Q=review
REPLAYQ_TEST_PATTERN_CPU_MS=300 start_worker w4b --repo-root="$ROOT" --queue=$Q --jobs=2 --max-deliveries=3
W4B=$WORKER_PID
check "w4b started" worker_started w4b
pj() { printf '{"v":1,"id":"%s","repo":"proj","mode":"onto","target":"main","revisions":%s}\n' "$1" "$2"; }
{
	pj p-cve '["--grep=\\(\\)\\(\\1\\1\\)*","base..topic"]'
	pj p-eback '["-E","--grep=(a)\\1","base..topic"]'
	pj p-eclosure '["--grep=\\(\\(\\(a\\|\\)*\\)\\{0,8\\}\\)\\{0,8\\}","base..topic"]'
	pj p-plus '["-E","--grep=\\<a*++++++++","base..topic"]'
	pj p-mem '["--grep=\\(\\(a*\\)\\{0,45\\}\\)\\{0,45\\}","base..topic"]'
	pj p-probe '["--extended-regexp","--grep=\\<a*+++++","base..topic"]'
	pj p-brace '["--grep=topic|x\\{y","base..topic","-E"]'
} >"$T/review.jsonl"
run_rq submit --queue=$Q --no-validate --wait=120 <"$T/review.jsonl"
for id in p-cve p-eback p-eclosure p-plus p-mem p-probe; do
	R=$(result_of $Q $id)
	check_contains "$id: a bad revision" "error bad_revision" "$R"
	check_eq "$id: at the first delivery" 1 "$(rcli GET "$(key $Q result:$id)" | jq -r .attempt)"
done
check_contains "p-cve: a back-reference, refused" "back-reference" "$(result_of $Q p-cve)"
check_contains "p-eback: ... in an extended pattern too" "back-reference" "$(result_of $Q p-eback)"
check_contains "p-eclosure: too large" "too large" "$(result_of $Q p-eclosure)"
check_contains "p-plus: too large" "too large" "$(result_of $Q p-plus)"
check_contains "p-mem: too large" "too large" "$(result_of $Q p-mem)"
check_contains "p-probe: stopped by the child's probe" "more than 300 ms of CPU" "$(result_of $Q p-probe)"
check_eq "p-brace: an extended pattern is read as one (-E after it)" "ok" "$(rcli GET "$(key $Q result:p-brace)" | jq -r .status)"
check_eq "none retried" "" "$(stat_of $Q retried)"
check_eq "none dead-lettered" 0 "$(rcli XLEN "$(key $Q dead)")"
check_workers_stop "$W4B"

# --- 5. a huge stream entry --------------------------------------------------
section "5. a huge entry is measured before anything parses it"
Q=huge
# 16 MiB of JSON whose parse would cost jansson about 30 bytes a byte,
# with a reply list first
{
	printf '{"reply_to":"box","pad":['
	yes '0,' | tr -d '\n' | head -c 16777216
	printf '0]}'
} >"$T/huge.json"
# (a sanitizer build keeps freed blocks in quarantine, and the reader's
# buffer grows by realloc a MiB at a time: each old block would count)
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=16" \
	start_worker w5 --repo-root="$ROOT" --queue=$Q --jobs=1
W5=$WORKER_PID
check "w5 started" worker_started w5
HWM0=$(hwm_kb "$W5")
rcli -x XADD "$(key $Q jobs)" '*' id huge job <"$T/huge.json" >/dev/null
check "the huge entry is answered" wait_for "result of huge" 60 has_key "$(key $Q result:huge)"
R=$(result_of $Q huge)
check_contains "huge: invalid_job" "error invalid_job" "$R"
check_contains "huge: its size named" "is $(stat -c %s "$T/huge.json") bytes: a job is at most 65536 bytes" "$R"
check_eq "huge: its reply list was not looked for" 0 "$(rcli LLEN "$(key $Q reply:box)")"
HWM1=$(hwm_kb "$W5")
check "the parent's peak grew by $((HWM1 - HWM0)) KiB for a 16 MiB entry: less than 8 times" \
	test $((HWM1 - HWM0)) -lt $((8 * 16384))
run_rq submit --queue=$Q --wait=60 < <(job after5)
check_eq "the worker goes on" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
check_workers_stop "$W5"

# --- 6. descriptors ----------------------------------------------------------
section "6. the worker sizes itself to its descriptor limit"
Q=fds
run_rq submit --queue=$Q < <(job first6)
# --jobs=40 under ulimit -n 32: refused before it takes any job (one
# that would serve instead is stopped after a generous while)
OUT=$( (ulimit -n 32 && exec timeout 60 "$REPLAYQ" worker --queue=$Q --repo-root="$ROOT" --jobs=40) 2>&1)
RC=$?
check_eq "--jobs=40 under ulimit -n 32: refused (129)" 129 "$RC"
check_contains "... naming the limit" "more than the limit of 32 (ulimit -n)" "$OUT"
FIT=$(sed -n 's/.*at most \([0-9]*\) jobs fit.*/\1/p' <<<"$OUT")
check "... and how many jobs fit ($FIT)" test "${FIT:-0}" -ge 1 -a "${FIT:-0}" -lt 40
check_eq "the job is still queued, taken by no one" "1 0 0" \
	"$(rcli XLEN "$(key $Q jobs)") $(pending_count $Q) $(rcli EXISTS "$(key $Q result:first6)")"
# as many as fit: every job runs (ref updates too: a pipe more each)
for i in $(seq 1 12); do
	job "u6-$i" '"revisions":["base..u-'"$i"'"],"ref_action":"update"' | sed 's/"revisions":\["base..topic"\],//'
done >"$T/jobs6"
run_rq submit --queue=$Q <"$T/jobs6"
(ulimit -n 32 && exec "$REPLAYQ" worker --name=w6 --queue=$Q --repo-root="$ROOT" --jobs="${FIT:-1}") 2>"$T/w6.log" &
W6=$!
BG_PIDS+=("$W6")
check "13 jobs answered" wait_for "13 results" 120 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT XLEN '$(key $Q results)')\" -ge 13 ]"
check_eq "all ok, none crashed" "13 0" "$(stat_of $Q ok) $(rcli XLEN "$(key $Q dead)")"
check_eq "each at its first delivery" "" "$(grep -F '"job done"' "$T/w6.log" | grep -v '"delivery":1,')"
check_workers_stop "$W6"

# a job that cannot start for want of a descriptor (the limit lowered
# under the running worker, so that none is left) is held, its claim
# kept, not redelivered: it starts once the limit is back
Q=held
start_worker w7 --repo-root="$ROOT" --queue=$Q --jobs=2 --max-deliveries=1 --visibility-timeout=1
W7=$WORKER_PID
check "w7 started" worker_started w7
SOFT=$(prlimit --pid "$W7" --nofile --output=SOFT --noheadings)
prlimit --pid "$W7" --nofile=3:
run_rq submit --queue=$Q < <(job held1 '"ref_action":"update","revisions":["base..u-13"]' | sed 's/"revisions":\["base..topic"\],//')
check "held1: held, or answered" wait_for "held1 held" 60 \
	bash -c "grep -q 'it is held until it can start' '$T/w7.log' || redis-cli -p $REDIS_PORT EXISTS '$(key $Q result:held1)' | grep -qx 1"
check_contains "held1: held for want of a descriptor" "Too many open files" "$(grep -F 'it is held' "$T/w7.log")"
# past two visibility timeouts (heartbeats every 333 ms keep its claim):
# no other delivery, no result
check "held1: two heartbeats later, still held" wait_for "two heartbeats" 30 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT HGET '$(key $Q workers)' w7 | jq .time)\" -ge $(($(date +%s) + 2)) ]"
check_eq "held1: no result while held, one delivery" "0 1" \
	"$(rcli EXISTS "$(key $Q result:held1)") $(rcli XPENDING "$(key $Q jobs)" workers - + 1 | sed -n 4p)"
prlimit --pid "$W7" --nofile="$SOFT":
check "held1 runs once the limit is back" wait_for "result of held1" 60 has_key "$(key $Q result:held1)"
check_eq "held1: ok, at its first delivery" "ok 1" \
	"$(rcli GET "$(key $Q result:held1)" | jq -r '"\(.status) \(.attempt)"')"
check_eq "held1: u-13 moved" "$(rcli GET "$(key $Q result:held1)" | jq -r '.updates[0].new')" \
	"$(git -C "$ROOT/proj" rev-parse u-13)"
check_eq "held1: never given up, held once" "0 1" \
	"$(grep -c 'cannot start the job; it will be retried' "$T/w7.log") $(grep -c 'it is held' "$T/w7.log")"
check_workers_stop "$W7"

# out of descriptors is no damaged index: the same replay under lower and
# lower limits says what ran out
seen=0
for n in 3 4 5 6 7 8; do
	OUT=$(cd "$ROOT/proj" && (ulimit -n "$n" && exec "$REPLAYQ" replay --onto main base..topic) 2>&1)
	check "ulimit -n $n: no index called too small" eval '! grep -q "too small" <<<"$OUT"'
	grep -q 'Too many open files' <<<"$OUT" && seen=$((seen + 1))
done
check "some limit ran out, and said so ($seen)" test "$seen" -ge 1

check "no sanitizer report" sanitizer_clean "$T"/w4.log "$T"/w5.log "$T"/w6.log "$T"/w7.log
finish
