#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# deploy/: the Kubernetes manifests parse and agree with each other, with
# the queue's key names, the metrics endpoint and the image
# deploy/image/build makes; the Grafana dashboard parses and asks only for
# metrics the worker serves; the systemd unit passes systemd-analyze
# verify; the local launcher starts Redis and workers that run a job, and
# stops them all. (A real cluster, KEDA, Prometheus and Grafana cannot run
# here: see README.)
. "$(dirname "$0")/../lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# --- Kubernetes manifests -------------------------------------------------------
VERSION=$("$REPLAYQ" version | awk '{print $NF}')
IMAGE_USER=$(sed -n 's/.*--config.user=\([0-9:]*\).*/\1/p' "$TOP/deploy/image/build")
out=$(python3 - "$TOP/deploy/k8s" "$VERSION" "$IMAGE_USER" <<'PY' 2>&1
import sys, glob, os, yaml
d, version, image_user = sys.argv[1], sys.argv[2], sys.argv[3]
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
# metrics: the port the worker listens on is the container's, the
# annotations' and the PodMonitor's
port = int(cm["data"]["REPLAYQ_METRICS_LISTEN"].rsplit(":", 1)[1])
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
assert ports["metrics"] == port, "metrics port is the listen port"
ann = spec["template"]["metadata"]["annotations"]
assert ann["prometheus.io/scrape"] == "true", "scrape annotation"
assert int(ann["prometheus.io/port"]) == port, "port annotation"
assert ann["prometheus.io/path"] == "/metrics", "path annotation"
pm = docs[("PodMonitor", "replayq-worker")]
assert pm["spec"]["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"], "PodMonitor selects the workers"
ep = pm["spec"]["podMetricsEndpoints"][0]
assert ep["port"] == "metrics" and ep["path"] == "/metrics", "PodMonitor endpoint"
# the image: what deploy/image/build makes, run as its user
assert c["image"].rsplit("/", 1)[-1] == "replayq:" + version, "image is replayq:" + version
sc = spec["template"]["spec"]["securityContext"]
assert "%d:%d" % (sc["runAsUser"], sc["fsGroup"]) == image_user, "runs as the image's user"
assert c["livenessProbe"]["exec"]["command"][0] == "/bin/busybox", "the probe uses the image's busybox"
print("k8s ok:", len(docs), "objects")
PY
)
check_contains "k8s manifests are consistent" "k8s ok" "$out"

# --- the Grafana dashboard ---------------------------------------------------------
check "the dashboard is JSON" jq empty "$TOP/deploy/grafana/replayq.json"
out=$(python3 - "$TOP/deploy/grafana/replayq.json" "$TOP/worker/worker_metrics.c" <<'PY' 2>&1
import sys, json, re
dash = json.load(open(sys.argv[1]))
served = set(re.findall(r'"(replayq_[a-z_]+)"', open(sys.argv[2]).read()))
assert len(served) >= 13, "metric names found in worker_metrics.c"
panels = [p for p in dash["panels"] if p["type"] != "row"]
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "panel ids are unique"
exprs = []
for p in panels:
    g = p["gridPos"]
    assert g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"] + ": fits the grid"
    for t in p["targets"]:
        e = t["expr"]
        exprs.append((p["title"], e))
        assert t["datasource"]["uid"] == "${datasource}", p["title"] + ": the dashboard's data source"
        assert e.count("(") == e.count(")") and e.count("{") == e.count("}"), e + ": balanced"
        for m in re.findall(r"\b(replayq_[a-z_]+)", e):
            base = re.sub(r"_(bucket|sum|count)$", "", m) if m not in served else m
            assert base in served, m + " is served by the worker"
        for m in re.findall(r"histogram_quantile\(([0-9.]+), sum by \(([a-z, ]+)\) \(rate\((replayq_[a-z_]+)\{", e):
            assert m[2].endswith("_seconds_bucket") and "le" in m[1], e + ": a quantile over buckets by le"
text = "\n".join(e for _, e in exprs)
titles = " | ".join(p["title"] for p in panels)
for want, why in [
    ('histogram_quantile(0.5, sum by (le) (rate(replayq_job_duration_seconds_bucket', "latency p50"),
    ('histogram_quantile(0.99, sum by (le) (rate(replayq_job_duration_seconds_bucket', "latency p99"),
    ('sum by (code) (rate(replayq_jobs_total{queue=~"$queue",status="error"}', "error rate by code"),
    ('sum by (status) (rate(replayq_jobs_total', "throughput"),
    ('replayq_queue_lag', "queue lag"),
    ('count(replayq_pool_capacity', "workers alive")]:
    assert want in text, why + " panel"
assert [v["name"] for v in dash["templating"]["list"]] == ["datasource", "queue"], "variables"
print("dashboard ok:", len(panels), "panels;", titles)
PY
)
check_contains "the dashboard asks for served metrics, with the on-call panels" "dashboard ok" "$out"

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
