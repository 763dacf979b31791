#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile object stores (issue 33, points 8, 9, 11, 14, 18): blobs of
# gigabytes under a memory limit, alternates that fan out, loop and nest,
# pack indexes that lie. A blob too large for the job's memory is
# out_of_memory, never corrupt_object; a valid blob of more than 4 GiB is
# read as git reads it; alternates are read as git 2.55 reads them (the
# same result as upstream's git replay, each directory once, git's depth);
# an index that maps an id to another object's entry, or whose fan-out
# goes down, is corrupt_object, never a replay on the wrong content.
# Blobs of gigabytes are made as a few megabytes of zlib stream
# (zero_blob.py), never written out. Runs under ASan.
. "$(dirname "$0")/../lib.sh"
upstream_git || {
	not_ok "upstream git 2.55 (RQ_UPSTREAM_GIT) is found"
	finish
}
ZB="python3 $(dirname "$0")/zero_blob.py"
ROOT=$T/root
mkdir -p "$ROOT"

# oracle "what" dir args...: `git replay --ref-action=print args` by
# upstream and by replayq in dir: the same stdout and exit status (a hang
# was the bug: the guard only keeps a broken build from stalling the
# suite); UO is upstream's stdout
oracle() {
	local what=$1 dir=$2 ro urc rrc
	shift 2
	UO=$(cd "$dir" && "$UPSTREAM_GIT" replay --ref-action=print "$@" 2>"$T/u.err")
	urc=$?
	ro=$(cd "$dir" && timeout -s KILL 120 "$REPLAYQ" replay --ref-action=print "$@" 2>"$T/r.err")
	rrc=$?
	cat "$T/r.err" >>"$T/run.err"
	check_eq "$what: stdout as upstream's" "$UO" "$ro"
	check_eq "$what: exit status as upstream's" "$urc" "$rrc"
}
# job repo [run options...]: a print job (main..topic onto main) through
# `replayq run` (RUN: the binary, default $REPLAYQ) under $ROOT; CODE is
# its error code or status, MSG its message (stderr: JOB_ERR, default
# $T/run.err)
job() {
	local repo=$1
	shift
	OUT=$(printf '{"v":1,"id":"j","repo":"%s","mode":"onto","target":"main","revisions":["main..topic"],"timeout_ms":60000}\n' "$repo" |
		timeout -s KILL 120 "${RUN:-$REPLAYQ}" run --repo-root="$ROOT" "$@" 2>>"${JOB_ERR:-$T/run.err}")
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	MSG=$(jq -r '.error.message // ""' <<<"$OUT")
}

# ---------------------------------------------------------------------------
section "8, 9. blobs of 2 and 4.1 GiB under --memory-limit=256"
# big_repo dir loose|pack size: base has big.bin; main and topic change it,
# topic to <size> zeros (stored as said): a replay merges its content
big_repo() {
	local r=$1 id
	git init -q -b main "$r"
	echo base >"$r/big.bin"
	git -C "$r" add big.bin && git -C "$r" commit -qm base
	id=$($ZB "$2" "$r/.git/objects" "$3")
	git -C "$r" update-index --cacheinfo "100644,$id,big.bin"
	git -C "$r" commit -qm big && git -C "$r" branch topic && git -C "$r" reset -q --hard HEAD~1
	echo main >"$r/big.bin" && git -C "$r" commit -qam main
}
G=$((1 << 30))
big_repo "$ROOT/l2" loose $((2 * G))
big_repo "$ROOT/p2" pack $((2 * G))
big_repo "$ROOT/l4" loose $((4 * G + G / 8))
check_eq "the loose 4.1 GiB blob is valid for git" $((4 * G + G / 8)) "$(git -C "$ROOT/l4" cat-file -s topic:big.bin)"
# The memory limit holds a job's private memory to twice the limit
# (RLIMIT_DATA) in a release build; under ASan (whose shadow memory counts
# as data) the same refusal is had from ASan's allocator
for repo in l2 p2 l4; do
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=1024 \
		JOB_ERR=$T/alloc.err job $repo --memory-limit=256
	check_eq "$repo: a blob larger than the memory allows is out_of_memory" out_of_memory "$CODE"
	check_contains "$repo: ... when it is read" "cannot read blob: out of memory" "$MSG"
	if [ -n "${RQ_RELEASE_REPLAYQ:-}" ]; then
		RUN=$RQ_RELEASE_REPLAYQ job $repo --memory-limit=256
		check_eq "$repo: release build: out_of_memory" out_of_memory "$CODE"
	fi
