#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# deploy/: the Kubernetes manifests (single queue, per-node shards, the TLS
# variant) parse and agree with each other, with the queue's key names, the
# metrics endpoint, /healthz and /readyz and the image deploy/image/build
# makes, pass Pod Security "restricted", scale on lag and pending entries,
# each PodDisruptionBudget covers its own Deployment; the alert rules parse
# (promtool where installed) and use served metrics; the Grafana dashboard
# parses and asks only for metrics the worker serves; the systemd units pass
# systemd-analyze verify and the worker's scores at most 2.5 in
# systemd-analyze security; the local launcher starts Redis and workers that
# run a job, and stops them all. (A real cluster, KEDA, Prometheus and
# Grafana cannot run here: see docs/deploy.md.)
. "$(dirname "$0")/../lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# --- Kubernetes manifests -------------------------------------------------------
VERSION=$("$REPLAYQ" version | awk '{print $3}')
IMAGE_USER=$(sed -n 's/.*--config.user=\([0-9:]*\).*/\1/p' "$TOP/deploy/image/build")
check "the sharded manifests are current (make-shards --check)" python3 "$TOP/deploy/k8s/sharded/make-shards" --check
out=$(python3 - "$TOP/deploy" "$VERSION" "$IMAGE_USER" <<'PY' 2>&1
import sys, glob, os, json, re, yaml
top, version, image_user = sys.argv[1], sys.argv[2], sys.argv[3]

def load(pattern):
    docs = {}
    for f in sorted(glob.glob(os.path.join(top, pattern))):
        for doc in yaml.safe_load_all(open(f)):
            if doc is None:
                continue
            assert doc.get("apiVersion") and doc.get("kind"), f + ": apiVersion and kind"
            assert doc.get("metadata", {}).get("name"), f + ": metadata.name"
            key = (doc["kind"], doc["metadata"]["name"])
            assert key not in docs, f + ": %s/%s twice" % key
            docs[key] = doc
    return docs

def sel_matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())

def pod_restricted(name, pod):
    """Pod Security "restricted": what a pod must say for it"""
    psc = pod.get("securityContext", {})
    assert not any("hostPath" in v for v in pod.get("volumes", [])), name + ": no hostPath"
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c.get("securityContext", {})
        assert sc.get("allowPrivilegeEscalation") is False, name + "/" + c["name"] + ": allowPrivilegeEscalation false"
        assert sc.get("capabilities", {}).get("drop") == ["ALL"], name + "/" + c["name"] + ": drops ALL"
        nonroot = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        assert nonroot is True, name + "/" + c["name"] + ": runAsNonRoot"
        prof = sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type")
        assert prof in ("RuntimeDefault", "Localhost"), name + "/" + c["name"] + ": seccompProfile RuntimeDefault"
    if "fsGroup" in psc:
        assert psc.get("fsGroupChangePolicy") == "OnRootMismatch", name + ": fsGroupChangePolicy OnRootMismatch"

