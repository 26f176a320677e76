#!/usr/bin/env python3
"""Forges a format-2 capture the way a hostile user would: its index or one
of its block headers rewritten, checksums made good again so that only the
values are wrong (docs/format.md, "Blocks and the index").

    forge_capture.py IN.tmcap OUT.tmcap KIND
    forge_capture.py --list

KINDs (FORGERIES below): index-shuffled, index-empty, index-past-end,
index-times-backwards, index-times-far, index-times-late, block-len-huge,
block-raw-huge, block-frames-huge, block-times-far, block-times-late,
block-times-backwards, block-times-unknown. The block-* forgeries take the
index off (a capture cut short is read by a scan of the block headers, which
are then all a reader has) except block-len-huge and block-raw-huge, which
keep it. Used by display/tests/test_report_forged.py and to make the
fuzzers' forged seeds.
"""
import struct
import sys

HEADER, PREFIX, BLOCK_HEADER = 16, 8, 32
BLOCK_FLAG = 0x80000000
FRAMES, INDEX = 1, 2
ENTRY = struct.Struct("<QQQII")  # offset, first_ns, last_ns, kinds, frames


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def records(data):
    """(offset, length word, body) of each record, the index's included."""
    at = HEADER
    while len(data) - at >= PREFIX:
        (word,) = struct.unpack_from("<I", data, at)
        n = word & ~BLOCK_FLAG
        if at + PREFIX + n > len(data):
            break
        yield at, word, data[at + PREFIX:at + PREFIX + n]
        at += PREFIX + n


def record(body):
    return struct.pack("<II", BLOCK_FLAG | len(body), crc32c(body)) + body


def split(data):
    """(data before the index record, index entries) or (data, None)."""
    for at, word, body in records(data):
        if word & BLOCK_FLAG and body[:1] == bytes([INDEX]):
            (count,) = struct.unpack_from("<I", body, 4)
            entries = [list(ENTRY.unpack_from(body, 8 + i * ENTRY.size)) for i in range(count)]
            return bytes(data[:at]), entries
    return bytes(data), None


def with_index(head, entries):
    body = struct.pack("<B3xI", INDEX, len(entries))
    body += b"".join(ENTRY.pack(*e) for e in entries)
    body += struct.pack("<Q", len(head)) + b"TMIX"
    return head + record(body)


def blocks(head):
    return [(at, body) for at, word, body in records(head)
            if word & BLOCK_FLAG and body[:1] == bytes([FRAMES])]


def rewrite_block(head, at, body):
    """head with the block at `at` replaced by body (same length), CRC made good."""
    out = bytearray(head)
    out[at + 4:at + 8] = struct.pack("<I", crc32c(body))
    out[at + PREFIX:at + PREFIX + len(body)] = body
    return bytes(out)


def middle_block(head):
    b = blocks(head)
    if not b:
        sys.exit("forge_capture: the capture has no blocks")
    return b[len(b) // 2]


def set_header(body, raw_len=None, frames=None, first_ns=None, last_ns=None):
    h = list(struct.unpack_from("<B3xIIIQQ", body, 0))
    for i, v in ((1, raw_len), (2, frames), (4, first_ns), (5, last_ns)):
        if v is not None:
            h[i] = v
    return struct.pack("<B3xIIIQQ", *h) + body[BLOCK_HEADER:]


FAR = 1 << 62  # centuries after any monotonic clock's start


def forge(data, kind):
    head, entries = split(data)
    if entries is None and kind.startswith("index-"):
        sys.exit("forge_capture: the capture has no index to forge")
    if kind == "index-shuffled":
        # Every entry there, in reverse: each offset valid, the order not.
        return with_index(head, entries[::-1])
    if kind == "index-empty":
        return with_index(head, [])
    if kind == "index-past-end":
        entries[len(entries) // 2][0] = len(data) + (1 << 30)
        return with_index(head, entries)
    if kind == "index-times-backwards":
        for e in entries[len(entries) // 2:]:
            e[1], e[2] = max(0, e[1] - (1 << 36)), max(0, e[2] - (1 << 36))
        return with_index(head, entries)
    if kind == "index-times-far":
        entries[-1][2] = FAR
        return with_index(head, entries)
    if kind == "index-times-late":
        # 77 hours on: inside what an index may span, so it is taken.
        entries[-1][2] = next(e[1] for e in entries if e[1]) + 77 * 3600 * 10**9
        return with_index(head, entries)
    if kind == "block-times-unknown":
        # Every block's times 0 (unknown): nothing to cut windows by.
        for at, body in blocks(head):
            head = rewrite_block(head, at, set_header(body, first_ns=0, last_ns=0))
        return head
    at, body = middle_block(head)
    if kind == "block-len-huge":
        # The length word claims 16 MiB: the CRC no longer matches what follows.
        out = bytearray(data)
        out[at:at + 4] = struct.pack("<I", BLOCK_FLAG | (16 << 20))
        return bytes(out)
    if kind == "block-raw-huge":
        # The header claims 16 MiB of frames, its CRC good: the zstd frame says otherwise.
        return rewrite_block(head, at, set_header(body, raw_len=16 << 20)) + data[len(head):]
    if kind == "block-frames-huge":
        return rewrite_block(head, at, set_header(body, frames=0xFFFFFFFF))
    if kind == "block-times-far":
        return rewrite_block(head, at, set_header(body, last_ns=FAR))
    if kind == "block-times-late":
        first = struct.unpack_from("<Q", body, 16)[0]
        return rewrite_block(head, at, set_header(body, last_ns=first + 77 * 3600 * 10**9))
    if kind == "block-times-backwards":
        first = struct.unpack_from("<Q", body, 16)[0]
        return rewrite_block(head, at, set_header(body, first_ns=first - (1 << 36),
                                                  last_ns=first - (1 << 36)))
    sys.exit(f"forge_capture: no forgery {kind!r} (--list)")


FORGERIES = ("index-shuffled", "index-empty", "index-past-end", "index-times-backwards",
             "index-times-far", "index-times-late", "block-len-huge", "block-raw-huge", "block-frames-huge",
             "block-times-far", "block-times-late", "block-times-backwards",
             "block-times-unknown")


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(FORGERIES))
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    out = forge(data, sys.argv[3])
    with open(sys.argv[2], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
