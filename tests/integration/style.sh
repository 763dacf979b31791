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
finish
