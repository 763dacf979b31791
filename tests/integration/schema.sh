#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# docs/schema: the JSON Schemas (draft 2020-12) of a job and a result,
# checked with a real validator (Debian's python3-jsonschema, run by
# /usr/bin/python3, tests/schema_check.py) against a representative set
# the real program makes (schema/suite, after the last test, checks every
# job and result of the whole suite the same way; this test makes sure
# the set has every kind and that the collection catches it):
# every mode (onto, advance, revert, train by rebase and by merge,
# maintain), every status, keep-going, empty commits, every error code a
# job can get on purpose (invalid_job, bad_repo, corrupt_object,
# bad_revision, ambiguous_ref, not_a_ref, bad_ref, nothing_to_replay,
# merge_commit, empty_commit, too_many_commits, ref_locked, timeout,
# crashed, out_of_memory, sign_unavailable), the results of `replayq run`, of a worker through Redis
# (attempt, worker, a dead letter, a rerun already applied) and of
# `replayq replay --format=json` and `replayq train --format=json`; the jobs
# of docs/jobs.md and of the quickstart, parsed by `replayq run`; jobs the
# program refuses must fail the job schema too. And the check itself fails
# on a result and a job that break the schemas, naming their test. Ids and
# pack names of either width (issue 42): every result made here validates
# with its 40-digit ids made 64 digits long (a SHA-256 repository's), and
# fails with 39, 41, 63 or 65 digits, or upper case.
. "$(dirname "$0")/../lib.sh"
require jq redis-server
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
	not_ok "Debian's python3-jsonschema is installed (deploy/install-deps)"
	finish
