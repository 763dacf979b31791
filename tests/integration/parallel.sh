#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq replay --jobs=N: independent branches in forked children. Output,
# ids, exit status and conflict reports equal --jobs=1's; a killed child
# fails the replay with nothing left behind; signals and SIGKILL of the
# parent leave no temporary object directory (after the next run).
. "$(dirname "$0")/../lib.sh"

# gen_repo dir branches "conflict_branches": base of 100 files, main 20
# commits newer, <branches> branches of 3 commits off the base (every 4th
# stacked on the one before), each branch of the list clashing with main.
# data "text": a fast-import data block
data() {
	printf 'data %d\n%s\n' "${#1}" "$1"
}
gen_repo() {
	local r=$1 nb=$2 clash=$3
	git init -q -b main "$r"
	{
		echo "commit refs/heads/main"
		echo "mark :1"
		echo "committer A <a@example.com> 1700000000 +0000"
		data "base"
		for f in $(seq 1 100); do
			echo "M 100644 inline d$((f % 10))/f$f.txt"
			data "$(printf 'file %d\nline 2\nline 3' "$f")"
		done
		echo "reset refs/tags/base"
		echo "from :1"
		echo
		for m in $(seq 1 20); do
			f=$((m * 3))
			echo "commit refs/heads/main"
			echo "committer A <a@example.com> $((1700001000 + m)) +0000"
			data "main $m"
			echo "M 100644 inline d$((f % 10))/f$f.txt"
			data "$(printf 'file %d\nline 2 main\nline 3' "$f")"
		done
		for b in $(seq 1 "$nb"); do
			echo "commit refs/heads/b$b"
			echo "committer A <a@example.com> $((1700002000 + b)) +0000"
			data "b$b.1"
			if [ $((b % 4)) -eq 0 ]; then echo "from refs/heads/b$((b - 1))"; else echo "from :1"; fi
			echo "M 100644 inline new/b$b.txt"
			data "b$b"
			for c in 2 3; do
				echo "commit refs/heads/b$b"
				echo "committer A <a@example.com> $((1700002000 + b)) +0000"
				data "b$b.$c"
				echo "M 100644 inline new/b$b-$c.txt"
				data "c$c"
			done
			if [[ " $clash " == *" $b "* ]]; then
				echo "commit refs/heads/b$b"
				echo "committer A <a@example.com> $((1700002000 + b)) +0000"
				data "clash"
				echo "M 100644 inline d3/f3.txt"
				data "$(printf 'file 3\nline 2 other\nline 3')"
			fi
		done
	} | git -C "$r" fast-import --quiet
}

branches() { for b in $(seq 1 "$1"); do echo "b$b"; done; }

R=$T/par
gen_repo "$R" 40 0
check_ref_format "$R"
mapfile -t BR < <(branches 40)
export RQ_DATE="@1800000000 +0000"
run_rq -C "$R" replay --ref-action=print --jobs=1 --onto main ^base "${BR[@]}"
check_eq "jobs=1: exit 0" 0 "$RC"
ONE=$OUT
check_eq "jobs=1: every branch updated" 40 "$(echo "$ONE" | grep -c '^update refs/heads/b')"
for j in 2 3 4; do
	run_rq -C "$R" replay --ref-action=print --jobs=$j --onto main ^base "${BR[@]}"
	check_eq "jobs=$j: exit 0" 0 "$RC"
	check_eq "jobs=$j: same lines, same order, same ids as jobs=1" "$ONE" "$OUT"
done
run_rq -C "$R" replay --ref-action=print --format=json --jobs=2 --onto main ^base "${BR[@]}"
check_contains "json: ran in 2 children" '"parallel":2' "$OUT"
check_contains "json: 30 independent groups (stacked branches share one)" '"groups":30' "$OUT"
check "no litter" no_litter "$R"
check_eq "no loose objects" 0 "$(git -C "$R" count-objects -v | awk '$1=="count:"{print $2}')"
check "fsck" git -C "$R" fsck --strict --no-progress --no-dangling
# applied: every ref moved
run_rq -C "$R" replay --jobs=2 --onto main ^base "${BR[@]}"
check_eq "update: exit 0" 0 "$RC"
moved=0
while read -r _ ref new _; do [ "$(git -C "$R" rev-parse "$ref")" = "$new" ] && moved=$((moved + 1)); done <<<"$ONE"
check_eq "update: all 40 refs at their new ids" 40 "$moved"

