#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A job's result is published as soon as its child's report is in, before
# the child consolidates replayq's packs, and nothing the consolidation
# does changes it (worker/pool.c, worker/jobrun.c). With
# replayq.consolidateAt=2 every job after the first is followed by a
# consolidation, and the hold points make the timing: a child held at
# job-after (its result sent, the consolidation not started) has its
# result stored, acknowledged and returned to `submit --wait` while it is
# held, and it keeps its slot (--jobs=1: the next job waits); killed
# there, the job stays ok (one result, its ref moved, its objects there,
# fsck clean), the kill is logged and counted (replayq_consolidations_total
# {outcome="killed"}). The next job's child is held inside its
# consolidation (repack-written: the new pack in place, the old ones not
# yet removed) and killed there, with the same checks; a third job
# finishes the work. `replayq run` prints a result while its child is
# held at job-after, and a kill there changes neither the line nor the
# exit status.
. "$(dirname "$0")/../lib.sh"
require jq redis-server curl
ROOT=$T/root
R=$ROOT/r
mkdir -p "$ROOT"
make_repo "$R" p
git -C "$R" config gc.auto 0
git -C "$R" config replayq.consolidateAt 2
OBJ=$R/.git/objects
Q=pub
export REPLAYQ_QUEUE=$Q

# job id time [update]: a job with its own committer time; with update it
# moves refs/rq/<id>
job_of() {
	local u=''
	[ -n "${3:-}" ] && u=',"ref":"refs/rq/'$1'","ref_action":"update"'
	echo '{"v":1,"id":"'"$1"'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"]'$u',"committer":{"name":"Bot","email":"bot@example.com","time":'"$2"',"tz":"+0000"}}'
}
result_of() { rcli --raw GET "$(key $Q "result:$1")"; }
has_result() { [ -n "$(result_of "$1")" ]; }
scrape() { curl -sS --max-time 10 -o "$T/scrape" "http://$ADDR/metrics"; }
metric() { awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }' "$T/scrape"; }
L="queue=\"$Q\""
# intact job: its result ok, one entry in the results stream, its commit's
# objects there, fsck clean
intact() {
	local res
	res=$(result_of "$1")
	check_eq "$1: the result is ok" ok "$(jq -r .status <<<"$res")"
	check_eq "$1: one result in the results stream" 1 "$(results_count $Q "$1")"
	check_eq "$1: its commits, trees and blobs are there" "" \
		"$(git -C "$R" rev-list --objects "$(jq -r '.updates[0].new' <<<"$res")" 2>&1 >/dev/null)"
	check "$1: fsck clean" fsck_ok "$R"
}

start_redis
REPLAYQ_TEST_HOLD=job-after,repack-written REPLAYQ_TEST_HOLD_ONCE=1 \
	start_worker wp --repo-root="$ROOT" --jobs=1 --metrics-listen=127.0.0.1:0 --log-level=debug
WP=$WORKER_PID
wait_for "the metrics address in the log" 60 grep -qs '"metrics listening"' "$T/wp.log"
ADDR=$(grep -m1 '"metrics listening"' "$T/wp.log" | jq -r .address)
check "worker started" worker_started wp 60

section "the first job: no consolidation due (1 pack of replayq's)"
job_of p-1 1800000001 | timeout -s KILL 120 "$REPLAYQ" submit --wait=100 >"$T/p1.out" 2>>"$T/submit.err"
check_eq "p-1: ok" ok "$(jq -r .status "$T/p1.out")"

section "held after its result, before its consolidation"
job_of p-2 1800000002 update >"$T/p2.json"
timeout -s KILL 120 "$REPLAYQ" submit --wait=100 "$T/p2.json" >"$T/p2.out" 2>>"$T/submit.err" &
SUB=$!
A=$(hold_pid job-after)
check "p-2's child is held at job-after" test -n "$A"
check "submit --wait returns while the child is held" wait_for "submit to return" 60 dead_or_zombie "$SUB"
wait "$SUB"
check_eq "submit: exit 0" 0 "$?"
check_eq "submit printed p-2's result: ok" "p-2 ok" "$(jq -r '"\(.id) \(.status)"' "$T/p2.out" 2>/dev/null)"
BEFORE=$(result_of p-2)
check_eq "the stored result is the one printed" "$(jq -c . "$T/p2.out" 2>/dev/null)" "$(jq -c . <<<"$BEFORE" 2>/dev/null)"
check_eq "p-2 acknowledged: nothing pending" 0 "$(pending_count $Q)"
check_eq "p-2's ref moved" "$(jq -r '.updates[0].new' <<<"$BEFORE")" "$(git -C "$R" rev-parse refs/rq/p-2)"
check "the child still holds its slot: replayq_jobs_running 1" \
	wait_for "a scrape" 30 bash -c "curl -sS --max-time 10 http://$ADDR/metrics | grep -qx 'replayq_jobs_running{$L} 1'"
