#!/usr/bin/python3
"""mmidx.py - an independent numpy reader and writer of Megatron indexed datasets.

Written from the format descriptions (megatron-compat.md section 1, idx-pack(1)
FILES, owt-tok(5)), not from idx-pack's C code, so the tests can compare the two:

    mmidx.py pack PREFIX < stream     owt token stream (version 1 or 2) ->
                                      PREFIX.bin/.idx (document mode; empty
                                      documents skipped)
    mmidx.py cat PREFIX VOCAB EOD     dataset -> owt token stream (version 2,
                                      its trailer), a document's sequences
                                      joined
    mmidx.py info PREFIX              "sequences documents tokens dtype"

Needs Debian's python3-numpy (run it with /usr/bin/python3).
"""
import struct
import sys

import numpy as np

MAGIC = b"MMIDIDX\x00\x00"
DTYPES = {8: np.dtype("<u2"), 4: np.dtype("<i4")}


def read(prefix):
    """The checked arrays of a dataset: dtype code, lengths, pointers, docs, tokens."""
    idx = np.fromfile(prefix + ".idx", dtype=np.uint8)
    assert bytes(idx[:9]) == MAGIC, "bad magic"
    version, = struct.unpack("<Q", bytes(idx[9:17]))
    assert version == 1, "version"
    code = int(idx[17])
    dtype = DTYPES[code]
    n, d = struct.unpack("<QQ", bytes(idx[18:34]))
    assert len(idx) == 34 + 12 * n + 8 * d, "index size"
    off = 34
    lengths = idx[off:off + 4 * n].view("<i4")
    off += 4 * n
    pointers = idx[off:off + 8 * n].view("<i8")
    off += 8 * n
    docs = idx[off:off + 8 * d].view("<i8")
    tokens = np.fromfile(prefix + ".bin", dtype=dtype)
    assert (lengths >= 0).all(), "negative length"
    want = np.concatenate(([0], np.cumsum(lengths.astype(np.int64))[:-1])) * dtype.itemsize
    assert n == 0 or (pointers == want).all(), "pointers"
    assert int(lengths.astype(np.int64).sum()) == len(tokens), "bin size"
    assert d >= 1 and docs[0] == 0 and docs[-1] == n, "document index ends"
    assert (np.diff(docs) >= 0).all(), "document index order"
    return code, lengths, pointers, docs, tokens


def read_stream(f):
    """The documents of an owt token stream, as arrays, and its header.

    Version 2 members must end in a trailer that matches them (documents,
    tokens, the sum of the ids modulo 2^64); version 1 members have none.
    """
    data = f.read()
    pos, docs, head, version, member = 0, [], None, 0, None
    while pos < len(data):
        if data[pos:pos + 6] == b"OWTTOK":
            assert version != 2, "member without a trailer"
            h = struct.unpack("<BBII", data[pos + 6:pos + 16])
            version = h[0]
            assert version in (1, 2), "version"
            assert head is None or h[1:] == head[1:], "headers differ"
            head, member = h, [0, 0, 0]
            pos += 16
            continue
        assert version, "no header"
        if version == 2 and data[pos:pos + 8] == b"OWTEND\x00\x00":
            trailer = list(struct.unpack("<QQQ", data[pos + 8:pos + 32]))
            assert trailer == member, "trailer does not match its member"
            version = 0
            pos += 32
            continue
        n, = struct.unpack("<I", data[pos:pos + 4])
        width = head[1]
        ids = np.frombuffer(data, dtype="<u2" if width == 2 else "<u4", count=n, offset=pos + 4)
        docs.append(ids.astype(np.int64))
        member[0] += 1
        member[1] += n
        member[2] = (member[2] + int(ids.astype(np.uint64).sum())) % 2**64
        pos += 4 + n * width
    assert version != 2, "member without a trailer"
    return head, docs


def pack(prefix):
    head, docs = read_stream(sys.stdin.buffer)
    vocab = head[2]
    code = 8 if vocab < 65500 else 4
    docs = [d for d in docs if len(d) > 0]
    lengths = np.array([len(d) for d in docs], dtype="<i4")
    itemsize = DTYPES[code].itemsize
    pointers = np.concatenate(([0], np.cumsum(lengths.astype(np.int64))[:-1])) * itemsize
    n = len(docs)
    with open(prefix + ".bin", "wb") as f:
        for d in docs:
            f.write(d.astype(DTYPES[code]).tobytes())
    with open(prefix + ".idx", "wb") as f:
        f.write(MAGIC + struct.pack("<QBQQ", 1, code, n, n + 1))
        f.write(lengths.tobytes())
        f.write(pointers[:n].astype("<i8").tobytes())
        f.write(np.arange(n + 1, dtype="<i8").tobytes())


def cat(prefix, vocab, eod):
    code, lengths, pointers, docs, tokens = read(prefix)
    width = 2 if vocab <= 65536 else 4
    out = sys.stdout.buffer
    out.write(b"OWTTOK" + struct.pack("<BBII", 2, width, vocab, eod))
    starts = np.concatenate(([0], np.cumsum(lengths.astype(np.int64))))
    ntok, total = 0, 0
    for k in range(len(docs) - 1):
        ids = tokens[starts[docs[k]]:starts[docs[k + 1]]]
        assert (ids >= 0).all() and (ids < vocab).all(), "id outside the vocabulary"
        out.write(struct.pack("<I", len(ids)))
        out.write(ids.astype("<u2" if width == 2 else "<u4").tobytes())
        ntok += len(ids)
        total = (total + int(ids.astype(np.uint64).sum())) % 2**64
    out.write(b"OWTEND\x00\x00" + struct.pack("<QQQ", len(docs) - 1, ntok, total))


def main():
    cmd, prefix = sys.argv[1], sys.argv[2]
    if cmd == "pack":
        pack(prefix)
    elif cmd == "cat":
        cat(prefix, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "info":
        code, lengths, pointers, docs, tokens = read(prefix)
        print(len(lengths), len(docs) - 1, len(tokens), DTYPES[code].name)


if __name__ == "__main__":
    main()
