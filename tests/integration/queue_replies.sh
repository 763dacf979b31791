#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Replies of a shape Redis does not send (a server that is not Redis, a
# proxy that mangles them) are errors the queue names, not crashes or
# "out of memory": a pending entry whose consumer is nil, a BLPOP reply
# whose value is nil. The server is a small fake in python3 that answers
# each command with a reply made here.
. "$(dirname "$0")/../lib.sh"
require python3 jq

cat >"$T/fake.py" <<'PY'
import socket, sys, threading, time
port, ready = int(sys.argv[1]), sys.argv[2]
REPLIES = {
    b"XGROUP": b"+OK\r\n",
    # enqueue: queued as entry 1-0
    b"EVAL": b"*2\r\n:1\r\n$3\r\n1-0\r\n",
    # [list, nil]: no value where the result should be (after a while,
    # as a blocking pop would answer)
    b"BLPOP": b"*2\r\n$3\r\nkey\r\n$-1\r\n",
    # one entry whose consumer is nil
    b"XPENDING": b"*1\r\n*4\r\n$3\r\n1-0\r\n$-1\r\n:5\r\n:1\r\n",
}
def command(f):
    line = f.readline()
    if not line.startswith(b"*"):
        return None
    args = []
    for _ in range(int(line[1:])):
        n = int(f.readline()[1:])
        args.append(f.read(n + 2)[:-2])
    return args
def serve(c):
    f = c.makefile("rb")
    while True:
        args = command(f)
        if not args:
            break
        name = args[0].upper()
        if name == b"BLPOP":
            time.sleep(0.2)
        c.sendall(REPLIES.get(name, b"+OK\r\n"))
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)
open(ready, "w").close()
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
# the fake on a free port (another, should one be taken meanwhile)
for attempt in 1 2 3; do
	PORT=$(free_port)
	rm -f "$T/fake.ready"
	python3 "$T/fake.py" "$PORT" "$T/fake.ready" 2>"$T/fake.log" &
	FAKE=$!
	BG_PIDS+=("$FAKE")
	disown "$FAKE"
	wait_for "the fake server" 30 eval 'test -e "$T/fake.ready" || ! kill -0 $FAKE 2>/dev/null'
	[ -e "$T/fake.ready" ] && break
done
check "the fake server listens" test -e "$T/fake.ready"
export REPLAYQ_REDIS_URL="redis://127.0.0.1:$PORT/0" REPLAYQ_QUEUE=fake

section "queue pending: an entry whose consumer is nil"
run_rq queue pending
check_eq "exit 128" 128 "$RC"
check_contains "the reply is named" "unexpected reply to XPENDING" "$ERR"
check "not taken for out of memory" eval '! grep -q "out of memory" <<<"$ERR"'
ALL=$ERR

section "submit --wait: a BLPOP reply whose value is nil"
run_rq submit --wait=1 <<<"$(job r1)"
check_eq "no result: exit 2" 2 "$RC"
check_contains "the reply is named" "unexpected reply to BLPOP" "$ERR"
check_contains "and the job has no result" "no result for job r1" "$ERR"
ALL+=$ERR

check "no sanitizer report" sanitizer_clean <(printf '%s\n' "$ALL")
finish
