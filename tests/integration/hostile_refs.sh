#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hostile repositories, round 2 (issue 33, points 1-3): whatever a
# repository under the root holds, a job creates, opens or removes no file
# outside it; its configuration's includes are decided before libgit2
# opens any of them; and a ref name cannot clobber the ref namespace. Jobs
# through `replayq run` (the worker's pool, without Redis), and `replayq
# replay` compared with upstream git 2.55. Runs under ASan.
. "$(dirname "$0")/../lib.sh"
ROOT=$T/root
OUTSIDE=$T/outside
mkdir -p "$ROOT" "$OUTSIDE"
HOST=$(hostname)
# a pid that is gone: a process of ours, reaped
bash -c 'exit 0' &
DEAD=$!
wait "$DEAD"

# one template repository, copied for each case (make_repo's layout)
make_repo "$T/template" t
check_ref_format "$T/template"
git -C "$T/template" config user.name "Tem Plate"
git -C "$T/template" config user.email tem@plate
fresh() {
	rm -rf "$ROOT/$1"
	cp -a "$T/template" "$ROOT/$1"
}
# job id repo [extra fields]: an update job (onto main, main..topic)
# through replayq run; CODE is its status or error code, MSG its message.
# Without a committer in the job or the environment, the repository's
# configuration names it.
run_job() {
	OUT=$(printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["main..topic"],"ref_action":"update"%s}\n' \
		"$1" "$2" "${3:-}" | env -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL \
		timeout -s KILL 60 "$REPLAYQ" run --repo-root="$ROOT" 2>>"$T/run.err")
	RC=$?
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	MSG=$(jq -r '.error.message // ""' <<<"$OUT")
}
refs_of() { git -C "$1" for-each-ref --format='%(refname) %(objectname)'; }
outside_files() { (cd "$OUTSIDE" && find . | sort); }

# --- 1. the refs guard and the markers stay inside -----------------------------
section "guard and markers"
fresh guard
ln -s "$OUTSIDE/created" "$ROOT/guard/.git/replayq-refs.guard"
before=$(refs_of "$ROOT/guard")
run_job guard guard
check_eq "guard symlinked outside: bad_repo" bad_repo "$CODE"
check_contains "... saying why" "replayq-refs.guard" "$MSG"
check "... the file it points at is not created" test ! -e "$OUTSIDE/created"
check_eq "... no ref moved" "$before" "$(refs_of "$ROOT/guard")"
(cd "$ROOT/guard" && timeout -s KILL 60 "$REPLAYQ" replay --onto main main..topic >/dev/null 2>>"$T/run.err")
check_eq "replay: the same guard refused (exit 128)" 128 "$?"
check "replay: ... nothing created outside" test ! -e "$OUTSIDE/created"
rm "$ROOT/guard/.git/replayq-refs.guard"
mkfifo "$ROOT/guard/.git/replayq-refs.guard"
run_job guard-fifo guard
check_eq "guard a FIFO: bad_repo at once (no hang)" bad_repo "$CODE"

# a dead pid's marker naming a lock outside, through ../ and through a
# symbolic link on the way; and a lock it may remove, inside
fresh marker
M=$ROOT/marker/.git/replayq-refs-$DEAD@$HOST
hex=$(git -C "$ROOT/marker" rev-parse topic)
mkdir -p "$OUTSIDE/via-link"
for f in x.lock y.lock via-link/z.lock; do echo "$hex" >"$OUTSIDE/$f"; done
printf '../../../outside/x %s\nrefs/heads/../../../../../outside/y %s\nrefs/heads/s2 %s\n' "$hex" "$hex" "$hex" >"$M"
touch -d '@1700000000' "$M"
: >"$ROOT/marker/.git/refs/heads/s2.lock"
touch -d '@1700000010' "$ROOT/marker/.git/refs/heads/s2.lock"
run_job marker marker
check_eq "a planted marker: the job runs" ok "$CODE"
check "... ../ outside: that lock is not removed" test -e "$OUTSIDE/x.lock"
check "... refs/heads/../ outside: not removed either" test -e "$OUTSIDE/y.lock"
check "... its lock inside, made after it, is removed" test ! -e "$ROOT/marker/.git/refs/heads/s2.lock"
check "... and the marker" test ! -e "$M"
# the command line has no root: a link on the way is not followed either
fresh marker-cli
ln -s "$OUTSIDE/via-link" "$ROOT/marker-cli/.git/refs/heads/via"
M=$ROOT/marker-cli/.git/replayq-refs-$DEAD@$HOST
printf 'refs/heads/via/z %s\n' "$hex" >"$M"
touch -d '@1700000000' "$M"
(cd "$ROOT/marker-cli" && timeout -s KILL 60 "$REPLAYQ" replay --onto main main..topic >/dev/null 2>>"$T/run.err")
check_eq "replay with a marker through a symlinked directory: exit 0" 0 "$?"
check "... the lock behind the link is not removed" test -e "$OUTSIDE/via-link/z.lock"

