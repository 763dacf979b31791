#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The fault suite: a batch of jobs over several repositories while workers
# are SIGKILLed at random moments, Redis is restarted once (AOF), and one
# repository's file system fills up. At the end every job has exactly one
# final result, every result equals the single-process reference (or, on
# the full file system, is an error that changed nothing), git fsck passes
# everywhere, no temporary object directory remains, and no ref moved that
# a result did not report. RQ_FAULT_JOBS sets the batch size (bench/faults
# runs 500; the suite 60); RQ_FAULT_SEED the random moments; with
# RQ_REF_FORMAT=reftable (tests/lib.sh) the repositories are reftable ones
# (bench/faults runs both formats).
. "$(dirname "$0")/../lib.sh"
N=${RQ_FAULT_JOBS:-60}
RANDOM=${RQ_FAULT_SEED:-7}
ROOT=$T/root
mkdir -p "$ROOT"
export REPLAYQ_QUEUE=faults
t_start=$SECONDS

REPOS=(r0 r1 r2 full)
for r in r0 r1 r2; do make_repo "$ROOT/$r" "$r" "$N"; done
# the last repository lives on a small file system that will be full
FULL=0
if mkdir -p "$ROOT/full" && mount -t tmpfs -o size=3m tmpfs "$ROOT/full" 2>/dev/null; then
	FULL=1
	trap 'umount -l "$ROOT/full" 2>/dev/null; cleanup_all' EXIT
	make_repo "$ROOT/full" full "$N"
else
	echo "cannot mount a small file system here (not root?): the full-disk part is skipped" >&2
	REPOS=(r0 r1 r2)
	make_repo "$ROOT/full" full "$N"
fi
NREPOS=${#REPOS[@]}
check_ref_format "$ROOT/r0"
touch "$T/repos-made"

job_spec() {
	local i=$1 kind=$(($1 % 6)) t=$((1800000000 + $1))
	REPO=${REPOS[$(($1 % NREPOS))]}
	TIME=$t
	local c='"committer":{"name":"Bot","email":"bot@example.com","time":'$t',"tz":"+0000"}'
	local head='{"id":"f-'$i'","repo":"'$REPO'",'
	case $kind in
	0) JSON=$head'"mode":"onto","target":"main","revisions":["base..topic"],'$c'}'; ARGS=(--onto=main base..topic) ;;
	1) JSON=$head'"mode":"onto","target":"main","revisions":["^base","topic","s2"],'$c'}'; ARGS=(--onto=main ^base topic s2) ;;
	2) JSON=$head'"mode":"advance","target":"main","revisions":["base..topic"],'$c'}'; ARGS=(--advance=main base..topic) ;;
	3) JSON=$head'"mode":"revert","target":"main","revisions":["main~1..main"],'$c'}'; ARGS=(--revert=main main~1..main) ;;
	4) JSON=$head'"mode":"onto","target":"main","revisions":["base..clash"],'$c'}'; ARGS=(--onto=main base..clash) ;;
	5) JSON=$head'"mode":"onto","target":"main","revisions":["base..u-'$i'"],"ref_action":"update",'$c'}'; ARGS=(--onto=main base..u-$i) ;;
	esac
}
norm='{status, updates: [.updates[] | {ref, old, new}], conflict: (.conflict.commit // null), code: (.error.code // null)}'
: >"$T/jobs.jsonl"
: >"$T/refs.jsonl"
for i in $(seq 1 "$N"); do
	job_spec "$i"
	echo "$JSON" >>"$T/jobs.jsonl"
	# a job's revert has its committer as author
	GIT_COMMITTER_NAME=Bot GIT_COMMITTER_EMAIL=bot@example.com GIT_COMMITTER_DATE="@$TIME +0000" \
		GIT_AUTHOR_NAME=Bot GIT_AUTHOR_EMAIL=bot@example.com GIT_AUTHOR_DATE="@$TIME +0000" \
		"$REPLAYQ" -C "$ROOT/$REPO" replay --format=json --ref-action=print "${ARGS[@]}" 2>/dev/null >>"$T/refs.jsonl"
