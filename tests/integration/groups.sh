#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Many jobs on one repository (queue/rq_group, queue/rq_dead), with real
# workers and a real redis-server:
#  - groups: 20 cherry-picks onto one branch in one group, submitted at
#    once to two workers of two slots, apply one at a time in submission
#    order (each onto the one before); `replayq run` keeps the same rule;
#  - fairness: behind a busy group, ungrouped jobs and another group's
#    run before the busy group's third job (one worker, one slot: the
#    order is fixed);
#  - a group across a worker SIGKILL and a Redis restart from its AOF (its
#    running job held on purpose when both die), and across a worker
#    paused past the visibility timeout: the group moves on once its job
#    is reclaimed and finished, in order, one result each;
#  - reused ids: other content is refused with id_conflict (both
#    digests), the same job still gets its stored result;
#  - dead letters requeued under their id (`queue retry`, `--all-dead`),
#    their history in the new result, a grouped one back in its group.
. "$(dirname "$0")/../lib.sh"
require redis-server jq
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || not_ok "Debian's python3-jsonschema is installed"
start_redis --appendfsync always
ROOT=$T/root
mkdir -p "$ROOT"
C='"committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}'

# pick ID REPO BRANCH I [GROUP]: cherry-pick p-I onto BRANCH, applied
pick() {
	echo '{"id":"'"$1"'","repo":"'"$2"'","mode":"advance","target":"'"$3"'","revisions":["base..p-'"$4"'"],"ref_action":"update",'"$C${5:+,\"group\":\"$5\"}"'}'
}
# subjects repo branch n: the subjects of the branch's last n commits, oldest first
subjects() { git -C "$1" log --format=%s -n "$3" "$2" | tac | tr '\n' ' '; }
# result_ids Q: the ids in the results stream, in order
result_ids() { rcli --raw XRANGE "$(key "$1" results)" - + | awk 'NR % 7 == 3'; }
has_result() { [ "$(rcli EXISTS "$(key "$1" "result:$2")")" = 1 ]; }
all_results() {
	local q=$1 id
	shift
	for id in "$@"; do has_result "$q" "$id" || return 1; done
}

# --- 20 in one group: in order, one at a time ---------------------------------
section "20 cherry-picks in one group"
pick_repo "$ROOT/one" 20
Q=g1
for i in $(seq 1 20); do pick "o-$i" one main "$i" train; done >"$T/o.jobs"
for w in o1 o2; do start_worker "$w" --queue=$Q --repo-root="$ROOT" --jobs=2; done
run_rq submit --queue=$Q --wait=120 "$T/o.jobs"
check_eq "20 grouped picks: exit 0 (all ok)" 0 "$RC"
check_eq "20 results, all ok" "20 ok" "$(jq -r .status <<<"$OUT" | sort | uniq -c | awk '{print $1, $2}')"
check_eq "main holds the 20 picks in submission order" "$(seq -f 'pick %g' 1 20 | tr '\n' ' ')" \
	"$(subjects "$ROOT/one" main 20)"
check_eq "each pick went onto the one before it" 19 "$(jq -rs 'sort_by(.id | ltrimstr("o-") | tonumber) |
	[range(1; length) as $i | select(.[$i].updates[0].old == .[$i - 1].updates[0].new)] | length' <<<"$OUT")"
check_eq "results in submission order" "$(seq -f 'o-%g' 1 20 | tr '\n' ' ')" "$(result_ids $Q | tr '\n' ' ')"
check_eq "every job ran once" "1" "$(jq -r .attempt <<<"$OUT" | sort -u | tr '\n' ' ' | xargs)"
check_eq "the group is idle again, nothing parked" "0 0" \
	"$(rcli HLEN "$(key $Q groups)") $(rcli EXISTS "$(key $Q group:train)")"
check_workers_stop "${!WORKER_NAMES[@]}"
WORKER_NAMES=()

