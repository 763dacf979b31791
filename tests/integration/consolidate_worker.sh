#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Sustained traffic on one repository through a real worker: 40 jobs
# (RQ_SUSTAINED_JOBS), half of them moving a ref of their own, half
# printing, each with its own committer time (new commits every time),
# through a real redis-server and `replayq worker --jobs=2`. What volume
# would make happen by chance is made to happen on purpose: the first
# consolidation (the threshold, 12, reached) is held after it chose its
# packs, and a job ends while it runs (its pack in, the lock taken); let
# go, it merges what it chose and the job's pack stays (the job's child,
# if it found a consolidation due, waits for the lock and looks again:
# nothing to do). Both results are in
# before their consolidations end (integration/consolidate_publish). The
# packs replayq
# keeps stay bounded all along (sampled while the jobs run, and at the
# end), every result is ok and its commits, trees and blobs are there, git
# fsck is clean, and a job of mode maintain reports the packs before and
# after. A second worker with --consolidate=off leaves every job's pack as
# it is.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
N=${RQ_SUSTAINED_JOBS:-40}
ROOT=$T/root
R=$ROOT/r
mkdir -p "$ROOT"
make_repo "$R" s
git -C "$R" config gc.auto 0
OBJ=$R/.git/objects
export REPLAYQ_QUEUE=sust

