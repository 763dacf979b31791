#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# deploy/image/build: the container image, built offline from Debian
# packages (mmdebstrap, umoci). Containers cannot run here, so the image is
# checked by unpacking its OCI archive (umoci unpack: the file system a
# runtime would see) and running its replayq in a chroot of that file
# system as the image's user (uid 10001, chroot --userspec): a replay on a
# repository copied into it gives what the tested binary gives, and a
# worker against a private redis-server on loopback (the chroot shares the
# network) runs a submitted ref update, serves its metrics and passes the
# Deployment's probes (/healthz, /readyz). The image's
# config (user, entrypoint, port, labels) and contents (no shell, no git,
# no apt; the packages' records for scanners) are checked too. Skipped with
# a notice when not root, when mmdebstrap or umoci are missing (outside CI:
# deploy/install-deps installs them) or when Debian's archive cannot be
# reached.
. "$(dirname "$0")/../lib.sh"
require jq redis-server curl python3
TOP=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
	echo "# notice: $*: the image test is skipped" >&2
	finish
}
[ "$(id -u)" -eq 0 ] || skip "not root (mmdebstrap, umoci and chroot need it)"
for tool in mmdebstrap umoci; do
	if ! command -v "$tool" >/dev/null; then
		[ -n "${CI:-}" ] || skip "$tool is not installed (deploy/install-deps)"
		not_ok "$tool is installed (deploy/install-deps)"
		finish
	fi
done

# --- the build: a release binary and the image in this build tree (not the
# source tree, which other build trees share), the root file system cached there
section "deploy/image/build"
IMG_DIR=$(dirname "$REPLAYQ")/image-test
# the release replayq tests/run built (build/), else one built here
REL=${RQ_RELEASE_REPLAYQ:-}
if [ -z "$REL" ] || [ ! -x "$REL" ]; then
	{ cmake -S "$TOP" -B "$IMG_DIR/release" -DRQ_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
		cmake --build "$IMG_DIR/release" -j"$(nproc)"; } >"$T/release.log" 2>&1
	REL=$IMG_DIR/release/replayq
fi
check "a release replayq builds" test -x "$REL"
"$TOP/deploy/image/build" --binary="$REL" --out="$IMG_DIR/image" \
	>"$T/build.out" 2>"$T/build.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "cannot be reached" "$T/build.err"; then
	skip "$(tail -1 "$T/build.err")"
fi
check_eq "the image builds" 0 "$rc"
[ $rc -eq 0 ] || { cat "$T/build.err" >&2; finish; }
cat "$T/build.out"
ARCHIVE=$(sed -n 's/^image replayq:[^:]*: //p' "$T/build.out")
VERSION=$("$REPLAYQ" version | awk '{print $3}')
check_eq "the archive is named after the version" "$IMG_DIR/image/replayq-$VERSION.oci.tar" "$ARCHIVE"
check_contains "the size is printed" "MiB archive" "$(cat "$T/build.out")"

# --- the OCI archive, as a runtime would take it --------------------------------
mkdir -p "$T/oci"
tar -xf "$ARCHIVE" -C "$T/oci"
check_eq "an OCI layout" '{"imageLayoutVersion":"1.0.0"}' "$(jq -c . "$T/oci/oci-layout")"
check_eq "tagged with the version" "$VERSION" \
	"$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$T/oci/index.json")"
blob() { echo "$T/oci/blobs/${1/://}"; }
MANIFEST=$(blob "$(jq -r '.manifests[0].digest' "$T/oci/index.json")")
CONFIG=$(blob "$(jq -r .config.digest "$MANIFEST")")
check_eq "two layers: Debian's packages, replayq" 2 "$(jq '.layers | length' "$MANIFEST")"
check_eq "runs as uid 10001" "10001:10001" "$(jq -r .config.User "$CONFIG")"
check_eq "entrypoint replayq, command worker" '["/usr/local/bin/replayq"] ["worker"]' \
	"$(jq -c .config.Entrypoint "$CONFIG") $(jq -c .config.Cmd "$CONFIG")"
check_eq "exposes the metrics port" '["9187/tcp"]' "$(jq -c '.config.ExposedPorts | keys' "$CONFIG")"
check_eq "labelled with the version" "$VERSION" \
	"$(jq -r '.config.Labels["org.opencontainers.image.version"]' "$CONFIG")"
umoci unpack --image "$T/oci:$VERSION" "$T/bundle" >/dev/null
R=$T/bundle/rootfs
check "unpacks to a root file system" test -x "$R/usr/local/bin/replayq"
check_contains "the user replayq is 10001" "replayq:x:10001:10001:" "$(cat "$R/etc/passwd")"
check_eq "its repository root and heartbeat directory are its own" "10001 10001" \
	"$(stat -c %u "$R/srv/git") $(stat -c %u "$R/run/replayq")"
