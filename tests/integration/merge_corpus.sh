#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Real merges (../shared/corpus: jansson, hiredis; skipped with a notice
# where absent), replayed through `replayq run` (one process, every merge a
# job):
#  1. a merge M replayed with both its sides onto their merge base B
#     (`--onto B B..M`) comes out with exactly M's tree: clean merges,
#     merges whose remerge conflicts (resolved by hand), merges with changes
#     of their own, the octopus;
#  2. real merges onto a nearby base (B's parent): where the replay goes
#     through, its result is `git merge-tree` of its new parents with M's
#     `git show --remerge-diff` applied (where that patch applies; when the
#     remerge conflicts, its markers are in the patch and it cannot).
# By default every merge whose remerge conflicts and every 8th other merge
# (about 90); RQ_MERGE_SWEEP=1: all of them (about 470).
. "$(dirname "$0")/../lib.sh"
require jq

HERE=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=
for c in "${RQ_CORPUS:-}" "$HERE/../shared/corpus" /work/shared/corpus; do
	[ -n "$c" ] && [ -f "$c/jansson.bundle" ] && CORPUS=$c && break
done
if [ -z "$CORPUS" ]; then
	echo "# notice: ../shared/corpus not found (set RQ_CORPUS): real-history merges skipped" >&2
	check "corpus present (skipped)" true
	finish
fi
COMMITTER='{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}'

# pick_merges r: "<id> <merge> <base> <clean>" of the merges chosen in
# $T/r.list (clean: 0 when the automatic remerge conflicts)
pick_merges() {
	local r=$1 n=0 m b clean
	git -C "$T/$r" rev-list --all --merges >"$T/$r.merges"
	awk '{print $1 "^1 " $1 "^2"}' "$T/$r.merges" |
		git -C "$T/$r" merge-tree --write-tree --allow-unrelated-histories --no-messages -z --stdin |
		tr '\0' '\n' | awk 'prev == "" && ($1 == "0" || $1 == "1") {print $1} {prev = $0}' >"$T/$r.status"
	paste -d' ' "$T/$r.merges" "$T/$r.status" | while read -r m clean; do
		n=$((n + 1))
		if [ "${RQ_MERGE_SWEEP:-0}" != 1 ] && [ "$clean" != 0 ] && [ $((n % 8)) -ne 0 ]; then
			continue
		fi
		if [ "$(git -C "$T/$r" rev-list --parents -n1 "$m" | wc -w)" -gt 3 ]; then
			# shellcheck disable=SC2046
			b=$(git -C "$T/$r" merge-base --octopus $(git -C "$T/$r" rev-parse "$m^@"))
		else
			b=$(git -C "$T/$r" merge-base "$m^1" "$m^2" | head -1)
		fi
		[ -n "$b" ] && echo "$r-$n $m $b $clean"
	done >"$T/$r.list"
}

# job id repo target bottom tip: a job replaying bottom..tip onto target
job() {
	printf '{"id":"%s","repo":"%s","mode":"onto","target":"%s","revisions":["%s..%s"],"ref":"refs/check/%s","ref_action":"print","committer":%s}\n' \
		"$1" "$2" "$3" "$4" "$5" "$1" "$COMMITTER"
}
# new_ids: "<id> <new>" of every ok result in $OUT, sorted by id
new_ids() { echo "$OUT" | jq -r 'select(.status == "ok") | .id + " " + .updates[0].new' | sort; }
# joined r file: "<id> <merge> <base> <clean> <new>" of the merges that
# replayed (file: new_ids' output)
joined() { join <(sort "$T/$1.list") "$2"; }

for r in jansson hiredis; do
	git clone -q --bare "$CORPUS/$r.bundle" "$T/$r"
	pick_merges "$r"
done
stamp "corpus cloned, $(cat "$T"/jansson.list "$T"/hiredis.list | wc -l) merges chosen"

# ---- 1. onto their own merge base: exactly the merge's tree ----
for r in jansson hiredis; do
	while read -r id m b _; do job "$id" "$r" "$b" "$b" "$m"; done <"$T/$r.list"