done
jq -c "$norm" "$T/refs.jsonl" >"$T/refs.norm"
# the reference wrote packs; the batch must write its own objects again
for r in "${REPOS[@]}"; do
	find "$ROOT/$r/.git/objects/pack" -newer "$T/repos-made" -name 'pack-*' -delete
	git -C "$ROOT/$r" for-each-ref --format='%(refname) %(objectname)' | sort >"$T/before-$r"
done
if [ $FULL -eq 1 ]; then
	dd if=/dev/zero of="$ROOT/full/filler" bs=64k 2>/dev/null || true
	sync
fi

# every write on disk before it is acknowledged: a SIGKILLed server loses
# nothing it acknowledged
start_redis --appendfsync always
declare -A WPID WNAME
spawn() {
	WNAME[$1]="w$1-$RANDOM"
	"$REPLAYQ" worker --name="${WNAME[$1]}" --repo-root="$ROOT" --jobs=2 --visibility-timeout=2 \
		--max-deliveries=20 2>>"$T/workers.log" &
	WPID[$1]=$!
	BG_PIDS+=("$!")
	WORKER_NAMES[$!]=${WNAME[$1]}
}
# the first workers hold the first delivery of f-11 (a ref update): the one
# that gets it is paused (SIGSTOP) past the visibility timeout, once Redis
# is back from its SIGKILL, until another worker has reclaimed the job and
# finished it (the event; the reclaim may have come already, the holder's
# claim gone stale while Redis was away); then it is resumed and its child let go: its late
# work must neither count twice nor move refs behind the stored result's
# back
for s in 1 2 3; do REPLAYQ_TEST_HOLD=job:f-11@1 spawn $s; done
run_rq submit --no-validate "$T/jobs.jsonl"
check_eq "submit: all queued" "$N" "$(echo "$OUT" | grep -c '^f-')"
paused=0 holder=
pause_holder() {
	local kid
	kid=$(cat "$HOLD_DIR"/job:f-11@1.* 2>/dev/null) || return 0
	holder=$(ps -o ppid= -p "$kid" | tr -d ' ')
	[ -n "$holder" ] || return 0
	kill -STOP "$holder"
	# the event: another worker has finished f-11 (only another can, the
	# holder being held and paused)
	check "a paused worker's job is finished by another" wait_for "f-11 result" 120 \
		bash -c "[ \"\$(redis-cli -p $REDIS_PORT EXISTS 'replayq:{faults}:result:f-11')\" = 1 ]"
	kill -CONT "$holder"
	kill -USR1 "$kid"
	paused=1
}
count() { rcli XLEN 'replayq:{faults}:results'; }
kills=0 restarted=0
while [ "$(count)" -lt "$N" ] && [ $((SECONDS - t_start)) -lt 600 ]; do
	sleep "0.$((RANDOM % 5 + 1))"
	s=$((RANDOM % 3 + 1))
	# the worker holding f-11 is not killed before its pause
	[ $paused -eq 0 ] && [ "${WPID[$s]}" = "$(ps -o ppid= -p "$(cat "$HOLD_DIR"/job:f-11@1.* 2>/dev/null || echo 0)" 2>/dev/null | tr -d ' ')" ] && continue
	kill -9 "${WPID[$s]}" 2>/dev/null && kills=$((kills + 1))
	wait "${WPID[$s]}" 2>/dev/null
	spawn "$s"
	if [ $restarted -eq 0 ] && [ "$(count)" -ge $((N / 2)) ]; then
		# SIGKILL, not a clean shutdown
		kill -9 "$(cat "$T/redis/redis.pid")" 2>/dev/null
		rm -f "$T/redis/redis.pid"
		# the outage lasts until a worker has met it (a failed read,
		# heartbeat or result store: a heartbeat comes every 2 s at most)
		pat='"(read failed|heartbeat failed|cannot store result yet; will retry)"'
		nfail=$(grep -cE "$pat" "$T/workers.log")
		wait_for "a worker meets the outage" 60 bash -c "[ \$(grep -cE '$pat' '$T/workers.log') -gt $nfail ]"
		start_redis --appendfsync always
		restarted=1
	fi
	[ $restarted -eq 1 ] && [ $paused -eq 0 ] && pause_holder
