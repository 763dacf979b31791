#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The manual pages (docs/man): each renders without a warning from
# `man --warnings`, each command's page names every option of the
# command's option table (as `replayq <command> -h` prints it, whose
# synopsis must name them too) and every REPLAYQ_* variable it reads, the
# aliases (replayq-run, -result, -queue) lead to their pages; `replayq help <command>` without a terminal prints
# the command's usage and its page's name, and `replayq help` the commands.
. "$(dirname "$0")/../lib.sh"
require man
TOP=$(cd "$(dirname "$0")/../.." && pwd)
M=$T/man
mkdir -p "$M/man1" "$M/man5"
cp "$TOP"/docs/man/*.1 "$M/man1/"
cp "$TOP"/docs/man/*.5 "$M/man5/"
export MANPATH=$M MANWIDTH=120 LC_ALL=C.UTF-8
# render: the page as text, its warnings in $T/warn.<page>
render() { man --warnings -E UTF-8 "$@" 2>"$T/warn.$*" | col -b; }

for page in replayq replayq-replay replayq-train replayq-worker replayq-submit replayq-maintain \
	"5 replayq-jobs" replayq-run replayq-result replayq-queue; do
	text=$(render $page)
	check "man $page renders" [ -n "$text" ]
	check_eq "man $page: no warnings" "" "$(cat "$T/warn.$page")"
done
check_contains "replayq-run leads to the worker's page" "replayq-worker, replayq-run" "$(render replayq-run)"
check_contains "replayq-queue leads to the submit page" "replayq-submit, replayq-result, replayq-queue" \
	"$(render replayq-queue)"

# every option of each command's table, and its variables, in its page
for pair in replay:replayq-replay train:replayq-train worker:replayq-worker run:replayq-worker \
	submit:replayq-submit result:replayq-submit queue:replayq-submit maintain:replayq-maintain; do
	cmd=${pair%%:*} page=${pair#*:}
	"$REPLAYQ" "$cmd" -h >"$T/usage" 2>&1
	text=$(render "$page")
	# "--opt", or "-S, --opt": both names
	opts=$(sed -n 's/^ \{2,6\}\(-[^ ]*\)\(, \(--[^ ]*\)\)\{0,1\}.*/\1 \3/p' "$T/usage" |
		sed 's/,//g; s/\[no-\]//g; s/\[=[^] ]*\]//g')
	least=3
	[ "$cmd" = maintain ] && least=1 # --format alone
	check "$cmd: options found in -h" [ "$(wc -w <<<"$opts")" -ge $least ]
	synopsis=$(sed '/^$/,$d' "$T/usage")
	for o in $opts; do
		check_contains "man $page names $cmd's $o" "$o" "$text"
		# and the synopsis of -h names it too (--no-refs for --refs)
		check_contains "$cmd -h: its synopsis names $o" "${o#--}" "$synopsis"
	done
	for v in $(grep -o 'REPLAYQ_[A-Z_]*' "$T/usage" | sort -u); do
		check_contains "man $page names $cmd's $v" "$v" "$text"
	done
done
# the options of the program itself
text=$(render replayq)
for o in -C -c --no-replace-objects --version; do check_contains "man replayq names $o" "$o" "$text"; done
for c in replay train worker run submit result queue maintain help version; do
	check_contains "man replayq names the command $c" "$c" "$text"
done

# replayq help <command>: with no terminal, the usage and the page
run_rq help replay
check_eq "help replay: exit 0" 0 "$RC"
check_contains "help replay prints the usage" "--onto <revision>" "$OUT"
check_contains "and names the page" "manual: man replayq-replay" "$OUT"
run_rq help queue
check_contains "help queue names the submit page" "manual: man replayq-submit" "$OUT"
run_rq help maintain
check_contains "help maintain names its page" "manual: man replayq-maintain" "$OUT"
run_rq help jobs
check_eq "help jobs: the format's page" "manual: man 5 replayq-jobs" "$OUT"
run_rq help
check_contains "help: the commands" "help       show a command's manual page" "$OUT"
run_rq help bogus
check_eq "help of no command: usage error" 129 "$RC"
check_contains "and says so" "no help for 'bogus'" "$ERR"
finish
