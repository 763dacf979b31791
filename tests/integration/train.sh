#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq train: merge trains in one call. Each car equals what the
# upstream tools give for the same car (rebase: `git replay --onto
# <previous> <range>`; merge: `git merge-tree --write-tree` + `git
# commit-tree` with the same message, author and committer), criss-cross
# merge bases included; a conflicting car drops out and the next one goes
# onto the last good one; a train re-formed without a car equals the one
# with that car skipped and reuses the ids of the cars before it; the cars'
# refs; the same through jobs (`replayq run`, a worker).
. "$(dirname "$0")/../lib.sh"
require jq
export RQ_DATE="@1800000000 +0000"
WHO=(GIT_AUTHOR_NAME="C O Mitter" GIT_AUTHOR_EMAIL=committer@example.com GIT_AUTHOR_DATE="$RQ_DATE" GIT_COMMITTER_DATE="$RQ_DATE")

# lines n [sed-expr]: the lines 1..n, edited
lines() { seq 1 "$1" | sed "${2:-}"; }
# a repository with main and six merge requests: mr-1 edits a.txt, mr-2
# adds a file, mr-3 clashes with main, mr-4 edits a.txt elsewhere and
# renames b.txt, mr-5 is stacked on mr-4, mr-6 edits a.txt near mr-1
R=$T/train
git init -q -b main "$R"
check_ref_format "$R"
commit_file "$R" a.txt "$(lines 40)" "base a"
commit_file "$R" b.txt "$(lines 30 's/^/b /')" "base b"
commit_file "$R" f.txt "f" "base f"
git -C "$R" checkout -q -b mr-1 main
commit_file "$R" a.txt "$(lines 40 's/^5$/five/')" "mr-1: five"
commit_file "$R" m1.txt m1 "mr-1: m1"
git -C "$R" checkout -q -b mr-2 main
commit_file "$R" m2.txt m2 "mr-2: m2"
git -C "$R" checkout -q -b mr-3 main
commit_file "$R" f.txt "mr-3 f" "mr-3: f"
git -C "$R" checkout -q -b mr-4 main
commit_file "$R" a.txt "$(lines 40 's/^30$/thirty/')" "mr-4: thirty"
git -C "$R" mv b.txt b-renamed.txt && tick && git -C "$R" commit -q -m "mr-4: rename b"
git -C "$R" checkout -q -b mr-5 mr-4
commit_file "$R" b-renamed.txt "$(lines 30 's/^/b /; s/^b 12$/b twelve/')" "mr-5: edit b"
git -C "$R" checkout -q -b mr-6 main
commit_file "$R" a.txt "$(lines 40 's/^9$/nine/')" "mr-6: nine"
git -C "$R" checkout -q main
commit_file "$R" f.txt "main f" "main: f"
commit_file "$R" a.txt "$(lines 40 's/^20$/twenty/')" "main: twenty"
CARS=(mr-1 mr-2 mr-3 mr-4 mr-5 mr-6)
MAIN=$(git -C "$R" rev-parse main)

# ---- rebase: each car, and the upstream tools car by car ----
run_rq -C "$R" train --target=main --ref-action=print --format=json "${CARS[@]}"
check_eq "rebase: exit 1 (mr-3 conflicts)" 1 "$RC"
RB=$OUT
check_eq "rebase: statuses" "mr-1 ok,mr-2 ok,mr-3 conflict,mr-4 ok,mr-5 ok,mr-6 ok" \
	"$(jq -r '[.cars[] | .name + " " + .status] | join(",")' <<<"$RB")"
check_eq "rebase: mr-3's conflict" "f.txt content $(git -C "$R" rev-parse mr-3)" \
	"$(jq -r '.cars[2].conflict | .paths[0].path + " " + .paths[0].kind + " " + .commit' <<<"$RB")"
check_eq "rebase: mr-4 goes onto mr-2 (mr-3 dropped out)" "$(jq -r .cars[1].commit <<<"$RB")" \
	"$(jq -r .cars[3].onto <<<"$RB")"
