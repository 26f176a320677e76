#!/usr/bin/env python3
"""Cuts a capture to a seed for the fuzzer: its header and its first whole
frames up to a size, the last frame (a Goodbye in a clean capture) kept.

    trim_capture.py IN.tmcap OUT.tmcap [--max-bytes 8192]

Frames are copied as they are, so their checksums stay valid; a short seed
keeps every execution of the fuzzer fast.
"""
import argparse
import struct

HEADER = 16
PREFIX = 8


def frames(data):
    at = HEADER
    while len(data) - at >= PREFIX:
        (length,) = struct.unpack_from("<I", data, at)
        end = at + PREFIX + length
        if end > len(data):
            break
        yield data[at:end]
        at = end


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--max-bytes", type=int, default=8192)
    args = ap.parse_args()
    with open(args.input, "rb") as f:
        data = f.read()
    whole = list(frames(data))
    last = whole[-1] if whole else b""
    out = bytearray(data[:HEADER])
    for frame in whole[:-1]:
        if len(out) + len(frame) + len(last) > args.max_bytes:
            break
        out += frame
    out += last
    with open(args.output, "wb") as f:
        f.write(out)
    print(f"{args.output}: {len(out)} bytes, from {len(data)}")


if __name__ == "__main__":
    main()