# a conflict in one group: same report whatever the number of children
R2=$T/par2
gen_repo "$R2" 40 17
run_rq -C "$R2" replay --format=json --ref-action=print --jobs=1 --onto main ^base "${BR[@]}"
check_eq "conflict jobs=1: exit 1" 1 "$RC"
C1=$(echo "$OUT" | sed 's/"stats".*//')
for j in 2 4; do
	run_rq -C "$R2" replay --format=json --ref-action=print --jobs=$j --onto main ^base "${BR[@]}"
	check_eq "conflict jobs=$j: exit 1" 1 "$RC"
	check_eq "conflict jobs=$j: same conflict report" "$C1" "$(echo "$OUT" | sed 's/"stats".*//')"
done
check_contains "conflict names the path" '"path":"d3/f3.txt"' "$C1"
check "conflict: no litter" no_litter "$R2"

# several conflicting groups: the one a sequential replay meets first is
# reported, whichever worker met which (every order of the branches)
R4=$T/par4
gen_repo "$R4" 40 "9 22 35"
for order in fwd rev; do
	if [ $order = fwd ]; then mapfile -t BR4 < <(branches 40); else mapfile -t BR4 < <(branches 40 | tac); fi
	run_rq -C "$R4" replay --format=json --ref-action=print --jobs=1 --onto main ^base "${BR4[@]}"
	check_eq "3 conflicts ($order) jobs=1: exit 1" 1 "$RC"
	C1=$(echo "$OUT" | sed 's/"stats".*//')
	for j in 2 3 4; do
		run_rq -C "$R4" replay --format=json --ref-action=print --jobs=$j --onto main ^base "${BR4[@]}"
		check_eq "3 conflicts ($order) jobs=$j: exit 1" 1 "$RC"
		check_eq "3 conflicts ($order) jobs=$j: the same first conflict" "$C1" "$(echo "$OUT" | sed 's/"stats".*//')"
	done
done
check "3 conflicts: no litter" no_litter "$R4"

# a big replay for the kill tests: 300 branches
R3=$T/par3
gen_repo "$R3" 300 0
mapfile -t BIG < <(branches 300)
no_children() { [ -z "$(pgrep -P "$1")" ]; }
children_running() { [ -n "$(pgrep -P "$1")" ]; }

# a child killed: the replay fails, the other children go, nothing is left.
# The children are held before their first pick (core/base/rq_testhook.h), so
# the kill lands while the replay still needs them, whatever the speed.
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=replay-child "$REPLAYQ" -C "$R3" replay --ref-action=print --jobs=2 --onto main ^base "${BIG[@]}" >"$T/out" 2>"$T/err" &
P=$!
KID=$(hold_pid replay-child)
kill -9 "$KID"
wait "$P"
rc=$?
check_eq "killed child: exit 128" 128 "$rc"
check_contains "killed child: message" "replay child died" "$(cat "$T/err")"
check_eq "killed child: nothing printed" "" "$(cat "$T/out")"
check "killed child: no child left" no_children "$P"
check "killed child: no litter" no_litter "$R3"

# SIGINT: stops, cleans up, exit 130 (children held, so it is still running)
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=replay-child "$REPLAYQ" -C "$R3" replay --ref-action=print --jobs=2 --onto main ^base "${BIG[@]}" >"$T/out" 2>"$T/err" &
P=$!
hold_pid replay-child >/dev/null
kill -INT "$P"
wait "$P"
check_eq "SIGINT: exit 130" 130 "$?"
check_eq "SIGINT: nothing printed" "" "$(cat "$T/out")"
check "SIGINT: no litter" no_litter "$R3"
check "SIGINT: no child left" no_children "$P"
# SIGTERM with --jobs=1: held before its first pick
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=pick "$REPLAYQ" -C "$R3" replay --ref-action=print --jobs=1 --onto main ^base "${BIG[@]}" >"$T/out" 2>"$T/err" &
P=$!
hold_pid pick >/dev/null
kill -TERM "$P"
wait "$P"
check_eq "SIGTERM (jobs=1): exit 130" 130 "$?"
check_eq "SIGTERM (jobs=1): nothing printed" "" "$(cat "$T/out")"
check "SIGTERM: no litter" no_litter "$R3"

