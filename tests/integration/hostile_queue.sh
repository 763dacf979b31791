#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile queue: what producers and a damaged Redis can do to a worker.
# The same job id twice in the stream runs once and answers both entries;
# keys of the wrong type where the worker writes are permanent errors that
# dead-letter the one job (the result script writes all or nothing) while
# the worker goes on; the stream entry's own fields are checked with the
# job's rules before any key is built from them; credentials (percent-
# encoded, a user without a password in the URL, a producer-only ACL user,
# passwords kept off the command line) and TLS through deploy/redis-tls-tunnel.
# A real redis-server, real workers, real repositories.
. "$(dirname "$0")/../lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
require jq redis-server redis-cli curl
unset REPLAYQ_QUEUE REPLAYQ_REDIS_PASSWORD REPLAYQ_REDIS_PASSWORD_FILE REPLAYQ_REPO_ROOT \
	REPLAYQ_TEST_CRASH REPLAYQ_TEST_HOLD
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" proj
TOPIC0=$(git -C "$ROOT/proj" rev-parse topic)

has_key() { [ "$(rcli EXISTS "$1")" = 1 ]; }
llen_is() { [ "$(rcli LLEN "$1")" = "$2" ]; }
# xadd Q field value...: a raw stream entry, as any producer could add; prints its id
xadd() {
	local q=$1
	shift
	rcli XADD "$(key "$q" jobs)" '*' "$@"
}
# the JSON a worker logged for job id J in log file F (one line each)
log_lines() { grep -F "\"job\":\"$2\"" "$1"; }

start_redis
export REPLAYQ_REDIS_URL=$REDIS_URL

# --- 5. the same job id twice in the stream ------------------------------------
section "5. one id, one run, one result"
Q=d5
# two raw entries with one id (and one content), each with its own reply
# list, and a worker with two slots that holds every run of the job: only
# one run may start, the other entry is answered with its result
xadd $Q id dup1 job "$(job dup1 '"ref_action":"update","reply_to":"box1"')" >/dev/null
xadd $Q id dup1 job "$(job dup1 '"ref_action":"update","reply_to":"box2"')" >/dev/null
REPLAYQ_TEST_HOLD=job:dup1 start_worker w5 --repo-root="$ROOT" --queue=$Q --jobs=2
W5=$WORKER_PID
KID=$(hold_pid job:dup1)
check "the second entry is taken as a duplicate while the first runs" wait_for "duplicate acknowledged" 30 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT HGET '$(key $Q stats)' duplicate)\" = 1 ] && [ \"\$(redis-cli -p $REDIS_PORT XPENDING '$(key $Q jobs)' workers | head -1)\" = 1 ]"
for f in "$HOLD_DIR"/job:dup1.*; do kill -USR1 "$(cat "$f")" 2>/dev/null; done
check "both reply lists answered" wait_for "box1, box2" 30 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT LLEN '$(key $Q reply:box1)')\" = 1 ] && [ \"\$(redis-cli -p $REDIS_PORT LLEN '$(key $Q reply:box2)')\" = 1 ]"
runs=$(compgen -G "$HOLD_DIR/job:dup1.[0-9]*" | wc -l)
check_eq "one run of dup1" 1 "$runs"
R1=$(rcli GET "$(key $Q result:dup1)")
check_eq "dup1: ok and applied" "ok true" "$(jq -r '"\(.status) \(.applied)"' <<<"$R1")"
check_eq "box1 has the result" "$R1" "$(rcli LINDEX "$(key $Q reply:box1)" 0)"
check_eq "box2 has the same result" "$R1" "$(rcli LINDEX "$(key $Q reply:box2)" 0)"
check_eq "one entry in the results stream" 1 "$(results_count $Q dup1)"
check_eq "topic moved once, to the result's new id" "$(jq -r '.updates[0].new' <<<"$R1")" \
	"$(git -C "$ROOT/proj" rev-parse topic)"
check_eq "one reflog entry for the move" 1 "$(git -C "$ROOT/proj" reflog show refs/heads/topic | grep -c 'replay --onto')"
check_eq "nothing pending, nothing left in the stream" "0 0" "$(pending_count $Q) $(rcli XLEN "$(key $Q jobs)")"
check_eq "stats: one ok" 1 "$(stat_of $Q ok)"

