#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq replay --keep-going: a mass rebase where some branches conflict.
# Every clean branch equals what upstream `git replay` gives for that
# branch alone (ids included); conflicting and stacked branches are
# reported (conflict / blocked, with the ref and commit they wait on) and
# left where they were; --jobs=1, 2 and 4 give the same outcome; update
# mode moves only the clean refs; without --keep-going nothing changes
# (exit 1, nothing printed, as upstream); the same through a job
# (`replayq run`).
. "$(dirname "$0")/../lib.sh"
require jq

# gen_kg_repo dir branches "clashing": base of 50 files, main 5 commits
# newer, branches b1..bN of 3 commits off the base (every 4th stacked on
# the one before), each clashing one with a 4th commit that conflicts
# with main.
data() { printf 'data %d\n%s\n' "${#1}" "$1"; }
gen_kg_repo() {
	local r=$1 nb=$2 clash=$3 b c f m
	git init -q -b main "$r"
	{
		printf 'commit refs/heads/main\nmark :1\ncommitter A <a@example.com> 1700000000 +0000\n'
		data "base"
		for f in $(seq 1 50); do
			echo "M 100644 inline d$((f % 5))/f$f.txt"
			data "$(printf 'file %d\nline 2\nline 3' "$f")"
		done
		printf 'reset refs/tags/base\nfrom :1\n\n'
		for m in 1 2 3 4 5; do
			printf 'commit refs/heads/main\ncommitter A <a@example.com> %d +0000\n' $((1700001000 + m))
			data "main $m"
			echo "M 100644 inline d$((m % 5))/f$m.txt"
			data "$(printf 'file %d\nline 2 main\nline 3' "$m")"
		done
		for b in $(seq 1 "$nb"); do
			for c in 1 2 3; do
				printf 'commit refs/heads/b%d\ncommitter A <a@example.com> %d +0000\n' "$b" $((1700002000 + 10 * b + c))
				data "b$b.$c"
				if [ "$c" = 1 ] && [ $((b % 4)) -eq 0 ]; then echo "from refs/heads/b$((b - 1))"; fi
				if [ "$c" = 1 ] && [ $((b % 4)) -ne 0 ]; then echo "from :1"; fi
				echo "M 100644 inline new/b$b-$c.txt"
				data "b$b $c"
			done
			if [[ " $clash " == *" $b "* ]]; then
				printf 'commit refs/heads/b%d\ncommitter A <a@example.com> %d +0000\n' "$b" $((1700002000 + 10 * b + 4))
				data "b$b clash"
				echo "M 100644 inline d2/f2.txt"
				data "$(printf 'file 2\nline 2 b%d\nline 3' "$b")"
			fi
		done
	} | git -C "$r" fast-import --quiet
}

NB=16
R=$T/kg
gen_kg_repo "$R" $NB "3 6 10"
mapfile -t BR < <(for b in $(seq 1 $NB); do echo "b$b"; done)
export RQ_DATE="@1800000000 +0000"

# ---- the outcome, and the same with --jobs=2 and 4 ----
run_rq -C "$R" replay --keep-going --ref-action=print --jobs=1 --onto main ^base "${BR[@]}"
check_eq "keep-going: exit 1 (some branches conflicted)" 1 "$RC"
ONE_OUT=$OUT
ONE_ERR=$ERR
# b3, b6, b10 conflict; b4 (stacked on b3) is blocked; b8 on b7 and b12 on
# b11 are clean; b16 on b15 clean
check_eq "keep-going: 12 clean branches printed" 12 "$(echo "$OUT" | grep -c '^update refs/heads/b')"
for b in b3 b6 b10 b4; do
	check "keep-going: $b not printed" bash -c "! grep -q 'refs/heads/$b ' <<<\"\$1\"" _ "$OUT"
