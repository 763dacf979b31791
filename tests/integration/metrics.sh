#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replayq worker --metrics-listen: a real worker, a real redis-server, curl
# as the client. A batch of jobs with known outcomes (ok, conflict, a bad
# revision, a bad repository, an invalid job, a job that times out twice
# and is dead-lettered) gives counters equal to the stored results; two
# jobs held at their hold point show running=2 and the queue's lag and
# pending count while three more wait; the exposition follows the format
# (HELP and TYPE, cumulative buckets, _total counters). Hostile clients
# (garbage, a huge header, many idle connections, half a request) get
# their answers or are closed, and the worker goes on serving and working.
. "$(dirname "$0")/../lib.sh"
require jq redis-server curl python3
ROOT=$T/root
Q=mq
mkdir -p "$ROOT"
make_repo "$ROOT/proj" one
start_redis
export REPLAYQ_QUEUE=$Q

# --- the worker, its metrics on a port the kernel picks ---------------------
REPLAYQ_TEST_HOLD=job:slow1,job:hold1,job:hold2 start_worker m1 --repo-root="$ROOT" --jobs=2 \
	--metrics-listen=127.0.0.1:0 --visibility-timeout=1 --max-deliveries=2
W=$WORKER_PID
wait_for "the metrics address in the log" 60 grep -qs '"metrics listening"' "$T/m1.log"
ADDR=$(grep -m1 '"metrics listening"' "$T/m1.log" | jq -r .address)
check_contains "listens where asked" "127.0.0.1:" "$ADDR"
# it listens before it connects (503 until then): wait for the connection
worker_started m1 60

# scrape: GET /metrics into $T/scrape; metric 'name{labels}': its value (0 if absent)
scrape() { curl -sS --max-time 10 -o "$T/scrape" -w '%{http_code}' "http://$ADDR/metrics"; }
metric() { awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }' "$T/scrape"; }
L="queue=\"$Q\""
metric_is() { scrape >/dev/null && [ "$(metric "$1")" = "$2" ]; }

# lint: the text format's rules and Prometheus' naming conventions
lint() {
	python3 - "$T/scrape" <<'PY'
import re, sys
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (\S+)$')
types, seen, buckets, problems = {}, set(), {}, []
for n, line in enumerate(open(sys.argv[1]).read().split("\n")[:-1], 1):
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        parts = line.split(" ", 3)
        if line.startswith("# TYPE "):
            types[parts[2]] = parts[3]
        continue
    m = sample.match(line)
    if not m:
        problems.append("line %d does not parse: %r" % (n, line)); continue
    name, labels, value = m.group(1), m.group(2) or "", m.group(3)
    float(value.replace("Inf", "inf"))
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    fam = name if name in types else base
    t = types.get(fam)
    if t is None:
        problems.append("no TYPE before %s" % name)
    elif t == "counter" and not name.endswith("_total"):
        problems.append("counter %s does not end in _total" % name)
    elif t == "histogram" and name.endswith("_bucket"):
        key = (fam, re.sub(r',?le="[^"]*"', "", labels))
        prev = buckets.get(key, -1)
        if float(value) < prev:
            problems.append("buckets of %s go down" % name)
        buckets[key] = float(value)
    elif t == "histogram" and name.endswith("_count"):
        if buckets.get((fam, labels)) != float(value):
            problems.append("%s%s: +Inf bucket != _count" % (name, labels))
    if t == "histogram" and not fam.endswith("_seconds"):
        problems.append("histogram %s is not in seconds" % fam)
print("\n".join(problems) if problems else "lint ok")
PY
}

