#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Rename similarity scores remembered from pick to pick. A topic that adds a
# file in every commit to a directory that upstream renamed (its files moved
# with small edits and new names, so only the similarity matrix pairs them)
# meets the same source/destination pairs at every pick: the first pick
# scores them, the later ones take the scores and score only what is new. A
# topic that edits a file upstream renamed changes that file, a source of
# the search, at every pick: its scores are computed afresh each time.
# Either way the results equal `git cherry-pick`'s (merge-ort) here. And
# the renames upstream made are remembered from pick to pick, as merge-ort
# does in a replay: a topic that cuts a renamed file down and then reverts
# that is clean, as with upstream git replay (a fresh merge of the revert
# cannot pair the file and stops with modify/delete).
. "$(dirname "$0")/../lib.sh"

lines() { # lines PREFIX N: N distinct lines
	for i in $(seq 1 "$2"); do echo "$1 line $i of the file, with some words to compare"; done
}

R=$T/repo
git init -q -b main "$R"
check_ref_format "$R"
cd "$R" || exit 1
lines "core" 40 >core.txt
lines "util" 30 >util.txt
mkdir -p docs
for d in guide intro usage faq; do lines "doc $d" 20 >"docs/$d.txt"; done
git add -A && tick && git commit -q -m base
git tag base

# upstream: core.txt -> src/core.c with its first line edited (an inexact
# rename); new files that are candidate destinations; an exact rename
git checkout -q -b upstream
mkdir -p src
git mv core.txt src/core.c
sed -i '1s/.*/core line 1, edited upstream/' src/core.c
git mv util.txt src/util.txt
for i in 1 2 3 4 5 6; do lines "extra$i" 25 >"src/extra$i.c"; done
git add -A && tick && git commit -q -m "upstream: move sources under src/"
# docs/*.txt -> manual/*.md, every file edited on the way: inexact renames
# with new basenames, which only the similarity matrix pairs
mkdir manual
for f in docs/*.txt; do
	b=$(basename "$f" .txt)
	git mv "$f" "manual/$b.md"
	sed -i '2s/.*/edited while moving/' "manual/$b.md"
done
git add -A && tick && git commit -q -m "upstream: docs/ is manual/ now"

# topic: six commits, each edits core.txt far from line 1
git checkout -q -b topic base
for k in 1 2 3 4 5 6; do
	sed -i "$((k * 6))s/.*/core line $((k * 6)), edited by topic commit $k/" core.txt
	tick && git commit -q -am "topic $k"
done
# topic3: five commits, each adds a page to docs/
git checkout -q -b topic3 base
for k in 1 2 3 4 5; do
	lines "page $k" 8 >"docs/page$k.txt"
	git add -A && tick && git commit -q -m "topic3 $k"
done
# topic2: a commit that edits the renamed-away file and one that does not
git checkout -q -b topic2 base
sed -i '10s/.*/core line 10, topic2/' core.txt
tick && git commit -q -am "topic2 1"
lines "new" 5 >new.txt
git add new.txt && tick && git commit -q -m "topic2 2"
git checkout -q --detach upstream

export RQ_DATE="@1800000000 +0000"

# git's answer: cherry-pick one commit at a time (merge-ort, fresh merges)
git_tip() { # git_tip RANGE: the tip after picking RANGE onto upstream
	git checkout -q --detach upstream
	GIT_COMMITTER_DATE="$RQ_DATE" git cherry-pick "$1" >/dev/null 2>&1 || return 1
	git rev-parse HEAD
}

G1=$(git_tip base..topic)
check "git picks topic cleanly" test -n "$G1"
run_rq replay --ref-action=print --format=json --onto upstream base..topic
check_eq "topic: exit status" 0 "$RC"
check_eq "topic: same tip as git cherry-pick" "$G1" \
	"$(printf '%s' "$OUT" | jq -r '.updates[0].new')"
check_eq "topic: every pick merged" 6 "$(printf '%s' "$OUT" | jq '.stats.merges.full')"
# each pick changed core.txt, the search's source: nothing to reuse
check_eq "topic: scored afresh at every pick" 0 \
	"$(printf '%s' "$OUT" | jq '.stats.merges.similarity_reused')"
check "topic: scores computed" test "$(printf '%s' "$OUT" | jq '.stats.merges.similarity_computed')" -gt 0
check_eq "topic: no fallback" 0 "$(printf '%s' "$OUT" | jq '.stats.merges.fallback')"
git checkout -q --detach upstream
check_eq "topic: the edits landed in src/core.c" "core line 36, edited by topic commit 6" \
	"$(git show "$G1:src/core.c" | sed -n 36p)"

# topic2: its second pick changes nothing upstream renamed: no search, so
# nothing reused; still git's result
G2=$(git_tip base..topic2)
run_rq replay --ref-action=print --format=json --onto upstream base..topic2
check_eq "topic2: same tip as git cherry-pick" "$G2" \
	"$(printf '%s' "$OUT" | jq -r '.updates[0].new')"
