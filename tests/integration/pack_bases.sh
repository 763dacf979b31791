#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The first new version of a large file is packed as a delta against a
# version of it the repository's packs hold whole (its entry copied into
# the replay's pack, as `git index-pack --fix-thin` completes a thin pack),
# not compressed whole: same ids as git, a valid pack, the right bases,
# alone and across forked workers; a side held only as a delta is not
# taken, nor is a small file's.
. "$(dirname "$0")/../lib.sh"

# 2,000 numbered lines (about 70 KB), line $1 saying $2 instead
big_file() {
	awk -v n=2000 -v at="$1" -v what="$2" \
		'BEGIN { for (i = 1; i <= n; i++) print (i == at ? what : "line " i " of a large source file") }'
}

# A repository: big.c and big2.c (large), small.c; a topic that changes the
# top of each, main that changes the bottom of each, then everything
# repacked, each version whole or a delta as git chooses.
make_repo() {
	local r=$1
	git init -q -b main "$r"
	big_file 0 "" >"$r/big.c"
	big_file 0 "" >"$r/big2.c"
	printf 'small\nfile\n' >"$r/small.c"
	git -C "$r" add . && git -C "$r" commit -q -m base
	git -C "$r" tag base
	git -C "$r" checkout -q -b topic
	big_file 10 "topic one" >"$r/big.c"
	git -C "$r" commit -q -am "topic 1"
	big_file 10 "topic one" | sed 's/^line 20 of/line twenty of/' >"$r/big.c"
	big_file 30 "topic two" >"$r/big2.c"
	printf 'small\nfile\ntopic\n' >"$r/small.c"
	git -C "$r" commit -q -am "topic 2"
	git -C "$r" checkout -q main
	big_file 1990 "main one" >"$r/big.c"
	big_file 1990 "main two" >"$r/big2.c"
	printf 'main\nsmall\nfile\n' >"$r/small.c"
	git -C "$r" commit -q -am "main moves"
	git -C "$r" repack -q -a -d -f
}

# whole IDX-OR-VERIFY-OUTPUT ID: 1 when the pack holds the object whole
is_whole() { awk -v id="$2" '$1 == id { print (NF == 5) }' "$1"; }
delta_base() { awk -v id="$2" '$1 == id && NF == 7 { print $7 }' "$1"; }

