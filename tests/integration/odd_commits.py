# SPDX-License-Identifier: GPL-2.0-only
"""odd_commits.py: repositories of old and unusual commits, for oracle_odd.sh.

usage: python3 odd_commits.py <git-dir> <first-seed> <count>

Writes for each seed, as loose objects straight into <git-dir>/objects (so
that nothing git would normalise on the way in is normalised), a small
history whose trees and commits are the unusual kinds git meets in old
repositories:

  trees    entries with modes 100664, 100600, 100775, 100700 (regular files
           written by early git or other tools), 120000 symlinks, 160000
           gitlinks, zero-padded "040000" directories and "40755"; at the
           root and in subdirectories, in directories that one side or both
           sides change (merge-ort opens those and writes them again with
           canonical modes) and in directories no side touches;
  commits  "encoding" headers (ISO-8859-1, latin-1, ISO-8859-8, ISO-8859-15,
           Shift_JIS, EUC-JP, ISO-2022-JP, KOI8-R, CP1252, UTF-16, UTF-16LE,
           utf8, an unknown name, a wrong one) over text in that encoding;
           Latin-1 bytes without a header, in the author, the message and
           extra headers; extra headers (change-id, a multi-line mergetag,
           unknown ones, a key with no value, a key alone), gpgsig and
           gpgsig-sha256 signatures; messages without a trailing newline,
           empty, missing, with leading blank lines of spaces, tabs, CR, FF
           and VT, CRLF lines, a NUL byte, a "Revert" subject.

Branches (printed as `git update-ref --stdin` lines on stdout, each under
s<seed>/): base, up
(1-3 commits on base that touch some of the same directories), topic (2-6
commits on base), and odd-base / odd-up / odd-topic copies for the modes
that move a branch, and empty (a root commit with the empty tree). The
same seed always writes the same objects.
"""

import hashlib
import os
import random
import subprocess
import sys
import zlib

ENCODINGS = [
    # (header name, python codec, sample text)
    ("ISO-8859-1", "latin-1", "D\u00e9j\u00e0 vu na\u00efve fa\u00e7ade"),
    ("latin-1", "latin-1", "Gr\u00fc\u00dfe aus K\u00f6ln"),
    ("iso-8859-1", "latin-1", "se\u00f1or ni\u00f1o"),
    ("ISO-8859-8", "iso8859_8", "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd"),
    ("ISO-8859-15", "iso8859_15", "prix 10 \u20ac \u0153uvre"),
    ("Shift_JIS", "shift_jis", "\u65e5\u672c\u8a9e\u306e\u30c6\u30b9\u30c8"),
    ("SJIS", "shift_jis", "\u30ed\u30fc\u30de\u5b57"),
    ("EUC-JP", "euc_jp", "\u6587\u5b57\u5316\u3051"),
    ("ISO-2022-JP", "iso2022_jp", "\u304b\u306a\u6f22\u5b57"),
    ("KOI8-R", "koi8_r", "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440"),
    ("CP1252", "cp1252", "\u201cquoted\u201d \u2013 caf\u00e9"),
    ("UTF-16", "utf-16", "wide text"),
    ("UTF-16LE", "utf-16-le", "little"),
    ("utf8", "utf-8", "d\u00e9j\u00e0 utf8"),
    ("UTF-8", "utf-8", "\u00fcber UTF-8"),
    ("x-no-such-encoding", "latin-1", "caf\u00e9 unknown"),
    ("ISO-8859-1", "utf-8", "mis-declared \u00e9t\u00e9"),
    ("Shift_JIS", "latin-1", "broken \u00ff\u00fe sjis"),
]

ODD_FILE_MODES = ["100664", "100600", "100775", "100700", "100644", "100755", "100640"]


# the repository's object format (sha1 or sha256), set by main()
ALGO = "sha1"


def oid_of(data):
    """An id of the repository's format for data (also for ids of objects
    that are not in the repository: a gitlink, a mergetag's object)."""
    return hashlib.new(ALGO, data).hexdigest()


class Repo:
    def __init__(self, gitdir):
        self.objdir = os.path.join(gitdir, "objects")

    def write(self, kind, data):
        raw = b"%s %d\0" % (kind, len(data)) + data
        oid = oid_of(raw)
        path = os.path.join(self.objdir, oid[:2], oid[2:])
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(zlib.compress(raw))
        return oid


def is_dir_mode(mode):
    return mode.lstrip("0").startswith("4")


def tree_bytes(repo, tree):
    """tree: name -> (mode string, bytes | dict | gitlink hex)."""
    def key(item):
        name, (mode, _) = item
        return name.encode() + (b"/" if is_dir_mode(mode) else b"")

    out = b""
    for name, (mode, val) in sorted(tree.items(), key=key):
        if isinstance(val, dict):
            oid = write_tree(repo, val)
        elif mode == "160000":
            oid = val
        else:
            oid = repo.write(b"blob", val)
        out += mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(oid)
    return out


