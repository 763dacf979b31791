#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Ref names are bytes (issue 33 point 19): a branch whose name is not
# UTF-8 (refs/heads/a\xe9) travels through every JSON without loss (the
# intent, a result's updates, a keep-going job's refs, a train's target
# and its cars' refs: \xNN for such a byte and for a backslash, decoded as
# docs/protocol.md says), and a job killed between two ref commits is
# finished by its retry from the intent: that ref reported recovered, with
# its true old value, as an undisturbed run reports it. Run a second time
# on reftable repositories (hostile_refnames@reftable), where the job is
# killed with its one table written and not yet published.
. "$(dirname "$0")/../lib.sh"
require redis-server
CLIENT=$(cd "$(dirname "$0")/../../clients/python" && pwd)
ROOT=$T/root
mkdir -p "$ROOT" "$T/refroot"
AE=$'a\xe9'
# decode: a JSON string on stdin (as the result holds it) to the hex of
# its bytes, by the decoding docs/protocol.md gives (the Python client's)
decode() {
	PYTHONPATH=$CLIENT /usr/bin/python3 -c '
import json, sys
from replayq_client import ref_bytes
print(ref_bytes(json.load(sys.stdin)).hex())'
}
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

# base <- x (branch a\xe9) <- y (branch b); main moved on
git init -q -b main "$T/w"
commit_file "$T/w" base.txt base base
git -C "$T/w" tag base
git -C "$T/w" checkout -q -b "$AE" base
commit_file "$T/w" x.txt x x
git -C "$T/w" checkout -q -b b
commit_file "$T/w" y.txt y y
git -C "$T/w" checkout -q main
commit_file "$T/w" m.txt m "main moves"
cp -a "$T/w" "$T/refroot/w"
check_ref_format "$T/w"
job='{"id":"J","repo":"w","mode":"onto","target":"main","revisions":["base..b"],"contained":true,"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'

section "results: updates, refs, a train"
REF=$("$REPLAYQ" run --repo-root="$T/refroot" <<<"$job")
check_eq "reference run: ok with 2 updates" "ok 2" "$(jq -r '"\(.status) \(.updates | length)"' <<<"$REF")"
check_eq "the name is written with \\xE9" 'refs/heads/a\xE9' "$(jq -r '.updates[0].ref' <<<"$REF")"
check_eq "... and decodes to the ref's bytes" "$(hex "refs/heads/$AE")" "$(jq '.updates[0].ref' <<<"$REF" | decode)"
check_eq "the ref moved where the result says" "$(jq -r .updates[0].new <<<"$REF")" \
	"$(git -C "$T/refroot/w" rev-parse "refs/heads/$AE")"
run_rq -C "$T/w" replay --keep-going --format=json --ref-action=print --contained --onto main base..b
check_eq "keep-going: refs[].ref decodes to the bytes" "$(hex "refs/heads/$AE")" "$(jq '.refs[0].ref' <<<"$OUT" | decode)"
check_eq "keep-going: updates[].ref too" "$(hex "refs/heads/$AE")" "$(jq '.updates[0].ref' <<<"$OUT" | decode)"
run_rq -C "$T/w" train --target="$AE" --format=json --ref-action=print b
check_eq "train: exit 0" 0 "$RC"
check_eq "train: the target decodes to the bytes" "$(hex "refs/heads/$AE")" "$(jq '.train.target' <<<"$OUT" | decode)"
check_eq "train: the car's ref too" "$(hex "refs/train/$AE/b")" "$(jq '.cars[0].ref' <<<"$OUT" | decode)"

section "killed between two ref commits: the retry reports that ref"
start_redis
export REPLAYQ_QUEUE=rn
cp -a "$T/w" "$ROOT/w"
point=refs-committed
[ $REFTABLE = 1 ] && point=refs-written
REPLAYQ_TEST_HOLD_ONCE=1 REPLAYQ_TEST_HOLD=$point start_worker wa --repo-root="$ROOT" \
	--jobs=1 --visibility-timeout=1
WA=$WORKER_PID
run_rq submit <<<"$job"
KID=$(hold_pid $point)
check_eq "the intent names the ref without loss" "$(hex "refs/heads/$AE")" \
	"$(rcli --raw GET 'replayq:{rn}:intent:J' | jq '.updates[0].ref' | decode)"
if [ $REFTABLE = 0 ]; then
	check_eq "the first ref moved, the second not yet" \
		"$(jq -r .updates[0].new <<<"$REF") $(git -C "$T/w" rev-parse b)" \
		"$(git -C "$ROOT/w" rev-parse "refs/heads/$AE") $(git -C "$ROOT/w" rev-parse b)"
else
	check_eq "no ref moved yet (one table for both)" \
		"$(git -C "$T/w" rev-parse "refs/heads/$AE") $(git -C "$T/w" rev-parse b)" \
		"$(git -C "$ROOT/w" rev-parse "refs/heads/$AE") $(git -C "$ROOT/w" rev-parse b)"
fi
kill -9 "$KID"
has_result() { [ "$(rcli EXISTS 'replayq:{rn}:result:J')" = 1 ]; }
check "the retry finishes" wait_for "J result" 60 has_result
R=$(rcli --raw GET 'replayq:{rn}:result:J')
check_eq "ok, recovered from the intent" "ok true" "$(jq -r '"\(.status) \(.recovered)"' <<<"$R")"
check_eq "the updates of an undisturbed run (true old values)" \
	"$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$REF")" "$(jq -c '[.updates[] | [.ref, .old, .new]]' <<<"$R")"
check_eq "the refs of an undisturbed run" \
	"$(git -C "$T/refroot/w" for-each-ref --format='%(refname) %(objectname)')" \
	"$(git -C "$ROOT/w" for-each-ref --format='%(refname) %(objectname)')"
check_eq "the reflog of an undisturbed run (one entry for the move)" \
	"$(git -C "$T/refroot/w" reflog show "refs/heads/$AE")" "$(git -C "$ROOT/w" reflog show "refs/heads/$AE")"
check_eq "no lock left" "" "$(ref_locks "$ROOT/w")"
check "git's checks clean" refs_consistent "$ROOT/w"
check_workers_stop "$WA"
finish