# --- replayq run: the same rule without a queue -------------------------------
section "replayq run: a group one at a time, in input order"
pick_repo "$ROOT/run" 6
for i in $(seq 1 6); do pick "l-$i" run main "$i" lg; done >"$T/l.jobs"
run_rq run --repo-root="$ROOT" --jobs=2 "$T/l.jobs"
check_eq "run: exit 0, six ok" "0 6" "$RC $(jq -r .status <<<"$OUT" | grep -cx ok)"
check_eq "run: main holds the picks in order" "$(seq -f 'pick %g' 1 6 | tr '\n' ' ')" "$(subjects "$ROOT/run" main 6)"

# --- fairness ------------------------------------------------------------------
section "fairness: a busy group and other jobs"
Q=g2
make_repo "$ROOT/proj" x
{
	for i in $(seq 1 6); do job "busy-$i" '"group":"busy"'; done
	for i in 1 2 3; do job "free-$i"; done
	for i in 1 2; do job "other-$i" '"group":"other"'; done
} >"$T/fair.jobs"
run_rq submit --queue=$Q "$T/fair.jobs"
check_eq "fair jobs queued" 0 "$RC"
check_eq "one job of each group in the stream, the others parked" "5 5 1 2" \
	"$(rcli XLEN "$(key $Q jobs)") $(rcli XLEN "$(key $Q group:busy)") $(rcli XLEN "$(key $Q group:other)") $(rcli HLEN "$(key $Q groups)")"
start_worker f1 --queue=$Q --repo-root="$ROOT" --jobs=1
F1=$WORKER_PID
check "all fair jobs done" wait_for "11 results" 60 all_results $Q busy-6 other-2 free-3
order=$(result_ids $Q | tr '\n' ' ')
echo "order: $order"
pos() { tr ' ' '\n' <<<"$order" | grep -nx "$1" | cut -d: -f1; }
check "the ungrouped jobs ran before the busy group's third" [ "$(pos free-3)" -lt "$(pos busy-3)" ]
check "the other group ran before the busy group's third" [ "$(pos other-2)" -lt "$(pos busy-3)" ]
check_eq "the busy group in its order" "busy-1 busy-2 busy-3 busy-4 busy-5 busy-6" \
	"$(tr ' ' '\n' <<<"$order" | grep busy | xargs)"
check_workers_stop "$F1"

# --- a worker SIGKILLed and Redis restarted while a group's job runs ----------
section "a group across a worker SIGKILL and a Redis restart"
Q=g3
pick_repo "$ROOT/kill" 4
for i in 1 2 3 4; do pick "k-$i" kill main "$i" kg; done >"$T/k.jobs"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD='job:k-2@1' start_worker ka --queue=$Q --repo-root="$ROOT" --jobs=2 --visibility-timeout=1
KA=$WORKER_PID
run_rq submit --queue=$Q "$T/k.jobs"
KID=$(hold_pid 'job:k-2@1')
check "k-2 held in flight" test -n "$KID"
check "k-1 done before" has_result $Q k-1
check_eq "while k-2 runs: k-3 and k-4 parked, not started" "2 0 0" \
	"$(rcli XLEN "$(key $Q group:kg)") $(rcli EXISTS "$(key $Q result:k-3)") $(rcli EXISTS "$(key $Q claim:k-3)")"
kill -9 "$KA" "$KID"
wait "$KA" 2>/dev/null
kill -9 "$(cat "$T/redis/redis.pid")"
wait_for "redis gone" 10 bash -c "! redis-cli -p $REDIS_PORT ping >/dev/null 2>&1"
start_redis --appendfsync always
check_eq "after the restart: still parked" 2 "$(rcli XLEN "$(key $Q group:kg)")"
start_worker kb --queue=$Q --repo-root="$ROOT" --jobs=2 --visibility-timeout=1
KB=$WORKER_PID
check "the group finishes" wait_for "k-4" 60 has_result $Q k-4
check_eq "k-2 ran again (delivery 2), ok" "ok 2" "$(rcli GET "$(key $Q result:k-2)" | jq -r '"\(.status) \(.attempt)"')"
check_eq "all ok" "ok ok ok ok" "$(for i in 1 2 3 4; do rcli GET "$(key $Q result:k-$i)" | jq -r .status; done | xargs)"
check_eq "main holds the picks in order" "pick 1 pick 2 pick 3 pick 4 " "$(subjects "$ROOT/kill" main 4)"
check_eq "one result each, in order" "k-1 k-2 k-3 k-4" "$(result_ids $Q | xargs)"
check_workers_stop "$KB"

