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

# No replayq temporary object directory and no loose object left behind.
no_litter() {
	local gd
	gd=$(git -C "$1" rev-parse --git-dir)
	case "$gd" in /*) ;; *) gd="$1/$gd" ;; esac
	! ls -d "$gd"/objects/replayq-tmp-* >/dev/null 2>&1
}