done
# (ASan says when it refuses an allocation: that is no report)
grep -v 'failed to allocate' "$T/alloc.err" >>"$T/run.err"
# its size is asked without its content (a rename candidate): the header
# of a loose object of 4.1 GiB is read as git reads it, whatever the limit
R=$ROOT/r4
git init -q -b main "$R"
printf 'a\nb\nc\n' >"$R/a.txt"
git -C "$R" add a.txt && git -C "$R" commit -qm base
git -C "$R" rm -q a.txt
git -C "$R" update-index --add --cacheinfo "100644,$($ZB loose "$R/.git/objects" $((4 * G + G / 8))),big.bin"
git -C "$R" commit -qm big && git -C "$R" branch topic && git -C "$R" reset -q --hard HEAD~1
echo more >>"$R/a.txt" && git -C "$R" commit -qam main
oracle "a 4.1 GiB rename candidate" "$R" --onto main main..topic
job r4 --memory-limit=256
check_eq "... a job under --memory-limit=256: the conflict" conflict "$CODE"

# ---------------------------------------------------------------------------
section "11. alternates that fan out: 4 levels of 40, all inside the root"
make_repo "$ROOT/fan" f
for l in 1 2 3 4; do
	for d in $(seq 1 40); do
		mkdir -p "$ROOT/lv$l/d$d/info"
		[ $l = 4 ] || seq 1 40 | sed "s|^|$ROOT/lv$((l + 1))/d|" >"$ROOT/lv$l/d$d/info/alternates"
	done
done
seq 1 40 | sed "s|^|$ROOT/lv1/d|" >"$ROOT/fan/.git/objects/info/alternates"
oracle "a fan-out of 40^4 paths to 160 directories" "$ROOT/fan" --onto main main..topic
check_contains "... upstream replays it" "update refs/heads/topic" "$UO"
job fan
check_eq "... a job: ok (each directory read once, not at its deadline)" ok "$CODE"

# ---------------------------------------------------------------------------
section "14. alternates that loop, and nest deeper than git reads"
# a (a clone that borrows) -> b.git -> a: git reads each once
git init -q --bare -b main "$ROOT/b.git"
make_repo "$T/src" loop
git -C "$T/src" push -q "$ROOT/b.git" main topic
git clone -q --shared "$ROOT/b.git" "$ROOT/a" 2>/dev/null
git -C "$ROOT/a" branch -q topic origin/topic
commit_file "$ROOT/a" a.txt "a moves on" "a moves on"
echo "$ROOT/a/.git/objects" >"$ROOT/b.git/objects/info/alternates"
check "a borrows from b.git" test -s "$ROOT/a/.git/objects/info/alternates"
oracle "a loop a -> b -> a" "$ROOT/a" --onto main main..topic
check_contains "... upstream replays it" "update refs/heads/topic" "$UO"
job a
check_eq "... a job: ok" ok "$CODE"
# a chain c1 -> ... -> c7: git reads an alternates file five levels below
# the repository's at most, so c6 is read and c7 is not; the objects are in
# c6, then in c7
mkdir -p "$ROOT/chain/.git"
cp -a "$T/src/.git/HEAD" "$T/src/.git/config" "$T/src/.git/refs" "$ROOT/chain/.git/"
git -C "$T/src" repack -adq
for c in 1 2 3 4 5 6 7; do mkdir -p "$ROOT/c$c/info" "$ROOT/c$c/pack"; done
mkdir -p "$ROOT/chain/.git/objects/info"
echo "$ROOT/c1" >"$ROOT/chain/.git/objects/info/alternates"
for c in 1 2 3 4 5 6; do echo "$ROOT/c$((c + 1))" >"$ROOT/c$c/info/alternates"; done
cp "$T/src/.git/objects/pack/"* "$ROOT/c6/pack/"
oracle "objects six alternates deep" "$ROOT/chain" --onto main main..topic
check_contains "... upstream replays it" "update refs/heads/topic" "$UO"
job chain
check_eq "... a job: ok" ok "$CODE"
mv "$ROOT/c6/pack/"* "$ROOT/c7/pack/"
oracle "objects seven alternates deep (beyond git's depth)" "$ROOT/chain" --onto main main..topic
check_eq "... upstream does not find them" "" "$UO"

# ---------------------------------------------------------------------------
section "18. indexes that lie"
# fanout_break file at id: the fan-out of 256 counts at offset `at` of the
# file made to go down where the lookup of id looks, so that id is not
# found by it; the file's trailing checksum made anew
FANOUT_BREAK='
def fanout_break(b, at, id):
    t = bytes.fromhex(id)[0]
    count = lambda k: struct.unpack(">I", b[at + 4 * k:at + 4 * k + 4])[0]
    if t == 0:  # above the total: a lookup of t finds nothing
        b[at:at + 4] = struct.pack(">I", count(255) + 1)
    else:  # the count before t above t: nothing between them
        b[at + 4 * (t - 1):at + 4 * t] = struct.pack(">I", count(t) + 1)
    b[-20:] = hashlib.sha1(b[:-20]).digest()
