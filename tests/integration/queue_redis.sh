#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Redis queue end to end, against a private redis-server: submit, the
# keys a job and its result live in, a real worker reading and completing
# jobs, `replayq result` and `replayq queue`, duplicate submissions,
# reclaiming a job from a consumer that disappeared, dead letters, invalid
# jobs, a server restart under a running worker, and authentication
# (requirepass, REPLAYQ_REDIS_PASSWORD, an ACL user, wrong passwords).
. "$(dirname "$0")/../lib.sh"
require jq redis-server
unset REPLAYQ_QUEUE REPLAYQ_REDIS_PASSWORD REPLAYQ_REPO_ROOT REPLAYQ_TEST_CRASH
# run_rq from lib.sh, keeping every stderr for the sanitizer check at the end
run_rq() {
	OUT=$(GIT_COMMITTER_DATE="${RQ_DATE:-$GIT_COMMITTER_DATE}" "$REPLAYQ" "$@" 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
	cat "$T/stderr" >>"$T/all-stderr"
}

# the repository: make_repo in tests/lib.sh
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" proj
git clone -q --bare --no-local "$ROOT/proj" "$ROOT/grp/proj.git"
# a repository outside the root, and a symlink inside the root pointing at it
make_repo "$T/outside" outside
ln -s "$T/outside" "$ROOT/escape"

# What the job below must give: replayq replay with the same committer.
export RQ_DATE="@1800000000 +0000"
run_rq -C "$ROOT/proj" replay --ref-action=print --onto main base..topic
EXPECT=$OUT
check_eq "reference replay" 0 "$RC"
EXP_NEW=$(echo "$EXPECT" | cut -d' ' -f3)
TOPIC=$(git -C "$ROOT/proj" rev-parse topic)

has_result() { [ "$(rcli EXISTS "$(key "$1" "result:$2")")" = 1 ]; }
result_of() { rcli GET "$(key "$1" "result:$2")"; }
worker_alive() { kill -0 "$1" 2>/dev/null; }

start_redis
export REPLAYQ_REDIS_URL=$REDIS_URL

# --- submit: ids printed, the stream, the group, the job key -----------------
section "submit: ids printed, the stream, the group, the job key"
Q=q1
run_rq submit --queue=$Q < <(job j1)
check_eq "submit: exit 0" 0 "$RC"
check_eq "submit: prints the id" "j1" "$OUT"
check_eq "jobs stream" "stream" "$(rcli TYPE "$(key $Q jobs)")"
check_contains "group workers" "workers" "$(rcli XINFO GROUPS "$(key $Q jobs)")"
check_eq "one entry" 1 "$(rcli XLEN "$(key $Q jobs)")"
SID=$(rcli GET "$(key $Q job:j1)")
check_eq "job key holds the stream entry" "$(rcli XRANGE "$(key $Q jobs)" - + | head -1)" "$SID"
check_eq "stream entry: id field" "j1" "$(rcli --raw XRANGE "$(key $Q jobs)" - + | sed -n 3p)"
check_eq "stream entry: the job, submitted_at added" "j1 proj true" \
	"$(rcli --raw XRANGE "$(key $Q jobs)" - + | sed -n 5p | jq -r '"\(.id) \(.repo) \(.submitted_at > 0)"')"
check_eq "stats: submitted 1" 1 "$(stat_of $Q submitted)"

# a job with reply_to, two jobs as JSON lines, a file argument
run_rq submit --queue=$Q < <(job j2 '"reply_to":"box"')
check_eq "submit with reply_to" "j2" "$OUT"
printf '%s\n\n%s\n' "$(job j3)" "$(job j4 '"ref_action":"print"')" >"$T/lines.jsonl"
run_rq submit --queue=$Q "$T/lines.jsonl"
check_eq "JSON lines: both ids" "j3
j4" "$OUT"
check_eq "four entries" 4 "$(rcli XLEN "$(key $Q jobs)")"
# refused before Redis: a job that breaks a rule is not queued
run_rq submit --queue=$Q < <(echo '{"v":1,"id":"nope","repo":"/etc","mode":"onto","target":"main","revisions":["main"]}')
check_eq "invalid job refused: exit 2" 2 "$RC"
check_contains "invalid job refused: code" "bad_repo" "$ERR"
check_eq "invalid job not queued" 4 "$(rcli XLEN "$(key $Q jobs)")"
run_rq submit --queue=$Q < <(echo 'not json')
check_eq "not JSON: exit 2" 2 "$RC"
run_rq submit --queue=$Q < <(echo '{"repo":"proj"}')
check_eq "no id: exit 2" 2 "$RC"
check_contains "no id: says so" "'id'" "$ERR"

# --- a worker reads and completes them ---------------------------------------
section "a worker reads and completes them"
start_worker w1 --repo-root="$ROOT" --queue=$Q --jobs=1
W1=$WORKER_PID
check "j1..j4 done" wait_for "results of j1..j4" 30 \
	bash -c "for j in j1 j2 j3 j4; do [ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{$Q}:result:'\$j)\" = 1 ] || exit 1; done"
R1=$(result_of $Q j1)
check_eq "result: id, status, attempt, worker" "j1 ok 1 w1 proj false" \
	"$(echo "$R1" | jq -r '"\(.id) \(.status) \(.attempt) \(.worker) \(.repo) \(.applied)"')"
check_eq "result: the update replayq replay gives" "$EXPECT" \
	"$(echo "$R1" | jq -r '.updates[] | "update \(.ref) \(.new) \(.old)"')"
check_eq "print: the ref did not move" "$TOPIC" "$(git -C "$ROOT/proj" rev-parse topic)"
TTL=$(rcli TTL "$(key $Q result:j1)")
check "result has a TTL ($TTL)" test "$TTL" -gt 0
check "result TTL at most 7 days" test "$TTL" -le 604800
check_eq "results stream: one entry per job" "1 1 1 1" \
	"$(for j in j1 j2 j3 j4; do printf '%s ' "$(results_count $Q $j)"; done | sed 's/ $//')"
check_eq "results stream entry has the status" "ok" \
	"$(rcli --raw XRANGE "$(key $Q results)" - + COUNT 1 | sed -n 5p)"
check_eq "reply_to list: j2's result" "j2 ok" \
	"$(rcli LRANGE "$(key $Q reply:box)" 0 -1 | jq -r '"\(.id) \(.status)"')"
check "reply list has a TTL" test "$(rcli TTL "$(key $Q reply:box)")" -gt 0
check_eq "stats: submitted 4, ok 4" "4 4" "$(stat_of $Q submitted) $(stat_of $Q ok)"
check_eq "acknowledged: nothing pending" 0 "$(pending_count $Q)"
check_eq "deleted from the stream" 0 "$(rcli XLEN "$(key $Q jobs)")"
check_eq "job key removed" 0 "$(rcli EXISTS "$(key $Q job:j1)")"
check_eq "no dead letters" 0 "$(rcli XLEN "$(key $Q dead)")"

# replayq result (queue from the environment, then from the flag)
REPLAYQ_QUEUE=$Q run_rq result j1
check_eq "result (REPLAYQ_QUEUE): exit 0" 0 "$RC"
check_eq "result (REPLAYQ_QUEUE): prints the stored JSON" "$R1" "$OUT"
REPLAYQ_QUEUE=$Q run_rq result j1 missing-job j3
check_eq "result (REPLAYQ_QUEUE): a missing id among others: exit 1" 1 "$RC"
check_eq "result (REPLAYQ_QUEUE): the others printed" "j1 j3" "$(echo "$OUT" | jq -r .id | tr '\n' ' ' | sed 's/ $//')"
run_rq result --queue=$Q j1
check_eq "result: exit 0" 0 "$RC"
check_eq "result: prints the stored JSON" "$R1" "$OUT"
run_rq result --queue $Q j1 j3
check_eq "result: two ids" "j1 j3" "$(echo "$OUT" | jq -r .id | tr '\n' ' ' | sed 's/ $//')"
run_rq result --queue=$Q missing-job
check_eq "result of an unknown job: exit 1" 1 "$RC"
check_contains "result of an unknown job: message" "no result for job missing-job" "$ERR"

# replayq queue stats|pending|dead
wait_for "a heartbeat" 10 bash -c "[ \"\$(redis-cli -p $REDIS_PORT HEXISTS 'replayq:{$Q}:workers' w1)\" = 1 ]"
run_rq queue --queue=$Q stats
check_eq "queue stats: exit 0" 0 "$RC"
check_eq "queue stats: counters" "4 4" "$(echo "$OUT" | jq -r '"\(.counters.submitted) \(.counters.ok)"')"
check_eq "queue stats: queued, pending, dead" "0 0 0" "$(echo "$OUT" | jq -r '"\(.queued) \(.pending) \(.dead)"')"
check_eq "queue stats: w1 alive, its pid" "true $W1" "$(echo "$OUT" | jq -r '"\(.workers.w1.alive) \(.workers.w1.pid)"')"
check "queue stats: heartbeat time" test "$(echo "$OUT" | jq -r '.workers.w1.time')" -gt 1700000000
run_rq queue --queue=$Q pending
check_eq "queue pending: empty" "[]" "$(echo "$OUT" | jq -c .)"
run_rq queue --queue=$Q dead
check_eq "queue dead: empty" "[]" "$(echo "$OUT" | jq -c .)"
run_rq queue --queue=$Q bogus
check_eq "queue: unknown view is a usage error" 129 "$RC"

# --- duplicates --------------------------------------------------------------
section "duplicates"
run_rq submit --queue=$Q < <(job j1)
check_eq "duplicate: exit 2" 2 "$RC"
check_contains "duplicate: says why" "its result exists" "$ERR"
check_contains "duplicate: mentions --force" "--force" "$ERR"
check_eq "duplicate: nothing queued" 0 "$(rcli XLEN "$(key $Q jobs)")"
check_eq "duplicate: not counted" 4 "$(stat_of $Q submitted)"
run_rq submit --queue=$Q --wait=20 < <(job j1)
check_eq "duplicate with --wait: exit 0" 0 "$RC"
check_eq "duplicate with --wait: the existing result" "$R1" "$OUT"
check_eq "duplicate with --wait: still one result" 1 "$(results_count $Q j1)"
# --force runs it again
run_rq submit --queue=$Q --force < <(job j3)
check_eq "--force: queued again" "j3" "$OUT"
check_eq "--force: exit 0" 0 "$RC"
check "--force: a second result" wait_for "j3 again" 20 bash -c "[ \"\$(redis-cli -p $REDIS_PORT --raw XRANGE 'replayq:{$Q}:results' - + | grep -cx j3)\" = 2 ]"
check "--force: result stored again" wait_for "j3 result" 10 has_result $Q j3
# submit --wait on a new job
run_rq submit --queue=$Q --wait=30 < <(job j5)
check_eq "--wait: exit 0" 0 "$RC"
check_eq "--wait: prints the result" "j5 ok $EXP_NEW" "$(echo "$OUT" | jq -r '"\(.id) \(.status) \(.updates[0].new)"')"
check_eq "--wait: own reply list consumed" 0 "$(rcli KEYS "$(key $Q 'reply:submit-*')" | grep -c .)"
# --wait: the exit status follows the worst outcome
run_rq submit --queue=$Q --wait=30 < <(job c1 | sed 's/base..topic/base..clash/')
check_eq "--wait, conflict: exit 1" 1 "$RC"
check_eq "--wait, conflict: the result" "c1 conflict c.txt" "$(echo "$OUT" | jq -r '"\(.id) \(.status) \(.conflict.paths[0].path)"')"
run_rq submit --queue=$Q --wait=30 < <(job c2 | sed 's/base..topic/base..nosuchbranch/')
check_eq "--wait, error: exit 2" 2 "$RC"
check_eq "--wait, error: the result" "c2 error bad_revision" "$(echo "$OUT" | jq -r '"\(.id) \(.status) \(.error.code)"')"
# a job still queued (no worker on this queue) is refused too
run_rq submit --queue=idle < <(job k1)
run_rq submit --queue=idle < <(job k1)
check_eq "duplicate of a queued job: exit 2" 2 "$RC"
check_contains "duplicate of a queued job: says so" "already queued" "$ERR"
check_eq "duplicate of a queued job: one entry" 1 "$(rcli XLEN "$(key idle jobs)")"

# jobs that fail in the worker: their error results, the worker goes on
OUTSIDE_TOPIC=$(git -C "$T/outside" rev-parse topic)
run_rq submit --queue=$Q < <(job e1 | sed 's/"repo":"proj"/"repo":"escape"/')
run_rq submit --queue=$Q < <(job e2 | sed 's/"repo":"proj"/"repo":"no\/such.git"/')
run_rq submit --queue=$Q < <(job e3 | sed 's/base..topic/base..nosuchbranch/')
run_rq submit --queue=$Q < <(job e4 '"ref_action":"update"' | sed 's/"proj"/"grp\/proj.git"/')
check "failing jobs done" wait_for "e1..e4" 30 bash -c "for j in e1 e2 e3 e4; do [ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{$Q}:result:'\$j)\" = 1 ] || exit 1; done"
check_eq "symlink escaping the root: bad_repo" "error bad_repo" "$(result_of $Q e1 | jq -r '"\(.status) \(.error.code)"')"
check_eq "missing repository: bad_repo" "error bad_repo" "$(result_of $Q e2 | jq -r '"\(.status) \(.error.code)"')"
check_eq "unknown revision: bad_revision" "error bad_revision" "$(result_of $Q e3 | jq -r '"\(.status) \(.error.code)"')"
check_eq "bare repository, update: applied" "ok true $EXP_NEW" "$(result_of $Q e4 | jq -r '"\(.status) \(.applied) \(.updates[0].new)"')"
check_eq "bare repository, update: ref moved" "$EXP_NEW" "$(git -C "$ROOT/grp/proj.git" rev-parse topic)"
check_eq "the outside repository is untouched" "$OUTSIDE_TOPIC" "$(git -C "$T/outside" rev-parse topic)"
check "no litter outside the root" no_litter "$T/outside"
check "worker still running" worker_alive "$W1"

# --- invalid jobs added raw: error result, no retry, no dead letter ----------
section "invalid jobs added raw: error result, no retry, no dead letter"
JOBS=$(key $Q jobs)
rcli XADD "$JOBS" '*' id bad1 job 'not json' >/dev/null
rcli XADD "$JOBS" '*' id bad2 job '{"v":1,"id":"bad2","mode":"onto","target":"main","revisions":["main"]}' >/dev/null
rcli XADD "$JOBS" '*' id bad3 other field >/dev/null
# an entry whose id field differs from its job's: answered under the
# entry's own id ("!<entry id>"), never under either job id
S4=$(rcli XADD "$JOBS" '*' id bad4 job "$(job not-bad4)")
check "invalid jobs answered" wait_for "bad1..bad3 and !$S4" 30 bash -c "for j in bad1 bad2 bad3 '!$S4'; do [ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{$Q}:result:'\$j)\" = 1 ] || exit 1; done"
for j in bad1 bad2 bad3 "!$S4"; do
	check_eq "$j: invalid_job, attempt 1" "$j error invalid_job 1" \
		"$(result_of $Q "$j" | jq -r '"\(.id) \(.status) \(.error.code) \(.attempt)"')"
done
check_contains "not JSON: the message says so" "JSON" "$(result_of $Q bad1 | jq -r .error.message)"
check_contains "missing field: the message names it" "'repo'" "$(result_of $Q bad2 | jq -r .error.message)"
check_contains "no job field: the message says so" "'job'" "$(result_of $Q bad3 | jq -r .error.message)"
check_contains "id mismatch: the message names the entry's id" "bad4" "$(result_of $Q "!$S4" | jq -r .error.message)"
check_contains "id mismatch: ... and the job's" "not-bad4" "$(result_of $Q "!$S4" | jq -r .error.message)"
check_eq "id mismatch: no result under the entry's id field" 0 "$(rcli EXISTS "$(key $Q result:bad4)")"
# acknowledged and deleted (checked next): nothing is left to come back
check_eq "invalid jobs: one result each" "1 1 1 1" \
	"$(for j in bad1 bad2 bad3 "!$S4"; do printf '%s ' "$(results_count $Q "$j")"; done | sed 's/ $//')"
check_eq "invalid jobs: acknowledged" 0 "$(pending_count $Q)"
check_eq "invalid jobs: deleted" 0 "$(rcli XLEN "$JOBS")"
check_eq "invalid jobs: no dead letter" 0 "$(rcli XLEN "$(key $Q dead)")"
check_eq "invalid jobs: not retried" "" "$(stat_of $Q retried)"
check "worker still running after invalid jobs" worker_alive "$W1"
check "worker logs are JSON lines" jq -e . "$T/w1.log" >/dev/null

# --- reclaim from a consumer that disappeared --------------------------------
section "reclaim from a consumer that disappeared"
QR=qr
JOBS=$(key $QR jobs)
rcli XGROUP CREATE "$JOBS" workers 0 MKSTREAM >/dev/null
rcli XADD "$JOBS" '*' id x1 job "$(job x1)" >/dev/null
check_eq "ghost read the job" "x1" "$(rcli --raw XREADGROUP GROUP workers ghost COUNT 1 STREAMS "$JOBS" '>' | sed -n 4p)"
check_eq "ghost holds it" "ghost" "$(rcli XPENDING "$JOBS" workers - + 10 | sed -n 2p)"
start_worker w2 --repo-root="$ROOT" --queue=$QR --jobs=1 --visibility-timeout=1
W2=$WORKER_PID
check "reclaimed job done" wait_for "x1 result" 30 has_result $QR x1
check_eq "reclaimed: ok, attempt 2, by w2" "ok 2 w2 $EXP_NEW" \
	"$(result_of $QR x1 | jq -r '"\(.status) \(.attempt) \(.worker) \(.updates[0].new)"')"
check_eq "ghost's pending entry gone" "" "$(rcli XPENDING "$JOBS" workers - + 10 ghost)"
check_eq "nothing pending" 0 "$(pending_count $QR)"
check_eq "reclaimed: one result" 1 "$(results_count $QR x1)"
check_contains "worker logged the reclaim" "reclaimed" "$(cat "$T/w2.log")"

# a job the ghost still holds whose result already exists: acknowledged, no second result
rcli XADD "$JOBS" '*' id x1 job "$(job x1)" >/dev/null
rcli XREADGROUP GROUP workers ghost COUNT 1 STREAMS "$JOBS" '>' >/dev/null
check "redelivered finished job acknowledged" wait_for "x1 acked" 30 bash -c "[ \"\$(redis-cli -p $REDIS_PORT XLEN 'replayq:{$QR}:jobs')\" = 0 ]"
check_eq "redelivered finished job: still one result" 1 "$(results_count $QR x1)"
check_eq "redelivered finished job: nothing pending" 0 "$(pending_count $QR)"
check_workers_stop --within=20 "$W2"

# --- a job that runs longer than the visibility timeout is not reclaimed -----
section "a job that runs longer than the visibility timeout is not reclaimed"
# (the worker keeps its claims fresh): one run, attempt 1, no reclaim
LONG=$ROOT/long
git init -q -b main "$LONG"
commit_file "$LONG" base.txt "base" "base"
git -C "$LONG" tag lbase
for i in $(seq 1 450); do
	[ "$i" = 1 ] && printf 'reset refs/heads/long\nfrom refs/heads/main\n\n'
	body="line $i"
	printf 'commit refs/heads/long\ncommitter C <c@example.com> %d +0000\ndata 2\nc\n' $((1700000000 + i))
	printf 'M 100644 inline f%d.txt\ndata %d\n%s\n\n' $((i % 40)) $((${#body} + 1)) "$body"
done | git -C "$LONG" fast-import --quiet
commit_file "$LONG" other.txt "other" "main moves"
QS=qs
run_rq submit --queue=$QS < <(job long1 | sed -e 's/"proj"/"long"/' -e 's/base..topic/lbase..long/')
check_eq "long job queued" "0 long1" "$RC $OUT"
# the job is held on purpose until three seconds of the server's clock
# have passed (three visibility timeouts), with a second worker that
# would reclaim it if its claim went stale
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=job:long1 start_worker w8 --repo-root="$ROOT" --queue=$QS --jobs=2 --visibility-timeout=1 --grace=0
W8=$WORKER_PID
LPID=$(hold_pid job:long1)
t0=$(rcli TIME | head -1)
start_worker w9 --repo-root="$ROOT" --queue=$QS --jobs=1 --visibility-timeout=1 --grace=0
W9=$WORKER_PID
wait_for "three visibility timeouts" 60 bash -c "[ \$(redis-cli -p $REDIS_PORT TIME | head -1) -ge $((t0 + 3)) ]"
check_eq "long job: still its first delivery after 3 visibility timeouts" 1 \
	"$(rcli XPENDING "replayq:{$QS}:jobs" workers - + 10 | sed -n 4p)"
kill -USR1 "$LPID"
check "long job done" wait_for "long1 result" 120 has_result $QS long1
check_eq "long job: ok, 450 picks, attempt 1" "ok 450 1" "$(result_of $QS long1 | jq -r '"\(.status) \(.stats.picked) \(.attempt)"')"
check_eq "long job: one result" 1 "$(results_count $QS long1)"
check_workers_stop "$W9"
check "long job: the other worker did not take it" bash -c '! grep -q "reclaimed a stalled job" "$1"' _ "$T/w9.log"
check_workers_stop "$W8"
check "long job: not reclaimed while it ran" bash -c '! grep -q "reclaimed a stalled job" "$1"' _ "$T/w8.log"
check "long job: run once" bash -c '[ "$(grep -c "\"msg\":\"job done\"" "$1")" = 1 ] && ! grep -q "left unacknowledged" "$1"' _ "$T/w8.log"

# --- dead letters ------------------------------------------------------------
section "dead letters"
QD=qd
JOBS=$(key $QD jobs)
rcli XGROUP CREATE "$JOBS" workers 0 MKSTREAM >/dev/null
# x2: delivered 3 times already (read + 2 claims) by a ghost, max 2
SID2=$(rcli XADD "$JOBS" '*' id x2 job "$(job x2)")
rcli XREADGROUP GROUP workers ghost COUNT 1 STREAMS "$JOBS" '>' >/dev/null
rcli XCLAIM "$JOBS" workers ghost 0 "$SID2" >/dev/null
rcli XCLAIM "$JOBS" workers ghost 0 "$SID2" >/dev/null
check_eq "x2 delivered 3 times" 3 "$(rcli XPENDING "$JOBS" workers - + 1 | sed -n 4p)"
# x3: its child crashes each time (test hook; under ASan, let the SIGSEGV kill it)
run_rq submit --queue=$QD < <(job x3)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" REPLAYQ_TEST_CRASH=x3 start_worker w3 --repo-root="$ROOT" --queue=$QD --jobs=1 \
	--visibility-timeout=1 --max-deliveries=2
W3=$WORKER_PID
check "dead letters written" wait_for "two dead letters" 40 bash -c "[ \"\$(redis-cli -p $REDIS_PORT XLEN 'replayq:{$QD}:dead')\" = 2 ]"
check "x2, x3 results" wait_for "x2, x3 results" 10 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{$QD}:result:x2' 'replayq:{$QD}:result:x3')\" = 2 ]"
check_eq "over-delivered job: error crashed" "x2 error crashed" \
	"$(result_of $QD x2 | jq -r '"\(.id) \(.status) \(.error.code)"')"
check_eq "crashing job: error crashed, attempt 2" "x3 error crashed 2" \
	"$(result_of $QD x3 | jq -r '"\(.id) \(.status) \(.error.code) \(.attempt)"')"
check_contains "crashing job: the signal" "signal" "$(result_of $QD x3 | jq -r .error.message)"
check_eq "dead letters: ids" "x2 x3" "$(rcli --raw XRANGE "$(key $QD dead)" - + | grep -x 'x[23]' | sort | tr '\n' ' ' | sed 's/ $//')"
check_contains "dead letter keeps the job" '"id":"x3"' "$(rcli --raw XRANGE "$(key $QD dead)" - +)"
check_contains "dead letter has a reason" "too many deliveries" "$(rcli --raw XRANGE "$(key $QD dead)" - +)"
check_eq "stats: dead 2, error 2" "2 2" "$(stat_of $QD dead) $(stat_of $QD error)"
check "stats: the crash was retried" test "$(stat_of $QD retried)" -ge 1
check_eq "attempts cleaned" 0 "$(rcli HLEN "$(key $QD attempts)")"
check_eq "dead jobs acknowledged" 0 "$(pending_count $QD)"
check_eq "crashing job: one result" 1 "$(results_count $QD x3)"
run_rq queue --queue=$QD dead
check_eq "queue dead: both" "x2 x3" "$(echo "$OUT" | jq -r '.[].id' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "queue dead: reasons" "2" "$(echo "$OUT" | jq '[.[] | select(.reason | test("too many deliveries"))] | length')"
run_rq queue --queue=$QD stats
check_eq "queue stats: dead 2" "2 2" "$(echo "$OUT" | jq -r '"\(.dead) \(.counters.dead)"')"
check "w3 still running" worker_alive "$W3"
check_workers_stop "$W3"

# --- the server restarts under a running worker ------------------------------
section "the server restarts under a running worker"
for i in 1 2 3 4 5; do job "rc-$i"; done >"$T/before.jsonl"
for i in 6 7 8 9 10; do job "rc-$i"; done >"$T/after.jsonl"
run_rq submit --queue=$Q "$T/before.jsonl"
check_eq "restart: first batch queued" 0 "$RC"
PORT0=$REDIS_PORT
stop_redis
check "w1 survives the server going away" worker_alive "$W1"
# the event: w1 has met the missing server (a read, a heartbeat or a result
# failed; a heartbeat comes every 2 s, so one of them does)
check "w1 notices the server is gone" wait_for "w1 meets the outage" 60 grep -qE '"(read failed|heartbeat failed|cannot store result yet; will retry)"' "$T/w1.log"
check "w1 still alive without a server" worker_alive "$W1"
start_redis # same port, same directory: the AOF brings the stream back
check_eq "restart: same port" "$PORT0" "$REDIS_PORT"
run_rq submit --queue=$Q "$T/after.jsonl"
check_eq "restart: second batch queued" 0 "$RC"
check "restart: every job has its result" wait_for "rc-1..rc-10" 60 bash -c \
	"for i in \$(seq 1 10); do [ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{$Q}:result:rc-'\$i)\" = 1 ] || exit 1; done"
counts=""
for i in $(seq 1 10); do counts="$counts$(results_count $Q "rc-$i")"; done
check_eq "restart: exactly one result per job" "1111111111" "$counts"
check_eq "restart: all ok" "10" "$(for i in $(seq 1 10); do result_of $Q "rc-$i" | jq -r .status; done | grep -cx ok)"
check_eq "restart: nothing pending" 0 "$(pending_count $Q)"
check_eq "restart: stream empty" 0 "$(rcli XLEN "$(key $Q jobs)")"
check "w1 still running after the restart" worker_alive "$W1"
run_rq queue --queue=$Q stats
check_eq "restart: w1 alive again" "true" "$(echo "$OUT" | jq -r .workers.w1.alive)"
check_workers_stop --within=20 "$W1"
run_rq queue --queue=$Q stats
check_eq "stopped worker removed from the heartbeats" "null" "$(echo "$OUT" | jq -r .workers.w1)"

# --- authentication ----------------------------------------------------------
section "a worker that cannot reach Redis at start"
NOPORT=$(free_port)
start_worker w-nored --redis="redis://127.0.0.1:$NOPORT/0" --repo-root="$ROOT" --queue=$Q
WN=$WORKER_PID
check "no server: each failed attempt is logged" wait_for "two attempts" 60 bash -c "[ \$(grep -c 'cannot connect to Redis yet' '$T/w-nored.log') -ge 2 ]"
check_workers_stop --within=30 "$WN"

section "a redis+cluster:// URL on a server that is no cluster"
start_worker w-nocl --redis="redis+cluster://127.0.0.1:$REDIS_PORT/" --repo-root="$ROOT" --queue=$Q
WC=$WORKER_PID
check "no cluster: the worker stops at once" wait_for "w-nocl exit" 60 bash -c "! kill -0 $WC 2>/dev/null"
kill -TERM "$WC" 2>/dev/null
wait "$WC"
check_eq "no cluster: worker exit 128" 128 "$?"
check_contains "no cluster: the worker says why" "cluster support disabled" "$(cat "$T/w-nocl.log")"
check_eq "no cluster: no retry" 0 "$(grep -c 'cannot connect to Redis yet' "$T/w-nocl.log")"
run_rq queue --redis="redis+cluster://127.0.0.1:$REDIS_PORT/" --queue=$Q stats
check_eq "no cluster: queue stats exit 128" 128 "$RC"
check_contains "no cluster: and says why" "redis+cluster://" "$ERR"

section "authentication"
stop_redis
rm -rf "$T/redis"
unset REDIS_PORT
# shellcheck disable=SC2034 # used by rcli and start_redis (lib.sh)
REDIS_AUTH="-a pass --no-auth-warning"
start_redis --requirepass pass
P=$REDIS_PORT
check_eq "server needs a password" "NOAUTH" "$(redis-cli -p "$P" PING 2>&1 | cut -c1-6)"
export REPLAYQ_REDIS_URL="redis://127.0.0.1:$P/0"
QA=qa
run_rq submit --redis="redis://:pass@127.0.0.1:$P/0" --queue=$QA < <(job a1)
check_eq "auth: password in the URL" "0 a1" "$RC $OUT"
REPLAYQ_REDIS_PASSWORD=pass run_rq submit --queue=$QA < <(job a2)
check_eq "auth: REPLAYQ_REDIS_PASSWORD" "0 a2" "$RC $OUT"
REPLAYQ_REDIS_PASSWORD=pass start_worker w4 --repo-root="$ROOT" --queue=$QA --jobs=1
W4=$WORKER_PID
check "auth: the worker runs the jobs" wait_for "a1, a2" 30 bash -c "[ \"\$(redis-cli -p $P -a pass --no-auth-warning EXISTS 'replayq:{$QA}:result:a1' 'replayq:{$QA}:result:a2')\" = 2 ]"
REPLAYQ_REDIS_PASSWORD=pass run_rq result --queue=$QA a1
check_eq "auth: result" "0 a1 ok" "$RC $(echo "$OUT" | jq -r '"\(.id) \(.status)"')"
# the password from the environment replaces the URL's
REPLAYQ_REDIS_PASSWORD=pass run_rq result --redis="redis://:wrong@127.0.0.1:$P/0" --queue=$QA a1
check_eq "auth: REPLAYQ_REDIS_PASSWORD wins over the URL" 0 "$RC"

# an ACL user limited to replayq's keys
rcli ACL SETUSER bot on '>secret' '~replayq:*' '&*' '+@all' >/dev/null
BOT="redis://bot:secret@127.0.0.1:$P/0"
run_rq submit --redis="$BOT" --queue=$QA --wait=30 < <(job a3)
check_eq "ACL user: submit --wait" "0 a3 ok" "$RC $(echo "$OUT" | jq -r '"\(.id) \(.status)"')"
run_rq queue --redis="$BOT" --queue=$QA stats
check_eq "ACL user: stats" "0 3" "$RC $(echo "$OUT" | jq -r .counters.ok)"
check_workers_stop "$W4"
start_worker w5 --redis="$BOT" --repo-root="$ROOT" --queue=$QA --jobs=1
W5=$WORKER_PID
run_rq submit --redis="$BOT" --queue=$QA --wait=30 < <(job a4)
check_eq "ACL user: a worker" "0 a4 w5" "$RC $(echo "$OUT" | jq -r '"\(.id) \(.worker)"')"
check_workers_stop "$W5"

# wrong passwords: a clear error, the right exit status, never the password
run_rq submit --redis="redis://:Wr0ngPass@127.0.0.1:$P/0" --queue=$QA < <(job a5)
check_eq "wrong password: submit exit 2" 2 "$RC"
check_contains "wrong password: says so" "authentication failed" "$ERR"
check "wrong password: not printed" bash -c "! grep -q Wr0ngPass <<<\"\$1\"" _ "$OUT$ERR"
run_rq result --redis="redis://bot:Wr0ngPass@127.0.0.1:$P/0" --queue=$QA a1
check_eq "wrong ACL password: result exit 128" 128 "$RC"
check_contains "wrong ACL password: says so" "authentication failed" "$ERR"
check "wrong ACL password: not printed" bash -c "! grep -q Wr0ngPass <<<\"\$1\"" _ "$OUT$ERR"
REPLAYQ_REDIS_PASSWORD=Wr0ngPass run_rq queue --queue=$QA stats
check_eq "wrong REPLAYQ_REDIS_PASSWORD: queue exit 128" 128 "$RC"
check "wrong REPLAYQ_REDIS_PASSWORD: not printed" bash -c "! grep -q Wr0ngPass <<<\"\$1\"" _ "$OUT$ERR"
start_worker w6 --redis="redis://:Wr0ngPass@127.0.0.1:$P/0" --repo-root="$ROOT" --queue=$QA
W6=$WORKER_PID
check "wrong password: the worker stops" wait_for "w6 exit" 20 bash -c "! kill -0 $W6 2>/dev/null"
wait "$W6"
check_eq "wrong password: worker exit 128" 128 "$?"
check_contains "wrong password: worker says so" "authentication failed" "$(cat "$T/w6.log")"
check "wrong password: worker does not print it" bash -c "! grep -q Wr0ngPass \"\$1\"" _ "$T/w6.log"
# no password at all
run_rq submit --queue=$QA < <(job a6)
check_eq "no password: submit exit 2" 2 "$RC"
check_contains "no password: says so" "NOAUTH" "$ERR"
# a worker without a password either stops with the error or waits with a
# backoff; it must not spin (thousands of log lines a second)
start_worker w7 --repo-root="$ROOT" --queue=$QA
W7=$WORKER_PID
check "no password: the worker stops" wait_for "w7 exit" 30 bash -c "! kill -0 $W7 2>/dev/null"
wait "$W7"
check_eq "no password: worker exit 128" 128 "$?"
n=$(wc -l <"$T/w7.log")
check "no password: the worker does not spin ($n log lines)" test "$n" -lt 20
check_contains "no password: the worker says so" "NOAUTH" "$(head -c 2000 "$T/w7.log")"
# a URL that does not parse: the message must not show its password
run_rq submit --redis="redis://:Hunter2pw@127.0.0.1:notaport/0" --queue=$QA < <(job a7)
check_eq "bad URL: submit exit 2" 2 "$RC"
check_contains "bad URL: says so" "port" "$ERR"
check "bad URL: the password is not printed" bash -c "! grep -q Hunter2pw <<<\"\$1\"" _ "$OUT$ERR"
run_rq result --redis="redis://bot:Hunter2pw@127.0.0.1:$P/x" --queue=$QA a1
check_eq "bad URL: result exit 128" 128 "$RC"
check "bad URL: result does not print the password" bash -c "! grep -q Hunter2pw <<<\"\$1\"" _ "$OUT$ERR"
check "no worker log shows a password" bash -c "! grep -l -e secret -e Wr0ngPass -e 'pass@' \"\$@\"" _ "$T"/w*.log
check_eq "a5, a6 not queued" 0 "$(rcli EXISTS "$(key $QA job:a5)" "$(key $QA job:a6)")"

# an ASan/UBSan build reports to stderr: nothing may have been reported
touch "$T/all-stderr"
check "no sanitizer report" sanitizer_clean "$T"/w*.log "$T/all-stderr"

finish
