#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exactly-once ref updates, driven point by point: a worker's job is held at
# each named step of its ref update (core/refs/rq_refs.h: before the intent,
# before the first lock, between locks, all locked, past the fence, between
# two renames, after the last rename with the result not stored; on a
# reftable repository, instead of the two "between" points, with the table
# and the new list written before the rename that publishes them) and
# killed there, the job process alone or with its worker; or, between two
# renames, failing on its own (a lock gone under it: its error is not the
# result, some refs moved). After the retry,
# every case has the final refs and the updates of an undisturbed run, the
# refs and reflogs upstream `git replay --ref-action=update` leaves, one
# result, no lock, no marker, no intent and no grant left, and git's checks
# clean (on reftable `git refs verify`, and no table left that tables.list
# does not name). Then the pause that only a grant closes: a job process
# stopped past the fence while another worker meets its locks again and
# again: no failure is stored, and when the process goes on, its update and
# its ok are what is stored. Run a second time on reftable repositories
# (integration/refs_points@reftable, RQ_REF_FORMAT in tests/lib.sh).
. "$(dirname "$0")/../lib.sh"
require redis-server
updates() { jq -c '[.updates[] | [.ref, .old, .new]]'; }
has_result() { [ "$(rcli EXISTS "replayq:{rp}:result:$1")" = 1 ]; }

start_redis
export REPLAYQ_QUEUE=rp
ROOT=$T/root
mkdir -p "$ROOT" "$T/refroot"
make_abc_repo "$T/wref"
cp -a "$T/wref" "$T/refroot/w"
check_ref_format "$T/wref"
job='{"id":"J","repo":"w","mode":"onto","target":"main","revisions":["^base","a","b","c"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
REF=$("$REPLAYQ" run --repo-root="$T/refroot" <<<"$job")
check_eq "reference run: ok with 3 updates" "ok 3" "$(jq -r '"\(.status) \(.updates | length)"' <<<"$REF")"
# what upstream git leaves for the same replay by the same committer
UPSTATE=
if upstream_git; then
	cp -a "$T/wref" "$T/uref"
	GIT_COMMITTER_NAME=Bot GIT_COMMITTER_EMAIL=bot@example.com GIT_COMMITTER_DATE="@1800000000 +0000" \
		"$UPSTREAM_GIT" -C "$T/uref" replay --ref-action=update --onto main ^base a b c
	UPSTATE=$(ref_state "$T/uref" HEAD refs/heads/a refs/heads/b refs/heads/c)
fi

# settled id: the job's final state is that of an undisturbed run
settled() {
	local id=$1 what=$2 r
	r=$(rcli GET "replayq:{rp}:result:$id")
	check_eq "$what: ok" ok "$(jq -r .status <<<"$r")"
	check_eq "$what: the updates of an undisturbed run" "$(updates <<<"$REF")" "$(updates <<<"$r")"
	check_eq "$what: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
	check_eq "$what: no lock left" "" "$(ref_locks "$ROOT/w")"
	check_eq "$what: no marker left" "" "$(ls "$ROOT/w/.git" | grep replayq-refs-)"
	check_eq "$what: one result" 1 "$(rcli XRANGE 'replayq:{rp}:results' - + | grep -cx "$id")"
	check_eq "$what: no intent, no grant left" "0 0" \
		"$(rcli EXISTS "replayq:{rp}:intent:$id") $(rcli EXISTS "replayq:{rp}:granted:$id")"
	check "$what: git's checks clean" refs_consistent "$ROOT/w"
	if [ -n "$UPSTATE" ]; then
		check_eq "$what: the refs and reflogs upstream's replay leaves" "$UPSTATE" \
			"$(ref_state "$ROOT/w" HEAD refs/heads/a refs/heads/b refs/heads/c)"
	fi
}