check "p-2's child still runs" test -e "/proc/$A"
# --jobs=1: the next job waits for the slot (it is not delivered)
job_of p-3 1800000003 update >"$T/p3.json"
run_rq submit "$T/p3.json"
check_eq "p-3: submitted" 0 "$RC"

section "killed at job-after: the result stands"
kill -9 "$A"
check "the kill is logged (outcome killed)" wait_for "the log line" 60 logged_after "$T/wp.log" p-2 killed
check_eq "p-2's result unchanged" "$BEFORE" "$(result_of p-2)"
intact p-2
scrape
check_eq "counted: replayq_consolidations_total{outcome=killed} 1" 1 \
	"$(metric "replayq_consolidations_total{$L,outcome=\"killed\"}")"
check_eq "no job counted as an error" 0 \
	"$(grep -c "^replayq_jobs_total{$L,status=\"error\"" "$T/scrape")"

section "killed inside its consolidation (repack-written): the result stands"
B=$(hold_pid repack-written)
check "p-3's child is held in its consolidation, the new pack in" test -n "$B"
check "p-3's result is stored meanwhile" wait_for "p-3's result" 60 has_result p-3
BEFORE=$(result_of p-3)
kill -9 "$B"
check "the kill is logged (outcome killed)" wait_for "the log line" 60 logged_after "$T/wp.log" p-3 killed
check_eq "p-3's result unchanged" "$BEFORE" "$(result_of p-3)"
check_eq "p-3's ref moved" "$(jq -r '.updates[0].new' <<<"$BEFORE")" "$(git -C "$R" rev-parse refs/rq/p-3)"
intact p-3
intact p-2

section "the next job's consolidation finishes the work"
job_of p-4 1800000004 update | timeout -s KILL 120 "$REPLAYQ" submit --wait=100 >"$T/p4.out" 2>>"$T/submit.err"
check_eq "p-4: ok" ok "$(jq -r .status "$T/p4.out")"
check "its consolidation is logged (merged)" wait_for "the log line" 60 logged_after "$T/wp.log" p-4 merged
for j in p-1 p-2 p-3 p-4; do
	intact "$j"
done
check "nothing left behind" no_litter "$R"
check "no .keep left" bash -c "! ls '$OBJ'/pack/*.keep 2>/dev/null"
check "replayq's packs consolidated" test "$(ls "$OBJ/replayq" | grep -c '\.own$')" -le 2
scrape
check_eq "replayq_consolidations_total{outcome=merged} 1" 1 \
	"$(metric "replayq_consolidations_total{$L,outcome=\"merged\"}")"
check_eq "replayq_consolidations_total{outcome=killed} 2" 2 \
	"$(metric "replayq_consolidations_total{$L,outcome=\"killed\"}")"
check_eq "4 jobs ok, none retried" "4 0" \
	"$(metric "replayq_jobs_total{$L,status=\"ok\"}") $(grep -c '^replayq_job_retries_total{' "$T/scrape")"
check_workers_stop "$WP"
check "no sanitizer report" sanitizer_clean "$T/wp.log"

section "replayq run: the result printed before the consolidation"
R2=$ROOT/r2
make_repo "$R2" q
git -C "$R2" config gc.auto 0
git -C "$R2" config replayq.consolidateAt 2
mkdir -p "$T/holds-run"
for i in 1 2; do
	echo '{"v":1,"id":"q-'$i'","repo":"r2","mode":"onto","target":"main","revisions":["base..topic"],"ref":"refs/rq/q-'$i'","ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":'$((1800000100 + i))',"tz":"+0000"}}'
done >"$T/run.jsonl"
REPLAYQ_TEST_HOLD_DIR=$T/holds-run REPLAYQ_TEST_HOLD=job-after \
	timeout -s KILL 120 "$REPLAYQ" run --repo-root="$ROOT" --jobs=1 "$T/run.jsonl" >"$T/run.out" 2>"$T/run.err" &
RUN=$!
BG_PIDS+=("$RUN")
HOLD_DIR=$T/holds-run
C=$(hold_pid job-after)
check "q-2's child is held at job-after" test -n "$C"
two_lines() { [ "$(wc -l <"$T/run.out")" -ge 2 ]; }
check "run printed both results while the child is held" wait_for "2 lines" 60 two_lines
check_eq "q-2 printed ok" "q-2 ok" "$(sed -n 2p "$T/run.out" | jq -r '"\(.id) \(.status)"')"
check "run still waits for the child" test -e "/proc/$RUN"
kill -9 "$C"
wait "$RUN"
check_eq "run: exit 0 (every job ok)" 0 "$?"
check_eq "run: two lines, both ok" "ok ok" "$(jq -r .status "$T/run.out" | paste -sd' ')"
check "run: the kill is logged" grep -q '"outcome":"killed"' "$T/run.err"
check_eq "q-2's ref moved" "$(sed -n 2p "$T/run.out" | jq -r '.updates[0].new')" \
	"$(git -C "$R2" rev-parse refs/rq/q-2)"
check "r2: fsck clean" fsck_ok "$R2"
check "run: no sanitizer report" sanitizer_clean "$T/run.err"
finish