def check_worker(dep, cm, sec):
    name = dep["metadata"]["name"]
    spec = dep["spec"]
    tmpl = spec["template"]
    assert spec["selector"]["matchLabels"] == tmpl["metadata"]["labels"], name + ": selector matches labels"
    pod = tmpl["spec"]
    pod_restricted(name, pod)
    c = pod["containers"][0]
    assert c["args"] == ["worker"], name + ": runs the worker"
    refs = {(k, v["name"]) for e in c["envFrom"] for k, v in e.items()}
    assert ("configMapRef", cm["metadata"]["name"]) in refs and ("secretRef", sec["metadata"]["name"]) in refs, name + ": envFrom"
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert cm["data"]["REPLAYQ_REPO_ROOT"] in mounts, name + ": the repository root is mounted"
    assert {m["name"] for m in c["volumeMounts"]} <= {v["name"] for v in pod["volumes"]}, name + ": every mount has a volume"
    assert pod["terminationGracePeriodSeconds"] > int(cm["data"]["REPLAYQ_GRACE"]), name + ": grace fits"
    # the image: fully qualified (a registry host first), deploy/image/build's name and tag
    img = c["image"]
    assert re.match(r"^[a-z0-9.-]+(\.[a-z]+|:[0-9]+)/", img), name + ": a fully qualified image, not " + img
    assert img.rsplit("/", 1)[-1] == "replayq:" + version, name + ": image is replayq:" + version
    psc = pod["securityContext"]
    assert "%d:%d" % (psc["runAsUser"], psc["runAsGroup"]) == image_user, name + ": runs as the image's user"
    # metrics, probes: the listen port, /healthz and /readyz on it
    port = int(cm["data"]["REPLAYQ_METRICS_LISTEN"].rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports["metrics"] == port, name + ": metrics port is the listen port"
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        g = c[probe]["httpGet"]
        assert g["path"] == path and g["port"] in ("metrics", port), name + ": " + probe + " GET " + path
    ann = tmpl["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and int(ann["prometheus.io/port"]) == port, name + ": scrape annotations"
    assert ann["prometheus.io/path"] == "/metrics", name + ": path annotation"
    # memory: the pod's limit above the worker's own per-job limits
    lim = c["resources"]["limits"]["memory"]
    lim_mib = int(lim[:-2]) * (1024 if lim.endswith("Gi") else 1)
    need = int(cm["data"]["REPLAYQ_JOBS"]) * int(cm["data"]["REPLAYQ_MEMORY_LIMIT_MB"]) + 256
    assert lim_mib >= need, name + ": memory limit %d MiB >= jobs x limit + parent (%d)" % (lim_mib, need)
    return pod

def check_scaler(so, dep, cm, sec, docs, tls=False):
    name = so["metadata"]["name"]
    assert so["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"], name + ": targets its Deployment"
    assert so["spec"]["minReplicaCount"] == 0, name + ": scales from zero"
    q = cm["data"]["REPLAYQ_QUEUE"]
    kinds = set()
    for t in so["spec"]["triggers"]:
        m = t["metadata"]
        assert t["type"] == "redis-streams", name + ": redis-streams triggers"
        assert m["stream"] == "replayq:{%s}:jobs" % q and m["consumerGroup"] == "workers", name + ": the queue's stream and group"
        for k in ("addressFromEnv", "usernameFromEnv", "passwordFromEnv"):
            assert m[k] in sec["stringData"], name + ": " + k + " is in the secret"
        assert m.get("enableTLS", "false") == ("true" if tls else "false"), name + ": enableTLS " + str(tls)
        if tls:
            assert ("TriggerAuthentication", t["authenticationRef"]["name"]) in docs, name + ": its TriggerAuthentication"
        if "lagCount" in m:
            assert m["activationLagCount"] == "0", name + ": one job wakes it (activationLagCount 0)"
            kinds.add("lag")
        if "pendingEntriesCount" in m:
            kinds.add("pending")
    assert kinds == {"lag", "pending"}, name + ": scales on lag and on pending entries"

def check_pdb(pdb, deps):
    name = pdb["metadata"]["name"]
    assert "maxUnavailable" in pdb["spec"] and "minAvailable" not in pdb["spec"], name + ": maxUnavailable (no block at zero)"
    hits = [d["metadata"]["name"] for d in deps if sel_matches(pdb["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"]["labels"])]
    return hits

# the single-queue set (deploy/k8s/*.yaml)
docs = load("k8s/*.yaml")
dep, cm = docs[("Deployment", "replayq-worker")], docs[("ConfigMap", "replayq-worker")]
sec, so = docs[("Secret", "replayq-redis")], docs[("ScaledObject", "replayq-worker")]
pod = check_worker(dep, cm, sec)
check_scaler(so, dep, cm, sec, docs)
pm = docs[("PodMonitor", "replayq-worker")]
assert sel_matches(pm["spec"]["selector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"]), "PodMonitor selects the workers"
ep = pm["spec"]["podMetricsEndpoints"][0]
assert ep["port"] == "metrics" and ep["path"] == "/metrics", "PodMonitor endpoint"
np_ = docs[("NetworkPolicy", "replayq-worker")]
assert sel_matches(np_["spec"]["podSelector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"]), "NetworkPolicy selects the workers"
assert np_["spec"]["ingress"][0]["ports"][0]["port"] == "metrics", "NetworkPolicy: the metrics port"

# the shards (deploy/k8s/sharded): each a queue, a node, a Deployment
shards = load("k8s/sharded/*.yaml")
sdeps = [d for k, d in shards.items() if k[0] == "Deployment"]
assert len(sdeps) >= 2, "at least two shards"
queues = set()
for d in sdeps:
    n = d["metadata"]["name"]
    scm = shards[("ConfigMap", d["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"])]
    spod = check_worker(d, scm, sec)
    check_scaler(shards[("ScaledObject", n)], d, scm, sec, shards)
    q = scm["data"]["REPLAYQ_QUEUE"]
    assert q not in queues, n + ": a queue of its own"
    queues.add(q)
    claim = [v for v in spod["volumes"] if v["name"] == "repos"][0]["persistentVolumeClaim"]["claimName"]
    pvc = shards[("PersistentVolumeClaim", claim)]
    pv = shards[("PersistentVolume", pvc["spec"]["volumeName"])]
    host = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
    assert spod["nodeSelector"]["kubernetes.io/hostname"] in host, n + ": runs on its volume's node"
    assert pv["spec"]["local"]["path"] == scm["data"]["REPLAYQ_REPO_ROOT"], n + ": the node's repository root"
routes = json.loads(shards[("ConfigMap", "replayq-routes")]["data"]["routes.json"])
assert {r["queue"] for r in routes} == queues, "the routing table names every shard's queue, and only those"
# every PodDisruptionBudget covers exactly its own Deployment
alldeps = [dep] + sdeps
for key, pdb in list(docs.items()) + list(shards.items()):
    if key[0] == "PodDisruptionBudget":
        hits = check_pdb(pdb, alldeps)
        assert len(hits) == 1, key[1] + ": selects exactly one Deployment's pods, not " + str(hits)
assert ("PodDisruptionBudget", "replayq-worker") in docs, "a PodDisruptionBudget"

# the TLS variant (deploy/tls): the sidecar patch, the scaler with enableTLS
tls = load("tls/*.yaml")
check_scaler(tls[("ScaledObject", "replayq-worker")], dep, cm, sec, tls, tls=True)
patch = tls[("Deployment", "replayq-worker")]["spec"]["template"]["spec"]
side = patch["initContainers"][0]
assert side["restartPolicy"] == "Always", "the tunnel is a native sidecar"
merged = dict(pod, initContainers=[side], volumes=pod["volumes"] + patch["volumes"])
pod_restricted("the patched Deployment", merged)
assert side["command"][0] == "/usr/libexec/replayq/redis-tls-tunnel", "the tunnel at the .deb's path"
print("k8s ok: %d + %d shards' + %d TLS objects" % (len(docs), len(shards), len(tls)))
PY
)
check_contains "k8s manifests are consistent, restricted, probed, scaled on lag and pending" "k8s ok" "$out"

# --- Prometheus alert rules ---------------------------------------------------------
if command -v promtool >/dev/null; then
	check "promtool check rules" promtool check rules "$TOP/deploy/prometheus/alerts.yaml"
else
	echo "# notice: promtool is not installed (Debian's prometheus package): the rules are parsed only" >&2
fi
out=$(python3 - "$TOP/deploy/prometheus/alerts.yaml" "$TOP/worker/worker_metrics.c" <<'PY' 2>&1
import sys, re, yaml
rules = yaml.safe_load(open(sys.argv[1]))
served = set(re.findall(r'"(replayq_[a-z_]+)"', open(sys.argv[2]).read()))
names, used = [], set()
for g in rules["groups"]:
    assert g["name"] and g["rules"], "a named group with rules"
    for r in g["rules"]:
        assert set(r) <= {"alert", "expr", "for", "labels", "annotations"}, r.get("alert", "?") + ": known keys"
        names.append(r["alert"])
        assert re.match(r"^[A-Z][A-Za-z]+$", r["alert"]), r["alert"] + ": an alert name"
        e = r["expr"]
        assert e.count("(") == e.count(")") and e.count("{") == e.count("}") and e.count("[") == e.count("]"), r["alert"] + ": balanced"
        assert r["labels"]["severity"] in ("warning", "critical"), r["alert"] + ": severity"
        assert r["annotations"]["summary"] and r["annotations"]["description"], r["alert"] + ": summary and description"
        if "for" in r:
            assert re.match(r"^[0-9]+[smh]$", r["for"]), r["alert"] + ": for"
        for m in re.findall(r"\b(replayq_[a-z_]+)", e):
            base = re.sub(r"_(bucket|sum|count)$", "", m) if m not in served else m
            assert base in served, r["alert"] + ": " + m + " is served"
            used.add(base)
        # queue-wide gauges: every worker serves them, never add them up
        for m in re.finditer(r"replayq_queue_(lag|pending)", e):
            before = e[:m.start()]
            assert re.search(r"max(_over_time)?( by \(queue\))? \($", before) or re.search(r"max(_over_time)? by \(queue\) \((deriv|max_over_time)\($", before), \
                r["alert"] + ": the queue's gauges under max"
for want in ("replayq_queue_lag", "replayq_dead_letters_total", "replayq_pool_capacity", "replayq_job_retries_total"):
    assert want in used, "an alert on " + want
assert len(names) == len(set(names)), "alert names unique"
print("alerts ok:", ", ".join(names))
PY
)
check_contains "the alert rules parse, use served metrics, cover lag, dead letters, workers gone, timeouts" "alerts ok" "$out"

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
for title, e in exprs:
    for m in re.finditer(r"replayq_queue_(lag|pending)", e):
        assert re.search(r"max by \(queue\) \($", e[:m.start()]), title + ": the queue's gauges under max by (queue)"
    assert 'phase="total"' not in e, title + ": total is not a phase"
print("dashboard ok:", len(panels), "panels;", titles)
PY
)
check_contains "the dashboard asks for served metrics, with the on-call panels" "dashboard ok" "$out"

