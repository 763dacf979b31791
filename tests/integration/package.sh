#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package (deploy/build-deb: cmake/install.cmake and CPack),
# installed as an admin would: into a Debian 12 root file system made with
# mmdebstrap (minbase and the packages the .deb's Depends name, resolved by
# apt from Debian's archive, cached in the build tree until the Depends
# change), with dpkg -i, which checks every Depends and runs the postinst.
# Then in a chroot of it: the user replayq exists, /etc/replayq is
# root:replayq 0750 with worker.env 0640 (a conffile), /srv/git is
# replayq's, the program, the tunnel script, the units (with the installed
# paths, passing systemd-analyze verify and security <= 2.5 where systemd-analyze is
# here) and the manual pages are where the docs say; `replayq replay` runs
# as replayq and prints what the tested binary prints; a worker started as
# the unit starts it (the installed worker.env, as the user replayq) runs a
# submitted ref update against a redis-server on loopback and drains on
# SIGTERM; dpkg --purge removes it. Skipped with a notice when not root,
# when mmdebstrap is missing (outside CI) or Debian's archive cannot be
# reached.
. "$(dirname "$0")/../lib.sh"
require jq redis-server dpkg-deb
TOP=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
	echo "# notice: $*: the package test is skipped" >&2
	finish
}
[ "$(id -u)" -eq 0 ] || skip "not root (mmdebstrap, dpkg in a chroot and chroot need it)"
if ! command -v mmdebstrap >/dev/null; then
	[ -n "${CI:-}" ] || skip "mmdebstrap is not installed (deploy/install-deps)"
	not_ok "mmdebstrap is installed (deploy/install-deps)"
	finish
fi
PKG_DIR=$(dirname "$REPLAYQ")/package-test

section "deploy/build-deb"
DEB=$("$TOP/deploy/build-deb" --build="$PKG_DIR/build" 2>"$T/build.err")
check_eq "the package builds" 0 "$?"
[ -f "$DEB" ] || { cat "$T/build.err" >&2; finish; }
VERSION=$("$REPLAYQ" version | awk '{print $3}')
check_eq "named after the version" "replayq_${VERSION}_$(dpkg --print-architecture).deb" "$(basename "$DEB")"
depends=$(dpkg-deb -f "$DEB" Depends)
echo "Depends: $depends"
for p in adduser libc6 libhiredis0.14 libjansson4 libdeflate0; do
	check_contains "depends on $p" "$p" "$depends"
done
check_eq "worker.env is a conffile" /etc/replayq/worker.env "$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles)"

section "a Debian 12 root file system with the Depends"
names=$(sed 's/([^)]*)//g; s/|[^,]*//g; s/[ ]//g' <<<"$depends")
stamp=$(printf '%s\n' bookworm minbase "$names" | sha256sum | cut -c1-16)
BASE=$PKG_DIR/base-$stamp
if [ ! -d "$BASE" ]; then
	rm -rf "$PKG_DIR"/base-* "$BASE.new"
	if ! mmdebstrap --variant=minbase --mode=root --include="$names" bookworm "$BASE.new" \
		http://deb.debian.org/debian >"$T/mmdebstrap.log" 2>&1; then
		tail -n 15 "$T/mmdebstrap.log" >&2
		rm -rf "$BASE.new"
		grep -Eq 'Failed to fetch|Could not resolve|Temporary failure|Unable to connect|Connection failed' \
			"$T/mmdebstrap.log" && skip "Debian's archive cannot be reached"
		not_ok "mmdebstrap makes the root file system"
		finish
	fi
	mv "$BASE.new" "$BASE"
fi
R=$T/root
cp -a "$BASE" "$R"
cp "$DEB" "$R/tmp/replayq.deb"
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 chroot "$R" "$@"; }

section "dpkg -i"
in_root dpkg -i /tmp/replayq.deb >"$T/dpkg.out" 2>&1
check_eq "dpkg -i: its Depends are met, its postinst runs" 0 "$?"
grep -i 'error\|warning' "$T/dpkg.out" >&2
check_contains "the user replayq, a system user" "replayq:x:" "$(in_root getent passwd replayq)"
uid=$(in_root id -u replayq)
check "its uid is a system one" [ "$uid" -lt 1000 ]
check_eq "its shell" /usr/sbin/nologin "$(in_root getent passwd replayq | cut -d: -f7)"
check_eq "/etc/replayq: root:replayq 0750" "root replayq 750" "$(in_root stat -c '%U %G %a' /etc/replayq)"
check_eq "worker.env: root:replayq 0640" "root replayq 640" "$(in_root stat -c '%U %G %a' /etc/replayq/worker.env)"
check_eq "/srv/git: the repository root, replayq's" "replayq replayq 750" "$(in_root stat -c '%U %G %a' /srv/git)"
for f in /usr/bin/replayq /usr/libexec/replayq/redis-tls-tunnel; do
	check "$f is there and executable" test -x "$R$f"