def write_tree(repo, tree):
    return repo.write(b"tree", tree_bytes(repo, tree))


def copy_tree(tree):
    return {k: (m, copy_tree(v) if isinstance(v, dict) else v) for k, (m, v) in tree.items()}


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.t = 1500000000 + seed * 1000
        self.n = 0

    def lines(self, k):
        words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
        return "".join(
            " ".join(self.r.choice(words) for _ in range(4)) + " %d\n" % self.r.randrange(1000)
            for _ in range(k)
        ).encode()

    def odd_mode(self):
        return self.r.choice(ODD_FILE_MODES)

    def base_tree(self):
        r = self.r
        t = {}
        for i in range(r.randrange(3, 6)):
            t["f%d.txt" % i] = (self.odd_mode(), self.lines(8))
        t["link"] = ("120000", b"f0.txt")
        if r.random() < 0.5:
            t["sub"] = ("160000", oid_of(b"sub%d" % r.randrange(99)))
        for d in ("d1", "d2", "d3"):
            sub = {"g%d.c" % i: (self.odd_mode(), self.lines(6)) for i in range(r.randrange(2, 5))}
            if r.random() < 0.5:
                sub["deep"] = (r.choice(["40000", "040000"]),
                               {"h.txt": (self.odd_mode(), self.lines(5))})
            t[d] = (r.choice(["40000", "040000", "40000", "40755"]), sub)
        return t

    def files(self, tree, prefix=""):
        for name, (mode, val) in tree.items():
            if isinstance(val, dict):
                yield from self.files(val, prefix + name + "/")
            elif mode.startswith("100"):
                yield prefix + name

    def some_dir(self, tree):
        dirs = [v for k, (m, v) in sorted(tree.items()) if isinstance(v, dict)]
        return self.r.choice(dirs) if dirs else tree

    def node(self, tree, path):
        parts = path.split("/")
        for p in parts[:-1]:
            tree = tree[p][1]
        return tree, parts[-1]

    def change(self, tree, hot):
        """One change to tree (in place); hot: paths both sides like to edit."""
        r = self.r
        files = sorted(self.files(tree))
        kind = r.choice(["edit", "edit", "edit", "add", "delete", "mode", "canon", "none",
                         "link", "hot", "rename", "move", "movedir"])
        if kind == "hot" and hot:
            path = r.choice(hot)
            if path in files:
                d, name = self.node(tree, path)
                mode, val = d[name]
                d[name] = (mode, val + self.lines(1))
            return
        if kind == "none" or not files:
            return
        path = r.choice(files)
        d, name = self.node(tree, path)
        mode, val = d[name]
        if kind == "edit":
            lines = val.split(b"\n")
            lines[r.randrange(len(lines))] = self.lines(1).rstrip(b"\n")
            d[name] = (mode, b"\n".join(lines))
        elif kind == "add":
            d["new%d.txt" % r.randrange(1000)] = (self.odd_mode(), self.lines(3))
        elif kind == "delete" and len(d) > 1:
            del d[name]
        elif kind == "mode":
            d[name] = (r.choice(ODD_FILE_MODES), val)
        elif kind == "canon":  # the same mode written canonically: no change to git
            d[name] = ("100755" if int(mode, 8) & 0o100 else "100644", val)
        elif kind in ("rename", "move") and len(d) > 1:
            del d[name]
            to = d if kind == "rename" else self.some_dir(tree)
            if r.random() < 0.5:
                val = val + self.lines(1)
            to["mv%d-%s" % (r.randrange(100), name)] = (mode, val)
        elif kind == "movedir":
            dirs = [k for k, (m, v) in tree.items() if isinstance(v, dict)]
            if dirs:
                src = r.choice(dirs)
                tree["moved%d" % r.randrange(100)] = tree.pop(src)
        elif kind == "link" and "link" in tree:
            tree["link"] = ("120000", r.choice([b"f1.txt", b"d1/g0.c", b"nowhere"]))

    def when(self):
        self.t += 60 * (1 + self.r.randrange(100))
        return b"%d %s" % (self.t, self.r.choice([b"+0000", b"+0200", b"-0730"]))

    def message_and_headers(self):
        """(extra header lines, encoding header or None, author name bytes, message bytes)"""
        r = self.r
        self.n += 1
        enc = None
        name_txt, subj_txt = "A U Thor", "change %d" % self.n
        codec = "utf-8"
        style = r.random()
        if style < 0.45:
            enc, codec, sample = r.choice(ENCODINGS)
            name_txt = sample.split()[0] + " Author"
            subj_txt = "%s %d" % (sample, self.n)
        elif style < 0.65:  # Latin-1 bytes and no header
            codec = "latin-1"
            name_txt = "David K\u00e5gedal"
            subj_txt = "r\u00e9sum\u00e9 %d" % self.n
        name = name_txt.encode(codec)
        body = self.body(subj_txt, codec)
        return self.headers(), enc, name, body

    def body(self, subject, codec):
        r = self.r
        subj = subject.encode(codec)
        body = b"\n\nsome text " + "\u00e9".encode(codec, "replace") + b"\n"
        kind = r.choice(["plain", "plain", "plain", "notrail", "empty", "none", "lead", "crlf",
                         "nul", "revert", "reapply", "blankonly"])
        if kind == "notrail":
            return subj + body.rstrip(b"\n")
        if kind == "empty":
            return b""
        if kind == "none":
            return None  # no blank line after the header
        if kind == "lead":
            lead = b"".join(r.choice([b"\n", b"  \n", b"\t\n", b"\r\n", b"\f\n", b"\x0b\n",
                                      b" \t \n"]) for _ in range(r.randrange(1, 4)))
            return lead + subj + body
        if kind == "crlf":
            return subj + b"\r\n\r\nbody line\r\n"
        if kind == "nul":
            return subj + b"\n\nbefore\0after\n"
        if kind == "revert":
            return b'Revert "' + subj + b'"' + body
        if kind == "reapply":
            return b'Revert "Revert "' + subj + b'""' + body
        if kind == "blankonly":
            return b"\n \n\t\n"
        return subj + body

    def headers(self):
        r = self.r
        out = b""
        for _ in range(r.randrange(0, 3)):
            kind = r.choice(["change-id", "mergetag", "unknown", "nospace", "empty", "gpgsig",
                             "gpgsig-sha256", "latin1", "cont"])
            if kind == "change-id":
                # a Gerrit Change-Id: 40 digits whatever the format
                out += b"change-id I%s\n" % hashlib.sha1(b"%d" % r.randrange(9999)).hexdigest().encode()
            elif kind == "mergetag":
                out += (b"mergetag object %s\n type commit\n tag v1.%d\n tagger T <t@x> %s\n \n"
                        b" tag message\n -----BEGIN PGP SIGNATURE-----\n \n iQEz\n"
                        b" -----END PGP SIGNATURE-----\n" % (
                            oid_of(b"x").encode(), r.randrange(9), self.when()))
            elif kind == "unknown":
                out += b"x-origin %d\n" % r.randrange(999)
            elif kind == "nospace":
                out += b"svn-marker\n"
            elif kind == "empty":
                out += b"note \n"
            elif kind in ("gpgsig", "gpgsig-sha256"):
                out += (kind.encode() + b" -----BEGIN PGP SIGNATURE-----\n \n iQEzBAAB\n"
                        b" =abcd\n -----END PGP SIGNATURE-----\n")
            elif kind == "latin1":
                out += b"x-reviewer J\xf6rg\n"
            elif kind == "cont":
                out += b"x-multi first\n second\n \n third\n"
        return out

    def commit(self, repo, tree_oid, parent):
        headers, enc, name, msg = self.message_and_headers()
        c = b"tree %s\n" % tree_oid.encode()
        if parent:
            c += b"parent %s\n" % parent.encode()
        c += b"author " + name + b" <author@example.com> " + self.when() + b"\n"
        c += b"committer C O Mitter <committer@example.com> " + self.when() + b"\n"
        if enc is not None:
            c += b"encoding " + enc.encode() + b"\n"
        c += headers
        if msg is not None:
            c += b"\n" + msg
        return repo.write(b"commit", c)


