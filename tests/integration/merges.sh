#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Replaying merge commits (core/merge/rq_remerge.h: the remerge method;
# core/replay/rq_parents.h: where parents go), on hand-made histories:
#  - a topic that merged main, and a fork-and-join: the trees and the
#    topology `git rebase --rebase-merges` gives (a parent outside the
#    range, the main commit merged in, moves to the new base; the branch
#    point of a cousin stays, as rebase-merges keeps it);
#  - an evil merge: its extra change survives (rebase-merges loses it);
#  - a merge that resolved a conflict between two topics: onto a base that
#    does not touch those lines, clean with the resolution kept (where
#    rebase-merges stops); onto a base that rewrites a line inside the
#    conflict, a conflict of the merge: kind "resolution", the merge's id,
#    the remerge-diff hint (JSON and stderr), exit 1, nothing moved;
#  - an octopus, as rebase-merges makes it;
#  - a merge whose second parent is outside the range (an excluded release
#    branch, --first-parent's topics): it stays;
#  - --keep-going, --jobs, --contained, --advance, --empty with merges, a
#    worker job (`replayq run`), a train car with a merge;
#  - --no-merges around merges: byte for byte upstream git replay.
. "$(dirname "$0")/../lib.sh"
require jq
HAVE_UPSTREAM=0
upstream_git && HAVE_UPSTREAM=1

R=$T/r
git init -q -b main "$R"
cd "$R" || exit 1
git config rerere.enabled false
lines() { printf '%s\n' "$@"; }
put() {
	local f=$1
	shift
	tick
	lines "$@" >"$f"
	git add "$f"
	git commit -q -m "$MSG"
}
MSG=A put f head 1 2 3 4 5 6 7 8 9 tail
git tag A
# topic: forks at A, merges main (M1) in, goes on
git checkout -q -b topic
MSG=T1 put t t1
git checkout -q main
MSG=M1 put m m1
git checkout -q topic
tick
git merge -q --no-ff -m "Merge main into topic" main
MSG=T2 put t t1 t2
# fork-and-join: side off T2, joined back
git checkout -q -b side
MSG=S1 put s s1
git checkout -q topic
MSG=T3 put t t1 t2 t3
tick
git merge -q --no-ff -m "Merge side" side
# the new base
git checkout -q main
MSG=M2 put m m1 m2
export RQ_DATE="@1800000000 +0000"

# shape base tip: each commit of base..tip, oldest first: subject, tree,
# parents (a commit of the list by its subject, any other by its id)
shape() {
	git log --reverse --topo-order --format='%H %T %P%x09%s' "$1..$2" | awk -F'\t' '
		{ split($1, f, " "); subj[f[1]] = $2; line[NR] = $1; s[NR] = $2 }
		END { for (i = 1; i <= NR; i++) {
			n = split(line[i], f, " "); out = s[i] " " f[2]
			for (k = 3; k <= n; k++) out = out " " (f[k] in subj ? "@" subj[f[k]] : f[k])
			print out } }'
}
# rebase_merges onto upstream branch: git rebase --rebase-merges on a copy
# of branch; prints the new tip (status 1 when the rebase stops)
rebase_merges() {
	git branch -f "rb-$3" "$3" && git checkout -q "rb-$3" || return 2
	if ! git rebase -q --rebase-merges --onto "$1" "$2" >/dev/null 2>&1; then
		git rebase --abort >/dev/null 2>&1
		git checkout -q main
		return 1
	fi
	git rev-parse HEAD
	git checkout -q main
}
# tip of a replay's one update line
new_of() { echo "$1" | cut -d' ' -f3; }

# --- a topic that merged main, with a fork-and-join -------------------------------
run_rq replay --ref-action=print --onto main main..topic
check_eq "main-merge: replayed" 0 "$RC"
NEW=$(new_of "$OUT")
RB=$(rebase_merges main main topic)
check_eq "main-merge, fork-and-join: trees and topology of rebase --rebase-merges" \
	"$(shape main "$RB")" "$(shape main "$NEW")"
# the replayed topic: Merge side, T3, T2, Merge main, T1
check_eq "the merge of main now merges the new base" "$(git rev-parse main)" \
	"$(git rev-parse "$NEW~3^2")"
