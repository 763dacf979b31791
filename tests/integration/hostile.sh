#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile repositories: whatever a repository's files say, a job reads and
# writes only inside the worker's root (bad_repo otherwise, nothing written
# anywhere); a damaged object is a prompt corrupt_object naming it, never a
# hang and never a replay on wrong content. Through `replayq run` (the
# worker's pool, without Redis) and `replayq replay`. Runs under ASan.
. "$(dirname "$0")/../lib.sh"
ROOT=$T/root
OUTSIDE=$T/outside
mkdir -p "$ROOT" "$OUTSIDE"

# the outside repository a hostile one points at: nothing may change in it
make_repo "$OUTSIDE/victim" v
check_ref_format "$OUTSIDE/victim"
snapshot() { (cd "$1" && find . -path ./.git/index -prune -o -type f -print0 | sort -z | xargs -0 sha1sum); }
VICTIM_BEFORE=$(snapshot "$OUTSIDE/victim")
victim_untouched() {
	check_eq "$1: nothing outside the root changed" "$VICTIM_BEFORE" "$(snapshot "$OUTSIDE/victim")"
}

# job id repo [extra fields]: one update job through replayq run
run_job() {
	local id=$1 repo=$2 extra=${3:-}
	shift 2
	[ $# -eq 0 ] || shift
	OUT=$(printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["main..topic"],"ref_action":"update"%s}\n' \
		"$id" "$repo" "$extra" | timeout -s KILL 120 "$REPLAYQ" run --repo-root="$ROOT" "$@" 2>>"$T/run.err")
	RC=$?
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	MSG=$(jq -r '.error.message // ""' <<<"$OUT")
}
# replay_in dir: `replayq replay --onto main main..topic` there (a hang was a
# bug: the guard only keeps a broken build from stalling the suite)
replay_in() {
	OUT=$(cd "$1" && timeout -s KILL 120 "$REPLAYQ" replay --onto main main..topic 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
	cat "$T/stderr" >>"$T/run.err"
}
refuse() { # what id repo: the job is refused as bad_repo, outside untouched
	run_job "$2" "$3"
	check_eq "$1: bad_repo" bad_repo "$CODE"
	check_eq "$1: message names no worker path" "" "$(grep -F "$ROOT" <<<"$MSG")"
	victim_untouched "$1"
}

# --- 1. paths outside the root ----------------------------------------------
mkdir -p "$ROOT/gitfile"
echo "gitdir: $OUTSIDE/victim/.git" >"$ROOT/gitfile/.git"
refuse ".git file to outside" gitfile gitfile

ln -s "$OUTSIDE/victim" "$ROOT/dirlink"
refuse "repository symlinked outside" dirlink dirlink

mkdir -p "$ROOT/common.git"
cp -r "$OUTSIDE/victim/.git/HEAD" "$ROOT/common.git/"
echo "$OUTSIDE/victim/.git" >"$ROOT/common.git/commondir"
refuse "commondir outside" commondir common.git

make_repo "$ROOT/objlink" o
rm -rf "$ROOT/objlink/.git/objects"
ln -s "$OUTSIDE/victim/.git/objects" "$ROOT/objlink/.git/objects"
refuse "objects/ symlinked outside" objlink objlink

make_repo "$ROOT/headslink" h
rm -rf "$ROOT/headslink/.git/refs/heads"
ln -s "$OUTSIDE/victim/.git/refs/heads" "$ROOT/headslink/.git/refs/heads"
refuse "refs/heads/ symlinked outside" headslink headslink

make_repo "$ROOT/reflink" r
git -C "$ROOT/reflink" rev-parse topic >"$OUTSIDE/target-file"
rm "$ROOT/reflink/.git/refs/heads/topic"
ln -s "$OUTSIDE/target-file" "$ROOT/reflink/.git/refs/heads/topic"
before=$(cat "$OUTSIDE/target-file")
refuse "loose ref symlinked to a file outside" reflink reflink
check_eq "the file a ref links to is not written" "$before" "$(cat "$OUTSIDE/target-file")"
check "no lock beside it" test ! -e "$OUTSIDE/target-file.lock"

make_repo "$ROOT/packlink" p
git -C "$ROOT/packlink" repack -adq
for f in "$ROOT"/packlink/.git/objects/pack/pack-*; do
	mv "$f" "$OUTSIDE/"
	ln -s "$OUTSIDE/$(basename "$f")" "$f"
done
refuse "pack files symlinked outside" packlink packlink

make_repo "$ROOT/incl" i
echo "[user] name = Outside" >"$OUTSIDE/included.cfg"
printf '[include]\n\tpath = %s\n' "$OUTSIDE/included.cfg" >>"$ROOT/incl/.git/config"
refuse "config [include] outside" incl incl
make_repo "$ROOT/inclif" i2
printf '[includeIf "gitdir:/"]\n\tpath = ../../../outside/included.cfg\n' >>"$ROOT/inclif/.git/config"
refuse "config [includeIf] outside, relative" inclif inclif

# a symbolic link inside the root is no way out, but a ref is still never
# written through one (libgit2 would; git replaces the link)
make_repo "$ROOT/inlink" l
git -C "$ROOT/inlink" rev-parse topic >"$ROOT/inlink/.git/topic-file"
rm "$ROOT/inlink/.git/refs/heads/topic"
ln -s ../../topic-file "$ROOT/inlink/.git/refs/heads/topic"
run_job inlink inlink
check_eq "ref symlinked inside the root: bad_repo" bad_repo "$CODE"
check_contains "... saying why" "symbolic link" "$MSG"
check "... and the link is still a link" test -L "$ROOT/inlink/.git/refs/heads/topic"
replay_in "$ROOT/inlink"
check_eq "replay: a ref behind a symbolic link is not updated (exit 128)" 128 "$RC"
check_contains "replay: ... saying why" "symbolic link" "$ERR"
check_eq "replay: ... the file it links to is unchanged" "$(git -C "$ROOT/inlink" rev-parse topic)" "$(cat "$ROOT/inlink/.git/topic-file")"

# alternates: outside the root refused by default, followed with --alternates=any
git init -q --bare "$OUTSIDE/shared.git"
git -C "$OUTSIDE/victim" push -q "$OUTSIDE/shared.git" main topic
git clone -q --shared "$OUTSIDE/shared.git" "$ROOT/fork" 2>/dev/null
git -C "$ROOT/fork" branch -q topic origin/topic
git -C "$ROOT/fork" checkout -q main
commit_file "$ROOT/fork" fork.txt "fork" "fork commit"
check "the fork borrows objects through alternates" test -s "$ROOT/fork/.git/objects/info/alternates"
run_job alt fork
check_eq "alternates outside the root: bad_repo" bad_repo "$CODE"
check_contains "... naming the option" "--alternates" "$MSG"
run_job alt-any fork "" --alternates=any
check_eq "--alternates=any: the job runs" ok "$CODE"
check_eq "--alternates=any: topic moved onto the fork's main" "$(git -C "$ROOT/fork" rev-parse main)" "$(git -C "$ROOT/fork" rev-parse topic~2)"
run_rq run --repo-root="$ROOT" --alternates=sometimes </dev/null
check_eq "--alternates takes root or any" 129 "$RC"

# a repository inside the root is fine, and its job moves its refs
make_repo "$ROOT/good" g
run_job good good
check_eq "a plain repository under the root: ok" ok "$CODE"
victim_untouched "all of the above"

# refs a job may not write: refs/HEAD (every HEAD would then be
# ambiguous), branches git would refuse as branch names
for r in refs/HEAD refs/heads/HEAD refs/heads/-x; do
	run_job "ref-$r" good ",\"ref\":\"$r\""
	check_eq "ref $r: bad_ref" bad_ref "$CODE"
	check "ref $r: not created" test -z "$(git -C "$ROOT/good" for-each-ref "$r")"
done
run_job ref-ok good ',"ref":"refs/heads/fine"'
check_eq "a plain branch as ref: ok" ok "$CODE"

# --- 2, 3. damaged objects ---------------------------------------------------
lo() { echo "$1/.git/objects/${2:0:2}/${2:2}"; }
# damage kind repo: break one object of the repository as named
damage() {
	local r=$2 t tt t1t f p i s
	t=$(git -C "$r" rev-parse topic)
	tt=$(git -C "$r" rev-parse topic^{tree})
	t1t=$(git -C "$r" rev-parse topic~1^{tree})
	case $1 in
	truncated) f=$(lo "$r" "$t") && chmod u+w "$f" && head -c 20 "$f" >"$T/x" && mv "$T/x" "$f" ;;
	empty) f=$(lo "$r" "$t") && chmod u+w "$f" && : >"$f" ;;
	garbage) f=$(lo "$r" "$t") && chmod u+w "$f" && head -c 300 /dev/urandom >"$f" ;;
	other-tree) f=$(lo "$r" "$tt") && chmod u+w "$f" && cp "$(lo "$r" "$t1t")" "$f" ;;
	wrong-type) f=$(lo "$r" "$t") && chmod u+w "$f" && cp "$(lo "$r" "$(git -C "$r" rev-parse topic:t2.txt)")" "$f" ;;
	pack-* | index-truncated)
		git -C "$r" repack -adq
		p=$(ls "$r"/.git/objects/pack/*.pack) && i=${p%.pack}.idx && chmod u+w "$p" "$i"
		case $1 in
		pack-truncated) s=$(stat -c %s "$p") && head -c $((s - HEXSZ / 2 - 20)) "$p" >"$T/x" && mv "$T/x" "$p" ;;
		index-truncated) s=$(stat -c %s "$i") && head -c $((s / 2)) "$i" >"$T/x" && mv "$T/x" "$i" ;;
		pack-flipped) s=$(stat -c %s "$p") && printf '\377\377\377\377' | dd of="$p" bs=1 seek=$((s / 2)) conv=notrunc 2>/dev/null ;;
		esac
		;;
	esac
}
for kind in truncated empty garbage other-tree wrong-type pack-truncated index-truncated pack-flipped; do
	make_repo "$ROOT/d-$kind" "$kind"
	damage "$kind" "$ROOT/d-$kind"
	refs_before=$(git -C "$ROOT/d-$kind" for-each-ref --format='%(objectname) %(refname)' 2>/dev/null)
	run_job "d-$kind" "d-$kind"
	check_eq "$kind: corrupt_object" corrupt_object "$CODE"
	case $kind in
	pack-truncated | index-truncated) check_contains "$kind: names the pack" "d-$kind/.git/objects/pack/pack-" "$MSG" ;;
	*) check_contains "$kind: names the object" "d-$kind/.git/objects/" "$MSG" ;;
	esac
	check_eq "$kind: refs unchanged" "$refs_before" "$(git -C "$ROOT/d-$kind" for-each-ref --format='%(objectname) %(refname)' 2>/dev/null)"
	check "$kind: nothing left behind" no_litter "$ROOT/d-$kind"
	replay_in "$ROOT/d-$kind"
	check_eq "$kind: replay exits 128" 128 "$RC"
	case $kind in
	pack-truncated) check_contains "$kind: replay says so" "does not match index" "$ERR" ;;
	index-truncated) check_contains "$kind: replay says so" "is too small" "$ERR" ;;
	*) check_contains "$kind: replay says it is corrupt" "is corrupt" "$ERR" ;;
	esac
done
# through a worker: corrupt_object is final, not retried (it used to hang
# until timeout_ms, three times)
export REPLAYQ_QUEUE=hostile
start_redis
start_worker wh --repo-root="$ROOT" --jobs=1 --max-deliveries=3
make_repo "$ROOT/d-worker" w
damage truncated "$ROOT/d-worker"
OUT=$(printf '{"v":1,"id":"dw","repo":"d-worker","mode":"onto","target":"main","revisions":["main..topic"]}\n' |
	timeout -s KILL 120 "$REPLAYQ" submit --wait=60 2>>"$T/run.err")
check_eq "worker: corrupt_object at the first delivery" "corrupt_object 1" "$(jq -r '"\(.error.code) \(.attempt)"' <<<"$OUT")"
check_eq "worker: not retried" "" "$(rcli HGET 'replayq:{hostile}:stats' retried)"
check_workers_stop "$WORKER_PID"
cat "$T/wh.log" >>"$T/run.err"

# git's own words for the truncated loose object of the report
replay_in "$ROOT/d-truncated"
t=$(git -C "$ROOT/d-truncated" rev-parse topic)
check_eq "truncated: git's message" "fatal: loose object $t (stored in .git/objects/${t:0:2}/${t:2}) is corrupt" "$ERR"

# a tree with a name twice: refused as git refuses it (it went to libgit2's
# merge, which leaked)
make_repo "$ROOT/dup" dup
a=$(git -C "$ROOT/dup" rev-parse topic:t1.txt)
b=$(git -C "$ROOT/dup" rev-parse topic:t2.txt)
dt=$(printf '100644 blob %s\ta.txt\n100644 blob %s\tt2.txt\n100644 blob %s\tt2.txt\n' "$a" "$b" "$a" | git -C "$ROOT/dup" mktree)
git -C "$ROOT/dup" update-ref refs/heads/topic "$(git -C "$ROOT/dup" commit-tree "$dt" -p topic -m dup)"
run_job dup dup
check_eq "duplicate tree entries: corrupt_object" corrupt_object "$CODE"
replay_in "$ROOT/dup"
check_eq "duplicate tree entries: replay exits 128" 128 "$RC"
check_eq "duplicate tree entries: git's words" "fatal: tree has duplicate entries for 't2.txt'" "$ERR"

# a job killed for memory once its temporary objects exist leaves none
make_repo "$ROOT/fat" fat
OUT=$(printf '{"v":1,"id":"fat","repo":"fat","mode":"onto","target":"main","revisions":["main..topic"]}\n' |
	REPLAYQ_TEST_ALLOC_AT=pick:384 timeout -s KILL 120 "$REPLAYQ" run --repo-root="$ROOT" --memory-limit=256 2>>"$T/run.err")
check_eq "memory kill: out_of_memory" out_of_memory "$(jq -r .error.code <<<"$OUT")"
check "memory kill: no temporary object directory left" no_litter "$ROOT/fat"

check "no sanitizer report" sanitizer_clean "$T/run.err"
finish
