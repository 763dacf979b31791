#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# deploy/: the Kubernetes manifests parse and agree with each other and
# with the queue's key names; the systemd unit passes systemd-analyze
# verify; the local launcher starts Redis and workers that run a job, and
# stops them all. (A real cluster and KEDA cannot run here: see README.)
. "$(dirname "$0")/../lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# --- Kubernetes manifests -------------------------------------------------------
out=$(python3 - "$TOP/deploy/k8s" <<'PY' 2>&1
import sys, glob, os, yaml
d = sys.argv[1]
docs = {}
for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
    for doc in yaml.safe_load_all(open(f)):
        assert doc.get("apiVersion") and doc.get("kind"), f + ": apiVersion and kind"
        assert doc.get("metadata", {}).get("name"), f + ": metadata.name"
        docs[(doc["kind"], doc["metadata"]["name"])] = doc
dep = docs[("Deployment", "replayq-worker")]
so = docs[("ScaledObject", "replayq-worker")]
cm = docs[("ConfigMap", "replayq-worker")]
sec = docs[("Secret", "replayq-redis")]
spec = dep["spec"]
assert spec["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"], "selector matches labels"
c = spec["template"]["spec"]["containers"][0]
assert c["args"] == ["worker"], "container runs the worker"
refs = {(k, v["name"]) for e in c["envFrom"] for k, v in e.items()}
assert ("configMapRef", "replayq-worker") in refs and ("secretRef", "replayq-redis") in refs, "envFrom"
mounts = {m["mountPath"] for m in c["volumeMounts"]}
assert cm["data"]["REPLAYQ_REPO_ROOT"] in mounts, "repository root is mounted"
vols = {v["name"] for v in spec["template"]["spec"]["volumes"]}
assert {m["name"] for m in c["volumeMounts"]} <= vols, "every mount has a volume"
hb = [e["value"] for e in c["env"] if e["name"] == "REPLAYQ_HEARTBEAT_FILE"][0]
assert hb in " ".join(c["livenessProbe"]["exec"]["command"]), "liveness reads the heartbeat file"
assert os.path.dirname(hb) in mounts, "heartbeat file is on a writable mount"
assert spec["template"]["spec"]["terminationGracePeriodSeconds"] > int(cm["data"]["REPLAYQ_GRACE"]), "grace fits"
assert so["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"], "scaler targets the deployment"
assert so["spec"]["minReplicaCount"] == 0, "scales from zero"
t = so["spec"]["triggers"][0]
assert t["type"] == "redis-streams", "redis-streams trigger"
q = cm["data"]["REPLAYQ_QUEUE"]
assert t["metadata"]["stream"] == "replayq:{%s}:jobs" % q, "stream key of the configured queue"
assert t["metadata"]["consumerGroup"] == "workers", "consumer group"
for k in ("addressFromEnv", "passwordFromEnv"):
    assert t["metadata"][k] in sec["stringData"], k + " is in the secret"
print("k8s ok:", len(docs), "objects")
PY
)
check_contains "k8s manifests are consistent" "k8s ok" "$out"

# --- systemd ---------------------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$T/unit"
	sed "s|/usr/local/bin/replayq|$REPLAYQ|; s|^User=.*|User=root|; s|^Group=.*|Group=root|; s|^EnvironmentFile=.*|EnvironmentFile=-$T/unit/worker.env|" \
		"$TOP/deploy/systemd/replayq-worker@.service" >"$T/unit/replayq-worker@1.service"
	out=$(systemd-analyze verify "$T/unit/replayq-worker@1.service" 2>&1)
	check_eq "systemd-analyze verify: no complaint" "" "$out"
else
	echo "systemd-analyze not installed: unit not verified" >&2
fi
for key in NoNewPrivileges=yes ProtectSystem=strict ReadWritePaths=/srv/git Restart=always KillSignal=SIGTERM; do
	check_contains "unit has $key" "$key" "$(cat "$TOP/deploy/systemd/replayq-worker@.service")"
done
check_contains "env example sets the repository root of ReadWritePaths" "REPLAYQ_REPO_ROOT=/srv/git" \
	"$(cat "$TOP/deploy/systemd/worker.env.example")"

# --- the local launcher --------------------------------------------------------------------
git init -q -b main "$T/repos/demo"
commit_file "$T/repos/demo" a.txt a "a"
git -C "$T/repos/demo" checkout -q -b topic
commit_file "$T/repos/demo" b.txt b "b"
git -C "$T/repos/demo" checkout -q main
commit_file "$T/repos/demo" c.txt c "c"
out=$(REPLAYQ=$REPLAYQ "$TOP/deploy/replayq-local" start --dir="$T/local" --repo-root="$T/repos" --workers=2 --queue=lq)
check_contains "launcher prints where the logs are" "$T/local/logs" "$out"
. "$T/local/env"
run_rq submit --wait=60 <<<'{"id":"l1","repo":"demo","mode":"onto","target":"main","revisions":["main..topic"]}'
check_eq "launcher: a job runs" ok "$(jq -r .status <<<"$OUT")"
run_rq queue stats
check_eq "launcher: two live workers" 2 "$(jq '[.workers[] | select(.alive)] | length' <<<"$OUT")"
check_eq "launcher: AOF on" "yes" "$(redis-cli -u "$REPLAYQ_REDIS_URL" config get appendonly | tail -1)"
check_eq "launcher: noeviction" "noeviction" "$(redis-cli -u "$REPLAYQ_REDIS_URL" config get maxmemory-policy | tail -1)"
pids=$(cat "$T/local/workers.pid" "$T/local/redis.pid")
REPLAYQ=$REPLAYQ "$TOP/deploy/replayq-local" stop --dir="$T/local" >/dev/null
alive=0
for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check_eq "launcher: stop leaves nothing running" 0 "$alive"
check_contains "launcher: workers drained and logged their stop" '"worker stopped"' "$(cat "$T"/local/logs/worker-*.log)"

finish
