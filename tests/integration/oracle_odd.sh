#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# oracle_odd.sh: replayq against upstream `git replay` on old and unusual
# commits, byte for byte.
#
# For each seed, odd_commits.py (next to this file) writes a small history
# of unusual trees and commits as loose objects, all seeds into one
# repository: modes 100664, 100600, 100775, 120000, 160000, zero-padded
# 040000 in changed and unchanged directories; "encoding" headers over text
# in that encoding (Latin-1, ISO-8859-x, Shift_JIS, EUC-JP, ISO-2022-JP,
# KOI8-R, CP1252, UTF-16, unknown and wrong names); Latin-1 bytes without a
# header; extra headers (change-id, mergetag, unknown, a key alone, a key
# with an empty value), signatures; messages without a trailing newline,
# empty, missing, with leading blank lines, CRLF, a NUL byte, Revert
# subjects (see the generator). Every 5th seed runs with -c
# i18n.commitEncoding=ISO-8859-1, every 7th with -c
# i18n.logOutputEncoding=ISO-8859-1 (which git replay does not read).
#
# Each history is replayed by replayq and by upstream git replay, in print
# mode, in every mode: --onto the upstream branch and --onto the topic's own
# base (the picks take the tree unchanged), down to the root onto an empty
# tree, --advance a branch at each, and --revert of the topic on itself;
# stdout (the new commit ids), stderr (git's warning for commits that are
# not UTF-8) and the exit status must be the same.
#
# Environment: RQ_ODD_SEEDS=N (default 40), RQ_ODD_FIRST=S (default 1),
# RQ_ODD_KEEP=DIR (copy the repository there when a case disagrees).
. "$(dirname "$0")/../lib.sh"

require python3
if ! upstream_git; then
	finish
fi
GEN=$(dirname "$0")/odd_commits.py
SEEDS=${RQ_ODD_SEEDS:-40}
FIRST=${RQ_ODD_FIRST:-1}
KEEP=${RQ_ODD_KEEP:-}
export GIT_COMMITTER_DATE="@1800000000 +0000" GIT_AUTHOR_DATE="@1800000100 +0000"
CASES=0

# same what args...: replayq and upstream git agree byte for byte
same() {
	local what=$1 grc
	shift
	"$UPSTREAM_GIT" -C "$R" "${CFG[@]}" replay --ref-action=print "$@" >"$T/g.out" 2>"$T/g.err"
	grc=$?
	"$REPLAYQ" -C "$R" "${CFG[@]}" replay --ref-action=print "${QOPTS[@]}" "$@" >"$T/q.out" \
		2>"$T/q.err"
	RC=$?
	CASES=$((CASES + 1))
	if [ "$RC" = "$grc" ] && cmp -s "$T/g.out" "$T/q.out" && cmp -s "$T/g.err" "$T/q.err"; then
		ok
		return
	fi
	not_ok "seed $SEED: $what: ${CFG[*]} replay $*: exit $RC (git $grc)"
	diff "$T/g.out" "$T/q.out" | head -5 >&2
	diff "$T/g.err" "$T/q.err" | head -5 >&2
	[ -n "$KEEP" ] && mkdir -p "$KEEP" && rm -rf "$KEEP/odd.git" && cp -a "$R" "$KEEP/odd.git"
}

QOPTS=()
R=$T/odd.git
git init -q --bare -b main "$R"
python3 "$GEN" "$R" "$FIRST" "$SEEDS" | git -C "$R" update-ref --stdin ||
	not_ok "the generator"
check_ref_format "$R"
for SEED in $(seq "$FIRST" $((FIRST + SEEDS - 1))); do
	CFG=()
	[ $((SEED % 5)) = 0 ] && CFG+=(-c i18n.commitEncoding=ISO-8859-1)
	[ $((SEED % 7)) = 0 ] && CFG+=(-c i18n.logOutputEncoding=ISO-8859-1)
	s=s$SEED
	same "onto upstream" --onto "$s/up" "$s/base..$s/topic"
	same "onto its own base" --onto "$s/base" "$s/base..$s/topic"
	same "down to the root" --onto "$s/empty" "$s/topic"
	same "advance at upstream" --advance "$s/odd-up" "$s/base..$s/topic"
	same "advance at its base" --advance "$s/odd-base" "$s/base..$s/topic"
	same "revert" --revert "$s/odd-topic" "$s/base..$s/topic"
done
check "compared 6 cases a seed" [ "$CASES" -eq $((SEEDS * 6)) ]
# every seed's topic down to the root at once, replayq with two workers
# (independent groups): the same output and the same warnings as upstream's
# one process
CFG=()
QOPTS=(--jobs=2)
SEED=all
# shellcheck disable=SC2046
same "every topic at once, two workers" --onto "s$FIRST/empty" $(seq -f "s%g/topic" "$FIRST" $((FIRST + SEEDS - 1)))

# Warnings and a conflict with two workers: branches a (three commits, one
# message in Latin-1), b (its second commit conflicts with up) and c (five
# Latin-1 messages) are independent groups, walked a, b, c (their tips by
# date). git stops at b's conflict after one warning; a worker that picked
# all of c must not add c's five.
R=$T/par.git
git init -q --bare -b main "$R"
blob() { printf '%s\n' "$1" | git -C "$R" hash-object -w --stdin; }
tree() { # name=content...
	local e
	for e in "$@"; do printf '100644 blob %s\t%s\n' "$(blob "${e#*=}")" "${e%%=*}"; done |
		git -C "$R" mktree
}
commit() { # tree parent date message-bytes (printf %b)
	printf 'tree %s\nparent %s\nauthor A <a@x> %s +0000\ncommitter C <c@x> %s +0000\n\n%b\n' \
		"$1" "$2" "$3" "$3" "$4" | git -C "$R" hash-object -t commit -w --literally --stdin
}
chain() { # branch date message files...: one commit a file, on base
	local id=$base b=$1 d=$2 m=$3 files=(f=1) i=0
	shift 3
	for f in "$@"; do
		files+=("$f")
		i=$((i + 1))
		id=$(commit "$(tree "${files[@]}")" "$id" $((d + i)) "$m $i")
	done
	git -C "$R" update-ref "refs/heads/$b" "$id"
}
base=$(printf 'tree %s\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\nbase\n' \
	"$(tree f=1)" | git -C "$R" hash-object -t commit -w --stdin)
git -C "$R" update-ref refs/heads/main "$base"
git -C "$R" update-ref refs/heads/up "$(commit "$(tree f=up)" "$base" 2 up)"
chain a 10 'caf\351' a1=1
chain a2 12 plain a1=1 a2=2 a3=3
b1=$(commit "$(tree f=1 g=b1)" "$base" 20 b1)
git -C "$R" update-ref refs/heads/b "$(commit "$(tree f=b2 g=b1)" "$b1" 30 b2)"
chain c 40 'na\357ve' c1=1 c2=2 c3=3 c4=4 c5=5
QOPTS=(--jobs=2)
same "warnings before a conflict, two workers" --onto up ^main a a2 b c
check "git warned once before the conflict" [ "$(grep -c '^Warning' "$T/g.err")" = 1 ]
finish