check_eq "rebase: the train's head is the last car" "$(jq -r .cars[5].commit <<<"$RB")" "$(jq -r .train.head <<<"$RB")"
check_eq "rebase: mr-5 (stacked on mr-4) drops mr-4's commits as already there" "3 1 2" \
	"$(jq -r '.cars[4] | [.commits, .picked, .dropped] | map(tostring) | join(" ")' <<<"$RB")"
check_eq "rebase: one update per car that went in" 5 "$(jq '.updates | length' <<<"$RB")"
ORACLE_N=0
ORACLE_DIFF=0
if upstream_git; then
	prev=$MAIN
	for k in 0 1 2 3 4 5; do
		car=${CARS[$k]}
		up=$(GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto "$prev" "main..$car" 2>/dev/null)
		urc=$?
		mine=$(jq -r ".cars[$k] | if .status == \"ok\" then .commit else \"conflict\" end" <<<"$RB")
		theirs=$([ $urc -eq 0 ] && echo "$up" | awk '{print $3}' || echo conflict)
		ORACLE_N=$((ORACLE_N + 1))
		[ "$mine" = "$theirs" ] || { ORACLE_DIFF=$((ORACLE_DIFF + 1)); echo "  rebase $car: $mine vs $theirs" >&2; }
		[ "$theirs" = conflict ] || prev=$theirs
	done
fi

# merge_oracle prev tip name: the commit the upstream tools make for a
# merge car (or "conflict")
merge_oracle() {
	local tree
	tree=$("$UPSTREAM_GIT" -C "$R2" merge-tree --write-tree "$1" "$2" 2>/dev/null) || { echo conflict; return; }
	env "${WHO[@]}" "$UPSTREAM_GIT" -C "$R2" commit-tree "$tree" -p "$1" -p "$2" -m "Merge branch '$3' into main"
}

# ---- merge: one merge commit per car ----
run_rq -C "$R" train --target=main --method=merge --ref-action=print --format=json "${CARS[@]}"
check_eq "merge: exit 1" 1 "$RC"
MG=$OUT
check_eq "merge: statuses" "mr-1 ok,mr-2 ok,mr-3 conflict,mr-4 ok,mr-5 ok,mr-6 ok" \
	"$(jq -r '[.cars[] | .name + " " + .status] | join(",")' <<<"$MG")"
C1=$(jq -r .cars[0].commit <<<"$MG")
check_eq "merge: parents are the previous result and the tip" "$MAIN $(git -C "$R" rev-parse mr-1)" \
	"$(git -C "$R" rev-list --parents -n1 "$C1" | cut -d' ' -f2-)"
check_eq "merge: the message" "Merge branch 'mr-1' into main" "$(git -C "$R" log -1 --format=%s "$C1")"
if [ -n "${UPSTREAM_GIT:-}" ]; then
	R2=$R
	prev=$MAIN
	for k in 0 1 2 3 4 5; do
		theirs=$(merge_oracle "$prev" "${CARS[$k]}" "${CARS[$k]}")
		mine=$(jq -r ".cars[$k] | if .status == \"ok\" then .commit else \"conflict\" end" <<<"$MG")
		ORACLE_N=$((ORACLE_N + 1))
		[ "$mine" = "$theirs" ] || { ORACLE_DIFF=$((ORACLE_DIFF + 1)); echo "  merge ${CARS[$k]}: $mine vs $theirs" >&2; }
		[ "$theirs" = conflict ] || prev=$theirs
	done
fi
run_rq -C "$R" train --target=main --method=merge --ref-action=print --message="{name} -> {target}" mr-2
check_eq "merge: a message template" "mr-2 -> main" \
	"$(git -C "$R" log -1 --format=%s "$(echo "$OUT" | awk '/^ok/ {print $3}')")"

