#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Odd repositories git reads (issue 33, points 10, 12, 13, 15, 16, 17): a
# tree nested deeper than core.maxTreeDepth, a shallow clone and grafts,
# commits whose author or committer libgit2 cannot parse, replace refs,
# merge drivers from attributes (attr.tree and GIT_ATTR_SOURCE in a SHA-256
# repository too, with RQ_TEST_SHA256=1), tree entry names of 100,000 characters
# and of none. Each is compared with upstream git 2.55's git replay where
# upstream gives an answer (stdout and exit status, stderr where said,
# and the refs an update leaves): the same commit ids. Where upstream
# crashes (the deep tree), replayq must fail cleanly with its own code.
# Jobs run through `replayq run` under a root. Runs under ASan.
. "$(dirname "$0")/../lib.sh"
upstream_git || {
	not_ok "upstream git 2.55 (RQ_UPSTREAM_GIT) is found"
	finish
}
# the replays' committer date (make_repo's commits move the clock on: this
# puts it back, so that jobs and upstream commit at the same time)
fixed_date() { export GIT_COMMITTER_DATE="@1700000000 +0000" GIT_AUTHOR_DATE="@1700000000 +0000"; }
fixed_date
ROOT=$T/root
mkdir -p "$ROOT"

# refs_of dir: every ref and its id
refs_of() { git -C "$1" for-each-ref --format='%(refname) %(objectname)'; }

# oracle [--stderr] [--update] "what" dir [-c name=value]... args...: `git
# [-c ...] replay --ref-action=print args` by upstream and by replayq in
# dir: the same
# stdout and exit status (and stderr); with --update, the same refs after
# an update in a copy of dir each.
oracle() {
	local errs=0 update=0 what dir uo ro urc rrc gopts=()
	while [[ $1 == --* ]]; do
		[ "$1" = --stderr ] && errs=1
		[ "$1" = --update ] && update=1
		shift
	done
	what=$1 dir=$2
	shift 2
	while [ "${1:-}" = -c ]; do
		gopts+=(-c "$2")
		shift 2
	done
	uo=$(cd "$dir" && "$UPSTREAM_GIT" "${gopts[@]}" replay --ref-action=print "$@" 2>"$T/u.err")
	urc=$?
	ro=$(cd "$dir" && "$REPLAYQ" "${gopts[@]}" replay --ref-action=print "$@" 2>"$T/r.err")
	rrc=$?
	check_eq "$what: stdout as upstream's" "$uo" "$ro"
	check_eq "$what: exit status as upstream's" "$urc" "$rrc"
	[ $errs = 0 ] || check_eq "$what: stderr as upstream's" "$(cat "$T/u.err")" "$(cat "$T/r.err")"
	[ $update = 0 ] && return
	rm -rf "$T/cu" "$T/cr"
	cp -a "$dir" "$T/cu" && cp -a "$dir" "$T/cr"
	(cd "$T/cu" && "$UPSTREAM_GIT" "${gopts[@]}" replay --ref-action=update "$@" >/dev/null 2>&1)
	(cd "$T/cr" && "$REPLAYQ" "${gopts[@]}" replay --ref-action=update "$@" >/dev/null 2>&1)
	check_eq "$what: refs after an update as upstream's" "$(refs_of "$T/cu")" "$(refs_of "$T/cr")"
}

