#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Revision-walk options against upstream git replay: ref sets (--all,
# --branches, --tags, --remotes, --glob, --exclude, --not), commit filters
# (--author, --committer, --grep, --invert-grep, -i, --since, --until,
# --no-merges, --merges), counts (-n, --max-count, --skip), --first-parent,
# --ancestry-path[=<commit>], the orders git overrides with a warning, and
# pathspecs after "--" (git replay takes only paths of the working tree):
# stdout, stderr and exit status byte for byte. Where the walk selects a
# merge commit, upstream refuses ("replaying merge commits is not supported
# yet!") and replayq replays it (integration/merges checks how): there the
# other refs' updates must be upstream's without the branch that holds the
# merge. Without upstream git, the checks that need no oracle still run.
. "$(dirname "$0")/../lib.sh"

export GIT_COMMITTER_DATE="@1800000000 +0000"
R=$T/r
git init -q -b main "$R"
check_ref_format "$R"
commit_file "$R" a a "base a"
commit_file "$R" b b "base b"
git -C "$R" checkout -q -b t1
commit_file "$R" c c "t1 c"
GIT_AUTHOR_NAME=Bob GIT_AUTHOR_EMAIL=bob@example.com commit_file "$R" d d "t1 d by Bob"
commit_file "$R" e e "t1 e"
git -C "$R" tag v1 t1~1
git -C "$R" checkout -q -b t2 main
commit_file "$R" g g "t2 g"
commit_file "$R" h h "t2 h"
git -C "$R" checkout -q -b feat/x main
commit_file "$R" x x "feat x"
# a topic with a merge in it: --first-parent and --no-merges walk around it
git -C "$R" checkout -q -b m main
commit_file "$R" m1 m1 "m one"
git -C "$R" checkout -q -b side
commit_file "$R" s1 s1 "side one"
git -C "$R" checkout -q m
commit_file "$R" m2 m2 "m two"
tick
git -C "$R" merge -q --no-ff -m "merge side" side
commit_file "$R" m3 m3 "m three"
git -C "$R" checkout -q main
commit_file "$R" z z "main moves"
git -C "$R" update-ref refs/remotes/origin/t2 t2

CASES=("--branches ^main" "--exclude=m --branches ^main" "--all --not main" "--branches=t* ^main" "--branches=feat ^main"
	"--exclude=t2 --branches ^main" "--exclude=refs/heads/t* --all ^main" "--tags ^main" "main..v1"
	"--remotes ^main" "--glob=heads/t* ^main" "--glob=refs/remotes/* ^main" "--not main --not t1"
	"--author=Bob main..t1" "--author bob -i main..t1" "--committer=Mitter main..t1"
	"--grep=d main..t1" "--grep=E -i main..t1" "--invert-grep --grep=e main..t1"
	"--grep=^t1 main..t1" "--since=$((TICK - 600)) main..t1" "--until=@$((TICK - 600)) main..t1"
	"-n 2 main..t1" "-n1 main..t1" "-2 main..t1" "--max-count=1 main..t1" "--skip=1 main..t1"
	"--skip=1 -n 1 --branches ^main" "--first-parent main..m" "main..m" "--no-merges main..m"
	"--merges main..m" "--ancestry-path main~1..t1" "--ancestry-path side..m"
	"--ancestry-path=t1~1 main..t1" "--topo-order main..t1" "--date-order main..t1"
	"--reverse --author-date-order main..t1" "--contained --branches ^main"
	"--simplify-by-decoration main..t1" "--grep=[ main..t1" "--since=garbage main..t1"
	"--max-count=x main..t1" "--bogus main..t1" "-E --grep=t1.(c|e) main..t1" "-F --grep=t1. main..t1"
	"--all-match --grep=t1 --grep=e main..t1" "--grep=t1 --grep=e main..t1"
	"main..t1 -- a" "main..t1 -- z" "--ref=refs/heads/p main..t1 -- a" "main..t1 -- c"
	"main..t1 -- a nosuch" "--ref=refs/heads/p --author=nobody main..t1" "--ref=refs/heads/p main..main")