# a third entry with the id once the result exists: the same result, at once
xadd $Q id dup1 job "$(job dup1 '"ref_action":"update","reply_to":"box3"')" >/dev/null
check "a late duplicate gets the existing result" wait_for "box3" 30 llen_is "$(key $Q reply:box3)" 1
check_eq "box3: the first result" "$R1" "$(rcli LINDEX "$(key $Q reply:box3)" 0)"
check_eq "still one entry in the results stream" 1 "$(results_count $Q dup1)"
check_eq "still one reflog entry" 1 "$(git -C "$ROOT/proj" reflog show refs/heads/topic | grep -c 'replay --onto')"

# an entry with the id and other content: id_conflict to its reply list,
# the first result kept, dead-lettered with the reason, nothing moved
TOPIC1=$(git -C "$ROOT/proj" rev-parse topic)
xadd $Q id dup1 job "$(job dup1 '"ref_action":"update","reply_to":"box4","empty":"keep"')" >/dev/null
check "a different job under a taken id is answered" wait_for "box4" 30 llen_is "$(key $Q reply:box4)" 1
R4=$(rcli LINDEX "$(key $Q reply:box4)" 0)
check_eq "box4: id_conflict" "dup1 error id_conflict" "$(jq -r '"\(.id) \(.status) \(.error.code)"' <<<"$R4")"
check_contains "box4: the message says why" "different" "$(jq -r .error.message <<<"$R4")"
check_eq "the first result is kept" "$R1" "$(rcli GET "$(key $Q result:dup1)")"
check_contains "dead-lettered with its reason" "different" "$(rcli --raw XRANGE "$(key $Q dead)" - +)"
check_eq "nothing moved" "$TOPIC1" "$(git -C "$ROOT/proj" rev-parse topic)"
check_workers_stop "$W5"

# submit, then submit --force while the first is still queued (no worker):
# one entry; --force reruns a job only once it has its result
Q=f5
run_rq submit --queue=$Q < <(job fq1)
check_eq "first submit queued" "0 fq1" "$RC $OUT"
run_rq submit --queue=$Q --force < <(job fq1)
check_eq "--force while queued: refused (exit 2)" 2 "$RC"
check_contains "--force while queued: says so" "still queued" "$ERR"
check_eq "--force while queued: one entry" 1 "$(rcli XLEN "$(key $Q jobs)")"
start_worker w5f --repo-root="$ROOT" --queue=$Q --jobs=2
W5F=$WORKER_PID
run_rq submit --queue=$Q --wait=30 < <(job fq2)
check_eq "fq2 done" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
check_eq "fq1: one result" 1 "$(results_count $Q fq1)"
run_rq submit --queue=$Q --force --wait=30 < <(job fq1)
check_eq "--force once the result exists: a rerun" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
check_eq "fq1: the rerun's result" 2 "$(results_count $Q fq1)"
check_workers_stop "$W5F"

# --- 6. keys of the wrong type --------------------------------------------------
section "6. a key of the wrong type dead-letters one job, the worker goes on"
Q=w6
rcli RPUSH "$(key $Q job:k1)" hostile >/dev/null
rcli SET "$(key $Q reply:box6)" hostile >/dev/null
xadd $Q id k1 job "$(job k1)" >/dev/null
run_rq submit --queue=$Q < <(job k2 '"reply_to":"box6"')
start_worker w6 --repo-root="$ROOT" --queue=$Q --jobs=1
W6=$WORKER_PID
run_rq submit --queue=$Q --wait=60 < <(job k3)
check_eq "the worker goes on: k3 done" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
check "k1 and k2 are dead-lettered" wait_for "two dead letters" 30 \
	bash -c "[ \"\$(redis-cli -p $REDIS_PORT XLEN '$(key $Q dead)')\" = 2 ]"
DEAD=$(rcli --raw XRANGE "$(key $Q dead)" - +)
check_contains "k1: the reason is the wrong type" "WRONGTYPE" "$(grep -A5 -x k1 <<<"$DEAD")"
check_contains "k1: the reason names the key" "job:k1" "$(grep -A5 -x k1 <<<"$DEAD")"
check_contains "k2: the reason names the reply list" "reply:box6" "$(grep -A5 -x k2 <<<"$DEAD")"
check_eq "k1, k2: acknowledged and deleted" "0 0" "$(pending_count $Q) $(rcli XLEN "$(key $Q jobs)")"
check_eq "the hostile keys are left as they were" "list string" \
	"$(rcli TYPE "$(key $Q job:k1)") $(rcli TYPE "$(key $Q reply:box6)")"
