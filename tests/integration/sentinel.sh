#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq behind Sentinel: a master and a replica (requirepass) watched by
# 3 sentinels on loopback, workers reaching them through
# redis+sentinel://s1,s2,s3/mymaster/0 (the password goes to the data
# nodes only). Two moves made on purpose while every worker slot holds a
# job:
#   1. the master is SIGKILLed: the sentinels promote the replica, the
#      workers ask them again and carry on, more jobs go in after;
#   2. the old master, back as a replica, is made master again with
#      SENTINEL FAILOVER, and the workers' master turns replica under them
#      (READONLY) before the sentinels get to it.
# Every job gets exactly one result, equal to `replayq run` on a copy of
# the repository; lost, duplicated and wrong are counted and must be 0,
# and the figures (jobs, moves, time to recover) are printed.
. "$(dirname "$0")/../lib.sh"
require jq redis-server redis-cli
unset REPLAYQ_QUEUE REPLAYQ_REDIS_PASSWORD REPLAYQ_REDIS_PASSWORD_FILE REPLAYQ_REDIS_URL
N=${RQ_SENTINEL_JOBS:-16} # jobs per part (3 parts)
H=$((N / 2))		  # the first of the 4 jobs held (every worker slot) at a move
Q=sq
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/rs" rs $((3 * N))

# jobs of every kind (mixed_jobs), in 3 parts
for part in 1 2 3; do
	mixed_jobs s rs $(((part - 1) * N + 1)) $((part * N)) >"$T/p$part.jsonl"
done
cat "$T"/p1.jsonl "$T"/p2.jsonl "$T"/p3.jsonl >"$T/all.jsonl"
TOTAL=$((3 * N))

# the reference: replayq run on a copy, before any worker moves a ref
reference_results "$ROOT" "$T/all.jsonl"
check_eq "reference: one result per job" "$TOTAL" "$(wc -l <"$T/ref.norm")"

section "a master, a replica and 3 sentinels"
PW=sentinel-test-pw
REDIS_AUTH="-a $PW --no-auth-warning"
SENTINEL_AUTH_PASS=$PW
# data_node parent [args...]: a data node (password on) on a free port in
# parent/<port> (start_on_free_port: NODE_PORT, NODE_DIR)
data_node() {
	local parent=$1
	shift
	start_on_free_port "$parent" start_redis_at --requirepass "$PW" --masterauth "$PW" \
		--repl-diskless-sync-delay 0 "$@"
}
data_node "$T/m" || {
	not_ok "the master starts"
	finish
}
MP=$NODE_PORT
MDIR=$NODE_DIR
data_node "$T/r" --replicaof 127.0.0.1 "$MP" || {
	not_ok "the replica starts"
	finish
}
RP=$NODE_PORT
check "the replica is in sync" wait_for "replica in sync" 30 repl_synced "$MP"
SPORTS=()
SDIRS=()
for s in 1 2 3; do
	REDIS_AUTH='' start_on_free_port "$T/s$s" start_sentinel "$MP" || {
		not_ok "sentinel $s starts"
		finish
	}
	SPORTS+=("$NODE_PORT")
	SDIRS+=("$NODE_DIR")
done
# sentinels_ready: each sentinel knows the other two and the replica
sentinels_ready() {
	local s info
	for s in "${SPORTS[@]}"; do
		info=$(redis-cli -p "$s" sentinel master mymaster | tr -d '\r')
		grep -A1 -x 'num-other-sentinels' <<<"$info" | grep -qx 2 || return 1
		grep -A1 -x 'num-slaves' <<<"$info" | grep -qx 1 || return 1
	done
}
check "the sentinels see each other and the replica" wait_for "sentinels" 60 sentinels_ready
URL="redis+sentinel://127.0.0.1:${SPORTS[0]},127.0.0.1:${SPORTS[1]},127.0.0.1:${SPORTS[2]}/mymaster/0"
echo "# master $MP, replica $RP, sentinels ${SPORTS[*]}"