check "Debian 12 inside" grep -q 'VERSION_ID="12"' "$R/etc/os-release"
check "the packages' records for scanners" test -s "$R/var/lib/dpkg/status.d/libc6"
check "libhiredis is recorded" test -s "$R/var/lib/dpkg/status.d/libhiredis0.14"
check "busybox, for the liveness probe and kubectl exec" test -x "$R/bin/busybox"
for f in bin/sh bin/bash usr/bin/git usr/bin/apt usr/bin/dpkg; do
	check "no /$f in the image" test ! -e "$R/$f"
done

# --- a replay in the chroot, as the image's user -------------------------------------
section "replayq replay in a chroot of the image"
make_repo "$R/srv/git/proj" img
cp -a "$R/srv/git/proj" "$T/proj-host" # the same repository for the tested binary, as root
chown -R 10001:10001 "$R/srv/git/proj"
# the environment of the image's processes: its own, nothing of the test's
IMG_ENV=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/home/replayq
	GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL=committer@example.com
	GIT_COMMITTER_DATE="@1800000000 +0000")
in_image() { env -i "${IMG_ENV[@]}" "$@"; }
chroot_rq() { in_image chroot --userspec=10001:10001 "$R" /usr/local/bin/replayq "$@"; }
img_out=$(chroot_rq -C /srv/git/proj replay --ref-action=print --onto=main base..topic 2>"$T/img.err")
check_eq "the image's replay runs" 0 "$?"
host_out=$(in_image "$REPLAYQ" -C "$T/proj-host" replay --ref-action=print --onto=main base..topic 2>/dev/null)
check_eq "and prints what the tested binary prints" "$host_out" "$img_out"
check_contains "an update line" "update refs/heads/topic " "$img_out"
chroot_rq -C /srv/git/proj replay --ref-action=update --onto=main base..s2 2>>"$T/img.err"
check_eq "a ref update as uid 10001" 0 "$?"
check_eq "moved the branch" "$(git -C "$R/srv/git/proj" -c safe.directory='*' rev-parse main)" \
	"$(git -C "$R/srv/git/proj" -c safe.directory='*' rev-parse s2~2)"
check "the repository is sound" git -C "$R/srv/git/proj" -c safe.directory='*' fsck --strict --no-dangling --no-progress
[ -s "$T/img.err" ] && cat "$T/img.err" >&2

# --- a worker in the chroot, against a private Redis on loopback ------------------------
section "replayq worker in a chroot of the image"
start_redis
# env execs chroot, which execs replayq: $! is the worker's pid
env -i "${IMG_ENV[@]}" REPLAYQ_REDIS_URL="$REDIS_URL" REPLAYQ_QUEUE=img REPLAYQ_REPO_ROOT=/srv/git \
	REPLAYQ_METRICS_LISTEN=127.0.0.1:0 REPLAYQ_HEARTBEAT_FILE=/run/replayq/heartbeat \
	chroot --userspec=10001:10001 "$R" /usr/local/bin/replayq worker --name=img1 --jobs=1 \
	2>"$T/img-worker.log" &
WPID=$!
BG_PIDS+=("$WPID")
WORKER_NAMES[$WPID]=img1
worker_started img-worker 60
ADDR=$(grep -m1 '"metrics listening"' "$T/img-worker.log" | jq -r .address)
run_rq submit --redis="$REDIS_URL" --queue=img --wait=60 \
	<<<'{"v":1,"id":"img-1","repo":"proj","mode":"onto","target":"main","revisions":["base..clash"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
check_eq "the image's worker ran a job: a conflict" conflict "$(jq -r .status <<<"$OUT")"
run_rq submit --redis="$REDIS_URL" --queue=img --wait=60 \
	<<<'{"v":1,"id":"img-2","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
check_eq "and a ref update: ok, applied" "ok true" "$(jq -r '"\(.status) \(.applied)"' <<<"$OUT")"
check_eq "the branch holds the result's id" "$(jq -r '.updates[0].new' <<<"$OUT")" \
	"$(git -C "$R/srv/git/proj" -c safe.directory='*' rev-parse topic)"
check "the heartbeat file is touched" test -e "$R/run/replayq/heartbeat"
metrics=$(curl -sS --max-time 10 "http://$ADDR/metrics")
check_contains "it serves its metrics" 'replayq_jobs_total{queue="img",status="ok"} 1' "$metrics"
# the Deployment's probes, as the kubelet would make them (HTTP GET on the
# pod's address: here the chroot's worker on loopback)
mapfile -t PROBES < <(python3 -c '
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x["kind"] == "Deployment"][0]
c = d["spec"]["template"]["spec"]["containers"][0]
for p in ("livenessProbe", "readinessProbe", "startupProbe"):
    print(p, c[p]["httpGet"]["path"])
' "$TOP/deploy/k8s/worker-deployment.yaml")
check_eq "three probes" 3 "${#PROBES[@]}"
for p in "${PROBES[@]}"; do
	check_eq "the Deployment's ${p% *} (GET ${p#* }) passes in the image" 200 \
		"$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://$ADDR${p#* }")"
done
check_workers_stop "$WPID"
check_contains "and says so" '"worker stopped"' "$(cat "$T/img-worker.log")"
finish
