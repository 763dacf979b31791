#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Sustained traffic on one repository through a real worker: 1,000 jobs
# (RQ_SUSTAINED_JOBS), half of them moving a ref of their own, half
# printing, each with its own committer time (new commits every time),
# through a real redis-server and `replayq worker --jobs=2`. The packs
# replayq keeps in the repository stay bounded all along (sampled while
# the jobs run, and at the end), every result is ok and its commits,
# trees and blobs are there, git fsck is clean, and a job of mode
# maintain reports the packs before and after. A second worker with
# --consolidate=off leaves every job's pack as it is.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
N=${RQ_SUSTAINED_JOBS:-1000}
ROOT=$T/root
R=$ROOT/r
mkdir -p "$ROOT"
make_repo "$R" s
git -C "$R" config gc.auto 0
OBJ=$R/.git/objects
export REPLAYQ_QUEUE=sust

for i in $(seq 1 "$N"); do
	c='"committer":{"name":"Bot","email":"bot@example.com","time":'$((1800000000 + i))',"tz":"+0000"}'
	if [ $((i % 2)) = 1 ]; then
		u=',"ref":"refs/rq/'$i'","ref_action":"update"'
	else
		u=''
	fi
	echo '{"v":1,"id":"s-'$i'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"]'$u','$c'}'
done >"$T/jobs.jsonl"

start_redis
start_worker ws --repo-root="$ROOT" --jobs=2
WS=$WORKER_PID
check "worker started" worker_started ws
stamp "submitting $N jobs"
run_rq submit --no-validate "$T/jobs.jsonl"
check_eq "submit: exit 0" 0 "$RC"
own_packs() { ls "$OBJ/replayq" 2>/dev/null | grep -c '\.own$'; }
MAX=0
# all results in; meanwhile the largest count of replayq's packs seen
done_sampling() {
	local n
	n=$(own_packs)
	[ "$n" -gt "$MAX" ] && MAX=$n
	[ "$(rcli XLEN "replayq:{sust}:results")" -ge "$N" ]
}
check "all $N results" wait_for "all results" 600 done_sampling
stamp "results in (replayq's packs: at most $MAX at a time)"
check_eq "exactly one result per job" "$N" "$(rcli XLEN "replayq:{sust}:results")"
for i in $(seq 1 "$N"); do echo "GET replayq:{sust}:result:s-$i"; done | rcli --raw >"$T/results.jsonl"
check_eq "every result ok" "$N" "$(jq -r .status "$T/results.jsonl" | grep -cx ok)"
# the threshold (12), and one more pack for each job that may be writing
# while a consolidation runs
check "replayq's packs stayed bounded while the jobs ran (at most $MAX)" test "$MAX" -le 14
check "replayq's packs bounded at the end ($(own_packs))" test "$(own_packs)" -le 12
check "the repository's packs bounded at the end" test "$(ls "$OBJ/pack" | grep -c '\.idx$')" -le 14
check "every pack but the repository's first is replayq's" test "$(own_packs)" -ge "$(($(ls "$OBJ/pack" | grep -c '\.idx$') - 1))"
jq -r '.updates[0].new' "$T/results.jsonl" | sort -u >"$T/tips"
check_eq "every job its own commits" "$N" "$(wc -l <"$T/tips")"
missing=$(git -C "$R" rev-list --objects --stdin <"$T/tips" 2>&1 >/dev/null | head -3)
check_eq "every result's commits, trees and blobs are there" "" "$missing"
check_eq "update jobs moved their refs" $(((N + 1) / 2)) "$(git -C "$R" for-each-ref refs/rq | wc -l)"
check "fsck clean" fsck_ok "$R"
check "nothing left behind" no_litter "$R"
check "no .keep left" bash -c "! ls '$OBJ'/pack/*.keep 2>/dev/null"

section "a maintain job"
packs=$(ls "$OBJ/pack" | grep -c '\.idx$')
OUT=$(echo '{"v":1,"id":"m-1","repo":"r","mode":"maintain"}' |
	timeout -s KILL 120 "$REPLAYQ" submit --wait=60 2>>"$T/run.err")
check_eq "maintain: ok" ok "$(jq -r .status <<<"$OUT")"
check_eq "maintain: packs before" "$packs" "$(jq .maintain.packs_before <<<"$OUT")"
check_eq "maintain: packs after" "$(ls "$OBJ/pack" | grep -c '\.idx$')" "$(jq .maintain.packs_after <<<"$OUT")"
check_eq "maintain: bytes after" "$(cat "$OBJ"/pack/*.pack | wc -c)" "$(jq .maintain.bytes_after <<<"$OUT")"
OUT=$(echo '{"v":1,"id":"m-2","repo":"r","mode":"maintain","revisions":["x"]}' |
	timeout -s KILL 120 "$REPLAYQ" submit --no-validate --wait=60 2>>"$T/run.err")
check_eq "maintain: a replay's field is refused" invalid_job "$(jq -r .error.code <<<"$OUT")"
check_workers_stop "$WS"

section "--consolidate=off"
start_worker wo --repo-root="$ROOT" --jobs=2 --consolidate=off
WO=$WORKER_PID
before=$(own_packs)
for i in $(seq 1 15); do
	echo '{"v":1,"id":"o-'$i'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"],"committer":{"name":"Bot","email":"bot@example.com","time":'$((1900000000 + i))',"tz":"+0000"}}'
done >"$T/off.jsonl"
run_rq submit --no-validate --wait=120 "$T/off.jsonl"
check_eq "--consolidate=off: 15 results ok" 15 "$(grep -c '"status":"ok"' <<<"$OUT")"
check_eq "--consolidate=off: every job's pack stays" $((before + 15)) "$(own_packs)"
check_workers_stop "$WO"
finish