check_eq "T1's branch point stays (a cousin, as rebase-merges keeps it)" \
	"$(git rev-parse A)" "$(git rev-parse "$NEW~5")"
check_eq "the merges are merges" "3 3" \
	"$(git rev-list --parents -n1 "$NEW" | wc -w) $(git rev-list --parents -n1 "$NEW~3" | wc -w)"

# --- an evil merge --------------------------------------------------------------------
git checkout -q -b evil topic~1
tick
git merge -q --no-ff --no-commit side
echo "made in the merge" >evil.txt
git add evil.txt
git commit -q -m "Merge side, with an extra file"
git checkout -q main
run_rq replay --ref-action=print --onto main main..evil
NEW=$(new_of "$OUT")
check_eq "evil merge: its extra change survives" "made in the merge" "$(git show "$NEW:evil.txt")"
RB=$(rebase_merges main main evil)
check "evil merge: rebase --rebase-merges loses it" test -z "$(git ls-tree "$RB" evil.txt)"

# --- a resolved conflict between two topics -------------------------------------------
git checkout -q -b t1 A
MSG=C1 put f head 1 2 THREE1 4 5 6 SEVEN1 8 9 tail
git checkout -q -b t2 A
MSG=C2 put f head 1 2 THREE2 4 5 6 SEVEN2 8 9 tail
git checkout -q -b int t1
tick
git merge -q --no-edit t2 -m "Merge t2" >/dev/null 2>&1
lines head 1 2 THREE12 4 5 6 SEVEN12 8 9 tail >f
git add f
git commit -q --no-edit
INT=$(git rev-parse int)
git checkout -q -b far main
MSG=FAR put f HEAD 1 2 3 4 5 6 7 8 9 tail
git checkout -q -b near main
MSG=NEAR put f head 1 2 3 4 FIVE 6 7 8 9 tail
git checkout -q main
run_rq replay --ref-action=print --onto far A..int
check_eq "resolved conflict, base away from it: clean" 0 "$RC"
check_eq "... the resolution kept" "HEAD 1 2 THREE12 4 5 6 SEVEN12 8 9 tail" \
	"$(git show "$(new_of "$OUT"):f" | paste -sd' ')"
RB=$(rebase_merges far A int)
check_eq "... where rebase --rebase-merges stops" "1" "$?"
run_rq replay --ref-action=print --onto near A..int
check_eq "base rewriting a line of the conflict: exit 1" 1 "$RC"
check_eq "... nothing printed" "" "$OUT"
check_contains "... stderr names the merge and the remerge diff" \
	"hint: $INT is a merge; 'git show --remerge-diff $INT' shows" "$ERR"
run_rq replay --format=json --onto near A..int
check_eq "... json: the merge, its path, kind resolution, the hint" \
	"$INT f resolution true git show --remerge-diff $INT" \
	"$(echo "$OUT" | jq -r '[.conflict.commit, .conflict.paths[0].path, .conflict.paths[0].kind, .conflict.merge, .conflict.hint] | join(" ")')"
run_rq replay --onto near --ref=refs/heads/out A..int
check "... update mode: no ref made" test -z "$(git for-each-ref refs/heads/out)"

# --- an octopus ---------------------------------------------------------------------------
for b in ox oy oz; do
	git checkout -q -b "$b" A
	MSG=$b put "$b" "$b"
done
git checkout -q -b oct ox
tick
git merge -q --no-ff -m "Octopus" oy oz
git checkout -q main
run_rq replay --ref-action=print --onto main A..oct
NEW=$(new_of "$OUT")
RB=$(rebase_merges main A oct)
check_eq "octopus: as rebase --rebase-merges" "$(shape main "$RB")" "$(shape main "$NEW")"
check_eq "... three parents" 3 "$(git cat-file -p "$NEW" | grep -c '^parent ')"

# --- a parent outside the range ---------------------------------------------------------------
git checkout -q -b rel A
MSG=R1 put r r1
git checkout -q -b feat A
MSG=F1 put x x1
tick
git merge -q --no-ff -m "Merge rel" rel
MSG=F2 put x x1 x2
git checkout -q main
run_rq replay --ref-action=print --onto main ^main ^rel feat
NEW=$(new_of "$OUT")
check_eq "parent outside the range: the release branch stays merged" "$(git rev-parse rel)" \
	"$(git rev-parse "$NEW~1^2")"