check_eq "topic2: nothing to reuse" 0 "$(printf '%s' "$OUT" | jq '.stats.merges.similarity_reused')"

# topic3 with merge.directoryRenames=true: the new pages follow docs/ to
# manual/; the picks after the first reuse most of its scores
git config merge.directoryRenames true
G3=$(git_tip base..topic3)
check "git picks topic3 cleanly" test -n "$G3"
check "git moved the pages to manual/" git cat-file -e "$G3:manual/page5.txt"
run_rq replay --ref-action=print --format=json --onto upstream base..topic3
check_eq "topic3: exit status" 0 "$RC"
check_eq "topic3: same tip as git cherry-pick" "$G3" \
	"$(printf '%s' "$OUT" | jq -r '.updates[0].new')"
COMPUTED=$(printf '%s' "$OUT" | jq '.stats.merges.similarity_computed')
# the same topic as five separate calls: every pick searches everything
SUM=0 SUMC=0
for k in 4 3 2 1 0; do
	git update-ref refs/heads/one "topic3~$k"
	run_rq replay --ref-action=print --format=json --onto upstream "topic3~$((k + 1))..one"
	SUM=$((SUM + $(printf '%s' "$OUT" | jq '.stats.merges.similarity_reused')))
	SUMC=$((SUMC + $(printf '%s' "$OUT" | jq '.stats.merges.similarity_computed')))
done
git update-ref -d refs/heads/one
check_eq "topic3 one pick per call: nothing reused" 0 "$SUM"
# in one call the picks after the first pair upstream's renames as the
# first did (remembered renames) and score at most what is new
check "topic3: one call scores less ($COMPUTED) than five ($SUMC)" test "$COMPUTED" -lt "$SUMC"
check_eq "topic3: no fallback" 0 "$(printf '%s' "$OUT" | jq '.stats.merges.fallback')"
# with the default (conflict), git and replayq both stop at the first page
git config --unset merge.directoryRenames
git checkout -q --detach upstream
check "git stops on topic3 by default" \
	bash -c '! GIT_COMMITTER_DATE="$0" git cherry-pick base..topic3 >/dev/null 2>&1' "$RQ_DATE"
git cherry-pick --abort >/dev/null 2>&1
run_rq replay --ref-action=print --format=json --onto upstream base..topic3
check_eq "topic3 default: conflict" 1 "$RC"
check_eq "topic3 default: on the first page" "$(git rev-parse topic3~4)" \
	"$(printf '%s' "$OUT" | jq -r '.conflict.commit')"

# both topics in one call: each pick's result is still git's
run_rq replay --ref-action=print --onto upstream ^base topic topic2
check_contains "both: topic as git" "update refs/heads/topic $G1" "$OUT"
check_contains "both: topic2 as git" "update refs/heads/topic2 $G2" "$OUT"
check "no litter" no_litter "$R"
# remembered renames (git's Documentation/technical/remembering-renames.txt,
# section 4): upstream renames numbers to sequence and adds lines at its
# top; the topic cuts numbers to its first 3 lines, then reverts that
R2=$T/remember
git init -q -b main "$R2"
seq 1 20 >"$R2/numbers"
git -C "$R2" add numbers && tick && git -C "$R2" commit -q -m base
git -C "$R2" checkout -q -b topic
seq 1 3 >"$R2/numbers"
tick && git -C "$R2" commit -q -am "A: cut numbers down"
tick && git -C "$R2" revert --no-edit HEAD >/dev/null
git -C "$R2" checkout -q main
git -C "$R2" mv numbers sequence
{ seq 100 109; seq 1 20; } >"$R2/sequence"
git -C "$R2" add sequence && tick && git -C "$R2" commit -q -m "rename numbers to sequence, add lines"
run_rq -C "$R2" replay --ref-action=print --onto main main~1..topic
check_eq "remembered renames: the revert replays cleanly" 0 "$RC"
FIRST=$OUT
NEW=$(echo "$OUT" | cut -d' ' -f3)
check_eq "... giving back the whole sequence" "$(git -C "$R2" show main:sequence)" "$(git -C "$R2" show "$NEW:sequence" 2>&1)"
check "... and no numbers" test -z "$(git -C "$R2" ls-tree --name-only "$NEW" numbers)"
git -C "$R2" update-ref refs/heads/one topic
run_rq -C "$R2" replay --ref-action=print --onto "$NEW~1" topic~1..one
check_eq "the revert alone (a fresh merge): modify/delete, as in git" 1 "$RC"
if upstream_git; then
	want=$(GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$R2" replay --ref-action=print --onto main main~1..topic 2>&1)
	check_eq "remembered renames: the same update as upstream git replay" "$want" "$FIRST"
fi
finish
