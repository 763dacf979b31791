#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq worker end to end: a real redis-server, real repositories, the
# real binary. A batch of jobs across several repositories through two
# workers (one SIGKILLed mid-batch) gives exactly one result per job, equal
# to what `replayq replay` gives for the same job; crashes, timeouts and
# memory limits give their error codes while the worker goes on; SIGTERM
# drains; path escapes are refused; `replayq run` gives the same results.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
N=${RQ_WORKER_JOBS:-120}
ROOT=$T/root
mkdir -p "$ROOT"
export REPLAYQ_QUEUE=wtest

# the repositories: make_repo in tests/lib.sh, with N update targets
make_repo "$ROOT/r0" zero "$N"
make_repo "$ROOT/r1" one "$N"
git clone -q --bare --no-local "$ROOT/r1" "$ROOT/r2.git"
check_ref_format "$ROOT/r2.git"

REPOS=(r0 r1 r2.git)

# job i: kinds cycle through every mode and outcome. job_spec sets JSON (the
# job) and ARGS (the same replay as `replayq replay` arguments).
job_spec() {
	local i=$1 kind=$(($1 % 10)) t=$((1800000000 + $1))
	REPO=${REPOS[$(($1 % 3))]}
	TIME=$t
	local c='"committer":{"name":"Bot","email":"bot@example.com","time":'$t',"tz":"+0100"}'
	local head='{"id":"job-'$i'","repo":"'$REPO'",'
	case $kind in
	0) JSON=$head'"mode":"onto","target":"main","revisions":["base..topic"],'$c'}'
	   ARGS=(--onto=main base..topic) ;;
	1) JSON=$head'"mode":"onto","target":"main","revisions":["^base","topic","s2"],'$c'}'
	   ARGS=(--onto=main ^base topic s2) ;;
	2) JSON=$head'"mode":"onto","target":"main","revisions":["base..s2"],"contained":true,'$c'}'
	   ARGS=(--onto=main --contained base..s2) ;;
	3) JSON=$head'"mode":"advance","target":"main","revisions":["base..topic"],'$c'}'
	   ARGS=(--advance=main base..topic) ;;
	4) JSON=$head'"mode":"revert","target":"main","revisions":["main~2..main"],'$c'}'
	   ARGS=(--revert=main main~2..main) ;;
	5) JSON=$head'"mode":"onto","target":"main","revisions":["base..clash"],'$c'}'
	   ARGS=(--onto=main base..clash) ;;
	6) JSON=$head'"mode":"onto","target":"main","revisions":["base..u-'$i'"],"ref_action":"update",'$c'}'
	   ARGS=(--onto=main base..u-$i) ;;
	7) JSON=$head'"mode":"onto","target":"main","revisions":["base..nosuch"],'$c'}'
	   ARGS=(--onto=main base..nosuch) ;;
	8) JSON=$head'"mode":"onto","target":"main","revisions":["--stdin"],'$c'}'
	   ARGS=() ;; # an option a job may not use (it would read standard input)
	9) JSON=$head'"mode":"onto","target":"main","revisions":["base..topic"],"empty":"keep","ref":"refs/heads/out-'$i'",'$c'}'
	   ARGS=(--onto=main --empty=keep --ref=refs/heads/out-$i base..topic) ;;
	esac
}