section "the URL: the password goes to the data nodes, not to the sentinels"
run_rq queue --redis="redis+sentinel://:$PW@127.0.0.1:${SPORTS[0]}/mymaster/0" --queue=$Q stats
check_eq "stats through a sentinel, password in the URL" 0 "$RC"
run_rq queue --redis="redis+sentinel://:wrong@127.0.0.1:${SPORTS[0]}/mymaster/0" --queue=$Q stats
check_eq "a wrong password: refused" "1 yes" "$((RC != 0)) $(grep -q 'authentication failed' <<<"$ERR" && echo yes)"
run_rq queue --redis="redis+sentinel://127.0.0.1:${SPORTS[0]}/nosuchmaster/0" --queue=$Q stats
check_contains "an unknown master name: said" "knows no master 'nosuchmaster'" "$ERR"
export REPLAYQ_REDIS_URL=$URL REPLAYQ_REDIS_PASSWORD=$PW

# the 4 jobs s-H..s-(H+3) and s-(2N+H)..s-(2N+H+3) are held (every worker
# slot) at their first delivery
REPLAYQ_TEST_HOLD="$(job_holds s "$H" 4)$(job_holds s $((2 * N + H)) 4)"
export REPLAYQ_TEST_HOLD
for w in ws1 ws2; do start_worker "$w" --queue=$Q --repo-root="$ROOT" --jobs=2 --visibility-timeout=2; done
WORKERS=("${BG_PIDS[@]}")
unset REPLAYQ_TEST_HOLD
for w in ws1 ws2; do check "$w connected" worker_started "$w"; done
CONNS=$(connections_received "$MP")
run_rq submit --queue=$Q --no-validate "$T/p1.jsonl"
check_eq "submit through the sentinels" "0 $N" "$RC $(grep -c . <<<"$OUT")"

section "move 1: the master killed, the sentinels promote the replica"
mapfile -t CHILDREN < <(held_job_pids s "$H" 4)
check_eq "4 jobs running (held), every worker slot taken" 4 "${#CHILDREN[@]}"
CONNS=$(($(connections_received "$MP") - CONNS - 1))
echo "# connections the master accepted while $H jobs ran: $CONNS"
check "the workers keep their connections (the master accepted $CONNS for $H jobs)" test "$CONNS" -le 4
echo "# at the kill: $(ccli "$MP" xlen "replayq:{$Q}:jobs") jobs queued or running"
check "the replica has every write so far" wait_for "replica in sync" 30 repl_synced "$MP"
KILLED_AT=$(now_ms)
kill -9 "$(cat "$MDIR/redis.pid")"
promoted() { [ "$(sentinel_master_port "$1")" = "$2" ] && is_master "$2"; }
check "the sentinels promote $RP" wait_for "failover to $RP" 60 promoted "${SPORTS[0]}" "$RP"
PROMOTED_AT=$(now_ms)
BEFORE=$(results_at "$RP" "$Q")
run_rq submit --queue=$Q --no-validate "$T/p2.jsonl"
check_eq "submit after the failover" "0 $N" "$RC $(grep -c . <<<"$OUT")"
kill -USR1 "${CHILDREN[@]}"
check "a new result on $RP" wait_for "a new result on $RP" 60 results_are "$RP" "$Q" -gt "$BEFORE"
RECOVER_MS=$(($(now_ms) - KILLED_AT))
check "every job of parts 1 and 2 has a result" wait_for "results" 120 results_are "$RP" "$Q" -ge $((2 * N))
echo "# failover: promoted $((PROMOTED_AT - KILLED_AT)) ms after the kill, first result on it after $RECOVER_MS ms"