done >"$T/own.jsonl"
run_rq run --repo-root="$T" --jobs=2 "$T/own.jsonl"
new_ids >"$T/own.new"
check_eq "own base: every job replayed" "$(wc -l <"$T/own.jsonl")" "$(wc -l <"$T/own.new")"
n=0 hand=0 bad=0
for r in jansson hiredis; do
	joined "$r" "$T/own.new" >"$T/$r.own"
	n=$((n + $(wc -l <"$T/$r.own")))
	hand=$((hand + $(awk '$4 == 0' "$T/$r.own" | wc -l)))
	# the trees of the merges and of their replays, one call each
	# shellcheck disable=SC2046
	git -C "$T/$r" rev-parse $(awk '{print $2 "^{tree}"}' "$T/$r.own") >"$T/want"
	# shellcheck disable=SC2046
	git -C "$T/$r" rev-parse $(awk '{print $5 "^{tree}"}' "$T/$r.own") >"$T/got"
	bad=$((bad + $(paste -d' ' "$T/want" "$T/got" | awk '$1 != $2' | wc -l)))
done
check_eq "own base: every merge's own tree ($n merges, $hand resolved by hand)" 0 "$bad"
check "own base: the merges resolved by hand are there" test "$hand" -ge 25
stamp "own base: $n merges, $hand resolved by hand, $bad not their own tree"

# ---- 2. onto a nearby base, against merge-tree and the remerge diff ----
for r in jansson hiredis; do
	while read -r id m b _; do
		p=$(git -C "$T/$r" rev-parse -q --verify "$b^1") && job "$id" "$r" "$p" "$b" "$m"
	done <"$T/$r.list"
done >"$T/near.jsonl"
run_rq run --repo-root="$T" --jobs=2 "$T/near.jsonl"
new_ids >"$T/near.new"
for r in jansson hiredis; do
	# the two-parent merges replayed as merges
	joined "$r" "$T/near.new" | while read -r id m _ _ new; do
		[ "$(git -C "$T/$r" rev-list --parents -n1 "$new" | wc -w)" -eq 3 ] && echo "$id $m $new"
	done >"$T/$r.near"
	# git's way: merge-tree of the new parents (one call) ...
	awk '{print $3 "^1 " $3 "^2"}' "$T/$r.near" |
		git -C "$T/$r" merge-tree --write-tree --no-messages -z --stdin |
		tr '\0' '\n' | awk 'prev == "" && ($1 == "0" || $1 == "1") {s = $1; getline; print s, $1} {prev = $0}' >"$T/$r.mt"
	paste -d' ' "$T/$r.near" "$T/$r.mt" >"$T/$r.cmp"
	# ... and the merge's remerge diff applied to that
	while read -r _ m new clean nt; do
		if [ "$clean" != 1 ]; then
			echo other
			continue
		fi
		git -C "$T/$r" show --remerge-diff --format= --binary "$m" >"$T/rd.diff"
		if ! want=$(export GIT_INDEX_FILE=$T/idx &&
			git -C "$T/$r" read-tree "$nt" &&
			{ [ ! -s "$T/rd.diff" ] || git -C "$T/$r" apply --cached "$T/rd.diff" 2>/dev/null; } &&
			git -C "$T/$r" write-tree); then
			echo other # the patch does not apply (conflict markers in it)
		elif [ "$want" = "$(git -C "$T/$r" rev-parse "$new^{tree}")" ]; then
			echo agree
		else
			echo "  nearby base: $r $m: not git's" >&2
			echo differ
		fi
	done <"$T/$r.cmp"
done >"$T/verdicts"
agree=$(grep -c agree "$T/verdicts")
check_eq "nearby base: every comparable merge as merge-tree + remerge diff ($agree agree, $(grep -c other "$T/verdicts") not comparable)" \
	0 "$(grep -c differ "$T/verdicts")"
check "nearby base: enough comparable merges" test "$agree" -ge 30
stamp "nearby base: $(wc -l <"$T/verdicts") merges replayed as merges, $agree as git, $(grep -c other "$T/verdicts") not comparable"

finish
