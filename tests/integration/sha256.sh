#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# sha256.sh: object formats at their edges, against upstream `git replay`
# 2.55 (issue 42). Every git here is upstream's.
#
# Always (formats replayq refuses; integration/object_formats has the
# SHA-256 repository itself, compatObjectFormat=sha256, objectFormat=SHA1
# and version 0):
#   - objectFormat=sha512, =sha-256 and empty, and compatObjectFormat=md5:
#     refused as upstream refuses them (exit status 128, stderr byte for
#     byte: "error: invalid value for 'extensions.objectformat': 'sha512'"
#     and "fatal: bad config line N in file .git/config"), nothing printed,
#     nothing changed;
#   - version 0 with objectFormat=sha256 and compatObjectFormat: stderr
#     and exit status byte for byte as upstream's;
#   - in a SHA-1 repository, a 64-digit id (a SHA-1 id and 24 more digits)
#     and its 63-digit prefix are no revisions, a loose ref of 64 digits is
#     a broken ref (upstream's warnings): as upstream, byte for byte.
# With RQ_TEST_SHA256=1 (tests/CMakeLists.txt's option RQ_TEST_SHA256 sets
# it; a notice without), the SHA-256 cases, each byte for byte against
# upstream (stdout, stderr, exit status; refs and reflogs after updates):
#   - abbreviations: the first 40 digits of a commit (an abbreviation in
#     SHA-256, not a full id), 12 digits, the full 64;
#   - a loose ref holding 40 digits is a broken ref, not a padded id (also
#     as --advance's and --ref's ref);
#   - `update` lines of 64 digits; --ref creating a ref: the zero id of 64
#     digits; --advance, --revert, --contained, a conflict;
#   - --ref-action=update: the same refs and reflogs as upstream's, `git
#     fsck --strict` clean;
#   - --jobs=2 over independent branches (part files between workers);
#   - the JSON results (`replay --format=json`, `replayq run`) validate
#     against docs/schema and carry 64-digit ids.
. "$(dirname "$0")/../lib.sh"
if ! upstream_git; then
	finish
fi
upstream_only
# the replays' committer date (commit_file moves GIT_COMMITTER_DATE)
export RQ_DATE="@1800000000 +0000"
ROOT=$T/root
mkdir -p "$ROOT"

