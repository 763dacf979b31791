#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Object formats (issue 42): replayq works on SHA-1 repositories, and on
# SHA-256 ones once rq_repofmt.h's RQ_REPOFMT_SHA256 is 1 (RQ_TEST_SHA256=1
# here), and refuses the others before it reads a ref or an object, with
# exit 128 and error code unsupported_repository (`replayq replay` and a
# job through `replayq run`), and nothing in the repository changed.
# By name, where upstream git accepts the repository:
#   - a SHA-256 repository while RQ_REPOFMT_SHA256 is 0 (made by upstream
#     git 2.55; with it 1: replayed as upstream replays it);
#   - extensions.compatObjectFormat (a repository that keeps both hashes:
#     out of scope), in a SHA-1 and in a SHA-256 repository.
# In upstream's words and exit status, byte for byte, where it refuses:
#   - objectFormat's value spelled otherwise ("SHA1"), or missing: git's
#     "invalid value" ("missing value") and the config line it is on, the
#     file named as git names it (from a subdirectory, with -C, inside the
#     git directory, GIT_DIR relative and absolute); a value continued on
#     the next line;
#   - core.repositoryformatversion=2; an extension git does not know;
#   - core.repositoryformatversion=0 with an extension git honours only in
#     version 1 (objectFormat, even =sha1; refStorage) (libgit2 1.5 opens
#     such a repository and reads it as SHA-1);
#   - while version 0 with an extension git ignores there still replays as
#     upstream does, and so does a repository when the extensions are in
#     the global configuration (git reads a repository's format from its
#     own config file alone).
# Needs upstream git (every git here is upstream's).
. "$(dirname "$0")/../lib.sh"
if ! upstream_git; then
	finish
fi
upstream_only
export RQ_DATE="@1800000000 +0000"
ROOT=$T/root
mkdir -p "$ROOT"

# mkrepo name [init options]: $ROOT/name, main with two commits, topic one
# more; the formats' settings are then written with `git config --file`
# (git refuses to run in most of them)
mkrepo() {
	local r=$ROOT/$1
	shift
	git init -q -b main "$@" "$r"
	git -C "$r" config gc.auto 0
	git -C "$r" config maintenance.auto false
	commit_file "$r" a 1 c1
	commit_file "$r" b 2 c2
	git -C "$r" checkout -q -b topic
	commit_file "$r" c 3 t1
	git -C "$r" checkout -q main
}
# every file of the repository's git directory, with its content's digest
files() { (cd "$ROOT/$1/.git" && find . -type f -print0 | sort -z | xargs -0 sha1sum); }

# refused name message: `replayq replay` exits 128 with "fatal: <message>"
# and a job gets unsupported_repository with <message>; neither changes a
# file of the repository
refused() {
	local name=$1 msg=$2 before
	before=$(files "$name")
	run_rq -C "$ROOT/$name" replay --onto main main..topic
	check_eq "$name: replay exits 128" 128 "$RC"
	check_eq "$name: replay names the format" "fatal: $msg" "$ERR"
	check_eq "$name: replay prints no update" "" "$OUT"
	printf '%s\n' "{\"id\":\"$name\",\"repo\":\"$name\",\"mode\":\"onto\",\"target\":\"main\",\"revisions\":[\"main..topic\"],\"ref_action\":\"update\"}" >"$T/jobs"
	run_rq run --repo-root="$ROOT" "$T/jobs"
	check_eq "$name: job error unsupported_repository" "error unsupported_repository" \
		"$(jq -r '"\(.status) \(.error.code)"' <<<"$OUT")"
	check_eq "$name: job message" "$msg" "$(jq -r '.error.message' <<<"$OUT")"
	check_eq "$name: nothing in the repository changed" "$before" "$(files "$name")"
}

# as upstream: the same stderr and exit status as upstream `git replay`
as_upstream() {
	local name=$1 up_err up_rc
	up_err=$(cd "$ROOT/$name" && git replay --onto main main..topic 2>&1 >/dev/null)
	up_rc=$?
	run_rq -C "$ROOT/$name" replay --onto main main..topic
	check_eq "$name: exit status as upstream's" "$up_rc" "$RC"
	check_eq "$name: stderr as upstream's" "$up_err" "$ERR"
}

