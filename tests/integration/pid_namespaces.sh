#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Process identity that survives containers (issue 36 point 6): two PID
# namespaces (unshare --pid --fork: two containers of one pod, one host
# name) share a repository. A process holds an flock on its owner marker
# for as long as it lives, and that, not pid@host, tells the next process
# whether what it finds is a dead owner's:
#  - a replay in one namespace holds its ref locks (pid 1 there); a replay
#    in the other (pid 1 too) meets them: ref_locked, the locks stay, and
#    the first one then moves its refs (before: the second took the first's
#    marker for its own dead predecessor's, removed its locks and moved
#    a ref under it);
#  - a replay in one namespace is held with its temporary pack files
#    written (pid 2 there); a replay in the other (where no pid 2 lives)
#    starts and cleans: the files stay, and the first one's pack goes in;
#  - a replay in one namespace is held with its pack's .keep made (pid 2
#    there); a replay in the other starts and lists the packs: the .keep
#    stays (its maker holds its flock), and the first one's refs move;
#  - once a holder is SIGKILLed, the next replay removes what it left.
# Skipped with a notice where unshare is not permitted. Run a second time on
# reftable repositories (pid_namespaces@reftable), whose one lock is
# tables.list.lock.
. "$(dirname "$0")/../lib.sh"
if ! unshare --pid --fork true 2>"$T/unshare.err"; then
	echo "# notice: unshare --pid is not permitted ($(cat "$T/unshare.err")): skipped" >&2
	finish