fi
# what this test's processes parse and emit (core/base/rq_testhook.h)
export REPLAYQ_TEST_JSON_DIR=${REPLAYQ_TEST_JSON_DIR:-$T/docs/integration-schema}
rm -rf "$REPLAYQ_TEST_JSON_DIR"
ROOT=$T/root
mkdir -p "$ROOT"
make_repo "$ROOT/proj" one
git -C "$ROOT/proj" branch amb topic && git -C "$ROOT/proj" tag amb s1 # a branch and a tag alike
git -C "$ROOT/proj" checkout -q -b merged base
commit_file "$ROOT/proj" m.txt m "m"
git -C "$ROOT/proj" merge -q --no-ff -m "a merge" s1
git -C "$ROOT/proj" checkout -q main
git -C "$ROOT/proj" checkout -q -b dup base # c.txt as main has it: empty on main
commit_file "$ROOT/proj" c.txt "c one" "the same c"
git -C "$ROOT/proj" checkout -q main
cp -a "$ROOT/proj" "$ROOT/locked"
touch "$ROOT/locked/.git/refs/heads/topic.lock"
cp -a "$ROOT/proj" "$ROOT/corrupt"
obj=$(git -C "$ROOT/corrupt" rev-parse topic)
chmod u+w "$ROOT/corrupt/.git/objects/${obj:0:2}/${obj:2}"
echo garbage >"$ROOT/corrupt/.git/objects/${obj:0:2}/${obj:2}"
C='"committer":{"name":"C O Mitter","email":"committer@example.com","time":1800000000,"tz":"+0000"}'
j() { echo '{"v":1,"id":"'"$1"'","repo":"'"${3:-proj}"'",'"$2"','"$C"'}'; }
{
	j onto-print '"mode":"onto","target":"main","revisions":["base..topic"]'
	j onto-contained '"mode":"onto","target":"main","revisions":["base..s2"],"contained":true,"ref_action":"update"'
	j onto-conflict '"mode":"onto","target":"main","revisions":["base..clash"]'
	j onto-ref '"mode":"onto","target":"main","revisions":["base..topic"],"ref":"refs/heads/new"'
	j onto-walkopts '"mode":"onto","target":"main","revisions":["--branches=s*","^base","--author=A U Thor"],"timeout_ms":60000,"max_commits":50'
	j advance '"mode":"advance","target":"main","revisions":["base..topic"],"empty":"keep"'
	j revert '"mode":"revert","target":"main","revisions":["main~1..main"],"ref_action":"update"'
	j keep-going-conflict '"mode":"onto","target":"main","revisions":["^base","topic","clash","s2"],"keep_going":true'
	j keep-going-ok '"mode":"onto","target":"main","revisions":["^base","topic","s2"],"keep_going":true,"ref_action":"update"'
	j empty-drop '"mode":"onto","target":"main","revisions":["base..dup"]'
	j empty-abort '"mode":"onto","target":"main","revisions":["base..dup"],"empty":"abort"'
	j train-rebase '"mode":"train","target":"main","cars":[{"name":"t","revisions":["topic"]},{"name":"c","revisions":["base..clash"]},{"name":"s","revisions":["s2"],"skip":true}],"ref_action":"update"'
	j train-merge '"mode":"train","target":"main","method":"merge","message":"Merge {name} into {target}","ref_prefix":"refs/merge-train/","cars":[{"name":"t","revisions":["topic"]},{"name":"s","revisions":["s1"]}]'
	j train-norefs '"mode":"train","target":"main","car_refs":false,"cars":[{"name":"t","revisions":["topic"]}]'
	j bad-repo '"mode":"onto","target":"main","revisions":["main"]' ../etc
	j corrupt '"mode":"onto","target":"main","revisions":["base..topic"]' corrupt
	j bad-revision '"mode":"onto","target":"main","revisions":["base..nothing"]'
	j ambiguous '"mode":"onto","target":"main","revisions":["base..amb"]'
	j not-a-ref '"mode":"advance","target":"main~1","revisions":["base..topic"]'
	j bad-ref '"mode":"onto","target":"main","revisions":["base..topic"],"ref":"refs/heads/a..b"'
	j nothing '"mode":"onto","target":"main","revisions":["^main"]'
	j merge-onto '"mode":"onto","target":"main","revisions":["base..merged"]'
	j merge-commit '"mode":"revert","target":"merged","revisions":["base..merged"]'
	j too-many '"mode":"onto","target":"main","revisions":["base..topic"],"max_commits":1'
	j locked '"mode":"onto","target":"main","revisions":["base..topic"],"ref_action":"update"' locked
	j unknown-field '"mode":"onto","target":"main","revisions":["main"],"colour":"red"'
	j usage '"mode":"advance","target":"main","revisions":["topic","s2"]'
	j sign-unavailable '"mode":"onto","target":"main","revisions":["base..topic"],"sign":true'
	echo '{"v":1,"id":"maintain","repo":"proj","mode":"maintain","timeout_ms":60000}'
	echo '{"v":1,"id":"maintain-revs","repo":"proj","mode":"maintain","revisions":["main"]}'
} >"$T/jobs.jsonl"
"$REPLAYQ" run --repo-root="$ROOT" --jobs=2 "$T/jobs.jsonl" >"$T/results-run.jsonl" 2>"$T/run.err"
check_eq "run: a result for every job" "$(wc -l <"$T/jobs.jsonl")" "$(wc -l <"$T/results-run.jsonl")"
j oom '"mode":"onto","target":"main","revisions":["base..topic"]' >"$T/oom.jsonl"
# held at its hold point, the child is over 1 MiB: out_of_memory
REPLAYQ_TEST_HOLD=job:oom "$REPLAYQ" run --repo-root="$ROOT" --memory-limit=1 "$T/oom.jsonl" \
	>>"$T/results-run.jsonl" 2>>"$T/run.err"
cat "$T/oom.jsonl" >>"$T/jobs.jsonl"

section "through Redis: a worker's results"
start_redis
export REPLAYQ_QUEUE=sq
REPLAYQ_TEST_HOLD=job:slow,job:crash start_worker s1 --repo-root="$ROOT" --jobs=2 --max-deliveries=1 \
	--visibility-timeout=1
W=$WORKER_PID
worker_started s1 60
{
	j w-ok '"mode":"onto","target":"main","revisions":["base..s2"],"contained":true,"ref_action":"update","reply_to":"mine","on_ref_moved":"retry"'
	j w-conflict '"mode":"onto","target":"main","revisions":["base..clash"]'
	j w-train '"mode":"train","target":"main","method":"merge","cars":[{"name":"t","revisions":["topic"]}],"ref_action":"update"'
	echo '{"v":1,"id":"w-invalid","repo":"proj","mode":"sideways"}'
} >"$T/wjobs.jsonl"
"$REPLAYQ" submit --wait=120 "$T/wjobs.jsonl" >"$T/results-worker.jsonl" 2>"$T/submit.err"
"$REPLAYQ" submit --force --wait=120 <<<"$(head -1 "$T/wjobs.jsonl")" >>"$T/results-worker.jsonl" 2>>"$T/submit.err"
j slow '"mode":"onto","target":"main","revisions":["base..topic"],"timeout_ms":1' | run_rq submit
j crash '"mode":"onto","target":"main","revisions":["base..topic"]' | run_rq submit
# slow is held before it runs until the parent kills it at its deadline: timeout
kill -KILL "$(hold_pid job:crash)" # crashed
wait_for "the results of slow and crash" 120 eval '"$REPLAYQ" result slow crash >/dev/null 2>&1'
"$REPLAYQ" result slow crash >>"$T/results-worker.jsonl"
rcli --raw LRANGE 'replayq:{sq}:reply:mine' 0 -1 >>"$T/results-worker.jsonl"
check_workers_stop "$W"
cat "$T/wjobs.jsonl" >>"$T/jobs.jsonl"