# --- a batch with known outcomes ---------------------------------------------
c='"committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}'
{
	for i in 1 2 3; do job "ok$i"; done
	echo '{"v":1,"id":"conf1","repo":"proj","mode":"onto","target":"main","revisions":["base..clash"],'"$c"'}'
	echo '{"v":1,"id":"badrev1","repo":"proj","mode":"onto","target":"main","revisions":["base..nosuch"],'"$c"'}'
	echo '{"v":1,"id":"badrepo1","repo":"nosuch","mode":"onto","target":"main","revisions":["base..topic"],'"$c"'}'
	echo '{"v":1,"id":"inv1","repo":"proj","mode":"sideways","target":"main","revisions":["base..topic"]}'
	echo '{"v":1,"id":"slow1","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"],"timeout_ms":300,'"$c"'}'
} >"$T/batch1.jsonl"
BATCH1="ok1 ok2 ok3 conf1 badrev1 badrepo1 inv1 slow1"
section "batch 1: ok, conflict, errors, a timeout dead-lettered"
check_eq "scrape before any job: 200" 200 "$(scrape)"
run_rq submit --no-validate "$T/batch1.jsonl"
check_eq "batch 1 queued" 0 "$RC"
have_results() {
	local id
	for id in "$@"; do [ "$(rcli EXISTS "$(key $Q "result:$id")")" = 1 ] || return 1; done
}
wait_for "the results of batch 1" 120 have_results $BATCH1
# shellcheck disable=SC2086
"$REPLAYQ" result $BATCH1 >"$T/results1.jsonl"
check_eq "scrape after batch 1: 200" 200 "$(scrape)"
cp "$T/scrape" "$T/scrape1"
R1=$T/results1.jsonl
for st in ok conflict; do
	want=$(jq -s "[.[] | select(.status == \"$st\")] | length" "$R1")
	check_eq "jobs_total $st = results" "$want" "$(metric "replayq_jobs_total{$L,status=\"$st\"}")"
done
check_eq "results: 3 ok, 1 conflict" "3 1" "$(jq -s '[.[] | select(.status == "ok")] | length' "$R1") $(jq -s '[.[] | select(.status == "conflict")] | length' "$R1")"
for code in $(jq -r 'select(.status == "error") | .error.code' "$R1" | sort -u); do
	want=$(jq -s "[.[] | select(.error.code == \"$code\")] | length" "$R1")
	check_eq "jobs_total error $code = results" "$want" \
		"$(metric "replayq_jobs_total{$L,status=\"error\",code=\"$code\"}")"
done
check_eq "error codes of the batch" "bad_repo bad_revision invalid_job timeout" \
	"$(jq -r 'select(.status == "error") | .error.code' "$R1" | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "the queue's counters agree (ok)" "$(stat_of $Q ok)" "$(metric "replayq_jobs_total{$L,status=\"ok\"}")"
check_eq "a timeout was retried once" 1 "$(metric "replayq_job_retries_total{$L,code=\"timeout\"}")"
check_eq "and dead-lettered" 1 "$(metric "replayq_dead_letters_total{$L}")"
check_eq "the dead stream has it" 1 "$(rcli XLEN "$(key $Q dead)")"
check_eq "job duration _count = jobs" 8 "$(metric "replayq_job_duration_seconds_count{$L}")"
check_eq "job duration +Inf bucket = jobs" 8 "$(metric "replayq_job_duration_seconds_bucket{$L,le=\"+Inf\"}")"
check_eq "picks = the results' stats.picked" "$(jq -s '[.[].stats.picked // 0] | add' "$R1")" \
	"$(metric "replayq_picks_total{$L}")"
check_eq "objects = the results' stats.objects" "$(jq -s '[.[].stats.objects // 0] | add' "$R1")" \
	"$(metric "replayq_objects_written_total{$L}")"
check_eq "pack bytes = the results' stats.pack_bytes" "$(jq -s '[.[].stats.pack_bytes // 0] | add' "$R1")" \
	"$(metric "replayq_pack_written_bytes_total{$L}")"
check "some picks and objects were counted" [ "$(metric "replayq_picks_total{$L}")" -ge 6 ]
for ph in resolve walk replay pack; do
	want=$(jq -s "[.[] | select(.stats.ms.$ph != null)] | length" "$R1")
	check_eq "phase $ph: _count = results with that phase" "$want" \
		"$(metric "replayq_job_phase_duration_seconds_count{$L,phase=\"$ph\"}")"
done
# stats.ms.total is not a phase (sum by (phase) would count it twice): its own family
want=$(jq -s '[.[] | select(.stats.ms.total != null)] | length' "$R1")
check_eq "replay duration _count = results with a total" "$want" \
	"$(metric "replayq_job_replay_duration_seconds_count{$L}")"