done
C3=$(git -C "$R" rev-parse b3)
check_contains "stderr: b3's conflict, commit and path" "conflict refs/heads/b3 at $C3: d2/f2.txt (content)" "$ERR"
check_contains "stderr: b4 blocked by b3 at its commit" "blocked refs/heads/b4 by refs/heads/b3 at $C3" "$ERR"
check_eq "stderr: one line per conflicting or blocked ref" 4 "$(echo "$ERR" | grep -c .)"
for j in 2 4; do
	run_rq -C "$R" replay --keep-going --ref-action=print --jobs=$j --onto main ^base "${BR[@]}"
	check_eq "jobs=$j: exit 1" 1 "$RC"
	check_eq "jobs=$j: the same updates, order and ids as jobs=1" "$ONE_OUT" "$OUT"
	check_eq "jobs=$j: the same conflict lines" "$ONE_ERR" "$ERR"
done
run_rq -C "$R" replay --keep-going --ref-action=print --format=json --jobs=2 --onto main ^base "${BR[@]}"
J2=$OUT
check_eq "json jobs=2: ran in children" 2 "$(jq .stats.parallel <<<"$J2")"
run_rq -C "$R" replay --keep-going --ref-action=print --format=json --jobs=1 --onto main ^base "${BR[@]}"
norm='del(.stats)'
check_eq "json: jobs=1 and jobs=2 agree (stats aside)" "$(jq -c "$norm" <<<"$OUT")" "$(jq -c "$norm" <<<"$J2")"
check_eq "json: status conflict" '"conflict"' "$(jq .status <<<"$OUT")"
check_eq "json: refs in update order with their status" \
	"b1 ok,b2 ok,b3 conflict,b4 blocked,b5 ok,b6 conflict,b7 ok,b8 ok,b9 ok,b10 conflict,b11 ok,b12 ok,b13 ok,b14 ok,b15 ok,b16 ok" \
	"$(jq -r '[.refs[] | (.ref | sub("refs/heads/"; "")) + " " + .status] | join(",")' <<<"$OUT")"
check_eq "json: updates are the clean refs" 12 "$(jq '.updates | length' <<<"$OUT")"
check_eq "json: b4 blocked_by" "refs/heads/b3 $C3" "$(jq -r '.refs[] | select(.ref == "refs/heads/b4") | .blocked_by | .ref + " " + .commit' <<<"$OUT")"
check_eq "json: b6 conflict paths" "d2/f2.txt:content" "$(jq -r '.refs[] | select(.ref == "refs/heads/b6") | .conflict.paths[] | .path + ":" + .kind' <<<"$OUT")"
check_eq "json: the first conflict in the old field" "$C3" "$(jq -r .conflict.commit <<<"$OUT")"
check_eq "json: new is null for a ref that did not move" null "$(jq '.refs[2].new' <<<"$OUT")"

# ---- the oracle: each clean branch alone with upstream git replay ----
if upstream_git; then
	same=0 differ=0
	while read -r _ ref new _; do
		up=$(GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main ^base "${ref#refs/heads/}")
		if [ "$up" = "update $ref $new $(git -C "$R" rev-parse "$ref")" ]; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			echo "  $ref: replayq $new, upstream: $up" >&2
		fi
	done <<<"$ONE_OUT"
	check_eq "oracle: every clean branch equals upstream git replay alone" "12 0" "$same $differ"
	echo "# oracle: $same clean branches compared with upstream git replay, $differ differences"
	# without --keep-going: exit 1, nothing printed, as upstream
	run_rq -C "$R" replay --ref-action=print --onto main ^base "${BR[@]}"
	up_out=$(GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main ^base "${BR[@]}" 2>/dev/null)
	up_rc=$?
	check_eq "without --keep-going: exit status as upstream" "$up_rc" "$RC"
	check_eq "without --keep-going: stdout as upstream (nothing)" "$up_out" "$OUT"
fi