check_eq "... the topic moves onto the new base" "$(git rev-parse main)" "$(git rev-parse "$NEW~3")"
# --first-parent: a chain of merges ("seen") replayed onto the new base,
# the topics it merges kept as they are
git checkout -q -b seen A
tick
git merge -q --no-ff -m "Merge ox" ox
tick
git merge -q --no-ff -m "Merge oy" oy
git checkout -q main
run_rq replay --ref-action=print --first-parent --onto main A..seen
NEW=$(new_of "$OUT")
check_eq "--first-parent: the merged topics kept" "$(git rev-parse oy) $(git rev-parse ox)" \
	"$(git rev-parse "$NEW^2") $(git rev-parse "$NEW~1^2")"
check_eq "... the first-parent chain on the new base" "$(git rev-parse main)" \
	"$(git rev-parse "$NEW~2")"
check_eq "... with the topics' content" "ox oy" "$(git show "$NEW:ox") $(git show "$NEW:oy")"

# --- --empty: a merge that brings nothing -------------------------------------------------------
# from A and M1, both bottoms the new base holds: T1 goes onto the new
# base, and so does the merge of main, which then adds nothing ("skip
# merging an ancestor of HEAD" in rebase-merges)
run_rq replay --ref-action=print --onto main ^A ^main~1 topic
check_eq "--empty=drop: the redundant merge dropped (one merge left)" 1 \
	"$(git rev-list --merges --count "main..$(new_of "$OUT")")"
run_rq replay --ref-action=print --empty=keep --onto main ^A ^main~1 topic
check_eq "--empty=keep: kept" 2 "$(git rev-list --merges --count "main..$(new_of "$OUT")")"
run_rq replay --ref-action=print --empty=abort --onto main ^A ^main~1 topic
check_eq "--empty=abort: refused" "128 fatal: commit $(git rev-parse topic~3) became empty" "$RC $ERR"

# --- --contained, --advance -------------------------------------------------------------------------
run_rq replay --ref-action=print --contained --onto main main..topic
check_eq "--contained: side, inside the range, moves with it, to the merge's second parent" "$(echo "$OUT" | awk '$2 == "refs/heads/side" {print $3}')" \
	"$(git rev-parse "$(echo "$OUT" | awk '$2 == "refs/heads/topic" {print $3}')^2")"
git branch adv far
run_rq replay --ref-action=print --advance adv A..int
check_eq "--advance: the branch gets the replayed merge, resolution kept" \
	"update refs/heads/adv SEVEN12" \
	"$(echo "$OUT" | cut -d' ' -f1-2) $(git show "$(new_of "$OUT"):f" | grep SEVEN)"

# --- --keep-going, --jobs ------------------------------------------------------------------------
git checkout -q -b int2 int
MSG=I2 put i i2
git checkout -q main
run_rq replay --keep-going --ref-action=print --onto near ^A int int2 oct
check_eq "--keep-going: exit 1" 1 "$RC"
check_eq "... the octopus moves" "refs/heads/oct" "$(echo "$OUT" | cut -d' ' -f2 | paste -sd' ')"
check_contains "... int conflicts at its merge" "conflict refs/heads/int at $INT: f (resolution)" "$ERR"
check_contains "... with the hint" "hint: $INT is a merge" "$ERR"
check_contains "... int2 waits on it" "blocked refs/heads/int2 by refs/heads/int at $INT" "$ERR"
KG=$OUT$ERR
run_rq replay --keep-going --jobs=2 --ref-action=print --onto near ^A int int2 oct
check_eq "--jobs=2: the same outcome" "$KG" "$OUT$ERR"
run_rq replay --keep-going --jobs=2 --format=json --onto near ^A int int2 oct
check_eq "--jobs=2: two groups over two workers, the merges among them" "2 2 1" \
	"$(echo "$OUT" | jq -r '[.stats.groups, .stats.parallel, .stats.merge_commits] | map(tostring) | join(" ")')"
check_eq "... the refs' outcomes" "blocked conflict ok" \
	"$(echo "$OUT" | jq -r '[.refs[].status] | sort | join(" ")')"
