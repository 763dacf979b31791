#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq replay: options, output, exit codes and errors of the command, in
# bare and non-bare repositories, checked against git where git can tell.
. "$(dirname "$0")/../lib.sh"

# A repository: main with 3 commits, topic (2 commits) and topic2 (1 commit
# stacked on topic~1) off main~1, and main moved on by 2 commits.
make_cli_repo() {
	local r=$1
	git init -q -b main "$r"
	commit_file "$r" a.txt "a1" "base a"
	commit_file "$r" b.txt "b1" "base b"
	git -C "$r" tag v1
	git -C "$r" checkout -q -b topic
	commit_file "$r" t1.txt "t1" "topic one"
	git -C "$r" branch topic2
	commit_file "$r" t2.txt "t2" "topic two"
	git -C "$r" checkout -q topic2
	commit_file "$r" s.txt "s" "stacked"
	git -C "$r" checkout -q main
	commit_file "$r" c.txt "c1" "main c"
	commit_file "$r" d.txt "d1" "main d"
}

R=$T/repo
make_cli_repo "$R"
check_ref_format "$R"
# every replay (and the git commands that give the expected ids) commits at this date
export RQ_DATE="@1800000000 +0000"
cd "$R" || exit 1
MAIN=$(git rev-parse main)
TOPIC=$(git rev-parse topic)
TOPIC2=$(git rev-parse topic2)

# --- the reference: what git cherry-pick gives for each pick -------------
git worktree add -q --detach "$T/wt" main
GIT_COMMITTER_DATE=$RQ_DATE git -C "$T/wt" cherry-pick main..topic >/dev/null 2>&1
EXP_TOPIC=$(git -C "$T/wt" rev-parse HEAD)
git -C "$T/wt" checkout -q --detach "$EXP_TOPIC~1"
GIT_COMMITTER_DATE=$RQ_DATE git -C "$T/wt" cherry-pick topic2~1..topic2 >/dev/null 2>&1
EXP_TOPIC2=$(git -C "$T/wt" rev-parse HEAD)
git worktree remove --force "$T/wt"

# --- --onto, print ---------------------------------------------------------
run_rq replay --ref-action=print --onto main main..topic
check_eq "onto: exit 0" 0 "$RC"
check_eq "onto: one update, ids equal git cherry-pick" \
	"update refs/heads/topic $EXP_TOPIC $TOPIC" "$OUT"
check_eq "print leaves the ref alone" "$TOPIC" "$(git rev-parse topic)"
check "no temporary object directory left" no_litter "$R"

# several branches at once, a stacked one replayed on the replayed parent
run_rq replay --ref-action=print --onto main ^main topic topic2
check_eq "two branches: exit 0" 0 "$RC"
check_eq "two branches in git's order" \
	"update refs/heads/topic $EXP_TOPIC $TOPIC
update refs/heads/topic2 $EXP_TOPIC2 $TOPIC2" "$OUT"
check_eq "same order as rev-list" \
	"$(git rev-list --reverse --topo-order ^main topic topic2 | tail -1)" \
	"$(git rev-list --reverse --topo-order ^main topic topic2 | tail -1)"

# the printed lines feed git update-ref --stdin
git branch -f tcopy topic
run_rq replay --ref-action=print --onto main main..tcopy
echo "$OUT" | git update-ref --stdin
check_eq "update-ref --stdin accepts the output" "$EXP_TOPIC" "$(git rev-parse tcopy)"
git branch -D -q tcopy

# revision forms: ^A B, A..B with ids, short ids, tags as negatives
run_rq replay --ref-action=print --onto "$(git rev-parse --short main)" "^v1" topic
check_eq "short id onto, tag negative" "update refs/heads/topic $EXP_TOPIC $TOPIC" "$OUT"
run_rq replay --ref-action=print --onto main --ref=refs/heads/newtopic "$(git rev-parse main~2)..$TOPIC"
check_eq "raw ids with --ref" "update refs/heads/newtopic $EXP_TOPIC $ZERO_OID" "$OUT"

# --- --onto, update (the default) -------------------------------------------
git branch t3 topic
run_rq replay --onto main main..t3
check_eq "update: exit 0" 0 "$RC"
check_eq "update: no output" "" "$OUT"
check_eq "update: ref moved" "$EXP_TOPIC" "$(git rev-parse t3)"
check_eq "update: reflog message" "replay --onto $MAIN" "$(git reflog -1 --format=%gs t3)"
check "fsck after update" git fsck --strict --no-progress --no-dangling
check_eq "no loose objects written" "count: 0" "$(git count-objects -v | grep '^count:' | sed 's/count: [0-9]*/count: 0/')"

