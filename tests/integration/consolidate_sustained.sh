#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Sustained traffic on one repository, at volume (issue 34, point 4):
# 1,000 jobs (RQ_SUSTAINED_JOBS) on one repository through a real
# redis-server and a release `replayq worker --jobs=2` (RQ_RELEASE_REPLAYQ,
# which tests/run builds; the test build otherwise), half of them moving a
# ref of their own, half printing, each with its own committer time (new
# commits every time). The jobs are submitted in batches while the worker
# runs the earlier ones. The packs replayq keeps stay bounded all along
# (sampled while the jobs run) and at the end, every job has exactly one
# result, ok, and its commits, trees and blobs are there, every update job
# moved its ref, and git fsck is clean. What the timing does at the edges
# (a job ending during a consolidation, a kill inside one) is made to
# happen on purpose in integration/consolidate_worker and
# integration/consolidate_publish, with the test build's hold points.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
N=${RQ_SUSTAINED_JOBS:-1000}
BATCH=100
BIN=${RQ_RELEASE_REPLAYQ:-}
if [ -z "$BIN" ]; then
	echo "# notice: RQ_RELEASE_REPLAYQ not set (tests/run sets it): the test build runs the jobs" >&2
	BIN=$REPLAYQ
fi
ROOT=$T/root
R=$ROOT/r
mkdir -p "$ROOT"
make_repo "$R" v
git -C "$R" config gc.auto 0
OBJ=$R/.git/objects
Q=vol
export REPLAYQ_QUEUE=$Q

# jobs from to: the jobs v-<from>..v-<to> (tests/lib.sh)
jobs() { consolidation_jobs v "$@"; }
results() { rcli XLEN "$(key $Q results)"; }
MAX=0
# sample: note the largest count of replayq's packs seen
sample() {
	local n
	n=$(own_packs)
	[ "$n" -gt "$MAX" ] && MAX=$n
	return 0
}
# results_in n: n results in (and a sample)
results_in() {
	sample
	[ "$(results)" -ge "$1" ]
}
# no_children pid: the process has no child left
no_children() { ! grep -qs "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status; }

start_redis
"$BIN" worker --name=wv --repo-root="$ROOT" --jobs=2 2>"$T/wv.log" &
WV=$!
BG_PIDS+=("$WV")
WORKER_NAMES[$WV]=wv
check "worker started" worker_started wv

section "$N jobs, submitted in batches of $BATCH while the worker runs"
stamp "start"
sub_rc=0
for from in $(seq 1 "$BATCH" "$N"); do
	to=$((from + BATCH - 1))
	[ "$to" -gt "$N" ] && to=$N
	jobs "$from" "$to" >"$T/jobs.jsonl"
	"$BIN" submit --no-validate "$T/jobs.jsonl" >/dev/null 2>>"$T/submit.err" || sub_rc=1
	sample
done
stamp "submitted"
check_eq "every submit: exit 0" 0 "$sub_rc"
check "all $N results" wait_for "all results" 600 results_in "$N"
check "the worker's children exited (their consolidations done)" \
	wait_for "no child" 120 no_children "$WV"
stamp "results in (replayq's packs: at most $MAX at a time)"
check_eq "exactly one result per job" "$N" "$(results)"
for i in $(seq 1 "$N"); do echo "GET $(key $Q "result:v-$i")"; done | rcli --raw >"$T/results.jsonl"
check_eq "every result ok" "$N" "$(jq -r .status "$T/results.jsonl" | grep -cx ok)"
# the threshold (12), the new pack of a consolidation, and one more for a
# job that ends while it runs (its child then waits, holding its slot)
check "replayq's packs stayed bounded while the jobs ran (at most $MAX)" test "$MAX" -le 14
check "replayq's packs bounded at the end ($(own_packs))" test "$(own_packs)" -le 12
check "the repository's packs bounded at the end ($(all_packs))" test "$(all_packs)" -le 13
jq -r '.updates[0].new' "$T/results.jsonl" | sort -u >"$T/tips"
check_eq "every job its own commits" "$N" "$(wc -l <"$T/tips")"
missing=$(git -C "$R" rev-list --objects --stdin <"$T/tips" 2>&1 >/dev/null | head -3)
check_eq "every result's commits, trees and blobs are there" "" "$missing"
check_eq "update jobs moved their refs" $(((N + 1) / 2)) "$(git -C "$R" for-each-ref refs/rq | wc -l)"
moved=$(git -C "$R" for-each-ref --format='%(objectname)' refs/rq | sort)
check_eq "each to its result's commit" "$moved" \
	"$(jq -r 'select(.updates[0].ref | startswith("refs/rq/")) | .updates[0].new' "$T/results.jsonl" | sort)"
check "fsck clean" fsck_ok "$R"
check "nothing left behind" no_litter "$R"
check "no .keep left" bash -c "! ls '$OBJ'/pack/*.keep 2>/dev/null"
check_eq "no consolidation failed or was killed" 0 \
	"$(grep -c '"outcome":"\(failed\|killed\)"' "$T/wv.log")"
stamp "checked"
check_workers_stop "$WV"
finish
