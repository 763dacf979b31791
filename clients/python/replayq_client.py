# SPDX-License-Identifier: GPL-2.0-only
"""A replayq producer in Python: submit replay jobs, wait for their results.

It speaks the wire protocol of docs/protocol.md with redis-py (Debian's
python3-redis) and nothing else of replayq, as a producer in any language
would:

    from replayq_client import Client
    c = Client.from_url("redis://127.0.0.1:6379/0", queue="default")
    c.submit({"id": "mr-1", "repo": "web", "mode": "onto", "target": "main",
              "revisions": ["main..feature"], "ref_action": "update"})
    results = c.wait(["mr-1"], timeout=60)   # {"mr-1": {...result...}}
    c.result("mr-1")                         # the stored result, or None

submit() does what `replayq submit` does before the workers see a job: it
checks the id, stamps submitted_at (and reply_to, to wait), creates the
consumer group when it may, and adds the job to the stream in one script
that refuses an id with a result or still queued (DuplicateJob) unless
force=True. The workers check everything else (an invalid job gets an
invalid_job result). Run as a program it submits JSON lines and prints the
results: python3 replayq_client.py [--redis URL] [--queue Q] [--wait S] FILE
"""
import json
import os
import re
import sys
import time
import uuid

import redis

PROTOCOL_VERSION = 1
ID_RE = re.compile(r"^[A-Za-z0-9._:@/+-]{1,128}$")

# the checks and writes of docs/protocol.md, "Submitting", in one script:
# KEYS jobs jobkey result stats claim [groups group:<G>]; ARGV job force [G].
# A job with a group goes to the jobs stream when its group is idle (and
# holds the group's turn), else it is parked in the group's stream; a turn
# whose entry has left the jobs stream passes to the first parked job.
ENQUEUE = """
local P = string.sub(KEYS[1], 1, #KEYS[1] - 4)
local id, g = string.sub(KEYS[2], #KEYS[1] + 1), ARGV[3]
local function want(k, t)
  local x = redis.call('TYPE', k).ok
  if x == 'none' or x == t then return nil end
  return 'WRONGTYPE ' .. k .. ' holds a ' .. x .. ', not a ' .. t
end
local function live(sid)
  return sid and string.match(sid, '^%d+%-%d+$') ~= nil and
    #redis.call('XRANGE', KEYS[1], sid, sid) == 1
end
local function parked(p)
  local gsid, pg = string.match(p or '', '^(%d+%-%d+) (%S+)$')
  if not gsid or want(P .. 'group:' .. pg, 'stream') then return false end
  return #redis.call('XRANGE', P .. 'group:' .. pg, gsid, gsid) == 1
end
local function advance(grp)
  local gk = P .. 'group:' .. grp
  while true do
    local first = redis.call('XRANGE', gk, '-', '+', 'COUNT', 1)
    if #first == 0 then
      redis.call('HDEL', P .. 'groups', grp)
      redis.call('DEL', gk)
      return
    end
    local gsid, f = first[1][1], first[1][2]
    redis.call('XDEL', gk, gsid)
    local fid, fjob
    for i = 1, #f - 1, 2 do
      if f[i] == 'id' then fid = f[i + 1] elseif f[i] == 'job' then fjob = f[i + 1] end
    end
    if fid and fjob then
      local sid = redis.call('XADD', KEYS[1], '*', unpack(f))
      redis.call('HSET', P .. 'groups', grp, sid .. ' ' .. fid)
      local jk = P .. 'job:' .. fid
      local cur = not want(jk, 'string') and redis.call('GET', jk)
      if not want(jk, 'string') and (not cur or cur == gsid .. ' ' .. grp) then
        redis.call('SET', jk, sid)
      end
      if redis.call('XLEN', gk) == 0 then redis.call('DEL', gk) end
      return
    end
  end
end
local bad = want(KEYS[1], 'stream') or want(KEYS[2], 'string') or
  want(KEYS[3], 'string') or want(KEYS[4], 'hash') or want(KEYS[5], 'string')
if not bad and g then bad = want(KEYS[6], 'hash') or want(KEYS[7], 'stream') end
if bad then return redis.error_reply(bad) end
local queued = redis.call('GET', KEYS[2])
local fields = {'id', id, 'job', ARGV[1]}
if ARGV[2] ~= '1' then
  if redis.call('EXISTS', KEYS[3]) == 1 then return {0, 'result'} end
  if queued then return {0, queued} end
else
  if live(queued) or parked(queued) then return {0, queued} end
  local prior, claim = redis.call('GET', KEYS[3]), redis.call('GET', KEYS[5])
  local digest = claim and string.match(claim, ' (%x+)$')
  redis.call('DEL', KEYS[3], KEYS[5])
  if prior and digest and #digest == 40 then
    fields = {'id', id, 'job', ARGV[1], 'prior', prior, 'prior_digest', digest}
  end
end
if g then
  local turn = redis.call('HGET', KEYS[6], g)
  if turn and not live(string.match(turn, '^(%S+)')) then
    advance(g)
    turn = redis.call('HGET', KEYS[6], g)
  end
  if turn then
    local gsid = redis.call('XADD', KEYS[7], '*', unpack(fields))
    redis.call('SET', KEYS[2], gsid .. ' ' .. g)
    redis.call('HINCRBY', KEYS[4], 'submitted', 1)
    return {1, gsid}
  end
end
local sid = redis.call('XADD', KEYS[1], '*', unpack(fields))
if g then redis.call('HSET', KEYS[6], g, sid .. ' ' .. id) end
redis.call('SET', KEYS[2], sid)
redis.call('HINCRBY', KEYS[4], 'submitted', 1)
return {1, sid}
"""