# job id repo [extra fields] [run options...]: a print job through replayq
# run under $ROOT (main..topic onto main, the tests' committer); CODE is
# its error code or status, NEW the new id of its first update
job() {
	local id=$1 repo=$2 extra=${3:-}
	shift 2
	[ $# -eq 0 ] || shift
	OUT=$(printf '{"v":1,"id":"%s","repo":"%s","mode":"onto","target":"main","revisions":["main..topic"],"committer":{"name":"C O Mitter","email":"committer@example.com","time":1700000000,"tz":"+0000"}%s}\n' \
		"$id" "$repo" "$extra" | timeout -s KILL 120 "$REPLAYQ" run --repo-root="$ROOT" "$@" 2>>"$T/run.err")
	CODE=$(jq -r '.error.code // .status' <<<"$OUT")
	NEW=$(jq -r '.updates[0].new // ""' <<<"$OUT")
}
# upstream_new dir: the id upstream's main..topic onto main gives topic
upstream_new() { (cd "$1" && "$UPSTREAM_GIT" replay --ref-action=print --onto main main..topic | cut -d' ' -f3); }

# commit_raw repo tree parent header-lines message: a commit object written
# as given (git hash-object --literally takes what git commit would refuse)
commit_raw() {
	printf 'tree %s\nparent %s\n%b\n\n%s\n' "$2" "$3" "$4" "$5" |
		git -C "$1" hash-object -t commit -w --stdin --literally
}

# ---------------------------------------------------------------------------
section "10. a tree nested deeper than core.maxTreeDepth"
# deep_repo dir n: main and topic each change a file at the bottom of the
# same directory chain d/d/.../d, n deep, so that a merge opens every level
deep_repo() {
	local p
	p=$(printf 'd/%.0s' $(seq 1 "$2"))
	git init -q -b main "$1"
	printf 'commit refs/heads/main\nmark :1\ncommitter C <c@x> 1700000000 +0000\ndata 4\nbase\nM 100644 inline %sf\ndata 5\nleaf\n\ncommit refs/heads/topic\ncommitter C <c@x> 1700000060 +0000\ndata 6\ntopic\nfrom :1\nM 100644 inline %sf\ndata 6\nleaf2\n\ncommit refs/heads/main\ncommitter C <c@x> 1700000120 +0000\ndata 5\nmain\nfrom :1\nM 100644 inline %sg\ndata 2\nm\n\n' \
		"$p" "$p" "$p" | git -C "$1" fast-import --quiet
}
deep_repo "$ROOT/deep" 2100
# upstream refuses it (git 2.55 says so, then crashes: SIGSEGV)
(cd "$ROOT/deep" && "$UPSTREAM_GIT" replay --ref-action=print --onto main main..topic
	true) >/dev/null 2>"$T/u.err"
check_contains "upstream refuses 2,100 deep" "exceeded maximum allowed tree depth" "$(cat "$T/u.err")"
cp -a "$ROOT/deep" "$T/deep-update"
before=$(refs_of "$T/deep-update")
run_rq -C "$T/deep-update" replay --onto main main..topic
check_eq "2,100 deep: exit 128, no crash" 128 "$RC"
check_eq "... git's message" "fatal: exceeded maximum allowed tree depth" "$ERR"
check_eq "... refs unchanged" "$before" "$(refs_of "$T/deep-update")"
check "... nothing left behind" no_litter "$T/deep-update"
oracle "2,100 deep under core.maxTreeDepth=2100" "$ROOT/deep" -c core.maxTreeDepth=2100 --onto main main..topic
# the walk and the tree writing keep their own stacks: a 256 KiB C stack
# is enough for any depth the configuration allows (ASan's fake stacks off,
# so that frames are on the C stack)
uo=$(cd "$ROOT/deep" && "$UPSTREAM_GIT" -c core.maxTreeDepth=100000 replay --ref-action=print --onto main main..topic)
ro=$(cd "$ROOT/deep" && ulimit -s 256 && ASAN_OPTIONS=${ASAN_OPTIONS//detect_stack_use_after_return=1/} \
	"$REPLAYQ" -c core.maxTreeDepth=100000 replay --ref-action=print --onto main main..topic 2>"$T/stderr")
check_eq "2,100 deep on a 256 KiB stack: upstream's result" "$uo" "$ro"
oracle --stderr "pathspec walk into the deep tree" "$ROOT/deep" --onto main main..topic -- '*f'
oracle "pathspec that never goes deep" "$ROOT/deep" --onto main main..topic -- 'x*'
job deep deep
check_eq "a job: its code, tree_too_deep" tree_too_deep "$CODE"

# ---------------------------------------------------------------------------
section "17. tree entry names of 100,000 characters and of none"
make_repo "$ROOT/names" n
fixed_date
R=$ROOT/names
long=$(head -c 100000 /dev/zero | tr '\0' x)
blob=$(echo long | git -C "$R" hash-object -w --stdin)
tree=$( (git -C "$R" ls-tree base && printf '100644 blob %s\t%s\n' "$blob" "$long") | git -C "$R" mktree)
git -C "$R" update-ref refs/heads/topic "$(git -C "$R" commit-tree -p base -m long "$tree")"
oracle --update "a 100,000-character name" "$R" --onto main main..topic
oracle "... through a pathspec" "$R" --onto main main..topic -- '*x'
job long names
check_eq "... a job: ok" ok "$CODE"
check_eq "... a job: upstream's commit" "$(upstream_new "$R")" "$NEW"
hex=$(printf '%s' "$blob" | sed 's/../\\x&/g')
empty=$( (git -C "$R" cat-file tree "base^{tree}" && printf '100644 \0' && printf "$hex") |
	git -C "$R" hash-object -t tree -w --stdin --literally)
git -C "$R" update-ref refs/heads/topic "$(git -C "$R" commit-tree -p base -m empty "$empty")"
oracle --stderr "an empty name" "$R" --onto main main..topic
run_rq -C "$R" replay --format=json --ref-action=print --onto main main..topic
check_eq "... is corrupt_object" corrupt_object "$(jq -r .error.code <<<"$OUT")"
job empty names
check_eq "... a job: corrupt_object" corrupt_object "$CODE"

# ---------------------------------------------------------------------------
section "12. a shallow clone, and grafts"
# src_history dir [git init options]: main of three commits, topic of two
# off it, main moved on by one
src_history() {
	git init -q -b main "${@:2}" "$1"
	git -C "$1" config gc.auto 0
	for i in 1 2 3; do commit_file "$1" "f$i" "$i" "c$i"; done
	git -C "$1" checkout -q -b topic
	commit_file "$1" t1 t1 t1
	commit_file "$1" t2 t2 t2
	git -C "$1" checkout -q main
	commit_file "$1" m m "main moves"
}
src_history "$T/src"
fixed_date
git clone -q --depth 2 --no-single-branch "file://$T/src" "$ROOT/shallow"
R=$ROOT/shallow
git -C "$R" branch -q topic origin/topic
check "the clone is shallow" test -s "$R/.git/shallow"
oracle --update "shallow: main..topic" "$R" --onto main main..topic
oracle "shallow: topic down to its shallow root" "$R" --onto main topic
oracle "shallow: --advance" "$R" --advance main main..topic
job shallow shallow
check_eq "shallow, a job: ok" ok "$CODE"
check_eq "shallow, a job: upstream's commit" "$(upstream_new "$R")" "$NEW"
cp -a "$T/src" "$ROOT/grafted"
echo "$(git -C "$R" rev-parse topic~1) $(git -C "$R" rev-parse main)" >"$ROOT/grafted/.git/info/grafts"
oracle --stderr --update "info/grafts: a parent given by a graft" "$ROOT/grafted" --onto main main..topic
echo "not an id" >"$ROOT/grafted/.git/shallow"
run_rq -C "$ROOT/grafted" replay --format=json --ref-action=print --onto main main..topic
check_eq "a bad shallow line: bad_repo" bad_repo "$(jq -r .error.code <<<"$OUT")"
oracle "... exit status as upstream's" "$ROOT/grafted" --onto main main..topic

# ---------------------------------------------------------------------------
section "12 in SHA-256: a shallow clone, grafts, replace refs (RQ_TEST_SHA256)"
# The same at the width of a SHA-256 repository made by upstream git (init
# --object-format=sha256, clone --depth): stdout, stderr and exit status
# as upstream's; 40-digit lines there as upstream reads them (a bad graft
# line, a bad shallow line, no replace ref)
# ugit: every git upstream's (a clone's upload-pack too), in a subshell
ugit() {
	mkdir -p "$T/ubin" "$T/tmpl"
	ln -sf "$UPSTREAM_GIT" "$T/ubin/git"
	(PATH="$T/ubin:$PATH" GIT_EXEC_PATH="$T/ubin" GIT_TEMPLATE_DIR="$T/tmpl" "$@")
}
if [ "${RQ_TEST_SHA256:-0}" = 1 ]; then
	S=$T/src256
	ugit src_history "$S" --object-format=sha256
	fixed_date
	ugit git clone -q --depth 2 --no-single-branch "file://$S" "$ROOT/shallow256"
	R=$ROOT/shallow256
	ugit git -C "$R" branch -q topic origin/topic
	check_eq "SHA-256: the clone is SHA-256" sha256 "$(ugit git -C "$R" rev-parse --show-object-format)"
	check_eq "SHA-256: the clone is shallow (two 64-digit lines)" "2 130" "$(wc -lc <"$R/.git/shallow" | xargs)"
	oracle --stderr --update "SHA-256 shallow: main..topic" "$R" --onto main main..topic
	oracle --stderr "SHA-256 shallow: topic down to its shallow root" "$R" --onto main topic
	oracle --stderr "SHA-256 shallow: --advance" "$R" --advance main main..topic
	job shallow256 shallow256
	check_eq "SHA-256 shallow, a job: upstream's commit" "$(upstream_new "$R")" "$NEW"
	cp -a "$S" "$ROOT/grafted256"
	G=$ROOT/grafted256
	t1=$(git -C "$S" rev-parse topic~1) m=$(git -C "$S" rev-parse main)
	mkdir -p "$G/.git/info"
	printf '# a comment\n\n%s %s\n' "$t1" "$m" >"$G/.git/info/grafts"
	oracle --stderr --update "SHA-256 info/grafts: a parent given by a graft" "$G" --onto main main..topic
	ungrafted=$(cd "$S" && "$UPSTREAM_GIT" replay --ref-action=print --onto main main..topic)
	grafted=$(cd "$G" && "$REPLAYQ" replay --ref-action=print --onto main main..topic 2>/dev/null)
	check "... the graft changes the result" test "$ungrafted" != "$grafted"
	printf '%s %s\n%s\n' "${t1:0:40}" "${m:0:40}" "$t1" >>"$G/.git/info/grafts"
	oracle --stderr "SHA-256 info/grafts: a 40-digit line (bad graft data), a duplicate" \
		"$G" --onto main main..topic
	GIT_ADVICE=0 oracle --stderr "... with GIT_ADVICE=0" "$G" --onto main main..topic
	echo "${t1:0:40}" >"$G/.git/shallow"
	oracle --stderr "SHA-256 shallow file of a 40-digit line: bad shallow line" "$G" --onto main main..topic
	rm -f "$G/.git/shallow" "$G/.git/info/grafts"
	other=$(ugit git -C "$G" commit-tree -p main~1 -m "t1 replaced" "$(git -C "$G" rev-parse "main^{tree}")")
	ugit git -C "$G" replace "$t1" "$other"
	oracle --stderr --update "SHA-256 replace ref: a replaced commit in the range" "$G" --onto main main..topic
else
	echo "# notice: SHA-256 cases skipped (RQ_TEST_SHA256=1, the CMake option RQ_TEST_SHA256)" >&2
fi

# ---------------------------------------------------------------------------
section "13. author and committer lines libgit2 cannot read"
make_repo "$ROOT/idents" i
fixed_date
R=$ROOT/idents
tree=$(git -C "$R" rev-parse "topic^{tree}")
n=0
for hdr in 'author Bad Author 1700000000 +0000\ncommitter C <c@x> 1700000000 +0000' \
	'author A <a@x> 99999999999999999999 +0000\ncommitter C <c@x> 1700000000 +0000' \
	'author A <a@x> 1700000000 +0000\ncommitter C <c@x> 99999999999999999999 +0000' \
	'author A <a@x> 1700000000 +0000\ncommitter No Angles 1700000000 +0000'; do
	n=$((n + 1))
	c=$(commit_raw "$R" "$tree" "$(git -C "$R" rev-parse topic~1)" "$hdr" "odd $n")
	git -C "$R" update-ref refs/heads/odd$n "$c"
	oracle --update "ident case $n ($hdr)" "$R" --onto main main..odd$n
done
git -C "$R" update-ref refs/heads/topic "$(git -C "$R" rev-parse odd1)"
job idents idents
check_eq "an author without <>, a job: upstream's commit" "$(upstream_new "$R")" "$NEW"

# ---------------------------------------------------------------------------
section "15. replace refs"
make_repo "$ROOT/replace" r
fixed_date
R=$ROOT/replace
# topic~1 replaced by a commit beside it (another file); main replaced by a
# commit whose f.txt differs, so that the merge takes the replacement's
other=$(git -C "$R" commit-tree -p base -m "t1 replaced" "$(git -C "$R" rev-parse "clash^{tree}")")
git -C "$R" replace "$(git -C "$R" rev-parse topic~1)" "$other"
oracle --update "a replaced commit in the range" "$R" --onto main main..topic
oracle "... the whole branch" "$R" --onto main topic
GIT_NO_REPLACE_OBJECTS=1 oracle "... GIT_NO_REPLACE_OBJECTS" "$R" --onto main main..topic
uo=$(cd "$R" && "$UPSTREAM_GIT" --no-replace-objects replay --ref-action=print --onto main main..topic)
ro=$(cd "$R" && "$REPLAYQ" --no-replace-objects replay --ref-action=print --onto main main..topic)
check_eq "... --no-replace-objects: upstream's" "$uo" "$ro"
oracle "... core.useReplaceRefs=false" "$R" -c core.useReplaceRefs=false --onto main main..topic
job replace replace
check_eq "... a job: upstream's commit" "$(upstream_new "$R")" "$NEW"
m2=$(git -C "$R" commit-tree -p main~1 -m "main replaced" "$(git -C "$R" rev-parse "s2^{tree}")")
git -C "$R" replace main "$m2"
oracle --update "a replaced base: its id is the parent, its tree is merged" "$R" --onto main main..topic
oracle "... named by an abbreviated id" "$R" --onto "$(git -C "$R" rev-parse --short=8 main)" main..topic
git -C "$R" replace -d main >/dev/null
blob=$(git -C "$R" rev-parse main:c.txt)
git -C "$R" replace "$blob" "$(echo "c replaced" | git -C "$R" hash-object -w --stdin)"
oracle --update "a replaced blob meets the merge" "$R" --onto main clash~1..clash
git -C "$R" replace -d "$blob" >/dev/null
prev=$(git -C "$R" rev-parse s2)
for i in 1 2 3 4 5; do
	nxt=$(git -C "$R" commit-tree -p base -m "chain $i" "$(git -C "$R" rev-parse "base^{tree}")")
	git -C "$R" update-ref "refs/replace/$prev" "$nxt"
	prev=$nxt
done
oracle --stderr "five replacements in a row" "$R" --onto main s1..s2

# ---------------------------------------------------------------------------
section "16. merge drivers from attributes"
# attr_repo dir [--bare]: f.txt gets a line at its end on main and another
# on topic (a text conflict, clean with union); g.txt changes two lines
# apart (clean with text, a conflict with the binary driver)
attr_repo() {
	git init -q -b main "$1"
	printf 'a\nb\n' >"$1/f.txt"
	printf '1\n2\n3\n4\n5\n' >"$1/g.txt"
	git -C "$1" add . && git -C "$1" commit -q -m base && git -C "$1" tag base
	printf 'a\nb\nmain\nx\n' >"$1/f.txt"
	printf '1m\n2\n3\n4\n5\n' >"$1/g.txt"
	git -C "$1" commit -q -am main
	git -C "$1" checkout -q -b topic base
	printf 'a\nb\ntopic\nx\n' >"$1/f.txt"
	printf '1\n2\n3\n4\n5t\n' >"$1/g.txt"
	git -C "$1" commit -q -am topic
	printf '*.txt merge=union\n' >"$1/.git-attrs"
	git -C "$1" checkout -q -b attrs main
	cp "$1/.git-attrs" "$1/.gitattributes"
	git -C "$1" add .gitattributes && git -C "$1" commit -q -m attrs
	git -C "$1" checkout -q main
}
attr_repo "$ROOT/attrs"
R=$ROOT/attrs
oracle "no attributes: f.txt conflicts" "$R" --onto main main..topic
echo 'f.txt merge=union' >"$R/.git/info/attributes"
oracle --update "merge=union in info/attributes" "$R" --onto main main..topic
oracle "... with merge.conflictStyle=diff3 (no refinement)" "$R" -c merge.conflictStyle=diff3 --onto main main..topic
oracle "... with merge.conflictStyle=zdiff3" "$R" -c merge.conflictStyle=zdiff3 --onto main main..topic
job union attrs
check_eq "... a job: ok" ok "$CODE"
check_eq "... a job: upstream's commit" "$(upstream_new "$R")" "$NEW"
printf '[attr]u merge=union\nf.txt u\nf.txt !merge\n' >"$R/.git/info/attributes"
oracle "'!merge' after a macro: unspecified again" "$R" --onto main main..topic
printf 'f.txt merge=union\ng.txt -merge\n' >"$R/.git/info/attributes"
oracle "-merge: a clean text merge conflicts" "$R" --onto main main..topic
printf 'f.txt merge=union\ng.txt binary\n' >"$R/.git/info/attributes"
oracle "the binary macro" "$R" --onto main main..topic
printf 'f.txt merge=union\ng.txt merge=nosuch\n' >"$R/.git/info/attributes"
oracle "an unknown driver is text" "$R" --onto main main..topic
rm "$R/.git/info/attributes"
oracle "merge.default=union" "$R" -c merge.default=union --onto main main..topic
cp "$R/.git-attrs" "$R/.gitattributes"
oracle "the working tree's .gitattributes" "$R" --onto main main..topic
git -C "$R" add .gitattributes && rm "$R/.gitattributes"
oracle "... not the index's" "$R" --onto main main..topic
git -C "$R" rm -q --cached .gitattributes
ln -s .git-attrs "$R/.gitattributes"
oracle "... not through a symbolic link" "$R" --onto main main..topic
rm "$R/.gitattributes"
oracle "attr.tree" "$R" -c attr.tree=attrs --onto main main..topic
GIT_ATTR_SOURCE=nosuch oracle --stderr "GIT_ATTR_SOURCE naming nothing" "$R" --onto main main..topic
echo 'f.txt merge=ext' >"$R/.git/info/attributes"
oracle "an external driver that fails" "$R" -c merge.ext.driver=false --onto main main..topic
oracle --stderr "a driver without a command" "$R" -c merge.ext.name=x --onto main main..topic
run_rq -C "$R" -c "merge.ext.driver=touch $T/driver-ran" replay --ref-action=print --onto main main..topic
check_eq "an external driver is never run: a conflict" 1 "$RC"
check "... and the command did not run" test ! -e "$T/driver-ran"
git clone -q --bare "$R" "$ROOT/attrs.git"
echo 'f.txt merge=union' >"$ROOT/attrs.git/info/attributes"
oracle --update "bare: merge=union in info/attributes" "$ROOT/attrs.git" --onto main main..topic
rm "$ROOT/attrs.git/info/attributes"
git -C "$ROOT/attrs.git" symbolic-ref HEAD refs/heads/attrs
oracle "bare: HEAD's .gitattributes is not read" "$ROOT/attrs.git" --onto main main..topic
oracle "bare: attr.tree" "$ROOT/attrs.git" -c attr.tree=attrs --onto main main..topic
# the same sources in a SHA-256 repository (issue 42): their names read by
# replayq's revision names and peeled to a tree at the repository's width
if [ "${RQ_TEST_SHA256:-0}" = 1 ]; then
	R2=$ROOT/attrs256
	GIT_DEFAULT_HASH=sha256 attr_repo "$R2"
	check_eq "SHA-256: the repository is one" sha256 "$(git -C "$R2" rev-parse --show-object-format)"
	oracle --update "SHA-256: attr.tree" "$R2" -c attr.tree=attrs --onto main main..topic
	oracle "SHA-256: attr.tree, a tree's 12 digits" "$R2" \
		-c attr.tree="$(git -C "$R2" rev-parse --short=12 'attrs^{tree}')" --onto main main..topic
	GIT_ATTR_SOURCE='attrs~0:' oracle "SHA-256: GIT_ATTR_SOURCE, <rev>:<path>" "$R2" --onto main main..topic
	GIT_ATTR_SOURCE=nosuch oracle --stderr "SHA-256: GIT_ATTR_SOURCE naming nothing" "$R2" --onto main main..topic
	GIT_ATTR_SOURCE="$(git -C "$R2" rev-parse attrs:.gitattributes)" oracle --stderr \
		"SHA-256: GIT_ATTR_SOURCE naming a blob: no attributes, no error" "$R2" --onto main main..topic
else
	echo "# notice: the SHA-256 attribute sources skipped (RQ_TEST_SHA256=1)" >&2
fi
# a job: the worker's own attribute files are not read, and a repository's
# attribute file outside the root is refused
mkdir -p "$HOME/.config/git"
cp "$R/.git-attrs" "$HOME/.config/git/attributes"
oracle "~/.config/git/attributes (replayq replay)" "$R" --onto main main..topic
job global attrs
check_eq "... a job does not read it: conflict" conflict "$CODE"
rm "$HOME/.config/git/attributes" "$R/.git/info/attributes"
ln -s "$T/outside-attrs" "$R/.git/info/attributes"
cp "$R/.git-attrs" "$T/outside-attrs"
job outside attrs
check_eq "info/attributes outside the root: bad_repo" bad_repo "$CODE"

# ---------------------------------------------------------------------------
section "a repository without a config file (git reads it with the defaults)"
make_repo "$ROOT/nocfg" c
fixed_date
rm "$ROOT/nocfg/.git/config"
oracle "no config file" "$ROOT/nocfg" --onto main main..topic
job nocfg nocfg
check_eq "a job: ok (it crashed on the empty list of variables)" ok "$CODE"
check_eq "... upstream's commit" "$(upstream_new "$ROOT/nocfg")" "$NEW"

finish
