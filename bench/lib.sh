# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for the bench/ scripts (bash; sourced, not run).
#
# Paths: everything generated goes under bench/work/ (git-ignored);
# results go to bench/results/.

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
WORK=${BENCH_WORK:-$BENCH/work}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
REPLAYQ=${REPLAYQ:-$ROOT/build-bench/replayq}
SEED=${SEED:-42}

# Git must not read the user's or the system's configuration, run hooks,
# or start background maintenance in the middle of a measurement.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.com"
# One committer date for every replay, so that every tool must produce the
# very same commit ids.
export GIT_COMMITTER_DATE="@1800000000 +0000"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES

say() { printf '%s\n' "$*" >&2; }
die() {
	printf '%s: %s\n' "$(basename "$0")" "$*" >&2
	exit 1
}

# now_us: wall clock in microseconds (bash 5 EPOCHREALTIME, no fork).
now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	printf '%s' "$t"
}

# The corpus generator, compiled from bench/gen/corpus.c when it changed.
GEN_SRC=$BENCH/gen/corpus.c
GEN_BIN=$WORK/bin/corpus
build_gen() {
	mkdir -p "$WORK/bin"
	if [ ! -x "$GEN_BIN" ] || [ "$GEN_SRC" -nt "$GEN_BIN" ] || [ "$BENCH/gen/rng.h" -nt "$GEN_BIN" ]; then
		${CC:-cc} -O2 -std=c11 -Wall -Wextra -D_DEFAULT_SOURCE -o "$GEN_BIN.tmp" "$GEN_SRC"
		mv "$GEN_BIN.tmp" "$GEN_BIN"
	fi
}
# (of the source without white space: reformatting keeps the corpora)
gen_version() {
	cat "$GEN_SRC" "$BENCH/gen/rng.h" | tr -d ' \t\n' | sha1sum | cut -c1-12
}

# corpus_import DIR STAMP GENERATOR-ARGS...: (re)creates the bare repository
# DIR/repo.git from the generator's fast-import stream unless DIR/stamp
# already holds STAMP. Prints the repository path on stdout.
corpus_import() {
	local dir=$1 stamp=$2
	shift 2
	if [ -z "${FORCE:-}" ] && [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ]; then
		say "reusing $dir/repo.git ($stamp; generated in $(cat "$dir/gen-seconds" 2>/dev/null || echo '?') s)"
		# an earlier version of the run scripts left these at deleted commits
		git -C "$dir/repo.git" update-ref -d refs/heads/bench-topic 2>/dev/null || true
		git -C "$dir/repo.git" update-ref -d refs/heads/bench-b 2>/dev/null || true
		printf '%s\n' "$dir/repo.git"
		return 0
	fi
	build_gen
	rm -rf "$dir"
	mkdir -p "$dir"
	git init -q --bare "$dir/repo.git"
	# no automatic gc/maintenance, ever, in the corpus or its clones
	git -C "$dir/repo.git" config gc.auto 0
	git -C "$dir/repo.git" config maintenance.auto false
	local t0 t1
	t0=$(now_us)
	# fast-import's heap grows and shrinks with every inline blob; on this
	# VM a page faulted back in after glibc trimmed it costs ~100 us, which
	# made the 10k corpus take 12 s instead of 0.5 s: keep the heap.
	"$GEN_BIN" "$@" |
		GLIBC_TUNABLES=glibc.malloc.top_pad=268435456:glibc.malloc.trim_threshold=4294967295 \
			git -C "$dir/repo.git" fast-import --quiet --done
	t1=$(now_us)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }' >"$dir/gen-seconds"
	git -C "$dir/repo.git" pack-refs --all
	git -C "$dir/repo.git" symbolic-ref HEAD refs/heads/main
	# the packs the corpus is made of: corpus_clean keeps these only
	(cd "$dir/repo.git/objects/pack" && ls) >"$dir/repo.git/bench-packs"
	printf '%s\n' "$stamp" >"$dir/stamp"
	say "generated $dir/repo.git ($stamp) in $(cat "$dir/gen-seconds") s"
	printf '%s\n' "$dir/repo.git"
}

