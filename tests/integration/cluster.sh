#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq on a real Redis Cluster: 3 masters and 3 replicas on loopback,
# workers on two queues whose slots live on different masters, reached
# through redis+cluster:// seeds. While jobs run, three moves made on
# purpose at points the test holds a job at:
#   1. the master of queue A's slot is SIGKILLed, its replica takes over
#      (CLUSTER FAILOVER TAKEOVER), more jobs are submitted through the seeds
#      (in one group: they run one at a time, in order, on the new master);
#   2. queue B's slot is migrated to the third master (the MIGRATE/SETSLOT
#      steps of redis-cli --cluster reshard), stopped half-way until a
#      worker has followed an ASK;
#   3. a result stored on a master whose replica is cut off (stopped, its
#      link killed) is lost with that master on purpose: its job must be
#      redelivered and finish once on the promoted replica.
# Every job gets exactly one result, equal to `replayq run` on a copy of the
# repositories; lost, duplicated and wrong are counted and must be 0, and
# the figures (jobs, moves, redirections, time to recover) are printed.
. "$(dirname "$0")/../lib.sh"
require jq redis-server redis-cli
unset REPLAYQ_QUEUE REPLAYQ_REDIS_PASSWORD REPLAYQ_REDIS_PASSWORD_FILE REPLAYQ_REDIS_URL
N=${RQ_CLUSTER_JOBS:-16} # jobs per queue and half
H=$((N / 2))		 # the first of the 4 jobs held (every worker slot) when a move is made
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/ra" ra $((2 * N))
make_repo "$ROOT/rb" rb $((2 * N))

# jobs of every kind (mixed_jobs); b-lost is the one whose result is lost
mixed_jobs a ra 1 "$N" >"$T/a1.jsonl"
# (submitted after the failover, in one group: one at a time, in order)
mixed_jobs a ra $((N + 1)) $((2 * N)) | sed 's/}$/,"group":"ga"}/' >"$T/a2.jsonl"
mixed_jobs b rb 1 "$N" >"$T/b1.jsonl"
mixed_jobs b rb $((N + 1)) $((2 * N)) >"$T/b2.jsonl"
mixed_job b-lost rb 0 >"$T/b3.jsonl"
cat "$T"/a1.jsonl "$T"/a2.jsonl "$T"/b1.jsonl "$T"/b2.jsonl "$T"/b3.jsonl >"$T/all.jsonl"
TOTAL=$(wc -l <"$T/all.jsonl")

# the reference: replayq run on a copy, before any worker moves a ref
reference_results "$ROOT" "$T/all.jsonl"
check_eq "reference: one result per job" "$TOTAL" "$(wc -l <"$T/ref.norm")"
check_eq "reference: conflicts seen" $((4 * N / 8)) "$(grep -c '"status":"conflict"' "$T/ref.norm")"

section "a cluster of 3 masters and 3 replicas"
T0=$SECONDS
start_cluster || {
	not_ok "the cluster starts"
	finish
}
echo "# cluster up in $((SECONDS - T0)) s on ports ${CLUSTER_PORTS[*]}"
export REPLAYQ_REDIS_URL=$CLUSTER_URL
# two queues whose slots are on different masters, and the third master
QA=qa
SA=$(cluster_keyslot "{$QA}")
MA=$(cluster_master_of "$SA")
for q in qb qc qd qe qf qg qh; do
	QB=$q
	SB=$(cluster_keyslot "{$QB}")
	MB=$(cluster_master_of "$SB")
	[ "$MB" != "$MA" ] && break
done
MC=$(cluster_masters | grep -vx -e "$MA" -e "$MB" | head -1)
REP_A=$(cluster_replica_of "$MA")
REP_C=$(cluster_replica_of "$MC")
echo "# queue $QA: slot $SA on $MA (replica $REP_A); queue $QB: slot $SB on $MB; third master $MC (replica $REP_C)"
check "the queues' slots are on different masters" [ "$MA" != "$MB" ]
check "the masters have replicas" test -n "$REP_A" -a -n "$REP_C"
pid_of() { cat "$T/cluster/$1/redis.pid"; }
# results_reach queue n: the master serving the queue's slot has n results
results_reach() {
	local m
	m=$(cluster_master_of "$(cluster_keyslot "{$1}")") && [ -n "$m" ] &&
		results_are "$m" "$1" -ge "$2"
}
# result_stored port queue id: the node at port holds job id's result
result_stored() { [ "$(ccli "$1" exists "$(key "$2" "result:$3")")" = 1 ]; }

