#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Many jobs onto one branch, without failures that a retry would cure and
# without stalls (issue 35, points 2 and 3), with real workers and a real
# redis-server; every race made on purpose at a hold point
# (core/base/rq_testhook.h):
#  - "on_ref_moved": "retry": a job whose target is moved while it is held
#    before its locks ("refs-start", past its intent) replays from the new
#    tip and applies there (attempts 2; the commit upstream `git replay`
#    makes on that tip); with the default "fail" it is ref_moved as
#    before; moved before every attempt it gives up after 5 (ref_moved,
#    attempts 5); a delivery killed past its intent, the target moved
#    meanwhile: the next delivery replays on the new tip (no grant: the
#    intent never moved a ref);
#  - ref_locked without a stall: a ref lock held by a live process (an
#    empty lock, as git's; a replayq replay held with its locks) is waited
#    for by the same worker ("refs-lock-wait" marks the wait) and the job
#    applies once it is let go. The workers' visibility timeout is 600 s:
#    a job left for a redelivery would fail the test by its bounds;
#  - 10 ungrouped jobs with retry onto one branch, two workers of two
#    slots: all apply.
# Run a second time on reftable repositories (refs_retry@reftable).
. "$(dirname "$0")/../lib.sh"
require redis-server jq
start_redis
ROOT=$T/root
mkdir -p "$ROOT"
C='"committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}'
export GIT_COMMITTER_NAME=Bot GIT_COMMITTER_EMAIL=bot@example.com

