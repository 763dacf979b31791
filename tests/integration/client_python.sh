#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# clients/python/replayq_client.py, the producer written from
# docs/protocol.md alone, against a real worker and a real redis-server,
# with Debian's python3-redis (/usr/bin/python3): its jobs run (a ref
# update, a conflict, an invalid job, a train), wait() gets their results
# from its reply list, result() reads the stored ones (what `replayq
# result` prints), a second submission of an id is refused, --force reruns
# it (already_applied), its stream entries are the ones `replayq submit`
# writes, its jobs of one group are parked as submit's are and run in order, and the same job through either gives the same commits; the
# client run as a program exits as `submit --wait` does.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
if ! "$PY" -c 'import redis' 2>/dev/null; then
	not_ok "Debian's python3-redis is installed (deploy/install-deps)"
	finish
fi
export PYTHONPATH=$TOP/clients/python
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" py
start_redis
export REPLAYQ_QUEUE=pyq
start_worker p1 --repo-root="$ROOT" --jobs=2
W=$WORKER_PID
worker_started p1 60
C='"committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}'

out=$("$PY" - <<PYEOF 2>&1
import json, os
from replayq_client import Client, DuplicateJob
c = Client.from_url(os.environ["REDIS_URL"], queue="pyq")
jobs = [
    {"id": "py-update", "repo": "proj", "mode": "onto", "target": "main", "revisions": ["base..s2"],
     "contained": True, "ref_action": "update", $C},
    {"id": "py-conflict", "repo": "proj", "mode": "onto", "target": "main", "revisions": ["base..clash"]},
    {"id": "py-invalid", "repo": "proj", "mode": "sideways"},
    {"id": "py-train", "repo": "proj", "mode": "train", "target": "main", "method": "merge",
     "cars": [{"name": "t", "revisions": ["topic"]}, {"name": "c", "revisions": ["clash"]}], $C},
    {"id": "py-print", "repo": "proj", "mode": "onto", "target": "base", "revisions": ["base..topic"], $C},
]
for j in jobs:
    print("entry", j["id"], c.submit(j))
got = c.wait([j["id"] for j in jobs], timeout=120)
for j in jobs:
    print("result", json.dumps(got.get(j["id"]), separators=(",", ":")))
try:
    c.submit(jobs[0])
    print("duplicate accepted")
except DuplicateJob as e:
    print("duplicate refused:", e.why)
print("missing", c.result("no-such-job"))
c.submit(jobs[0], force=True)
print("rerun", json.dumps(c.wait(["py-update"], timeout=120).get("py-update"), separators=(",", ":")))
PYEOF
)
echo "$out" | cut -c1-200
res() { sed -n "s/^result \(.*\"id\":\"$1\".*\)/\1/p" <<<"$out"; }
check_eq "five entries queued" 5 "$(grep -c '^entry py-[a-z]* [0-9]*-[0-9]*$' <<<"$out")"
check_eq "the update: ok, applied" "ok true" "$(res py-update | jq -r '"\(.status) \(.applied)"')"
check_eq "the branch holds the result's id" "$(res py-update | jq -r '.updates[-1].new')" "$(git -C "$ROOT/proj" rev-parse s2)"
check_eq "the conflict" "conflict c.txt" "$(res py-conflict | jq -r '"\(.status) \(.conflict.paths[0].path)"')"
check_eq "the invalid job: invalid_job" "error invalid_job" "$(res py-invalid | jq -r '"\(.status) \(.error.code)"')"
check_eq "the train: a car in, a car out" "ok conflict" "$(res py-train | jq -r '[.cars[].status] | join(" ")')"
check_eq "a second submission of the id is refused" "duplicate refused: it has a result" \
	"$(grep '^duplicate' <<<"$out")"
