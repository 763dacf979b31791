#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile repositories, round 3: what libgit2 reads while it opens a
# repository is read here first the way libgit2 reads it (a commondir's
# whitespace and relative paths, a `.git` file's "gitdir:", a worktree's
# `gitdir` file, HEAD); a job's directories stay inside its own repository
# (not another one under the root) unless the operator says so; nothing a
# job reads can block it (a FIFO anywhere libgit2 or replayq reads: refs,
# reflogs, packed-refs, *_HEAD, packs, loose objects, alternates, reftables)
# and no reftable is read or written through a symbolic link; a commit
# encoding cannot inject a header. Each refused job is bad_repo at once
# (the jobs' deadline of 4 s is only there to end a hang of a broken
# build), opens nothing outside the root (inotify watches every directory
# there: watch_opens.py) and changes nothing. Jobs through `replayq run`.
. "$(dirname "$0")/../lib.sh"
require jq python3
ROOT=$T/root
OUTSIDE=$T/outside
mkdir -p "$ROOT" "$OUTSIDE/cwd"
mkfifo "$OUTSIDE/fifo"
WATCH="python3 $(cd "$(dirname "$0")" && pwd)/watch_opens.py"

make_repo "$T/template" t
git clone -q --bare "$T/template" "$T/bare"
fresh() { # name [bare]: a copy of the template under the root
	rm -rf "${ROOT:?}/$1"
	if [ "${2:-}" = bare ]; then cp -a "$T/bare" "$ROOT/$1"; else cp -a "$T/template" "$ROOT/$1"; fi
}
# run_job id repo [extra fields [options]]: an update job (onto main,
# $REVS, default main..topic) through replayq run in $RUN_DIR (default
# $T); CODE is its status or error code, MSG its message, OPENED what was
# opened outside the root meanwhile.
run_job() {
	local id=$1 repo=$2 extra=${3:-}
	shift 2
	[ $# -eq 0 ] || shift
	OUT=$(cd "${RUN_DIR:-$T}" && printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["%s"],"ref_action":"update","timeout_ms":4000%s}\n' \
		"$id" "$repo" "${REVS:-main..topic}" "$extra" |
		$WATCH "$T/opened" "$OUTSIDE" -- timeout -s KILL 60 "$REPLAYQ" run --repo-root="$ROOT" "$@" 2>>"$T/run.err")
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	MSG=$(jq -r '.error.message // ""' <<<"$OUT")
	OPENED=$(cat "$T/opened")
}
refs_of() { git --git-dir="$1" for-each-ref --format='%(refname) %(objectname)'; }
# refuse what id repo [needle]: bad_repo (saying needle), nothing opened outside
refuse() {
	run_job "$2" "$3"
	check_eq "$1: bad_repo" bad_repo "$CODE"
	[ -z "${4:-}" ] || check_contains "$1: says why" "$4" "$MSG"
	check_eq "$1: nothing outside the root opened" "" "$OPENED"
}
# bare_shell dir: the files that make a directory a git directory for
# libgit2 (HEAD, objects/, refs/), nothing else
bare_shell() {
	mkdir -p "$1/objects" "$1/refs"
	echo "ref: refs/heads/main" >"$1/HEAD"
}