check "the results report a total" [ "$want" -ge 4 ]
check_eq "no phase=\"total\" series" "" "$(grep 'phase="total"' "$T/scrape")"
check_eq "nothing running after the batch" 0 "$(metric "replayq_jobs_running{$L}")"
check_eq "pool capacity" 2 "$(metric "replayq_pool_capacity{$L}")"
# a plain Redis: no redirection, no write waits for replicas
check_contains "redirects: served, 0" "replayq_redis_redirects_total{$L} 0" "$(cat "$T/scrape")"
check_contains "unreplicated writes: served, 0" "replayq_redis_unreplicated_writes_total{$L} 0" \
	"$(cat "$T/scrape")"
check_eq "the exposition lints" "lint ok" "$(lint)"

# --- during a batch: two jobs held, three waiting --------------------------------
section "batch 2: running, lag and pending while jobs are held"
{ job hold1; job hold2; } | run_rq submit
P1=$(hold_pid job:hold1)
P2=$(hold_pid job:hold2)
{ job ok4; job ok5; job ok6; } | run_rq submit
check "lag 3 while both slots are busy" wait_for "lag 3" 60 metric_is "replayq_queue_lag{$L}" 3
check_eq "running = 2 (both held)" 2 "$(metric "replayq_jobs_running{$L}")"
check_eq "pending = 2 (delivered, held)" 2 "$(metric "replayq_queue_pending{$L}")"
check_eq "no new result while held" 8 "$(metric "replayq_job_duration_seconds_count{$L}")"
kill -USR1 "$P1" "$P2"
wait_for "the results of batch 2" 120 have_results hold1 hold2 ok4 ok5 ok6
check "lag and pending back to 0" wait_for "lag 0, pending 0" 60 \
	eval 'metric_is "replayq_queue_lag{$L}" 0 && [ "$(metric "replayq_queue_pending{$L}")" = 0 ]'
check_eq "running = 0 after" 0 "$(metric "replayq_jobs_running{$L}")"
check_eq "ok: 3 + 5" 8 "$(metric "replayq_jobs_total{$L,status=\"ok\"}")"
check_eq "duration _count: 13 jobs" 13 "$(metric "replayq_job_duration_seconds_count{$L}")"
check_eq "the queue's counters agree (ok, after)" "$(stat_of $Q ok)" "$(metric "replayq_jobs_total{$L,status=\"ok\"}")"

# --- Redis reconnects: Redis stopped and started again on its port ------------------
section "Redis restarted"
fails() { grep -c '"read failed"' "$T/m1.log"; }
n0=$(fails)
lost_redis() { [ "$(fails)" -gt "$n0" ]; }
stop_redis
wait_for "the worker to lose Redis" 60 lost_redis
start_redis
check "the reconnects are counted" wait_for "a reconnect" 60 \
	eval 'scrape >/dev/null && [ "$(metric "replayq_redis_reconnects_total{$L}")" -ge 1 ]'
# a connection Redis closes (CLIENT KILL) while it stays up: the first new
# connection counts too (it used to count only after a failed try)
r0=$(metric "replayq_redis_reconnects_total{$L}")
n0=$(fails)
rcli client kill type normal >/dev/null
wait_for "the worker to see its connection closed" 60 lost_redis
check "a reconnect after CLIENT KILL is counted" wait_for "one more reconnect" 60 \
	eval 'scrape >/dev/null && [ "$(metric "replayq_redis_reconnects_total{$L}")" -gt "$r0" ]'
# both of the worker's connections back (the second at its next command),
# before the hostile-client checks count the worker's sockets
check "both connections reconnected" wait_for "two more reconnects" 90 \
	eval 'scrape >/dev/null && [ "$(metric "replayq_redis_reconnects_total{$L}")" -ge $((r0 + 2)) ]'