# SIGKILL of the parent: its children die with it; the next run removes
# the temporary directory once it is old enough
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=replay-child "$REPLAYQ" -C "$R3" replay --ref-action=print --jobs=2 --onto main ^base "${BIG[@]}" >"$T/out" 2>"$T/err" &
P=$!
kids=$(hold_pid replay-child)
if no_litter "$R3"; then not_ok "SIGKILL: a temporary directory exists while it runs"; else ok; fi
kill -9 "$P"
wait "$P" 2>/dev/null
gone() { for k in $kids; do kill -0 "$k" 2>/dev/null && return 1; done; return 0; }
check "SIGKILL: children die with the parent" wait_for "children gone" 10 gone
REPLAYQ_STALE_SECONDS=0 "$REPLAYQ" -C "$R3" replay --ref-action=print --onto main base..b1 >/dev/null
check "SIGKILL: next run removes the stale directory" no_litter "$R3"
# SIGKILL while the pack is written (no fork: no directory): its temporary
# files in objects/pack go with the next run, and no pack is half there
# (b2: objects no run has written yet)
rm -f "$HOLD_DIR"/*
packs_before=$(ls "$R3/.git/objects/pack" | grep -c '^pack-')
REPLAYQ_TEST_HOLD=pack-temps "$REPLAYQ" -C "$R3" replay --ref-action=print --onto main base..b2 >"$T/out" 2>"$T/err" &
P=$!
hold_pid pack-temps >/dev/null
check "pack held: its temporary files are in objects/pack" \
	bash -c "ls '$R3'/.git/objects/pack/tmp_replayq-tmp-$P@*-pack_* '$R3'/.git/objects/pack/tmp_replayq-tmp-$P@*-idx_*"
check "pack held: no temporary directory made" test -z "$(find "$R3/.git/objects" -maxdepth 1 -type d -name 'replayq-tmp-*')"
check "pack held: its owner marker is there" compgen -G "$R3/.git/objects/replayq-tmp-$P@*.owner"
kill -9 "$P"
wait "$P" 2>/dev/null
check_eq "pack killed: no new pack" "$packs_before" "$(ls "$R3/.git/objects/pack" | grep -c '^pack-')"
"$REPLAYQ" -C "$R3" replay --ref-action=print --onto main base..b2 >/dev/null
check "pack killed: the next run removes its temporary files" no_litter "$R3"
check_eq "pack killed: the next run's pack and index are in" "$((packs_before + 2))" "$(ls "$R3/.git/objects/pack" | grep -c '^pack-')"
check "fsck after kills" git -C "$R3" fsck --strict --no-progress --no-dangling

# no process to spare (a user limited to 1 or 2 processes; root is not
# limited, hence a repository owned by nobody): the replay uses the workers
# it could fork, or none, with the same output
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	chmod 711 "$T"
	# the build tree may be out of nobody's reach (a checkout under a
	# private directory): a copy of the binary
	mkdir -m 755 "$T/bin"
	cp "$REPLAYQ" "$T/bin/replayq"
	chmod 755 "$T/bin/replayq"
	RN=$T/parn
	gen_repo "$RN" 40 0
	chown -R nobody "$RN"
	as_nobody() { # nproc args...: replayq as nobody, at most nproc processes
		local n=$1
		shift
		OUT=$(cd "$RN" && HOME=$RN GIT_COMMITTER_DATE="$RQ_DATE" ASAN_OPTIONS=detect_leaks=0 \
			setpriv --reuid=nobody --regid=nogroup --clear-groups \
			bash -c 'ulimit -u "$0" && exec "$@"' "$n" "$T/bin/replayq" "$@" 2>"$T/stderr")
		RC=$?
		ERR=$(cat "$T/stderr")
	}
	as_nobody 1 replay --ref-action=print --jobs=3 --onto main ^base "${BR[@]}"
	check_eq "no fork possible: exit 0 ($ERR)" 0 "$RC"
	check_eq "no fork possible: same output as jobs=1" "$ONE" "$OUT"
	as_nobody 1 replay --ref-action=print --format=json --jobs=3 --onto main ^base "${BR[@]}"
	check_contains "no fork possible: one worker" '"parallel":1' "$OUT"
	as_nobody 2 replay --ref-action=print --format=json --jobs=3 --onto main ^base "${BR[@]}"
	check_eq "one fork possible: exit 0 ($ERR)" 0 "$RC"
	check_contains "one fork possible: two workers" '"parallel":2' "$OUT"
	as_nobody 2 replay --ref-action=print --jobs=3 --onto main ^base "${BR[@]}"
	check_eq "one fork possible: same output as jobs=1" "$ONE" "$OUT"
	check "limited processes: no litter" bash -c "! ls -d '$RN'/.git/objects/replayq-tmp-* 2>/dev/null"
	check "limited processes: a pack was written" bash -c "ls '$RN'/.git/objects/pack/*.pack >/dev/null"
fi

finish
