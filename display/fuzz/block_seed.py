#!/usr/bin/env python3
"""Rewrites a format-1 capture (a fuzzer seed) as format 2: its frames in
zstd blocks of a few frames each, then the index (docs/format.md, "Blocks
and the index"), so that the fuzzer starts from the block layer too.

    block_seed.py IN.tmcap OUT.tmcap [--frames-per-block 4] [--no-index] [--tick-times]

Blocks are timed by their frames' numbers, or with --tick-times by their
ticks' times as a writer times them (a block without a tick: unknown), so
that a reader cuts the seed into time windows as it cuts a long capture.
Uses the zstd command (Debian package zstd) for the compression.
"""
import argparse
import os
import struct
import subprocess
import tempfile

from trim_capture import HEADER, PREFIX, frames

BLOCK_FLAG = 0x80000000
FRAMES, INDEX = 1, 2


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def zstd(raw):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(raw)
    try:
        return subprocess.run(["zstd", "-q", "-3", "--content-size", "-c", f.name],
                              check=True, capture_output=True).stdout
    finally:
        os.unlink(f.name)


def record(body):
    return struct.pack("<II", BLOCK_FLAG | len(body), crc32c(body)) + body


def varint(b, i):
    v = shift = 0
    while i < len(b):
        v |= (b[i] & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if not b[i - 1] & 0x80:
            return v, i
    return None, i


def tick_time(frame):
    """A Tick frame's time_ns (Tick field 2), else None."""
    p = frame[PREFIX:]
    if p[:1] != b"\x1a":
        return None
    n, i = varint(p, 1)
    end = min(len(p), i + (n or 0))
    while i < end:
        tag, i = varint(p, i)
        if tag is None or tag & 7:
            return None
        v, i = varint(p, i)
        if tag >> 3 == 2:
            return v
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--frames-per-block", type=int, default=4)
    ap.add_argument("--no-index", action="store_true", help="end without the index (cut short)")
    ap.add_argument("--tick-times", action="store_true", help="time blocks by their ticks")
    args = ap.parse_args()
    data = open(args.input, "rb").read()
    whole = list(frames(data))
    out = bytearray(data[:8]) + struct.pack("<HHI", 2, 0, 0)
    entries = []
    for i in range(0, len(whole), args.frames_per_block):
        group = whole[i:i + args.frames_per_block]
        raw = b"".join(group)
        kinds = 0
        for f in group:
            if len(f) > PREFIX:
                kinds |= 1 << (f[PREFIX] >> 3)
        first, last = i, i + len(group)
        if args.tick_times:
            ticks = [t for t in map(tick_time, group) if t]
            first, last = (ticks[0], ticks[-1]) if ticks else (0, 0)
        header = struct.pack("<B3xIIIQQ", FRAMES, len(raw), len(group), kinds, first, last)
        entries.append((len(out), first, last, kinds, len(group)))
        out += record(header + zstd(raw))
    if not args.no_index:
        body = struct.pack("<B3xI", INDEX, len(entries))
        body += b"".join(struct.pack("<QQQII", *e) for e in entries)
        body += struct.pack("<Q", len(out)) + b"TMIX"
        out += record(body)
    with open(args.output, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