# --- a worker paused past the visibility timeout -------------------------------
section "a group across a worker paused past the visibility timeout"
Q=g4
pick_repo "$ROOT/pause" 3
for i in 1 2 3; do pick "s-$i" pause main "$i" sg; done >"$T/s.jobs"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD='job:s-1@1' start_worker sa --queue=$Q --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
SA=$WORKER_PID
run_rq submit --queue=$Q "$T/s.jobs"
SKID=$(hold_pid 'job:s-1@1')
kill -STOP "$SA"
start_worker sb --queue=$Q --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
SB=$WORKER_PID
check "the paused worker's job is reclaimed and its group finishes" wait_for "s-3" 60 has_result $Q s-3
kill -CONT "$SA"
kill -USR1 "$SKID"
check "the paused worker's child ends" wait_for "its child" 30 dead_or_zombie "$SKID"
check_workers_stop "$SA" "$SB"
check_eq "s-1 finished by its second delivery" 2 "$(rcli GET "$(key $Q result:s-1)" | jq -r .attempt)"
check_eq "main holds the picks in order, once each" "base pick 1 pick 2 pick 3 " "$(subjects "$ROOT/pause" main 4)"
check_eq "one result each, in order" "s-1 s-2 s-3" "$(result_ids $Q | xargs)"

# --- reused ids ----------------------------------------------------------------
section "a reused id with other content"
Q=g5
run_rq submit --queue=$Q < <(job r-1)
check_eq "r-1 queued" "0 r-1" "$RC $OUT"
run_rq submit --queue=$Q < <(job r-1 '"empty":"keep"')
check_eq "other content while queued: exit 2" 2 "$RC"
check_contains "id_conflict, naming the id" "job r-1 refused: id_conflict: job id 'r-1'" "$ERR"
check "both content digests named" grep -Eq 'content digest [0-9a-f]{40}, this job.s [0-9a-f]{40}' <<<"$ERR"
check_eq "one entry queued" 1 "$(rcli XLEN "$(key $Q jobs)")"
run_rq submit --queue=$Q < <(job r-1)
check_eq "the same job again: not queued again (exit 2)" 2 "$RC"
check_contains "the same job: the duplicate warning, not id_conflict" "already queued" "$ERR"
start_worker r1 --queue=$Q --repo-root="$ROOT" --jobs=1
R1=$WORKER_PID
check "r-1 done" wait_for "r-1" 30 has_result $Q r-1
DIG=$(rcli GET "$(key $Q claim:r-1)" | cut -d' ' -f2)
run_rq submit --queue=$Q < <(job r-1 '"empty":"keep"')
check_eq "other content with a result: exit 2" 2 "$RC"
check_contains "id_conflict with the stored job's digest" "content digest $DIG, this job's" "$ERR"
run_rq submit --queue=$Q --wait=30 < <(job r-1)
check_eq "the same job: its stored result, exit 0" "0 r-1 ok" "$RC $(jq -r '"\(.id) \(.status)"' <<<"$OUT")"
# a producer that adds the entry itself (no check at submit): the worker
# answers it with id_conflict and keeps the first result
rcli XADD "$(key $Q jobs)" '*' id r-1 job "$(job r-1 '"empty":"keep","reply_to":"box"')" >/dev/null
check "an entry added by hand with other content is answered" wait_for "box" 30 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT LLEN '$(key $Q reply:box)')\" = 1 ]"
rcli LINDEX "$(key $Q reply:box)" 0 >"$T/conflict.json"
check_eq "by the worker: id_conflict" "r-1 error id_conflict" "$(jq -r '"\(.id) \(.status) \(.error.code)"' "$T/conflict.json")"
check_eq "the first result kept" ok "$(rcli GET "$(key $Q result:r-1)" | jq -r .status)"
run_rq submit --queue=$Q --force --wait=30 < <(job r-1 '"empty":"keep"')
check_eq "--force reruns it with its new content (documented)" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
run_rq submit --queue=$Q < <(job r-2 '"group":"rg"')
run_rq submit --queue=$Q < <(job r-2 '"group":"rg2"')
check_contains "another group is other content" "id_conflict" "$ERR"
check_workers_stop "$R1"