# ---- criss-cross: two merge bases, merged into a virtual one ----
# crisscross dir clash: main and side merge each other; with clash, their
# first commits also conflict on c.txt (resolved the same way on both)
crisscross() {
	local r=$1 m1 s1
	git init -q -b main "$r"
	commit_file "$r" a.txt "$(lines 30)" base
	git -C "$r" branch side
	commit_file "$r" a.txt "$(lines 30 's/^2$/two/')" "main: 2"
	[ "$2" = clash ] && commit_file "$r" c.txt "main c" "main: c"
	git -C "$r" checkout -q side
	commit_file "$r" a.txt "$(lines 30 's/^28$/twentyeight/')" "side: 28"
	[ "$2" = clash ] && commit_file "$r" c.txt "side c" "side: c"
	m1=$(git -C "$r" rev-parse main)
	s1=$(git -C "$r" rev-parse side)
	git -C "$r" checkout -q main && tick
	git -C "$r" merge -q --no-edit "$s1" >/dev/null 2>&1 || { echo both >"$r/c.txt" && git -C "$r" commit -qam "merge side"; }
	git -C "$r" checkout -q side && tick
	git -C "$r" merge -q --no-edit "$m1" >/dev/null 2>&1 || { echo both >"$r/c.txt" && git -C "$r" commit -qam "merge main"; }
	commit_file "$r" a.txt "$(sed 's/^20$/twenty/' "$r/a.txt")" "side: 20"
	git -C "$r" checkout -q main
	commit_file "$r" a.txt "$(sed 's/^10$/ten/' "$r/a.txt")" "main: 10"
}
for kind in clean clash; do
	R2=$T/cc-$kind
	crisscross "$R2" "$kind"
	check_eq "criss-cross ($kind): two merge bases" 2 "$(git -C "$R2" merge-base --all main side | wc -l)"
	run_rq -C "$R2" train --target=main --method=merge --ref-action=print --format=json side
	check_eq "criss-cross ($kind): exit 0" 0 "$RC"
	check_eq "criss-cross ($kind): the car saw two merge bases" 2 "$(jq .cars[0].merge_bases <<<"$OUT")"
	if [ -n "${UPSTREAM_GIT:-}" ]; then
		theirs=$(merge_oracle main side side)
		ORACLE_N=$((ORACLE_N + 1))
		[ "$(jq -r .cars[0].commit <<<"$OUT")" = "$theirs" ] || { ORACLE_DIFF=$((ORACLE_DIFF + 1)); echo "  criss-cross $kind: $(jq -r .cars[0].commit <<<"$OUT") vs $theirs" >&2; }
	fi
done
check_eq "criss-cross (clash): no virtual_fallbacks any more" null "$(jq .train.virtual_fallbacks <<<"$OUT")"
# criss-cross whose inner merge is a modify/delete: main deletes d.txt,
# side edits it, both criss-cross merges resolve by deleting it. merge-ort's
# virtual base keeps the edited d.txt (a conflict of the inner merge), so
# the outer merge deletes it cleanly: the commit git merge makes.
R2=$T/cc-delete
git init -q -b main "$R2"
commit_file "$R2" a.txt "$(lines 30)" base
commit_file "$R2" d.txt "$(lines 10)" "base d"
git -C "$R2" branch side
tick && git -C "$R2" rm -q d.txt && git -C "$R2" commit -q -m "main: rm d"
M1=$(git -C "$R2" rev-parse main)
git -C "$R2" checkout -q side
commit_file "$R2" d.txt "$(lines 10 's/^5$/five/')" "side: d"
S1=$(git -C "$R2" rev-parse side)
for pair in "main $S1" "side $M1"; do
	set -- $pair
	git -C "$R2" checkout -q "$1" && tick
	git -C "$R2" merge -q --no-edit "$2" >/dev/null 2>&1
	git -C "$R2" rm -q d.txt && git -C "$R2" commit -q -m "merge into $1"
done
commit_file "$R2" a.txt "$(lines 30 's/^20$/twenty/')" "side: 20"
git -C "$R2" checkout -q main
commit_file "$R2" a.txt "$(lines 30 's/^10$/ten/')" "main: 10"
run_rq -C "$R2" train --target=main --method=merge --ref-action=print --format=json side
check_eq "criss-cross (modify/delete inside): exit 0" 0 "$RC"
check_eq "criss-cross (modify/delete inside): two merge bases" 2 "$(jq .cars[0].merge_bases <<<"$OUT")"
if [ -n "${UPSTREAM_GIT:-}" ]; then
	check_eq "criss-cross (modify/delete inside): git merge-tree's merge" \
		"$(merge_oracle main side side)" "$(jq -r .cars[0].commit <<<"$OUT")"