# --- 2. config includes are decided before anything opens them -----------------
section "config includes"
printf '[user]\n\tname = Outside Name\n\temail = out@side\n' >"$OUTSIDE/cfg"
mkfifo "$OUTSIDE/fifo"
# include case text: appended to the repository's config
include() {
	fresh "inc-$1"
	printf '%b' "$2" >>"$ROOT/inc-$1/.git/config"
}
long=$(head -c 4086 /dev/zero | tr '\0' A)
include nested '[include]\n\tpath = inner.cfg\n'
printf '[include]\n\tpath = %s\n' "$OUTSIDE/cfg" >"$ROOT/inc-nested/.git/inner.cfg"
include comment "[include]\n\tpath = $OUTSIDE/cfg ;c\n"
include quoted "[include]\n\tpath = \"$OUTSIDE/cfg\" # c\n"
include continued "[include]\n\tpath = ${OUTSIDE%/*}/\\\\\noutside/cfg\n"
include longline "[include]\n\tdummy = $long[core]\n\tpath = $OUTSIDE/cfg\n"
include same-line "[include] path = $OUTSIDE/cfg\n"
include includeif "[includeIf \"gitdir:/nowhere/\"]\n\tpath = $OUTSIDE/cfg\n"
include relative '[include]\n\tpath = ../../../outside/cfg\n'
include home '[include]\n\tpath = ~/cfg\n'
include fifo "[include]\n\tpath = $OUTSIDE/fifo\n"
include fifo-inside '[include]\n\tpath = inner.fifo\n'
mkfifo "$ROOT/inc-fifo-inside/.git/inner.fifo"
for c in nested comment quoted continued longline same-line includeif relative home fifo fifo-inside; do
	run_job "inc-$c" "inc-$c" ',"timeout_ms":5000'
	check_eq "include $c: bad_repo" bad_repo "$CODE"
	case $OUT in *"Outside Name"* | *out@side*) not_ok "include $c: the outside file's values are in the result" ;; *) ok ;; esac
	# (read without git: git itself would follow these includes)
	check_eq "include $c: topic not moved" "$(cat "$T/template/.git/refs/heads/topic")" "$(cat "$ROOT/inc-$c/.git/refs/heads/topic")"
done
check_contains "the FIFO outside: named" "outside the repository root" "$(run_job f inc-fifo && echo "$MSG")"
# an include inside the root is read, and it names the committer
include inside '[include]\n\tpath = inner.cfg\n'
printf '[user]\n\tname = Inside Name\n\temail = in@side\n' >"$ROOT/inc-inside/.git/inner.cfg"
run_job inc-inside inc-inside
check_eq "an include inside the root: ok" ok "$CODE"
check_contains "... its user.name is the committer" "committer Inside Name <in@side>" \
	"$(git -C "$ROOT/inc-inside" cat-file commit topic)"
check_eq "nothing outside the root changed" "$(printf '.\n./cfg\n./fifo\n./via-link\n./via-link/z.lock\n./x.lock\n./y.lock')" "$(outside_files)"

# --- 3. ref names that would clobber the ref namespace -------------------------
section "ref namespace"
DEL=$(printf '\x7f')
# ns_job ref action: a job on ns giving its result to ref
ns_job() {
	OUT=$(jq -cn --arg r "$1" --arg a "$2" '{v: 1, id: "ns", repo: "ns", mode: "onto", target: "main",
		revisions: ["main..topic"], ref: $r, ref_action: $a,
		committer: {name: "C O Mitter", email: "c@example.com", time: 1800000000, tz: "+0000"}}' |
		timeout -s KILL 60 "$REPLAYQ" run --repo-root="$ROOT" 2>>"$T/run.err")
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	MSG=$(jq -r '.error.message // ""' <<<"$OUT")
}
# refused job refs: (name, layout) with layout loose or packed; nothing changes
refuse_ref() { # what ref layout [mode]
	fresh ns
	git -C "$ROOT/ns" branch team/x base
	[ "$3" = packed ] && git -C "$ROOT/ns" pack-refs --all
	before=$(refs_of "$ROOT/ns")
	ns_job "$2" "${4:-update}"
	check_eq "$1 ($3, ${4:-update}): bad_ref" bad_ref "$CODE"
	check_eq "$1 ($3, ${4:-update}): no ref changed" "$before" "$(refs_of "$ROOT/ns")"
	check_eq "$1 ($3, ${4:-update}): git still sees every branch and tag" \
		"clash main s1 s2 team/x topic base" \
		"$(git -C "$ROOT/ns" for-each-ref --format='%(refname:short)' refs/heads refs/tags 2>&1 | tr '\n' ' ' | sed 's/ $//')"
}
for layout in loose packed; do
	refuse_ref "refs/heads" refs/heads "$layout"
	refuse_ref "refs/tags" refs/tags "$layout"
	refuse_ref "refs/heads/main/sub" refs/heads/main/sub "$layout"
	refuse_ref "refs/heads/team (team/x exists)" refs/heads/team "$layout"
