#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Ref updates survive kills: a replay killed while it holds its ref locks
# (held there on purpose, core/base/rq_testhook.h point "refs-locked") leaves
# locks that the next replayq run recognises as its own (the marker
# <commondir>/replayq-refs-<pid>@<host>.<token>.owner, whose flock its dead
# owner no longer holds) and removes; a
# lock of a live process or of another program stays. A worker job killed
# there, or after some of its refs moved, is finished by its retry from the
# recorded intent: the same refs and ids as an undisturbed run, reported
# with their true old values. Run a second time on reftable repositories
# (integration/refs_recovery@reftable): there the locks are one,
# tables.list.lock, which holds the owner's token (core/refs/rq_rtlock.h).
. "$(dirname "$0")/../lib.sh"
require redis-server
export RQ_DATE="@1800000000 +0000"

# --- the command line ---------------------------------------------------------
make_abc_repo "$T/ref"
cp -a "$T/ref" "$T/r"
check_ref_format "$T/r"
orig=$(branch_refs "$T/r")
run_rq -C "$T/ref" replay --onto main ^base a b c
check_eq "undisturbed: exit 0" 0 "$RC"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=refs-locked GIT_COMMITTER_DATE="$RQ_DATE" "$REPLAYQ" -C "$T/r" replay --onto main ^base a b c &
P=$!
KID=$(hold_pid refs-locked)
N=$(locks_of 3)
check_eq "held with its locks: $N locks" "$N" "$(ref_locks "$T/r" | wc -l)"
check "held: its marker names it" compgen -G "$T/r/.git/replayq-refs-$KID@*.owner"
# another run meanwhile: the locks of a live process are not touched
run_rq -C "$T/r" replay --onto main ^base a b c
check "while the owner lives: the second run fails" test "$RC" -ne 0
check_eq "while the owner lives: its locks stay" "$N" "$(ref_locks "$T/r" | wc -l)"
kill -9 "$P"
wait "$P" 2>/dev/null
check_eq "killed: the locks are left" "$N" "$(ref_locks "$T/r" | wc -l)"
check_eq "killed: no ref moved" "$orig" "$(branch_refs "$T/r")"
run_rq -C "$T/r" replay --onto main ^base a b c
check_eq "the next run: exit 0" 0 "$RC"
check_eq "the next run: its own stale locks removed, none left" "" "$(ref_locks "$T/r")"
check_eq "the next run: no marker left" "" "$(ls "$T/r/.git" | grep replayq-refs-)"
check_eq "the next run: the refs of an undisturbed run" "$(branch_refs "$T/ref")" "$(branch_refs "$T/r")"
check "the next run: git's checks clean" refs_consistent "$T/r"
check "git can update the refs again" git -C "$T/r" update-ref refs/heads/a base
# another program's lock (no replayq marker) is never removed
lock=$(foreign_lock "$T/r" refs/heads/b)
: >"$lock"
run_rq -C "$T/r" replay --onto main ^base b
check "another program's lock: the replay fails" test "$RC" -ne 0
check_contains "another program's lock: named" "$lock" "$ERR"
check "another program's lock: it stays" test -e "$lock"
rm -f "$lock"
if [ $REFTABLE = 1 ]; then
	# what a replayq killed in a compaction leaves (no hold point there: made
	# by hand as rq_rtlock makes it): its marker, whose flock nobody holds,
	# lists the table locks and tables.list.lock, which hold its token's
	# line; its merged table, never published, is named with the token. A
	# table lock git holds (empty), also listed, stays.
	rt=$T/r/.git/reftable
	for x in x1 x2; do GIT_TEST_REFTABLE_AUTOCOMPACTION=false git -C "$T/r" update-ref refs/x/$x main; done
	mapfile -t tabs <"$rt/tables.list"
	check "a stack of several tables" test "${#tabs[@]}" -ge 2
	tok=0badf00d
	printf 'reftable/%s.lock %s\n' "${tabs[0]}" $tok "${tabs[1]}" $tok >"$T/r/.git/replayq-refs-1@gone.$tok.owner"
	echo "reftable/tables.list.lock $tok" >>"$T/r/.git/replayq-refs-1@gone.$tok.owner"
	echo "replayq $tok" >"$rt/${tabs[0]}.lock"
	: >"$rt/${tabs[1]}.lock"
	echo "replayq $tok" >"$rt/tables.list.lock"
	cp "$rt/${tabs[0]}" "$rt/0x000000000001-0x000000000009-$tok.ref"
	: >"$rt/0x000000000001-0x000000000009-$tok.temp.a1b2c3"
	run_rq -C "$T/r" replay --onto main ^base c
	check_eq "killed in a compaction: the next run goes on" 0 "$RC"
	check_eq "... the gone owner's locks, tables and marker removed; git's lock stays" \
		"$rt/${tabs[1]}.lock" "$(ref_locks "$T/r")$(ls "$T/r/.git" | grep replayq-refs-)"
	rm -f "$rt/${tabs[1]}.lock"
	check "... git's checks clean" refs_consistent "$T/r"
