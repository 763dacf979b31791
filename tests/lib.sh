# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for the integration tests (bash).
#
# Each test script sources this file, calls the check functions, and ends
# with `finish`, which prints "N passed, N failed" and exits non-zero if
# anything failed. Repositories are made with the real git program in a
# fresh temporary directory that is removed at exit.

set -u
REPLAYQ=${REPLAYQ:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/replayq}
mkdir -p "${RQ_TEST_TMP:-/tmp}"
T=$(mktemp -d "${RQ_TEST_TMP:-/tmp}/rqtest.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0

# Fixed identities and dates so that commit ids are reproducible.
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.com"
export GIT_AUTHOR_DATE="@1700000000 +0000" GIT_COMMITTER_DATE="@1700000000 +0000"
export GIT_CONFIG_NOSYSTEM=1 HOME="$T" GIT_CONFIG_GLOBAL=/dev/null
unset GIT_DIR GIT_WORK_TREE

# --- object format ------------------------------------------------------------
# The repositories a test makes with `git init` have git's default format,
# GIT_DEFAULT_HASH (sha1 when unset; the @sha256 pass of tests/CMakeLists.txt
# sets sha256, and the installed git and upstream's both honour it for init,
# clone of a repository of that format and fast-import). OBJECT_FORMAT is it,
# HEXSZ its width in hex digits, ZERO_OID its zero id; OID_BRE and OID_ERE
# match exactly one id (basic and extended regular expressions).
OBJECT_FORMAT=${GIT_DEFAULT_HASH:-sha1}
case $OBJECT_FORMAT in
sha1) HEXSZ=40 ;;
sha256) HEXSZ=64 ;;
*)
	echo "FAIL: GIT_DEFAULT_HASH=$OBJECT_FORMAT is no object format git knows" >&2
	exit 1
	;;
esac
# shellcheck disable=SC2034 # for the tests
ZERO_OID=$(printf '%0*d' "$HEXSZ" 0) OID_ERE="[0-9a-f]{$HEXSZ}"
# shellcheck disable=SC2034 # for the tests
OID_BRE="[0-9a-f]\\{$HEXSZ\\}"
SHA256=0
[ "$OBJECT_FORMAT" = sha256 ] && SHA256=1
# object_format repo: the format of an existing repository, as git reads it
object_format() { git -C "$1" rev-parse --show-object-format; }
# oid_hexsz repo: the width of its ids in hex digits
oid_hexsz() { case $(object_format "$1") in sha256) echo 64 ;; *) echo 40 ;; esac; }
# zero_oid repo: its zero id
zero_oid() { printf '%0*d' "$(oid_hexsz "$1")" 0; }
# check_object_format repo: a check that repo is in OBJECT_FORMAT (on the
# @sha256 pass: that the run tests what it says it tests)
check_object_format() {
	check_eq "$1: object format" "$OBJECT_FORMAT" "$(object_format "$1")"
}
# A clock for test commits: tick advances both dates by a minute.
TICK=1700000000
tick() {
	TICK=$((TICK + 60))
	export GIT_AUTHOR_DATE="@$TICK +0000" GIT_COMMITTER_DATE="@$TICK +0000"
}

ok() {
	PASS=$((PASS + 1))
}
not_ok() {
	FAIL=$((FAIL + 1))
	echo "FAIL: $*" >&2
}
# check "description" command...: passes when the command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok; else not_ok "$what"; fi
}
# check_eq "description" expected actual
check_eq() {
	if [ "$2" == "$3" ]; then
		ok
	else
		not_ok "$1"
		echo "  expected: $2" >&2
		echo "  actual:   $3" >&2
	fi
}
# check_contains "description" needle haystack
check_contains() {
	case "$3" in
	*"$2"*) ok ;;
	*)
		not_ok "$1"
		echo "  missing: $2" >&2
		echo "  in:      $3" >&2
		;;
	esac
}
# run_rq: run replayq, capturing stdout in $OUT, stderr in $ERR, status in $RC.
# With RQ_DATE set, the replay's committer date is RQ_DATE.
run_rq() {
	OUT=$(GIT_COMMITTER_DATE="${RQ_DATE:-$GIT_COMMITTER_DATE}" "$REPLAYQ" "$@" 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
}
stamp() { echo "[$SECONDS s] $*" >&2; }
finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
	exit $?
}

# commit_file repo path content message: write a file and commit it.
commit_file() {
	tick
	mkdir -p "$(dirname "$1/$2")"
	printf '%s\n' "$3" >"$1/$2"
	git -C "$1" add -A && git -C "$1" commit -q -m "$4"
}

# make_repo dir variant [n]: a repository for job tests: main with base
# (2 commits, tagged), topic (2 commits), a stack s1 <- s2, a branch clash
# that adds c.txt differently, main moved on by two commits (c.txt, d.txt),
# and n update targets u-1..u-n at topic (default none).
make_repo() {
	local r=$1 v=$2 n=${3:-0}
	git init -q -b main "$r"
	commit_file "$r" a.txt "a $v" "base a $v"
	commit_file "$r" b.txt "b $v" "base b $v"
	git -C "$r" tag base
	git -C "$r" checkout -q -b topic
	commit_file "$r" t1.txt "t1 $v" "topic one $v"
	commit_file "$r" t2.txt "t2 $v" "topic two $v"
	git -C "$r" checkout -q -b s1 base
	commit_file "$r" s1.txt "s1 $v" "stack one $v"
	git -C "$r" checkout -q -b s2
	commit_file "$r" s2.txt "s2 $v" "stack two $v"
	git -C "$r" checkout -q -b clash base
	commit_file "$r" c.txt "clash $v" "clashing c $v"
	git -C "$r" checkout -q main
	commit_file "$r" c.txt "c $v" "main c $v"
	commit_file "$r" d.txt "d $v" "main d $v"
	[ "$n" -gt 0 ] || return 0
	for i in $(seq 1 "$n"); do echo "create refs/heads/u-$i $(git -C "$r" rev-parse topic)"; done |
		git -C "$r" update-ref --stdin
}