# mkrepo name [init options]: $ROOT/name: main with two commits, topic one
# more on main, side two on main~1, clash one that conflicts with main
mkrepo() {
	local r=$ROOT/$1
	shift
	git init -q -b main "$@" "$r"
	git -C "$r" config gc.auto 0
	git -C "$r" config maintenance.auto false
	commit_file "$r" a 1 c1
	git -C "$r" checkout -q -b side
	commit_file "$r" s1 s1 side1
	commit_file "$r" s2 s2 side2
	git -C "$r" checkout -q -b clash main
	commit_file "$r" b other clash
	git -C "$r" checkout -q main
	commit_file "$r" b 2 c2
	git -C "$r" checkout -q -b topic
	commit_file "$r" c 3 t1
	git -C "$r" checkout -q main
}
# every file of the repository's git directory, with its content's digest
files() { (cd "$ROOT/$1/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# same name what args...: `replay args` in $ROOT/name, print mode (unless
# args say otherwise) by both: stdout, stderr and exit status alike
same() {
	local r=$ROOT/$1 what=$2 grc
	shift 2
	(cd "$r" && GIT_COMMITTER_DATE=$RQ_DATE git replay "$@" >"$T/g.out" 2>"$T/g.err")
	grc=$?
	run_rq -C "$r" replay "$@"
	printf '%s' "$ERR" >"$T/q.err"
	check_eq "$what: exit status as upstream's" "$grc" "$RC"
	check_eq "$what: stdout as upstream's" "$(cat "$T/g.out")" "$OUT"
	check_eq "$what: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
}

# --- formats refused ---------------------------------------------------------
section "formats replayq refuses"
# refused_as_upstream name setting value: exit status and stderr as
# upstream's (which refuses too: git's "invalid value" for the setting, in
# lower case, and its value), nothing printed or changed
refused_as_upstream() {
	local name=$1 set=$2 val=$3 before grc
	before=$(files "$name")
	(cd "$ROOT/$name" && git replay --onto main main..topic >/dev/null 2>"$T/g.err")
	grc=$?
	check_eq "$name: upstream refuses it" 128 "$grc"
	run_rq -C "$ROOT/$name" replay --onto main main..topic
	check_eq "$name: exit status as upstream's" "$grc" "$RC"
	check_eq "$name: stderr as upstream's" "$(cat "$T/g.err")" "$ERR"
	check_contains "$name: named" "error: invalid value for 'extensions.${set,,}': '$val'" "$ERR"
	check_eq "$name: nothing printed" "" "$OUT"
	check_eq "$name: nothing changed" "$before" "$(files "$name")"
}
mkrepo sha512
git -C "$ROOT/sha512" config core.repositoryformatversion 1
git -C "$ROOT/sha512" config extensions.objectFormat sha512
refused_as_upstream sha512 objectFormat sha512
mkrepo dashed
git -C "$ROOT/dashed" config core.repositoryformatversion 1
git -C "$ROOT/dashed" config extensions.objectFormat sha-256
refused_as_upstream dashed objectFormat sha-256
mkrepo emptyfmt
git -C "$ROOT/emptyfmt" config core.repositoryformatversion 1
git -C "$ROOT/emptyfmt" config extensions.objectFormat ""
refused_as_upstream emptyfmt objectFormat ""
mkrepo md5compat
git -C "$ROOT/md5compat" config core.repositoryformatversion 1
git -C "$ROOT/md5compat" config extensions.compatObjectFormat md5
refused_as_upstream md5compat compatObjectFormat md5

# version 0 with a v1-only format extension: git's own words
mkrepo v0
git config --file "$ROOT/v0/.git/config" extensions.objectFormat sha256
same v0 "version 0, objectFormat=sha256" --onto main main..topic
check_contains "version 0: names objectformat" "objectformat" "$ERR"
mkrepo v0compat
git config --file "$ROOT/v0compat/.git/config" extensions.compatObjectFormat sha256
same v0compat "version 0, compatObjectFormat=sha256" --onto main main..topic
check_contains "version 0: names compatobjectformat" "compatobjectformat" "$ERR"

# --- ids of the other width in a SHA-1 repository ----------------------------
section "a 64-digit id in a SHA-1 repository"
mkrepo s1 --object-format=sha1
id=$(git -C "$ROOT/s1" rev-parse main)
same s1 "a 64-digit id" --ref-action=print --onto "${id}012345678901234567890123" main..topic
check_eq "a 64-digit id: refused" 128 "$RC"
same s1 "a 63-digit id" --ref-action=print --onto "${id}01234567890123456789012" main..topic
same s1 "the 40-digit id" --ref-action=print --onto "$id" main~1..topic
# a loose ref of 64 digits is a broken ref there, a symbolic ref to it a
# dangling one: skipped with upstream's warnings (twice for a name alone:
# git looks it up again before it dies), none for its reflog
printf '%s012345678901234567890123\n' "$id" >"$ROOT/s1/.git/refs/heads/long"
printf 'ref: refs/heads/long\n' >"$ROOT/s1/.git/refs/heads/tolong"
same s1 "a 64-digit loose ref" --ref-action=print --onto main main..long
check_contains "a 64-digit loose ref: warned" "warning: ignoring broken ref refs/heads/long" "$ERR"
same s1 "a 64-digit loose ref alone" --ref-action=print --onto main long
same s1 "--onto a 64-digit loose ref" --ref-action=print --onto long main..topic
same s1 "a symbolic ref to it" --ref-action=print --onto main main..tolong
same s1 "its reflog" --ref-action=print --onto main long@{1}..topic
rm "$ROOT/s1/.git/refs/heads/long" "$ROOT/s1/.git/refs/heads/tolong"

# --- the SHA-256 cases -------------------------------------------------------
if [ "${RQ_TEST_SHA256:-0}" != 1 ]; then
	echo "# notice: SHA-256 cases skipped (RQ_TEST_SHA256=1, the CMake option RQ_TEST_SHA256)" >&2
	finish
fi
section "SHA-256 repositories"
mkrepo r --object-format=sha256
check_eq "the repository is SHA-256" sha256 "$(object_format "$ROOT/r")"
Z=$(zero_oid "$ROOT/r")
check_eq "its zero id has 64 digits" 64 "${#Z}"
main=$(git -C "$ROOT/r" rev-parse main)
topic=$(git -C "$ROOT/r" rev-parse topic)

same r "onto main" --ref-action=print --onto main main..topic
check "update lines of 64 digits" grep -Eqx "update refs/heads/topic [0-9a-f]{64} $topic" <<<"$OUT"
same r "a 40-digit abbreviation" --ref-action=print --onto "${main:0:40}" main~1..topic
check_eq "a 40-digit abbreviation: resolved" 0 "$RC"
same r "a 12-digit abbreviation" --ref-action=print --onto "${main:0:12}" main~1..topic
same r "the full 64 digits" --ref-action=print --onto "$main" "${topic:0:40}~1..$topic"
same r "--ref creates a ref" --ref-action=print --onto main --ref=refs/heads/new main..topic
check "--ref: the old id is 64 zeros" grep -Eqx "update refs/heads/new [0-9a-f]{64} $Z" <<<"$OUT"
same r "--advance" --ref-action=print --advance main main~1..side
same r "--revert" --ref-action=print --revert main main~1..main
same r "--contained" --ref-action=print --contained --onto main main~1..side
same r "a conflict" --ref-action=print --onto main main~1..clash

# a loose ref of 40 digits (a SHA-1 id, or its first 40 digits) is broken
printf '%s\n' "${topic:0:40}" >"$ROOT/r/.git/refs/heads/short"
same r "a 40-digit loose ref" --ref-action=print --onto main main..short
check "a 40-digit loose ref: refused" test "$RC" -ne 0
same r "--advance a 40-digit loose ref" --ref-action=print --advance short main~1..side
# --ref to it: printed from the zero id; updated, refused as git's lock does
same r "--ref a 40-digit loose ref" --ref-action=print --onto main --ref=refs/heads/short main..topic
cp -a "$ROOT/r" "$ROOT/rb"
same rb "--ref a 40-digit loose ref, update" --onto main --ref=refs/heads/short main..topic
check_eq "--ref a 40-digit loose ref: left as it was" "${topic:0:40}" "$(cat "$ROOT/rb/.git/refs/heads/short")"
rm -rf "$ROOT/rb"
rm "$ROOT/r/.git/refs/heads/short"

# --ref-action=update: the refs and reflogs upstream leaves, fsck clean
cp -a "$ROOT/r" "$ROOT/ru" && cp -a "$ROOT/r" "$ROOT/rg"
(cd "$ROOT/rg" && export GIT_COMMITTER_DATE=$RQ_DATE && git replay --onto main main..topic &&
	git replay --advance main main~1..side)
run_rq -C "$ROOT/ru" replay --onto main main..topic
run_rq -C "$ROOT/ru" replay --advance main main~1..side
check_eq "update: exit 0" 0 "$RC"
check_eq "update: refs and reflogs as upstream's" "$(ref_state "$ROOT/rg" HEAD refs/heads/main refs/heads/topic)" \
	"$(ref_state "$ROOT/ru" HEAD refs/heads/main refs/heads/topic)"
check "update: git fsck --strict" fsck_ok "$ROOT/ru"

# --jobs=2: independent branches, the part files of two workers
for i in 1 2 3 4; do
	git -C "$ROOT/r" checkout -q -b "p$i" main~1
	commit_file "$ROOT/r" "p$i" "p$i" "p$i one"
	commit_file "$ROOT/r" "p$i-2" "p$i" "p$i two"
done
git -C "$ROOT/r" checkout -q main
(cd "$ROOT/r" && GIT_COMMITTER_DATE=$RQ_DATE git replay --ref-action=print --onto main ^main p1 p2 p3 p4 \
	>"$T/g.out" 2>"$T/g.err")
run_rq -C "$ROOT/r" replay --ref-action=print --jobs=2 --onto main ^main p1 p2 p3 p4
check_eq "--jobs=2: exit 0" 0 "$RC"
check_eq "--jobs=2: stdout as upstream's" "$(cat "$T/g.out")" "$OUT"
cp -a "$ROOT/r" "$ROOT/rj"
run_rq -C "$ROOT/rj" replay --jobs=2 --onto main ^main p1 p2 p3 p4
check "--jobs=2 update: git fsck --strict" fsck_ok "$ROOT/rj"

# the JSON results against docs/schema, with ids of 64 digits
section "JSON results"
export REPLAYQ_TEST_JSON_DIR=${REPLAYQ_TEST_JSON_DIR:-$T/docs/integration-sha256}
run_rq -C "$ROOT/r" replay --ref-action=print --format=json --onto main main..topic
check_eq "json: exit 0" 0 "$RC"
check "json: the update's new id has 64 digits" grep -Eq '"new":"[0-9a-f]{64}"' <<<"$OUT"
run_rq -C "$ROOT/r" replay --ref-action=print --format=json --onto main main~1..clash
check_eq "json conflict: exit 1" 1 "$RC"
check "json conflict: the commit has 64 digits" grep -Eq '"commit":"[0-9a-f]{64}"' <<<"$OUT"
printf '%s\n' '{"v":1,"id":"j1","repo":"r","mode":"onto","target":"main","revisions":["main..topic"],"ref":"refs/heads/fromjob","ref_action":"update","committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}}' >"$T/jobs"
run_rq run --repo-root="$ROOT" "$T/jobs"
check_eq "job: ok" ok "$(jq -r .status <<<"$OUT")"
check_eq "job: the ref made at the result's id" "$(jq -r '.updates[0].new' <<<"$OUT")" \
	"$(git -C "$ROOT/r" rev-parse -q --verify fromjob)"
check_eq "job: the old id is the zero id" "$Z" "$(jq -r '.updates[0].old' <<<"$OUT")"
mkdir -p "$T/mine" && ln -s "$REPLAYQ_TEST_JSON_DIR" "$T/mine/integration-sha256"
out=$(/usr/bin/python3 "$(dirname "$0")/../schema_check.py" "$(dirname "$0")/../../docs/schema" "$T/mine" 2>&1)
echo "$out" | tail -5
check_contains "every result validates against docs/schema" "schema check ok" "$out"
finish
