#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The server goes away between a job's delivery and its run, and comes
# back (same port, its AOF): the worker takes back at once the entries
# pending under its own name that it holds no task for, instead of
# leaving them to the visibility timeout. Two such entries, made on
# purpose: one the worker read and could not claim while the server was
# away (held at the hold point claim:<id>@1 until the server is stopped),
# one read under the worker's name whose answer the worker never got (a
# reply lost with the server: read here by redis-cli while the worker is
# held). The worker's visibility timeout is an hour: only its own look
# after the outage can bring them back within the test's bound. Then a
# job that runs through an outage is not taken back by that look (its
# delivery stays 1: it runs once).
. "$(dirname "$0")/../lib.sh"
require jq redis-server

ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" proj
start_redis
Q=qrs
JOBS=$(key $Q jobs)
worker_alive() { kill -0 "$1" 2>/dev/null; }
has_results() {
	local id
	for id in "$@"; do
		[ "$(rcli EXISTS "$(key $Q "result:$id")")" = 1 ] || return 1
	done
}
server_gone() { ! redis_answers "$REDIS_PORT"; }
# the consumer an entry is pending under
owner_of() { rcli XPENDING "$JOBS" workers "$1" "$1" 1 | sed -n 2p; }

section "a job read, then the server gone before its claim; a reply lost"
REPLAYQ_TEST_HOLD=claim:lost-1@1 start_worker w1 --repo-root="$ROOT" --queue=$Q --jobs=1 \
	--visibility-timeout=3600
W1=$WORKER_PID
check "w1 started" worker_started w1
"$REPLAYQ" submit --queue=$Q < <(job lost-1) >/dev/null
HELD=$(hold_pid claim:lost-1@1)
check "w1 held before claiming lost-1" test -n "$HELD"
SID1=$(rcli GET "$(key $Q job:lost-1)")
check_eq "lost-1 pending under w1" w1 "$(owner_of "$SID1")"
# while w1 is held (no read of its own outstanding), an entry read under
# its name by someone else: w1 never sees that answer
"$REPLAYQ" submit --queue=$Q < <(job lost-2) >/dev/null
SID2=$(rcli GET "$(key $Q job:lost-2)")
check_eq "lost-2 read under w1's name" "$SID2" \
	"$(rcli --raw XREADGROUP GROUP workers w1 COUNT 1 STREAMS "$JOBS" '>' | sed -n 2p)"
check_eq "lost-2 pending under w1" w1 "$(owner_of "$SID2")"
stop_redis
check "the server is gone" wait_for "no answer on the port" 60 server_gone
kill -USR1 "$HELD"
check "w1 gives up the claim while the server is away" wait_for "the claim failed" 60 \
	grep -q '"cannot claim the job id; the job is left for a retry"' "$T/w1.log"
start_redis # same port, same directory: the AOF brings the stream back
check "both run after the restart, long before the visibility timeout" \
	wait_for "lost-1, lost-2 results" 60 has_results lost-1 lost-2
# attempt 2: the entries came back from the AOF pending under w1 at
# delivery 1, and were taken back by w1
for id in lost-1 lost-2; do
	check_eq "$id: ok, at its second delivery" "ok 2" \
		"$(rcli GET "$(key $Q "result:$id")" | jq -r '"\(.status) \(.attempt)"')"
	check_eq "$id: one result" 1 "$(results_count $Q $id)"
done
check_eq "nothing pending" 0 "$(pending_count $Q)"
check_eq "stream empty" 0 "$(rcli XLEN "$JOBS")"
check "w1 says it took its entries back" grep -q '"took back its own pending entry"' "$T/w1.log"
check "w1 took them back, not a reclaim" bash -c '! grep -q "reclaimed a stalled job" "$1"' _ "$T/w1.log"
check "w1 still running" worker_alive "$W1"
check_workers_stop "$W1"

section "a job running through the outage is not taken back"
# w2 runs run-1 (held in its child) with a read outstanding for its other
# slot; after the restart it looks at its own entries and must skip run-1
REPLAYQ_TEST_HOLD=job:run-1 start_worker w2 --repo-root="$ROOT" --queue=$Q --jobs=2 \
	--visibility-timeout=3600 --log-level=debug
W2=$WORKER_PID
check "w2 started" worker_started w2
"$REPLAYQ" submit --queue=$Q < <(job run-1) >/dev/null
CHILD=$(hold_pid job:run-1)
check "run-1 running, held" test -n "$CHILD"
SIDR=$(rcli GET "$(key $Q job:run-1)")
stop_redis
check "w2 meets the outage" wait_for "w2's read fails" 60 grep -q '"read failed"' "$T/w2.log"
# (no look succeeds while the server is away: the next one is after the restart)
looks() { grep -s '"looked for its own pending entries"' "$T/w2.log"; }
n0=$(looks | wc -l)
start_redis
looked() { [ "$(looks | wc -l)" -gt "$n0" ]; }
check "w2 looks at its own entries after the restart" wait_for "w2's look" 60 looked
check_eq "w2's look: run-1 skipped, nothing taken" "0 1" \
	"$(looks | sed -n "$((n0 + 1))p" | jq -r '"\(.taken) \(.holding)"')"
check_eq "run-1 still at its first delivery, under w2" "w2 1" \
	"$(rcli XPENDING "$JOBS" workers "$SIDR" "$SIDR" 1 | sed -n '2p;4p' | paste -sd' ')"
kill -USR1 "$CHILD"
check "run-1 finishes" wait_for "run-1 result" 60 has_results run-1
check_eq "run-1: ok, at its first delivery" "ok 1" \
	"$(rcli GET "$(key $Q result:run-1)" | jq -r '"\(.status) \(.attempt)"')"
check_eq "run-1: one result" 1 "$(results_count $Q run-1)"
check "w2 took nothing back" bash -c '! grep -q "took back its own pending entry" "$1"' _ "$T/w2.log"
check_eq "nothing pending" 0 "$(pending_count $Q)"
check_workers_stop "$W2"
check "no sanitizer report" sanitizer_clean "$T"/w*.log

finish