# make_abc_repo dir: main with base (1 commit, tagged), branches a, b and c
# off base (1 commit each), main moved on by one commit (the ref-update tests).
make_abc_repo() {
	git init -q -b main "$1"
	commit_file "$1" base.txt base base
	git -C "$1" tag base
	for b in a b c; do
		git -C "$1" checkout -q -b "$b" base
		commit_file "$1" "$b.txt" "$b" "$b"
	done
	git -C "$1" checkout -q main
	commit_file "$1" m.txt m "main moves"
}
# ref_locks repo: the lock files under its .git, sorted.
ref_locks() { find "$1/.git" -name '*.lock' | sort; }
# branch_refs repo: "<ref> <id>" of every branch.
branch_refs() { git -C "$1" for-each-ref --format='%(refname) %(objectname)' refs/heads; }
# fsck_ok repo: git fsck --strict passes (its notices shown only on failure).
fsck_ok() {
	git -C "$1" fsck --strict --no-dangling --no-progress >"$T/fsck.out" 2>&1 || {
		cat "$T/fsck.out" >&2
		return 1
	}
}

# No replayq temporary object directory or temporary pack file left behind.
no_litter() {
	local gd
	gd=$(git -C "$1" rev-parse --git-dir)
	case "$gd" in /*) ;; *) gd="$1/$gd" ;; esac
	! ls -d "$gd"/objects/replayq-tmp-* >/dev/null 2>&1 &&
		! ls "$gd"/objects/pack/tmp_replayq-tmp-* >/dev/null 2>&1
}

# require prog...: the test fails at once unless every program is installed.
require() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || {
			not_ok "$p is installed (deploy/install-deps)"
			finish
		}
	done
}

# --- the corpus --------------------------------------------------------------
# CORPUS: ../shared/corpus beside the checkout, else /work/shared/corpus
CORPUS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/corpus
[ -d "$CORPUS" ] || CORPUS=/work/shared/corpus
# corpus_repo name dir: a bare repository of the corpus bundle
# $CORPUS/<name>.bundle at dir, in OBJECT_FORMAT. The bundles are SHA-1:
# for SHA-256, a copy converted once by upstream git (fast-export of every
# ref, signatures of tags and commits kept verbatim, no re-encoding, into
# fast-import in a SHA-256 repository) and checked by corpus_verify, kept
# in RQ_CORPUS_CACHE (the build directory's corpus-sha256/ in the @sha256
# pass, else under $T) by the bundle's digest. Needs upstream_git first.
corpus_repo() {
	local name=$1 dest=$2 bundle=$CORPUS/$1.bundle cache c tmp
	if [ "$SHA256" = 0 ]; then
		git clone -q --bare "$bundle" "$dest"
		return
	fi
	cache=${RQ_CORPUS_CACHE:-$T/corpus-cache}
	c=$cache/$name-$(sha256sum <"$bundle" | cut -c1-16).git
	if [ ! -f "$c/rq-verified" ]; then
		mkdir -p "$cache" && tmp=$(mktemp -d "$cache/tmp.XXXXXX") || return 1
		stamp "corpus: converting $name to SHA-256"
		git clone -q --bare "$bundle" "$tmp/old.git" &&
			"$UPSTREAM_GIT" init -q --bare --object-format=sha256 "$tmp/new.git" 2>/dev/null &&
			"$UPSTREAM_GIT" -C "$tmp/old.git" fast-export --all --signed-tags=verbatim \
				--signed-commits=verbatim --reencode=no --export-marks="$tmp/old.marks" |
			"$UPSTREAM_GIT" -C "$tmp/new.git" fast-import --quiet --export-marks="$tmp/new.marks" &&
			corpus_verify "$tmp/old.git" "$tmp/new.git" "$tmp/old.marks" "$tmp/new.marks" || {
			rm -rf "$tmp"
			return 1
		}
		stamp "corpus: $name converted and checked"
		: >"$tmp/new.git/rq-verified"
		# another test's conversion may have won: either is the same
		mv -T "$tmp/new.git" "$c" 2>/dev/null || true
		rm -rf "$tmp"
	fi
	cp -a "$c" "$dest" && rm -f "$dest/rq-verified"
}
# corpus_verify old new old.marks new.marks: the SHA-256 copy new holds the
# SHA-1 repository old exactly, every id aside: every commit reachable from
# a ref byte for byte with its tree and parent ids mapped (signatures,
# encodings and extra headers included), every tree of theirs entry by
# entry (mode, name; each blob's content hashed in SHA-256 is the id the
# copy names), every ref at its commit's copy, each annotated tag byte for
# byte with its object id mapped. No submodule entries (the corpus has none).
corpus_verify() {
	python3 - "$@" "$UPSTREAM_GIT" <<'PY'
import hashlib, subprocess, sys

old_dir, new_dir, marks_old, marks_new = sys.argv[1:5]
git = sys.argv[5] if len(sys.argv) > 5 else "git"


def marks(path):
    return dict(line.split() for line in open(path) if line.strip())


m1, m2 = marks(marks_old), marks(marks_new)
idmap = {m1[k]: m2[k] for k in m1}


class Odb:
    def __init__(self, d):
        self.p = subprocess.Popen([git, "-C", d, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)

    def read(self, oid):
        self.p.stdin.write(oid.encode() + b"\n")
        self.p.stdin.flush()
        head = self.p.stdout.readline().split()
        data = self.p.stdout.read(int(head[2]) + 1)[:-1]
        return head[1].decode(), data


def lines(d, *args):
    return subprocess.run([git, "-C", d] + list(args), check=True, capture_output=True,
                          text=True).stdout.split("\n")[:-1]


old, new = Odb(old_dir), Odb(new_dir)
bad = []
trees = []
for c in lines(old_dir, "rev-list", "--all"):
    _, raw = old.read(c)
    _, nraw = new.read(idmap[c])
    head, sep, rest = raw.partition(b"\n\n")
    out = []
    for ln in head.split(b"\n"):
        if ln.startswith(b"tree "):
            nt = nraw.split(b"\n", 1)[0][5:]
            trees.append((ln[5:].decode(), nt.decode()))
            ln = b"tree " + nt
        elif ln.startswith(b"parent "):
            ln = b"parent " + idmap[ln[7:].decode()].encode()
        out.append(ln)
    if b"\n".join(out) + sep + rest != nraw:
        bad.append("commit " + c)


def entries(data, w):
    i, out = 0, []
    while i < len(data):
        sp, nul = data.index(b" ", i), data.index(b"\0", i)
        out.append((data[i:sp], data[sp + 1:nul], data[nul + 1:nul + 1 + w].hex()))
        i = nul + 1 + w
    return out


seen = set()
while trees:
    ot, nt = trees.pop()
    if (ot, nt) in seen:
        continue
    seen.add((ot, nt))
    oe = entries(old.read(ot)[1], 20)
    ne = entries(new.read(nt)[1], 32)
    if [e[:2] for e in oe] != [e[:2] for e in ne]:
        bad.append("tree " + ot)
        continue
    for (mode, name, oid), (_, _, nid) in zip(oe, ne):
        if mode.startswith(b"4") or mode.startswith(b"04"):
            trees.append((oid, nid))
        elif mode == b"160000":
            bad.append("gitlink %s in tree %s" % (name, ot))
        else:
            data = old.read(oid)[1]
            if hashlib.sha256(b"blob %d\0" % len(data) + data).hexdigest() != nid:
                bad.append("blob %s in tree %s" % (name, ot))
for ln in lines(old_dir, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)"):
    ref, oid, kind = ln.split()
    nid = lines(new_dir, "rev-parse", ref)[0]
    if kind == "commit":
        ok = idmap[oid] == nid
    elif kind == "tag":
        raw = old.read(oid)[1]
        first, rest = raw.split(b"\n", 1)
        ok = b"object " + idmap[first[7:].decode()].encode() + b"\n" + rest == new.read(nid)[1]
    else:
        ok = False
    if not ok:
        bad.append("ref " + ref)
print("%d commits, %d trees, %d refs compared" % (len(idmap), len(seen),
                                                 len(lines(old_dir, "for-each-ref"))))
for b in bad[:20]:
    print("differs: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# --- a private redis-server -------------------------------------------------
# start_redis [extra redis-server args...]: starts a server on a free
# loopback port in $T/redis (AOF on), sets REDIS_PORT, REDIS_URL and
# REPLAYQ_REDIS_URL; it is stopped when the test exits, even on failure.
REDIS_PIDS=()
free_port() {
	local p
	for _ in $(seq 1 50); do
		# below the kernel's client ports (32768 up) and above the cluster
		# nodes' bus ports (free_cluster_port), so the two never meet
		p=$((26400 + RANDOM % 6300))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
start_redis() {
	local fixed=${REDIS_PORT:-} attempt up=0
	mkdir -p "$T/redis"
	# a new port for each attempt (another test may take a free port first);
	# a restart keeps its port and retries it. Under a loaded machine the
	# server can take seconds: up to 20 s each. A server that never comes up
	# fails the test at once, with its log, instead of letting it hang.
	for attempt in 1 2 3; do
		REDIS_PORT=${fixed:-$(free_port)}
		rm -f "$T/redis/redis.pid"
		redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$T/redis" \
			--appendonly yes --save '' --daemonize yes --pidfile "$T/redis/redis.pid" \
			--logfile "$T/redis/redis.log" --maxmemory-policy noeviction "$@" >/dev/null
		for _ in $(seq 1 400); do
			if [ -s "$T/redis/redis.pid" ] &&
				redis-cli -p "$REDIS_PORT" ${REDIS_AUTH:-} ping 2>/dev/null | grep -q PONG; then
				up=1
				break
			fi
			sleep 0.05
		done
		[ $up -eq 1 ] && break
		[ -s "$T/redis/redis.pid" ] && kill -9 "$(cat "$T/redis/redis.pid")" 2>/dev/null
		echo "start_redis: no answer on port $REDIS_PORT (attempt $attempt)" >&2
	done
	if [ $up -ne 1 ]; then
		tail -n 20 "$T/redis/redis.log" >&2 2>/dev/null
		echo "FAIL: redis-server did not start" >&2
		exit 1
	fi
	REDIS_PIDS+=("$(cat "$T/redis/redis.pid")")
	REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
	export REDIS_URL REPLAYQ_REDIS_URL=$REDIS_URL
}
stop_redis() {
	local pid
	pid=$(cat "$T/redis/redis.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	rm -f "$T/redis/redis.pid"
}
rcli() {
	redis-cli -p "$REDIS_PORT" ${REDIS_AUTH:-} "$@"
}
cleanup_all() {
	local p
	for p in "${BG_PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
	for p in "${REDIS_PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
BG_PIDS=()
trap cleanup_all EXIT
# start_worker name [args...]: a replayq worker in the background, log in
# $T/<name>.log; WORKER_PID is its pid, WORKER_NAMES[pid] its name
declare -A WORKER_NAMES=()
start_worker() {
	local name=$1
	shift
	"$REPLAYQ" worker --name="$name" "$@" 2>"$T/$name.log" &
	WORKER_PID=$!
	BG_PIDS+=("$WORKER_PID")
	WORKER_NAMES[$WORKER_PID]=$name
}
# worker_started name [seconds]: waits (30 s by default) until the worker
# start_worker started as name has logged that it started
worker_started() { wait_for "$1 connected" "${2:-30}" grep -qs '"worker started"' "$T/$1.log"; }
# check_workers_stop [--within=SECS] pid...: SIGTERM to every worker at
# once, then a check each that it exits 0. With --within, before that a
# check each that it has exited SECS seconds after the signal at the
# latest (one still running then is SIGKILLed, so the test goes on).
check_workers_stop() {
	local w rc within='' what
	if [[ ${1:-} == --within=* ]]; then
		within=${1#--within=}
		shift
	fi
	kill -TERM "$@"
	for w in "$@"; do
		what=${WORKER_NAMES[$w]:-}
		what="worker ${what:+$what }(pid $w)"
		if [ -n "$within" ]; then
			if wait_for "$what to exit" "$within" dead_or_zombie "$w"; then
				ok
			else
				not_ok "$what exits within $within s of SIGTERM"
				kill -KILL "$w" 2>/dev/null
			fi
		fi
		wait "$w"
		rc=$?
		check_eq "$what exits 0 on SIGTERM" 0 "$rc"
	done
}
# sanitizer_clean file...: no ASan, LSan or UBSan report in the files (the
# lines that show one are printed, with their file); a file that cannot be
# read fails it too
sanitizer_clean() {
	grep -H -e 'Sanitizer' -e 'runtime error' -- "$@" >&2
	[ $? -eq 1 ]
}
# --- queue tests: jobs on make_repo's repository "proj" ------------------------
# section title: a heading in the test's output, with the time.
section() { echo "== $* (at ${SECONDS}s)"; }
# job ID [extra members]: a job on one line (print mode unless extra says so)
job() {
	local extra=${2:+,$2}
	echo '{"v":1,"id":"'"$1"'","repo":"proj","mode":"onto","target":"main","revisions":["base..topic"],"committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}'"$extra"'}'
}
# key Q rest: the name of a queue key
key() { echo "replayq:{$1}:$2"; }
# stat_of Q field: a counter of queue Q
stat_of() { rcli HGET "$(key "$1" stats)" "$2"; }
# pending_count Q: the jobs of Q delivered and not acknowledged
pending_count() { rcli XPENDING "$(key "$1" jobs)" workers | head -1; }
# results_count Q ID: the entries for job ID in the results stream of Q
results_count() { rcli --raw XRANGE "$(key "$1" results)" - + | grep -cx -- "$2"; }

# Upstream git (2.55, with `git replay`), the oracle: RQ_UPSTREAM_GIT, else
# ../shared/upstream-git/git beside the checkout, else /work/shared/...
# upstream_git: sets UPSTREAM_GIT, or prints a visible notice and fails.
upstream_git() {
	local here c
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	for c in "${RQ_UPSTREAM_GIT:-}" "$here/../shared/upstream-git/git" /work/shared/upstream-git/git; do
		if [ -n "$c" ] && [ -x "$c" ] && "$c" replay -h 2>&1 | grep -q -- --onto; then
			UPSTREAM_GIT=$c
			return 0
		fi
	done
	echo "# notice: upstream git with 'git replay' not found (set RQ_UPSTREAM_GIT): oracle checks skipped" >&2
	return 1
}
# pick_repo dir n: main at base, and branches p-1..p-n off base, each
# adding its own file (so that any order of picks applies cleanly)
pick_repo() {
	git init -q -b main "$1"
	commit_file "$1" base.txt base base
	git -C "$1" tag base
	for i in $(seq 1 "$2"); do
		git -C "$1" checkout -q -b "p-$i" base
		commit_file "$1" "p$i.txt" "p $i" "pick $i"
	done
	git -C "$1" checkout -q main
}
# Every git this test runs is upstream's (after upstream_git): first in
# PATH, its own exec path, an empty template directory.
upstream_only() {
	mkdir -p "$T/ubin" "$T/tmpl"
	ln -s "$UPSTREAM_GIT" "$T/ubin/git"
	export PATH="$T/ubin:$PATH" GIT_EXEC_PATH="$T/ubin" GIT_TEMPLATE_DIR="$T/tmpl"
}
# For the consolidation tests, in the repository whose objects directory
# is $OBJ: consolidation_jobs prefix from to prints the jobs
# <prefix>-<from>..<prefix>-<to>, one a line (base..topic onto main, a
# committer time of their own; the odd ones move refs/rq/<i>); own_packs
# counts replayq's packs (its marks), all_packs every pack.
consolidation_jobs() {
	local i c u
	for i in $(seq "$2" "$3"); do
		c='"committer":{"name":"Bot","email":"bot@example.com","time":'$((1800000000 + i))',"tz":"+0000"}'
		u=''
		[ $((i % 2)) = 1 ] && u=',"ref":"refs/rq/'$i'","ref_action":"update"'
		echo '{"v":1,"id":"'"$1"'-'$i'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"]'$u','$c'}'
	done
}
own_packs() { ls "$OBJ/replayq" 2>/dev/null | grep -c '\.own$'; }
all_packs() { ls "$OBJ/pack" | grep -c '\.idx$'; }


# Holds (core/base/rq_testhook.h): a process that reaches a point named in
# REPLAYQ_TEST_HOLD announces itself with $HOLD_DIR/<point>.<pid> and waits
# for a signal. hold_pid point: wait for the announcement, print the pid.
HOLD_DIR=$T/holds
mkdir -p "$HOLD_DIR"
export REPLAYQ_TEST_HOLD_DIR=$HOLD_DIR
held() { compgen -G "$HOLD_DIR/$1.[0-9]*" >/dev/null; }
hold_pid() {
	wait_for "a process held at '$1'" 60 held "$1" || return 1
	local f
	for f in "$HOLD_DIR/$1".[0-9]*; do
		[ -s "$f" ] && cat "$f" && return 0
	done
	return 1
}
# dead_or_zombie pid: the process has exited (reaped or not)
dead_or_zombie() {
	[ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}
# logged_after log job outcome: the worker's log (JSON lines) has the line
# of how the consolidation after the job ended, wherever it is. (Not
# `jq -e 'select(...)'` over the lines: jq 1.6 judges -e by the last input
# alone, so a later line of another job made the check fail.)
logged_after() {
	grep -s '"consolidation after a job; its result stands"' "$1" |
		jq -n -e --arg j "$2" --arg o "$3" 'any(inputs; .job == $j and .outcome == $o)' \
			>/dev/null
}
# wait_for "description" seconds command...: poll until the command succeeds
wait_for() {
	local what=$1 secs=$2
	shift 2
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.1
	done
	echo "timed out waiting for: $what" >&2
	return 1
}

# --- a private Redis Cluster, a master watched by Sentinel --------------------
# (integration/cluster.sh, integration/sentinel.sh) Every server runs on a
# free loopback port with its files under $T and is killed when the test
# exits (REDIS_PIDS).
# redis_answers port: the server on port answers PING
redis_answers() { [ "$(redis-cli -p "$1" ${REDIS_AUTH:-} ping 2>/dev/null)" = PONG ]; }
# start_redis_at dir port [redis-server args...]: a server without
# persistence; fails at once when it cannot listen (the port taken meanwhile)
start_redis_at() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir"
	# a pid file left by an earlier server here, or another test's server
	# on the port, must not pass for this one
	rm -f "$dir/redis.pid" "$dir/redis.log"
	redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
		--pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' --appendonly no \
		"$@" >/dev/null || return 1
	wait_for "redis-server on port $port" 30 redis_up "$port" "$dir/redis.log" &&
		! grep -q 'aborting\|Failed listening' "$dir/redis.log" &&
		wait_for "the pid file of port $port" 30 test -s "$dir/redis.pid" &&
		redis_answers "$port" || {
		tail -n 5 "$dir/redis.log" >&2
		return 1
	}
	REDIS_PIDS+=("$(cat "$dir/redis.pid")")
}
# redis_up port log: the server answers, or its log says it gave up
redis_up() { redis_answers "$1" || grep -q 'aborting\|Failed listening' "$2" 2>/dev/null; }
# free_cluster_port: a free port whose cluster bus port (+10000) is free
# too, both below the range the kernel takes client ports from
free_cluster_port() {
	local p
	for _ in $(seq 1 100); do
		# data ports 10000-16383, bus ports 20000-26383: below free_port's
		p=$((10000 + RANDOM % 6384))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
# start_on_free_port parent start [args...]: `start parent/<port> <port>
# args...` (start_redis_at, start_sentinel) on a free port
# (free_cluster_port), on another one when another test takes it first
# (3 tries); sets NODE_PORT and NODE_DIR (parent/<port>)
start_on_free_port() {
	local parent=$1 start=$2 p
	shift 2
	for _ in 1 2 3; do
		p=$(free_cluster_port) || continue
		if "$start" "$parent/$p" "$p" "$@"; then
			NODE_PORT=$p
			# shellcheck disable=SC2034 # for the test that calls this
			NODE_DIR=$parent/$p
			return 0
		fi
	done
	return 1
}
# start_cluster [redis-server args...]: 3 masters and 3 replicas
# (cluster-node-timeout 1000 ms) made by redis-cli --cluster create, ready
# (every node sees 6 nodes and a covered map, every replica in sync); sets
# CLUSTER_PORTS and CLUSTER_URL (two of the nodes as seeds). Each node's
# files are in $T/cluster/<port>.
start_cluster() {
	local addrs=()
	CLUSTER_PORTS=()
	for _ in 1 2 3 4 5 6; do
		start_on_free_port "$T/cluster" start_redis_at --cluster-enabled yes \
			--cluster-config-file nodes.conf --cluster-node-timeout 1000 \
			--repl-diskless-sync-delay 0 "$@" || return 1
		CLUSTER_PORTS+=("$NODE_PORT")
		addrs+=("127.0.0.1:$NODE_PORT")
	done
	redis-cli ${REDIS_AUTH:-} --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
		>"$T/cluster/create.log" 2>&1 || {
		cat "$T/cluster/create.log" >&2
		return 1
	}
	wait_for "the cluster is ready" 60 cluster_ready || return 1
	# shellcheck disable=SC2034 # for the test that calls this
	CLUSTER_URL="redis+cluster://127.0.0.1:${CLUSTER_PORTS[0]},127.0.0.1:${CLUSTER_PORTS[1]}/"
}
# cluster_ready: every live node of CLUSTER_PORTS sees a covered map and
# all live nodes, and every master that has replicas has them in sync
cluster_ready() {
	local p live=() info
	for p in "${CLUSTER_PORTS[@]}"; do redis_answers "$p" && live+=("$p"); done
	for p in "${live[@]}"; do
		info=$(redis-cli -p "$p" ${REDIS_AUTH:-} cluster info)
		case "$info" in *cluster_state:ok*) ;; *) return 1 ;; esac
		[ "$(redis-cli -p "$p" ${REDIS_AUTH:-} cluster nodes | grep -vc 'fail')" -ge "${#live[@]}" ] ||
			return 1
		info=$(redis-cli -p "$p" ${REDIS_AUTH:-} info replication)
		case "$info" in
		*role:slave*master_link_status:up*) ;;
		*role:master*) ;;
		*) return 1 ;;
		esac
	done
}
# cluster_any_node: a node of CLUSTER_PORTS that answers
cluster_any_node() {
	local p
	for p in "${CLUSTER_PORTS[@]}"; do redis_answers "$p" && echo "$p" && return 0; done
	return 1
}
# ccli port args...: redis-cli on a cluster node (no redirections followed)
ccli() {
	local p=$1
	shift
	redis-cli -p "$p" ${REDIS_AUTH:-} "$@"
}
# cluster_master_of slot [port]: the port of the master serving slot, as
# the node at port (default: any live node) sees it
cluster_master_of() {
	local p=${2:-$(cluster_any_node)}
	ccli "$p" cluster nodes | awk -v s="$1" '$3 ~ /master/ && $3 !~ /fail/ {
		for (i = 9; i <= NF; i++) {
			if ($i ~ /^\[/) continue
			n = split($i, r, "-")
			if ((n == 1 && r[1] + 0 == s) || (n == 2 && s >= r[1] + 0 && s <= r[2] + 0)) {
				split($2, a, "[:@]"); print a[2]; exit
			}
		}
	}'
}
# cluster_masters: the ports of the live masters that serve slots
cluster_masters() {
	ccli "$(cluster_any_node)" cluster nodes | awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9 {
		split($2, a, "[:@]"); print a[2] }' | sort -n
}
# cluster_replica_of port: the port of a live replica of the master at port
cluster_replica_of() {
	local id
	id=$(ccli "$1" cluster myid)
	ccli "$1" cluster nodes | awk -v id="$id" '$4 == id && $3 ~ /slave/ && $3 !~ /fail/ {
		split($2, a, "[:@]"); print a[2]; exit }'
}
# cluster_keyslot key: its hash slot, as Redis computes it
cluster_keyslot() { ccli "$(cluster_any_node)" cluster keyslot "$1"; }
# is_master port: the node at port says it is a master
is_master() { ccli "$1" role 2>/dev/null | head -1 | grep -qx master; }
# cluster_takeover port: the replica at port takes its master's slots
# (CLUSTER FAILOVER TAKEOVER) and every live node sees it serve them
cluster_takeover() {
	local slot=$2
	ccli "$1" cluster failover takeover >/dev/null || return 1
	wait_for "replica $1 is a master" 30 is_master "$1" || return 1
	wait_for "the cluster sees $1 serve slot $slot" 30 cluster_serves "$slot" "$1"
}
# cluster_serves slot port: every live node says port serves slot, and
# the cluster is ok
cluster_serves() {
	local p
	for p in "${CLUSTER_PORTS[@]}"; do
		redis_answers "$p" || continue
		[ "$(cluster_master_of "$1" "$p")" = "$2" ] || return 1
		case "$(ccli "$p" cluster info)" in *cluster_state:ok*) ;; *) return 1 ;; esac
	done
}
# Moving a slot by hand, as redis-cli --cluster reshard does, in steps a
# test can come between: slot_migration_begin slot src dst, then
# slot_migrate_keys slot src dst [key...] (the keys named, else every key
# left), then slot_migration_end slot src dst.
slot_migration_begin() {
	ccli "$3" cluster setslot "$1" importing "$(ccli "$2" cluster myid)" >/dev/null &&
		ccli "$2" cluster setslot "$1" migrating "$(ccli "$3" cluster myid)" >/dev/null
}
slot_migrate_keys() {
	local slot=$1 src=$2 dst=$3 keys
	shift 3
	if [ $# -gt 0 ]; then
		ccli "$src" migrate 127.0.0.1 "$dst" "" 0 5000 KEYS "$@" >/dev/null
		return
	fi
	while keys=$(ccli "$src" cluster getkeysinslot "$slot" 100) && [ -n "$keys" ]; do
		# shellcheck disable=SC2086 # one key a word
		ccli "$src" migrate 127.0.0.1 "$dst" "" 0 5000 KEYS $keys >/dev/null || return 1
	done
}
slot_migration_end() {
	local id p
	id=$(ccli "$3" cluster myid)
	ccli "$3" cluster setslot "$1" node "$id" >/dev/null &&
		ccli "$2" cluster setslot "$1" node "$id" >/dev/null || return 1
	for p in $(cluster_masters); do ccli "$p" cluster setslot "$1" node "$id" >/dev/null; done
	return 0
}
# repl_synced port: the master at port has every replica at its offset
repl_synced() {
	local info off
	info=$(ccli "$1" info replication | tr -d '\r')
	off=$(sed -n 's/^master_repl_offset://p' <<<"$info")
	grep -q '^slave0:' <<<"$info" || return 1
	! grep '^slave[0-9]*:' <<<"$info" | grep -vq "offset=$off,"
}
# errorstat name [port...]: how often the nodes answered an error (INFO
# errorstats), summed
errorstat() {
	local name=$1 p n=0 c
	shift
	for p in "$@"; do
		c=$(ccli "$p" info errorstats 2>/dev/null | tr -d '\r' | sed -n "s/^errorstat_$name:count=//p")
		n=$((n + ${c:-0}))
	done
	echo "$n"
}
# connections_received port...: connections the nodes accepted so far,
# summed (each call adds one a node: its own)
connections_received() {
	local p n=0 c
	for p in "$@"; do
		c=$(ccli "$p" info stats 2>/dev/null | tr -d '\r' | sed -n 's/^total_connections_received://p')
		n=$((n + ${c:-0}))
	done
	echo "$n"
}
# results_at port queue: the entries of the queue's results stream on the
# node at port
results_at() { ccli "$1" xlen "$(key "$2" results)"; }
# results_are port queue op n: `[ <that count> op n ]` holds (op: -ge, -gt,
# ...); false while the node does not answer
results_are() {
	local n
	n=$(results_at "$1" "$2" 2>/dev/null) || return 1
	test "$n" "$3" "$4" 2>/dev/null
}
# now_ms: the wall clock in milliseconds (for the figures a test prints)
now_ms() { date +%s%3N; }

# start_sentinel dir port master_port: a sentinel watching "mymaster" at
# 127.0.0.1:master_port (quorum 2, down after 1000 ms); $SENTINEL_AUTH_PASS
# is the data nodes' password, if any
start_sentinel() {
	mkdir -p "$1"
	{
		echo "port $2"
		echo "bind 127.0.0.1"
		echo "daemonize yes"
		echo "pidfile $1/redis.pid"
		echo "logfile $1/redis.log"
		echo "dir $1"
		echo "sentinel monitor mymaster 127.0.0.1 $3 2"
		echo "sentinel down-after-milliseconds mymaster 1000"
		echo "sentinel failover-timeout mymaster 3000"
		[ -n "${SENTINEL_AUTH_PASS:-}" ] && echo "sentinel auth-pass mymaster $SENTINEL_AUTH_PASS"
	} >"$1/sentinel.conf"
	rm -f "$1/redis.pid" "$1/redis.log"
	redis-server "$1/sentinel.conf" --sentinel >/dev/null || return 1
	# its own pid file, not another test's server on the port
	wait_for "sentinel on port $2" 30 redis_up "$2" "$1/redis.log" &&
		! grep -q 'aborting\|Failed listening' "$1/redis.log" &&
		wait_for "the pid file of sentinel $2" 30 test -s "$1/redis.pid" &&
		redis_answers "$2" || return 1
	REDIS_PIDS+=("$(cat "$1/redis.pid")")
}
# sentinel_master_port port: the master's port the sentinel at port gives
sentinel_master_port() { redis-cli -p "$1" sentinel get-master-addr-by-name mymaster | sed -n 2p; }

# --- jobs run by workers while the servers move ------------------------------
# (integration/cluster.sh, integration/sentinel.sh) Jobs of every kind on
# make_repo's repositories, the same jobs run by `replayq run` for reference,
# some of them held while a server is moved, and the results compared.
# mixed_job id repo i: a job whose kind cycles with i (mod 8): onto, onto of
# two tips, onto contained, advance, revert, a conflict, an update of u-<i>,
# a revision that does not exist; its committer time is 1800000000 + i
mixed_job() {
	local c='"committer":{"name":"Bot","email":"bot@example.com","time":'$((1800000000 + $3))',"tz":"+0100"}'
	local h='{"v":1,"id":"'$1'","repo":"'$2'","mode":'
	case $(($3 % 8)) in
	0) echo "$h"'"onto","target":"main","revisions":["base..topic"],'"$c}" ;;
	1) echo "$h"'"onto","target":"main","revisions":["^base","topic","s2"],'"$c}" ;;
	2) echo "$h"'"onto","target":"main","revisions":["base..s2"],"contained":true,'"$c}" ;;
	3) echo "$h"'"advance","target":"main","revisions":["base..topic"],'"$c}" ;;
	4) echo "$h"'"revert","target":"main","revisions":["main~2..main"],'"$c}" ;;
	5) echo "$h"'"onto","target":"main","revisions":["base..clash"],'"$c}" ;;
	6) echo "$h"'"onto","target":"main","revisions":["base..u-'"$3"'"],"ref_action":"update",'"$c}" ;;
	7) echo "$h"'"onto","target":"main","revisions":["base..nosuch"],'"$c}" ;;
	esac
}
# mixed_jobs prefix repo from to: the jobs <prefix>-<from>..<prefix>-<to>
mixed_jobs() {
	local i
	for i in $(seq "$3" "$4"); do mixed_job "$1-$i" "$2" "$i"; done
}
# norm_results: results (JSON lines on stdin) cut to what a worker's must
# share with the reference's, one a line
norm_results() {
	jq -c '{id, status, updates: [.updates[]? | {ref, old, new}], conflict: (.conflict.commit // null), code: (.error.code // null)}'
}
# reference_results root jobs: `replayq run --jobs=2` of the jobs file on a
# copy of root ($T/refroot), made before any worker moves a ref; its
# results, normalised and sorted, in $T/ref.norm, its stderr in $T/run.err
reference_results() {
	cp -a "$1" "$T/refroot"
	"$REPLAYQ" run --repo-root="$T/refroot" --jobs=2 "$2" 2>"$T/run.err" | norm_results | sort >"$T/ref.norm"
}
# job_holds prefix first n: the hold points (REPLAYQ_TEST_HOLD) of the jobs
# <prefix>-<first> .. <prefix>-<first+n-1>, at their first delivery
job_holds() {
	local i
	for ((i = $2; i < $2 + $3; i++)); do printf 'job:%s-%d@1,' "$1" "$i"; done
}
# held_job_pids prefix first n: waits until each of those jobs is held, and
# prints their pids
held_job_pids() {
	local i
	for ((i = $2; i < $2 + $3; i++)); do hold_pid "job:$1-$i@1" || return 1; done
}
# check_results_once total ref got ids: each of the total jobs has exactly
# one result, equal to the reference's. ref and got are results as
# norm_results gives them, sorted; ids is every job id the results
# stream(s) hold, one a line. Four checks; shows how got differs from ref
# and sets LOST, DUP and WRONG (for the figures).
check_results_once() {
	local total=$1 ref=$2 got=$3 ids=$4
	LOST=$((total - $(wc -l <"$got")))
	DUP=$(sort "$ids" | uniq -d | wc -l)
	WRONG=$(comm -13 "$ref" "$got" | wc -l)
	diff "$ref" "$got" >&2
	check_eq "lost" 0 "$LOST"
	check_eq "duplicated" 0 "$DUP"
	check_eq "wrong" 0 "$WRONG"
	check_eq "one results-stream entry per job" "$total" "$(sort -u "$ids" | wc -l)"
}
# updates_moved repo prefix last ref: how many of the ref-update jobs
# (mixed_job's kind 6: <prefix>-6, <prefix>-14, ... up to last) left u-<i>
# in repo where the reference run (ref, as in check_results_once) put it
updates_moved() {
	local i exp n=0
	for i in $(seq 6 8 "$3"); do
		exp=$(jq -r "select(.id == \"$2-$i\") | .updates[0].new" "$4")
		[ "$(git -C "$1" rev-parse "u-$i")" = "$exp" ] && n=$((n + 1))
	done
	echo "$n"
}

# --- reftable runs -------------------------------------------------------------
# RQ_REF_FORMAT=reftable (tests/CMakeLists.txt registers the ref tests
# named in RQ_REFTABLE_TESTS a second time so, as <test>@reftable): every
# repository a test makes with `git init` keeps its refs in reftables. git
# is upstream's 2.55 for the whole test (the installed git cannot read
# them), first in PATH, and new repositories default to reftable
# (GIT_DEFAULT_REF_FORMAT). REFTABLE is 1 then, for the few checks that
# differ; without upstream git such a run checks nothing (a notice).
REFTABLE=0
if [ "${RQ_REF_FORMAT:-files}" = reftable ]; then
	upstream_git || finish
	mkdir -p "$T/bin" "$T/templates"
	# the programs git runs for a local clone or push, upstream's too
	for p in git git-upload-pack git-receive-pack git-upload-archive; do
		ln -s "$UPSTREAM_GIT" "$T/bin/$p"
	done
	export PATH="$T/bin:$PATH" GIT_EXEC_PATH="$T/bin" GIT_DEFAULT_REF_FORMAT=reftable \
		GIT_TEMPLATE_DIR="$T/templates"
	# no maintenance in the background (upstream's runs after a commit or
	# an update-ref): it would take locks and compact tables meanwhile
	export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=maintenance.auto GIT_CONFIG_VALUE_0=false \
		GIT_CONFIG_KEY_1=gc.auto GIT_CONFIG_VALUE_1=0
	REFTABLE=1
fi
# check_ref_format repo: on a reftable run, a check that repo keeps its
# refs in reftables; on a SHA-256 run, that its objects are SHA-256 (the
# run tests what it says it tests)
check_ref_format() {
	[ $REFTABLE = 0 ] || check_eq "$1: refs in reftables" reftable "$(git -C "$1" rev-parse --show-ref-format)"
	[ $SHA256 = 0 ] || check_object_format "$1"
}
# locks_of n: how many lock files an update of n refs holds (files: one a
# ref; reftable: tables.list.lock alone)
locks_of() { if [ $REFTABLE = 1 ]; then echo 1; else echo "$1"; fi; }
# foreign_lock repo ref: the lock file another program updating ref would
# hold (made empty, as git makes it)
foreign_lock() {
	if [ $REFTABLE = 1 ]; then echo "$1/.git/reftable/tables.list.lock"; else echo "$1/.git/$2.lock"; fi
}
# refs_consistent repo: git fsck clean; on reftable also `git refs verify`
# clean and every file of reftable/ tables.list or a table it names (no
# table written and never published, no temporary file)
refs_consistent() {
	fsck_ok "$1" || return 1
	[ $REFTABLE = 1 ] || return 0
	git -C "$1" refs verify || return 1
	local dir=$1/.git/reftable f
	for f in "$dir"/*; do
		[ "${f##*/}" = tables.list ] || grep -qx "${f##*/}" "$dir/tables.list" || {
			echo "refs_consistent: '${f##*/}' is not in tables.list" >&2
			return 1
		}
	done
}
# ref_state repo refs...: the refs and their reflogs as git shows them
ref_state() {
	local repo=$1 r
	shift
	git -C "$repo" for-each-ref --format='%(refname) %(objectname)'
	for r in "$@"; do
		git -C "$repo" reflog show --date=raw --format="$r %H %gn %ge %gd %gs" "$r" 2>&1
	done
}
