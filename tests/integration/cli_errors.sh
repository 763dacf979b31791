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

# upstream t3650 test 5, byte for byte: the error line, then the usage text
# `replay -h` prints, with nothing between them
{
	echo "error: exactly one of --onto, --advance, or --revert is required"
	"$REPLAYQ" replay -h
} >"$T/expect"
"$REPLAYQ" -C "$R" replay main..topic 2>"$T/actual"
check "t3650 test 5: the usage error as the test expects it" cmp "$T/expect" "$T/actual"
# an option's value that is wrong: git's line alone (no usage text)
for a in --onto --contained=x --ref-action; do
	run_rq -C "$R" replay "$a"
	check_eq "$a: 129" 129 "$RC"
	if [ "$HAVE_GIT" = 1 ]; then
		"$UPSTREAM_GIT" -C "$R" replay "$a" 2>"$T/g.err"
		check_eq "$a: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
	fi
done

# --format=json: the JSON object on stdout whatever the outcome, usage errors
# and no repository included (stderr and exit status as without it)
require jq
json_error() { # what exit-status code args...
	local what=$1 want_rc=$2 code=$3
	shift 3
	run_rq "$@"
	check_eq "json, $what: exit status" "$want_rc" "$RC"
	check_eq "json, $what: an error object" "error $code" "$(jq -r '.status + " " + .error.code' <<<"$OUT")"
	check "json, $what: git's words on stderr too" [ -n "$ERR" ]
}
json_error "no mode" 129 usage -C "$R" replay --format=json main..topic
json_error "no value" 129 usage -C "$R" replay --format=json --onto
json_error "--format after the bad option" 129 usage -C "$R" replay --contained=x --format json
json_error "two modes" 128 usage -C "$R" replay --format=json --onto=main --advance=main main..topic
json_error "bad --jobs" 129 usage -C "$R" replay --format=json --jobs=0 --onto main main..topic
mkdir -p "$T/norepo"
(cd "$T/norepo" && GIT_CEILING_DIRECTORIES=$T json_error "outside a repository" 128 bad_repo \
	replay --format=json --onto main main..topic; exit "$FAIL") || FAIL=$((FAIL + 1))
check_eq "json, a usage error's message" "exactly one of --onto, --advance, or --revert is required" \
	"$("$REPLAYQ" -C "$R" replay --format=json main..topic 2>/dev/null | jq -r .error.message)"

# reflog messages name the branch as given; a revert's author is the
# current author (GIT_AUTHOR_*), not the committer: ids as upstream's
for tool in replayq git; do
	rm -rf "$T/c-$tool" && cp -r "$R" "$T/c-$tool"
	git -C "$T/c-$tool" branch -q tgt main && git -C "$T/c-$tool" branch -q rv topic
done
idents() {
	GIT_AUTHOR_NAME=Au GIT_AUTHOR_EMAIL=au@example.com GIT_AUTHOR_DATE="@1800000100 +0100" \
		GIT_COMMITTER_NAME=Co GIT_COMMITTER_EMAIL=co@example.com "$@"
}
idents "$REPLAYQ" -C "$T/c-replayq" replay --advance tgt main..topic
idents "$REPLAYQ" -C "$T/c-replayq" replay --revert rv topic~1..topic
check_eq "advance: reflog names the branch as given" "replay --advance tgt" "$(git -C "$T/c-replayq" reflog -1 --format=%gs tgt)"
check_eq "revert: reflog names the branch as given" "replay --revert rv" "$(git -C "$T/c-replayq" reflog -1 --format=%gs rv)"
check_eq "revert: the author is the current author" "Au au@example.com 1800000100 +0100|Co" "$(git -C "$T/c-replayq" log -1 --format='%an %ae %at %ad|%cn' --date=format:%z rv)"
if [ "$HAVE_GIT" = 1 ]; then
	idents "$UPSTREAM_GIT" -C "$T/c-git" replay --advance tgt main..topic
	idents "$UPSTREAM_GIT" -C "$T/c-git" replay --revert rv topic~1..topic
	for b in tgt rv; do
		check_eq "$b: same id as upstream" "$(git -C "$T/c-git" rev-parse $b)" "$(git -C "$T/c-replayq" rev-parse $b)"
		check_eq "$b: same reflog message as upstream" "$(git -C "$T/c-git" reflog -1 --format=%gs $b)" "$(git -C "$T/c-replayq" reflog -1 --format=%gs $b)"
	done
fi

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