done
# a worker spawned just now may not have its SIGTERM handler yet (it would
# die of the signal, 143): each has started before the stop
for s in 1 2 3; do
	wait_for "${WNAME[$s]} started" 60 grep -qs "\"worker\":\"${WNAME[$s]}\",\"msg\":\"worker started\"" "$T/workers.log"
done
check_workers_stop "${WPID[1]}" "${WPID[2]}" "${WPID[3]}"
elapsed=$((SECONDS - t_start))

check_eq "Redis was restarted once" 1 "$restarted"
check_eq "every job has a result" "$N" "$(for i in $(seq 1 "$N"); do rcli EXISTS "replayq:{faults}:result:f-$i"; done | grep -c 1)"
check_eq "exactly one final result per job" "$N" "$(count)"
check_eq "no job id reported twice" "$N" "$(rcli XRANGE 'replayq:{faults}:results' - + | grep '^f-' | sort -u | wc -l | tr -d ' ')"
for i in $(seq 1 "$N"); do rcli GET "replayq:{faults}:result:f-$i"; done >"$T/got.jsonl"
jq -c "$norm" "$T/got.jsonl" >"$T/got.norm"
mism=0 fullerr=0 i=0
exec 3<"$T/refs.norm"
while read -r got; do
	i=$((i + 1))
	read -r want <&3
	[ "$got" = "$want" ] && continue
	if [ "${REPOS[$((i % NREPOS))]}" = full ] && [ "$(jq -r .status <<<"$got")" = error ] &&
		[[ "$(jq -r .code <<<"$got")" =~ ^(io|git|out_of_memory)$ ]]; then
		fullerr=$((fullerr + 1))
		continue
	fi
	mism=$((mism + 1))
	echo "f-$i: got $got want $want" >&2
done <"$T/got.norm"
exec 3<&-
check_eq "every result equals the single-process reference" 0 "$mism"
[ $FULL -eq 1 ] && check "the full file system made jobs fail" [ "$fullerr" -gt 0 ]
moved_unreported=0
for r in "${REPOS[@]}"; do
	check "git's checks clean in $r" refs_consistent "$ROOT/$r"
	check "no temporary object directory in $r" no_litter "$ROOT/$r"
	check_eq "no stale ref lock in $r" "" \
		"$(find "$ROOT/$r" -name '*.lock' \( -path '*refs*' -o -path '*reftable*' \) 2>/dev/null)"
	git -C "$ROOT/$r" for-each-ref --format='%(refname) %(objectname)' | sort >"$T/after-$r"
	while read -r ref new; do
		jq -e -s --arg ref "$ref" --arg new "$new" --arg repo "$r" \
			'any(.[] | select(.repo == $repo and .status == "ok" and .applied) | .updates[]; .ref == $ref and .new == $new)' \
			"$T/got.jsonl" >/dev/null || { moved_unreported=$((moved_unreported + 1)); echo "unreported move: $r $ref $new" >&2; }
	done < <(comm -13 "$T/before-$r" "$T/after-$r")
done
check_eq "no ref moved that a result did not report" 0 "$moved_unreported"
redelivered=$(jq -s '[.[] | select(.attempt > 1)] | length' "$T/got.jsonl")
echo "faults: $N jobs over $NREPOS repositories in ${elapsed}s: $kills workers SIGKILLed, Redis SIGKILLed and restarted $restarted time(s), a worker paused past the visibility timeout $paused time(s), $redelivered jobs finished on a redelivery, $fullerr failed on the full file system, $mism mismatches" >&2
[ -n "${RQ_KEEP:-}" ] && cp "$T/got.jsonl" /tmp/got.jsonl
finish