fi
if [ -n "${UPSTREAM_GIT:-}" ]; then
	check_eq "oracle: every car equals the upstream tools' result" 0 "$ORACLE_DIFF"
	echo "# oracle: $ORACLE_N cars compared with git replay / git merge-tree + commit-tree, $ORACLE_DIFF differences"
fi

# ---- re-forming a train: without car 3 = car 3 skipped; ids reused ----
for m in rebase merge; do
	run_rq -C "$R" train --target=main --method=$m --ref-action=print --format=json mr-1 mr-2 mr-4 mr-6
	FULL=$OUT
	run_rq -C "$R" train --target=main --method=$m --ref-action=print --format=json --skip=mr-4 mr-1 mr-2 mr-4 mr-6
	check_eq "$m: a skipped car is reported as skipped" skipped "$(jq -r .cars[2].status <<<"$OUT")"
	run_rq -C "$R" train --target=main --method=$m --ref-action=print --format=json mr-1 mr-2 mr-6
	check_eq "$m: re-formed without mr-4 = mr-4 skipped" \
		"$(jq -c '[.cars[] | select(.status != "skipped") | .commit]' <<<"$OUT")" \
		"$(run_rq -C "$R" train --target=main --method=$m --ref-action=print --format=json --skip=mr-4 mr-1 mr-2 mr-4 mr-6; jq -c '[.cars[] | select(.status != "skipped") | .commit]' <<<"$OUT")"
	check_eq "$m: the cars before the removed one keep their ids" \
		"$(jq -c '[.cars[0,1].commit]' <<<"$FULL")" "$(jq -c '[.cars[0,1].commit]' <<<"$OUT")"
	check "$m: the car after it changed (another parent)" \
		test "$(jq -r .cars[3].commit <<<"$FULL")" != "$(jq -r .cars[2].commit <<<"$OUT")"
	check_eq "$m: which is now built on mr-2" "$(jq -r .cars[1].commit <<<"$OUT")" "$(jq -r .cars[2].onto <<<"$OUT")"
done

# ---- refs: update mode, a prefix, none ----
U=$T/upd
cp -a "$R" "$U"
run_rq -C "$U" train --target=main --method=merge mr-1 mr-3 mr-2
check_eq "update: exit 1" 1 "$RC"
check_eq "update: one line per car" "ok mr-1,conflict mr-3,ok mr-2" "$(echo "$OUT" | awk '{print $1, $2}' | paste -sd,)"
check_eq "update: the cars' refs" "refs/train/main/mr-1 refs/train/main/mr-2" \
	"$(git -C "$U" for-each-ref --format='%(refname)' refs/train | paste -sd' ')"
check_eq "update: the ref holds the car's commit" "$(echo "$OUT" | awk '/^ok mr-2/ {print $3}')" \
	"$(git -C "$U" rev-parse refs/train/main/mr-2)"
check_eq "update: main did not move" "$MAIN" "$(git -C "$U" rev-parse main)"
check "update: fsck" fsck_ok "$U"
check "update: no temporary directory left" no_litter "$U"
run_rq -C "$U" train --target=main --ref-prefix=refs/ci/t1/ --ref-action=print mr-2
check_contains "a ref prefix" "update refs/ci/t1/mr-2 " "$OUT"
run_rq -C "$U" train --target=main --no-refs --ref-action=print mr-2
check_eq "--no-refs: the car line only" "ok" "$(echo "$OUT" | awk '{print $1}' | paste -sd,)"
run_rq -C "$U" train --target=main bad..name
check_eq "a car whose name cannot be made: exit 128" 128 "$RC"
run_rq -C "$U" train --target=nosuch mr-1
check_eq "a target that is no branch: exit 128" 128 "$RC"
check_contains "a target that is no branch: the message" "must be a branch" "$ERR"
run_rq -C "$U" train --target=main --skip=mr-9 mr-1
check_eq "--skip naming no car: usage" 129 "$RC"