section "1. what libgit2 reads at open, read as it reads it"
# a commondir whose path ends in \v: libgit2 drops it (all whitespace), so
# it opens x/, whose config includes a FIFO outside
bare_shell "$ROOT/vt.git"
fresh vt.git/x bare
printf '[include]\n\tpath = %s\n' "$OUTSIDE/fifo" >>"$ROOT/vt.git/x/config"
printf '%s\v' "$ROOT/vt.git/x" >"$ROOT/vt.git/commondir"
refuse "commondir ending in \\v" vt vt.git "commondir"
# a relative commondir without ./: libgit2 takes it from the current
# directory, git from the git directory
bare_shell "$ROOT/rel.git"
echo x >"$ROOT/rel.git/commondir"
git clone -q --bare "$T/template" "$OUTSIDE/cwd/x"
printf '[include]\n\tpath = %s\n' "$OUTSIDE/fifo" >>"$OUTSIDE/cwd/x/config"
RUN_DIR=$OUTSIDE/cwd refuse "commondir relative to the current directory" rel rel.git "relative"
# "gitdir:" without a space (libgit2 takes it) to a git directory outside
# whose gitdir file is a FIFO
git clone -q --bare "$T/template" "$OUTSIDE/orepo"
mkfifo "$OUTSIDE/orepo/gitdir"
mkdir -p "$ROOT/gdns"
echo "gitdir:$OUTSIDE/orepo" >"$ROOT/gdns/.git"
refuse "'.git' file with gitdir: and no space, outside" gdns gdns "outside"
# a linked worktree's gitdir file, read by libgit2 at open: a FIFO
fresh gdfifo.git bare
mkfifo "$ROOT/gdfifo.git/gitdir"
refuse "a gitdir file that is a FIFO" gdfifo gdfifo.git "gitdir"
# HEAD a link to another repository's HEAD, read at open for an
# includeIf onbranch
fresh headlink.git bare
echo "ref: refs/heads/main" >"$OUTSIDE/otherHEAD"
printf '[includeIf "onbranch:main"]\n\tpath = inc\n' >>"$ROOT/headlink.git/config"
: >"$ROOT/headlink.git/inc"
ln -sf "$OUTSIDE/otherHEAD" "$ROOT/headlink.git/HEAD"
refuse "HEAD a link outside, with includeIf onbranch" headlink headlink.git "HEAD"

section "5. a job's directories are its repository's"
fresh V.git bare
V_BEFORE=$(refs_of "$ROOT/V.git")
bare_shell "$ROOT/A.git"
echo "$ROOT/V.git" >"$ROOT/A.git/commondir"
refuse "commondir to another repository under the root" cv A.git "common directory"
mkdir -p "$ROOT/gf"
echo "gitdir: ../V.git" >"$ROOT/gf/.git"
refuse "'.git' file to another repository under the root" gf gf "git directory"
fresh objl.git bare
rm -rf "$ROOT/objl.git/objects"
ln -s ../V.git/objects "$ROOT/objl.git/objects"
refuse "objects/ a link to another repository's" objl objl.git "objects"
check_eq "... V.git's refs did not move" "$V_BEFORE" "$(refs_of "$ROOT/V.git")"
run_job cv-root A.git "" --repo-scope=root
check_eq "--repo-scope=root: a shared common directory is taken" ok "$CODE"
check "... and V.git's topic moved" test "$V_BEFORE" != "$(refs_of "$ROOT/V.git")"
# a linked worktree: named by its git directory, inside its repository
fresh wm.git bare
git --git-dir="$ROOT/wm.git" worktree add -q "$ROOT/wm-co" -b wtb topic 2>>"$T/run.err"
run_job wt wm.git/worktrees/wm-co
check_eq "a linked worktree named by its git directory: ok" ok "$CODE"
run_job wt-co wm-co
check_eq "... by its checkout (another directory): bad_repo" bad_repo "$CODE"