R=$T/repo
make_repo "$R"
check_ref_format "$R"
export RQ_DATE="@1800000000 +0000"
P=$R/.git/objects/pack
BEFORE=$(ls "$P"/*.idx | sort)
git -C "$R" verify-pack -v $BEFORE >"$T/vp-old"

upstream_git || true
run_rq -C "$R" replay --ref-action=print --onto main base..topic
check_eq "replay: exit 0" 0 "$RC"
if [ -n "${UPSTREAM_GIT:-}" ]; then
	UP=$(GIT_COMMITTER_DATE=$RQ_DATE "$UPSTREAM_GIT" -C "$R" replay --ref-action=print --onto main base..topic)
	check_eq "replay: the updates upstream git replay prints" "$UP" "$OUT"
fi
NEW=$(comm -13 <(echo "$BEFORE") <(ls "$P"/*.idx | sort))
check_eq "one new pack" 1 "$(echo "$NEW" | grep -c .)"
check "the new pack verifies" git -C "$R" verify-pack "$NEW"
check "fsck" git -C "$R" fsck --strict --no-progress --no-dangling
git -C "$R" verify-pack -v "$NEW" >"$T/vp-new"
TIP=$(echo "$OUT" | awk '{ print $3 }')
# big.c first changes in pick 1, big2.c in pick 2: the first new version of
# each is a delta against one of the merge's sides, which the repository's
# pack holds whole, copied whole into the new one
for f in big.c big2.c; do
	if [ $f = big.c ]; then pick=$TIP~1 theirs=topic~1; else pick=$TIP theirs=topic; fi
	id=$(git -C "$R" rev-parse "$pick:$f")
	base=$(delta_base "$T/vp-new" "$id")
	check "$f: a delta in the new pack" test -n "$base"
	sides=$(git -C "$R" rev-parse "$pick~1:$f" "$theirs:$f" "$theirs~1:$f")
	check "$f: against one of the merge's sides" bash -c "grep -qx '$base' <<<'$sides'"
	check_eq "$f: the base is whole in the repository's pack" 1 "$(is_whole "$T/vp-old" "$base")"
	check_eq "$f: and whole in the new pack" 1 "$(is_whole "$T/vp-new" "$base")"
done
# big.c's second new version is a delta against the first (the store's)
FIRST=$(git -C "$R" rev-parse "$TIP~1:big.c")
SECOND=$(git -C "$R" rev-parse "$TIP:big.c")
check_eq "big.c, pick 2: a delta against pick 1's" "$FIRST" "$(delta_base "$T/vp-new" "$SECOND")"
# the contents are the merges git makes
check_eq "big.c: merged" \
	"$(big_file 10 'topic one' | sed -e 's/^line 20 of/line twenty of/' -e 's/^line 1990 of a large source file$/main one/')" \
	"$(git -C "$R" cat-file blob "$SECOND")"
check_eq "big2.c: merged" \
	"$(big_file 30 'topic two' | sed 's/^line 1990 of a large source file$/main two/')" \
	"$(git -C "$R" cat-file blob "$TIP:big2.c")"
# small.c is compressed whole: no base taken for it
check_eq "small.c: whole" 1 "$(is_whole "$T/vp-new" "$(git -C "$R" rev-parse "$TIP:small.c")")"
check "no litter" no_litter "$R"

# the same with forked workers (each one's part file carries its bases)
R2=$T/repo2
make_repo "$R2"
git -C "$R2" branch topic-b topic~1
run_rq -C "$R2" replay --ref-action=print --jobs=2 --onto main ^base topic topic-b
check_eq "jobs=2: exit 0" 0 "$RC"
if [ -n "${UPSTREAM_GIT:-}" ]; then
	UP=$(GIT_COMMITTER_DATE=$RQ_DATE "$UPSTREAM_GIT" -C "$R2" replay --ref-action=print --onto main ^base topic topic-b)
	check_eq "jobs=2: the updates upstream git replay prints" "$UP" "$OUT"
fi
check "jobs=2: fsck" git -C "$R2" fsck --strict --no-progress --no-dangling
check "jobs=2: no litter" no_litter "$R2"

# a side held only as a delta is not taken: the new blob is compressed
# whole (a longer version elsewhere makes git keep that one whole and every
# side's as a delta against it)
R3=$T/repo3
make_repo "$R3"
git -C "$R3" checkout -q -b wide base
awk 'BEGIN { for (i = 1; i <= 2600; i++) print "line " i " of a large source file" }' >"$R3/big.c"
git -C "$R3" commit -q -am wide
git -C "$R3" checkout -q main
git -C "$R3" repack -q -a -d -f
git -C "$R3" verify-pack -v "$R3"/.git/objects/pack/*.idx >"$T/vp3-old"
SIDES3=$(git -C "$R3" rev-parse main:big.c topic~1:big.c base:big.c)
nwhole=0
for id in $SIDES3; do nwhole=$((nwhole + $(is_whole "$T/vp3-old" "$id"))); done
check_eq "premise: no side's big.c is whole in the repository's pack" 0 "$nwhole"
BEFORE3=$(ls "$R3"/.git/objects/pack/*.idx | sort)
run_rq -C "$R3" replay --ref-action=print --onto main base..topic
check_eq "sides all deltas: exit 0" 0 "$RC"
NEW3=$(comm -13 <(echo "$BEFORE3") <(ls "$R3"/.git/objects/pack/*.idx | sort))
git -C "$R3" verify-pack -v "$NEW3" >"$T/vp3-new"
TIP3=$(echo "$OUT" | awk '{ print $3 }')
check_eq "sides all deltas: the new big.c is whole" 1 \
	"$(is_whole "$T/vp3-new" "$(git -C "$R3" rev-parse "$TIP3~1:big.c")")"
check_eq "sides all deltas: no side copied" "" \
	"$(awk '$2 == "blob" { print $1 }' "$T/vp3-new" | grep -xF "$SIDES3")"
check "sides all deltas: fsck" git -C "$R3" fsck --strict --no-progress --no-dangling
finish