# ---- a clean keep-going run is the plain run ----
run_rq -C "$R" replay --ref-action=print --onto main ^base b1 b2 b5 b7 b8
PLAIN=$OUT
run_rq -C "$R" replay --keep-going --ref-action=print --jobs=2 --onto main ^base b1 b2 b5 b7 b8
check_eq "all clean: exit 0" 0 "$RC"
check_eq "all clean: the same lines as without --keep-going" "$PLAIN" "$OUT"
check_eq "all clean: nothing on stderr" "" "$ERR"

# ---- update mode: only the clean refs move ----
U=$T/upd
cp -a "$R" "$U"
run_rq -C "$U" replay --keep-going --jobs=2 --onto main ^base "${BR[@]}"
check_eq "update: exit 1" 1 "$RC"
check_eq "update: nothing on stdout" "" "$OUT"
moved=0 kept=0
while read -r _ ref new old; do
	[ "$(git -C "$U" rev-parse "$ref")" = "$new" ] && moved=$((moved + 1))
done <<<"$ONE_OUT"
for b in b3 b4 b6 b10; do
	[ "$(git -C "$U" rev-parse "$b")" = "$(git -C "$R" rev-parse "$b")" ] && kept=$((kept + 1))
done
check_eq "update: the 12 clean refs hold their new ids" 12 "$moved"
check_eq "update: the conflicting and blocked refs did not move" 4 "$kept"
check_contains "update: reflog of a moved ref" "replay --onto $(git -C "$U" rev-parse main)" \
	"$(git -C "$U" reflog show --format=%gs refs/heads/b1 2>/dev/null)"
check "update: fsck" fsck_ok "$U"
check "update: no temporary directory left" no_litter "$U"
check_eq "update: the conflicting refs have no reflog entry" "" \
	"$(git -C "$U" reflog show --format=%gs refs/heads/b3 2>/dev/null | grep replay)"