# --- hostile clients ---------------------------------------------------------------------
section "hostile clients"
HOST=${ADDR%:*}
PORT=${ADDR##*:}
# raw: send bytes ($1, printf format), print what comes back (at most 10 s)
raw() {
	local fd out
	exec {fd}<>"/dev/tcp/$HOST/$PORT" || return 1
	printf "$1" >&"$fd"
	out=$(timeout 10 cat <&"$fd" | head -c 200)
	exec {fd}>&-
	printf '%s' "$out"
}
check_contains "garbage (a TLS hello) gets 400" "HTTP/1.1 400" "$(raw '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03')"
check_contains "a line that is not HTTP gets 400" "HTTP/1.1 400" "$(raw 'hello there\r\n\r\n')"
check_contains "HTTP/1.0 works" "HTTP/1.1 200" "$(raw 'GET /metrics HTTP/1.0\r\n\r\n')"
check_contains "a NUL byte in a header gets 400" "HTTP/1.1 400" \
	"$(raw 'GET /metrics HTTP/1.1\r\nX-A: a\x00b\r\n\r\n')"
check_contains "a NUL byte in a header line's name gets 400" "HTTP/1.1 400" \
	"$(raw 'GET /metrics HTTP/1.1\r\nHost: x\r\n\x00\r\n\r\n')"
check_eq "GET / gets 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/")"
check_eq "GET /metrics/x gets 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/metrics/x")"
check_eq "POST /metrics gets 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' -d x "http://$ADDR/metrics")"
big=$(head -c 20000 /dev/zero | tr '\0' x)
check_eq "a 20 kB header gets 431" 431 "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "http://$ADDR/metrics")"
sockets() { find "/proc/$W/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
base=$(sockets)
IDLE=()
for i in $(seq 1 40); do
	exec {fd}<>"/dev/tcp/$HOST/$PORT" && IDLE+=("$fd")
	[ $((i % 10)) = 0 ] && printf 'GET /metr' >&"$fd" # half a request
done
check_eq "40 idle connections open" 40 "${#IDLE[@]}"
check_eq "a scrape still gets through" 200 "$(scrape)"
check "the worker holds at most 16 client connections" [ "$(sockets)" -le $((base + 16)) ]
check "slow clients are closed by the worker" wait_for "idle connections closed" 60 \
	eval '[ "$(sockets)" -le "$base" ]'
for fd in "${IDLE[@]}"; do exec {fd}>&-; done
check "the worker is alive" kill -0 "$W"
run_rq submit --wait=60 <<<"$(job after1)"
check_eq "and still runs jobs" ok "$(jq -r .status <<<"$OUT")"
check_eq "and counts them" 9 "$(scrape >/dev/null && metric "replayq_jobs_total{$L,status=\"ok\"}")"
check_eq "the exposition still lints" "lint ok" "$(lint)"

# --- before Redis answers ----------------------------------------------------------
# a worker waiting for Redis answers its scrapes (503, it has no queue yet)
# instead of leaving them hanging until it connects, and SIGTERM stops it
section "metrics while Redis is away"
NOPORT=$(free_port)
start_worker m0 --redis="redis://127.0.0.1:$NOPORT/0" --repo-root="$ROOT" --metrics-listen=127.0.0.1:0
W0=$WORKER_PID
check "no Redis: the metrics address is logged" \
	wait_for "m0's metrics address" 60 grep -qs '"metrics listening"' "$T/m0.log"
A0=$(grep -m1 '"metrics listening"' "$T/m0.log" | jq -r .address)
wait_for "m0 to retry" 60 grep -qs 'cannot connect to Redis yet' "$T/m0.log"
check_eq "no Redis: a scrape gets 503" 503 \
	"$(curl -sS --max-time 10 -o "$T/scrape0" -w '%{http_code}' "http://$A0/metrics")"
check_contains "no Redis: the answer says why" "not connected to the queue yet" "$(cat "$T/scrape0")"
check "no Redis: the worker still waits for it" kill -0 "$W0"
check_workers_stop --within=30 "$W0"

# --- options -----------------------------------------------------------------------
run_rq worker --repo-root="$ROOT" --metrics-listen=nonsense
check_eq "a bad address is a usage error" 129 "$RC"
check_contains "that says why" "metrics-listen" "$ERR"
run_rq worker --repo-root="$ROOT" --metrics-listen="$ADDR"
check_eq "a taken port is fatal" 128 "$RC"
check_contains "-h names the option and its variable" "REPLAYQ_METRICS_LISTEN" "$("$REPLAYQ" worker -h)"

check_workers_stop "$W"
check "no ASan/UBSan report in the worker's log" sanitizer_clean "$T/m1.log"
finish
