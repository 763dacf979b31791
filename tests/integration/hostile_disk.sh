#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A full disk after the pack is written (issue 33 point 7): the job is held
# at refs-start (its pack in place, no ref locked), the file system is
# filled to leave exactly k blocks, and the job goes on. At every level
# the refs, their reflogs (HEAD's too: HEAD points at one of the refs) and
# the result agree: ok with every ref moved and one reflog entry each, as
# an undisturbed run has them, or an error with no ref moved and no
# reflog touched; `run` prints a result every time; no lock is left. A
# worker past --max-deliveries stores one final result and adds no reflog
# entry per delivery. A small tmpfs, mounted here (root): skipped with a
# notice where mounting is impossible. Run a second time on reftable
# repositories (hostile_disk@reftable): the one table and the new list are
# written before the rename that publishes them, so a full disk leaves
# tables.list as it was, no table it does not name, and an error that is
# final at the first delivery (nothing moved, nothing to finish).
. "$(dirname "$0")/../lib.sh"
DISK=$T/disk
mkdir -p "$DISK"
if ! mount -t tmpfs -o size=4m,mode=0755 tmpfs "$DISK" 2>"$T/mount.err"; then
	echo "# notice: cannot mount a tmpfs ($(cat "$T/mount.err")): full-disk checks skipped" >&2
	finish
fi
trap 'umount -l "$DISK" 2>/dev/null; cleanup_all' EXIT
ROOT=$DISK/root
mkdir -p "$ROOT" "$T/refroot" "$T/tmpl"
# make_abc_repo, with HEAD on c (one of the refs the job moves)
make_abc_repo "$T/tmpl/w"
git -C "$T/tmpl/w" checkout -q c
cp -a "$T/tmpl/w" "$T/refroot/w"
check_ref_format "$T/tmpl/w"
job='{"id":"D","repo":"w","mode":"onto","target":"main","revisions":["^base","a","b","c"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
REF=$("$REPLAYQ" run --repo-root="$T/refroot" <<<"$job")
check_eq "reference run: ok with 3 updates" "ok 3" "$(jq -r '"\(.status) \(.updates | length)"' <<<"$REF")"
# state repo: refs, and each reflog (HEAD's too) as git shows it
state() {
	local r
	git -C "$1" for-each-ref --format='%(refname) %(objectname)' refs/heads
	for r in HEAD refs/heads/a refs/heads/b refs/heads/c; do
		echo "== $r"
		git -C "$1" log -g --format='%H %gs %cn' "$r" 2>&1
	done
}
BEFORE=$(state "$T/tmpl/w")
AFTER=$(state "$T/refroot/w")
avail() { stat -f -c %a "$DISK"; }
# fill_to k: leave exactly k free blocks on the disk
fill_to() {
	local bs
	bs=$(stat -f -c %S "$DISK")
	fallocate -l $((($(avail) - $1) * bs)) "$DISK/filler" && [ "$(avail)" = "$1" ]
}
fresh() {
	rm -rf "$ROOT/w" "$DISK/filler" "$HOLD_DIR"/*
	cp -a "$T/tmpl/w" "$ROOT/w"
}
# consistent what result: the refs, reflogs and result agree
consistent() {
	local what=$1 res=$2 st
	st=$(jq -r .status <<<"$res" 2>/dev/null)
	case $st in
	ok)
		check_eq "$what: ok, the refs and reflogs of an undisturbed run" "$AFTER" "$(state "$ROOT/w")"
		check_eq "$what: ok, the updates of an undisturbed run" "$(jq -c .updates <<<"$REF")" "$(jq -c .updates <<<"$res")"
		;;
	error)
		check_eq "$what: error, no ref moved and no reflog touched" "$BEFORE" "$(state "$ROOT/w")"
		;;
	*) not_ok "$what: a result ($res)" ;;
	esac
	check_eq "$what: no lock left" "" "$(find "$ROOT/w/.git" -name '*.lock')"
	check_eq "$what: no marker left" "" "$(ls "$ROOT/w/.git" | grep replayq-refs-)"
}

section "replayq run at every fill level"
declare -A seen=()
for k in 0 1 2 3 4 6; do
	fresh
	REPLAYQ_TEST_HOLD=refs-start "$REPLAYQ" run --repo-root="$ROOT" <<<"$job" >"$T/out" 2>"$T/err" &
	RUN=$!
	KID=$(hold_pid refs-start)
	check "level $k: filled" fill_to "$k"
	kill -USR1 "$KID"
	wait "$RUN"
	rc=$?
	OUT=$(cat "$T/out")
	check_eq "level $k: run printed one result" 1 "$(grep -c . <<<"$OUT")"
	consistent "level $k" "$OUT"
	st=$(jq -r '.status + " " + (.error.code // "")' <<<"$OUT" 2>/dev/null)
	seen["${st:-none}"]=1
	echo "level $k: exit $rc, $st" >&2; [ -n "${RQ_DEBUG:-}" ] && echo "$OUT" >&2
	rm -f "$DISK/filler"
	check "level $k: git's checks clean" refs_consistent "$ROOT/w"
done
check "some level failed for want of space" test -n "${seen[error io]:-}"
check "some level had room enough" test -n "${seen[ok ]:-}"

section "a worker past --max-deliveries"
require redis-server
start_redis
export REPLAYQ_QUEUE=disk
fresh
REPLAYQ_TEST_HOLD=refs-start start_worker wa --repo-root="$ROOT" --jobs=1 --visibility-timeout=1 \
	--max-deliveries=2
WA=$WORKER_PID
run_rq submit <<<"$job"
KID=$(hold_pid refs-start)
check "worker: filled" fill_to 1
kill -USR1 "$KID"
has_result() { [ "$(rcli EXISTS 'replayq:{disk}:result:D')" = 1 ]; }
check "worker: a result is stored" wait_for "D result" 60 has_result
R=$(rcli GET 'replayq:{disk}:result:D')
check_eq "worker: an io error at the first delivery" "error io 1" \
	"$(jq -r '"\(.status) \(.error.code) \(.attempt)"' <<<"$R")"
consistent "worker" "$R"
check "worker: git's checks clean" refs_consistent "$ROOT/w"
check_eq "worker: one result" 1 "$(rcli XRANGE 'replayq:{disk}:results' - + | grep -cx D)"
check_eq "worker: no intent, no grant left" "0 0" \
	"$(rcli EXISTS 'replayq:{disk}:intent:D') $(rcli EXISTS 'replayq:{disk}:granted:D')"
check_workers_stop "$WA"
finish