fi

# --- the worker ----------------------------------------------------------------
start_redis
export REPLAYQ_QUEUE=rr
ROOT=$T/root
mkdir -p "$ROOT"
make_abc_repo "$ROOT/w"
cp -a "$ROOT/w" "$T/wref"
job='{"id":"J","repo":"w","mode":"onto","target":"main","revisions":["^base","a","b","c"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
# the reference: the same job, undisturbed, by replayq run on a copy
mkdir -p "$T/refroot" && cp -a "$T/wref" "$T/refroot/w"
REF=$("$REPLAYQ" run --repo-root="$T/refroot" <<<"$job")
check_eq "reference run: ok" ok "$(jq -r .status <<<"$REF")"
check_eq "reference run: 3 updates" 3 "$(jq '.updates | length' <<<"$REF")"
# kill_at_locks id: a worker takes the job and is held with its locks, then
# the worker and its child are SIGKILLed
kill_at_locks() {
	rm -f "$HOLD_DIR"/*
	REPLAYQ_TEST_HOLD=refs-locked start_worker wa --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
	WA=$WORKER_PID
	run_rq submit <<<"${job/\"J\"/\"$1\"}"
	KID=$(hold_pid refs-locked)
	kill -9 "$WA" "$KID"
	wait "$WA" 2>/dev/null
}
kill_at_locks J1
check_eq "worker killed with its locks: $N locks left" "$N" "$(ref_locks "$ROOT/w" | wc -l)"
check "worker killed: the intent is recorded" test "$(rcli EXISTS 'replayq:{rr}:intent:J1')" = 1
start_worker wb --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WB=$WORKER_PID
check "the retry finishes" wait_for "J1 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{rr}:result:J1')\" = 1 ]"
R1=$(rcli GET 'replayq:{rr}:result:J1')
check_eq "retry: ok, recovered, attempt 2" "ok true 2" "$(jq -r '"\(.status) \(.recovered) \(.attempt)"' <<<"$R1")"
check_eq "retry: the updates of an undisturbed run" "$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$REF")" \
	"$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$R1")"
check_eq "retry: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
check_eq "retry: no lock left" "" "$(ref_locks "$ROOT/w")"
check "retry: no intent left" test "$(rcli EXISTS 'replayq:{rr}:intent:J1')" = 0
check_workers_stop "$WB"

# half applied: the killed attempt had moved one ref (its lock renamed) but
# not the others; the retry moves the rest and reports the true old values
# (on reftable, where replayq moves all or none, someone else moved it)
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
kill_at_locks J2
first=$(rcli GET 'replayq:{rr}:intent:J2' | jq -r '.updates[0] | "\(.ref) \(.new)"')
rm -f "$(foreign_lock "$ROOT/w" "${first%% *}")"
git -C "$ROOT/w" update-ref "${first%% *}" "${first#* }"
start_worker wc --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WC=$WORKER_PID
check "half applied: the retry finishes" wait_for "J2 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{rr}:result:J2')\" = 1 ]"
R2=$(rcli GET 'replayq:{rr}:result:J2')
check_eq "half applied: ok, recovered" "ok true" "$(jq -r '"\(.status) \(.recovered)"' <<<"$R2")"
check_eq "half applied: every update with its true old value" "$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$REF")" \
	"$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$R2")"
check_eq "half applied: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
check_eq "half applied: no lock left" "" "$(ref_locks "$ROOT/w")"
check "git's checks clean" refs_consistent "$ROOT/w"
check_workers_stop "$WC"

# the worker dies while its child holds the locks: the child is not taken
# down with it (it was told to move the refs), but it cannot confirm under
# the locks that the job is still its worker's, so it releases them and
# moves nothing; the redelivered job finishes the update
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
before=$(branch_refs "$ROOT/w")
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=refs-locked start_worker we --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WE=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"D1\"}"
KID=$(hold_pid refs-locked)
kill -9 "$WE"
wait "$WE" 2>/dev/null
check "worker killed: its child lives on" kill -0 "$KID"
kill -USR1 "$KID"
check "worker killed: the child exits" wait_for "child gone" 60 dead_or_zombie "$KID"
check_eq "worker killed: the child moved no ref" "$before" "$(branch_refs "$ROOT/w")"
check_eq "worker killed: the child released its locks" "" "$(ref_locks "$ROOT/w")"
start_worker wf --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WF=$WORKER_PID
check "worker killed: the redelivery finishes" wait_for "D1 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{rr}:result:D1')\" = 1 ]"
check_eq "worker killed: ok, recovered, with the true updates" "ok true $(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$REF")" \
	"$(rcli GET 'replayq:{rr}:result:D1' | jq -c '"\(.status) \(.recovered) \([.updates[] | [.ref, .old, .new]] | tojson)"' -r)"
check_eq "worker killed: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
check_workers_stop "$WF"

# fencing: a worker paused (SIGSTOP) while its child holds the locks loses
# its job to another worker, which stores a final result; when it resumes,
# its child learns under the locks that the job is no longer its own and
# moves nothing: the stored result stays true
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
before=$(branch_refs "$ROOT/w")
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=refs-locked start_worker wg --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 --max-deliveries=2
WG=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"F1\"}"
KID=$(hold_pid refs-locked)
kill -STOP "$WG"
start_worker wh --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 --max-deliveries=2
WH=$WORKER_PID
check "paused owner: the other worker stores a final result" wait_for "F1 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{rr}:result:F1')\" = 1 ]"
F1=$(rcli GET 'replayq:{rr}:result:F1')
check_eq "paused owner: the result is ref_locked (the paused child holds the locks)" "error ref_locked" "$(jq -r '"\(.status) \(.error.code)"' <<<"$F1")"
kill -CONT "$WG"
kill -USR1 "$KID"
check "paused owner: its child exits" wait_for "child gone" 60 dead_or_zombie "$KID"
check_eq "paused owner: no ref moved, as the result says" "$before" "$(branch_refs "$ROOT/w")"
check_eq "paused owner: no lock left" "" "$(ref_locks "$ROOT/w")"
check "paused owner: it says why" wait_for "the fence in its log" 30 grep -q "no longer ours" "$T/wg.log"
check_eq "paused owner: still one result" 1 "$(rcli XRANGE 'replayq:{rr}:results' - + | grep -cx F1)"
check_workers_stop "$WG" "$WH"

# a worker told to stop with no grace while its child holds the locks:
# it closes the child's pipes (its commit check is refused: it releases
# the locks, moves nothing) and exits; the job is left for another worker
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
before=$(branch_refs "$ROOT/w")
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=refs-locked start_worker wi --repo-root="$ROOT" --jobs=1 --grace=0
WI=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"S1\"}"
KID=$(hold_pid refs-locked)
kill -TERM "$WI"
# "draining" comes right before it gives up its children (grace 0)
wait_for "wi draining" 60 grep -q '"draining"' "$T/wi.log"
kill -USR1 "$KID"
check "no grace at the locks: the worker exits" wait_for "wi exit" 60 bash -c "! kill -0 $WI 2>/dev/null"
wait "$WI"
check_eq "no grace at the locks: exit 0" 0 "$?"
check_eq "no grace at the locks: no ref moved" "$before" "$(branch_refs "$ROOT/w")"
check_eq "no grace at the locks: no lock left" "" "$(ref_locks "$ROOT/w")"

# a ref locked by another program: ref_locked, retried (not failed); the
# second delivery is held until the test has released the lock
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
lock=$(foreign_lock "$ROOT/w" refs/heads/b)
: >"$lock"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=job:L1@2 start_worker wd --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 --max-deliveries=2
WD=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"L1\"}"
KID=$(hold_pid job:L1@2)
check_contains "locked: the first delivery was ref_locked, to be retried" '\"code\":\"ref_locked\"' "$(grep 'it will be retried' "$T/wd.log")"
check_contains "locked: the lock is named" "${lock#"$ROOT/w/.git/"}" "$(grep 'it will be retried' "$T/wd.log")"
rm -f "$lock"
kill -USR1 "$KID"
check "locked: the retry finishes" wait_for "L1 result" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{rr}:result:L1')\" = 1 ]"
check_eq "locked: ok at attempt 2" "ok 2" "$(rcli GET 'replayq:{rr}:result:L1' | jq -r '"\(.status) \(.attempt)"')"
check_eq "locked: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
check_workers_stop "$WD"
finish
