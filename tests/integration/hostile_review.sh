#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile repositories, round 3: what libgit2 reads while it opens a
# repository is read here first the way libgit2 reads it (a commondir's
# whitespace and relative paths, a `.git` file's "gitdir:", a worktree's
# `gitdir` file, HEAD, the common directory a commondir names: refused
# alike whether it exists or not); a job's directories stay inside its
# own repository (not another one under the root) unless the operator
# says so; nothing a job reads can block it (a FIFO anywhere libgit2 or
# replayq reads: refs, reflogs, packed-refs, *_HEAD, packs, loose objects,
# alternates, reftables) and no reftable is read or written through a
# symbolic link; a commit encoding cannot inject a header; a remerge's
# inner merges are bounded (a 'merge bases' conflict, valid by
# docs/schema). Each refused job is bad_repo at once (the jobs' deadline
# of 4 s is only there to end a hang of a broken build), opens nothing
# outside the root (inotify watches every directory there:
# watch_opens.py) and changes nothing. Jobs through `replayq run`.
. "$(dirname "$0")/../lib.sh"
require jq python3
ROOT=$T/root
OUTSIDE=$T/outside
mkdir -p "$ROOT" "$OUTSIDE/cwd"
mkfifo "$OUTSIDE/fifo"
# (the system's python3 when there is one: a version manager's shim costs
# tenths of a second a run)
PY=$(command -v /usr/bin/python3 || command -v python3)
WATCH="$PY $(cd "$(dirname "$0")" && pwd)/watch_opens.py"

make_repo "$T/template" t
git clone -q --bare "$T/template" "$T/bare"
fresh() { # name [bare]: a copy of the template under the root
	rm -rf "${ROOT:?}/$1"
	if [ "${2:-}" = bare ]; then cp -a "$T/bare" "$ROOT/$1"; else cp -a "$T/template" "$ROOT/$1"; fi
}
# expect what id repo code [needle [revisions]]: an update job (onto main,
# revisions main..topic) queued for run_jobs, which expects its result
# code (or status) to be code, its message to hold needle.
expect() {
	printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["%s"],"ref_action":"update","timeout_ms":4000}\n' \
		"$2" "$3" "${6:-main..topic}" >>"$T/jobs"
	printf '%s|%s|%s|%s\n' "$2" "$4" "${5:-}" "$1" >>"$T/expected"
}
refuse() { expect "$1" "$2" "$3" bad_repo "${4:-}" "${5:-}"; } # what id repo [needle [revisions]]
# run_jobs [options]: the jobs queued, at once through one replayq run (from
# $OUTSIDE/cwd, which a job must never take for anything), each checked;
# nothing outside the root may be opened meanwhile
run_jobs() {
	local id code needle what out
	(cd "$OUTSIDE/cwd" && $WATCH "$T/opened" "$OUTSIDE" -- timeout -s KILL 120 "$REPLAYQ" run \
		--repo-root="$ROOT" --jobs=2 "$@" <"$T/jobs" >"$T/results" 2>>"$T/run.err")
	while IFS='|' read -r id code needle what; do
		out=$(jq -c --arg id "$id" 'select(.id == $id)' "$T/results")
		check_eq "$what: $code" "$code" "$(jq -r '.error.code // .status' <<<"$out")"
		[ -z "$needle" ] || check_contains "$what: says why" "$needle" "$(jq -r '.error.message // ""' <<<"$out")"
	done <"$T/expected"
	check_eq "$(wc -l <"$T/expected") jobs: nothing outside the root opened" "" "$(cat "$T/opened")"
	rm -f "$T/jobs" "$T/expected"
}
# run_job id repo [options]: one job (as expect), now; CODE its result code
run_job() {
	CODE=$(printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["main..topic"],"ref_action":"update"}\n' "$1" "$2" |
		timeout -s KILL 60 "$REPLAYQ" run --repo-root="$ROOT" "${@:3}" 2>>"$T/run.err" | jq -r '.error.code // .status')
}
# replay_in dir [revisions]: `replayq replay --onto main` there (no root);
# RC its status (a hang was a bug: the guard ends a broken build's), ERR
# its standard error, OPENED what it opened outside the root
replay_in() {
	(cd "$1" && $WATCH "$T/opened" "$OUTSIDE" -- timeout -s KILL 20 "$REPLAYQ" replay \
		--ref-action=print --onto main "${2:-main..topic}" >/dev/null 2>"$T/stderr")
	RC=$?
	ERR=$(cat "$T/stderr")
	OPENED=$(cat "$T/opened")
}
refs_of() { git --git-dir="$1" for-each-ref --format='%(refname) %(objectname)'; }
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
refuse "commondir relative to the current directory" rel rel.git "relative"
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
# a commondir naming a directory outside, in the first place libgit2
# looks (whose objects/ and refs/ it would look at): refused alike whether
# that directory looks like a git directory or does not exist (the error
# tells nothing of what is outside)
bare_shell "$OUTSIDE/cm.git"
fresh cmo
echo "$OUTSIDE/cm.git" >"$ROOT/cmo/.git/commondir"
refuse "commondir outside, to a git directory" cmo cmo "commondir file's directory"
fresh cmx
echo "$OUTSIDE/none" >"$ROOT/cmx/.git/commondir"
refuse "commondir outside, to nothing" cmx cmx "commondir file's directory"
cp -a "$T/template/.git" "$ROOT/cmf.d"
echo "$OUTSIDE/none" >"$ROOT/cmf.d/commondir"
mkdir -p "$ROOT/cmf"
echo "gitdir: ../cmf.d" >"$ROOT/cmf/.git"
refuse "'.git' file to a git directory whose commondir is outside" cmf cmf "commondir file's directory"

