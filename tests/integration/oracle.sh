#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# oracle.sh: replayq against git itself, on random histories.
#
# For each seed a small repository is generated deterministically (an awk
# program with its own LCG writes a `git fast-import` stream): a base commit
# with 10-30 multi-line text files in a few directories (plus sometimes a
# binary file), an "upstream" branch of 1-6 commits and a "topic" branch of
# 1-8 commits off the base. Commits edit lines (often in the same few "hot"
# files on both sides, so that overlapping hunks conflict and separate hunks
# merge cleanly), add, delete and rename files (with or without a small
# edit), flip the executable bit, change binary files, and sometimes repeat
# on upstream the very change a topic commit makes, so that the pick becomes
# empty.
#
# replayq replays the topic onto upstream; the oracles are upstream `git
# replay` (2.55, when tests/lib.sh's upstream_git finds it: the same stdout,
# exit status and first line of stderr, also for --advance onto a branch at
# upstream and --revert of the topic on itself) and git 2.39 itself
# (merge-ort): `git cherry-pick` of each topic commit, one at a time, in the
# repository's worktree detached at upstream, with the same committer. A
# stop with unmerged entries is a conflict; a stop without them is a pick
# that became empty, skipped like replayq's default --empty=drop. Checked:
#   - the same outcome (clean or conflict);
#   - clean: the same new tip id (trees, messages, authors, committer bytes
#     and parents all alike), and the same tree after every pick;
#   - conflict: the JSON output names the commit git stopped on, and the
#     picks before it, replayed alone, give git's commit at the stop;
#   - --empty=keep against `git cherry-pick --keep-redundant-commits
#     --allow-empty` (run with git only when some pick became empty: with
#     none, git's result is the same as without the options);
#   - print mode moves no ref, no temporary object directory is left, and
#     every 10th repository passes `git fsck --strict`.
#
# Every history category is on by default: directory renames (a branch
# empties a directory while moving its files out, by rename or rename then
# delete; merge-ort's default merge.directoryRenames=conflict stops with
# "CONFLICT (file location)" when the other side added a file there), mode
# flips of binary files, and add/add of the same content with different
# modes. The suite's default (300 seeds, topics of 1-24 commits) compares
# at least 2,000 picks, and the test fails if a default run compares fewer.
#
# Environment:
#   RQ_ORACLE_SEEDS=N         number of seeds (default 300)
#   RQ_ORACLE_FIRST=S         first seed (default 1): reproduce seed S with
#                             RQ_ORACLE_FIRST=S RQ_ORACLE_SEEDS=1
#   RQ_ORACLE_TOPIC_MAX=N     topics of 1..N commits (default 24)
#   RQ_ORACLE_MIN_PICKS=N     fail unless this many picks were compared
#                             (default 2000 with the default seeds, else 0)
#   RQ_ORACLE_DIR_RENAMES=0, RQ_ORACLE_BINARY_MODE=0, RQ_ORACLE_ADDADD_MODE=0
#                             leave one category out; RQ_ORACLE_ALL=0 all
#   RQ_ORACLE_KEEP=DIR        copy the repository of every disagreeing seed
#                             into DIR for inspection
#   RQ_ORACLE_VERBOSE=1       one line per seed
. "$(dirname "$0")/../lib.sh"

SEEDS=${RQ_ORACLE_SEEDS:-300}
FIRST=${RQ_ORACLE_FIRST:-1}
ALL=${RQ_ORACLE_ALL:-1}
TMAX=${RQ_ORACLE_TOPIC_MAX:-24}
if [ -z "${RQ_ORACLE_SEEDS:-}${RQ_ORACLE_FIRST:-}${RQ_ORACLE_TOPIC_MAX:-}" ]; then
	MIN_PICKS=${RQ_ORACLE_MIN_PICKS:-2000}
else
	MIN_PICKS=${RQ_ORACLE_MIN_PICKS:-0}
fi
DIRREN=${RQ_ORACLE_DIR_RENAMES:-$ALL}
BINMODE=${RQ_ORACLE_BINARY_MODE:-$ALL}
ADDMODE=${RQ_ORACLE_ADDADD_MODE:-$ALL}
KEEP=${RQ_ORACLE_KEEP:-}
VERBOSE=${RQ_ORACLE_VERBOSE:-0}

