#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the worker's forked processes inherit: a pool child running a job
# and the janitor hold none of the parent's sockets (its Redis
# connections, the metrics listener and its clients) and no descriptor
# but their own pipes; the janitor leaves the parent's SIGTERM handler.
# A metrics client the worker closes while a child runs sees the end of
# its connection. Each process is held at its test hold point while it is
# looked at through /proc.
. "$(dirname "$0")/../lib.sh"
require jq redis-server curl
ROOT=$T/root
Q=fds
mkdir -p "$ROOT"
make_repo "$ROOT/proj" one
start_redis
export REPLAYQ_QUEUE=$Q

# sockets pid: how many sockets the process holds
sockets() { find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
# high_fds pid: its descriptors from 3 up, as "fd -> target" lines
high_fds() {
	local f n
	for f in /proc/"$1"/fd/*; do
		n=${f##*/}
		[ "$n" -ge 3 ] && echo "$n -> $(readlink "$f")"
	done
}
# catches pid signo: the process has a handler for the signal
catches() {
	local mask
	mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status")
	(((0x$mask >> ($2 - 1)) & 1))
}
no_term_handler() { ! catches "$1" 15; }

# started with its standard input closed (the subshell's /dev/null, given
# to a background job, closed before the exec): what it opens must not
# become descriptor 0, which the children keep
(REPLAYQ_TEST_HOLD=janitor,job:held1 exec "$REPLAYQ" worker --name=f1 --repo-root="$ROOT" \
	--jobs=1 --metrics-listen=127.0.0.1:0 0<&- 2>"$T/f1.log") &
W=$!
BG_PIDS+=("$W")
WORKER_NAMES[$W]=f1
wait_for "the metrics address in the log" 60 grep -qs '"metrics listening"' "$T/f1.log"
ADDR=$(grep -m1 '"metrics listening"' "$T/f1.log" | jq -r .address)

section "the janitor"
J=$(hold_pid janitor)
check "the janitor is held" [ -n "$J" ]
check "the worker itself holds its sockets (Redis, listener)" [ "$(sockets "$W")" -ge 3 ]
check_eq "the janitor holds no socket" 0 "$(sockets "$J")"
check_eq "nor any descriptor from 3 up" "" "$(high_fds "$J")"
check "the worker catches SIGTERM" catches "$W" 15
check "the janitor does not (its default: it ends)" no_term_handler "$J"
kill -USR1 "$J"
worker_started f1 60

section "a pool child"
HOST=${ADDR%:*}
PORT=${ADDR##*:}
# a client of the metrics endpoint, idle, accepted before the job's child
# is forked (the scrape after it is served in the same or a later turn)
exec {idle}<>"/dev/tcp/$HOST/$PORT"
check_eq "a scrape gets through" 200 "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://$ADDR/metrics")"
run_rq submit <<<"$(job held1)"
P=$(hold_pid job:held1)
check "the job's child is held" [ -n "$P" ]
check_eq "the child holds no socket" 0 "$(sockets "$P")"
check_eq "the child's descriptors from 3 up: its report pipe" 1 "$(high_fds "$P" | wc -l)"
check_contains "which is a pipe" "pipe:" "$(high_fds "$P")"
# the worker closes an idle client after its time: the client sees the
# end, though the child forked meanwhile still runs
timeout 60 cat <&"$idle" >/dev/null
check_eq "the idle client sees its connection end while the child runs" 0 "$?"
check "the child still runs" kill -0 "$P"
exec {idle}>&-
kill -USR1 "$P"
wait_for "the result of held1" 60 eval '[ "$(rcli EXISTS "$(key $Q result:held1)")" = 1 ]'
check_eq "the job went through" ok "$("$REPLAYQ" result held1 | jq -r .status)"

check_workers_stop "$W"
check "no ASan/UBSan report in the worker's log" sanitizer_clean "$T/f1.log"
finish