# no oracle needed
run_rq -C "$R" replay --ref-action=print --onto main --exclude=m --branches ^main
check_eq "--branches: every branch with commits to replay, m excluded" "refs/heads/feat/x refs/heads/side refs/heads/t1 refs/heads/t2" "$(echo "$OUT" | cut -d' ' -f2 | sort | paste -sd' ')"
run_rq -C "$R" replay --ref-action=print --onto main --author=Bob main..t1
check_eq "--author: the tip is not Bob's, nothing to update" "0 " "$RC $OUT"
run_rq -C "$R" replay --ref-action=print --onto main --author=Bob --ref=refs/heads/only-bob main..t1
new=$(echo "$OUT" | cut -d' ' -f3)
check_eq "--author with --ref: Bob's commit alone onto main" "t1 d by Bob" "$(git -C "$R" log -1 --format=%s "$new")"
check_eq "... directly on main" "$(git -C "$R" rev-parse main)" "$(git -C "$R" rev-parse "$new~1")"
run_rq -C "$R" replay --ref-action=print --onto main main..m
check_eq "a merge in the range: replayed" 0 "$RC"
run_rq -C "$R" replay --ref-action=print --onto main --no-merges main..m
check_eq "--no-merges: replayed around it" 0 "$RC"
run_rq -C "$R" replay --ref-action=print --onto main --simplify-by-decoration main..t1
check_contains "an option a replay does not take: named" "'--simplify-by-decoration' is not supported" "$ERR"

# upstream refused case $1 for its merge (its stderr in $T/g.err): replayq
# replays it, warns as git does, and moves the other refs as upstream does
# without the branch m, where the ref set allows leaving it out ($2: 1)
merge_refused() {
	local others
	check_eq "$1: the merge replayed" 0 "$RC"
	check_eq "$1: git's warnings, no error" "$(grep -v '^fatal: ' "$T/g.err")" "$ERR"
	[ "$2" = 1 ] || return 0
	# shellcheck disable=SC2086
	others=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main --exclude=m \
		--exclude=refs/heads/m $1 2>/dev/null)
	check_eq "$1: the other refs as upstream's" "$others" "$(echo "$OUT" | grep -v ' refs/heads/m ')"
}