# jobs from to: the jobs s-<from>..s-<to> (tests/lib.sh)
jobs() { consolidation_jobs s "$@"; }
results() { rcli XLEN "replayq:{sust}:results"; }
MAX=0
# results_in n: n results in; meanwhile the largest count of replayq's
# packs seen
results_in() {
	local n
	n=$(own_packs)
	[ "$n" -gt "$MAX" ] && MAX=$n
	[ "$(results)" -ge "$1" ]
}
own_is() { [ "$(own_packs)" = "$1" ]; }
# no_children pid: the process has no child left (its jobs' children,
# consolidating after their results, have all exited)
no_children() { ! grep -qs "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status; }

start_redis
# the first consolidation holds once it chose its packs (its lock taken)
REPLAYQ_TEST_HOLD=repack-selected REPLAYQ_TEST_HOLD_ONCE=1 \
	start_worker ws --repo-root="$ROOT" --jobs=2
WS=$WORKER_PID
check "worker started" worker_started ws

section "the threshold reached: a consolidation held"
jobs 1 11 >"$T/jobs.jsonl"
run_rq submit --no-validate "$T/jobs.jsonl"
check_eq "submit: exit 0" 0 "$RC"
check "11 results" wait_for "11 results" 120 results_in 11
check_eq "below the threshold: 11 packs of replayq's" 11 "$(own_packs)"
# the twelfth: the one job whose child finds a consolidation due (its
# result is stored before it consolidates)
jobs 12 12 >"$T/jobs.jsonl"
run_rq submit --no-validate "$T/jobs.jsonl"
A=$(hold_pid repack-selected)
check "the twelfth job's child consolidates, held after it chose" test -n "$A"
check "its result is in meanwhile" wait_for "12 results" 120 results_in 12
check_eq "replayq's 12 packs, none merged yet" 12 "$(own_packs)"
check "its lock is taken" test -e "$OBJ/replayq/consolidate.lock"

section "a job ends while the consolidation runs"
# its pack moves in beside the 12 chosen; its child finds the lock taken
# and waits
jobs 13 13 >"$T/jobs.jsonl"
run_rq submit --no-validate "$T/jobs.jsonl"
check "its pack in beside the 12 chosen" wait_for "13 packs" 120 own_is 13
kill -USR1 "$A"
check "let go: both results" wait_for "13 results" 120 results_in 13
check "the twelfth's consolidation merged" wait_for "the log line" 120 logged_after "$T/ws.log" s-12 merged
check "the children exited" wait_for "no child" 120 no_children "$WS"
check_eq "the 12 merged into one, the job's pack beside it" 2 "$(own_packs)"
check "the lock is gone" test ! -e "$OBJ/replayq/consolidate.lock"

section "$N jobs"
jobs 14 "$N" >"$T/jobs.jsonl"
stamp "submitting $((N - 13)) more jobs"
run_rq submit --no-validate "$T/jobs.jsonl"
check_eq "submit: exit 0" 0 "$RC"
check "all $N results" wait_for "all results" 600 results_in "$N"
check "the children exited" wait_for "no child" 120 no_children "$WS"
stamp "results in, children exited (replayq's packs: at most $MAX at a time)"
# the twelfth's line is found among the later consolidations' (a check
# that judged by the last line alone would miss it)
check "the twelfth's consolidation found among the later ones" logged_after "$T/ws.log" s-12 merged
check_eq "exactly one result per job" "$N" "$(results)"
for i in $(seq 1 "$N"); do echo "GET replayq:{sust}:result:s-$i"; done | rcli --raw >"$T/results.jsonl"
check_eq "every result ok" "$N" "$(jq -r .status "$T/results.jsonl" | grep -cx ok)"
# the threshold (12), and one more pack for each job that may be writing
# while a consolidation runs
check "replayq's packs stayed bounded while the jobs ran (at most $MAX)" test "$MAX" -le 14
check "replayq's packs bounded at the end ($(own_packs))" test "$(own_packs)" -le 12
check "the repository's packs bounded at the end" test "$(all_packs)" -le 14
check "every pack but the repository's first is replayq's" test "$(own_packs)" -ge "$(($(all_packs) - 1))"
jq -r '.updates[0].new' "$T/results.jsonl" | sort -u >"$T/tips"
check_eq "every job its own commits" "$N" "$(wc -l <"$T/tips")"
missing=$(git -C "$R" rev-list --objects --stdin <"$T/tips" 2>&1 >/dev/null | head -3)
check_eq "every result's commits, trees and blobs are there" "" "$missing"
check_eq "update jobs moved their refs" $(((N + 1) / 2)) "$(git -C "$R" for-each-ref refs/rq | wc -l)"
check "fsck clean" fsck_ok "$R"
check "nothing left behind" no_litter "$R"
check "no .keep left" bash -c "! ls '$OBJ'/pack/*.keep 2>/dev/null"

section "a maintain job"
packs=$(all_packs)
OUT=$(echo '{"v":1,"id":"m-1","repo":"r","mode":"maintain"}' |
	timeout -s KILL 120 "$REPLAYQ" submit --wait=60 2>>"$T/run.err")
check_eq "maintain: ok" ok "$(jq -r .status <<<"$OUT")"
check_eq "maintain: packs before" "$packs" "$(jq .maintain.packs_before <<<"$OUT")"
check_eq "maintain: packs after" "$(all_packs)" "$(jq .maintain.packs_after <<<"$OUT")"
check_eq "maintain: bytes after" "$(cat "$OBJ"/pack/*.pack | wc -c)" "$(jq .maintain.bytes_after <<<"$OUT")"
OUT=$(echo '{"v":1,"id":"m-2","repo":"r","mode":"maintain","revisions":["x"]}' |
	timeout -s KILL 120 "$REPLAYQ" submit --no-validate --wait=60 2>>"$T/run.err")
check_eq "maintain: a replay's field is refused" invalid_job "$(jq -r .error.code <<<"$OUT")"
check_workers_stop "$WS"

section "--consolidate=off"
# a threshold of 2: every one of these jobs would consolidate
git -C "$R" config replayq.consolidateAt 2
start_worker wo --repo-root="$ROOT" --jobs=2 --consolidate=off
WO=$WORKER_PID
before=$(own_packs)
for i in 1 2 3; do
	echo '{"v":1,"id":"o-'$i'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"],"committer":{"name":"Bot","email":"bot@example.com","time":'$((1900000000 + i))',"tz":"+0000"}}'
done >"$T/off.jsonl"
run_rq submit --no-validate --wait=120 "$T/off.jsonl"
check_eq "--consolidate=off: 3 results ok" 3 "$(grep -c '"status":"ok"' <<<"$OUT")"
check_eq "--consolidate=off: every job's pack stays" $((before + 3)) "$(own_packs)"
check_workers_stop "$WO"
finish