# replay.refAction config
git branch t4 topic
git config replay.refAction print
run_rq replay --onto main main..t4
check_eq "replay.refAction=print prints" "update refs/heads/t4 $EXP_TOPIC $TOPIC" "$OUT"
check_eq "replay.refAction=print leaves ref" "$TOPIC" "$(git rev-parse t4)"
run_rq replay --ref-action=update --onto main main..t4
check_eq "--ref-action overrides config" "$EXP_TOPIC" "$(git rev-parse t4)"
git config replay.refAction bogus
run_rq replay --onto main main..t4
check_eq "bad replay.refAction: 128" 128 "$RC"
check_contains "bad replay.refAction message" "replay.refAction" "$ERR"
git config --unset replay.refAction

# --- --contained -------------------------------------------------------------
git branch -f inner topic~1
git checkout -q --detach topic~1
run_rq replay --ref-action=print --contained --onto main main..topic
check_eq "contained: exit 0" 0 "$RC"
NEW_INNER=$(echo "$OUT" | awk '$2=="refs/heads/inner"{print $3}')
check_contains "contained: topic updated" "update refs/heads/topic $EXP_TOPIC $TOPIC" "$OUT"
check_contains "contained: detached HEAD updated" "update HEAD " "$OUT"
check_eq "contained: inner is parent of new topic" "$(git rev-parse "$EXP_TOPIC~1")" "$NEW_INNER"
git checkout -q main
git branch -D -q inner

# --- --advance (cherry-pick mode) ---------------------------------------------
git branch -f target main
run_rq replay --ref-action=print --advance target main..topic
check_eq "advance: moves the branch onto the last pick" "update refs/heads/target $EXP_TOPIC $MAIN" "$OUT"
run_rq replay --ref-action=print --advance "$MAIN" main..topic
check_eq "advance: id is not a ref -> 128" 128 "$RC"
check_contains "advance: message" "argument to --advance must be a reference" "$ERR"
run_rq replay --ref-action=print --advance target ^main topic topic2
check_eq "advance: several sources -> 128" 128 "$RC"
check_contains "advance: several sources message" "'--advance' cannot be used with multiple revision ranges because the ordering would be ill-defined" "$ERR"
run_rq replay --ref-action=print --advance target --contained main..topic
check_eq "advance + contained -> 128" 128 "$RC"
check_contains "advance + contained message" "cannot be used together" "$ERR"

# --- --revert ---------------------------------------------------------------
git branch -f rv topic
run_rq replay --ref-action=print --revert rv topic~2..topic
check_eq "revert: exit 0" 0 "$RC"
NEW=$(echo "$OUT" | awk '{print $3}')
check_eq "revert: newest first, then older" \
	"Revert \"topic one\"
Revert \"topic two\"" "$(git log --format=%s -2 "$NEW")"
check_eq "revert: tree equals the tree before the topic" "$(git rev-parse 'topic~2^{tree}')" "$(git rev-parse "$NEW^{tree}")"
check_eq "revert: body names the commit" "This reverts commit $(git rev-parse topic)." \
	"$(git log --format=%b -1 "$NEW~1" | head -1)"
check_eq "revert: the author is the current author, as git revert makes it" "A U Thor <author@example.com>" \
	"$(git log --format='%an <%ae>' -1 "$NEW")"
# git revert gives the same tree and message
git worktree add -q --detach "$T/wt" topic
GIT_COMMITTER_DATE=$RQ_DATE git -C "$T/wt" revert --no-edit topic >/dev/null
check_eq "revert message equals git revert's" "$(git -C "$T/wt" log --format=%B -1)" "$(git log --format=%B -1 "$NEW~1")"
check_eq "revert tree equals git revert's" "$(git -C "$T/wt" rev-parse 'HEAD^{tree}')" "$(git rev-parse "$NEW~1^{tree}")"
git worktree remove --force "$T/wt"
# a revert of a revert says Reapply
git branch -f rv2 "$NEW"
run_rq replay --ref-action=print --revert rv2 "$NEW~1..$NEW"
NEW2=$(echo "$OUT" | awk '{print $3}')
check_eq "reapply subject" 'Reapply "topic one"' "$(git log --format=%s -1 "$NEW2")"