run_rq replay --jobs=2 --ref-action=print --onto far ^A int int2 oct
ALONE=$OUT
run_rq replay --jobs=1 --ref-action=print --onto far ^A int int2 oct
check_eq "--jobs=2 without conflicts: the ids of --jobs=1" "$OUT" "$ALONE"

# --- a worker job, a train car ------------------------------------------------------------------
cd "$T" || exit 1
printf '%s\n' '{"id":"m-near","repo":"r","mode":"onto","target":"near","revisions":["A..int"]}' \
	'{"id":"m-far","repo":"r","mode":"onto","target":"far","revisions":["A..int"]}' >jobs.jsonl
run_rq run --repo-root="$T" jobs.jsonl
check_eq "job: a merge that conflicts, reported as the CLI's" \
	"conflict $INT resolution true git show --remerge-diff $INT" \
	"$(echo "$OUT" | jq -r 'select(.id == "m-near") | [.status, .conflict.commit, .conflict.paths[0].kind, .conflict.merge, .conflict.hint] | map(tostring) | join(" ")')"
check_eq "job: a merge replayed (no merge_commit error)" "ok 1" \
	"$(echo "$OUT" | jq -r 'select(.id == "m-far") | [.status, .stats.merge_commits] | map(tostring) | join(" ")')"
cd "$R" || exit 1
run_rq train --target=far --ref-action=print --format=json car=A..int
check_eq "train: a car with a merge goes in, its resolution kept" "ok SEVEN12" \
	"$(echo "$OUT" | jq -r '.cars[0].status') $(git show "$(echo "$OUT" | jq -r '.cars[0].commit'):f" | grep SEVEN)"
run_rq train --target=near --ref-action=print --format=json car=A..int
check_eq "train: a car whose merge conflicts drops out, with the merge's hint" \
	"conflict $INT resolution true git show --remerge-diff $INT" \
	"$(echo "$OUT" | jq -r '.cars[0] | [.status, .conflict.commit, .conflict.paths[0].kind, .conflict.merge, .conflict.hint] | map(tostring) | join(" ")')"
check_eq "... and the train's conflict says so too" "true" "$(echo "$OUT" | jq -r '.conflict.merge')"

# --- remembered renames are forgotten at a merge ----------------------------------------------
# renames.sh's case (upstream renames numbers to sequence and adds lines;
# the topic cuts numbers down, then reverts that: clean only with the
# renames remembered from pick to pick), with a merge between the two: the
# revert is merged afresh, as merge-ort would in a separate call, and
# stops with modify/delete
R2=$T/remember
git init -q -b main "$R2"
seq 1 20 >"$R2/numbers"
git -C "$R2" add numbers && tick && git -C "$R2" commit -q -m base
git -C "$R2" checkout -q -b other
echo x >"$R2/x" && git -C "$R2" add x && tick && git -C "$R2" commit -q -m "add x"
git -C "$R2" checkout -q -b topic main
seq 1 3 >"$R2/numbers"
tick && git -C "$R2" commit -q -am "cut numbers down"
tick && git -C "$R2" merge -q --no-ff -m "Merge other" other
tick && git -C "$R2" revert --no-edit HEAD~1 >/dev/null
git -C "$R2" checkout -q main
git -C "$R2" mv numbers sequence
{ seq 100 109; seq 1 20; } >"$R2/sequence"
git -C "$R2" add sequence && tick && git -C "$R2" commit -q -m "rename numbers to sequence, add lines"
run_rq -C "$R2" replay --format=json --onto main main~1..topic
check_eq "renames forgotten at a merge: the revert after it merged afresh" \
	"$(git -C "$R2" rev-parse topic) numbers modify/delete" \
	"$(echo "$OUT" | jq -r '.conflict | [.commit, .paths[0].path, .paths[0].kind] | join(" ")')"

# --- --no-merges: upstream's replay, byte for byte ---------------------------------------------
if [ "$HAVE_UPSTREAM" = 1 ]; then
	for c in "main..topic" "A..int" "--branches ^main"; do
		# shellcheck disable=SC2086
		want=$("$UPSTREAM_GIT" replay --ref-action=print --onto main --no-merges $c 2>&1)
		# shellcheck disable=SC2086
		run_rq replay --ref-action=print --onto main --no-merges $c
		check_eq "--no-merges $c: as upstream git replay" "$want" "$OUT$ERR"
	done
fi

finish
