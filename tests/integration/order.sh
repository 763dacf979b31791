#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# order.sh: several branches in one replay: the order of the ref updates,
# commits shared between branches, --contained and --ref-action=update.
#
# Each seed generates (with `git fast-import`) a base, an upstream of 1-3
# commits and 2-5 topic branches given on the command line: some start at
# the base, some start at a commit of another topic branch (stacked, so the
# two share commits), some have no commits of their own (their tip is a
# commit of another branch: in its middle, or its very tip). Every topic
# commit adds its own file, except that some add a file that upstream adds
# too, byte for byte, so that their picks become empty and are dropped.
# Commit dates are all equal, or drawn from three values (ties, and children
# older than their parents), or increasing, depending on the seed. Local
# branches that are not given (side/*, old) point into the range or at the
# base.
#
# Checked, against git's own answers (rev-list, patch-id, merge-base):
#   (a) --ref-action=print lists exactly the given branches, in the order of
#       their tips in `git rev-list --reverse --topo-order <same args>`,
#       branches on the same tip in descending name order, each with its old
#       tip;
#   (b) every new tip sits on upstream, over as many commits as the branch
#       had minus the dropped ones, with the same patch ids, authors and
#       messages, the replaying committer, and the tree that git's merge-ort
#       gives (`git merge-tree --write-tree upstream <branch>`: the topic
#       files are disjoint from upstream's, so picking the commits one by one
#       gives the same tree);
#   (c) a commit shared by two branches is replayed once: the new tips share
#       as many commits as the old ones did (minus drops); equal tips stay
#       equal;
#   (d) --contained also updates every local branch that points into the
#       range (and no other), in the same order, with consistent ids;
#   (e) without --ref-action the refs really move to the printed ids, the
#       others stay, and each moved ref's reflog says
#       "replay --onto <full upstream id>" by the replaying committer.
#
# Environment:
#   RQ_ORDER_SEEDS=N            number of seeds (default 30)
#   RQ_ORDER_FIRST=S            first seed (default 1)
# (A detached HEAD is left out here: upstream git replay updates it when
# it is named or --contained reaches it; integration/detached_head checks
# that against upstream.)
. "$(dirname "$0")/../lib.sh"

SEEDS=${RQ_ORDER_SEEDS:-20}
FIRST=${RQ_ORDER_FIRST:-1}
POOL=(alpha beta topic/one topic/two zeta m feature-9 Upper z/last x)

# --- generator (bash RANDOM seeded per seed; builds a fast-import stream)

next_date() {
	case $DM in
	0) D=1700000000 ;;
	1) D=$((1700000000 + (RANDOM % 3) * 60)) ;;
	*) D=$((D + 60)) ;;
	esac
}
# emit ref mark from path content message
emit() {
	local msg="$6"$'\n' content="$5"$'\n'
	next_date
	S+="commit refs/heads/$1"$'\n'"mark :$2"$'\n'
	S+="author A U Thor <author@example.com> $D +0000"$'\n'
	S+="committer C O Mitter <committer@example.com> $D +0000"$'\n'
	S+="data ${#msg}"$'\n'"$msg"
	[ -n "$3" ] && S+="from :$3"$'\n'
	S+="M 100644 inline $4"$'\n'"data ${#content}"$'\n'"$content"$'\n'
}

