#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Revision forms against upstream git replay: the parent shorthands X^!,
# X^@, X^-, X^-N, @{-N}, @{u}/@{upstream}, :/text, X^{/text}, reflog
# entries, ranges, ids, and unknown revisions (stdout, stderr and exit
# status byte for byte). Without upstream git, the checks that need
# no oracle still run.
. "$(dirname "$0")/../lib.sh"

export GIT_COMMITTER_DATE="@1800000000 +0000"
R=$T/r
git init -q -b main "$R"
check_ref_format "$R"
commit_file "$R" f1 1 c1
commit_file "$R" f2 2 c2
git -C "$R" tag base
git -C "$R" checkout -q -b topic
for i in 1 2 3; do commit_file "$R" "t$i" "t$i" "t$i"; done
git -C "$R" checkout -q main
commit_file "$R" m m "main moves"
git -C "$R" checkout -q topic && git -C "$R" checkout -q main # for @{-1}
git -C "$R" branch -q --set-upstream-to=topic main             # for @{u}
TOPIC=$(git -C "$R" rev-parse topic)
FORMS=("topic^!" "topic^-" "topic^-1" "topic^@" "topic~1^!" "topic^-2" "^topic~2 topic"
	"topic~2..topic" "$TOPIC" "nosuch" "main..nosuch" "nosuch^!" "main...topic"
	"main..@{-1}" "topic~1..@{-1}" "main..@{-1}~1" "main@{u}~1..main@{u}" "topic~2..@{upstream}"
	"main..:/t2" "main..topic^{/t2}" "main..topic@{1}" "^nosuch topic" "topic ^nosuch~1"
	"^ topic" "^main^{/nothing} topic")

# no oracle needed: X^! replays X alone and, its name being no ref, updates
# nothing; with --ref it is X alone onto main
run_rq -C "$R" replay --ref-action=print --onto main "topic^!"
check_eq "topic^!: exit 0, nothing to update" "0 " "$RC $OUT"
run_rq -C "$R" replay --ref-action=print --onto main --ref=refs/heads/x "topic^!"
check_eq "topic^! with --ref: one update" 1 "$(echo "$OUT" | grep -c '^update refs/heads/x ')"
new=$(echo "$OUT" | cut -d' ' -f3)
check_eq "topic^! with --ref: one commit on main" 1 "$(git -C "$R" rev-list --count "main..$new")"
check_eq "topic^! with --ref: t3's tree change" "t3" "$(git -C "$R" diff --name-only "main" "$new")"
# @{-1} is the branch checked out before: a ref to update
run_rq -C "$R" replay --ref-action=print --onto main "main..@{-1}"
check_eq "@{-1}: the previous branch is updated" "update refs/heads/topic" "$(echo "$OUT" | cut -d' ' -f1-2)"
run_rq -C "$R" replay --ref-action=print --onto main "topic^-2"
check_eq "topic^-2 (one parent only): 128" 128 "$RC"
check_contains "unknown revision: git's hint" "Use '--' to separate paths from revisions" "$ERR"

if upstream_git; then
	for f in "${FORMS[@]}" ; do
		# shellcheck disable=SC2086
		want=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main $f 2>"$T/g.err")
		wrc=$?
		run_rq -C "$R" replay --ref-action=print --onto main $f
		check_eq "$f: exit status as upstream's" "$wrc" "$RC"
		check_eq "$f: stdout as upstream's" "$want" "$OUT"
		check_eq "$f: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
		want=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main --ref=refs/heads/x $f 2>"$T/g.err")
		wrc=$?
		run_rq -C "$R" replay --ref-action=print --onto main --ref=refs/heads/x $f
		check_eq "$f, --ref: as upstream's" "$wrc $want $(cat "$T/g.err")" "$RC $OUT $ERR"
	done
fi
finish
