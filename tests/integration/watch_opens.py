#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run a command and report every file or directory it (or anything else)
opened under DIR meanwhile, through Linux's inotify (IN_OPEN on every
directory of DIR's tree, links not followed).

    watch_opens.py LOG DIR -- command [args...]

The opened paths go to LOG, one a line (an empty file: nothing opened);
the command's status is ours. The kernel queues an event when the open
happens, so once the command has exited every open it made is in the
queue: reading it then, without waiting, misses none."""
import ctypes
import os
import struct
import subprocess
import sys

IN_OPEN = 0x20
IN_NONBLOCK = os.O_NONBLOCK
HEADER = struct.Struct("iIII")


def main():
    log, top = sys.argv[1], os.path.realpath(sys.argv[2])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_NONBLOCK)
    if fd < 0:
        sys.exit("inotify_init1 failed")
    dirs = {}
    for here, subdirs, _ in os.walk(top):
        wd = libc.inotify_add_watch(fd, here.encode(), IN_OPEN)
        if wd >= 0:
            dirs[wd] = here
    drain(fd)  # (the walk's own openings)
    status = subprocess.call(cmd)
    seen = drain(fd, dirs)
    with open(log, "w") as f:
        f.write("".join(p + "\n" for p in seen))
    sys.exit(status)


def drain(fd, dirs=None):
    """The paths of the events queued now (no wait)."""
    seen = []
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            break
        at = 0
        while at < len(buf):
            wd, _, _, n = HEADER.unpack_from(buf, at)
            name = buf[at + HEADER.size:at + HEADER.size + n].rstrip(b"\0").decode(errors="replace")
            at += HEADER.size + n
            where = (dirs or {}).get(wd, "?")
            path = os.path.join(where, name) if name else where
            if path not in seen:
                seen.append(path)
    return seen


if __name__ == "__main__":
    main()