gen_repo() {
	local r=$1 i j k n p start name mark=1 nb chain
	local -a CHAIN=() shuffled=()
	RANDOM=$SEED
	DM=$((SEED % 3)) D=1700000000 S="" NDUP=0
	emit base 1 "" README "base $SEED" "base"
	# shuffle the name pool
	shuffled=("${POOL[@]}")
	for ((i = ${#shuffled[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		name=${shuffled[i]} shuffled[i]=${shuffled[j]} shuffled[j]=$name
	done
	nb=$((2 + RANDOM % 4))
	BRANCHES=()
	ALLMARKS=()
	for ((i = 0; i < nb; i++)); do
		name=${shuffled[i]}
		BRANCHES+=("$name")
		if ((i > 0 && RANDOM % 2)); then
			j=$((RANDOM % i))
			read -r -a p <<<"${CHAIN[j]}"
			if ((RANDOM % 3 == 0)); then
				# on the very tip of the other branch
				k=$((${#p[@]} - 1)) n=0
			else
				k=$((RANDOM % ${#p[@]})) n=$((RANDOM % 4))
			fi
			start=${p[k]} chain="${p[*]:0:k+1}"
		else
			start=1 chain="" n=$((1 + RANDOM % 4))
		fi
		if ((n == 0)); then
			S+="reset refs/heads/$name"$'\n'"from :$start"$'\n\n'
		fi
		for ((k = 1; k <= n; k++)); do
			mark=$((mark + 1))
			if ((RANDOM % 6 == 0)); then
				NDUP=$((NDUP + 1))
				emit "$name" $mark "$start" "shared-$NDUP.txt" "shared $NDUP" "dup $NDUP"
			else
				emit "$name" $mark "$start" "f/${name//\//_}-$k.txt" "$name $k $SEED" "$name $k"$'\n\n'"Body of $name $k."
			fi
			start=$mark chain="$chain $mark"
			ALLMARKS+=("$mark")
		done
		CHAIN[i]=$chain
	done
	# upstream: its own files, then the files that some topic commits repeat
	mark=$((mark + 1))
	emit upstream $mark 1 up-1.txt "upstream 1 $SEED" "upstream 1"
	n=$((1 + RANDOM % 3))
	for ((k = 2; k <= n; k++)); do
		mark=$((mark + 1))
		emit upstream $mark $((mark - 1)) "up-$k.txt" "upstream $k" "upstream $k"
	done
	for ((k = 1; k <= NDUP; k++)); do
		mark=$((mark + 1))
		emit upstream $mark $((mark - 1)) "shared-$k.txt" "shared $k" "upstream: shared $k"
	done
	# local branches that are not given: into the range, and at the base
	NSIDE=$((1 + RANDOM % 2))
	for ((k = 1; k <= NSIDE; k++)); do
		S+="reset refs/heads/side/$k"$'\n'"from :${ALLMARKS[RANDOM % ${#ALLMARKS[@]}]}"$'\n\n'
	done
	S+="reset refs/heads/old"$'\n'"from :1"$'\n\n'
	git init -q "$r" && printf '%s' "$S" | git -C "$r" fast-import --quiet || return 1
	# the first seed's repository is in the run's formats
	[ "$SEED" != "$FIRST" ] || check_ref_format "$r"
}

# --- helpers

# non_dup_count repo range...: commits of the range that are not "dup" ones
non_dup_count() {
	local r=$1
	shift
	git -C "$r" rev-list --count --invert-grep --grep='^dup ' "$@" --
}

# check_chain repo label old new: new replays old onto upstream (b).
check_chain() {
	local r=$1 what=$2 old=$3 new=$4 want got
	check "$what: on upstream" git -C "$r" merge-base --is-ancestor "$UP" "$new"
	want=$(git -C "$r" log --reverse -p --format='commit %H' --invert-grep --grep='^dup ' "$BASE..$old" -- |
		git -C "$r" patch-id --stable | cut -d' ' -f1)
	got=$(git -C "$r" log --reverse -p --format='commit %H' "$UP..$new" -- |
		git -C "$r" patch-id --stable | cut -d' ' -f1)
	check_eq "$what: patch ids" "$want" "$got"
	want=$(git -C "$r" log --reverse --format='%an <%ae> %ad|%B' --date=raw \
		--invert-grep --grep='^dup ' "$BASE..$old" --)
	got=$(git -C "$r" log --reverse --format='%an <%ae> %ad|%B' --date=raw "$UP..$new" --)
	check_eq "$what: authors and messages" "$want" "$got"
	check_eq "$what: committer" "" "$(git -C "$r" log --format='%cn <%ce> %cd' --date=raw "$UP..$new" -- |
		grep -v '^Re Player <replayer@example.com> 1800000000 +0200$')"
	# the topic files touch nothing upstream changes, so picking the commits
	# one by one gives the tree of merge-ort's merge of the whole branch
	check_eq "$what: tree" "$(git -C "$r" merge-tree --write-tree "$UP" "$old")" \
		"$(git -C "$r" rev-parse "$new^{tree}")"
}

# expected_updates repo refs...: the refs (full names) that point into the
# range, in update order: by position of their tip in POS, ties in
# descending name order. Reads TIPOF.
expected_updates() {
	local ref
	for ref in "$@"; do
		[ -n "${POS[${TIPOF[$ref]}]:-}" ] && echo "${POS[${TIPOF[$ref]}]} $ref"
	done | LC_ALL=C sort -k1,1n -k2,2r | cut -d' ' -f2
}

# parse_updates "output": NEWOF[ref], OLDOF[ref], and GOT: the refs in order
parse_updates() {
	local kw ref new old
	GOT=""
	while read -r kw ref new old; do
		[ -n "$kw" ] || continue
		if [ "$kw" != update ]; then
			GOT+="${GOT:+$'\n'}BAD LINE: $kw $ref $new $old"
			continue
		fi
		NEWOF[$ref]=$new OLDOF[$ref]=$old
		GOT+="${GOT:+$'\n'}$ref"
	done <<<"$1"
}

export GIT_COMMITTER_NAME="Re Player" GIT_COMMITTER_EMAIL="replayer@example.com"
export GIT_COMMITTER_DATE="@1800000000 +0200"

NBR=0 NEQ=0 NSHARED=0 NCONT=0 NDROPS=0
run_seed() {
	local r=$T/o$SEED b b2 i j ref args=() given=() allrefs=() exp got line mb old_mb
	local -A NEWP=()
	declare -gA POS=() TIPOF=() NEWOF=() OLDOF=()
	POS=() TIPOF=() NEWOF=() OLDOF=()
	rm -rf "$r"
	gen_repo "$r" || {
		not_ok "seed $SEED: cannot generate"
		return
	}
	read -r BASE UP < <(git -C "$r" rev-parse base upstream | tr '\n' ' ')
	# HEAD: unborn, or on a given branch
	case $((SEED % 3)) in
	1) git -C "$r" symbolic-ref HEAD "refs/heads/${BRANCHES[0]}" ;;
	esac
	# the given branches, in a seeded order; some seeds spell "^base b1" as "base..b1"
	given=("${BRANCHES[@]}")
	for ((i = ${#given[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		b=${given[i]} given[i]=${given[j]} given[j]=$b
	done
	if ((SEED % 4 == 3)); then
		args=("base..${given[0]}" "${given[@]:1}")
	else
		args=(^base "${given[@]}")
	fi
	NBR=$((NBR + ${#given[@]})) NDROPS=$((NDROPS + NDUP))

	# positions in git's replay order, and every local branch's tip
	i=0
	while read -r line; do
		POS[$line]=$i
		i=$((i + 1))
	done < <(git -C "$r" rev-list --reverse --topo-order "${args[@]}" --)
	while read -r line ref; do
		TIPOF[$ref]=$line
		allrefs+=("$ref")
	done < <(git -C "$r" for-each-ref --format='%(objectname) %(refname)' refs/heads/)
	local before
	before=$(git -C "$r" for-each-ref --format='%(objectname) %(refname)')

	# (a) print: exactly the given branches, in order
	run_rq -C "$r" replay --ref-action=print --onto upstream "${args[@]}"
	check_eq "seed $SEED: print exit status (${args[*]}): $ERR" 0 "$RC"
	exp=$(expected_updates "${given[@]/#/refs/heads/}")
	parse_updates "$OUT"
	check_eq "seed $SEED: updated refs and their order (${args[*]})" "$exp" "$GOT"
	for b in "${given[@]}"; do
		ref=refs/heads/$b
		NEWP[$ref]=${NEWOF[$ref]:-}
		check_eq "seed $SEED: old id of $b" "${TIPOF[$ref]}" "${OLDOF[$ref]:-}"
		# (b)
		[ -n "${NEWOF[$ref]:-}" ] && check_chain "$r" "seed $SEED: $b" "${TIPOF[$ref]}" "${NEWOF[$ref]}"
	done
	# (c) shared commits are replayed once
	for ((i = 0; i < ${#given[@]}; i++)); do
		for ((j = i + 1; j < ${#given[@]}; j++)); do
			b=refs/heads/${given[i]} b2=refs/heads/${given[j]}
			if [ -z "${NEWP[$b]}" ] || [ -z "${NEWP[$b2]}" ]; then continue; fi
			if [ "${TIPOF[$b]}" == "${TIPOF[$b2]}" ]; then
				check_eq "seed $SEED: ${given[i]} and ${given[j]} stay equal" "${NEWP[$b]}" "${NEWP[$b2]}"
				NEQ=$((NEQ + 1))
				continue
			fi
			old_mb=$(git -C "$r" merge-base "${TIPOF[$b]}" "${TIPOF[$b2]}")
			[ "$old_mb" == "$BASE" ] && continue
			mb=$(git -C "$r" merge-base "${NEWP[$b]}" "${NEWP[$b2]}")
			NSHARED=$((NSHARED + 1))
			check_eq "seed $SEED: ${given[i]} and ${given[j]} share their replayed commits" \
				"$(non_dup_count "$r" "$BASE..$old_mb")" "$(git -C "$r" rev-list --count "$UP..$mb" --)"
		done
	done

	# (d) --contained: every local branch pointing into the range
	run_rq -C "$r" replay --ref-action=print --contained --onto upstream "${args[@]}"
	check_eq "seed $SEED: --contained exit status: $ERR" 0 "$RC"
	NEWOF=() OLDOF=()
	exp=$(expected_updates "${allrefs[@]}")
	parse_updates "$OUT"
	check_eq "seed $SEED: --contained refs and their order" "$exp" "$GOT"
	for ref in $exp; do
		if [ -n "${NEWP[$ref]:-}" ]; then
			check_eq "seed $SEED: --contained gives $ref the same id" "${NEWP[$ref]}" "${NEWOF[$ref]:-}"
			continue
		fi
		[ -n "${NEWOF[$ref]:-}" ] || continue
		NCONT=$((NCONT + 1))
		check_eq "seed $SEED: old id of $ref" "${TIPOF[$ref]}" "${OLDOF[$ref]}"
		check_chain "$r" "seed $SEED: $ref" "${TIPOF[$ref]}" "${NEWOF[$ref]}"
		for b in "${given[@]}"; do
			if git -C "$r" merge-base --is-ancestor "${TIPOF[$ref]}" "$b"; then
				check "seed $SEED: new $ref is in new $b" \
					git -C "$r" merge-base --is-ancestor "${NEWOF[$ref]}" "${NEWP[refs/heads/$b]}"
			fi
		done
	done
	local -A NEWC=()
	for ref in $exp; do NEWC[$ref]=${NEWOF[$ref]:-}; done

	# (e) update for real (with --contained on odd seeds)
	local contained=() expected_refs
	if ((SEED % 2)); then
		contained=(--contained)
		expected_refs=$(for ref in $exp; do echo "${NEWC[$ref]} $ref"; done)
	else
		expected_refs=$(for b in "${given[@]}"; do echo "${NEWP[refs/heads/$b]} refs/heads/$b"; done)
	fi
	run_rq -C "$r" replay "${contained[@]}" --onto upstream "${args[@]}"
	check_eq "seed $SEED: update exit status and output: $ERR" "0 " "$RC $OUT"
	local after want_after new
	after=$(git -C "$r" for-each-ref --format='%(objectname) %(refname)')
	want_after=$(
		while read -r line ref; do
			new=$(grep " $ref\$" <<<"$expected_refs" | cut -d' ' -f1)
			echo "${new:-$line} $ref"
		done <<<"$before"
	)
	check_eq "seed $SEED: refs after the update" "$want_after" "$after"
	while read -r line ref; do
		[ -n "$ref" ] || continue
		check_eq "seed $SEED: reflog of $ref" \
			"replay --onto $UP|Re Player <replayer@example.com>|$line" \
			"$(git -C "$r" reflog show -n1 --format='%gs|%gn <%ge>|%H' "$ref" --)"
	done <<<"$expected_refs"
	check "seed $SEED: no litter" no_litter "$r"
	if ((SEED % 10 == 0)); then
		check "seed $SEED: git fsck --strict" fsck_ok "$r"
	fi
	rm -rf "$r"
}

for ((SEED = FIRST; SEED < FIRST + SEEDS; SEED++)); do
	run_seed
done
echo "order: $SEEDS seeds, $NBR branches given ($NEQ pairs on one tip, $NSHARED pairs sharing" \
	"commits), $NCONT more branches updated by --contained, $NDROPS dropped commits"
finish
