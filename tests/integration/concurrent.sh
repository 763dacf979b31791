#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A replay in progress never breaks git commands on the same repository:
# while replayq replays 40 branches again and again (serially and with
# --jobs=2), `git log --all`, `git gc` (git's default expiry), `git
# count-objects` and `git fsck --connectivity-only` run in a loop and must
# all succeed. Afterwards every result is intact: each run printed the same
# updates, the commits it made reachable (refs/rq/<run>/...) are whole, and
# `git fsck --strict` passes.
. "$(dirname "$0")/../lib.sh"

R=$T/repo.git
git init -q --bare -b main "$R"
# old-main with 60 files; 40 branches of 4 commits off it; main 40 commits on
awk 'BEGIN {
	t = 1700000000; mark = 0
	printf "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata 4\nbase\n", ++mark, t
	for (f = 0; f < 60; f++) {
		s = ""; for (l = 0; l < 20; l++) s = s "file " f " line " l "\n"
		printf "M 100644 inline d%d/f%d.txt\ndata %d\n%s", f % 6, f, length(s), s
	}
	base = mark
	printf "reset refs/tags/old-main\nfrom :%d\n", base
	for (b = 1; b <= 40; b++) {
		from = base
		for (c = 1; c <= 4; c++) {
			s = "branch " b " change " c "\n"
			msg = "b" b " c" c
			printf "commit refs/heads/b%d\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n", b, ++mark, t + b * 10 + c, length(msg), msg
			printf "from :%d\nM 100644 inline d%d/new-%d-%d.txt\ndata %d\n%s", from, b % 6, b, c, length(s), s
			from = mark
		}
	}
	from = base
	for (m = 1; m <= 40; m++) {
		s = ""; for (l = 0; l < 20; l++) s = s "file " m " line " l (l == m % 20 ? " upstream" : "") "\n"
		msg = "main " m
		printf "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n", ++mark, t + 1000 + m, length(msg), msg
		printf "from :%d\nM 100644 inline d%d/f%d.txt\ndata %d\n%s", from, m % 6, m, length(s), s
		from = mark
	}
}' </dev/null | git -C "$R" fast-import --quiet
check "corpus made" git -C "$R" rev-parse -q --verify "b40^{commit}" >/dev/null
BR=()
for i in $(seq 1 40); do BR+=("b$i"); done
export RQ_DATE="@1800000000 +0000"
git -C "$R" config gc.auto 0 # only the explicit gc below

# one round of git commands (git_round gc: with a gc; git's own lock
# allows one at a time); failures and their messages go to files
git_round() {
	local f=0
	git -C "$R" log --all --oneline >/dev/null 2>>"$T/git.err" || f=$((f + 1))
	git -C "$R" count-objects -v >/dev/null 2>>"$T/git.err" || f=$((f + 1))
	git -C "$R" fsck --connectivity-only --no-dangling --no-progress >/dev/null 2>>"$T/git.err" ||
		f=$((f + 1))
	if [ "${1:-}" = gc ]; then git -C "$R" gc -q 2>>"$T/git.err" || f=$((f + 1)); fi
	[ "$f" -eq 0 ] || echo "$f" >>"$T/git.fail"
}
: >"$T/git.fail"
# git (without gc) in a loop in the background, at whatever moments it
# falls (random overlap), until the replays are done
(while [ ! -e "$T/stop" ]; do git_round; done) &
GPID=$!
# the replays: 8 runs (serial and --jobs=2), each printing the updates,
# then making them reachable under refs/rq/<run>/ (as a caller applying
# them would). Each run is held on purpose after it has resolved its
# revisions and opened its temporary object directory (before its first
# pick, or its child's), and a whole round of git commands, gc included,
# runs while it is held: the overlap does not depend on speed.
rc=0 held=0
for i in $(seq 1 8); do
	j=$((1 + i % 2)) point=pick
	[ "$j" -eq 2 ] && point=replay-child
	rm -f "$HOLD_DIR"/*
	REPLAYQ_TEST_HOLD=$point GIT_COMMITTER_DATE="$RQ_DATE" "$REPLAYQ" -C "$R" replay --ref-action=print \
		--jobs=$j --onto main ^old-main "${BR[@]}" >"$T/run$i.out" 2>"$T/run$i.err" &
	P=$!
	if pid=$(hold_pid "$point"); then
		git_round gc && held=$((held + 1))
		kill -USR1 "$pid"
	fi
	wait "$P" || rc=1
	sed "s#^update refs/heads/\([^ ]*\) \([0-9a-f]*\) .*#create refs/rq/$i/\1 \2#" "$T/run$i.out" |
		git -C "$R" update-ref --stdin || rc=1
done
touch "$T/stop"
wait "$GPID"
GIT_FAIL=$(awk '{n += $1} END {print n + 0}' "$T/git.fail")
check_eq "git commands during the replays: failures" 0 "$GIT_FAIL"
[ "$GIT_FAIL" -eq 0 ] || cat "$T/git.err" >&2
check_eq "a round of git ran while each replay was held in progress" 8 "$held"
check_eq "every replay and update-ref succeeded" 0 "$rc"
[ "$rc" = 0 ] || tail -n 5 "$T"/run*.err >&2
for i in $(seq 2 8); do
	check_eq "run $i printed what run 1 printed" "$(cat "$T/run1.out")" "$(cat "$T/run$i.out")"
done
check_eq "run 1: 40 updates" 40 "$(grep -c '^update ' "$T/run1.out")"
check_eq "every run's results reachable" 320 "$(git -C "$R" for-each-ref refs/rq | wc -l)"
# the replayed branches are whole: their new commits, trees and blobs
check "replayed history readable" git -C "$R" rev-list --objects refs/rq/8/b40 --not main -- >/dev/null
check_eq "a replayed branch: 4 commits on main" 4 "$(git -C "$R" rev-list --count main..refs/rq/8/b17)"
check "git fsck --strict" git -C "$R" fsck --strict --no-dangling --no-progress
check "no temporary directory left" no_litter "$R"
# and a final gc keeps everything: the results are referenced
git -C "$R" gc -q --prune=now
check "after gc --prune=now: fsck --strict" git -C "$R" fsck --strict --no-dangling --no-progress
check_eq "after gc: run 8's b40 still has its 4 commits" 4 "$(git -C "$R" rev-list --count main..refs/rq/8/b40)"
finish
