#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq's packs consolidated (core/odb/rq_odb_repack): replays on one
# repository leave a bounded number of packs, the setting turns it off,
# `replayq maintain` reports packs and bytes; a kill at every step of a
# consolidation (its hold points) leaves every object readable and git
# fsck clean, and the next run finishes the work; a replay that listed the
# packs before a consolidation removed some still finds its objects; a
# `git repack -ad` or `git gc --prune=now` while an update replay's refs
# have not moved yet (its pack kept) loses nothing; platform packs,
# kept packs and packs git's multi-pack-index names are never touched.
. "$(dirname "$0")/../lib.sh"
R=$T/r
make_repo "$R" c
git -C "$R" config gc.auto 0
OBJ=$R/.git/objects
N=0 # replays so far: each prints its tip into $T/tips
: >"$T/tips"

# replay [args...]: one more replay of topic onto main (a new committer
# date: new commits every time), its printed tip kept
replay() {
	N=$((N + 1))
	RQ_DATE="@$((1800000000 + N)) +0000" run_rq -C "$R" "$@" replay --ref-action=print \
		--onto main base..topic
	[ "$RC" = 0 ] && awk '{print $3}' <<<"$OUT" >>"$T/tips"
}
# every printed tip with its commits, trees and blobs there, git fsck clean
all_there() {
	local t
	while read -r t; do
		git -C "$R" rev-list --objects "$t" >/dev/null 2>&1 || {
			echo "missing: $t" >&2
			return 1
		}
	done <"$T/tips"
	fsck_ok "$R"
}
# nothing left by a killed run once the next one is done: no temporary
# file, no .keep, every mark names a pack with its index, no lock
tidy() {
	local m
	no_litter "$R" || return 1
	! ls "$OBJ"/pack/*.keep >/dev/null 2>&1 || return 1
	! ls "$OBJ/replayq/consolidate.lock" >/dev/null 2>&1 || return 1
	for m in "$OBJ"/replayq/*.own; do
		[ -e "$m" ] || continue
		m=$(basename "$m" .own)
		[ -e "$OBJ/pack/$m.idx" ] && [ -e "$OBJ/pack/$m.pack" ] || return 1
	done
}

section "bounded growth"
max=0
p0=$(all_packs)
for i in $(seq 1 40); do
	replay
	n=$(($(all_packs) - p0))
	[ "$n" -gt "$max" ] && max=$n
done
check "40 replays: all ok" test "$(wc -l <"$T/tips")" = 40
check "40 replays: packs added never above the threshold (max $max)" test "$max" -le 12
check "40 replays: fewer than 12 added at the end" test "$(($(all_packs) - p0))" -lt 12
check_eq "40 replays: every pack added is replayq's" "$(($(all_packs) - p0))" "$(own_packs)"
check "40 replays: every result there, fsck clean" all_there
check "40 replays: tidy" tidy

section "the setting turns it off"
before=$(own_packs)
for i in $(seq 1 14); do replay -c replayq.consolidate=false; done
check_eq "replayq.consolidate=false: every replay's pack stays" $((before + 14)) "$(own_packs)"
git -C "$R" config replayq.consolidateAt 4
replay
check "replayq.consolidateAt=4: consolidated at once" test "$(own_packs)" -lt 4
git -C "$R" config --unset replayq.consolidateAt

section "replayq maintain"
for i in $(seq 1 5); do replay -c replayq.consolidate=false; done
packs=$(all_packs)
run_rq -C "$R" maintain --format=json
check_eq "maintain: exit 0" 0 "$RC"
check_eq "maintain: packs before" "$packs" "$(jq .packs_before <<<"$OUT")"
check_eq "maintain: packs after" "$(all_packs)" "$(jq .packs_after <<<"$OUT")"
check "maintain: fewer packs" test "$(jq .packs_after <<<"$OUT")" -lt "$packs"
check_eq "maintain: bytes after are the packs'" "$(cat "$OBJ"/pack/*.pack | wc -c)" "$(jq .bytes_after <<<"$OUT")"
check "maintain: merged some" test "$(jq .merged <<<"$OUT")" -ge 2
run_rq -C "$R" maintain
check_contains "maintain (text): packs before and after" "packs: $(all_packs) -> $(all_packs)" "$OUT"
check "after maintain: every result there, fsck clean" all_there

# --- kills at every step ------------------------------------------------------
# three more packs of replayq's, then a maintain held at point and killed
for point in repack-locked repack-selected repack-kept repack-written repack-deleting \
	repack-deleted repack-done; do
	section "killed at $point"
	for i in 1 2 3; do replay -c replayq.consolidate=false; done
	rm -f "$HOLD_DIR"/*
	REPLAYQ_TEST_HOLD=$point "$REPLAYQ" -C "$R" maintain >/dev/null 2>&1 &
	P=$!
	check "$point: held" hold_pid "$point" >/dev/null
	kill -9 "$P"
	wait "$P" 2>/dev/null
	check "$point: killed, every object readable, fsck clean" all_there
	run_rq -C "$R" maintain
	check_eq "$point: the next maintain finishes" 0 "$RC"
	check "$point: then every object readable, fsck clean" all_there
	check "$point: then nothing left behind" tidy
done

section "killed between the .keep and the move"
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=pack-kept "$REPLAYQ" -C "$R" replay --ref-action=print --onto main s1 >/dev/null 2>&1 &
P=$!
check "pack-kept: held" hold_pid pack-kept >/dev/null
check "pack-kept: its .keep says whose" grep -q "^replayq $P@" "$OBJ"/pack/*.keep
kill -9 "$P"
wait "$P" 2>/dev/null
check "pack-kept: killed, fsck clean" all_there
run_rq -C "$R" maintain
check "pack-kept: the next maintain leaves nothing behind" tidy

# --- a reader that listed the packs before they were consolidated ----------
section "a reader across a consolidation"
# rt: a replayed topic whose commits live in one of replayq's packs and
# whose trees in another (the first replay of the round wrote them)
git -C "$R" checkout -q -b fresh main
commit_file "$R" f.txt "fresh" "fresh start"
git -C "$R" checkout -q main
for i in 1 2 3 4; do
	N=$((N + 1))
	RQ_DATE="@$((1800000000 + N)) +0000" run_rq -C "$R" -c replayq.consolidate=false replay \
		--ref-action=print --onto fresh base..topic
	awk '{print $3}' <<<"$OUT" >>"$T/tips"
done
git -C "$R" update-ref refs/heads/rt "$(tail -1 "$T/tips")"
RQ_DATE="@1900000000 +0000" run_rq -C "$R" replay --ref-action=print --onto main fresh..rt
want=$OUT
check "reader: the undisturbed replay" test -n "$want"
rm -f "$HOLD_DIR"/*
GIT_COMMITTER_DATE="@1900000000 +0000" REPLAYQ_TEST_HOLD=pick "$REPLAYQ" -C "$R" \
	-c replayq.consolidate=false replay --ref-action=print --onto main fresh..rt \
	>"$T/held.out" 2>"$T/held.err" &
P=$!
check "reader: held before its picks" hold_pid pick >/dev/null
run_rq -C "$R" maintain --format=json
check "reader: its packs consolidated meanwhile" test "$(jq .merged <<<"$OUT")" -ge 4
kill -USR1 "$P"
wait "$P"
check_eq "reader: exit 0" 0 "$?"
check_eq "reader: the same result" "$want" "$(cat "$T/held.out")"
check "reader: every object readable, fsck clean" all_there

# --- git's own repack and gc while refs have not moved --------------------
section "git repack -ad and gc --prune=now before the refs move"
for cmd in "repack -adq" "gc -q --prune=now"; do
	rm -f "$HOLD_DIR"/*
	git -C "$R" branch -f "up-${cmd%% *}" topic
	GIT_COMMITTER_DATE="@1950000000 +0000" REPLAYQ_TEST_HOLD=refs-start "$REPLAYQ" -C "$R" \
		replay --onto main "base..up-${cmd%% *}" >/dev/null 2>"$T/up.err" &
	P=$!
	check "$cmd: held before its refs move" hold_pid refs-start >/dev/null
	pack=$(cd "$OBJ/pack" && grep -l "^replayq $P@" ./*.keep | sed 's|^\./||; s|\.keep$||')
	check "$cmd: its pack is kept" test -n "$pack"
	# shellcheck disable=SC2086
	git -C "$R" $cmd
	check "$cmd: the kept pack stays" test -e "$OBJ/pack/$pack.pack"
	kill -USR1 "$P"
	wait "$P"
	check_eq "$cmd: exit 0" 0 "$?"
	new=$(git -C "$R" rev-parse "up-${cmd%% *}")
	check "$cmd: the ref moved" test "$new" != "$(git -C "$R" rev-parse topic)"
	check "$cmd: its commits are there" git -C "$R" rev-list --objects "$new" >/dev/null
	check "$cmd: its .keep is gone" test ! -e "$OBJ/pack/$pack.keep"
	check "$cmd: fsck clean" fsck_ok "$R"
done
: >"$T/tips" # printed results no ref holds: git's gc dropped them

# --- what is not replayq's to remove ------------------------------------------
section "packs that are not replayq's"
run_rq -C "$R" maintain
for i in $(seq 1 6); do replay -c replayq.consolidate=false; done
marked=$(ls "$OBJ"/replayq/*.own | sed 's|.*/||; s|\.own$||' | sort)
kept=$(echo "$marked" | sed -n 1p)
touch "$OBJ/pack/$kept.keep"
promisor=$(echo "$marked" | sed -n 2p)
touch "$OBJ/pack/$promisor.promisor"
# a platform's push: a pack of its own
git -C "$R" checkout -q -b pushed main
commit_file "$R" p.txt push "a push"
git -C "$R" checkout -q main
pushed=$(git -C "$R" rev-parse pushed)
pp=$(printf '%s\n^main\n' "$pushed" | git -C "$R" pack-objects -q --revs "$OBJ/pack/pack")
git -C "$R" prune-packed
run_rq -C "$R" maintain --format=json
check "not replayq's: maintain merged the others" test "$(jq .merged <<<"$OUT")" -ge 2
check "a kept pack stays" test -e "$OBJ/pack/$kept.pack"
check "a promisor pack stays" test -e "$OBJ/pack/$promisor.pack"
check "a pushed pack stays" test -e "$OBJ/pack/pack-$pp.pack"
rm -f "$OBJ/pack/$kept.keep" "$OBJ/pack/$promisor.promisor"
# git's multi-pack-index over everything: its packs are the platform's now
for i in $(seq 1 3); do replay -c replayq.consolidate=false; done
git -C "$R" multi-pack-index write
before=$(ls "$OBJ/pack" | sort)
run_rq -C "$R" maintain --format=json
check_eq "multi-pack-index: nothing merged" 0 "$(jq .merged <<<"$OUT")"
check_eq "multi-pack-index: no pack removed" "$before" "$(ls "$OBJ/pack" | sort)"
replay
check_eq "multi-pack-index: a replay reads through it" 0 "$RC"
check "multi-pack-index: fsck clean" all_there

finish