# git_refused name [dir [git options]]: upstream's stderr and exit status
# (128) in $ROOT/name (or dir, with git's options before `replay`), byte
# for byte; a job gets unsupported_repository with git's two lines (the
# second without "fatal: "); nothing changed
git_refused() {
	local name=$1 dir=${2:-$ROOT/$1} before up_err up_rc
	shift $(($# < 2 ? $# : 2))
	before=$(files "$name")
	up_err=$(cd "$dir" && git "$@" replay --onto main main..topic 2>&1 >/dev/null)
	up_rc=$?
	check_eq "$name: upstream refuses it" 128 "$up_rc"
	run_rq -C "$dir" "$@" replay --onto main main..topic
	check_eq "$name ($dir $*): exit status as upstream's" "$up_rc" "$RC"
	check_eq "$name ($dir $*): stderr as upstream's" "$up_err" "$ERR"
	check_eq "$name: nothing printed" "" "$OUT"
	[ "$dir" = "$ROOT/$name" ] && [ $# = 0 ] || return 0
	printf '%s\n' "{\"id\":\"$name\",\"repo\":\"$name\",\"mode\":\"onto\",\"target\":\"main\",\"revisions\":[\"main..topic\"],\"ref_action\":\"update\"}" >"$T/jobs"
	run_rq run --repo-root="$ROOT" "$T/jobs"
	check_eq "$name: job error unsupported_repository" "error unsupported_repository" \
		"$(jq -r '"\(.status) \(.error.code)"' <<<"$OUT")"
	check_eq "$name: job message, git's" "$(sed -e '1s/^error: //' -e 's/^fatal: //' <<<"$up_err")" \
		"$(jq -r '.error.message' <<<"$OUT")"
	check_eq "$name: nothing in the repository changed" "$before" "$(files "$name")"
}

mkrepo s256 --object-format=sha256
if [ "${RQ_TEST_SHA256:-0}" = 1 ]; then
	UP=$(cd "$ROOT/s256" && GIT_COMMITTER_DATE=$RQ_DATE git replay --ref-action=print \
		--onto main main..topic)
	run_rq -C "$ROOT/s256" replay --ref-action=print --onto main main..topic
	check_eq "s256: replayed" 0 "$RC"
	check_eq "s256: the updates upstream prints" "$UP" "$OUT"
else
	refused s256 "unsupported repository format: extensions.objectFormat=sha256"
fi

mkrepo compat
git -C "$ROOT/compat" config core.repositoryformatversion 1
git -C "$ROOT/compat" config extensions.compatObjectFormat sha256
refused compat "unsupported repository format: extensions.compatObjectFormat=sha256"

mkrepo s256compat --object-format=sha256
git -C "$ROOT/s256compat" config extensions.compatObjectFormat sha1
if [ "${RQ_TEST_SHA256:-0}" = 1 ]; then
	refused s256compat "unsupported repository format: extensions.compatObjectFormat=sha1"
else
	refused s256compat "unsupported repository format: extensions.objectFormat=sha256"
fi

mkrepo upper
git -C "$ROOT/upper" config core.repositoryformatversion 1
git -C "$ROOT/upper" config extensions.objectFormat SHA1
git_refused upper
# the file as git names it, wherever it is run from
mkdir -p "$ROOT/upper/sub"
git_refused upper "$ROOT/upper/sub"
git_refused upper "$ROOT" -C upper
git_refused upper "$ROOT/upper/.git"
git_refused upper "$ROOT/upper/.git/refs"
GIT_DIR=.git git_refused upper
GIT_DIR=$ROOT/upper/.git git_refused upper "$T"
mkrepo missing
git -C "$ROOT/missing" config core.repositoryformatversion 1
printf '[extensions]\n\tobjectFormat\n' >>"$ROOT/missing/.git/config"
git_refused missing
# a value continued on the next line: the line it ends on, as git counts
mkrepo cont
git -C "$ROOT/cont" config core.repositoryformatversion 1
printf '[extensions]\n\trefStorage = fi\\\nles2\n' >>"$ROOT/cont/.git/config"
git_refused cont
mkrepo v2
git -C "$ROOT/v2" config core.repositoryformatversion 2
git_refused v2
mkrepo unknown
git -C "$ROOT/unknown" config core.repositoryformatversion 1
git config --file "$ROOT/unknown/.git/config" extensions.foo yes
git_refused unknown
git config --file "$ROOT/unknown/.git/config" extensions.bar no
git_refused unknown

mkrepo v0sha256
git config --file "$ROOT/v0sha256/.git/config" core.repositoryformatversion 0
git config --file "$ROOT/v0sha256/.git/config" extensions.objectFormat sha256
refused v0sha256 "repo version is 0, but v1-only extension found:
	objectformat"
as_upstream v0sha256

mkrepo v0sha1
git config --file "$ROOT/v0sha1/.git/config" core.repositoryformatversion 0
git config --file "$ROOT/v0sha1/.git/config" extensions.objectFormat sha1
refused v0sha1 "repo version is 0, but v1-only extension found:
	objectformat"
as_upstream v0sha1
git config --file "$ROOT/v0sha1/.git/config" extensions.refStorage files
refused v0sha1 "repo version is 0, but v1-only extensions found:
	objectformat
	refstorage"
as_upstream v0sha1

# version 0 ignores the extensions it does not know: replayed as upstream
mkrepo v0other
git config --file "$ROOT/v0other/.git/config" core.repositoryformatversion 0
git config --file "$ROOT/v0other/.git/config" extensions.somethingElse yes
UP=$(cd "$ROOT/v0other" && GIT_COMMITTER_DATE=$RQ_DATE git replay --ref-action=print \
	--onto main main..topic)
run_rq -C "$ROOT/v0other" replay --ref-action=print --onto main main..topic
check_eq "v0other: replayed" 0 "$RC"
check_eq "v0other: the updates upstream prints" "$UP" "$OUT"

# a repository's format is its own config file's: extensions in the global
# configuration (libgit2 reads $HOME/.gitconfig) are ignored, as git
# ignores them, in version 0 and in version 1
mkdir -p "$T/home"
printf '[extensions]\n\tobjectFormat = sha256\n\trefStorage = reftable\n' >"$T/home/.gitconfig"
for v in 0 1; do
	mkrepo "global$v"
	git -C "$ROOT/global$v" config core.repositoryformatversion "$v"
	UP=$(cd "$ROOT/global$v" && GIT_CONFIG_GLOBAL=$T/home/.gitconfig \
		GIT_COMMITTER_DATE=$RQ_DATE git replay --ref-action=print --onto main main..topic)
	HOME=$T/home run_rq -C "$ROOT/global$v" replay --ref-action=print --onto main main..topic
	check_eq "global extensions, version $v: replayed" 0 "$RC"
	check_eq "global extensions, version $v: the updates upstream prints" "$UP" "$OUT"
done
finish