if upstream_git; then
	for c in "${CASES[@]}"; do
		# shellcheck disable=SC2086
		want=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main $c 2>"$T/g.err")
		wrc=$?
		# shellcheck disable=SC2086
		run_rq -C "$R" replay --ref-action=print --onto main $c
		if grep -q "replaying merge commits is not supported yet!" "$T/g.err"; then
			case " $c " in
			*--skip=*) merge_refused "$c" 0 ;; # the selection depends on m
			*--branches* | *--all*) merge_refused "$c" 1 ;;
			*) merge_refused "$c" 0 ;;
			esac
			continue
		fi
		case $c in
		--simplify-by-decoration* | --grep=\[* | --since=garbage* | --max-count=x*)
			# not taken (this option; a date with no word git knows,
			# which git reads as "now") or refused with replayq's own
			# words: an error, never a different replay
			check "$c: refused" test "$RC" -ne 0
			check_eq "$c: nothing printed" "" "$OUT"
			continue
			;;
		esac
		check_eq "$c: exit status as upstream's" "$wrc" "$RC"
		check_eq "$c: stdout as upstream's" "$want" "$OUT"
		check_eq "$c: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
	done
	# pathspecs that pick commits out: the paths exist in t1's working tree
	git -C "$R" checkout -q t1
	for c in "main..t1 -- d" "main..t1 -- c e" "--ref=refs/heads/p main..t1 -- d" "main..t1 -- e nosuch"; do
		# shellcheck disable=SC2086
		want=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main $c 2>"$T/g.err")
		wrc=$?
		# shellcheck disable=SC2086
		run_rq -C "$R" replay --ref-action=print --onto main $c
		check_eq "t1 checked out, $c: as upstream's" "$wrc $want $(cat "$T/g.err")" "$RC $OUT $ERR"
	done
	git -C "$R" checkout -q main
	# approximate dates, against a "now" a day and 30 s after t1's first
	# commit (GIT_TEST_DATE_NOW, which both read): "yesterday" falls
	# between its first and second commit
	now=$(($(git -C "$R" log -1 --format=%ct t1~2) + 86400 + 30))
	for c in "--since=yesterday main..t1" "--since=1.day.ago main..t1" "--until=yesterday main..t1" \
		"--since=24.hours.ago --until=23.hours.58.minutes.ago main..t1" "--since=2.days.ago main..t1" \
		"--since=last.week --branches ^main" "--ref=refs/heads/p --until=1440.minutes.ago main..t1"; do
		# shellcheck disable=SC2086
		want=$(GIT_TEST_DATE_NOW=$now "$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main $c 2>"$T/g.err")
		wrc=$?
		# shellcheck disable=SC2086
		GIT_TEST_DATE_NOW=$now run_rq -C "$R" replay --ref-action=print --onto main $c
		if grep -q "replaying merge commits is not supported yet!" "$T/g.err"; then
			check_eq "$c (approximate): the merge replayed" 0 "$RC"
			continue
		fi
		check_eq "$c (approximate): as upstream's" "$wrc $want $(cat "$T/g.err")" "$RC $OUT $ERR"
	done
	# and they select: "yesterday" keeps t1's last two commits of three
	all=$("$UPSTREAM_GIT" -C "$R" rev-list main..t1 | wc -l)
	some=$(GIT_TEST_DATE_NOW=$now "$UPSTREAM_GIT" -C "$R" rev-list --since=yesterday main..t1 | wc -l)
	check_eq "--since=yesterday leaves t1's first commit out" "3 2" "$all $some"
	GIT_TEST_DATE_NOW=$now run_rq -C "$R" replay --ref-action=print --onto main --ref=refs/heads/p \
		--since=yesterday main..t1
	check_eq "... and replayq replays the two others" "t1 e|t1 d by Bob" \
		"$(git -C "$R" log -2 --format=%s "$(echo "$OUT" | cut -d' ' -f3)" | paste -sd'|')"
fi
# a broken ref in a set (garbage, an id of no object) is git's "bad object
# <name as the set names it>" unless excluded; a dangling symref is left out
if upstream_git; then
	for kind in garbage missing dangling; do
		case $kind in
		garbage) echo garbage >"$R/.git/refs/heads/zz" ;;
		missing) printf "%0${HEXSZ}d\n" 1 >"$R/.git/refs/heads/zz" ;;
		dangling) echo "ref: refs/heads/nothing" >"$R/.git/refs/heads/zz" ;;
		esac
		# (m, a merge upstream refuses, left out)
		for c in "--exclude=m --branches ^main" "--exclude=refs/heads/m --all ^main" \
			"--exclude=refs/heads/m --glob=refs/heads/* ^main" \
			"--exclude=zz --exclude=m --branches ^main" "--branches=z* ^main"; do
			# shellcheck disable=SC2086
			want=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main $c 2>"$T/g.err")
			wrc=$?
			# shellcheck disable=SC2086
			run_rq -C "$R" replay --ref-action=print --onto main $c
			check_eq "$kind ref zz, $c: as upstream's" "$wrc $want $(cat "$T/g.err")" "$RC $OUT $ERR"
		done
		rm -f "$R/.git/refs/heads/zz"
	done
fi
# a pathspec keeps the commits that change it (no oracle needed)
git -C "$R" checkout -q t1
run_rq -C "$R" replay --ref-action=print --onto main --ref=refs/heads/p main..t1 -- d
check_eq "-- d: Bob's commit alone" "t1 d by Bob|$(git -C "$R" rev-parse main)" "$(git -C "$R" log -1 --format='%s|%P' "$(echo "$OUT" | cut -d' ' -f3)")"
git -C "$R" checkout -q main
finish