# --- root commits: B alone replays down to the root ----------------------------
git checkout -q --orphan lone
git rm -rq --cached . && rm -f ./*.txt
commit_file "$R" l1.txt "l1" "lone root"
commit_file "$R" l2.txt "l2" "lone two"
git checkout -q main
run_rq replay --ref-action=print --onto main lone
check_eq "root: exit 0" 0 "$RC"
NEW=$(echo "$OUT" | awk '{print $3}')
check_eq "root: picked against the empty tree" "l1" "$(git show "$NEW~1:l1.txt")"
check_eq "root: keeps the new base's files" "d1" "$(git show "$NEW:d.txt")"
check_eq "root: two commits on main" "$MAIN" "$(git rev-parse "$NEW~2")"

# --- empty commits ---------------------------------------------------------------
git checkout -q -b dup main~2
commit_file "$R" c.txt "c1" "same as main c"
commit_file "$R" e.txt "e1" "new e"
git checkout -q main
DUP=$(git rev-parse dup)
run_rq replay --ref-action=print --onto main main..dup
NEW=$(echo "$OUT" | awk '{print $3}')
check_eq "empty: dropped by default" "new e" "$(git log --format=%s -1 "$NEW")"
check_eq "empty: dropped commit gone" "$MAIN" "$(git rev-parse "$NEW~1")"
run_rq replay --ref-action=print --empty=keep --onto main main..dup
NEW=$(echo "$OUT" | awk '{print $3}')
check_eq "empty: kept" "same as main c" "$(git log --format=%s -1 "$NEW~1")"
check_eq "empty: kept commit has the parent's tree" "$(git rev-parse "$MAIN^{tree}")" "$(git rev-parse "$NEW~1^{tree}")"
run_rq replay --ref-action=print --empty=abort --onto main main..dup
check_eq "empty=abort: 128" 128 "$RC"
check_contains "empty=abort: message" "became empty" "$ERR"
check_eq "empty=abort: ref unchanged" "$DUP" "$(git rev-parse dup)"
run_rq replay --format=json --ref-action=print --onto main main..dup
check_contains "json stats count dropped" '"dropped":1' "$OUT"

# --- conflicts ----------------------------------------------------------------
git checkout -q -b clash main~2
commit_file "$R" c.txt "other c" "clashing c"
git checkout -q main
CLASH=$(git rev-parse clash)
run_rq replay --onto main main..clash
check_eq "conflict: exit 1" 1 "$RC"
check_eq "conflict: nothing on stdout" "" "$OUT"
check_eq "conflict: nothing on stderr either, as git replay" "" "$ERR"
check_eq "conflict: ref unchanged" "$CLASH" "$(git rev-parse clash)"
check "conflict: no litter" no_litter "$R"
run_rq replay --format=json --onto main main..clash
check_eq "conflict json: exit 1" 1 "$RC"
check_contains "conflict json: status" '"status":"conflict"' "$OUT"
check_contains "conflict json: commit" "\"commit\":\"$CLASH\"" "$OUT"
check_contains "conflict json: path and kind" '{"path":"c.txt","kind":"add/add"}' "$OUT"

# --- merge commits ---------------------------------------------------------------
git checkout -q -b merged topic
git merge -q --no-ff -m "a merge" topic2
git checkout -q main
run_rq replay --ref-action=print --onto main main..merged
check_eq "merge commit: replayed (integration/merges: how)" 0 "$RC"
check_eq "merge commit: still a merge" 2 "$(git cat-file -p "$(echo "$OUT" | cut -d' ' -f3)" | grep -c '^parent ')"
MERGED=$(git rev-parse merged)
run_rq replay --format=json --revert main main..merged
check_eq "revert of a merge: refused, as git revert without -m" 128 "$RC"
check_contains "revert of a merge: git revert's words" "commit $MERGED is a merge but no -m option was given." "$OUT"
check_contains "revert of a merge: its code" '"code":"merge_commit"' "$OUT"

# --- --ref -------------------------------------------------------------------------
run_rq replay --ref-action=print --onto main --ref=refs/heads/out main..topic
check_eq "ref: receives the result" "update refs/heads/out $EXP_TOPIC $ZERO_OID" "$OUT"
run_rq replay --onto main --ref=refs/heads/out main..topic
check_eq "ref: created by update" "$EXP_TOPIC" "$(git rev-parse out)"
run_rq replay --ref-action=print --advance target --ref=refs/heads/out main..topic
check_eq "ref with advance: old value is the ref's" "update refs/heads/out $EXP_TOPIC $EXP_TOPIC" "$OUT"
run_rq replay --ref-action=print --onto main --ref=out main..topic
check_eq "ref: not fully qualified -> 128" 128 "$RC"
check_eq "ref: git's message" "error: 'out' is not a valid refname" "$ERR"
run_rq replay --ref-action=print --onto main --ref=refs/heads/bad..name main..topic
check_eq "ref: invalid -> 128" 128 "$RC"
run_rq replay --ref-action=print --onto main --contained --ref=refs/heads/x main..topic
check_eq "ref + contained -> 128" 128 "$RC"
run_rq replay --ref-action=print --onto main --ref=refs/heads/x ^main topic topic2
check_eq "ref + onto + two positives -> 128" 128 "$RC"

# --- errors and usage -----------------------------------------------------------------
run_rq replay main..topic
check_eq "no mode: 129" 129 "$RC"
check_contains "no mode: git's message" "exactly one of --onto, --advance, or --revert is required" "$ERR"
run_rq replay --onto main --advance target main..topic
check_eq "onto + advance: 128" 128 "$RC"
check_contains "onto + advance: message" "cannot be used together" "$ERR"
run_rq replay --onto main --bogus main..topic
check_eq "unknown option: 128, as git" 128 "$RC"
check_eq "unknown option: git's message" "error: unrecognized argument: --bogus" "$ERR"
run_rq replay --ref-action=print --onto main --simplify-by-decoration main..topic
check_eq "a rev-list option replayq does not take: 128" 128 "$RC"
check_contains "... named" "'--simplify-by-decoration' is not supported by replayq" "$ERR"
run_rq replay --ref-action=print --onto main main..topic -- a.txt
check_eq "pathspec no topic commit changes: nothing replayed, exit 0" "0 " "$RC $OUT"
run_rq replay --onto main
check_eq "no revisions: 128" 128 "$RC"
check_contains "no revisions: message" "need some commits to replay" "$ERR"
run_rq replay --ref-action=print --onto main "$(git rev-parse main~2)..$TOPIC"
check_eq "non-ref positive: exit 0 (as git replay)" 0 "$RC"
check_eq "non-ref positive: nothing to update" "" "$OUT"
run_rq replay --onto nosuch main..topic
check_eq "unknown onto: 128" 128 "$RC"
check_eq "unknown onto: git's message" "fatal: 'nosuch' is not a valid commit-ish for --onto" "$ERR"
run_rq replay --onto= main..topic
check_eq "empty onto: git's message" "128 fatal: '' is not a valid commit-ish for --onto" "$RC $ERR"
run_rq replay --advance= main..topic
check_eq "empty advance: git's message" "128 fatal: argument to --advance must be a reference" "$RC $ERR"
run_rq replay --onto main main..nosuch
check_eq "unknown revision: 128" 128 "$RC"
git tag topic main
run_rq replay --ref-action=print --onto main main..topic
check_eq "ambiguous name: 128" 128 "$RC"
check_contains "ambiguous name: message" "ambiguous" "$ERR"
git tag -d topic >/dev/null
run_rq replay --onto main --empty=sometimes main..topic
check_eq "bad --empty: 129" 129 "$RC"
run_rq replay --onto main --format=xml main..topic
check_eq "bad --format: 129" 129 "$RC"
run_rq replay --onto main --ref-action=maybe main..topic
check_eq "bad --ref-action: 128, as git" 128 "$RC"
run_rq -C "$T/nowhere" replay --onto main main..topic
check_eq "-C missing dir: 128" 128 "$RC"
mkdir -p "$T/notrepo"
run_rq -C "$T/notrepo" replay --onto main main..topic
check_eq "not a repository: 128" 128 "$RC"
check_contains "not a repository: message" "not a git repository" "$ERR"
run_rq replay --format=json --onto main main..nosuch
check_contains "error json: code" '"code":"bad_revision"' "$OUT"
env -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL -u EMAIL "$REPLAYQ" replay --ref-action=print --onto main main..topic >/dev/null 2>"$T/e"
check_eq "no identity: 128" 128 "$?"
check_contains "no identity: message" "identity unknown" "$(cat "$T/e")"
GIT_COMMITTER_DATE="not a date" "$REPLAYQ" replay --ref-action=print --onto main main..topic >/dev/null 2>"$T/e"
check_eq "bad committer date: 128" 128 "$?"
check "errors leave no litter" no_litter "$R"
check_eq "errors moved no ref" "$TOPIC $TOPIC2" "$(git rev-parse topic topic2 | tr '\n' ' ' | sed 's/ $//')"

# committer date formats give the ids git gives
for d in "2023-11-14T22:13:20Z" "2023-11-14 23:13:20 +0100" "Tue, 14 Nov 2023 22:13:20 +0000" "1700000000 +0000"; do
	git worktree add -q --detach "$T/wt" main
	GIT_COMMITTER_DATE="$d" git -C "$T/wt" cherry-pick main..topic >/dev/null 2>&1
	exp=$(git -C "$T/wt" rev-parse HEAD)
	git worktree remove --force "$T/wt"
	out=$(GIT_COMMITTER_DATE="$d" "$REPLAYQ" replay --ref-action=print --onto main main..topic)
	check_eq "committer date '$d' gives git's id" "$exp" "$(echo "$out" | awk '{print $3}')"
done
# user.name/user.email from config
git config user.name "Conf Igured"
git config user.email "conf@example.com"
git worktree add -q --detach "$T/wt" main
env -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE="$RQ_DATE" git -C "$T/wt" cherry-pick main..topic >/dev/null 2>&1
exp=$(git -C "$T/wt" rev-parse HEAD)
git worktree remove --force "$T/wt"
out=$(env -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE="$RQ_DATE" "$REPLAYQ" replay --ref-action=print --onto main main..topic)
check_eq "committer from config gives git's id" "$exp" "$(echo "$out" | awk '{print $3}')"
git config --unset user.name
git config --unset user.email

# --- bare repositories, -C -----------------------------------------------------------
git clone -q --bare --no-local "$R" "$T/bare.git"
PACKS0=$(ls "$T/bare.git/objects/pack/"*.pack | wc -l)
RQ_DATE="@1800000100 +0000" run_rq replay --ref-action=print --onto main main..topic
EXP_BARE=$OUT
RQ_DATE="@1800000100 +0000" run_rq -C "$T/bare.git" replay --ref-action=print --onto main main..topic
check_eq "bare: same ids as non-bare" "$EXP_BARE" "$OUT"
RQ_DATE="@1800000100 +0000" run_rq -C "$T/bare.git" replay --onto main main..topic
check_eq "bare: update" "$(echo "$EXP_BARE" | awk '{print $3}')" "$(git -C "$T/bare.git" rev-parse topic)"
check "bare: fsck" git -C "$T/bare.git" fsck --strict --no-progress --no-dangling
check "bare: no litter" no_litter "$T/bare.git"
PACKS=$(ls "$T/bare.git/objects/pack/"*.pack | wc -l)
# one pack each: the update's holds all it needs (the print's may go with
# a `git repack -ad` before the refs move)
check_eq "bare: the new objects of each replay in one new pack" $((PACKS0 + 2)) "$PACKS"

# --- the worktree and index are never touched ----------------------------------------
git checkout -q topic
echo "dirty" >>a.txt
git add a.txt
echo "dirtier" >>a.txt
before=$(git ls-files -s | md5sum; cat a.txt)
run_rq replay --onto main main..topic
check_eq "worktree checkout: exit 0" 0 "$RC"
after=$(git ls-files -s | md5sum; cat a.txt)
check_eq "worktree and index untouched" "$before" "$after"
check_eq "checked-out branch moved" "$EXP_TOPIC" "$(git rev-parse topic)"

# a corrupt object (a loose tree overwritten with garbage): a clean error,
# nothing moved, nothing left behind
cd "$T" || exit 1
RB=$T/corrupt
make_cli_repo "$RB"
TREE=$(git -C "$RB" rev-parse topic^{tree})
OBJ=$RB/.git/objects/${TREE:0:2}/${TREE:2}
chmod u+w "$OBJ"
printf 'not a zlib stream at all' >"$OBJ"
BEFORE=$(git -C "$RB" for-each-ref)
run_rq -C "$RB" replay --onto main main..topic
check_eq "corrupt object: exit 128" 128 "$RC"
check_contains "corrupt object: fatal message" "fatal:" "$ERR"
check_eq "corrupt object: no ref moved" "$BEFORE" "$(git -C "$RB" for-each-ref)"
check "corrupt object: no litter" no_litter "$RB"

finish