# the reference: replayq replay on the same job, reduced to what must agree
norm='{status, updates: [.updates[] | {ref, old, new}], conflict: (.conflict.commit // null), paths: ([.conflict.paths[]?.path]), code: (.error.code // null)}'
: >"$T/jobs.jsonl"
: >"$T/refs.jsonl"
for i in $(seq 1 "$N"); do
	job_spec "$i"
	echo "$JSON" >>"$T/jobs.jsonl"
	if [ ${#ARGS[@]} -eq 0 ]; then
		echo '{"status":"error","updates":[],"error":{"code":"bad_revision"}}'
	else
		# a job's revert has its committer as author
		GIT_COMMITTER_NAME=Bot GIT_COMMITTER_EMAIL=bot@example.com GIT_COMMITTER_DATE="@$TIME +0100" \
			GIT_AUTHOR_NAME=Bot GIT_AUTHOR_EMAIL=bot@example.com GIT_AUTHOR_DATE="@$TIME +0100" \
			"$REPLAYQ" -C "$ROOT/$REPO" replay --format=json --ref-action=print "${ARGS[@]}" 2>/dev/null
	fi >>"$T/refs.jsonl"
done
jq -c "$norm" "$T/refs.jsonl" >"$T/refs.norm"
i=0
while read -r line; do
	i=$((i + 1))
	echo "$line" >"$T/ref-$i.json"
done <"$T/refs.norm"
check_eq "references: conflicts seen" 12 "$(cat "$T"/ref-*.json | grep -c '"status":"conflict"')"
check_eq "references: clean replays seen" 84 "$(cat "$T"/ref-*.json | grep -c '"status":"ok"')"

stamp "the batch"
# --- the batch: two workers, one killed with SIGKILL in the middle ------------
start_redis
start_worker w1 --repo-root="$ROOT" --jobs=2 --visibility-timeout=2
W1=$WORKER_PID
start_worker w2 --repo-root="$ROOT" --jobs=2 --visibility-timeout=2
W2=$WORKER_PID
# --no-validate: the workers validate (job 8 of each ten is invalid)
run_rq submit --no-validate "$T/jobs.jsonl"
check_eq "submit: exit 0" 0 "$RC"
check_eq "submit: prints every id" "$N" "$(echo "$OUT" | grep -c '^job-')"
results() { rcli XLEN "replayq:{wtest}:results"; }
wait_for "a third of the results" 60 bash -c "[ \$(redis-cli -p $REDIS_PORT XLEN 'replayq:{wtest}:results') -ge $((N / 3)) ]"
stamp "killing w1"
kill -9 "$W1"
start_worker w3 --repo-root="$ROOT" --jobs=2 --visibility-timeout=2
W3=$WORKER_PID
wait_for "all results" 180 bash -c "[ \$(redis-cli -p $REDIS_PORT XLEN 'replayq:{wtest}:results') -ge $N ]"
# nothing pending and the job stream empty: nothing can come back later
check_eq "the job stream is empty" 0 "$(rcli XLEN 'replayq:{wtest}:jobs')"
check_eq "exactly one result per job" "$N" "$(results)"
check_eq "no job id reported twice" "$N" "$(rcli XRANGE 'replayq:{wtest}:results' - + | grep -c '^job-' | tr -d ' ')"
check_eq "nothing pending" 0 "$(rcli XPENDING 'replayq:{wtest}:jobs' workers | head -1)"
mism=0
for i in $(seq 1 "$N"); do rcli GET "replayq:{wtest}:result:job-$i"; done | jq -c "$norm" >"$T/got.norm"
i=0
while read -r got; do
	i=$((i + 1))
	if [ "$got" != "$(cat "$T/ref-$i.json")" ]; then
		mism=$((mism + 1))
		echo "job-$i: got $got expected $(cat "$T/ref-$i.json")" >&2
	fi
done <"$T/got.norm"
check_eq "every result equals replayq replay's" 0 "$mism"
moved=0
for i in $(seq 6 10 "$N"); do
	repo=${REPOS[$((i % 3))]}
	exp=$(jq -r '.updates[0].new' "$T/ref-$i.json")
	[ "$(git -C "$ROOT/$repo" rev-parse "u-$i")" = "$exp" ] && moved=$((moved + 1))
done
check_eq "ref_action update jobs moved their refs" $(((N - 6) / 10 + 1)) "$moved"
for r in "${REPOS[@]}"; do
	check "fsck $r" git -C "$ROOT/$r" fsck --strict --no-progress --no-dangling
	check "no temporary object directory in $r" no_litter "$ROOT/$r"
done
check_contains "the killed worker's jobs were reclaimed" "reclaimed a stalled job" "$(cat "$T"/w2.log "$T"/w3.log)"
check_workers_stop "$W2" "$W3"

stamp "a heavy job"
# --- a heavy job: 300 commits to replay ---------------------------------------
{
	base=$(git -C "$ROOT/r0" rev-parse base)
	for i in $(seq 1 300); do
		echo "commit refs/heads/heavy"
		echo "committer A <a@example.com> $((1700000000 + i)) +0000"
		echo "data 8"
		printf 'heavy%03d' "$i"
		[ "$i" -eq 1 ] && echo "from $base"
		echo "M 100644 inline heavy/f$i.txt"
		echo "data 6"
		printf 'line%02d\n' $((i % 100))
	done
} | git -C "$ROOT/r0" fast-import --quiet
heavy='"repo":"r0","mode":"onto","target":"main","revisions":["base..heavy"],"committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}'

stamp "a child that crashes"
# a child that crashes: error "crashed", worker goes on
REPLAYQ_TEST_CRASH=crash-1 start_worker w4 --repo-root="$ROOT" --jobs=1 --max-deliveries=1 --visibility-timeout=1
run_rq submit --wait=60 <<<'{"id":"crash-1",'"$heavy"'}'
check_eq "crash: exit 2" 2 "$RC"
check_eq "crash: code crashed" crashed "$(jq -r .error.code <<<"$OUT")"
check_eq "crash: dead-lettered after its last delivery" 1 "$(rcli XLEN 'replayq:{wtest}:dead')"
run_rq submit --wait=60 <<<'{"id":"after-crash",'"$heavy"'}'
check_eq "worker goes on after a crash" ok "$(jq -r .status <<<"$OUT")"
check "worker still alive" kill -0 "$WORKER_PID"
check "no litter after a crash" no_litter "$ROOT/r0"

stamp "a job past its deadline"
# a job past its deadline: held on purpose (it never finishes by itself), so
# the outcome does not depend on the speed of the machine
check_workers_stop "$WORKER_PID"
REPLAYQ_TEST_HOLD=job:slow-1 start_worker w4b --repo-root="$ROOT" --jobs=1 --max-deliveries=1
run_rq submit --wait=60 <<<'{"id":"slow-1","timeout_ms":300,'"$heavy"'}'
check_eq "timeout: code" timeout "$(jq -r .error.code <<<"$OUT")"
check_eq "timeout: the result names the deadline" 300 "$(jq -r .timeout_ms <<<"$OUT")"
check "timeout: the result says by how much it overran" jq -e '.overrun_ms >= 0' <<<"$OUT"
check_contains "timeout: the message says so" "past its deadline of 300 ms" "$(jq -r .error.message <<<"$OUT")"
check "no litter after a timeout" no_litter "$ROOT/r0"
check "worker alive after a timeout" kill -0 "$WORKER_PID"
check_workers_stop "$WORKER_PID"
# a timed-out job is retried like any other transient failure: only its
# first delivery is late (its clock made late on purpose), the second one
# finishes (a light job, a deadline of a minute)
light='"repo":"r0","mode":"onto","target":"main","revisions":["base..topic"],"ref_action":"print"'
REPLAYQ_TEST_LATE=slow-2@1:600000 start_worker w4c --repo-root="$ROOT" --jobs=1 --max-deliveries=2 --visibility-timeout=1
run_rq submit --wait=60 <<<'{"id":"slow-2","timeout_ms":60000,'"$light"'}'
check_eq "timeout: retried, the retry is ok at attempt 2" "ok 2" "$(jq -r '"\(.status) \(.attempt)"' <<<"$OUT")"
check_contains "timeout: the worker logged the retry" "it will be retried" "$(cat "$T/w4c.log")"
check_contains "timeout: the first attempt was a timeout" '\"code\":\"timeout\"' "$(cat "$T/w4c.log")"
check_workers_stop "$WORKER_PID"

stamp "a child the parent cannot watch"
# the child stops by itself at its deadline even while the parent is
# stopped (SIGSTOP): its own timer
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=job:slow-3 start_worker w4e --repo-root="$ROOT" --jobs=1 --max-deliveries=1
W4E=$WORKER_PID
run_rq submit <<<'{"id":"slow-3","timeout_ms":300,'"$heavy"'}'
CHILD=$(hold_pid job:slow-3)
kill -STOP "$W4E"
check "stopped parent: the child ends at its own deadline" wait_for "child gone" 60 dead_or_zombie "$CHILD"
kill -CONT "$W4E"
check "stopped parent: result stored" wait_for "slow-3 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{wtest}:result:slow-3')\" = 1 ]"
check_eq "stopped parent: code timeout" timeout "$(rcli GET 'replayq:{wtest}:result:slow-3' | jq -r .error.code)"
check_contains "stopped parent: the child's own timer" "by its own deadline timer" "$(rcli GET 'replayq:{wtest}:result:slow-3' | jq -r .error.message)"
check_workers_stop "$W4E"

stamp "a result after its deadline"
# a child whose result comes after its deadline (its clock made late on
# purpose): the job did not finish in time, whatever it says
REPLAYQ_TEST_LATE=late-1:600000 start_worker w4f --repo-root="$ROOT" --jobs=1 --max-deliveries=1
run_rq submit --wait=60 <<<'{"id":"late-1","timeout_ms":60000,'"$light"'}'
check_eq "late result: code timeout" timeout "$(jq -r .error.code <<<"$OUT")"
check "late result: overrun_ms says by how much" jq -e '.overrun_ms >= 540000' <<<"$OUT"
check_contains "late result: the message says so" "past its deadline of 60000 ms; its result was discarded" "$(jq -r .error.message <<<"$OUT")"
check_workers_stop "$WORKER_PID"
# ... but a job that had started moving its refs before the deadline keeps
# its result: the refs moved, and the result says so
git -C "$ROOT/r0" branch late2 topic
REPLAYQ_TEST_LATE=late-2:600000 start_worker w4g --repo-root="$ROOT" --jobs=1 --max-deliveries=1
run_rq submit --wait=60 <<<'{"id":"late-2","timeout_ms":60000,"repo":"r0","mode":"onto","target":"main","revisions":["base..late2"],"ref_action":"update"}'
check_eq "late result after the ref update: ok, applied" "ok true" "$(jq -r '"\(.status) \(.applied)"' <<<"$OUT")"
check_eq "late result after the ref update: the ref moved" "$(jq -r '.updates[0].new' <<<"$OUT")" "$(git -C "$ROOT/r0" rev-parse late2)"
check_workers_stop "$WORKER_PID"

stamp "a job over its memory"
# a job over its memory limit: it allocates 384 MiB on purpose (limit 256)
# and is held there, so the parent's check must see it
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_ALLOC=fat-1:384 REPLAYQ_TEST_HOLD=job:fat-1 start_worker w5 --repo-root="$ROOT" --jobs=1 --memory-limit=256
run_rq submit --wait=60 <<<'{"id":"fat-1",'"$heavy"'}'
check_eq "memory limit: code" out_of_memory "$(jq -r .error.code <<<"$OUT")"
check_contains "memory limit: the message names the limit" "memory limit of 256 MiB" "$(jq -r .error.message <<<"$OUT")"
check "memory limit: the result gives the resident size" jq -e '.rss_bytes > 268435456' <<<"$OUT"
check "worker alive after a memory kill" kill -0 "$WORKER_PID"
# an allocation far past the limit: the kernel limit (RLIMIT_DATA) refuses
# it in the child itself (sanitizer builds have no kernel limit; the
# parent's check catches the touched memory instead)
run_rq submit --wait=60 <<<'{"id":"fat-2",'"$heavy"'}'
check_eq "memory limit: an ordinary job still runs" ok "$(jq -r .status <<<"$OUT")"
check_workers_stop "$WORKER_PID"
REPLAYQ_TEST_ALLOC=fat-3:2048 start_worker w5b --repo-root="$ROOT" --jobs=1 --memory-limit=256
run_rq submit --wait=60 <<<'{"id":"fat-3",'"$heavy"'}'
check_eq "kernel memory limit: code" out_of_memory "$(jq -r .error.code <<<"$OUT")"
if grep -q '"kernel_memory_limit":true' "$T/w5b.log"; then
	check_eq "kernel memory limit: the child's own error" "out of memory" "$(jq -r .error.message <<<"$OUT")"
else
	echo "# notice: sanitizer build, no kernel memory limit: the parent's check caught it" >&2
fi
check_workers_stop "$WORKER_PID"

stamp "SIGTERM drains"
# --- SIGTERM drains: the running job finishes, then the worker exits 0 ---------
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=job:drain-1 start_worker w6 --repo-root="$ROOT" --jobs=1 --log-level=debug --grace=60
W6=$WORKER_PID
run_rq submit <<<'{"id":"drain-1",'"$heavy"'}'
CHILD=$(hold_pid job:drain-1)
kill -TERM "$W6"
check "drain: the worker says it drains" wait_for "draining" 30 grep -q '"draining"' "$T/w6.log"
kill -USR1 "$CHILD" # let the job go on
wait "$W6"
check_eq "drain: exit 0" 0 "$?"
check_eq "drain: the running job finished" ok "$(rcli GET 'replayq:{wtest}:result:drain-1' | jq -r .status)"
stamp "with no grace"
# with no grace, the job is left for another worker
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=job:drain-2 start_worker w7 --repo-root="$ROOT" --jobs=1 --log-level=debug --grace=0
W7=$WORKER_PID
run_rq submit <<<'{"id":"drain-2",'"$heavy"'}'
hold_pid job:drain-2 >/dev/null
check_workers_stop "$W7"
check_eq "no grace: job left unacknowledged" 1 "$(rcli XPENDING 'replayq:{wtest}:jobs' workers | head -1)"
check "no grace: no litter" no_litter "$ROOT/r0"
start_worker w8 --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
run_rq submit --wait=60 <<<'{"id":"drain-2",'"$heavy"'}'
check_eq "no grace: another worker finishes it" ok "$(jq -r .status <<<"$OUT")"
check_eq "no grace: second delivery" 2 "$(jq -r .attempt <<<"$OUT")"

stamp "path escapes"
# --- path escapes ----------------------------------------------------------------
mkdir -p "$T/outside"
git clone -q --bare --no-local "$ROOT/r1" "$T/outside/secret.git"
ln -s "$T/outside/secret.git" "$ROOT/evil"
ln -s "$T/outside" "$ROOT/evildir"
for spec in 'evil:bad_repo' 'evildir/secret.git:bad_repo' '../outside/secret.git:bad_repo' 'nosuchrepo:bad_repo'; do
	repo=${spec%%:*} code=${spec#*:}
	run_rq submit --no-validate --wait=60 <<<'{"id":"esc-'"${repo//[^a-z]/}"'","repo":"'"$repo"'","mode":"onto","target":"main","revisions":["base..topic"]}'
	check_eq "path escape '$repo': $code" "$code" "$(jq -r .error.code <<<"$OUT")"
done
run_rq submit --no-validate --wait=60 <<<'{"id":"esc-abs","repo":"'"$T/outside/secret.git"'","mode":"onto","target":"main","revisions":["base..topic"]}'
check_eq "absolute path: bad_repo" bad_repo "$(jq -r .error.code <<<"$OUT")"
check_workers_stop "$WORKER_PID"

stamp "replayq run"
# --- replayq run: the same pool without Redis ----------------------------------------
head -20 "$T/jobs.jsonl" | grep -v '"ref_action":"update"' >"$T/local.jsonl"
run_rq run --repo-root="$ROOT" --jobs=2 "$T/local.jsonl"
check_eq "run: exit 2 (some jobs fail)" 2 "$RC"
mism=0
while read -r line; do
	id=$(jq -r .id <<<"$line")
	i=${id#job-}
	[ "$(jq -c "$norm" <<<"$line")" = "$(cat "$T/ref-$i.json")" ] || mism=$((mism + 1))
done <<<"$OUT"
check_eq "run: one result per job" "$(wc -l <"$T/local.jsonl")" "$(echo "$OUT" | wc -l)"
check_eq "run: results equal replayq replay's" 0 "$mism"
run_rq run --repo-root="$ROOT" <<<'this is not json'
check_eq "run: bad line -> invalid_job" invalid_job "$(jq -r .error.code <<<"$OUT")"

finish