# the 4 jobs a-H..a-(H+3), b-H..b-(H+3) and b-lost are held (every worker
# slot) at their first delivery
REPLAYQ_TEST_HOLD="$(job_holds a "$H" 4)$(job_holds b "$H" 4)job:b-lost@1"
export REPLAYQ_TEST_HOLD
for w in wa1 wa2; do start_worker "$w" --queue="$QA" --repo-root="$ROOT" --jobs=2 --visibility-timeout=2; done
for w in wb1 wb2; do start_worker "$w" --queue="$QB" --repo-root="$ROOT" --jobs=2 --visibility-timeout=2; done
WORKERS=("${BG_PIDS[@]}")
unset REPLAYQ_TEST_HOLD
for w in wa1 wa2 wb1 wb2; do check "$w connected" worker_started "$w"; done
CONNS=$(connections_received "${CLUSTER_PORTS[@]}")
run_rq submit --queue="$QA" --no-validate "$T/a1.jsonl"
check_eq "submit to $QA through the seeds" "0 $N" "$RC $(grep -c . <<<"$OUT")"
run_rq submit --queue="$QB" --no-validate "$T/b1.jsonl"
check_eq "submit to $QB through the seeds" "0 $N" "$RC $(grep -c . <<<"$OUT")"

section "move 1: the master of $QA's slot killed, its replica takes over"
mapfile -t CHILDREN < <(held_job_pids a "$H" 4)
check_eq "4 jobs of $QA running (held), every worker slot taken" 4 "${#CHILDREN[@]}"
CONNS=$(($(connections_received "${CLUSTER_PORTS[@]}") - CONNS - 6))
echo "# connections the nodes accepted while $H jobs ran: $CONNS"
check "the workers keep their connections (the nodes accepted $CONNS for $H jobs)" test "$CONNS" -le 10
check_eq "$QA's keys live on $MA" 1 "$(ccli "$MA" exists "replayq:{$QA}:jobs")"
check_eq "$QB's keys live on $MB" 1 "$(ccli "$MB" exists "replayq:{$QB}:jobs")"
check_eq "no key of $QA on $MB" 0 "$(ccli "$MB" cluster countkeysinslot "$SA")"
echo "# at the kill: $(ccli "$MA" xlen "replayq:{$QA}:jobs") jobs of $QA queued or running"
KILLED_AT=$(now_ms)
kill -9 "$(pid_of "$MA")"
check "$REP_A takes over slot $SA" cluster_takeover "$REP_A" "$SA"
TAKEN_AT=$(now_ms)
BEFORE=$(results_at "$REP_A" "$QA")
run_rq submit --queue="$QA" --no-validate "$T/a2.jsonl"
check_eq "submit to $QA after the failover" "0 $N" "$RC $(grep -c . <<<"$OUT")"
kill -USR1 "${CHILDREN[@]}"
check "a new result on $REP_A" wait_for "a new result on $REP_A" 60 results_are "$REP_A" "$QA" -gt "$BEFORE"
RECOVERED_AT=$(now_ms)
RECOVER_MS=$((RECOVERED_AT - KILLED_AT))
check "every job of $QA has a result" wait_for "$QA's results" 120 results_reach "$QA" $((2 * N))
echo "# failover: replica master $((TAKEN_AT - KILLED_AT)) ms after the kill, first result on it after $RECOVER_MS ms"
check_eq "$QA's grouped jobs ran one after the other, in submission order" \
	"$(seq -f 'a-%g' $((N + 1)) $((2 * N)) | xargs)" \
	"$(ccli "$REP_A" --raw xrange "$(key "$QA" results)" - + | awk 'NR % 7 == 3' |
		awk -F- -v lo=$((N + 1)) '$2 >= lo' | xargs)"
check_eq "and their group is idle" 0 "$(ccli "$REP_A" hlen "$(key "$QA" groups)")"

section "move 2: $QB's slot migrated from $MB to $MC while its jobs run"
mapfile -t CHILDREN < <(held_job_pids b "$H" 4)
check_eq "4 jobs of $QB running (held), every worker slot taken" 4 "${#CHILDREN[@]}"
echo "# at the migration: $(ccli "$MB" xlen "replayq:{$QB}:jobs") jobs of $QB queued or running"
MIGRATE_AT=$(now_ms)
check "migration begins" slot_migration_begin "$SB" "$MB" "$MC"
check "the job stream moves first" slot_migrate_keys "$SB" "$MB" "$MC" "replayq:{$QB}:jobs"
asking_seen() { ccli "$MC" info commandstats | grep -q '^cmdstat_asking:'; }
check "a worker follows the ASK to $MC" wait_for "ASKING on $MC" 30 asking_seen
kill -USR1 "${CHILDREN[@]}"
check "the other keys move" slot_migrate_keys "$SB" "$MB" "$MC"
check "migration ends" slot_migration_end "$SB" "$MB" "$MC"
check_eq "no key of $QB left on $MB" 0 "$(ccli "$MB" cluster countkeysinslot "$SB")"
run_rq submit --queue="$QB" --no-validate "$T/b2.jsonl"
check_eq "submit to $QB after the migration" "0 $N" "$RC $(grep -c . <<<"$OUT")"
check "every job of $QB has a result" wait_for "$QB's results" 120 results_reach "$QB" $((2 * N))
check_eq "$QB's results are on $MC" $((2 * N)) "$(results_at "$MC" "$QB")"
echo "# migration: all of $QB's jobs done $(($(now_ms) - MIGRATE_AT)) ms after it began"

