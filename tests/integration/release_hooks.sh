#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The test hooks exist only in the test build: the release replayq
# (build/replayq, which tests/run builds and names in RQ_RELEASE_REPLAYQ)
# obeys no REPLAYQ_TEST_* variable. Each check is made against the test
# build too, where the hook must act, so that the check can fail.
. "$(dirname "$0")/../lib.sh"

REL=${RQ_RELEASE_REPLAYQ:-}
if [ -z "$REL" ] || [ ! -x "$REL" ]; then
	echo "# notice: RQ_RELEASE_REPLAYQ not set (tests/run sets it): release checks skipped" >&2
	finish
fi

section "the binaries say what they are"
check_contains "test build" "test hooks" "$("$REPLAYQ" version)"
check_eq "release build" "" "$("$REL" version | grep -o 'test hooks')"
check_eq "no test variable named in the release binary" 0 "$(grep -c 'REPLAYQ_TEST_' "$REL")"

r=$T/repo
make_repo "$r" v

section "a hold point: the test build holds, the release build does not"
REPLAYQ_TEST_HOLD=pick,refs-start,refs-locked,pack-temps \
	"$REPLAYQ" -C "$r" replay --ref-action=print --onto main base..topic >"$T/test.out" 2>&1 &
tp=$!
p=$(hold_pid pick)
check "the test build holds at 'pick'" [ -n "$p" ]
kill -9 "$tp" 2>/dev/null
wait "$tp" 2>/dev/null
rm -f "$HOLD_DIR"/*
REPLAYQ_TEST_HOLD=pick,refs-start,refs-locked,pack-temps timeout 120 \
	"$REL" -C "$r" replay --onto main base..topic
check_eq "the release build replays and updates, held nowhere" 0 $?
check_eq "no hold announced" "" "$(ls "$HOLD_DIR")"
check_eq "topic moved" "$(git -C "$r" rev-parse main)" "$(git -C "$r" rev-parse topic~2)"

section "REPLAYQ_TEST_CRASH: the test build's child crashes, the release build's does not"
mkdir -p "$T/root" && make_repo "$T/root/proj" w
j=$(job crash1)
st=$(echo "$j" | REPLAYQ_TEST_CRASH=crash1 "$REPLAYQ" run --repo-root="$T/root" --jobs=1 2>/dev/null |
	jq -r '.status + " " + (.error.code // "")')
check_eq "test build: crashed" "error crashed" "$st"
st=$(echo "$j" | REPLAYQ_TEST_CRASH=crash1 timeout 120 "$REL" run --repo-root="$T/root" --jobs=1 2>/dev/null |
	jq -r '.status + " " + (.error.code // "")')
check_eq "release build: ok" "ok " "$st"
finish