# --- dead letters back ---------------------------------------------------------
section "dead letters requeued"
Q=g6
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_CRASH=d-1 REPLAYQ_TEST_HOLD='job:d-2@1' start_worker d1 --queue=$Q --repo-root="$ROOT" \
	--jobs=2 --max-deliveries=1
D1=$WORKER_PID
{
	job d-1
	job d-2 '"group":"dg"'
	job d-3 '"group":"dg"'
} | run_rq submit --queue=$Q
DKID=$(hold_pid 'job:d-2@1')
kill -9 "$DKID"
check "d-1 and d-2 dead-lettered, d-3 ran after d-2" wait_for "d-3" 30 all_results $Q d-1 d-2 d-3
check_eq "two dead letters" 2 "$(rcli XLEN "$(key $Q dead)")"
check_eq "d-1 crashed, d-2 crashed, d-3 ok" "crashed crashed ok" \
	"$(for i in 1 2 3; do rcli GET "$(key $Q result:d-$i)" | jq -r '.error.code // .status'; done | xargs)"
check_workers_stop "$D1"
run_rq queue --queue=$Q retry d-1 nosuch
check_eq "retry: exit 1 (one had no dead letter)" 1 "$RC"
check_eq "retry: prints the job requeued" d-1 "$OUT"
check_contains "retry: says which was not" "job nosuch not requeued: no dead letter" "$ERR"
check_eq "d-1: its result dropped, one dead letter left" "0 1" \
	"$(rcli EXISTS "$(key $Q result:d-1)") $(rcli XLEN "$(key $Q dead)")"
run_rq queue --queue=$Q retry d-1
check_eq "retry again while queued: exit 1" 1 "$RC"
run_rq queue --queue=$Q retry --all-dead
check_eq "retry --all-dead: d-2" "0 d-2" "$RC $OUT"
check_eq "no dead letter left" 0 "$(rcli XLEN "$(key $Q dead)")"
start_worker d2 --queue=$Q --repo-root="$ROOT" --jobs=2
D2=$WORKER_PID
check "the requeued jobs run" wait_for "d-1 d-2" 30 all_results $Q d-1 d-2
for i in 1 2; do
	R=$(rcli GET "$(key $Q result:d-$i)")
	check_eq "d-$i: ok under its id, with its history" "d-$i ok 1 crashed" \
		"$(jq -r '"\(.id) \(.status) \(.history | length) \(.history[0].result.error.code)"' <<<"$R")"
	check_contains "d-$i: the dead letter's reason kept" "too many deliveries" "$(jq -r '.history[0].reason' <<<"$R")"
done
check_eq "the group is idle again" 0 "$(rcli HLEN "$(key $Q groups)")"
check_workers_stop "$D2"

section "the schemas"
for i in 1 2; do rcli GET "$(key $Q result:d-$i)"; done >"$T/results.jsonl"
cat "$T/conflict.json" >>"$T/results.jsonl"
out=$(/usr/bin/python3 - "$(dirname "$0")/../../docs/schema" "$T/o.jobs" "$T/results.jsonl" <<'PY' 2>&1
import json, sys
from jsonschema import Draft202012Validator
sd = sys.argv[1]
jv = Draft202012Validator(json.load(open(sd + "/job.schema.json")))
rv = Draft202012Validator(json.load(open(sd + "/result.schema.json")))
bad = [e.message for l in open(sys.argv[2]) for e in jv.iter_errors(json.loads(l))]
bad += [e.message for l in open(sys.argv[3]) for e in rv.iter_errors(json.loads(l))]
print("\n".join(bad) or "schema ok")
PY
)
check_eq "grouped jobs, results with a history, id_conflict: valid" "schema ok" "$out"
# (d1's child crashed on purpose: REPLAYQ_TEST_CRASH, a SEGV it reports)
check "no sanitizer report" sanitizer_clean $(ls "$T"/*.log | grep -v '/d1.log$')
finish
