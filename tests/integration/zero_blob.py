# SPDX-License-Identifier: GPL-2.0-only
"""zero_blob.py: a blob of zeros of any size, for hostile_odb.sh.

usage: python3 zero_blob.py loose <objects-dir> <size>
       python3 zero_blob.py pack <objects-dir> <size>

Writes a blob of <size> zero bytes into <objects-dir> as a loose object, or
as a pack of that one object with its version-2 index, and prints its id.
A blob of gigabytes costs a few megabytes of disk and about a second: its
zlib stream is made of one deflated chunk of 64 MiB of zeros, repeated (each
chunk ends on a full flush, so that a chunk neither depends on what came
before nor leaves bits over), closed by an empty final block and the
Adler-32 of the content (RFC 1950, 1951). The id is the SHA-1 of
"blob <size>\\0" and the content, as git computes it.
"""
import hashlib
import os
import struct
import sys
import zlib

CHUNK = 64 << 20
ADLER_MOD = 65521


def raw_deflate(data):
    """data as raw deflate blocks, none final, ending byte-aligned."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


def zlib_stream(prefix, size):
    """The zlib stream of prefix followed by size zeros."""
    zeros = bytes(CHUNK)
    whole, rest = divmod(size, CHUNK)
    body = [b"\x78\x01", raw_deflate(prefix)]
    body.append(raw_deflate(zeros) * whole)
    if rest:
        body.append(raw_deflate(bytes(rest)))
    body.append(b"\x03\x00")  # an empty final block (fixed codes)
    a = zlib.adler32(prefix)
    lo, hi = a & 0xFFFF, a >> 16
    hi = (hi + size * lo) % ADLER_MOD  # zeros add nothing to lo
    body.append(struct.pack(">I", hi << 16 | lo))
    return b"".join(body)


# ids of the sizes the tests use (blob_id's answers: hashing gigabytes
# takes seconds)
KNOWN = {
    2 << 30: "77e9132b46cb9535f286f18974872f40049d1a89",
    (1 << 32) + (1 << 27): "b8cfba97c2b962a44f080b3ca4e03b3204b6a350",
}


def blob_id(size):
    if size in KNOWN:
        return bytes.fromhex(KNOWN[size])
    h = hashlib.sha1(b"blob %d\0" % size)
    zeros = bytes(CHUNK)
    whole, rest = divmod(size, CHUNK)
    for _ in range(whole):
        h.update(zeros)
    h.update(bytes(rest))
    return h.digest()


def write_loose(objects, size):
    oid = blob_id(size).hex()
    d = os.path.join(objects, oid[:2])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, oid[2:]), "wb") as f:
        f.write(zlib_stream(b"blob %d\0" % size, size))
    return oid


def entry_header(kind, size):
    """A pack entry's type and size (base 128, four bits first)."""
    out = bytearray()
    c = kind << 4 | (size & 15)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def write_pack(objects, size):
    oid = blob_id(size)
    entry = entry_header(3, size) + zlib_stream(b"", size)
    pack = b"PACK" + struct.pack(">II", 2, 1) + entry
    pack += hashlib.sha1(pack).digest()
    fanout = b"".join(struct.pack(">I", 1 if i >= oid[0] else 0) for i in range(256))
    idx = b"\377tOc" + struct.pack(">I", 2) + fanout + oid
    idx += struct.pack(">I", zlib.crc32(entry)) + struct.pack(">I", 12) + pack[-20:]
    idx += hashlib.sha1(idx).digest()
    d = os.path.join(objects, "pack")
    os.makedirs(d, exist_ok=True)
    name = os.path.join(d, "pack-" + pack[-20:].hex())
    with open(name + ".pack", "wb") as f:
        f.write(pack)
    with open(name + ".idx", "wb") as f:
        f.write(idx)
    return oid.hex()


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("loose", "pack"):
        sys.exit(__doc__)
    write = write_loose if sys.argv[1] == "loose" else write_pack
    print(write(sys.argv[2], int(sys.argv[3])))


if __name__ == "__main__":
    main()
