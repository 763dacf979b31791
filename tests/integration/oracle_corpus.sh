#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# oracle_corpus.sh: replayq against upstream `git replay` on real history,
# byte for byte: every non-merge commit of ../shared/corpus/jansson.bundle
# and hiredis.bundle (its branches and tags) replayed onto its own parent,
# with --advance, and reverted.
#
# The commits are cut into chains: a commit continues the chain its parent
# ends when that parent is no merge either (merges cannot be replayed), so
# that a chain P..T is linear and replaying it onto P puts every commit onto
# (the new form of) its own parent. Each chain T gets the branches c/<i> at
# T and a/<i> at P, and both tools run, in print mode:
#   --onto P ^P c/<i> c/<j> ...   every chain, those with the same P in one
#                                 call (the commits' new ids on stdout)
#   --advance a/<i> a/<i>..c/<i>  one chain a call
#   --revert c/<i> a/<i>..c/<i>   one chain a call (git's revert messages,
#                                 the current author, the extra headers)
# with the same committer and author; stdout, stderr and exit status must be
# the same. Every call costs a process of each tool (the sanitizer build's
# start-up is most of it), so the suite takes a third of each: with
# RQ_CORPUS_STRIDE=S (default 3), --onto for every S-th parent, --revert for
# every 2S-th chain and --advance for every 4S-th (offset: other chains);
# RQ_CORPUS_ALL=1 (S=1, every chain in every mode: 1,329 calls) runs all.
# Skipped with a notice where the corpus or upstream git is absent. In the
# @sha256 pass the corpus is a SHA-256 copy of the bundles (corpus_repo in
# tests/lib.sh: converted once, checked object by object, cached).
. "$(dirname "$0")/../lib.sh"

if ! upstream_git; then
	finish
fi
S=${RQ_CORPUS_STRIDE:-3}
ONTO_S=$S REV_S=$((2 * S)) ADV_S=$((4 * S)) ADV_OFF=$S
[ "${RQ_CORPUS_ALL:-0}" = 1 ] && ONTO_S=1 REV_S=1 ADV_S=1 ADV_OFF=0
export GIT_COMMITTER_DATE="@1800000000 +0000" GIT_AUTHOR_DATE="@1800000100 +0000"
CALLS=0
PICKS=0

# same repo what args...: both tools, byte for byte
same() {
	local repo=$1 what=$2 grc
	shift 2
	"$UPSTREAM_GIT" -C "$repo" replay --ref-action=print "$@" >"$T/g.out" 2>"$T/g.err"
	grc=$?
	"$REPLAYQ" -C "$repo" replay --ref-action=print "$@" >"$T/q.out" 2>"$T/q.err"
	RC=$?
	CALLS=$((CALLS + 1))
	if [ "$RC" = "$grc" ] && cmp -s "$T/g.out" "$T/q.out" && cmp -s "$T/g.err" "$T/q.err"; then
		ok
		return
	fi
	not_ok "$what: replay $*: exit $RC (git $grc)"
	diff "$T/g.out" "$T/q.out" | head -5 >&2
	diff "$T/g.err" "$T/q.err" | head -5 >&2
}

# chains repo: "<parent> <first> <tip> <length>" of each chain, parents first
chains() {
	git -C "$1" rev-list --all --reverse --topo-order --parents | awk '
	{
		np[$1] = NF - 1
		if (NF != 2)
			next
		if (($2 in ends) && np[$2] == 1) {
			c = ends[$2]; delete ends[$2]
		} else {
			c = ++n; par[c] = $2; first[c] = $1; len[c] = 0
		}
		tip[c] = $1; len[c]++; ends[$1] = c
	}
	END { for (i = 1; i <= n; i++) print par[i], first[i], tip[i], len[i] }'
}

for name in jansson hiredis; do
	if [ ! -f "$CORPUS/$name.bundle" ]; then
		echo "# notice: $CORPUS/$name.bundle not found: its replays skipped" >&2
		continue
	fi
	R=$T/$name.git
	corpus_repo "$name" "$R" || {
		not_ok "$name: the corpus in $OBJECT_FORMAT"
		continue
	}
	check_object_format "$R"
	chains "$R" >"$T/chains"
	awk '{ print "create refs/heads/c/" NR " " $3; print "create refs/heads/a/" NR " " $1 }' \
		"$T/chains" | git -C "$R" update-ref --stdin
	# --onto: the chains of one parent in one call
	awk '{ refs[$1] = refs[$1] " c/" NR } END { for (p in refs) print p refs[p] }' "$T/chains" |
		sort >"$T/by-parent"
	k=0
	while read -r p refs; do
		k=$((k + 1))
		[ $((k % ONTO_S)) = 0 ] || continue
		# shellcheck disable=SC2086
		same "$R" "$name: onto its own parent" --onto "$p" "^$p" $refs
		# shellcheck disable=SC2086
		PICKS=$((PICKS + $(git -C "$R" rev-list --count "^$p" $refs)))
	done <"$T/by-parent"
	i=0
	while read -r _ _ _ n; do
		i=$((i + 1))
		if [ $((i % REV_S)) = 0 ]; then
			same "$R" "$name: revert" --revert "c/$i" "a/$i..c/$i"
			PICKS=$((PICKS + n))
		fi
		if [ $(((i + ADV_OFF) % ADV_S)) = 0 ]; then
			same "$R" "$name: advance" --advance "a/$i" "a/$i..c/$i"
			PICKS=$((PICKS + n))
		fi
	done <"$T/chains"
	rm -rf "$R"
done
echo "# $CALLS calls compared, $PICKS picks" >&2
finish