def history(repo, seed):
    """One seed's history: its branches as (name, id)."""
    g = Gen(seed)
    tree = g.base_tree()
    base = g.commit(repo, write_tree(repo, tree), None)
    base2_tree = copy_tree(tree)
    g.change(base2_tree, [])
    base2 = g.commit(repo, write_tree(repo, base2_tree), base)
    hot = sorted(g.files(base2_tree))[:3]
    up_tree, up = copy_tree(base2_tree), base2
    for _ in range(g.r.randrange(1, 4)):
        g.change(up_tree, hot)
        up = g.commit(repo, write_tree(repo, up_tree), up)
    topic_tree, topic = copy_tree(base2_tree), base2
    for _ in range(g.r.randrange(2, 7)):
        g.change(topic_tree, hot)
        topic = g.commit(repo, write_tree(repo, topic_tree), topic)
    empty = repo.write(b"commit", b"tree %s\nauthor E <e@x> 1 +0000\ncommitter E <e@x> 1 +0000"
                                 b"\n\nempty\n" % write_tree(repo, {}).encode())
    return (("base", base2), ("up", up), ("topic", topic), ("odd-base", base2),
            ("odd-up", up), ("odd-topic", topic), ("empty", empty))


def main():
    global ALGO
    gitdir, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ALGO = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "--show-object-format"],
                          check=True, capture_output=True, text=True).stdout.strip()
    repo = Repo(gitdir)
    for seed in range(first, first + count):
        for ref, oid in history(repo, seed):
            print("update refs/heads/s%d/%s %s" % (seed, ref, oid))


if __name__ == "__main__":
    main()
