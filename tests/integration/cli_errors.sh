#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Errors and option checks of `replayq replay` against upstream git replay,
# case by case: exit status, stdout, and the first line of stderr (where
# git prints its own usage text next, replayq prints its own). Without
# upstream git the expected texts written here are checked alone.
. "$(dirname "$0")/../lib.sh"

export GIT_COMMITTER_DATE="@1800000000 +0000"
R=$T/r
git init -q -b main "$R"
commit_file "$R" f1 1 c1
git -C "$R" checkout -q -b topic
commit_file "$R" t1 t1 t1
commit_file "$R" t2 t2 t2
git -C "$R" branch -q t2 topic~1
git -C "$R" checkout -q main
commit_file "$R" m m "main moves"
TOPIC=$(git -C "$R" rev-parse topic)

# args|expected exit|expected first line of stderr (checked without the oracle too)
cat >"$T/cases" <<EOT
main..topic|129|error: exactly one of --onto, --advance, or --revert is required
--advance=main main..topic main..t2|128|fatal: '--advance' cannot be used with multiple revision ranges because the ordering would be ill-defined
--advance=main main..topic refs/heads/topic|128|fatal: '--advance' cannot be used with multiple revision ranges because the ordering would be ill-defined
--revert=main main..topic main..t2|128|fatal: '--revert' cannot be used with multiple revision ranges because the ordering would be ill-defined
--onto main --ref=refs/heads/x main..topic main..t2|128|error: '--ref' cannot be used with multiple revision ranges
--onto main --ref=refs/heads/x main..topic main~1..topic|0|
--onto main --ref=refs/heads/x main..topic $TOPIC|0|
--onto main --ref=x main..topic|128|error: 'x' is not a valid refname
--onto main --ref=HEAD main..topic|128|error: 'HEAD' is not a valid refname
--onto main --ref=refs/heads/a..b main..topic|128|error: 'refs/heads/a..b' is not a valid refname
--onto=nosuch main..topic|128|fatal: 'nosuch' is not a valid commit-ish for --onto
--onto= main..topic|128|fatal: '' is not a valid commit-ish for --onto
--advance=nosuch main..topic|128|fatal: argument to --advance must be a reference
--ref-action=bogus --onto main main..topic|128|fatal: invalid --ref-action value: 'bogus'
--onto main --advance=main main..topic|128|fatal: options '--onto' and '--advance' cannot be used together
EOT
if upstream_git; then HAVE_GIT=1; else HAVE_GIT=0; fi
while IFS='|' read -r args want_rc want_err; do
	# shellcheck disable=SC2086
	run_rq -C "$R" replay --ref-action=print $args
	[[ $args == --ref-action=* ]] && { run_rq -C "$R" replay $args; }
	check_eq "$args: exit status" "$want_rc" "$RC"
	check_eq "$args: first line of stderr" "$want_err" "$(head -1 <<<"$ERR")"
	[ "$HAVE_GIT" = 1 ] || continue
	if [[ $args == --ref-action=* ]]; then
		# shellcheck disable=SC2086
		gout=$("$UPSTREAM_GIT" -C "$R" replay $args 2>"$T/g.err")
	else
		# shellcheck disable=SC2086
		gout=$("$UPSTREAM_GIT" -C "$R" replay --ref-action=print $args 2>"$T/g.err")
	fi
	grc=$?
	check_eq "$args: exit status as upstream's" "$grc" "$RC"
	check_eq "$args: stdout as upstream's" "$gout" "$OUT"
	check_eq "$args: first line of stderr as upstream's" "$(head -1 "$T/g.err")" "$(head -1 <<<"$ERR")"
done <"$T/cases"

# replay.refAction: git's words for a bad value
git -C "$R" config replay.refAction bogus
run_rq -C "$R" replay --onto main main..topic
check_eq "bad replay.refAction: 128" 128 "$RC"
check_eq "bad replay.refAction: git's words" "fatal: invalid replay.refAction value: 'bogus'" "$ERR"
if [ "$HAVE_GIT" = 1 ]; then
	"$UPSTREAM_GIT" -C "$R" replay --onto main main..topic 2>"$T/g.err"
	check_eq "bad replay.refAction: as upstream" "$(cat "$T/g.err")" "$ERR"
fi
finish
