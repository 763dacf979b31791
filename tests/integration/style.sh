#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Style: every C file is formatted with the project's .clang-format.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.." || exit 1
if ! command -v clang-format >/dev/null; then
	echo "clang-format is not installed" >&2
	not_ok "clang-format available"
	finish
fi
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find core queue worker tests -name '*.[ch]'); do
	check "formatted: $f" clang-format --dry-run --Werror "$f"
done
# Issue 42: the engine carries replayq's ids (rq_oid). In these files
# libgit2's git_oid is left only where they call libgit2 (converted at the
# call), in the files listed; the commit reader and the odb reads of wave 2
# shorten the list.
oid_libgit2=" core/replay/rq_parallel.c core/replay/rq_replay.c core/replay/rq_replay_pick.c
 core/replay/rq_train.c core/revs/rq_revat.c core/revs/rq_revfilter.c core/revs/rq_revname.c
 core/revs/rq_revs.c core/revs/rq_walk.c core/refs/rq_refs.c core/base/rq_reach.c
 queue/rq_refproto.c "
for f in $(git ls-files core/replay core/revs core/sign queue worker 'core/base/rq_oidmap.*' \
	'core/base/rq_reach.*' core/base/rq_hindex.h core/refs/rq_ref_update.h 'core/refs/rq_refs.*' \
	'core/refs/rq_refmark.*' 'core/refs/rq_refspace.*' core/odb/rq_odb.h core/odb/rq_odb_mem.h \
	core/odb/rq_odb_view.h | grep -v rq_pathfilter); do
	case "$oid_libgit2" in *[[:space:]]"$f"[[:space:]]*) continue ;; esac
	check "no git_oid (rq_oid): $f" sh -c '! grep -qw git_oid "$1"' sh "$f"
done
finish
