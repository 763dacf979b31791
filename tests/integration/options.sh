#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The number options of every command (worker/opt's rq_opt_number) and
# --log-level: a value with anything after its digits, a sign, a space, a
# number past its range or past what a long holds is a usage error (exit
# 129, the option named on stderr), checked before any connection; good
# values are taken.
. "$(dirname "$0")/../lib.sh"
ROOT=$T/root
mkdir -p "$ROOT"
git init -q -b main "$ROOT/r"
commit_file "$ROOT/r" a.txt a a
git -C "$ROOT/r" branch -q topic
commit_file "$ROOT/r" b.txt b b
# nothing listens there: a command that got past its options would fail
# otherwise (or wait for the server)
export REPLAYQ_REDIS_URL="redis://127.0.0.1:$(free_port)/0"
unset REPLAYQ_QUEUE REPLAYQ_REPO_ROOT REPLAYQ_JOBS REPLAYQ_LOG_LEVEL

BAD_NUMBERS=("10x" "-0" "+5" " 5" "5 " "" "1e3" "0x10" "99999999999999999999999")
# usage_error what option args...: exit 129 and the option named on stderr
# (a worker that took the value would wait for Redis: ended after 60 s)
usage_error() {
	local what=$1 opt=$2
	shift 2
	OUT=$(timeout 60 "$REPLAYQ" "$@" </dev/null 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
	check_eq "$what: exit 129" 129 "$RC"
	check_contains "$what: names $opt" "$opt" "$ERR"
}
section "number options"
for v in "${BAD_NUMBERS[@]}"; do
	usage_error "queue --count='$v'" count queue --count="$v" stats
	usage_error "submit --wait='$v'" wait submit --wait="$v"
	usage_error "worker --jobs='$v'" jobs worker --repo-root="$ROOT" --jobs="$v"
	usage_error "worker --grace='$v'" grace worker --repo-root="$ROOT" --grace="$v"
	usage_error "worker --visibility-timeout='$v'" visibility-timeout \
		worker --repo-root="$ROOT" --visibility-timeout="$v"
	usage_error "worker --max-deliveries='$v'" max-deliveries \
		worker --repo-root="$ROOT" --max-deliveries="$v"
	usage_error "run --memory-limit='$v'" memory-limit run --repo-root="$ROOT" --memory-limit="$v"
	usage_error "replay --jobs='$v'" jobs -C "$ROOT/r" replay --jobs="$v" --onto main main..topic
done
usage_error "queue --count=0" count queue --count=0 stats
usage_error "queue --count past its range" count queue --count=100001 dead
usage_error "a port past 65535" metrics-listen worker --repo-root="$ROOT" \
	--metrics-listen=127.0.0.1:99999999999999999999
usage_error "a port with a sign" metrics-listen worker --repo-root="$ROOT" --metrics-listen=127.0.0.1:+80

section "good values"
run_rq run --repo-root="$ROOT" --jobs=007 --memory-limit=0 </dev/null
check_eq "run --jobs=007 --memory-limit=0: taken" 0 "$RC"
run_rq -C "$ROOT/r" replay --jobs=64 --ref-action=print --onto main main..topic
check_eq "replay --jobs=64: taken" 0 "$RC"
run_rq -C "$ROOT/r" replay --jobs=65 --ref-action=print --onto main main..topic
check_eq "replay --jobs=65: refused" 129 "$RC"

section "--log-level"
usage_error "run --log-level=loud" log-level run --repo-root="$ROOT" --log-level=loud
check_eq "run: said before any job" "" "$OUT"
REPLAYQ_LOG_LEVEL=loud run_rq run --repo-root="$ROOT" </dev/null
check_eq "run: REPLAYQ_LOG_LEVEL=loud: exit 129" 129 "$RC"
usage_error "worker --log-level=loud" log-level worker --repo-root="$ROOT" --log-level=loud
run_rq run --repo-root="$ROOT" --log-level=debug </dev/null
check_eq "run --log-level=debug: taken" 0 "$RC"
check "no sanitizer report" sanitizer_clean "$T/stderr"
finish