# The generator. Output: a fast-import stream, with byte \001 standing for
# NUL (binary files) so that any awk can write it; tr turns it into NUL.
read -r -d '' GEN_AWK <<'EOF'
function rnd(n) { ST = (ST * 16807) % 2147483647; return int(ST * n / 2147483647) }
function word() { return V[1 + rnd(NV)] }
function line(   s, i) {
	s = word()
	for (i = rnd(4); i >= 0; i--) s = s " " word()
	return s " " rnd(10000)
}
function text(n,   s, i) { s = ""; for (i = 0; i < n; i++) s = s line() "\n"; return s }
function bytes(n,   s, i, c) {
	s = ""
	for (i = 0; i < n; i++) {
		c = rnd(24)
		s = s (c == 0 ? "\001" : substr("abcdefghijklmnopqrstuvw", c, 1))
	}
	return s
}
function clear_state(   p) { for (p in C) { delete C[p]; delete M[p]; delete IsB[p] } }
function sortkeys(   p, n, i, j, t) {
	n = 0
	for (p in C) K[++n] = p
	for (i = 2; i <= n; i++) {
		t = K[i]
		for (j = i - 1; j >= 1 && K[j] > t; j--) K[j + 1] = K[j]
		K[j + 1] = t
	}
	NK = n
	return n
}
function dirof(p,   i) { i = match(p, /\/[^\/]*$/); return i ? substr(p, 1, i - 1) : "" }
function dircount(d,   p, n) { n = 0; for (p in C) if (dirof(p) == d) n++; return n }
# May p leave its directory? Not when that would empty the directory, unless
# directory renames are wanted.
function can_leave(p) { return DIRREN || dirof(p) == "" || dircount(dirof(p)) > 1 }
function in_dir(d, name) { return d == "" ? name : d "/" name }
# A random existing path: kind "text", "bin" or "any"; hot: prefer HOT files;
# fresh: only files the topic has not touched yet.
function pickf(kind, hot, fresh,   i, p, cnt) {
	sortkeys()
	cnt = 0
	for (i = 1; i <= NK; i++) {
		p = K[i]
		if (kind == "text" && IsB[p]) continue
		if (kind == "bin" && !IsB[p]) continue
		if (hot && !(p in HOT)) continue
		if (fresh && (p in TOUCHED)) continue
		CAND[++cnt] = p
	}
	if (!cnt && hot) return pickf(kind, 0, fresh)
	if (!cnt) return ""
	return CAND[1 + rnd(cnt)]
}
function pickdir(newok,   r) {
	if (newok && rnd(6) == 0) {
		r = rnd(3)
		return rnd(2) ? "n" r : in_dir(DIRS[1 + rnd(NDIRS)], "n" r)
	}
	return DIRS[1 + rnd(NDIRS)]
}
function touch(p) { if (BRANCH == "topic") TOUCHED[p] = 1 }
function edit_lines(p, onlyone,   n, L, i, s, k, m, out) {
	n = split(C[p], L, "\n") - 1
	if (onlyone) {
		if (n < 1) return
		s = 1 + rnd(n); k = 1; m = 1
	} else {
		s = 1 + rnd(n + 1); k = rnd(4); m = rnd(4)
		if (s + k - 1 > n) k = n - s + 1
		if (k == 0 && m == 0) m = 1
	}
	out = ""
	for (i = 1; i < s; i++) out = out L[i] "\n"
	for (i = 0; i < m; i++) out = out line() "\n"
	for (i = s + k; i <= n; i++) out = out L[i] "\n"
	if (out == "") out = line() "\n"
	C[p] = out
}
function op_edit(fresh,   p) {
	p = pickf("text", rnd(2), fresh)
	if (p == "") return ""
	edit_lines(p, 0); touch(p)
	return "edit " p
}
function op_add(   d, p) {
	d = pickdir(1)
	p = in_dir(d, "a" rnd(60) ".txt")
	if (p in C) return ""
	C[p] = text(8 + rnd(18)); M[p] = rnd(8) ? "100644" : "100755"; IsB[p] = 0
	touch(p)
	return "add " p
}
function op_delete(fresh,   p) {
	p = pickf("any", 0, fresh)
	if (p == "" || !can_leave(p)) return ""
	delete C[p]; delete M[p]; delete IsB[p]
	touch(p)
	return "delete " p
}
function op_rename(   p, d, q, ed) {
	p = pickf("any", rnd(2), 0)
	if (p == "") return ""
	d = rnd(2) ? dirof(p) : pickdir(1)
	if (rnd(2)) q = in_dir(d, "r" rnd(60) (IsB[p] ? ".bin" : ".txt"))
	else { q = p; sub(/.*\//, "", q); q = in_dir(d, q) }
	if (q in C || (d != dirof(p) && !can_leave(p))) return ""
	C[q] = C[p]; M[q] = M[p]; IsB[q] = IsB[p]
	delete C[p]; delete M[p]; delete IsB[p]
	ed = !IsB[q] && rnd(2)
	if (ed) edit_lines(q, 1)
	touch(p); touch(q)
	return "rename " p " " q (ed ? " (edited)" : "")
}
function op_chmod(   p) {
	p = pickf(BINMODE ? "any" : "text", rnd(2), 0)
	if (p == "" || (!ADDMODE && (p in DUPADD))) return ""
	M[p] = M[p] == "100644" ? "100755" : "100644"
	touch(p)
	return "chmod " p
}
function op_binary(   p, s, n, a) {
	p = pickf("bin", 0, 0)
	if (p == "" || rnd(3) == 0) {
		p = in_dir(pickdir(0), "b" rnd(10) ".bin")
		if (p in C) return ""
		C[p] = "BIN\001" bytes(100 + rnd(300)); M[p] = "100644"; IsB[p] = 1
		touch(p)
		return "add binary " p
	}
	s = C[p]; n = length(s); a = 5 + rnd(n - 10)
	C[p] = substr(s, 1, a) bytes(1 + rnd(8)) substr(s, a + 5)
	touch(p)
	return "binary " p
}
function random_op(   r) {
	r = rnd(100)
	if (r < 45) return op_edit(0)
	if (r < 58) return op_add()
	if (r < 68) return op_delete(0)
	if (r < 82) return op_rename()
	if (r < 94) return op_chmod()
	return op_binary()
}
function snap(   p) {
	for (p in OC) { delete OC[p]; delete OM[p] }
	for (p in C) { OC[p] = C[p]; OM[p] = M[p] }
}
# The fast-import lines of the change from OC/OM to C/M ("" when none).
function changes(   p, out) {
	out = ""
	for (p in OC) if (!(p in C)) out = out "D " p "\n"
	for (p in C)
		if (!(p in OC) || OC[p] != C[p] || OM[p] != M[p])
			out = out "M " M[p] " inline " p "\ndata " length(C[p]) "\n" C[p] "\n"
	return out
}
function commit(ref, mark, from, subject, ch,   an, tz, msg, s) {
	TIME += 60 + rnd(240)
	an = rnd(3)
	tz = TZS[1 + rnd(4)]
	msg = subject "\n"
	if (rnd(3) == 0) msg = msg "\n" line() "\n" line() "\n"
	s = "commit refs/heads/" ref "\nmark :" mark "\n"
	s = s "author " AN[an] " <" AE[an] "> " TIME " " tz "\n"
	s = s "committer Orig Committer <orig@example.com> " (TIME + rnd(100)) " " tz "\n"
	s = s "data " length(msg) "\n" msg
	if (from) s = s "from :" from "\n"
	return s ch "\n"
}
BEGIN {
	ST = (SEED * 7919 + 12345) % 2147483647
	if (ST == 0) ST = 1
	for (i = 0; i < 5; i++) rnd(2)
	NV = split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega red green blue cyan black white", V, " ")
	AN[0] = "A U Thor"; AE[0] = "author@example.com"
	AN[1] = "Bea Contributor"; AE[1] = "bea@example.org"
	AN[2] = "Chris Dev"; AE[2] = "chris@example.net"
	TZS[1] = "+0000"; TZS[2] = "+0100"; TZS[3] = "-0700"; TZS[4] = "+0530"
	TIME = 1600000000

	# base
	NDIRS = 1; DIRS[1] = ""
	nd = 2 + rnd(3)
	for (i = 0; i < nd; i++) DIRS[++NDIRS] = "d" i
	if (rnd(2)) DIRS[++NDIRS] = "d0/sub"
	nf = 10 + rnd(21)
	for (i = 0; i < nf; i++) {
		p = in_dir(DIRS[1 + rnd(NDIRS)], "f" i ".txt")
		C[p] = text(8 + rnd(23)); M[p] = rnd(10) ? "100644" : "100755"; IsB[p] = 0
	}
	# every directory gets a file so that none is empty
	for (i = 2; i <= NDIRS; i++)
		if (!dircount(DIRS[i])) { p = in_dir(DIRS[i], "g" i ".txt"); C[p] = text(8 + rnd(10)); M[p] = "100644"; IsB[p] = 0 }
	if (rnd(2)) { p = in_dir(DIRS[1 + rnd(NDIRS)], "img.bin"); C[p] = "BIN\001" bytes(200 + rnd(300)); M[p] = "100644"; IsB[p] = 1 }
	nh = 0
	sortkeys()
	for (i = 1; i <= NK && nh < 3; i++) if (!IsB[K[i]] && rnd(3) == 0) { HOT[K[i]] = 1; nh++ }
	if (!nh) for (i = 1; i <= NK; i++) if (!IsB[K[i]]) { HOT[K[i]] = 1; break }
	snap(); for (p in OC) { delete OC[p]; delete OM[p] }
	printf "%s", commit("base", 1, 0, "base", changes())
	for (p in C) { BC[p] = C[p]; BM[p] = M[p]; BB[p] = IsB[p] }

	# topic, generated first so that upstream can repeat some of its changes
	BRANCH = "topic"
	nt = 1 + rnd(TMAX); from = 1; TB = ""; ND = 0
	for (j = 1; j <= nt; j++) {
		snap(); desc = ""
		if (rnd(8) == 0) {
			# a change that upstream will make too: the pick becomes empty
			r = rnd(10)
			desc = r < 6 ? op_edit(1) : r < 8 ? op_add() : op_delete(1)
			if (desc != "") {
				ch = changes()
				ND++; DN[ND] = 0; DT[ND] = j
				for (p in OC) if (!(p in C)) { DN[ND]++; DP[ND, DN[ND]] = p; DDEL[ND, DN[ND]] = 1 }
				for (p in C) if (!(p in OC) || OC[p] != C[p]) {
					if (!(p in OC)) DUPADD[p] = 1
					DN[ND]++; DP[ND, DN[ND]] = p; DDEL[ND, DN[ND]] = 0
					DC[ND, DN[ND]] = C[p]; DM[ND, DN[ND]] = M[p]; DB[ND, DN[ND]] = IsB[p]
					DNEW[ND, DN[ND]] = !(p in OC)
				}
				desc = "same as upstream: " desc
			}
		}
		if (desc == "") {
			nops = 1 + rnd(3)
			for (k = 0; k < nops; k++) { d = random_op(); if (d != "") desc = desc (desc == "" ? "" : ", ") d }
		}
		ch = changes()
		while (ch == "") { d = op_add(); if (d != "") desc = desc (desc == "" ? "" : ", ") d; ch = changes() }
		TB = TB commit("topic", 1000 + j, from, "topic " j ": " desc, ch)
		from = 1000 + j
	}

	# upstream
	BRANCH = "upstream"
	clear_state()
	for (p in BC) { C[p] = BC[p]; M[p] = BM[p]; IsB[p] = BB[p] }
	nu = 1 + rnd(6); from = 1; mark = 2; UB = ""; nextdup = 1
	for (j = 1; j <= nu || nextdup <= ND; j++) {
		snap(); desc = ""
		if (nextdup <= ND && (j > nu || rnd(3) == 0)) {
			for (i = 1; i <= DN[nextdup]; i++) {
				p = DP[nextdup, i]
				if (DDEL[nextdup, i]) {
					if ((p in C) && can_leave(p)) { delete C[p]; delete M[p]; delete IsB[p] }
				} else if ((p in C) || DNEW[nextdup, i]) {
					C[p] = DC[nextdup, i]; M[p] = DM[nextdup, i]; IsB[p] = DB[nextdup, i]
				}
			}
			desc = "same as topic " DT[nextdup]
			nextdup++
		} else {
			nops = 1 + rnd(3)
			for (k = 0; k < nops; k++) { d = random_op(); if (d != "") desc = desc (desc == "" ? "" : ", ") d }
		}
		ch = changes()
		if (ch == "") continue
		UB = UB commit("upstream", mark, from, "upstream " j ": " desc, ch)
		from = mark++
	}
	if (from == 1) { snap(); op_add(); UB = UB commit("upstream", mark, 1, "upstream: add", changes()) }
	printf "%s%s", UB, TB
}
EOF

# gen_repo seed dir: make the repository of a seed.
gen_repo() {
	git init -q "$2" &&
		LC_ALL=C awk -v SEED="$1" -v DIRREN="$DIRREN" -v BINMODE="$BINMODE" -v ADDMODE="$ADDMODE" \
			-v TMAX="$TMAX" \
			"$GEN_AWK" </dev/null |
		tr '\001' '\000' | git -C "$2" fast-import --quiet || return 1
	# the first seed's repository is in the run's formats
	[ "$1" != "$FIRST" ] || check_ref_format "$2"
}

# pick_with_git repo flags...: cherry-pick the topic commits ($COMMITS) one
# at a time onto $UP in the worktree of repo. Sets G_CONFLICT (the commit
# git stopped on, or ""), G_INDEX (its index in COMMITS), G_DROPS (picks
# that became empty and were skipped), G_HEAD (HEAD at the end or the stop)
# and G_ERR (unexpected git trouble).
pick_with_git() {
	local r=$1 c i=0
	shift
	G_CONFLICT="" G_INDEX=-1 G_DROPS=0 G_ERR=""
	git -C "$r" reset -q --hard "$UP" >/dev/null 2>&1 || G_ERR="reset failed"
	for c in "${COMMITS[@]}"; do
		if ! git -C "$r" cherry-pick "$@" "$c" >/dev/null 2>"$T/git-stderr"; then
			if [ -n "$(git -C "$r" ls-files -u)" ]; then
				G_CONFLICT=$c G_INDEX=$i
				break
			elif git -C "$r" diff --quiet --cached HEAD && grep -q "is now empty" "$T/git-stderr"; then
				git -C "$r" cherry-pick --skip >/dev/null 2>&1 || G_ERR="cherry-pick --skip failed"
				G_DROPS=$((G_DROPS + 1))
			else
				G_ERR="cherry-pick $c failed without unmerged entries: $(cat "$T/git-stderr")"
				break
			fi
		fi
		i=$((i + 1))
	done
	G_HEAD=$(git -C "$r" rev-parse HEAD)
}

disagree() {
	not_ok "seed $SEED: $*"
}

# compare_clean repo what rq_tip git_tip: same tip; else the first pick
# whose tree differs.
compare_clean() {
	local r=$1 what=$2 rt=$3 gt=$4 rtrees gtrees
	if [ "$rt" == "$gt" ]; then
		ok
		return
	fi
	rtrees=$(git -C "$r" log --reverse --format='%T %s' "$UP..$rt")
	gtrees=$(git -C "$r" log --reverse --format='%T %s' "$UP..$gt")
	if [ "$rtrees" == "$gtrees" ]; then
		disagree "$what: tip $rt, git $gt, with the same trees (commit headers differ):" \
			"$(diff <(git -C "$r" cat-file commit "$rt") <(git -C "$r" cat-file commit "$gt"))"
	else
		disagree "$what: tip $rt, git $gt; trees of the new commits (replayq, then git):" \
			$'\n'"$rtrees"$'\n--\n'"$gtrees"
	fi
}

run_seed() {
	local r=$T/s$SEED topic_old rq_tip rq_conflict json
	local fail0=$FAIL
	rm -rf "$r"
	if ! gen_repo "$SEED" "$r"; then
		disagree "cannot generate the repository"
		return
	fi
	[ "$SEED" != "$FIRST" ] || check_ref_format "$r"
	read -r UP topic_old < <(git -C "$r" rev-parse upstream topic | tr '\n' ' ')
	mapfile -t COMMITS < <(git -C "$r" rev-list --reverse base..topic)
	# three spellings of the same range
	case $((SEED % 3)) in
	0) set -- base..topic ;;
	1) set -- "^$(git -C "$r" merge-base upstream topic)" topic ;;
	2) set -- upstream..topic ;;
	esac

	# replayq, default --empty=drop
	run_rq -C "$r" replay --ref-action=print --onto upstream "$@"
	local rc=$RC out=$OUT err=$ERR
	# upstream git replay, byte for byte: stdout, exit status, stderr's
	# first line (where it and git 2.39's fresh merges disagree, upstream
	# is the one to follow)
	if [ -n "$UPSTREAM_GIT" ]; then
		local uout urc
		uout=$("$UPSTREAM_GIT" -C "$r" replay --ref-action=print --onto upstream "$@" 2>"$T/u.err")
		urc=$?
		UPSEEDS=$((UPSEEDS + 1))
		check_eq "seed $SEED: exit status as upstream git replay's" "$urc" "$rc"
		check_eq "seed $SEED: stdout as upstream git replay's" "$uout" "$out"
		check_eq "seed $SEED: stderr's first line as upstream git replay's" \
			"$(head -1 "$T/u.err")" "$(head -1 <<<"$err")"
		# the other modes, against upstream alone: cherry-pick the topic
		# onto a branch at upstream, and revert it on top of itself
		git -C "$r" branch -f adv upstream
		local mode
		for mode in --advance=adv --revert=topic; do
			uout=$("$UPSTREAM_GIT" -C "$r" replay --ref-action=print "$mode" "$@" 2>"$T/u.err")
			urc=$?
			run_rq -C "$r" replay --ref-action=print "$mode" "$@"
			UPMODES=$((UPMODES + 1))
			check_eq "seed $SEED $mode: as upstream git replay" \
				"$urc $uout $(head -1 "$T/u.err")" "$RC $OUT $(head -1 <<<"$ERR")"
		done
		git -C "$r" branch -D -q adv
	fi
	git -C "$r" checkout -q --detach upstream 2>/dev/null # HEAD was unborn
	pick_with_git "$r"
	if [ -n "$G_ERR" ]; then
		disagree "git: $G_ERR"
		return
	fi
	if [ -z "$G_CONFLICT" ]; then
		CLEAN=$((CLEAN + 1))
		PICKS=$((PICKS + ${#COMMITS[@]}))
		# the same tip id means the same tree after every pick too
		if [ "$rc" -ne 0 ]; then
			disagree "git picks cleanly, replayq exits $rc: $err"
		else
			check_eq "seed $SEED: update line" "update refs/heads/topic $G_HEAD $topic_old" "$out"
			rq_tip=$(echo "$out" | cut -d' ' -f3)
			compare_clean "$r" "drop" "$rq_tip" "$G_HEAD"
		fi
	else
		CONFLICTS=$((CONFLICTS + 1))
		PICKS=$((PICKS + G_INDEX + 1))
		if [ "$rc" -ne 1 ]; then
			disagree "git stops on a conflict at ${G_CONFLICT:0:12} (pick $((G_INDEX + 1))/${#COMMITS[@]}:" \
				"$(git -C "$r" ls-files -u | awk '{print $4}' | sort -u | tr '\n' ' ')), replayq exits $rc $out $err"
		else
			check_eq "seed $SEED: a conflict says nothing, as git replay" "" "$err"
			run_rq -C "$r" replay --ref-action=print --format=json --onto upstream "$@"
			json=$OUT
			rq_conflict=$(printf '%s' "$json" | sed -n "s/.*\"commit\":\"\\($OID_BRE\\)\".*/\\1/p")
			check_eq "seed $SEED: json exit status" 1 "$RC"
			check_eq "seed $SEED: json conflict.commit" "$G_CONFLICT" "$rq_conflict"
			check_contains "seed $SEED: json status" '"status":"conflict"' "$json"
			# the picks before the conflict, replayed alone, give git's HEAD
			if [ "$G_INDEX" -gt 0 ]; then
				git -C "$r" update-ref refs/heads/rq-prefix "${COMMITS[G_INDEX - 1]}"
				run_rq -C "$r" replay --ref-action=print --onto upstream base..rq-prefix
				check_eq "seed $SEED: prefix before the conflict" \
					"0 update refs/heads/rq-prefix $G_HEAD ${COMMITS[G_INDEX - 1]}" "$RC $OUT"
				git -C "$r" update-ref -d refs/heads/rq-prefix
			fi
		fi
	fi
	local drops=$G_DROPS g_conflict=$G_CONFLICT g_index=$G_INDEX g_head=$G_HEAD

	# --empty=keep against --keep-redundant-commits --allow-empty
	run_rq -C "$r" replay --ref-action=print --empty=keep --onto upstream "$@"
	if [ "$drops" -gt 0 ]; then
		KEEPGIT=$((KEEPGIT + 1))
		pick_with_git "$r" --keep-redundant-commits --allow-empty
		if [ -n "$G_ERR" ]; then
			disagree "git (keep): $G_ERR"
			return
		fi
		if [ "$G_CONFLICT" != "$g_conflict" ]; then
			disagree "git (keep) stops on '$G_CONFLICT', without the options on '$g_conflict'"
		fi
	else
		G_CONFLICT=$g_conflict G_HEAD=$g_head
	fi
	if [ -z "$G_CONFLICT" ]; then
		if [ "$RC" -ne 0 ]; then
			disagree "keep: git picks cleanly, replayq exits $RC: $ERR"
		else
			rq_tip=$(echo "$OUT" | cut -d' ' -f3)
			compare_clean "$r" "keep" "$rq_tip" "$G_HEAD"
		fi
	else
		check_eq "seed $SEED: keep: exit status" 1 "$RC"
		check_eq "seed $SEED: keep: a conflict says nothing" "" "$ERR"
	fi

	check_eq "seed $SEED: print mode leaves topic alone" "$topic_old" "$(git -C "$r" rev-parse topic)"
	check "seed $SEED: no litter" no_litter "$r"
	if [ $((SEED % 10)) -eq 0 ]; then
		FSCKED=$((FSCKED + 1))
		check "seed $SEED: git fsck --strict" fsck_ok "$r"
	fi
	if [ "$VERBOSE" = 1 ]; then
		echo "seed $SEED: ${#COMMITS[@]} commits, $([ -z "$g_conflict" ] && echo clean || echo "conflict at $((g_index + 1))"), $drops dropped$([ "$FAIL" -gt "$fail0" ] && echo ", DISAGREE")"
	fi
	if [ "$FAIL" -gt "$fail0" ]; then
		BAD=$((BAD + 1))
		echo "  reproduce: RQ_ORACLE_FIRST=$SEED RQ_ORACLE_SEEDS=1 bash $0" >&2
		if [ -n "$KEEP" ]; then
			mkdir -p "$KEEP" && rm -rf "$KEEP/seed-$SEED" && cp -a "$r" "$KEEP/seed-$SEED"
		fi
	fi
	rm -rf "$r"
}

# The replaying committer, for replayq and git alike.
export GIT_COMMITTER_NAME="Re Player" GIT_COMMITTER_EMAIL="replayer@example.com"
export GIT_COMMITTER_DATE="@1800000000 +0200"

PICKS=0 CLEAN=0 CONFLICTS=0 KEEPGIT=0 FSCKED=0 BAD=0 UPSEEDS=0 UPMODES=0
UPSTREAM_GIT=""
upstream_git || true
for ((SEED = FIRST; SEED < FIRST + SEEDS; SEED++)); do
	run_seed
done
EXCLUDED=""
[ "$DIRREN" = 1 ] || EXCLUDED+=", directory renames"
[ "$BINMODE" = 1 ] || EXCLUDED+=", binary content/mode"
[ "$ADDMODE" = 1 ] || EXCLUDED+=", add/add mode"
[ -n "$EXCLUDED" ] && echo "oracle: not generated (see RQ_ORACLE_*): ${EXCLUDED#, }"
if [ "$BAD" -eq 0 ]; then
	echo "oracle: $SEEDS seeds, $PICKS picks compared, $CLEAN clean, $CONFLICTS conflicts," \
		"all agreed (keep variant against git on $KEEPGIT seeds, fsck on $FSCKED," \
		"upstream git replay on $UPSEEDS, --advance/--revert against it $UPMODES times)"
else
	echo "oracle: $SEEDS seeds, $PICKS picks compared, $CLEAN clean, $CONFLICTS conflicts," \
		"$BAD seeds DISAGREED"
fi
check "at least $MIN_PICKS picks compared (got $PICKS)" test "$PICKS" -ge "$MIN_PICKS"
finish