# corpus_clean REPO: removes every object written into the corpus since it
# was generated (packs not in bench-packs, loose objects, replayq's
# temporary object directories), so that each measured run starts from the
# same state and writes all of its objects itself.
corpus_clean() {
	local repo=$1 p
	find "$repo/objects" -mindepth 1 -maxdepth 1 \( -name '[0-9a-f][0-9a-f]' -o -name 'replayq-tmp-*' -o -name 'tmp_*' \) \
		-exec rm -rf {} +
	for p in "$repo"/objects/pack/*; do
		grep -qxF "$(basename "$p")" "$repo/bench-packs" || rm -f "$p"
	done
}

# cpu_capacity: how much of a second core this machine gives right now:
# the work two concurrent CPU-bound processes (sha1sum of 64 MiB) do in the
# time one takes, best of 3 (2.00: two full cores; 1.00: no more than one).
# A virtual machine's cores can be shared with other guests: the speed-up
# any parallel program can show is bounded by this figure.
cpu_capacity() {
	local f=$WORK/capacity.bin t1 t2 best1=999999999 best2=999999999 k
	[ -s "$f" ] || head -c 67108864 /dev/urandom >"$f"
	sha1sum "$f" >/dev/null
	for k in 1 2 3; do
		t1=$(now_us)
		sha1sum "$f" >/dev/null
		t2=$(now_us)
		[ $((t2 - t1)) -lt "$best1" ] && best1=$((t2 - t1))
		t1=$(now_us)
		sha1sum "$f" >/dev/null &
		sha1sum "$f" >/dev/null
		wait
		t2=$(now_us)
		[ $((t2 - t1)) -lt "$best2" ] && best2=$((t2 - t1))
	done
	awk -v a="$best1" -v b="$best2" 'BEGIN { printf "%.2f\n", 2 * a / b }'
}

# median FILE: the median of the numbers in FILE (one a line).
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The command timer, compiled from bench/gen/measure.c when it changed.
MEASURE_BIN=$WORK/bin/measure
build_measure() {
	mkdir -p "$WORK/bin"
	if [ ! -x "$MEASURE_BIN" ] || [ "$BENCH/gen/measure.c" -nt "$MEASURE_BIN" ]; then
		${CC:-cc} -O2 -std=c11 -Wall -Wextra -Werror -o "$MEASURE_BIN.tmp" "$BENCH/gen/measure.c"
		mv "$MEASURE_BIN.tmp" "$MEASURE_BIN"
	fi
}

# timed OUTDIR NAME CMD...: runs CMD under bench/gen/measure.c, appends the
# wall time (ms, from its spawn to its reaping, as hyperfine -N measures:
# no shell or /usr/bin/time start-up in it) to OUTDIR/NAME.ms, the peak RSS
# (KiB) to OUTDIR/NAME.rss and the CPU time, user + system, of CMD and its
# children (ms) to OUTDIR/NAME.cpu; stdout of CMD goes to OUTDIR/NAME.out,
# stderr to OUTDIR/NAME.err. Returns CMD's exit status.
timed() {
	local out=$1 name=$2 ms rss cpu rc
	shift 2
	[ -x "$MEASURE_BIN" ] || build_measure
	read -r ms rss cpu rc < <("$MEASURE_BIN" "$out/$name.out" "$out/$name.err" -- "$@") ||
		die "cannot run $1"
	printf '%s\n' "$ms" >>"$out/$name.ms"
	printf '%s\n' "$rss" >>"$out/$name.rss"
	printf '%s\n' "$cpu" >>"$out/$name.cpu"
	return "$rc"
}

# rq_version: which replayq is measured: the binary and its mtime, the
# commit of the source tree and a mark if core/ worker/ queue/ had local
# changes (the binary may have been built from an earlier state).
rq_version() {
	local c dirty=
	c=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
	git -C "$ROOT" diff --quiet HEAD -- core worker queue CMakeLists.txt 2>/dev/null || dirty=' + uncommitted changes'
	printf 'replayq binary %s built %s (source tree at %s%s when this run started)' "$REPLAYQ" \
		"$(date -u -r "$REPLAYQ" '+%Y-%m-%d %H:%M UTC')" "$c" "$dirty"
}

need_tools() {
	command -v git >/dev/null || die "git is missing"
	command -v "${CC:-cc}" >/dev/null || die "a C compiler is missing (cc)"
	build_measure
}

need_replayq() {
	[ -x "$REPLAYQ" ] || die "$REPLAYQ is missing: cmake -S $ROOT -B $ROOT/build-bench && cmake --build $ROOT/build-bench -j2 (or set REPLAYQ)"
}

# git_replay_ok: GIT_REPLAY_BIN is set and that git has `git replay`.
git_replay_ok() {
	local cmds
	[ -n "${GIT_REPLAY_BIN:-}" ] || return 1
	cmds=$("$GIT_REPLAY_BIN" help -a 2>/dev/null || true)
	grep -qE '^ +replay( |$)' <<<"$cmds"
}

# git_replay_args: the options that make GIT_REPLAY_BIN's replay print the
# updates instead of applying them (git >= 2.53 updates refs by default).
git_replay_args() {
	local h
	h=$("$GIT_REPLAY_BIN" replay -h 2>&1 || true)
	case $h in *--ref-action*) echo "--ref-action=print" ;; esac
}

# refs_state REPO: the corpus's branches, to check that no tool moved them.
refs_state() {
	git -C "$1" for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags |
		grep -v ' refs/heads/bench-' || true
}

# refs_restore REPO STATE: puts the branches back as in STATE.
refs_restore() {
	local oid ref
	while read -r oid ref; do
		git -C "$1" update-ref "$ref" "$oid"
	done <<<"$2"
}

# svg_perpick ROWS TITLE: a log-log SVG of per-pick ms against repository
# size (column 1), per tool (column 2): wall time (column 5) as a solid
# line, CPU time (column 9) dashed.
svg_perpick() {
	awk -F'\t' -v title="$2" '
	function lg(v) { return log(v) / log(10) }
	function fl(v) { return (v == int(v) || v >= 0) ? int(v) : int(v) - 1 }
	function ce(v) { return (v == int(v)) ? v : fl(v) + 1 }
	function sx(v) { return L + (lg(v) - x0) / (x1 - x0) * W }
	function sy(v) { return T + H - (lg(v) - y0) / (y1 - y0) * H }
	function human(v) { return v >= 1e6 ? v / 1e6 "M" : v >= 1e3 ? v / 1e3 "k" : v }
	function ms(v) { return v >= 1 ? v : sprintf("%g", v) }
	function add(t, x, y) {
		if (!(t in seen)) { seen[t] = 1; order[++nt] = t }
		np[t]++; xs[t, np[t]] = x; ys[t, np[t]] = y
		if (!n++ || x < xmin) xmin = x; if (x > xmax) xmax = x
		if (n == 1 || y < ymin) ymin = y; if (y > ymax) ymax = y
	}
	$5 > 0 { add($2, $1, $5) }
	$9 > 0 { add($2 " CPU", $1, $9) }
	END {
		L = 80; T = 50; W = 520; H = 320
		color["replayq"] = "#1f77b4"; color["git-rebase"] = "#ff7f0e"; color["git-replay"] = "#2ca02c"
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"880\" height=\"440\" font-family=\"sans-serif\" font-size=\"12\">\n"
		printf "<rect width=\"880\" height=\"440\" fill=\"white\"/>\n"
		printf "<text x=\"400\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", title
		if (!n) { print "<text x=\"400\" y=\"220\" text-anchor=\"middle\">no data</text></svg>"; exit }
		x0 = fl(lg(xmin) + 1e-9); x1 = ce(lg(xmax) - 1e-9); if (x1 <= x0) x1 = x0 + 1
		y0 = fl(lg(ymin) + 1e-9); y1 = ce(lg(ymax) - 1e-9); if (y1 <= y0) y1 = y0 + 1
		for (e = x0; e <= x1; e++) {
			v = 10 ^ e
			printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", sx(v), T, sx(v), T + H
			printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", sx(v), T + H + 18, human(v)
		}
		for (e = y0; e <= y1; e++) {
			v = 10 ^ e
			printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, sy(v), L + W, sy(v)
			if (e < y1) for (f = 2; f <= 5; f += 3)
				printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#f0f0f0\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" fill=\"#888\">%s</text>\n", L, sy(f * v), L + W, sy(f * v), L - 6, sy(f * v) + 4, ms(f * v)
			printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 6, sy(v) + 4, ms(v)
		}
		printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", L, T, W, H
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">files in the repository (log scale)</text>\n", L + W / 2, T + H + 42
		printf "<text transform=\"translate(22,%d) rotate(-90)\" text-anchor=\"middle\">ms per picked commit (log scale): wall solid, CPU dashed</text>\n", T + H / 2
		for (i = 1; i <= nt; i++) {
			t = order[i]; tb = t; dash = ""
			if (sub(/ CPU$/, "", tb)) dash = " stroke-dasharray=\"6,4\""
			c = (tb in color) ? color[tb] : "#9467bd"
			# points in size order
			for (a = 1; a <= np[t]; a++) for (b = a + 1; b <= np[t]; b++) if (xs[t, b] < xs[t, a]) {
				tx = xs[t, a]; xs[t, a] = xs[t, b]; xs[t, b] = tx; ty = ys[t, a]; ys[t, a] = ys[t, b]; ys[t, b] = ty }
			pts = ""
			for (a = 1; a <= np[t]; a++) pts = pts sprintf("%.1f,%.1f ", sx(xs[t, a]), sy(ys[t, a]))
			printf "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", pts, c, dash
			for (a = 1; a <= np[t]; a++) {
				printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", sx(xs[t, a]), sy(ys[t, a]), c
				printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%s</text>\n", sx(xs[t, a]) + 6, sy(ys[t, a]) + (dash ? 14 : -6), c, ys[t, a]
			}
			printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", L + W + 50, T + 20 * i, L + W + 74, T + 20 * i, c, dash
			printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + W + 80, T + 20 * i + 4, (dash ? t " time" : t " wall time")
		}
		print "</svg>"
	}' "$1"
}