check_eq "k1: its result stored once" "k1 ok 1" \
	"$(rcli GET "$(key $Q result:k1)" | jq -r '"\(.id) \(.status)"') $(results_count $Q k1)"
check_eq "stats: three ok, two dead" "3 2" "$(stat_of $Q ok) $(stat_of $Q dead)"
n=$(log_lines "$T/w6.log" k1 | grep -c 'cannot store')
check "k1: one warning, not a loop ($n)" test "$n" -le 1
check_workers_stop "$W6"

# all or nothing: the dead stream itself is of the wrong type too: nothing
# of the result is written, the job stays unacknowledged (nothing lost, it
# comes back after the visibility timeout) with an error in the log, and
# the next job runs
Q=w6c
rcli SET "$(key $Q dead)" hostile >/dev/null
rcli SET "$(key $Q reply:box7)" hostile >/dev/null
run_rq submit --queue=$Q < <(job k4 '"reply_to":"box7"')
start_worker w6c --repo-root="$ROOT" --queue=$Q --jobs=1
W6C=$WORKER_PID
run_rq submit --queue=$Q --wait=60 < <(job k5)
check_eq "the worker goes on: k5 done" "0 ok" "$RC $(jq -r .status <<<"$OUT")"
check "k4 left unacknowledged" wait_for "k4 left" 30 \
	bash -c "grep -F '\"job\":\"k4\"' '$T/w6c.log' | grep -q 'left unacknowledged'"
check_eq "k4: no result, no results entry, not counted" "0 0 1" \
	"$(rcli EXISTS "$(key $Q result:k4)") $(results_count $Q k4) $(stat_of $Q ok)"
check_eq "k4: still pending, still in the stream" "1 1" "$(pending_count $Q) $(rcli XLEN "$(key $Q jobs)")"
check_eq "k4: the hostile keys are left as they were" "string string" \
	"$(rcli TYPE "$(key $Q dead)") $(rcli TYPE "$(key $Q reply:box7)")"
check_workers_stop "$W6C"