# every branch conflicting: nothing moves, no pack is left
before_packs=$(ls "$U"/.git/objects/pack/*.pack | wc -l)
run_rq -C "$U" replay --keep-going --onto main ^base b3 b6
check_eq "all conflicting: exit 1" 1 "$RC"
check_eq "all conflicting: no pack written" "$before_packs" "$(ls "$U"/.git/objects/pack/*.pack | wc -l)"

# ---- branches sharing a conflicting commit ----
S=$T/shared
make_abc_repo "$S"
git -C "$S" checkout -q -b stem base
commit_file "$S" m.txt "stem clash" "stem: clashes with main"
git -C "$S" checkout -q -b leaf1
commit_file "$S" l1.txt l1 "leaf 1"
git -C "$S" checkout -q -b leaf2 stem
commit_file "$S" l2.txt l2 "leaf 2"
git -C "$S" checkout -q main
STEM=$(git -C "$S" rev-parse stem)
run_rq -C "$S" replay --keep-going --ref-action=print --format=json --onto main ^base a leaf1 leaf2
check_eq "shared: a clean, the two leaves conflict at the stem's commit" \
	"a ok -,leaf1 conflict $STEM,leaf2 conflict $STEM" \
	"$(jq -r '[.refs[] | (.ref | sub("refs/heads/"; "")) + " " + .status + " " + (.conflict.commit // "-")] | join(",")' <<<"$OUT")"
run_rq -C "$S" replay --keep-going --ref-action=print --format=json --contained --onto main ^base a leaf1 leaf2
check_eq "shared --contained: the stem conflicts, the leaves wait on it" \
	"a ok,stem conflict,leaf1 blocked stem,leaf2 blocked stem" \
	"$(jq -r '[.refs[] | (.ref | sub("refs/heads/"; "")) + " " + .status + (if .blocked_by then " " + (.blocked_by.ref | sub("refs/heads/"; "")) else "" end)] | join(",")' <<<"$OUT")"
# --advance: one ref, reported as a conflict
run_rq -C "$S" replay --keep-going --format=json --ref-action=print --advance main base..stem
check_eq "advance: the branch's outcome" "refs/heads/main conflict" "$(jq -r '.refs[] | .ref + " " + .status' <<<"$OUT")"

# ---- the same as a job (replayq run) ----
ROOT=$T/root
mkdir -p "$ROOT"
git clone -q --mirror "$R" "$ROOT/kg.git"
revs=$(printf '"%s",' "${BR[@]}")
cat >"$T/jobs.jsonl" <<EOF
{"v":1,"id":"kg-print","repo":"kg.git","mode":"onto","target":"main","revisions":["^base",${revs%,}],"keep_going":true,"committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}}
{"v":1,"id":"kg-update","repo":"kg.git","mode":"onto","target":"main","revisions":["^base","b1","b3","b4"],"keep_going":true,"ref_action":"update","committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}}
{"v":1,"id":"kg-bad","repo":"kg.git","mode":"onto","target":"main","revisions":["b1"],"keep_going":"yes"}
EOF
OUT=$("$REPLAYQ" run --repo-root="$ROOT" "$T/jobs.jsonl" 2>"$T/run.err")
check_eq "run: exit 2 (conflicts, and an invalid job)" 2 "$?"
P=$(jq -c 'select(.id == "kg-print")' <<<"$OUT")
check_eq "job: the same updates as the command" \
	"$(echo "$ONE_OUT" | awk '{print $2, $3}')" "$(jq -r '.updates[] | .ref + " " + .new' <<<"$P")"
check_eq "job: status conflict, not applied, refs listed" "conflict false 16" \
	"$(jq -r '[.status, .applied, (.refs | length)] | map(tostring) | join(" ")' <<<"$P")"
Q=$(jq -c 'select(.id == "kg-update")' <<<"$OUT")
check_eq "job update: applied the clean ref only" "conflict true refs/heads/b1" \
	"$(jq -r '[.status, .applied, (.updates[].ref)] | map(tostring) | join(" ")' <<<"$Q")"
check_eq "job update: b1 moved" "$(jq -r .updates[0].new <<<"$Q")" "$(git -C "$ROOT/kg.git" rev-parse b1)"
check_eq "job update: b3 did not move" "$(git -C "$R" rev-parse b3)" "$(git -C "$ROOT/kg.git" rev-parse b3)"
check_eq "job: keep_going must be a boolean" "invalid_job field 'keep_going' must be true or false" \
	"$(jq -r 'select(.id == "kg-bad") | .error.code + " " + .error.message' <<<"$OUT")"

# ---- through a worker: the intent and the fence, then the clean refs ----
require redis-server
git clone -q --mirror "$R" "$ROOT/kgw.git"
check_ref_format "$ROOT/kgw.git"
start_redis
export REPLAYQ_QUEUE=kg
start_worker w1 --repo-root="$ROOT" --jobs=2
W=$(sed -n 1p "$T/jobs.jsonl" | jq -c '.id = "kg-worker" | .repo = "kgw.git" | .ref_action = "update"' |
	"$REPLAYQ" submit --wait=60 - 2>"$T/submit.err")
check_eq "worker: exit 1 (some branches conflicted)" 1 "$?"
check_eq "worker: status conflict, applied, 12 refs moved" "conflict true 12" \
	"$(jq -r '[.status, .applied, (.updates | length)] | map(tostring) | join(" ")' <<<"$W")"
check_eq "worker: the same updates as the command" \
	"$(echo "$ONE_OUT" | awk '{print $2, $3}')" "$(jq -r '.updates[] | .ref + " " + .new' <<<"$W")"
check_eq "worker: the refs moved" "$(jq -r '.updates[11].new' <<<"$W")" \
	"$(git -C "$ROOT/kgw.git" rev-parse "$(jq -r '.updates[11].ref' <<<"$W")")"
check_eq "worker: b3 did not move" "$(git -C "$R" rev-parse b3)" "$(git -C "$ROOT/kgw.git" rev-parse b3)"
check_eq "worker: no intent or grant left" "" "$(rcli --scan --pattern 'replayq:{kg}:intent:*')$(rcli --scan --pattern 'replayq:{kg}:granted:*')"
check_workers_stop "$WORKER_PID"
finish