done
for m in man1/replayq.1 man1/replayq-replay.1 man1/replayq-worker.1 man1/replayq-submit.1 \
	man1/replayq-train.1 man1/replayq-maintain.1 man5/replayq-jobs.5; do
	check "the manual page $m" test -s "$R/usr/share/man/$m.gz"
done
check "the JSON Schemas" test -s "$R/usr/share/doc/replayq/docs/schema/job.schema.json"
check "the Python producer" test -s "$R/usr/share/doc/replayq/examples/replayq_client.py"
check "no /usr/etc" test ! -e "$R/usr/etc"
UNIT=$R/usr/lib/systemd/system/replayq-worker@.service
check "ExecStart is the installed program" grep -qx 'ExecStart=/usr/bin/replayq worker' "$UNIT"
check "the tunnel unit runs the installed script" grep -qx 'ExecStart=/usr/libexec/replayq/redis-tls-tunnel' \
	"$R/usr/lib/systemd/system/replayq-redis-tunnel.service"
if command -v systemd-analyze >/dev/null; then
	# (on the host, the chroot has no systemd: the unit's paths into the chroot)
	mkdir -p "$T/unit"
	sed "s|/usr/bin/replayq|$R/usr/bin/replayq|; s|/etc/replayq/|$R/etc/replayq/|" "$UNIT" >"$T/unit/replayq-worker@1.service"
	out=$(MANPATH=$R/usr/share/man systemd-analyze verify "$T/unit/replayq-worker@1.service" 2>&1)
	check_eq "systemd-analyze verify of the installed unit, with the installed manual" "" "$out"
	score=$(systemd-analyze security --offline=yes --root="$R" replayq-worker@1.service 2>&1 |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	echo "systemd-analyze security of the installed unit: $score"
	check "at most 2.5 (got '$score')" awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 2.5) }'
fi

section "replayq replay from the package, as replayq"
make_repo "$R/srv/git/proj" pkg
cp -a "$R/srv/git/proj" "$T/proj-host"
in_root chown -R replayq:replayq /srv/git/proj
ENV=(GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL=committer@example.com GIT_COMMITTER_DATE="@1800000000 +0000")
out=$(in_root env HOME=/nonexistent "${ENV[@]}" setpriv --reuid=replayq --regid=replayq --init-groups \
	replayq -C /srv/git/proj replay --ref-action=print --onto=main base..topic 2>"$T/replay.err")
check_eq "the installed replayq replays" 0 "$?"
check_eq "and prints what the tested binary prints" \
	"$(env "${ENV[@]}" "$REPLAYQ" -C "$T/proj-host" replay --ref-action=print --onto=main base..topic 2>/dev/null)" "$out"
check_eq "replayq version" "replayq version $VERSION" "$(in_root replayq version)"

section "a worker from the package, started as its unit starts it"
start_redis
# the installed worker.env, pointed at the test's Redis; read as the unit
# reads it (EnvironmentFile=: lines of NAME=value), then the user replayq
sed -i "s|^REPLAYQ_REDIS_URL=.*|REPLAYQ_REDIS_URL=$REDIS_URL|; s|^REPLAYQ_QUEUE=.*|REPLAYQ_QUEUE=pkg|; s|^REPLAYQ_JOBS=.*|REPLAYQ_JOBS=1|" \
	"$R/etc/replayq/worker.env"
mapfile -t WENV < <(grep -E '^[A-Z_]+=' "$R/etc/replayq/worker.env")
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent "${WENV[@]}" REPLAYQ_WORKER_NAME=pkg-1 REPLAYQ_METRICS_LISTEN=127.0.0.1:0 \
	chroot --userspec=replayq:replayq "$R" /usr/bin/replayq worker 2>"$T/pkg-worker.log" &
WPID=$!
BG_PIDS+=("$WPID")
WORKER_NAMES[$WPID]=pkg-1
worker_started pkg-worker 60
run_rq submit --redis="$REDIS_URL" --queue=pkg --wait=60 \
	<<<'{"v":1,"id":"pkg-1","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"],"ref_action":"update","committer":{"name":"Bot","email":"bot@example.com","time":1800000000,"tz":"+0000"}}'
check_eq "the packaged worker ran a ref update: ok, applied" "ok true" "$(jq -r '"\(.status) \(.applied)"' <<<"$OUT")"
check_eq "the branch holds the result's id" "$(jq -r '.updates[0].new' <<<"$OUT")" \
	"$(git -C "$R/srv/git/proj" -c safe.directory='*' rev-parse topic)"
ADDR=$(grep -m1 '"metrics listening"' "$T/pkg-worker.log" | jq -r .address)
check_contains "it serves its metrics" "127.0.0.1:" "$ADDR"
check_eq "its /readyz" 200 "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://$ADDR/readyz")"
check_workers_stop "$WPID"

section "dpkg --purge"
in_root dpkg --purge replayq >"$T/purge.out" 2>&1
check_eq "dpkg --purge" 0 "$?"
check "the program is gone" test ! -e "$R/usr/bin/replayq"
check "worker.env is gone with the purge" test ! -e "$R/etc/replayq/worker.env"
check "the repositories stay" test -d "$R/srv/git/proj"
finish