section "3. nothing blocks a job: no FIFO, no reftable through a link"
fresh pr
mkfifo "$ROOT/pr/.git/packed-refs"
refuse "packed-refs a FIFO" pr pr "packed-refs"
fresh lr
rm "$ROOT/lr/.git/refs/heads/topic" && mkfifo "$ROOT/lr/.git/refs/heads/topic"
refuse "a loose ref a FIFO" lr lr "refs/heads/topic"
fresh lrl
mkfifo "$ROOT/lrl/.git/x.fifo" && ln -s ../../x.fifo "$ROOT/lrl/.git/refs/heads/zz"
refuse "a loose ref a link to a FIFO inside" lrl lrl "refs/heads/zz"
fresh lg
rm "$ROOT/lg/.git/logs/refs/heads/topic" && mkfifo "$ROOT/lg/.git/logs/refs/heads/topic"
refuse "a reflog a FIFO" lg lg "logs/refs/heads/topic"
fresh fh
mkfifo "$ROOT/fh/.git/FETCH_HEAD"
REVS=main..FETCH_HEAD refuse "FETCH_HEAD a FIFO" fh fh "FETCH_HEAD"
fresh pk
git -C "$ROOT/pk" repack -adq
idx=$(ls "$ROOT"/pk/.git/objects/pack/*.idx)
rm "$idx" && mkfifo "$idx"
refuse "a pack index a FIFO" pk pk "objects/pack"
fresh lo
obj=$(git -C "$ROOT/lo" rev-parse topic)
f=$ROOT/lo/.git/objects/${obj:0:2}/${obj:2}
rm -f "$f" && mkfifo "$f"
run_job lo lo
check_eq "a loose object a FIFO: corrupt_object at once" corrupt_object "$CODE"
fresh al
mkfifo "$ROOT/al/.git/objects/info/alternates"
refuse "alternates a FIFO" al al "alternates"

if upstream_git; then
	GIT_TEST_REFTABLE_AUTOCOMPACTION=false "$UPSTREAM_GIT" clone -q --bare --ref-format=reftable \
		"$T/template" "$T/rt"
	rfresh() { rm -rf "${ROOT:?}/$1" && cp -a "$T/rt" "$ROOT/$1"; }
	rfresh rtl.git
	rm "$ROOT/rtl.git/reftable/tables.list" && mkfifo "$ROOT/rtl.git/reftable/tables.list"
	refuse "reftable: tables.list a FIFO" rtl rtl.git "tables.list"
	rfresh rtt.git
	t1=$(head -1 "$ROOT/rtt.git/reftable/tables.list")
	rm "$ROOT/rtt.git/reftable/$t1" && mkfifo "$ROOT/rtt.git/reftable/$t1"
	refuse "reftable: a table a FIFO" rtt rtt.git "$t1"
	rfresh rtk.git
	mv "$ROOT/rtk.git/reftable/tables.list" "$ROOT/rtk.git/list" && ln -s ../list "$ROOT/rtk.git/reftable/tables.list"
	refuse "reftable: tables.list a link inside" rtk rtk.git "tables.list"
	rfresh rtf.git
	git -C "$T/template" rev-parse topic >"$OUTSIDE/hex"
	ln -s "$OUTSIDE/hex" "$ROOT/rtf.git/FETCH_HEAD"
	REVS=main..FETCH_HEAD refuse "reftable: FETCH_HEAD a link outside" rtf rtf.git "FETCH_HEAD"
	# a reftable directory that is another repository's (under the root)
	rfresh RV.git
	rfresh rts.git
	rm -rf "$ROOT/rts.git/reftable" && ln -s ../RV.git/reftable "$ROOT/rts.git/reftable"
	RV_BEFORE=$(cat "$ROOT"/RV.git/reftable/tables.list)
	refuse "reftable/ a link to another repository's" rts rts.git "reftable"
	check_eq "... RV.git's tables unchanged" "$RV_BEFORE" "$(cat "$ROOT"/RV.git/reftable/tables.list)"
fi

section "7. no header through i18n.commitEncoding"
fresh enc
git -C "$ROOT/enc" config i18n.commitEncoding "$(printf 'ISO-8859-1\nevil yes')"
topic=$(git -C "$ROOT/enc" rev-parse topic)
refuse "a commit encoding with a newline" enc enc "i18n.commitEncoding"
check_eq "... topic not moved" "$topic" "$(git -C "$ROOT/enc" rev-parse topic)"
run_rq -C "$ROOT/enc" replay --onto main main..topic
check_eq "replay: the same encoding refused (exit 128)" 128 "$RC"
check_contains "... saying why" "i18n.commitEncoding" "$ERR"

finish