run_jobs

section "2. a format libgit2 refuses is named from the config, read once"
# a repository whose format libgit2 refuses, with a FIFO for a commondir
# (libgit2 skips it: not a file): the diagnosis reads the commondir the one
# way (no FIFO), and the config without its includes
fresh fmt
git config -f "$ROOT/fmt/.git/config" core.repositoryformatversion 1
git config -f "$ROOT/fmt/.git/config" extensions.frobnicate yes
mkfifo "$ROOT/fmt/.git/commondir"
replay_in "$ROOT/fmt"
check_eq "replay: a commondir FIFO beside an unknown extension: exit 128" 128 "$RC"
rm "$ROOT/fmt/.git/commondir"
replay_in "$ROOT/fmt"
check_eq "... without it: the extension is named, in git's words" "fatal: unknown repository extension found:
	frobnicate" "$ERR"

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
# a linked worktree: named by its git directory, inside its repository
fresh wm.git bare
git --git-dir="$ROOT/wm.git" worktree add -q "$ROOT/wm-co" -b wtb topic 2>>"$T/run.err"
expect "a linked worktree named by its git directory" wt wm.git/worktrees/wm-co ok
refuse "... by its checkout (another directory)" wt-co wm-co "git directory"
run_jobs
check_eq "V.git's refs did not move" "$V_BEFORE" "$(refs_of "$ROOT/V.git")"
run_job cv-root A.git --repo-scope=root
check_eq "--repo-scope=root: a shared common directory is taken" ok "$CODE"
check "... and V.git's topic moved" test "$V_BEFORE" != "$(refs_of "$ROOT/V.git")"

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
refuse "FETCH_HEAD a FIFO" fh fh "FETCH_HEAD" main..FETCH_HEAD
fresh pk
git -C "$ROOT/pk" repack -adq
idx=$(ls "$ROOT"/pk/.git/objects/pack/*.idx)
rm "$idx" && mkfifo "$idx"
refuse "a pack index a FIFO" pk pk "objects/pack"
fresh lo
obj=$(git -C "$ROOT/lo" rev-parse topic)
f=$ROOT/lo/.git/objects/${obj:0:2}/${obj:2}
rm -f "$f" && mkfifo "$f"
expect "a loose object a FIFO, at once" lo lo corrupt_object
replay_in "$ROOT/lo"
check_eq "replay: a loose object a FIFO: exit 128" 128 "$RC"
fresh al
mkfifo "$ROOT/al/.git/objects/info/alternates"
refuse "alternates a FIFO" al al "alternates"
replay_in "$ROOT/al"
check_eq "replay: alternates a FIFO: exit 128" 128 "$RC"
check_contains "... saying why" "not a regular file" "$ERR"
# a FIFO in an alternate's packs (which libgit2 would open too)
git clone -q --bare "$T/template" "$ROOT/shared.git"
fresh alp
echo "$ROOT/shared.git/objects" >"$ROOT/alp/.git/objects/info/alternates"
mkfifo "$ROOT/shared.git/objects/pack/multi-pack-index"
refuse "a FIFO in an alternate's pack directory" alp alp "multi-pack-index"

if upstream_git; then
	GIT_TEST_REFTABLE_AUTOCOMPACTION=false "$UPSTREAM_GIT" clone -q --bare --ref-format=reftable \
		"$T/template" "$T/rt"
	rfresh() { rm -rf "${ROOT:?}/$1" && cp -a "$T/rt" "$ROOT/$1"; }
	rfresh rtl.git
	rm "$ROOT/rtl.git/reftable/tables.list" && mkfifo "$ROOT/rtl.git/reftable/tables.list"
	refuse "reftable: tables.list a FIFO" rtl rtl.git "tables.list"
	replay_in "$ROOT/rtl.git"
	check_eq "replay: tables.list a FIFO: exit 128" 128 "$RC"
	rfresh rtt.git
	t1=$(head -1 "$ROOT/rtt.git/reftable/tables.list")
	rm "$ROOT/rtt.git/reftable/$t1" && mkfifo "$ROOT/rtt.git/reftable/$t1"
	refuse "reftable: a table a FIFO" rtt rtt.git "$t1"
	replay_in "$ROOT/rtt.git"
	check_eq "replay: a table a FIFO: exit 128" 128 "$RC"
	rfresh rtk.git
	mv "$ROOT/rtk.git/reftable/tables.list" "$ROOT/rtk.git/list" && ln -s ../list "$ROOT/rtk.git/reftable/tables.list"
	refuse "reftable: tables.list a link inside" rtk rtk.git "tables.list"
	rfresh rtf.git
	git -C "$T/template" rev-parse topic >"$OUTSIDE/hex"
	ln -s "$OUTSIDE/hex" "$ROOT/rtf.git/FETCH_HEAD"
	refuse "reftable: FETCH_HEAD a link outside" rtf rtf.git "FETCH_HEAD" main..FETCH_HEAD
	replay_in "$ROOT/rtf.git" main..FETCH_HEAD
	check_eq "replay: FETCH_HEAD a link: exit 128" 128 "$RC"
	check_eq "... the file it links to not opened" "" "$OPENED"
	# a reftable directory that is another repository's (under the root)
	rfresh RV.git
	rfresh rts.git
	rm -rf "$ROOT/rts.git/reftable" && ln -s ../RV.git/reftable "$ROOT/rts.git/reftable"
	RV_BEFORE=$(cat "$ROOT"/RV.git/reftable/tables.list)
	refuse "reftable/ a link to another repository's" rts rts.git "reftable"
fi
run_jobs
[ -z "${RV_BEFORE:-}" ] || check_eq "RV.git's tables unchanged" "$RV_BEFORE" "$(cat "$ROOT"/RV.git/reftable/tables.list)"

section "7. no header through i18n.commitEncoding"
fresh enc
git -C "$ROOT/enc" config i18n.commitEncoding "$(printf 'ISO-8859-1\nevil yes')"
topic=$(git -C "$ROOT/enc" rev-parse topic)
refuse "a commit encoding with a newline" enc enc "i18n.commitEncoding"
run_jobs
check_eq "... topic not moved" "$topic" "$(git -C "$ROOT/enc" rev-parse topic)"
run_rq -C "$ROOT/enc" replay --onto main main..topic
check_eq "replay: the same encoding refused (exit 128)" 128 "$RC"
check_contains "... saying why" "i18n.commitEncoding" "$ERR"

section "9. a remerge makes a bounded number of inner merges"
# ladder dir depth: three branches a, b, c; each level's three commits
# merge all three of the level below (so every two of them have three
# merge bases, whose virtual base needs the level below's, 2^depth inner
# merges in all); m merges a and b with a change of its own; main is a
# commit beside them
ladder() {
	local d=$1 i t tree a b c na nb nc
	git init -q --bare "$2"
	export GIT_DIR=$2
	t=$(echo base | git hash-object -w --stdin)
	tree=$(printf '100644 blob %s\tf\n' "$t" | git mktree)
	a=$(git commit-tree "$tree" -m root </dev/null)
	b=$(git commit-tree "$tree" -p "$a" -m b1 </dev/null)
	c=$(git commit-tree "$tree" -p "$a" -m c1 </dev/null)
	git update-ref refs/heads/main "$(git commit-tree "$tree" -p "$a" -m beside </dev/null)"
	a=$(git commit-tree "$tree" -p "$a" -m a1 </dev/null)
	for i in $(seq 2 "$d"); do
		na=$(git commit-tree "$tree" -p "$a" -p "$b" -p "$c" -m "a$i" </dev/null)
		nb=$(git commit-tree "$tree" -p "$a" -p "$b" -p "$c" -m "b$i" </dev/null)
		nc=$(git commit-tree "$tree" -p "$a" -p "$b" -p "$c" -m "c$i" </dev/null)
		a=$na b=$nb c=$nc
	done
	t=$(echo top | git hash-object -w --stdin)
	tree=$(printf '100644 blob %s\tf\n' "$t" | git mktree)
	git update-ref refs/heads/m "$(git commit-tree "$tree" -p "$a" -p "$b" -m M </dev/null)"
	git update-ref refs/heads/a "$a"
	git update-ref refs/heads/b "$b"
	unset GIT_DIR
}
ladder 6 "$ROOT/ladder6.git"
ladder 12 "$ROOT/ladder12.git"
for d in 6 12; do
	printf '{"v":1,"id":"l%s","repo":"ladder%s.git","mode":"onto","target":"main","revisions":["^a","^b","m"]}\n' "$d" "$d"
done | timeout -s KILL 120 "$REPLAYQ" run --repo-root="$ROOT" >"$T/ladders" 2>>"$T/run.err"
check_eq "a ladder 6 deep (64 inner merges): replayed" ok "$(jq -r 'select(.id == "l6") | .status' "$T/ladders")"
check_eq "12 deep (4096): a conflict of kind 'merge bases'" "conflict merge bases" \
	"$(jq -r 'select(.id == "l12") | "\(.status) \(.conflict.paths[0].kind)"' "$T/ladders")"
out=$("$PY" - "$(dirname "$0")/../../docs/schema/result.schema.json" "$T/ladders" <<'EOT' 2>&1
import json, sys
from jsonschema import Draft202012Validator
rv = Draft202012Validator(json.load(open(sys.argv[1])))
print("\n".join(e.message for l in open(sys.argv[2]) for e in rv.iter_errors(json.loads(l))) or "schema ok")
EOT
)
check_eq "... both results valid by docs/schema" "schema ok" "$out"

finish