def ref_bytes(name):
    """The bytes of a ref name as a result writes it (docs/protocol.md):
    each \\xNN is the byte NN (a byte that is not UTF-8, or a backslash),
    every other character its UTF-8 bytes."""
    out, i = bytearray(), 0
    while i < len(name):
        if name[i] == "\\":
            out.append(int(name[i + 2:i + 4], 16))
            i += 4
        else:
            out += name[i].encode()
            i += 1
    return bytes(out)


class DuplicateJob(Exception):
    """The id has a result already, or a job of that id is still queued."""

    def __init__(self, job_id, why):
        super().__init__("job %s not queued: %s" % (job_id, why))
        self.job_id = job_id
        self.why = why


class Client:
    """A producer for one queue. r: a redis.Redis (decode_responses=True)."""

    def __init__(self, r, queue="default"):
        if not queue or "{" in queue or "}" in queue:
            raise ValueError("bad queue name %r" % queue)
        self.r = r
        self.queue = queue
        self._enqueue = r.register_script(ENQUEUE)
        self.reply_to = "py-%s" % uuid.uuid4().hex[:16]

    @classmethod
    def from_url(cls, url=None, queue=None, connect_timeout=2.0):
        """From a redis:// URL (else $REPLAYQ_REDIS_URL, else localhost), the
        password also from $REPLAYQ_REDIS_PASSWORD_FILE or
        $REPLAYQ_REDIS_PASSWORD, as replayq reads them."""
        url = url or os.environ.get("REPLAYQ_REDIS_URL") or "redis://127.0.0.1:6379/0"
        password = None
        pw_file = os.environ.get("REPLAYQ_REDIS_PASSWORD_FILE")
        if pw_file:
            with open(pw_file) as f:
                password = f.readline().rstrip("\r\n")
        elif os.environ.get("REPLAYQ_REDIS_PASSWORD"):
            password = os.environ["REPLAYQ_REDIS_PASSWORD"]
        kw = {"decode_responses": True, "socket_connect_timeout": connect_timeout}
        if password is not None:
            kw["password"] = password
        r = redis.Redis.from_url(url, **kw)
        return cls(r, queue or os.environ.get("REPLAYQ_QUEUE") or "default")

    def key(self, rest):
        """A key of the queue: replayq:{Q}:<rest>."""
        return "replayq:{%s}:%s" % (self.queue, rest)

    def ensure_group(self):
        """The consumer group 'workers', reading from the start; a producer
        without the right to make it (NOPERM) goes on: a worker makes it."""
        try:
            self.r.xgroup_create(self.key("jobs"), "workers", id="0", mkstream=True)
        except redis.ResponseError as e:
            if not str(e).startswith(("BUSYGROUP", "NOPERM")):
                raise

    def submit(self, job, force=False, wait=True):
        """Queue one job (a dict): returns its stream entry id. With wait
        (default), its result will come to this client's reply list (see
        wait()) unless the job names its own reply_to."""
        if not isinstance(job, dict):
            raise TypeError("a job is a JSON object (dict)")
        job_id = job.get("id")
        if not isinstance(job_id, str) or not ID_RE.match(job_id):
            raise ValueError("bad job id %r: 1-128 of [A-Za-z0-9._:@/+-]" % (job_id,))
        job = dict(job)
        job.setdefault("v", PROTOCOL_VERSION)
        job.setdefault("submitted_at", int(time.time() * 1000))
        if wait:
            job.setdefault("reply_to", self.reply_to)
        self.ensure_group()
        keys = [self.key("jobs"), self.key("job:" + job_id), self.key("result:" + job_id), self.key("stats"),
                self.key("claim:" + job_id)]
        text = json.dumps(job, separators=(",", ":"))
        args = [text, "1" if force else "0"]
        group = job.get("group")
        if group is not None:
            if not isinstance(group, str) or not ID_RE.match(group):
                raise ValueError("bad group %r: 1-128 of [A-Za-z0-9._:@/+-]" % (group,))
            keys += [self.key("groups"), self.key("group:" + group)]
            args.append(group)
        queued, what = self._enqueue(keys=keys, args=args)
        if not queued:
            raise DuplicateJob(job_id, "it has a result" if what == "result" else "it is still queued or running")
        return what

    def result(self, job_id):
        """The stored result of a job (a dict), or None."""
        text = self.r.get(self.key("result:" + job_id))
        return json.loads(text) if text is not None else None

    def wait(self, job_ids, timeout=300.0):
        """Wait up to timeout seconds for the results of the jobs this
        client submitted (or any whose result is stored): {id: result}
        for those that came; the others are missing from it."""
        want = set(job_ids)
        got = {}
        for job_id in list(want):  # stored already (a duplicate, a fast worker)
            r = self.result(job_id)
            if r is not None:
                got[job_id] = r
        deadline = time.monotonic() + timeout
        while want - set(got):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            item = self.r.blpop([self.key("reply:" + self.reply_to)], timeout=min(left, 1.0))
            if item is not None:
                r = json.loads(item[1])
                if r.get("id") in want:
                    got[r["id"]] = r
                continue
            for job_id in want - set(got):  # results stored without a reply
                r = self.result(job_id)
                if r is not None:
                    got[job_id] = r
        return got


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description="submit replayq jobs (JSON lines) and print their results")
    p.add_argument("--redis")
    p.add_argument("--queue")
    p.add_argument("--wait", type=float, default=300.0)
    p.add_argument("--force", action="store_true")
    p.add_argument("file", nargs="?", default="-")
    a = p.parse_args(argv)
    c = Client.from_url(a.redis, a.queue)
    f = sys.stdin if a.file == "-" else open(a.file)
    ids, worst = [], 0
    for line in f:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            c.submit(job, force=a.force)
            ids.append(job["id"])
        except DuplicateJob as e:
            print("warning: %s" % e, file=sys.stderr)
            worst = 2
    results = c.wait(ids, a.wait)
    for job_id in ids:
        r = results.get(job_id)
        if r is None:
            print("error: no result for job %s within %gs" % (job_id, a.wait), file=sys.stderr)
            worst = 2
            continue
        print(json.dumps(r, separators=(",", ":")))
        worst = max(worst, {"ok": 0, "conflict": 1}.get(r["status"], 2))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