# ---- jobs: replayq run, and a worker ----
ROOT=$T/root
mkdir -p "$ROOT"
git clone -q --mirror "$R" "$ROOT/train.git"
check_ref_format "$ROOT/train.git"
cm='"committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}'
cars='[{"name":"mr-1","revisions":["mr-1"]},{"name":"mr-2","revisions":["main..mr-2"]},{"name":"mr-3","revisions":["mr-3"]},{"name":"mr-4","revisions":["^main","mr-4"]},{"name":"mr-5","revisions":["mr-5"]},{"name":"mr-6","revisions":["mr-6"]}]'
cat >"$T/jobs.jsonl" <<EOF
{"v":1,"id":"t-rebase","repo":"train.git","mode":"train","target":"main","cars":$cars,$cm}
{"v":1,"id":"t-merge","repo":"train.git","mode":"train","target":"main","method":"merge","cars":$cars,"ref_action":"update",$cm}
{"v":1,"id":"t-bad","repo":"train.git","mode":"train","target":"main","cars":[{"name":"x","revisions":["--all"]}]}
EOF
OUT=$("$REPLAYQ" run --repo-root="$ROOT" "$T/jobs.jsonl" 2>"$T/run.err")
check_eq "run: the rebase job's cars equal the command's" "$(jq -c '[.cars[] | .commit]' <<<"$RB")" \
	"$(jq -c 'select(.id == "t-rebase") | [.cars[] | .commit]' <<<"$OUT")"
check_eq "run: the merge job's cars equal the command's" "$(jq -c '[.cars[] | .commit]' <<<"$MG")" \
	"$(jq -c 'select(.id == "t-merge") | [.cars[] | .commit]' <<<"$OUT")"
check_eq "run: the merge job applied its refs" "conflict true 5" \
	"$(jq -r 'select(.id == "t-merge") | [.status, .applied, (.updates | length)] | map(tostring) | join(" ")' <<<"$OUT")"
check_eq "run: the refs are there" 5 "$(git -C "$ROOT/train.git" for-each-ref refs/train/main | wc -l)"
check_eq "run: a car revision may not be an option" "bad_revision" \
	"$(jq -r 'select(.id == "t-bad") | .error.code' <<<"$OUT")"
require redis-server
start_redis
export REPLAYQ_QUEUE=train
start_worker w1 --repo-root="$ROOT" --jobs=2
job='{"v":1,"id":"t-worker","repo":"train.git","mode":"train","target":"main","method":"merge","cars":'$cars','$cm'}'
W=$(echo "$job" | "$REPLAYQ" submit --wait=60 - 2>"$T/submit.err")
check_eq "worker: exit 1 (a car conflicted)" 1 "$?"
check_eq "worker: the same cars as the command" "$(jq -c '[.cars[] | .status + " " + (.commit // "-")]' <<<"$MG")" \
	"$(jq -c '[.cars[] | .status + " " + (.commit // "-")]' <<<"$W")"
check_workers_stop "$WORKER_PID"
# ---- renames remembered along one car's picks never reach the next car ----
# (renames.sh's case: upstream renames numbers; car "cut" cuts it down, car
# "back", stacked on it, restores it: a separate git replay of "back" onto
# cut's result cannot pair the file and conflicts, so the train's car must)
R3=$T/forget
git init -q -b main "$R3"
commit_file "$R3" numbers "$(seq 1 20)" base
git -C "$R3" checkout -q -b cut
commit_file "$R3" numbers "$(seq 1 3)" "A: cut numbers down"
git -C "$R3" checkout -q -b back
commit_file "$R3" numbers "$(seq 1 20)" "Revert A"
git -C "$R3" checkout -q main
git -C "$R3" mv numbers sequence
commit_file "$R3" sequence "$({ seq 100 109; seq 1 20; })" "rename numbers to sequence"
run_rq -C "$R3" train --target=main --ref-action=print --format=json cut back=cut..back
check_eq "a car starts with no remembered renames: back conflicts" "cut ok,back conflict" \
	"$(jq -r '[.cars[] | .name + " " + .status] | join(",")' <<<"$OUT")"
if upstream_git; then
	r1=$(jq -r '.cars[0].commit' <<<"$OUT")
	"$UPSTREAM_GIT" -C "$R3" replay --ref-action=print --onto "$r1" cut..back >/dev/null 2>&1
	check_eq "... as a separate upstream git replay of the car" 1 "$?"
fi

finish