# --- 7. the stream entry's fields ----------------------------------------------
section "7. the stream entry's id is checked before any key is built"
Q=e7
start_worker w7 --repo-root="$ROOT" --queue=$Q --jobs=2
W7=$WORKER_PID
S1=$(xadd $Q id victim job "$(job attacker)")
S2=$(xadd $Q id "a b
c" job "$(job x7)")
LONG=$(head -c 5000 /dev/zero | tr '\0' 'L')
S3=$(xadd $Q id "$LONG" job "$(job "$LONG")")
S4=$(xadd $Q job "$(job noentryid)")
for s in "$S1" "$S2" "$S3" "$S4"; do
	check "entry $s answered" wait_for "result of $s" 30 has_key "$(key $Q "result:!$s")"
done
check_eq "no result under the claimed id" 0 "$(rcli EXISTS "$(key $Q result:victim)" "$(key $Q result:attacker)")"
for s in "$S1" "$S2" "$S3" "$S4"; do
	check_eq "entry $s: invalid_job under !<entry>" "!$s error invalid_job" \
		"$(rcli GET "$(key $Q "result:!$s")" | jq -r '"\(.id) \(.status) \(.error.code)"')"
done
check_contains "victim/attacker: the message names both" "victim" "$(rcli GET "$(key $Q "result:!$S1")" | jq -r .error.message)"
check_contains "victim/attacker: the message names both" "attacker" "$(rcli GET "$(key $Q "result:!$S1")" | jq -r .error.message)"
check_contains "no id: the message says so" "'id'" "$(rcli GET "$(key $Q "result:!$S4")" | jq -r .error.message)"
check_eq "the job without an entry id did not run" "0 false" "$(rcli GET "$(key $Q "result:!$S4")" | jq -r '"\(.updates | length) \(.applied)"')"
keys=$(rcli --raw KEYS "$(key $Q '*')")
check_eq "every key is a known name" "" "$(grep -v -E '^replayq:\{e7\}:(jobs|results|stats|workers|worker:w7|result:![0-9]+-[0-9]+)$' <<<"$keys")"
check_eq "no key cut at 511 bytes" "" "$(awk 'length($0) > 200' <<<"$keys")"
run_rq result --queue=$Q "!$S1"
check_eq "replayq result reads it" "0 !$S1" "$RC $(jq -r .id <<<"$OUT")"
# the victim's own job is not blocked by the forged entry
run_rq submit --queue=$Q --wait=30 < <(job victim)
check_eq "the real victim job runs" "0 victim ok" "$RC $(jq -r '"\(.id) \(.status)"' <<<"$OUT")"
check_workers_stop "$W7"

# --- 8. bytes that are not UTF-8 -------------------------------------------------
section "8. dead letters and heartbeats whose bytes are not UTF-8"
Q=u8
REPLAYQ_TEST_HOLD=job:u1 start_worker w8 --repo-root="$ROOT" --queue=$Q --jobs=2
W8=$WORKER_PID
xadd $Q id u1 job "$(job u1)" >/dev/null
P8=$(hold_pid job:u1)
# the same id with other content, a byte that is not UTF-8 in its text:
# answered and dead-lettered with that text as it came
BAD=$(job u1 | sed $'s/"main"/"ma\xffin"/')
xadd $Q id u1 job "$BAD" >/dev/null
check "the other content is dead-lettered" wait_for "a dead letter" 30 \
	eval '[ "$(rcli XLEN "$(key $Q dead)")" = 1 ]'
kill -USR1 "$P8"
check "u1 has its result" wait_for "result of u1" 30 has_key "$(key $Q result:u1)"
rcli XADD "$(key $Q dead)" '*' id u2 $'f\xfeld' $'v\xc3' reason r >/dev/null
run_rq queue --queue=$Q dead
check_eq "queue dead lists them" "0 2" "$RC $(jq length <<<"$OUT")"
check_contains "the byte is shown as \\xFF" '"target":"ma\xFFin"' "$(jq -r '.[0].job' <<<"$OUT")"
check_eq "a field name and value too" 'v\xC3' "$(jq -r '.[1]["f\\xFEld"]' <<<"$OUT")"
rcli HSET "$(key $Q workers)" $'w\xff' $'{"host":"h\xfe"}' >/dev/null
run_rq queue --queue=$Q stats
check_eq "queue stats lists every worker" "0 2" "$RC $(jq '.workers | length' <<<"$OUT")"
check_eq "the worker's name and heartbeat, shown" '{"host":"h\xFE"}' \
	"$(jq -r '.workers["w\\xFF"]' <<<"$OUT")"
check_workers_stop "$W8"
check "w8: no sanitizer report" sanitizer_clean "$T/w8.log"

# --- 9. a stored result found for its own entry ------------------------------------
section "9. a result found stored is counted by its own status"
Q=s9
# an entry whose id it owns already and whose result is stored (a
# conflict): the worker acknowledges it and counts the conflict
S9=$(xadd $Q id c9 job "$(job c9)")
rcli SET "$(key $Q claim:c9)" "$S9 $(printf '%040d' 0)" >/dev/null
rcli SET "$(key $Q result:c9)" '{"v":1,"id":"c9","repo":"proj","status":"conflict","updates":[],"applied":false,"conflict":{"commit":"'"$TOPIC0"'","paths":[]}}' >/dev/null
start_worker w9 --repo-root="$ROOT" --queue=$Q --jobs=1 --metrics-listen=127.0.0.1:0
W9=$WORKER_PID
check "c9 is acknowledged" wait_for "c9 acknowledged" 30 eval '[ "$(rcli XLEN "$(key $Q jobs)")" = 0 ]'
wait_for "c9's log line" 30 eval 'log_lines "$T/w9.log" c9 | grep -q "job done"'
check_eq "the log says conflict" conflict "$(log_lines "$T/w9.log" c9 | grep '"job done"' | jq -r .status)"
conflicts9() { rcli HGET "$(key $Q workers)" w9 | jq -r '"\(.ok) \(.conflict)"'; }
check "the heartbeat counts a conflict, not an ok" wait_for "heartbeat 0 1" 30 eval '[ "$(conflicts9)" = "0 1" ]'
A9=$(grep -m1 '"metrics listening"' "$T/w9.log" | jq -r .address)
M9=$(curl -sS --max-time 10 "http://$A9/metrics")
check_contains "the metrics count a conflict" "replayq_jobs_total{queue=\"$Q\",status=\"conflict\"} 1" "$M9"
check_contains "and no ok" "replayq_jobs_total{queue=\"$Q\",status=\"ok\"} 0" "$M9"
check_workers_stop "$W9"
check "w9: no sanitizer report" sanitizer_clean "$T/w9.log"

# --- 10. credentials -------------------------------------------------------------
section "10. credentials"
stop_redis
rm -rf "$T/redis"
unset REDIS_PORT
# the default user's password has '@', '/' and ':' (percent-encoded in URLs)
PW='p@ss/w:rd'
PWENC='p%40ss%2Fw%3Ard'
# shellcheck disable=SC2034 # used by rcli and start_redis (lib.sh)
REDIS_AUTH="-a $PW --no-auth-warning"
start_redis --requirepass "$PW"
P=$REDIS_PORT
export REPLAYQ_REDIS_URL="redis://127.0.0.1:$P/0"
QC=qc
REPLAYQ_REDIS_PASSWORD=$PW start_worker wc --repo-root="$ROOT" --queue=$QC --jobs=1
WC=$WORKER_PID
run_rq submit --redis="redis://:$PWENC@127.0.0.1:$P/0" --queue=$QC < <(job c1)
check_eq "a percent-encoded password with @ / :" "0 c1" "$RC $OUT"
check_contains "a password on the command line: warned" "command line" "$ERR"
# a user in the URL, its password from the environment: AUTH user password
rcli ACL SETUSER bot2 on '>botpw' '~replayq:*' '&*' '+@all' >/dev/null
REPLAYQ_REDIS_PASSWORD=botpw run_rq submit --redis="redis://bot2@127.0.0.1:$P/0" --queue=$QC < <(job c2)
check_eq "redis://user@host with REPLAYQ_REDIS_PASSWORD authenticates as the user" "0 c2" "$RC $OUT"
check "no warning without a password on the command line" bash -c "! grep -q 'command line' <<<\"\$1\"" _ "$ERR"
# the password from a file
printf '%s\n' botpw >"$T/pwfile"
REPLAYQ_REDIS_PASSWORD_FILE=$T/pwfile run_rq submit --redis="redis://bot2@127.0.0.1:$P/0" --queue=$QC --wait=30 < <(job c3)
check_eq "REPLAYQ_REDIS_PASSWORD_FILE" "0 c3 ok" "$RC $(jq -r '"\(.id) \(.status)"' <<<"$OUT")"
REPLAYQ_REDIS_PASSWORD_FILE=$T/nosuchfile run_rq submit --queue=$QC < <(job c4)
check_eq "an unreadable password file: exit 2" 2 "$RC"
check_contains "an unreadable password file: says so" "nosuchfile" "$ERR"

# a producer-only user: may add jobs and wait for results, may not touch
# the consumer group (that is the workers' business)
rcli ACL SETUSER producer on '>prodpw' '~replayq:*' -@all +ping +eval +get +exists +type +del \
	+xadd +xrange +set +hincrby +blpop >/dev/null
PROD="redis://producer@127.0.0.1:$P/0"
REPLAYQ_REDIS_PASSWORD=prodpw run_rq submit --redis="$PROD" --queue=qp < <(job p1)
check_eq "producer: submit on a queue with no group yet" "0 p1" "$RC $OUT"
check_eq "producer: no group created" "" "$(rcli XINFO GROUPS "$(key qp jobs)" | grep -x workers)"
REPLAYQ_REDIS_PASSWORD=$PW start_worker wp --repo-root="$ROOT" --queue=qp --jobs=1
WP=$WORKER_PID
REPLAYQ_REDIS_PASSWORD=prodpw run_rq submit --redis="$PROD" --queue=qp --wait=30 < <(job p2)
check_eq "producer: submit --wait" "0 p2 ok" "$RC $(jq -r '"\(.id) \(.status)"' <<<"$OUT")"
check "the worker ran the producer's first job" wait_for "p1" 30 has_key "$(key qp result:p1)"
check_workers_stop "$WP"

# the worker: a password given with --redis is warned about and no longer
# in /proc/<pid>/cmdline once it has started
start_worker wcl --redis="redis://:$PWENC@127.0.0.1:$P/0" --repo-root="$ROOT" --queue=$QC --jobs=1
WCL=$WORKER_PID
check "wcl started" worker_started wcl
CMDLINE=$(tr '\0' ' ' <"/proc/$WCL/cmdline" 2>/dev/null)
check_contains "wcl: the password is blanked in its command line" \
	"--redis=redis://:$(printf '%*s' ${#PWENC} '' | tr ' ' '*')@127.0.0.1" "$CMDLINE"
check "wcl: the password is not in its command line" bash -c "! grep -q -e \"\$2\" -e \"\$3\" <<<\"\$1\"" _ "$CMDLINE" "$PW" "$PWENC"
check_contains "wcl: warned" "command line" "$(cat "$T/wcl.log")"
check "wcl: no password in its log" bash -c "! grep -q -e 'p@ss' -e 'p%40ss' -e botpw \"\$1\"" _ "$T/wcl.log"
check_workers_stop "$WCL"
check_workers_stop "$WC"
check_eq "c1: done" ok "$(rcli GET "$(key $QC result:c1)" | jq -r .status)"

# --- 10. TLS through a local tunnel (deploy/redis-tls-tunnel) ----------------
section "10. TLS through deploy/redis-tls-tunnel"
# the examples that run it: a Kubernetes sidecar and a systemd unit
out=$(python3 - "$TOP/deploy/tls/k8s-sidecar-patch.yaml" <<'PY' 2>&1
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["kind"] == "Deployment" and d["metadata"]["name"] == "replayq-worker", "patches the worker"
spec = d["spec"]["template"]["spec"]
c = spec["initContainers"][0]
assert c["restartPolicy"] == "Always", "a native sidecar"
assert c["command"][0].endswith("/redis-tls-tunnel"), "runs deploy/redis-tls-tunnel"
env = {e["name"]: e["value"] for e in c["env"]}
assert env["REDIS_TLS_ACCEPT"].startswith("127.0.0.1:"), "listens on loopback only"
for k in ("REDIS_TLS_CONNECT", "REDIS_TLS_CA_FILE", "REDIS_TLS_VERIFY_HOST"):
    assert env[k], k
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
assert any(env["REDIS_TLS_CA_FILE"].startswith(p + "/") for p in mounts), "the CA file is mounted"
assert set(mounts.values()) <= {v["name"] for v in spec["volumes"]}, "every mount has a volume"
print("sidecar ok")
PY
)
check_contains "the TLS sidecar patch is consistent" "sidecar ok" "$out"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$T/unit"
	sed "s|/usr/libexec/replayq/redis-tls-tunnel|$TOP/deploy/redis-tls-tunnel|; /^Documentation=/d; s|^User=.*|User=root|; s|^Group=.*|Group=root|; s|^EnvironmentFile=.*|EnvironmentFile=-$T/unit/tunnel.env|" \
		"$TOP/deploy/tls/replayq-redis-tunnel.service" >"$T/unit/replayq-redis-tunnel.service"
	check_eq "systemd-analyze verify: the tunnel unit" "" "$(systemd-analyze verify "$T/unit/replayq-redis-tunnel.service" 2>&1)"
fi
if ! command -v stunnel4 >/dev/null && ! command -v stunnel >/dev/null; then
	echo "# notice: stunnel4 is not installed (deploy/install-deps): TLS tunnel checks skipped" >&2
else
	mkdir -p "$T/tls"
	(
		cd "$T/tls" &&
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=replayq-test-ca \
				-keyout ca.key -out ca.crt &&
			openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr &&
			printf 'subjectAltName=DNS:localhost\n' >ext &&
			openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
				-extfile ext -out server.crt &&
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca \
				-keyout other.key -out other.crt
	) >/dev/null 2>&1
	check "test certificates made" test -s "$T/tls/server.crt"
	# a TLS-only server: no plain port at all
	mkdir -p "$T/tlsredis"
	tcli() { redis-cli --tls --cacert "$T/tls/ca.crt" -p "$TP" -a tlspw --no-auth-warning "$@"; }
	tls_up() { [ -s "$T/tlsredis/pid" ] && tcli ping 2>/dev/null | grep -q PONG; }
	tls_settled() { tls_up || grep -q "Address already in use" "$T/tlsredis/log" 2>/dev/null; }
	# a port another test took between free_port and the bind: another port
	for _ in 1 2 3 4 5; do
		TP=$(free_port)
		rm -f "$T/tlsredis/pid" "$T/tlsredis/log"
		redis-server --port 0 --tls-port "$TP" --bind 127.0.0.1 --dir "$T/tlsredis" --save '' \
			--tls-cert-file "$T/tls/server.crt" --tls-key-file "$T/tls/server.key" \
			--tls-ca-cert-file "$T/tls/ca.crt" --tls-auth-clients no --requirepass tlspw \
			--daemonize yes --pidfile "$T/tlsredis/pid" --logfile "$T/tlsredis/log" >/dev/null
		wait_for "the TLS server" 30 tls_settled
		tls_up && break
	done
	check "the TLS server runs" tls_up
	REDIS_PIDS+=("$(cat "$T/tlsredis/pid")")
	# tunnel name local-port CA verify-host: deploy/redis-tls-tunnel in the
	# background, until it listens; TUNNEL is its pid
	# tunnel NAME CA HOST: a tunnel on a free port (TUNNEL_PORT), its pid in
	# TUNNEL; a port another test took between free_port and the bind
	# (stunnel exits) is replaced by another, as start_redis does
	# listening: the port's listener is this tunnel's own process (not
	# another test's server that took the port)
	tunnel_listens() { ss -ltnpH "sport = :$1" 2>/dev/null | grep -q "pid=$TUNNEL,"; }
	tunnel_up() { tunnel_listens "$1" || ! kill -0 "$TUNNEL" 2>/dev/null; }
	tunnel() {
		local attempt
		for attempt in 1 2 3 4 5; do
			TUNNEL_PORT=$(free_port)
			REDIS_TLS_CONNECT=127.0.0.1:$TP REDIS_TLS_ACCEPT=127.0.0.1:$TUNNEL_PORT \
				REDIS_TLS_CA_FILE=$2 REDIS_TLS_VERIFY_HOST=$3 REDIS_TLS_RUN_DIR=$T/$1 \
				"$TOP/deploy/redis-tls-tunnel" 2>"$T/$1.log" &
			TUNNEL=$!
			BG_PIDS+=("$TUNNEL")
			wait_for "$1" 30 tunnel_up "$TUNNEL_PORT"
			kill -0 "$TUNNEL" 2>/dev/null && break
		done
		check "$1 listens" tunnel_listens "$TUNNEL_PORT"
	}
	tunnel tunnel1 "$T/tls/ca.crt" localhost
	LP=$TUNNEL_PORT
	T1=$TUNNEL
	export REPLAYQ_REDIS_URL="redis://127.0.0.1:$LP/0" REPLAYQ_REDIS_PASSWORD=tlspw
	start_worker wt --repo-root="$ROOT" --queue=qt --jobs=1
	WT=$WORKER_PID
	run_rq submit --queue=qt --wait=30 < <(job t1)
	check_eq "TLS: a job through the tunnel" "0 t1 ok" "$RC $(jq -r '"\(.id) \(.status)"' <<<"$OUT")"
	check_eq "TLS: the result is on the TLS server" ok "$(tcli GET "$(key qt result:t1)" | jq -r .status)"
	check_workers_stop "$WT"
	# a tunnel that does not trust the server's certificate, or expects
	# another name, passes nothing
	for t in "tunnel2 $T/tls/other.crt localhost" "tunnel3 $T/tls/ca.crt otherhost"; do
		read -r name ca host <<<"$t"
		tunnel "$name" "$ca" "$host"
		LP2=$TUNNEL_PORT
		REPLAYQ_REDIS_URL="redis://127.0.0.1:$LP2/0" run_rq queue --queue=qt stats
		check_eq "TLS, $name: refused" 128 "$RC"
		check_contains "TLS, $name: the tunnel says why" "certificate verify failed" "$(cat "$T/$name.log")"
		kill -TERM "$TUNNEL"
		wait "$TUNNEL"
	done
	kill -TERM "$T1"
	wait "$T1"
	unset REPLAYQ_REDIS_PASSWORD
fi

check "no sanitizer report in the worker logs" sanitizer_clean "$T"/w*.log
finish