'
# idx_edit file swap ID1 ID2 | fanout ID: the pack index rewritten with
# the entries of two ids trading their offsets and CRCs, or with its
# fan-out broken for ID; its trailing checksum made anew, so that it is
# consistent with itself and with its pack
idx_edit() {
	python3 - "$@" <<PY
import hashlib, struct, sys
$FANOUT_BREAK
path, what = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
nr = struct.unpack(">I", b[8 + 255 * 4:8 + 256 * 4])[0]
ids, crcs = 8 + 1024, 8 + 1024 + 20 * nr
offs = crcs + 4 * nr
if what == "swap":
    want = [bytes.fromhex(h) for h in sys.argv[3:5]]
    i, j = (next(k for k in range(nr) if b[ids + 20 * k:ids + 20 * k + 20] == w) for w in want)
    for base in (crcs, offs):
        x, y = base + 4 * i, base + 4 * j
        b[x:x + 4], b[y:y + 4] = b[y:y + 4], b[x:x + 4]
else:
    fanout_break(b, 8, sys.argv[3])
b[-20:] = hashlib.sha1(b[:-20]).digest()
open(path, "wb").write(b)
PY
}
# lie_repo dir: f.txt of ten lines; main changes line 1, topic line 10 and
# `other` line 5 (each merges cleanly), packed
lie_repo() {
	git init -q -b main "$1"
	seq 1 10 >"$1/f.txt"
	git -C "$1" add f.txt && git -C "$1" commit -qm base
	git -C "$1" checkout -qb topic && sed -i 10s/.*/ten/ "$1/f.txt" && git -C "$1" commit -qam topic
	git -C "$1" checkout -qb other main && sed -i 5s/.*/five/ "$1/f.txt" && git -C "$1" commit -qam other
	git -C "$1" checkout -q main && sed -i 1s/.*/one/ "$1/f.txt" && git -C "$1" commit -qam main
	git -C "$1" repack -adq
}
R=$ROOT/swap
lie_repo "$R"
idx=$(ls "$R"/.git/objects/pack/*.idx)
chmod u+w "$idx"
idx_edit "$idx" swap "$(git -C "$R" rev-parse topic:f.txt)" "$(git -C "$R" rev-parse other:f.txt)"
check_contains "git reads topic's f.txt as other's" five "$(git -C "$R" show topic:f.txt)"
job swap
check_eq "an index that swaps two blobs: corrupt_object, not a replay on the wrong one" corrupt_object "$CODE"
check_contains "... naming the object" "packed object $(git -C "$R" rev-parse topic:f.txt)" "$MSG"
run_rq -C "$R" replay --onto main main..topic
check_eq "... replay: exit 128" 128 "$RC"
check_contains "... replay: says so" "is corrupt" "$ERR"

R=$ROOT/fanout
lie_repo "$R"
idx=$(ls "$R"/.git/objects/pack/*.idx)
chmod u+w "$idx"
idx_edit "$idx" fanout "$(git -C "$R" rev-parse topic)"
job fanout
check_eq "a fan-out that goes down: corrupt_object" corrupt_object "$CODE"
check_contains "... in git's words, naming the index" "non-monotonic index fanout/.git/objects/pack/pack-" "$MSG"

# git's multi-pack-index with such a fan-out is not used: the packs are
# read by their own indexes (git 2.39 does so, saying "oid fanout out of
# order"; git 2.55 stops: "multi-pack-index required OID fanout chunk
# missing or corrupted"): the result upstream gives without it
R=$ROOT/midx
lie_repo "$R"
oracle "the repository before its multi-pack-index" "$R" --onto main main..topic
git -C "$R" multi-pack-index write
midx=$R/.git/objects/pack/multi-pack-index
chmod u+w "$midx"
python3 - "$midx" "$(git -C "$R" rev-parse topic)" <<PY
import hashlib, struct, sys
$FANOUT_BREAK
b = bytearray(open(sys.argv[1], "rb").read())
row = 12
while b[row:row + 4] != b"OIDF":
    row += 12
fanout_break(b, struct.unpack(">Q", b[row + 4:row + 12])[0], sys.argv[2])
open(sys.argv[1], "wb").write(b)
PY
run_rq -C "$R" replay --ref-action=print --onto main main..topic
check_eq "a multi-pack-index whose fan-out goes down: the packs read without it" "$UO" "$OUT"
job midx
check_eq "... a job: ok" ok "$CODE"

check "no sanitizer report" sanitizer_clean "$T/run.err"
finish
