#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `replayq -c <name>=<value>` and GIT_CONFIG_PARAMETERS against upstream
# git: the configuration a command line gives (replay.refAction, the
# committer identity, case-insensitive names, the last value winning, git's
# quoting) and git's errors for keys that cannot be one; stdout, stderr and
# exit status byte for byte. Without upstream git the expected texts
# written here are checked alone.
. "$(dirname "$0")/../lib.sh"

export GIT_COMMITTER_DATE="@1800000000 +0000"
R=$T/r
git init -q -b main "$R"
commit_file "$R" a a "a"
commit_file "$R" b b "b"
commit_file "$R" c c "c"
git -C "$R" branch -q topic

# no oracle needed
run_rq -C "$R" -c replay.refAction=print replay --onto main~2 main~1..topic
check "-c replay.refAction=print: the update is printed" test "${OUT%% *}" = update
check_eq "... and not applied" "$(git -C "$R" rev-parse main)" "$(git -C "$R" rev-parse topic)"
run_rq -C "$R" -c foo replay --onto main~2 main~1..topic
check_eq "-c foo: git's error" "128|error: key does not contain a section: foo" "$RC|${ERR%%$'\n'*}"
run_rq -C "$R" -c
check_eq "-c without a value: a usage error" 129 "$RC"

CASES=("-c foo" "-c =x" "-c a.b.=x" "-c a.b_c=x" "-c replay.refAction=print"
	"-c replay.refAction=print -c user.name=Someone"
	"-c replay.refAction=print -c user.name=X -c user.email=it's!@example.com"
	"-c Replay.RefAction=print" "-c replay.refAction=bogus"
	"-c replay.refAction=update -c replay.refAction=print"
	"-c replay.refAction=print -c replay.refAction=update")
if upstream_git; then
	n=0
	for c in "${CASES[@]}"; do
		# shellcheck disable=SC2206
		set -- $c
		want=$("$UPSTREAM_GIT" -C "$R" "$@" replay --onto main~2 main~1..topic 2>"$T/g.err")
		wrc=$?
		run_rq -C "$R" "$@" replay --onto main~2 main~1..topic
		check_eq "$c: as upstream's" "$wrc|$want|$(cat "$T/g.err")" "$RC|$OUT|$ERR"
		git -C "$R" update-ref refs/heads/topic main
		n=$((n + 1))
	done
	for p in "'replay.refaction'='print'" "'replay.refaction=print'" "'user.name'='A '\\''B'\\'' C' 'replay.refaction'='print'" "bogus"; do
		want=$(GIT_CONFIG_PARAMETERS=$p "$UPSTREAM_GIT" -C "$R" replay --onto main~2 main~1..topic 2>"$T/g.err")
		wrc=$?
		GIT_CONFIG_PARAMETERS=$p run_rq -C "$R" replay --onto main~2 main~1..topic
		check_eq "GIT_CONFIG_PARAMETERS=$p: exit status and stdout as upstream's" "$wrc|$want" "$RC|$OUT"
		check_eq "GIT_CONFIG_PARAMETERS=$p: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
		git -C "$R" update-ref refs/heads/topic main
	done
	echo "config_params: $n -c cases and 4 GIT_CONFIG_PARAMETERS values compared with upstream git"
fi
finish
