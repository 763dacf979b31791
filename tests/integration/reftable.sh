#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Reftable repositories (extensions.refStorage = reftable, git 3.0's
# default), made by upstream git 2.55 with several tables before a
# compaction: `replayq replay --ref-action=print` prints what upstream
# `git replay` prints, byte for byte, with the same exit status, for
# --onto, --advance, --revert, --contained, --branches, a detached HEAD,
# revisions in reflog and @{-N} forms, a conflict, a bad revision, in non-bare and bare
# repositories; --ref-action=update leaves the refs and reflogs upstream
# leaves, and `git refs verify` and `git fsck` clean; a job through
# `replayq run` works on one too; a repository in a format replayq does not
# handle is named (exit 128, error code unsupported_repository), not "not
# a git repository". Needs upstream git (every git here is upstream's).
. "$(dirname "$0")/../lib.sh"
if ! upstream_git; then
	finish
fi
upstream_only
export RQ_DATE="@1800000000 +0000"

# mkrepo dir [--bare]: a copy of the source repository, HEAD at main
mkrepo() {
	local src=$T/src
	if [ ! -d "$src" ]; then
		export GIT_TEST_REFTABLE_AUTOCOMPACTION=false
		git init -q -b main --ref-format=reftable "$src"
		git -C "$src" config gc.auto 0 # no compaction by git's maintenance
		for i in 1 2; do commit_file "$src" "f$i" "$i" "c$i"; done
		git -C "$src" tag -a -m "tag one" v1
		git -C "$src" checkout -q -b topic
		commit_file "$src" g1 g1 t1
		git -C "$src" branch inner
		commit_file "$src" g2 g2 t2
		git -C "$src" checkout -q -b conf main~1
		commit_file "$src" f2 "other" conflicting
		git -C "$src" checkout -q main
		for i in 3 4; do commit_file "$src" "f$i" "$i" "c$i"; done
		git -C "$src" checkout -q topic && git -C "$src" checkout -q main
		unset GIT_TEST_REFTABLE_AUTOCOMPACTION
	fi
	if [ "${2:-}" = --bare ]; then
		cp -a "$src/.git" "$1" && git -C "$1" config core.bare true
	else
		cp -a "$src" "$1"
	fi
}
mkrepo "$T/check"
check "the source repository has several tables" \
	test "$(wc -l <"$T/check/.git/reftable/tables.list")" -ge 5
check_eq "its refs are in reftables only" "this repository uses the reftable format" \
	"$(cat "$T/check/.git/refs/heads")"

# the refs and reflogs an update leaves, as git shows them
state() {
	git -C "$1" symbolic-ref -q HEAD || echo "detached $(git -C "$1" rev-parse HEAD)"
	git -C "$1" for-each-ref --format='%(refname) %(objectname)'
	for ref in HEAD refs/heads/main refs/heads/topic refs/heads/inner; do
		git -C "$1" reflog show --date=raw --format="$ref %H %gn %ge %gd %gs" "$ref" 2>&1
	done
}

cases=(
	"--onto main main..topic"
	"--onto main topic~1..topic"
	"--onto main@{1} main..topic"
	"--onto @{-1} main..inner"
	"--advance main main..topic"
	"--advance main topic@{1}..topic"
	"--revert main main~1..main"
	"--contained --onto main main..topic"
	"--onto main --branches=[ti]* ^main"
	"--onto main main..conf"
	"--onto nosuch main..topic"
	"--onto main HEAD~1..HEAD"
)
for kind in nonbare bare; do
	flag=
	[ $kind = bare ] && flag=--bare
	for args in "${cases[@]}"; do
		# --ref-action=print: stdout and exit status as upstream's
		mkrepo "$T/p" $flag
		run_rq -C "$T/p" replay --ref-action=print $args
		want=$(GIT_COMMITTER_DATE="$RQ_DATE" git -C "$T/p" replay --ref-action=print $args \
			2>"$T/g.err")
		check_eq "$kind, print, $args: exit status as upstream's" "$?" "$RC"
		check_eq "$kind, print, $args: stdout as upstream's" "$want" "$OUT"
		case "$args" in
		*conf) check_eq "$kind, print, $args: a conflict" 1 "$RC" ;;
		*nosuch*) check_eq "$kind, print, $args: an error" 128 "$RC" ;;
		esac
		rm -rf "$T/p"
	done
done

