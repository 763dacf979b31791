#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A detached HEAD named among the positive revisions (HEAD, @, a range
# ending in either) is a ref to update, as upstream git replay does: print
# mode prints "update HEAD <new> <old>", update mode moves HEAD (still
# detached) with a reflog entry, in bare and non-bare repositories;
# --contained updates a detached HEAD in the range first, then the branches
# at its commit. Where upstream git is at hand, stdout, exit status, the
# refs and the reflog are compared with it byte for byte.
. "$(dirname "$0")/../lib.sh"

export RQ_DATE="@1800000000 +0000"
mkrepo() { # mkrepo dir [--bare]: main with 4 commits, HEAD detached at main
	local src=$T/src
	if [ ! -d "$src" ]; then
		git init -q -b main "$src"
		for i in 1 2 3 4; do commit_file "$src" "f$i" "$i" "c$i"; done
		git -C "$src" branch side HEAD~1
	fi
	if [ "${2:-}" = --bare ]; then
		git clone -q --bare "$src" "$1"
	else
		git clone -q "$src" "$1"
		git -C "$1" branch -q side origin/side 2>/dev/null || true
	fi
	git -C "$1" update-ref --no-deref HEAD "$(git -C "$1" rev-parse main)"
}
HAVE_UPSTREAM=0
upstream_git && HAVE_UPSTREAM=1
mkrepo "$T/fmt" && check_ref_format "$T/fmt" && rm -rf "$T/fmt"

# state dir: HEAD (symbolic or not), every ref, HEAD's last reflog entry
state() {
	git -C "$1" symbolic-ref -q HEAD || echo "detached $(git -C "$1" rev-parse HEAD)"
	git -C "$1" for-each-ref --format='%(refname) %(objectname)'
	git -C "$1" reflog show -1 --format='%H %gs' HEAD 2>/dev/null
}

for kind in nonbare bare; do
	flag=
	[ $kind = bare ] && flag=--bare
	for args in "--onto HEAD~2 HEAD~..HEAD" "--onto HEAD~2 HEAD~..@" "--onto HEAD~2 ^HEAD~ @" \
		"--contained --onto HEAD~2 HEAD~..HEAD" "--contained --onto HEAD~2 HEAD~2..main"; do
		# print mode
		mkrepo "$T/$kind-p" $flag
		old=$(git -C "$T/$kind-p" rev-parse HEAD)
		run_rq -C "$T/$kind-p" replay --ref-action=print $args
		check_eq "$kind, print, $args: exit 0" 0 "$RC"
		check_contains "$kind, print, $args: HEAD is updated" "update HEAD " "$OUT"
		case "$args" in --contained*)
			check_eq "$kind, print, $args: HEAD's line comes before main's (same commit)" "HEAD refs/heads/main" \
				"$(echo "$OUT" | awk '$2 == "HEAD" || $2 == "refs/heads/main" {printf "%s%s", s, $2; s = " "}')"
			;;
		esac
		new=$(echo "$OUT" | awk '$2 == "HEAD" {print $3}')
		check_eq "$kind, print, $args: old value" "$old" "$(echo "$OUT" | awk '$2 == "HEAD" {print $4}')"
		if [ $HAVE_UPSTREAM = 1 ]; then
			want=$(GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$T/$kind-p" replay --ref-action=print $args 2>"$T/g.err")
			check_eq "$kind, print, $args: stdout as upstream's" "$want" "$OUT"
		fi
		rm -rf "$T/$kind-p"
		# update mode
		mkrepo "$T/$kind-u" $flag
		onto=$(git -C "$T/$kind-u" rev-parse HEAD~2)
		run_rq -C "$T/$kind-u" replay $args
		check_eq "$kind, update, $args: exit 0" 0 "$RC"
		check_eq "$kind, update, $args: HEAD still detached" "" "$(git -C "$T/$kind-u" symbolic-ref -q HEAD)"
		check_eq "$kind, update, $args: HEAD moved to the printed id" "$new" "$(git -C "$T/$kind-u" rev-parse HEAD)"
		[ $kind = bare ] || # (a bare repository keeps no reflog unless configured)
			check_eq "$kind, update, $args: HEAD's reflog" "$new replay --onto $onto" \
				"$(git -C "$T/$kind-u" reflog show -1 --format='%H %gs' HEAD)"
		if [ $HAVE_UPSTREAM = 1 ]; then
			mkrepo "$T/$kind-g" $flag
			GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$T/$kind-g" replay $args 2>"$T/g.err"
			check_eq "$kind, update, $args: exit status as upstream's" "$?" "$RC"
			check_eq "$kind, update, $args: refs and reflog as upstream's" "$(state "$T/$kind-g")" "$(state "$T/$kind-u")"
			rm -rf "$T/$kind-g"
		fi
		rm -rf "$T/$kind-u"
	done
done
# an attached HEAD is not a ref of its own: HEAD~..HEAD updates the branch
mkrepo "$T/att"
git -C "$T/att" checkout -q main
run_rq -C "$T/att" replay --ref-action=print --onto HEAD~2 HEAD~..HEAD
check_eq "attached HEAD: the branch is updated" "update refs/heads/main" "$(echo "$OUT" | cut -d' ' -f1-2)"
# HEAD a symbolic ref to a symbolic ref to the branch that moves: git adds
# to HEAD's reflog only when HEAD names the moving ref itself, not through
# a chain (libgit2 did, and replayq with it)
if [ $HAVE_UPSTREAM = 1 ]; then
	for who in u g; do
		mkrepo "$T/chain-$who"
		git -C "$T/chain-$who" symbolic-ref refs/heads/link refs/heads/side
		git -C "$T/chain-$who" symbolic-ref HEAD refs/heads/link
	done
	run_rq -C "$T/chain-u" replay --onto main~3 main~2..side
	GIT_COMMITTER_DATE="$RQ_DATE" "$UPSTREAM_GIT" -C "$T/chain-g" replay --onto main~3 main~2..side 2>"$T/g.err"
	check_eq "HEAD through a symbolic ref: exit status as upstream's" "$?" "$RC"
	chain_state() { state "$1"; git -C "$1" reflog show -1 --format='%H %gs' refs/heads/side; }
	check_eq "HEAD through a symbolic ref: refs and reflogs as upstream's" "$(chain_state "$T/chain-g")" \
		"$(chain_state "$T/chain-u")"
fi
finish