section "the commands' JSON: replay --format=json, train --format=json"
for args in "--onto=main base..topic" "--onto=main base..clash" "--onto=main base..nothing" \
	"--keep-going --onto=main ^base topic clash" "--advance=main base..s1"; do
	# shellcheck disable=SC2086 # the arguments are words
	"$REPLAYQ" -C "$ROOT/proj" replay --ref-action=print --format=json $args >>"$T/results-cli.jsonl" 2>/dev/null
done
"$REPLAYQ" -C "$ROOT/proj" train --target=main --method=merge --ref-action=print --format=json topic clash s1 \
	>>"$T/results-cli.jsonl" 2>/dev/null
"$REPLAYQ" -C "$ROOT/proj" train --target=main --ref-action=print --format=json --skip=s1 topic s1 \
	>>"$T/results-cli.jsonl" 2>/dev/null

# the examples in the documentation, the quickstart's jobs: parsed by
# replayq run (no repository there: bad_repo for those it takes)
"$PY" - "$TOP/docs/jobs.md" >"$T/doc-jobs.jsonl" <<'PY'
import json, re, sys
for block in re.findall(r"```json\n(.*?)```", open(sys.argv[1]).read(), re.S):
    o = json.loads(block)
    if "mode" in o: # a job (the other blocks are results)
        print(json.dumps(o))
PY
sed -n '/^cat >"$D\/jobs.jsonl" <<.EOT.$/,/^EOT$/p' "$TOP/deploy/quickstart" | sed '1d;$d' >>"$T/doc-jobs.jsonl"
mkdir -p "$T/none"
"$REPLAYQ" run --repo-root="$T/none" "$T/doc-jobs.jsonl" >"$T/results-doc.jsonl" 2>/dev/null || true
check_eq "the docs' jobs: a result each" "$(wc -l <"$T/doc-jobs.jsonl")" "$(wc -l <"$T/results-doc.jsonl")"

section "what the set covers, and that the collection has it all"
out=$("$PY" - "$T" "$REPLAYQ_TEST_JSON_DIR" <<'PY' 2>&1
import collections, glob, json, sys
t, d = sys.argv[1], sys.argv[2]
def lines(f):
    return [json.loads(l) for l in open(f) if l.strip()]
results = [r for f in ("results-run.jsonl", "results-worker.jsonl", "results-cli.jsonl", "results-doc.jsonl")
           for r in lines(t + "/" + f)]
st = collections.Counter(r["status"] for r in results)
codes = {r["error"]["code"] for r in results if "error" in r}
want = {"invalid_job", "bad_repo", "corrupt_object", "bad_revision", "ambiguous_ref", "not_a_ref", "bad_ref",
        "nothing_to_replay", "merge_commit", "empty_commit", "too_many_commits", "ref_locked", "timeout",
        "crashed", "out_of_memory", "usage", "sign_unavailable"}
assert want <= codes, "error codes not produced: %s" % sorted(want - codes)
assert any("refs" in r for r in results) and any("cars" in r for r in results), "keep-going and train results"
assert any(r.get("already_applied") for r in results), "a rerun already applied"
assert any("worker" in r and "attempt" in r for r in results), "a worker's result"
assert any("maintain" in r for r in results), "a maintenance job's result"
assert any(r.get("attempts") == 1 for r in results), "a result of a job with on_ref_moved retry"
# the records of this test's processes (rq_testhook_doc)
seen = collections.defaultdict(list)
for f in glob.glob(d + "/*.docs"):
    data = open(f, "rb").read()
    i = 0
    while i < len(data):
        nl = data.index(b"\n", i)
        kind, verdict, n, m = data[i:nl].decode().split(" ")
        text = data[nl + 1 : nl + 1 + int(n)]
        seen[kind].append((verdict, text))
        i = nl + 2 + int(n) + int(m)
logged = [json.loads(x) for _, x in seen["result"]]
missed = [r for r in results if r not in logged]
assert not missed, "results printed but not collected: %s" % missed[:3]
jobs = lines(t + "/jobs.jsonl") + lines(t + "/doc-jobs.jsonl")
parsed = [json.loads(x) for _, x in seen["job"] if x.startswith(b"{")]
nojob = [j["id"] for j in jobs if not any(p.get("id") == j["id"] for p in parsed)]
assert not nojob, "jobs not collected: %s" % nojob
refused = sum(v != "ok" for v, _ in seen["job"])
print("covered: %d results (%s), %d error codes; collected %d results, %d jobs (%d refused)" % (
    len(results), dict(st), len(codes), len(seen["result"]), len(seen["job"]), refused))
PY
)
echo "$out" | tail -5
check_contains "every kind of result made, every job and result collected" "covered:" "$out"