# a detached HEAD in the range: printed and updated as upstream does
for args in "--onto main main..HEAD" "--contained --onto main main..HEAD"; do
	mkrepo "$T/d"
	git -C "$T/d" checkout -q --detach topic
	run_rq -C "$T/d" replay --ref-action=print $args
	want=$(GIT_COMMITTER_DATE="$RQ_DATE" git -C "$T/d" replay --ref-action=print $args)
	check_eq "detached, print, $args: exit status as upstream's" "$?" "$RC"
	check_eq "detached, print, $args: stdout as upstream's" "$want" "$OUT"
	check_contains "detached, print, $args: HEAD is updated" "update HEAD " "$OUT"
	rm -rf "$T/d"
done

# --ref-action=update: the same refs and reflogs as upstream's, git's
# checks clean, and one new table for all the refs of a replay
for args in "--onto main main..topic" "--contained --onto main main..topic" \
	"--advance main main..topic" "--onto main main..HEAD"; do
	for who in rq up; do
		mkrepo "$T/$who"
		case "$args" in *HEAD) git -C "$T/$who" checkout -q --detach topic ;; esac
	done
	lines_before=$(wc -l <"$T/rq/.git/reftable/tables.list")
	run_rq -C "$T/rq" replay $args
	GIT_COMMITTER_DATE="$RQ_DATE" git -C "$T/up" replay $args 2>"$T/g.err"
	check_eq "update, $args: exit status as upstream's" "$?" "$RC"
	check_eq "update, $args: refs and reflogs as upstream's" "$(state "$T/up")" "$(state "$T/rq")"
	check "update, $args: git refs verify" git -C "$T/rq" refs verify
	check "update, $args: git fsck" git -C "$T/rq" fsck --no-progress --no-dangling
	check "update, $args: no lock or temporary file left" \
		test -z "$(find "$T/rq/.git/reftable" -name '*.lock' -o -name '*.temp.*')"
	check "update, $args: at most one more table (then compacted)" \
		test "$(wc -l <"$T/rq/.git/reftable/tables.list")" -le "$((lines_before + 1))"
	rm -rf "$T/rq" "$T/up"
done

# a job run by the worker's pool
mkdir -p "$T/root"
mkrepo "$T/root/r"
printf '%s\n' '{"id":"j1","repo":"r","mode":"onto","target":"main","revisions":["main..topic"],"ref_action":"update","committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}}' >"$T/jobs"
run_rq run --repo-root="$T/root" "$T/jobs"
check_eq "run: job ok" "ok true" "$(jq -r '"\(.status) \(.applied)"' <<<"$OUT")"
check_eq "run: topic moved to the new id" "$(jq -r '.updates[0].new' <<<"$OUT")" \
	"$(git -C "$T/root/r" rev-parse topic)"
check "run: git refs verify" git -C "$T/root/r" refs verify

# formats replayq does not handle are named (SHA-256: until rq_repofmt.h's
# RQ_REPOFMT_SHA256 is 1, which sets RQ_TEST_SHA256=1 here)
if [ "${RQ_TEST_SHA256:-0}" != 1 ]; then
	git init -q --object-format=sha256 "$T/root/s256"
	commit_file "$T/root/s256" a a a
	run_rq -C "$T/root/s256" replay --onto HEAD HEAD~..HEAD
	check_eq "sha256: exit 128" 128 "$RC"
	check_eq "sha256: named" "fatal: unsupported repository format: extensions.objectFormat=sha256" "$ERR"
	printf '%s\n' '{"id":"j2","repo":"s256","mode":"onto","target":"HEAD","revisions":["HEAD"]}' >"$T/jobs"
	run_rq run --repo-root="$T/root" "$T/jobs"
	check_eq "sha256 job: unsupported_repository" \
		"error unsupported_repository unsupported repository format: extensions.objectFormat=sha256" \
		"$(jq -r '"\(.status) \(.error.code) \(.error.message)"' <<<"$OUT")"
fi
mkrepo "$T/bogus"
git -C "$T/bogus" config extensions.refStorage bogus
run_rq -C "$T/bogus" replay --onto main main..topic
check_eq "refStorage=bogus: named, as upstream" \
	"$(cd "$T/bogus" && git replay --onto main main..topic 2>&1 >/dev/null)" "$ERR"
check_contains "refStorage=bogus: git's words" "invalid value for 'extensions.refstorage': 'bogus'" "$ERR"
finish