# --- systemd ---------------------------------------------------------------------------
# the unit as the .deb installs it, only the program's path is this build's;
# its Documentation= pages are docs/man's
UNIT=$TOP/deploy/systemd/replayq-worker@.service
mkdir -p "$T/unit" "$T/man/man1" "$T/man/man5"
cp "$TOP"/docs/man/*.1 "$T/man/man1/"
cp "$TOP"/docs/man/*.5 "$T/man/man5/"
if command -v systemd-analyze >/dev/null; then
	sed "s|/usr/bin/replayq|$REPLAYQ|; s|^EnvironmentFile=.*|EnvironmentFile=-$T/unit/worker.env|" "$UNIT" \
		>"$T/unit/replayq-worker@1.service"
	out=$(MANPATH=$T/man systemd-analyze verify "$T/unit/replayq-worker@1.service" 2>&1)
	check_eq "systemd-analyze verify: no complaint" "" "$out"
	score=$(systemd-analyze security --offline=yes "$T/unit/replayq-worker@1.service" 2>&1 |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	echo "systemd-analyze security: $score"
	check "systemd-analyze security scores it at most 2.5 (got '$score')" \
		awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 2.5) }'
	sed "s|/usr/libexec/replayq/redis-tls-tunnel|$TOP/deploy/redis-tls-tunnel|; s|^EnvironmentFile=.*|EnvironmentFile=-$T/unit/t.env|" \
		"$TOP/deploy/tls/replayq-redis-tunnel.service" >"$T/unit/replayq-redis-tunnel.service"
	out=$(MANPATH=$T/man systemd-analyze verify "$T/unit/replayq-redis-tunnel.service" 2>&1)
	check_eq "the tunnel unit: systemd-analyze verify: no complaint" "" "$out"
else
	echo "# notice: systemd-analyze not installed: units not verified, security not measured" >&2
fi
for key in NoNewPrivileges=yes ProtectSystem=strict ReadWritePaths=/srv/git Restart=always KillSignal=SIGTERM \
	CapabilityBoundingSet= SystemCallFilter=@system-service UMask=0027 ProtectProc=invisible \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'; do
	check "unit has $key" grep -qx -- "$key" "$UNIT"
done
check_contains "env example sets the repository root of ReadWritePaths" "REPLAYQ_REPO_ROOT=/srv/git" \
	"$(cat "$TOP/deploy/systemd/worker.env.example")"
# MemoryMax above every job at its limit plus the parent: the worker's own
# limit acts first
jobs=$(sed -n 's/^REPLAYQ_JOBS=//p' "$TOP/deploy/systemd/worker.env.example")
mb=$(sed -n 's/^REPLAYQ_MEMORY_LIMIT_MB=//p' "$TOP/deploy/systemd/worker.env.example")
max=$(sed -n 's/^MemoryMax=\([0-9]*\)G$/\1/p' "$UNIT")
check "MemoryMax (${max}G) > $jobs jobs x $mb MiB + 256 MiB" [ $((max * 1024)) -gt $((jobs * mb + 256)) ]

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