section "validation"
mkdir -p "$T/mine" && ln -s "$REPLAYQ_TEST_JSON_DIR" "$T/mine/integration-schema" # this test's alone
out=$("$PY" "$TOP/tests/schema_check.py" "$TOP/docs/schema" "$T/mine" 2>&1)
echo "$out" | tail -20
check_contains "every job and result validates; the refused jobs fail the job schema" "schema check ok" "$out"

section "ids of either width"
out=$("$PY" - "$TOP/docs/schema/result.schema.json" "$T"/results-*.jsonl <<'PY' 2>&1
import json, re, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
ID = re.compile(r"^(pack-)?[0-9a-f]{40}$")
def widen(x, f):
    """x with every 40-digit id (and pack name) through f; the count in n."""
    if isinstance(x, dict):
        return {k: widen(y, f) for k, y in x.items()}
    if isinstance(x, list):
        return [widen(y, f) for y in x]
    if isinstance(x, str) and ID.match(x):
        widen.n += 1
        return f(x)
    return x
ids = ok = bad = 0
for name in sys.argv[2:]:
    for line in open(name):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        widen.n = 0
        long = widen(r, lambda s: s + s[-24:])
        if not widen.n:
            continue
        ids += widen.n
        errs = list(v.iter_errors(long))
        assert not errs, "64 digits refused: %s" % errs[0].message
        ok += 1
        for f in (lambda s: s[:-1], lambda s: s + "0", lambda s: s + s[-23:],
                  lambda s: s + s[-25:], lambda s: s[:-1] + "A", lambda s: s + s[-23:] + "A"):
            assert list(v.iter_errors(widen(r, f))), "a wrong width validates"
            bad += 1
assert ok >= 10, "too few results with ids: %d" % ok
print("widths ok: %d results, %d ids at 64 digits; %d wrong widths refused" % (ok, ids, bad))
PY
)
echo "$out" | tail -3
check_contains "results validate with ids and pack names of 40 and 64 digits, and no other" "widths ok:" "$out"

# the check fails, naming the test, on a result and a job that break the
# schemas
B=$T/broken/integration-fake
mkdir -p "$B"
doc() { printf '%s %s %d %d\n%s%s\n' "$1" "$2" "${#3}" "${#4}" "$3" "$4"; }
{
	doc result ok '{"v":1,"status":"fine"}' ''
	doc job ok '{"v":1,"id":"x","repo":"r","mode":"onto","target":"main","revisions":["a"],"colour":"red"}' ''
	doc job invalid_job '{"v":1,"id":"x","repo":"r","mode":"onto","target":"main","revisions":["a"]}' 'made up'
} >"$B/1.docs"
out=$("$PY" "$TOP/tests/schema_check.py" "$TOP/docs/schema" "$T/broken" 2>&1) && rc=0 || rc=$?
check_eq "a broken set: the check fails" 1 "$rc"
check_contains "a result that breaks the schema, named with its test" "integration/fake: result ok:" "$out"
check_contains "an accepted job the schema refuses" "replayq accepted it, the schema refuses it" "$out"
check_contains "a refused job the schema takes" "replayq refused it (invalid_job: made up), the schema takes it" "$out"
finish