fi
make_abc_repo "$T/orig"
export RQ_DATE="@1800000000 +0000" GIT_COMMITTER_DATE="@1800000000 +0000"
cp -a "$T/orig" "$T/ref"
cp -a "$T/orig" "$T/r"
check_ref_format "$T/r"
orig=$(branch_refs "$T/r")
run_rq -C "$T/ref" replay --onto main ^base a b c
check_eq "undisturbed: exit 0" 0 "$RC"
# the host pid of the newest process below pid (unshare, then its child)
below() {
	local p=$1 c
	while c=$(cat "/proc/$p/task/$p/children" 2>/dev/null) && c=${c% } && [ -n "$c" ]; do
		p=${c##* }
	done
	echo "$p"
}
held_at() { compgen -G "$HOLD_DIR/$1.*" >/dev/null; }

section "ref locks: the same pid in two namespaces"
REPLAYQ_TEST_HOLD=refs-locked unshare --pid --fork "$REPLAYQ" -C "$T/r" replay --onto main ^base a b c \
	>"$T/a.out" 2>"$T/a.err" &
UA=$!
check "the first is held with its locks" wait_for "a hold" 60 held_at refs-locked
check_eq "it is pid 1 in its namespace" "$HOLD_DIR/refs-locked.1" "$(ls "$HOLD_DIR"/refs-locked.*)"
A=$(below "$UA")
N=$(locks_of 3)
check_eq "its $N locks" "$N" "$(ref_locks "$T/r" | wc -l)"
unshare --pid --fork "$REPLAYQ" -C "$T/r" replay --onto main ^base a >"$T/b.out" 2>"$T/b.err"
check_eq "the second, pid 1 too: refused" 128 "$?"
lock=$(foreign_lock "$T/r" refs/heads/a)
check_contains "... the lock named" "${lock#"$T/r/.git/"}' exists" "$(cat "$T/b.err")"
check_eq "the first's locks stay" "$N" "$(ref_locks "$T/r" | wc -l)"
check_eq "no ref moved" "$orig" "$(branch_refs "$T/r")"
kill -USR1 "$A"
wait "$UA"
check_eq "the first goes on: exit 0" 0 "$?"
check_eq "its refs, those of an undisturbed run" "$(branch_refs "$T/ref")" "$(branch_refs "$T/r")"
check_eq "no lock left" "" "$(ref_locks "$T/r")"
check_eq "no marker left" "" "$(ls "$T/r/.git" | grep replayq-refs-)"

section "temporary pack files: a pid the other namespace does not have"
cp -a "$T/orig" "$T/p"
rm -f "$HOLD_DIR"/*
packs=$(ls "$T/p/.git/objects/pack" | grep -c '^pack-.*\.pack$')
# bash is pid 1 there, replayq pid 2
REPLAYQ_TEST_HOLD=pack-temps unshare --pid --fork bash -c '"$0" -C "$1" replay --onto main ^base a b c; exit $?' \
	"$REPLAYQ" "$T/p" >"$T/c.out" 2>"$T/c.err" &
UC=$!
check "the first is held with its pack files" wait_for "c hold" 60 held_at pack-temps
check_eq "it is pid 2 in its namespace" "$HOLD_DIR/pack-temps.2" "$(ls "$HOLD_DIR"/pack-temps.*)"
C=$(below "$UC")
temps=$(ls "$T/p/.git/objects/pack" | grep -c '^tmp_replayq-tmp-2@')
check_eq "its two temporary files" 2 "$temps"
unshare --pid --fork "$REPLAYQ" -C "$T/p" replay --ref-action=print --onto main ^base a >/dev/null 2>"$T/d.err"
check_eq "the second (no pid 2 lives there) runs" 0 "$?"
check_eq "the first's temporary files stay" 2 "$(ls "$T/p/.git/objects/pack" | grep -c '^tmp_replayq-tmp-2@')"
kill -USR1 "$C"
wait "$UC"
check_eq "the first goes on: exit 0" 0 "$?"
check_eq "its pack and the second's went in" $((packs + 2)) "$(ls "$T/p/.git/objects/pack" | grep -c '^pack-.*\.pack$')"
check_eq "its refs, those of an undisturbed run" "$(branch_refs "$T/ref")" "$(branch_refs "$T/p")"
check "no litter" no_litter "$T/p"
check "fsck" fsck_ok "$T/p"

section "a pack's .keep: a pid the other namespace does not have"
cp -a "$T/orig" "$T/q"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=pack-kept unshare --pid --fork bash -c '"$0" -C "$1" replay --onto main ^base a b c; exit $?' \
	"$REPLAYQ" "$T/q" >/dev/null 2>"$T/e.err" &
UE=$!
check "the first is held with its .keep" wait_for "e hold" 60 held_at pack-kept
E=$(below "$UE")
keep=$(grep -l '^replayq 2@' "$T/q/.git/objects/pack/"*.keep)
check "its .keep names pid 2" test -n "$keep"
unshare --pid --fork "$REPLAYQ" -C "$T/q" replay --ref-action=print --onto main ^base a >/dev/null 2>"$T/f.err"
check_eq "the second (no pid 2 lives there) runs" 0 "$?"
check "the first's .keep stays" test -e "$keep"
kill -USR1 "$E"
wait "$UE"
check_eq "the first goes on: exit 0" 0 "$?"
check_eq "its refs, those of an undisturbed run" "$(branch_refs "$T/ref")" "$(branch_refs "$T/q")"
check_eq "no .keep left" "" "$(ls "$T/q/.git/objects/pack" | grep '\.keep$')"
check "fsck" fsck_ok "$T/q"

section "a holder killed: the next replay removes what it left"
# kill_held dir point: a replay in a namespace of its own, held at point
# in dir, SIGKILLed there
kill_held() {
	local u
	rm -f "$HOLD_DIR"/*
	REPLAYQ_TEST_HOLD=$2 unshare --pid --fork "$REPLAYQ" -C "$1" replay --onto main ^base a b c \
		>/dev/null 2>&1 &
	u=$!
	wait_for "$2 hold" 60 held_at "$2"
	kill -9 "$(below "$u")"
	wait "$u" 2>/dev/null
}
cp -a "$T/orig" "$T/k"
kill_held "$T/k" refs-locked
check_eq "killed with its locks: they are left" "$N" "$(ref_locks "$T/k" | wc -l)"
check "... with its marker" compgen -G "$T/k/.git/replayq-refs-1@*.owner"
unshare --pid --fork "$REPLAYQ" -C "$T/k" replay --onto main ^base a b c 2>"$T/k.err"
check_eq "the next replay (pid 1 too): exit 0" 0 "$?"
check_eq "... the dead owner's locks and marker removed" "" \
	"$(ref_locks "$T/k")$(ls "$T/k/.git" | grep replayq-refs-)"
check_eq "... the refs of an undisturbed run" "$(branch_refs "$T/ref")" "$(branch_refs "$T/k")"
check "... git's checks clean" refs_consistent "$T/k"
cp -a "$T/orig" "$T/k2"
kill_held "$T/k2" pack-temps
check "killed with its pack files: they are left" compgen -G "$T/k2/.git/objects/pack/tmp_replayq-tmp-*"
unshare --pid --fork "$REPLAYQ" -C "$T/k2" replay --ref-action=print --onto main ^base a >/dev/null 2>&1
check "the next replay removes them and the marker" no_litter "$T/k2"
check_eq "... no marker left" "" "$(ls "$T/k2/.git/objects" | grep '\.owner$')"
cp -a "$T/orig" "$T/k3"
kill_held "$T/k3" pack-kept
check "killed with its .keep: it is left" compgen -G "$T/k3/.git/objects/pack/*.keep"
unshare --pid --fork "$REPLAYQ" -C "$T/k3" replay --ref-action=print --onto main ^base a >/dev/null 2>&1
check_eq "the next replay removes it" "" "$(ls "$T/k3/.git/objects/pack" | grep '\.keep$')"
check "... and fsck is clean" fsck_ok "$T/k3"
finish