done
refuse_ref "refs/heads/main/sub" refs/heads/main/sub loose print
refuse_ref "refs/heads/team" refs/heads/team packed print
refuse_ref "refs/heads/@" refs/heads/@ loose
refuse_ref "a DEL in the name" "refs/heads/a${DEL}b" loose
check_contains "main/sub: git's words" "'refs/heads/main' exists; cannot create 'refs/heads/main/sub'" \
	"$(ns_job refs/heads/main/sub update && echo "$MSG")"
check "main can still be updated" git -C "$ROOT/ns" update-ref refs/heads/main topic
# a train whose car refs would sit below a branch
fresh train
before=$(refs_of "$ROOT/train")
train_job() { # id action prefix car
	printf '{"v":1,"id":"%s","repo":"train","mode":"train","target":"main","cars":[{"name":"%s","revisions":["main..topic"]}],"ref_prefix":"%s","ref_action":"%s"}\n' \
		"$1" "$4" "$3" "$2" | timeout -s KILL 60 "$REPLAYQ" run --repo-root="$ROOT" 2>>"$T/run.err" | jq -r .error.code
}
check_eq "train ref_prefix under a branch: bad_ref" bad_ref "$(train_job tr-u update refs/heads/main/ c1)"
check_eq "... in print mode too" bad_ref "$(train_job tr-p print refs/heads/main/ c1)"
check_eq "train ref_prefix refs/ (a car named heads): bad_ref" bad_ref "$(train_job tr-r update refs/ heads)"
check_eq "... no ref changed" "$before" "$(refs_of "$ROOT/train")"

# replayq replay --ref: as upstream git replay, word for word
if upstream_git; then
	for layout in loose packed; do
		fresh cmp
		git -C "$ROOT/cmp" branch team/x base
		[ $layout = packed ] && git -C "$ROOT/cmp" pack-refs --all
		for ref in refs/heads refs/tags refs/heads/main/sub refs/heads/team "refs/heads/a${DEL}b" refs/heads/@ refs/heads/new; do
			rm -rf "$T/g" "$T/r"
			cp -a "$ROOT/cmp" "$T/g"
			cp -a "$ROOT/cmp" "$T/r"
			"$UPSTREAM_GIT" -C "$T/g" replay --onto main --ref "$ref" main..topic >"$T/g.out" 2>"$T/g.err"
			grc=$?
			run_rq -C "$T/r" replay --onto main --ref "$ref" main..topic
			check_eq "replay --ref $ref ($layout): git's exit status" "$grc" "$RC"
			check_eq "replay --ref $ref ($layout): git's words" "$(cat "$T/g.err")" "$ERR"
			check_eq "replay --ref $ref ($layout): git's refs" "$(refs_of "$T/g")" "$(refs_of "$T/r")"
		done
	done
	# check-ref-format's judgement of a name is replayq's
	for ref in "refs/heads/a${DEL}" refs/heads/a..b refs/heads/.a refs/heads/a.lock 'refs/heads/a@{b' \
		refs/heads/a. 'refs/heads/a b' 'refs/heads/a*b' 'refs/heads/a\b' refs/heads//a refs/heads/@ \
		'refs/heads/a@b' refs/heads/ok; do
		"$UPSTREAM_GIT" check-ref-format "$ref" && want=valid || want=invalid
		run_rq -C "$T/r" replay --ref-action=print --onto main --ref "$ref" main..topic
		case $ERR in *"is not a valid refname"*) got=invalid ;; *) got=valid ;; esac
		check_eq "ref name '$ref': git's check-ref-format says $want" "$want" "$got"
	done
fi

check "no sanitizer report" sanitizer_clean "$T/run.err"
finish