# retry_repo dir n: pick_repo's, and mv: 6 commits on base that main can
# be moved along
retry_repo() {
	pick_repo "$1" "$2"
	git -C "$1" checkout -q -b mv base
	for i in 1 2 3 4 5 6; do commit_file "$1" "m$i.txt" "m $i" "moved $i"; done
	git -C "$1" checkout -q main
	check_ref_format "$1"
}
# pick ID REPO I [EXTRA]: cherry-pick p-I onto main, applied
pick() {
	echo '{"id":"'"$1"'","repo":"'"$2"'","mode":"advance","target":"main","revisions":["base..p-'"$3"'"],"ref_action":"update",'"$C${4:+,$4}"'}'
}
RETRY='"on_ref_moved":"retry"'
result() { rcli GET "$(key "$1" "result:$2")"; }
has_result() { [ "$(rcli EXISTS "$(key "$1" "result:$2")")" = 1 ]; }
# release point: the process held there goes on (its announcement removed
# first, so that its next hold is a new one)
release() {
	local pid
	pid=$(hold_pid "$1") || return 1
	rm -f "$HOLD_DIR/$1.$pid"
	kill -USR1 "$pid"
}
# upstream_pick repo tip i: the commit upstream `git replay` makes of
# p-i on tip, by the job's committer
upstream_pick() {
	rm -rf "$T/up"
	git clone -q --bare "$1" "$T/up" 2>/dev/null
	git -C "$T/up" update-ref refs/heads/main "$2"
	GIT_COMMITTER_DATE="@1800000000 +0000" "$UPSTREAM_GIT" -C "$T/up" replay --ref-action=print \
		--advance main "base..p-$3" | awk '{print $3}'
}
HAVE_UP=0
upstream_git && HAVE_UP=1
# worker name queue [env...]: a worker of one slot with the given test
# hooks, its visibility timeout far beyond the test's bounds (VIS: else)
worker() {
	local name=$1 q=$2
	shift 2
	env "$@" "$REPLAYQ" worker --name="$name" --queue="$q" --repo-root="$ROOT" --jobs=1 \
		--visibility-timeout="${VIS:-600}" 2>"$T/$name.log" &
	BG_PIDS+=("$!")
	WORKER_NAMES[$!]=$name
	worker_started "$name"
}
stop_workers() {
	check_workers_stop "${!WORKER_NAMES[@]}"
	WORKER_NAMES=()
	rm -f "$HOLD_DIR"/*
}

# --- on_ref_moved: retry, fail, and the bound ---------------------------------
section "a moved target: retry replays on the new tip"
retry_repo "$ROOT/m" 3
worker wm qm REPLAYQ_TEST_HOLD=refs-start
pick r1 m 1 "$RETRY" | "$REPLAYQ" submit --queue=qm - >/dev/null
pid=$(hold_pid refs-start)
git -C "$ROOT/m" update-ref refs/heads/main mv~5
tip=$(git -C "$ROOT/m" rev-parse main)
check "the job goes on" release refs-start
check "the second attempt holds too; let go" release refs-start
wait_for "r1's result" 60 has_result qm r1
R=$(result qm r1)
check_eq "retry: ok, applied, attempts 2" "ok true 2" "$(jq -r '"\(.status) \(.applied) \(.attempts)"' <<<"$R")"
new=$(git -C "$ROOT/m" rev-parse main)
check_eq "retry: the update from the new tip" "refs/heads/main $tip $new" \
	"$(jq -r '.updates[] | "\(.ref) \(.old) \(.new)"' <<<"$R")"
check_eq "retry: main is the pick on the moved tip" "$tip" "$(git -C "$ROOT/m" rev-parse main~1)"
[ $HAVE_UP = 0 ] || check_eq "retry: the commit upstream git replay makes on the new tip" \
	"$(upstream_pick "$ROOT/m" "$tip" 1)" "$new"
check_eq "retry: no intent, no grant, no lock left" "0 0 " \
	"$(rcli EXISTS "$(key qm intent:r1)") $(rcli EXISTS "$(key qm granted:r1)") $(ref_locks "$ROOT/m")"
check "retry: git's checks clean" refs_consistent "$ROOT/m"

section "a moved target: fail (the default) is ref_moved"
pick f1 m 2 | "$REPLAYQ" submit --queue=qm - >/dev/null
hold_pid refs-start >/dev/null
git -C "$ROOT/m" update-ref refs/heads/main mv~4
tip=$(git -C "$ROOT/m" rev-parse main)
check "the job goes on" release refs-start
wait_for "f1's result" 60 has_result qm f1
R=$(result qm f1)
check_eq "fail: ref_moved, not applied, no attempts" "error ref_moved false null" \
	"$(jq -r '"\(.status) \(.error.code) \(.applied) \(.attempts)"' <<<"$R")"
check_eq "fail: main stays where it was moved" "$tip" "$(git -C "$ROOT/m" rev-parse main)"

section "moved before every attempt: gives up after 5"
pick g1 m 3 "$RETRY" | "$REPLAYQ" submit --queue=qm - >/dev/null
for i in 1 2 3 4 5; do
	hold_pid refs-start >/dev/null
	git -C "$ROOT/m" commit-tree -p main -m "moved again $i" "main^{tree}" |
		xargs git -C "$ROOT/m" update-ref refs/heads/main
	check "attempt $i goes on" release refs-start
done
wait_for "g1's result" 60 has_result qm g1
R=$(result qm g1)
check_eq "5 moves: ref_moved after 5 attempts" "error ref_moved false 5" \
	"$(jq -r '"\(.status) \(.error.code) \(.applied) \(.attempts)"' <<<"$R")"
check_eq "5 moves: one delivery did it all" 1 "$(jq -r .attempt <<<"$R")"
check "5 moves: no sixth attempt was held" bash -c "! compgen -G '$HOLD_DIR/refs-start.*'"
check_eq "5 moves: no lock left" "" "$(ref_locks "$ROOT/m")"
stop_workers

section "killed past its intent, the target moved: the next delivery replays"
retry_repo "$ROOT/d" 1
VIS=1 worker wd qd REPLAYQ_TEST_HOLD=refs-start REPLAYQ_TEST_HOLD_ONCE=1
pick d1 d 1 "$RETRY" | "$REPLAYQ" submit --queue=qd - >/dev/null
kid=$(hold_pid refs-start)
check_eq "held past its intent: the intent recorded, no grant" "1 0" \
	"$(rcli EXISTS "$(key qd intent:d1)") $(rcli EXISTS "$(key qd granted:d1)")"
git -C "$ROOT/d" update-ref refs/heads/main mv~5
tip=$(git -C "$ROOT/d" rev-parse main)
kill -KILL "$kid"
wait_for "d1's result" 60 has_result qd d1
R=$(result qd d1)
check_eq "the second delivery: ok, replayed once" "ok true 2 1" \
	"$(jq -r '"\(.status) \(.applied) \(.attempt) \(.attempts)"' <<<"$R")"
check_eq "on the moved tip" "$tip" "$(git -C "$ROOT/d" rev-parse main~1)"
check "git's checks clean" refs_consistent "$ROOT/d"
stop_workers

# --- ref_locked without a stall -----------------------------------------------
section "a lock held by a live process is waited for"
retry_repo "$ROOT/k" 3
worker wk qk REPLAYQ_TEST_HOLD=refs-lock-wait REPLAYQ_TEST_HOLD_ONCE=1
lock=$(foreign_lock "$ROOT/k" refs/heads/main)
: >"$lock"
pick k1 k 1 | "$REPLAYQ" submit --queue=qk - >/dev/null
hold_pid refs-lock-wait >/dev/null
check_eq "waiting: no result yet" 0 "$(rcli EXISTS "$(key qk result:k1)")"
rm -f "$lock"
check "the lock is gone; the job goes on" release refs-lock-wait
wait_for "k1's result" 60 has_result qk k1
R=$(result qk k1)
check_eq "a lock let go: ok in the first delivery" "ok true 1" \
	"$(jq -r '"\(.status) \(.applied) \(.attempt)"' <<<"$R")"
check_eq "a lock let go: main holds the pick" "pick 1" "$(git -C "$ROOT/k" log -1 --format=%s main)"
rm -f "$HOLD_DIR"/*

section "a replayq replay held with its lock; the job waits, then retries on its tip"
REPLAYQ_TEST_HOLD=refs-locked "$REPLAYQ" -C "$ROOT/k" replay --ref-action=update --advance main base..p-3 \
	>/dev/null 2>"$T/cli.err" &
cli=$!
hold_pid refs-locked >/dev/null
pick k2 k 2 "$RETRY" | "$REPLAYQ" submit --queue=qk - >/dev/null
hold_pid refs-lock-wait >/dev/null
check "the replay goes on" release refs-locked
wait "$cli"
check_eq "the replay: exit 0" 0 "$?"
tip=$(git -C "$ROOT/k" rev-parse main)
check "the job goes on" release refs-lock-wait
wait_for "k2's result" 60 has_result qk k2
R=$(result qk k2)
check_eq "waited, then moved: ok, attempts 2" "ok true 2 1" \
	"$(jq -r '"\(.status) \(.applied) \(.attempts) \(.attempt)"' <<<"$R")"
check_eq "on the replay's tip" "$tip" "$(git -C "$ROOT/k" rev-parse main~1)"
check "git's checks clean" refs_consistent "$ROOT/k"
stop_workers

# --- 10 ungrouped jobs with retry onto one branch -----------------------------
section "10 ungrouped picks with retry onto one branch"
retry_repo "$ROOT/ten" 10
for i in $(seq 1 10); do pick "t-$i" ten "$i" "$RETRY"; done >"$T/t.jobs"
for w in t1 t2; do start_worker "$w" --queue=qt --repo-root="$ROOT" --jobs=2 --visibility-timeout=600; done
run_rq submit --queue=qt --wait=120 "$T/t.jobs"
check_eq "10 picks with retry: exit 0" 0 "$RC"
check_eq "10 results, all ok" "10 ok" "$(jq -r .status <<<"$OUT" | sort | uniq -c | awk '{print $1, $2}')"
check_eq "main holds the 10 picks" 10 "$(git -C "$ROOT/ten" rev-list --count base..main)"
check_eq "each in its first delivery" 1 "$(jq -r .attempt <<<"$OUT" | sort -u | xargs)"
# they replay and commit one at a time (replayq-retry.guard): none moved
# another's target under it
check_eq "each at its first attempt" 1 "$(jq -r .attempts <<<"$OUT" | sort -u | xargs)"
check "git's checks clean" refs_consistent "$ROOT/ten"
stop_workers
check "no sanitizer report" sanitizer_clean "$T"/*.log
finish