section "move 3: a result lost with its master (async replication)"
run_rq submit --queue="$QB" --no-validate "$T/b3.jsonl"
CHILD=$(hold_pid "job:b-lost@1")
check "the replica $REP_C has every write so far" wait_for "$REP_C in sync" 30 repl_synced "$MC"
kill -STOP "$(pid_of "$REP_C")"
ccli "$MC" client kill type replica >/dev/null
kill -USR1 "$CHILD"
check "the result is stored on $MC" wait_for "b-lost's result" 60 result_stored "$MC" "$QB" b-lost
KILLED_AT=$(now_ms)
kill -9 "$(pid_of "$MC")"
kill -CONT "$(pid_of "$REP_C")"
check "$REP_C takes over slot $SB" cluster_takeover "$REP_C" "$SB"
check_eq "the result was lost with the master" 0 "$(ccli "$REP_C" exists "replayq:{$QB}:result:b-lost")"
check "the job is redelivered and finishes" wait_for "b-lost again" 60 result_stored "$REP_C" "$QB" b-lost
LOST_RECOVERED=$(($(now_ms) - KILLED_AT))
check "it ran again (delivery 2 or later)" jq -e '.attempt >= 2' >/dev/null <<<"$(ccli "$REP_C" get "replayq:{$QB}:result:b-lost")"
echo "# lost result: redone and stored on the new master $LOST_RECOVERED ms after the kill"

section "every job: exactly one result, equal to replayq run's"
LIVE=()
for p in "${CLUSTER_PORTS[@]}"; do redis_answers "$p" && LIVE+=("$p"); done
OA=$(cluster_master_of "$SA")
OB=$(cluster_master_of "$SB")
{
	for i in $(seq 1 $((2 * N))); do ccli "$OA" get "replayq:{$QA}:result:a-$i"; done
	for i in $(seq 1 $((2 * N))) lost; do ccli "$OB" get "replayq:{$QB}:result:b-$i"; done
} | grep -v '^$' | norm_results | sort >"$T/got.norm"
ccli "$OA" --raw xrange "replayq:{$QA}:results" - + | grep -x 'a-[0-9]*' >"$T/ids"
ccli "$OB" --raw xrange "replayq:{$QB}:results" - + | grep -x 'b-[0-9a-z]*' >>"$T/ids"
check_results_once "$TOTAL" "$T/ref.norm" "$T/got.norm" "$T/ids"
check_eq "$QA: the job stream is empty" 0 "$(ccli "$OA" xlen "replayq:{$QA}:jobs")"
check_eq "$QB: the job stream is empty" 0 "$(ccli "$OB" xlen "replayq:{$QB}:jobs")"
check_eq "$QA: nothing pending" 0 "$(ccli "$OA" xpending "replayq:{$QA}:jobs" workers | head -1)"
check_eq "$QB: nothing pending" 0 "$(ccli "$OB" xpending "replayq:{$QB}:jobs" workers | head -1)"
moved=$(($(updates_moved "$ROOT/ra" a $((2 * N)) "$T/ref.norm") + $(updates_moved "$ROOT/rb" b $((2 * N)) "$T/ref.norm")))
check_eq "the ref-update jobs moved their refs" $((2 * ((2 * N - 6) / 8 + 1))) "$moved"
check "fsck ra" fsck_ok "$ROOT/ra"
check "fsck rb" fsck_ok "$ROOT/rb"

MOVED=$(errorstat MOVED "${LIVE[@]}")
ASK=$(errorstat ASK "${LIVE[@]}")
TRYAGAIN=$(errorstat TRYAGAIN "${LIVE[@]}")
echo "figures: jobs=$TOTAL moves=3 (2 failovers, 1 slot migration) lost=$LOST duplicated=$DUP wrong=$WRONG"
echo "figures: time to recover: failover ${RECOVER_MS} ms (kill to first result on the new master)," \
	"lost result redone ${LOST_RECOVERED} ms after the kill"
echo "figures: answered by the live nodes: MOVED=$MOVED ASK=$ASK TRYAGAIN=$TRYAGAIN"

check_workers_stop "${WORKERS[@]}"
check "no sanitizer report in the logs" sanitizer_clean "$T"/w*.log "$T/run.err"
finish