section "move 2: the old master back as a replica, made master again"
start_redis_at "$MDIR" "$MP" --requirepass "$PW" --masterauth "$PW" --repl-diskless-sync-delay 0 \
	--replicaof 127.0.0.1 "$RP" || {
	not_ok "the old master restarts on its port"
	finish
}
check "the old master is back, a replica in sync" wait_for "$MP in sync" 30 repl_synced "$RP"
run_rq submit --queue=$Q --no-validate "$T/p3.jsonl"
check_eq "submit part 3" "0 $N" "$RC $(grep -c . <<<"$OUT")"
mapfile -t CHILDREN < <(held_job_pids s $((2 * N + H)) 4)
check_eq "4 jobs running (held) again" 4 "${#CHILDREN[@]}"
# A planned switchover: SENTINEL FAILOVER promotes the replica without
# pausing the master, so what the master took after the replica's last
# acknowledgement is lost by Redis itself (a replica 26 KB behind lost
# part 3's jobs here once). As an operator would, wait until the replica
# has every write; only heartbeats go in meanwhile (every slot is held).
check "$MP has every write before the switchover" wait_for "$MP in sync" 30 repl_synced "$RP"
switch() { redis-cli -p "${SPORTS[0]}" sentinel failover mymaster | grep -qx OK; }
SWITCH_AT=$(now_ms)
check "SENTINEL FAILOVER is accepted" wait_for "a failover" 60 switch
check "the sentinels make $MP the master" wait_for "failover to $MP" 60 promoted "${SPORTS[0]}" "$MP"
# The sentinels would turn the old master into a replica some seconds
# later, and close its clients as they do. Stopped for a moment, they let
# the workers' master turn replica under them instead (REPLICAOF, as an
# operator would): the workers' next writes meet READONLY and must ask the
# sentinels again (who answer once let go).
mapfile -t SENTINEL_PIDS < <(for d in "${SDIRS[@]}"; do cat "$d/redis.pid"; done)
kill -STOP "${SENTINEL_PIDS[@]}"
ccli "$RP" replicaof 127.0.0.1 "$MP" >/dev/null
replica_of() { ccli "$1" role | sed -n 1,4p | tr '\n' ' ' | grep -q "^slave 127.0.0.1 $2 connected"; }
check "$RP is a replica of $MP" wait_for "$RP replica of $MP" 30 replica_of "$RP" "$MP"
kill -USR1 "${CHILDREN[@]}"
readonly_seen() { [ "$(errorstat READONLY "$RP")" -gt 0 ]; }
check "the workers' writes meet READONLY on $RP" wait_for "READONLY on $RP" 30 readonly_seen
kill -CONT "${SENTINEL_PIDS[@]}"
check "every job has a result" wait_for "results" 120 results_are "$MP" "$Q" -ge "$TOTAL"
echo "# switchover: every job done $(($(now_ms) - SWITCH_AT)) ms after it was asked for"

section "every job: exactly one result, equal to replayq run's"
for i in $(seq 1 $TOTAL); do ccli "$MP" get "replayq:{$Q}:result:s-$i"; done | grep -v '^$' |
	norm_results | sort >"$T/got.norm"
ccli "$MP" --raw xrange "replayq:{$Q}:results" - + | grep -x 's-[0-9]*' >"$T/ids"
check_results_once "$TOTAL" "$T/ref.norm" "$T/got.norm" "$T/ids"
check_eq "the job stream is empty" 0 "$(ccli "$MP" xlen "replayq:{$Q}:jobs")"
check_eq "nothing pending" 0 "$(ccli "$MP" xpending "replayq:{$Q}:jobs" workers | head -1)"
check_eq "the ref-update jobs moved their refs" $(((TOTAL - 6) / 8 + 1)) "$(updates_moved "$ROOT/rs" s "$TOTAL" "$T/ref.norm")"
check "fsck" fsck_ok "$ROOT/rs"
echo "figures: jobs=$TOTAL moves=2 (a failover after a kill, a switchover) lost=$LOST duplicated=$DUP wrong=$WRONG"
echo "figures: time to recover: ${RECOVER_MS} ms from the kill to the first result on the promoted replica"
echo "figures: answered by the demoted master: READONLY=$(errorstat READONLY "$RP") UNBLOCKED=$(errorstat UNBLOCKED "$RP")"

check_workers_stop "${WORKERS[@]}"
check "no sanitizer report in the logs" sanitizer_clean "$T"/w*.log "$T/run.err"
finish