check_eq "result() of no job: None" "missing None" "$(grep '^missing' <<<"$out")"
check_eq "--force reruns it: already applied" "true" "$(sed -n 's/^rerun //p' <<<"$out" | jq -r .already_applied)"
for id in py-conflict py-invalid py-train; do
	run_rq result "$id"
	check_eq "wait() got what replayq result prints: $id" "$(jq -cS . <<<"$OUT")" "$(res "$id" | jq -cS .)"
done

# the same job through replayq submit: the same commits; both counted
"$REPLAYQ" submit --wait=60 <<<'{"v":1,"id":"cli-print","repo":"proj","mode":"onto","target":"base","revisions":["base..topic"],'"$C"'}' >"$T/cli.out"
check_eq "the same job through replayq submit: the same commits" \
	"$(res py-print | jq -c .updates)" "$(jq -c .updates "$T/cli.out")"
check_eq "all counted as submitted" 7 "$(rcli HGET 'replayq:{pyq}:stats' submitted)"

# the entries: fields id and job, as replayq submit writes them (a worker
# that is stopped leaves them in the stream)
check_workers_stop "$W"
"$PY" -c '
import os
from replayq_client import Client
Client.from_url(os.environ["REDIS_URL"], queue="pyq").submit({"id": "left-py", "repo": "proj", "mode": "onto", "target": "main", "revisions": ["main"]}, wait=False)'
"$REPLAYQ" submit <<<'{"v":1,"id":"left-cli","repo":"proj","mode":"onto","target":"main","revisions":["main"]}' >/dev/null
rcli --raw XRANGE 'replayq:{pyq}:jobs' - + | grep -v '^[0-9]*-[0-9]*$' >"$T/entries"
check_eq "its stream entry has replayq submit's fields" "id left-py job id left-cli job" \
	"$(grep -x 'id\|job\|left-py\|left-cli' "$T/entries" | paste -sd' ')"
check_eq "and its job the same members" "$(sed -n '4p' "$T/entries" | jq -c 'keys')" "$(sed -n '8p' "$T/entries" | jq -c 'keys')"

# jobs of one group: the first in the stream, the others parked in the
# group's own stream (the client and replayq submit alike), run in order
"$PY" -c '
import os
from replayq_client import Client
c = Client.from_url(os.environ["REDIS_URL"], queue="pyq")
for i in (1, 2, 3):
    c.submit({"id": "grp-%d" % i, "repo": "proj", "mode": "onto", "target": "main", "revisions": ["main"], "group": "pg"}, wait=False)'
"$REPLAYQ" submit <<<'{"v":1,"id":"grp-4","repo":"proj","mode":"onto","target":"main","revisions":["main"],"group":"pg"}' >/dev/null
check_eq "grouped: one in the jobs stream, three parked" "grp-1 3" \
	"$(rcli --raw XRANGE 'replayq:{pyq}:jobs' - + | grep -x 'grp-[0-9]' | paste -sd' ') $(rcli XLEN 'replayq:{pyq}:group:pg')"

# the client as a program: results as JSON lines, exit 1 with a conflict
start_worker p2 --repo-root="$ROOT" --jobs=2
W=$WORKER_PID
worker_started p2 60
check "the grouped jobs run" wait_for "grp-4" 60 bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{pyq}:result:grp-4')\" = 1 ]"
check_eq "one after the other, in order" "grp-1 grp-2 grp-3 grp-4" \
	"$(rcli --raw XRANGE 'replayq:{pyq}:results' - + | grep -x 'grp-[0-9]' | paste -sd' ')"
printf '%s\n' '{"id":"prog-ok","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"]}' \
	'{"id":"prog-conflict","repo":"proj","mode":"onto","target":"main","revisions":["base..clash"]}' |
	"$PY" "$TOP/clients/python/replayq_client.py" --redis="$REDIS_URL" --queue=pyq --wait=120 >"$T/prog.out"
check_eq "as a program: exit 1 (a conflict)" 1 "$?"
check_eq "and the two results" "prog-ok ok,prog-conflict conflict" "$(jq -r '"\(.id) \(.status)"' "$T/prog.out" | paste -sd,)"
check_workers_stop "$W"
finish
