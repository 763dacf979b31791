#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Remembered renames against upstream git replay, on generated sequences:
# upstream renames files (with edits, some into another directory, some
# directories whole), then a topic of commits that edit, cut down, revert,
# delete and re-add the old names, or add files to renamed directories. A
# replay remembers upstream's renames from pick to pick (merge-ort's cached
# pairs); each sequence is replayed by both tools with the same committer,
# with merge.directoryRenames unset, "true" and "false": the same stdout,
# exit status and first line of stderr. Needs upstream git (skipped with a
# notice without it).
. "$(dirname "$0")/../lib.sh"

upstream_git || {
	finish
}
N=${RQ_REMEMBER_SEEDS:-40}
export GIT_COMMITTER_DATE="@1800000000 +0000"

# rnd: the next number of a small LCG (seeded per sequence)
rnd() {
	RNG=$(((RNG * 1103515245 + 12345) % 2147483648))
	echo $((RNG / 65536 % $1))
}
lines() { seq "$1" "$2" | sed 's/$/ some words on this line/'; }

make_sequence() { # make_sequence dir seed
	local r=$1 f k
	RNG=$2
	git init -q -b main "$r"
	mkdir -p "$r/src" "$r/doc"
	for f in a b c; do lines 1 $((20 + $(rnd 30))) >"$r/src/$f.txt"; done
	lines 1 15 >"$r/doc/guide.txt"
	git -C "$r" add -A && tick && git -C "$r" commit -q -m base
	git -C "$r" checkout -q -b topic
	for k in $(seq 1 $((2 + $(rnd 5)))); do
		f=src/$(echo a b c | cut -d' ' -f$((1 + $(rnd 3)))).txt
		case $(rnd 7) in
		6) # cut down, then revert that (the pattern remembered renames change)
			[ -f "$r/$f" ] || continue
			head -n $((1 + $(rnd 3))) "$r/$f" >"$r/t" && mv "$r/t" "$r/$f"
			git -C "$r" add -A && tick && git -C "$r" commit -q -m "topic $k: cut $f"
			tick && git -C "$r" revert --no-edit HEAD >/dev/null 2>&1
			continue
			;;
		0) [ -f "$r/$f" ] && head -n $((1 + $(rnd 4))) "$r/$f" >"$r/t" && mv "$r/t" "$r/$f" ;;
		1) git -C "$r" log -1 --format=%s | grep -q '^Revert' || { tick && git -C "$r" revert --no-edit HEAD >/dev/null 2>&1 && continue; } ;;
		2) [ -f "$r/$f" ] && sed -i "$((1 + $(rnd 3)))s/\$/ edited by topic $k/" "$r/$f" ;;
		3) git -C "$r" rm -q --ignore-unmatch "$f" ;;
		4) lines 100 $((105 + $(rnd 10))) >"$r/$f" ;; # re-add (or replace) the old name
		5) lines 1 $((5 + $(rnd 5))) >"$r/doc/new$k.txt" ;;
		esac
		git -C "$r" add -A && tick && git -C "$r" commit -q --allow-empty -m "topic $k"
	done
	git -C "$r" checkout -q main
	# upstream: renames with edits (a line added at the top), sometimes a
	# move to another directory, sometimes the whole doc directory
	for f in a b c; do
		[ "$f" != a ] && [ "$(rnd 3)" = 0 ] && continue # a always
		local to=src/${f}2.txt
		[ "$(rnd 2)" = 0 ] && mkdir -p "$r/lib" && to=lib/$f.txt
		git -C "$r" mv "src/$f.txt" "$to"
		# a header of 6-15 lines: more than is left of a file the topic cut down
		{ seq 1 $((6 + $(rnd 10))) | sed "s/^/upstream header of $f, line /"; cat "$r/$to"; } >"$r/t" &&
			mv "$r/t" "$r/$to"
	done
	[ "$(rnd 2)" = 0 ] && git -C "$r" mv doc manual
	git -C "$r" add -A && tick && git -C "$r" commit -q -m "upstream renames"
}

SAME=0 CLEANS=0
for s in $(seq 1 "$N"); do
	r=$T/s$s
	make_sequence "$r" "$s"
	[ "$s" != 1 ] || check_ref_format "$r"
	for dr in "" true false; do
		if [ -n "$dr" ]; then git -C "$r" config merge.directoryRenames "$dr"; fi
		want=$("$UPSTREAM_GIT" -C "$r" replay --ref-action=print --onto main main~1..topic 2>"$T/g.err")
		wrc=$?
		run_rq -C "$r" replay --ref-action=print --onto main main~1..topic
		a="$wrc $want $(head -1 "$T/g.err")" b="$RC $OUT $(head -1 <<<"$ERR")"
		check_eq "seed $s (directoryRenames=${dr:-unset}): as upstream git replay" "$a" "$b"
		[ "$a" != "$b" ] || SAME=$((SAME + 1))
		case $RC in 0) CLEANS=$((CLEANS + 1)) ;; esac
	done
	rm -rf "$r"
done
echo "remember: $N sequences x 3 settings, $SAME of $((N * 3)) as upstream ($CLEANS clean)"
finish
