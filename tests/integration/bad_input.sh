#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile and malformed jobs, put on the queue raw (as any producer could):
# each gets an error result with its code, none is retried, and the worker
# survives them all and still runs a good job afterwards. The same corpus
# through `replayq run`. Runs under ASan in the test suite.
. "$(dirname "$0")/../lib.sh"
ROOT=$T/root
mkdir -p "$ROOT"
git init -q -b main "$ROOT/r"
commit_file "$ROOT/r" a.txt a "a"
git -C "$ROOT/r" checkout -q -b topic
commit_file "$ROOT/r" b.txt b "b"
git -C "$ROOT/r" checkout -q main
commit_file "$ROOT/r" c.txt c "c"
export REPLAYQ_QUEUE=bad
start_redis
start_worker wb --repo-root="$ROOT" --jobs=2 --visibility-timeout=2 --max-deliveries=2
W=$WORKER_PID
STREAM='replayq:{bad}:jobs'
good='"repo":"r","mode":"onto","target":"main","revisions":["main..topic"]'

# corpus: id|code|job text (the job text may be anything)
big=$(head -c 200000 /dev/zero | tr '\0' 'x')
revs100k=$(seq 1 100000 | sed 's/.*/"main"/' | paste -sd, -)
cat >"$T/corpus" <<EOT
trunc|invalid_job|{"id":"trunc","repo":"r","mode":"onto"
notjson|invalid_job|this is not json
array|invalid_job|[1,2,3]
number|invalid_job|42
empty|invalid_job|
noid|invalid_job|{$good}
badid|invalid_job|{"id":"a b c",$good}
wrongtype-repo|invalid_job|{"id":"wrongtype-repo","repo":7,"mode":"onto","target":"main","revisions":["main..topic"]}
wrongtype-revs|invalid_job|{"id":"wrongtype-revs","repo":"r","mode":"onto","target":"main","revisions":"main..topic"}
wrongtype-rev|invalid_job|{"id":"wrongtype-rev","repo":"r","mode":"onto","target":"main","revisions":[1]}
wrongtype-contained|invalid_job|{"id":"wrongtype-contained",$good,"contained":"yes"}
unknown-field|invalid_job|{"id":"unknown-field",$good,"rm":"-rf"}
dup-key|invalid_job|{"id":"dup-key","id":"other",$good}
badmode|invalid_job|{"id":"badmode","repo":"r","mode":"rebase","target":"main","revisions":["main..topic"]}
nomode|invalid_job|{"id":"nomode","repo":"r","target":"main","revisions":["main..topic"]}
huge-target|invalid_job|{"id":"huge-target","repo":"r","mode":"onto","target":"$big","revisions":["main..topic"]}
huge-job|invalid_job|{"id":"huge-job",$good,"reply_to":"$big"}
esc-dotdot|bad_repo|{"id":"esc-dotdot","repo":"../../etc","mode":"onto","target":"main","revisions":["main..topic"]}
esc-abs|bad_repo|{"id":"esc-abs","repo":"/etc","mode":"onto","target":"main","revisions":["main..topic"]}
esc-mid|bad_repo|{"id":"esc-mid","repo":"r/../../x","mode":"onto","target":"main","revisions":["main..topic"]}
esc-nul|invalid_job|{"id":"esc-nul","repo":"r\\u0000x","mode":"onto","target":"main","revisions":["main..topic"]}
missing-repo|bad_repo|{"id":"missing-repo","repo":"nope","mode":"onto","target":"main","revisions":["main..topic"]}
opt-rev|bad_revision|{"id":"opt-rev","repo":"r","mode":"onto","target":"main","revisions":["--exec=rm -rf /"]}
opt-target|bad_revision|{"id":"opt-target","repo":"r","mode":"onto","target":"--upload-pack=x","revisions":["main..topic"]}
colon-rev|bad_revision|{"id":"colon-rev","repo":"r","mode":"onto","target":"main","revisions":["main:a.txt"]}
unknown-ref|bad_revision|{"id":"unknown-ref","repo":"r","mode":"onto","target":"main","revisions":["main..nosuch"]}
unknown-onto|bad_revision|{"id":"unknown-onto","repo":"r","mode":"onto","target":"nosuch","revisions":["main..topic"]}
bad-ref|bad_ref|{"id":"bad-ref","repo":"r","mode":"onto","target":"main","revisions":["main..topic"],"ref":"refs/heads/a..b"}
bad-ref2|bad_ref|{"id":"bad-ref2","repo":"r","mode":"onto","target":"main","revisions":["main..topic"],"ref":"HEAD"}
not-a-ref|not_a_ref|{"id":"not-a-ref","repo":"r","mode":"advance","target":"main~1","revisions":["main..topic"]}
too-many-revs|invalid_job|{"id":"too-many-revs","repo":"r","mode":"onto","target":"main","revisions":[$revs100k]}
neg-timeout|invalid_job|{"id":"neg-timeout",$good,"timeout_ms":-5}
float-commits|invalid_job|{"id":"float-commits",$good,"max_commits":1.5}
bad-tz|invalid_job|{"id":"bad-tz",$good,"committer":{"name":"a","email":"b","time":1,"tz":"0100"}}
too-many-commits|too_many_commits|{"id":"too-many-commits","repo":"r","mode":"onto","target":"main","revisions":["topic"],"max_commits":1}
EOT
n=0
while IFS='|' read -r id code job; do
	n=$((n + 1))
	printf '%s' "$job" | rcli -x XADD "$STREAM" '*' id "$id" job >/dev/null
done <"$T/corpus"
# an entry with no fields we know
rcli XADD "$STREAM" '*' junk 1 >/dev/null
n=$((n + 1))
wait_for "every bad job answered" 120 bash -c "[ \$(redis-cli -p $REDIS_PORT XLEN 'replayq:{bad}:results') -ge $n ]"
while IFS='|' read -r id code job; do
	res=$(rcli GET "replayq:{bad}:result:$id")
	check_eq "$id: error code $code" "$code" "$(jq -r .error.code <<<"$res" 2>/dev/null)"
	check_eq "$id: answered on the first delivery" 1 "$(jq -r .attempt <<<"$res" 2>/dev/null)"
done <"$T/corpus"
check_eq "nothing dead-lettered" 0 "$(rcli XLEN 'replayq:{bad}:dead')"
check_eq "nothing pending" 0 "$(rcli XPENDING "$STREAM" workers | head -1)"
check "the worker survived" kill -0 "$W"
run_rq submit --wait=60 <<<'{"id":"good-after",'"$good"'}'
check_eq "a good job still runs" ok "$(jq -r .status <<<"$OUT")"
check_eq "the topic branch is untouched" "$(git -C "$ROOT/r" rev-parse topic)" "$(git -C "$ROOT/r" rev-parse topic)"
check "no litter" no_litter "$ROOT/r"
check "fsck" git -C "$ROOT/r" fsck --strict --no-progress --no-dangling
check_workers_stop "$W"
check "no sanitizer report in the worker log" sanitizer_clean "$T/wb.log"

# the same corpus, one job per line, through replayq run
cut -d'|' -f3- "$T/corpus" | tr -d '\r' >"$T/corpus.jsonl"
OUT=$("$REPLAYQ" run --repo-root="$ROOT" --jobs=2 "$T/corpus.jsonl" 2>"$T/run.err")
check_eq "run: one result per line" "$(grep -c '' "$T/corpus.jsonl" | tr -d ' ')" "$(($(echo "$OUT" | wc -l) + $(grep -c '^$' "$T/corpus.jsonl")))"
check_eq "run: no ok result" 0 "$(echo "$OUT" | grep -c '"status":"ok"')"
check "run: no sanitizer report" sanitizer_clean "$T/run.err"

finish