# one case: hold the job at point, kill the victim ("child" or "both")
kill_case() {
	local point=$1 victim=$2 id="K-$1-$2" hold=$1 wa kid wb
	[ "$point" = job ] && hold="job:$id"
	rm -rf "$ROOT/w" "$HOLD_DIR"/* "$HOLD_DIR"/.[!.]* && cp -a "$T/wref" "$ROOT/w"
	REPLAYQ_TEST_HOLD_ONCE=1 REPLAYQ_TEST_HOLD=$hold start_worker "wa-$id" --repo-root="$ROOT" \
		--jobs=1 --visibility-timeout=1
	wa=$WORKER_PID
	run_rq submit <<<"${job/\"J\"/\"$id\"}"
	kid=$(hold_pid "$hold")
	if [ "$victim" = both ]; then
		kill -9 "$wa" "$kid"
		wait "$wa" 2>/dev/null
		start_worker "wb-$id" --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
		wb=$WORKER_PID
	else
		kill -9 "$kid"
		wb=$wa
	fi
	check "$id: the retry finishes" wait_for "$id result" 60 has_result "$id"
	settled "$id" "$id"
	check_eq "$id: attempt 2" 2 "$(rcli GET "replayq:{rp}:result:$id" | jq -r .attempt)"
	if [ "$point" != job ]; then
		check_eq "$id: finished from the intent" true \
			"$(rcli GET "replayq:{rp}:result:$id" | jq -r .recovered)"
	fi
	check_workers_stop "$wb"
}
if [ $REFTABLE = 0 ]; then
	for point in job refs-start refs-locking refs-locked refs-fenced refs-committed refs-done; do
		for victim in child both; do
			kill_case "$point" "$victim"
		done
	done
else # one table, all at once: no point between two locks or two renames
	for point in job refs-start refs-locked refs-fenced refs-written refs-done; do
		kill_case "$point" child
	done
	kill_case refs-written both
fi

rm -rf "$ROOT/w" "$HOLD_DIR"/* && cp -a "$T/wref" "$ROOT/w"
if [ $REFTABLE = 0 ]; then
	# killed between two renames: the first ref moved, the others locked
	REPLAYQ_TEST_HOLD=refs-committed start_worker wc --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
	WC=$WORKER_PID
	run_rq submit <<<"${job/\"J\"/\"H1\"}"
	KID=$(hold_pid refs-committed)
	first=$(rcli GET 'replayq:{rp}:intent:H1' | jq -r '.updates[0] | "\(.ref) \(.new)"')
	check_eq "between renames: the first ref moved" "${first#* }" "$(git -C "$ROOT/w" rev-parse "${first%% *}")"
	check_eq "between renames: the two others locked" 2 "$(ref_locks "$ROOT/w" | wc -l)"
else
	# killed with the table and the new list written, before the rename
	# that publishes them: no ref moved, git reads them as they were and
	# cannot write (tables.list.lock), the new table is named only in the
	# lock
	REPLAYQ_TEST_HOLD=refs-written start_worker wc --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
	WC=$WORKER_PID
	run_rq submit <<<"${job/\"J\"/\"H1\"}"
	KID=$(hold_pid refs-written)
	rt=$ROOT/w/.git/reftable
	check_eq "written, not published: no ref moved, as git reads them" \
		"$(branch_refs "$T/wref")" "$(branch_refs "$ROOT/w")"
	check_eq "written, not published: tables.list.lock alone" "$rt/tables.list.lock" "$(ref_locks "$ROOT/w")"
	new=$(tail -1 "$rt/tables.list.lock")
	check "written, not published: the new table is there" test -s "$rt/$new"
	check "written, not published: tables.list does not name it" bash -c "! grep -qx '$new' '$rt/tables.list'"
	check "written, not published: git cannot write meanwhile" bash -c "! git -C '$ROOT/w' update-ref refs/heads/x main 2>/dev/null"
fi
kill -9 "$WC" "$KID"
wait "$WC" 2>/dev/null
start_worker wd --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WD=$WORKER_PID
check "killed mid-commit: the retry finishes" wait_for "H1 result" 60 has_result H1
settled H1 "killed mid-commit"
check_workers_stop "$WD"

if [ $REFTABLE = 0 ]; then
	# failed mid-commit: the first ref moved, the second's lock gone under
	# it (its rename fails), so the child stops after its grant with an
	# error. That error is not the job's result (some refs moved): the job
	# is left, and its retry finishes it from the intent
	rm -rf "$ROOT/w" "$HOLD_DIR"/* "$HOLD_DIR"/.[!.]* && cp -a "$T/wref" "$ROOT/w"
	REPLAYQ_TEST_HOLD_ONCE=1 REPLAYQ_TEST_HOLD=refs-committed start_worker wm --repo-root="$ROOT" \
		--jobs=1 --visibility-timeout=1
	WM=$WORKER_PID
	run_rq submit <<<"${job/\"J\"/\"M1\"}"
	KID=$(hold_pid refs-committed)
	second=$(rcli GET 'replayq:{rp}:intent:M1' | jq -r '.updates[1].ref')
	lock=$(foreign_lock "$ROOT/w" "$second")
	check "failed mid-commit: the second ref is locked" test -e "$lock"
	rm -f "$lock"
	kill -USR1 "$KID"
	check "failed mid-commit: the retry finishes" wait_for "M1 result" 60 has_result M1
	settled M1 "failed mid-commit"
	check_eq "failed mid-commit: attempt 2, finished from the intent" "2 true" \
		"$(rcli GET 'replayq:{rp}:result:M1' | jq -r '"\(.attempt) \(.recovered)"')"
	check_workers_stop "$WM"
fi

# paused past the fence: the job process stops with every lock taken and
# its commit granted; its job goes to another worker, which meets the
# locks at each delivery, past the delivery limit, and stores no failure.
# When the paused process goes on, it moves the refs and its ok is stored.
rm -rf "$ROOT/w" "$HOLD_DIR"/* && cp -a "$T/wref" "$ROOT/w"
REPLAYQ_TEST_HOLD=refs-fenced start_worker we --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 --max-deliveries=2
WE=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"G1\"}"
KID=$(hold_pid refs-fenced)
check "past the fence: the grant is recorded" test "$(rcli EXISTS 'replayq:{rp}:granted:G1')" = 1
kill -STOP "$WE"
start_worker wf --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 --max-deliveries=2
WF=$WORKER_PID
# wait until the other worker met the locks past its delivery limit
waited() { [ "$(grep -c 'was granted its commit' "$T/wf.log")" -ge 2 ]; }
check "past the fence: the other worker waits for the grant" wait_for "two waits" 60 waited
check "past the fence: no result stored meanwhile" test "$(rcli EXISTS 'replayq:{rp}:result:G1')" = 0
check_eq "past the fence: nothing dead-lettered" 0 "$(rcli XLEN 'replayq:{rp}:dead')"
kill -CONT "$WE"
kill -USR1 "$KID"
check "past the fence: the result is stored" wait_for "G1 result" 60 has_result G1
settled G1 "past the fence"
check_workers_stop "$WE" "$WF"

# a second copy of a finished job (submit --force): while every ref is
# where the first copy put them, its result is the first copy's updates,
# "already_applied", with nothing replayed again on the refs it moved;
# once a ref is elsewhere, the copy replays anew
rm -rf "$ROOT/w" && cp -a "$T/wref" "$ROOT/w"
start_worker wg --repo-root="$ROOT" --jobs=1 --visibility-timeout=1
WG=$WORKER_PID
run_rq submit <<<"${job/\"J\"/\"F1\"}"
check "force: the first copy finishes" wait_for "F1 result" 60 has_result F1
settled F1 "force, first copy"
R1=$(rcli GET 'replayq:{rp}:result:F1')
packs=$(ls "$ROOT/w/.git/objects/pack" | wc -l)
run_rq submit --force <<<"${job/\"J\"/\"F1\"}"
check_eq "force: queued again" 0 "$RC"
check "force: the second copy finishes" wait_for "F1 result" 60 has_result F1
R2=$(rcli GET 'replayq:{rp}:result:F1')
check_eq "force: ok, already applied" "ok true" "$(jq -r '"\(.status) \(.already_applied)"' <<<"$R2")"
check_eq "force: the first copy's updates, not no-op ones" "$(updates <<<"$R1")" "$(updates <<<"$R2")"
check_eq "force: the refs of an undisturbed run" "$(branch_refs "$T/refroot/w")" "$(branch_refs "$ROOT/w")"
check_eq "force: nothing replayed (no new pack)" "$packs" "$(ls "$ROOT/w/.git/objects/pack" | wc -l)"
check_eq "force: two results in the stream" 2 "$(rcli XRANGE 'replayq:{rp}:results' - + | grep -cx F1)"
# another content under the id: its prior result is not its answer
other=${job/\"J\"/\"F1\"}
other=${other/\"^base\",\"a\",\"b\",\"c\"/\"^base\",\"a\",\"b\"}
run_rq submit --force <<<"$other"
check "force, other content: it finishes" wait_for "F1 result" 60 has_result F1
check_eq "force, other content: replayed, not the prior answer" "null" \
	"$(rcli GET 'replayq:{rp}:result:F1' | jq -r .already_applied)"
# a ref moved since: the copy replays anew
git -C "$ROOT/w" update-ref refs/heads/c "$(git -C "$T/wref" rev-parse c)"
run_rq submit --force <<<"${job/\"J\"/\"F1\"}"
check "force, a ref moved: it finishes" wait_for "F1 result" 60 has_result F1
R4=$(rcli GET 'replayq:{rp}:result:F1')
check_eq "force, a ref moved: replayed anew" "ok null" "$(jq -r '"\(.status) \(.already_applied)"' <<<"$R4")"
check_eq "force, a ref moved: c moved again to its replayed id" \
	"$(git -C "$T/refroot/w" rev-parse c)" "$(git -C "$ROOT/w" rev-parse c)"
check_workers_stop "$WG"
finish
