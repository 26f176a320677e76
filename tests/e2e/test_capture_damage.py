"""A truncated or corrupted capture gives one line and a partial report, in
zstd blocks (format 2, the probe's default) and in plain frames (format 1,
THREADMON_COMPRESS=0, and every capture written before blocks); a file that
is not a capture gives one line and fails."""
import json
import os
import subprocess
import sys

import tmtest
from tmtest import LAUNCHER, Recording, check


def report(path):
    return subprocess.run([sys.executable, LAUNCHER, "report", "--json", path],
                          capture_output=True, text=True, timeout=60)


def check_partial(path, what, full):
    proc = report(path)
    lines = proc.stderr.strip().splitlines()
    check(len(lines) == 1, f"{what}: {len(lines)} lines on stderr, expected 1: {proc.stderr!r}")
    check(proc.returncode < 128, f"{what}: report crashed ({proc.returncode})")
    try:
        partial = json.loads(proc.stdout)
    except ValueError:
        check(False, f"{what}: no JSON report on stdout: {proc.stdout[:200]!r}")
        return
    check(len(partial.get("threads", [])) >= 3, f"{what}: partial report has "
          f"{len(partial.get('threads', []))} threads")
    check(partial["process"].get("duration_s", 0) <= full["process"]["duration_s"],
          f"{what}: partial report longer than the whole")


def mid_frame(data, near):
    """An offset inside the frame or block that holds byte `near`
    (docs/format.md: a 16-byte header, then records of u32 length, its top
    bit set for a block, u32 CRC, payload). A fixed offset past 2/3 of the
    file fell on a frame boundary once in a few hundred runs, and the cut
    capture read whole."""
    at = 16
    while at < len(data):
        end = at + 8 + (int.from_bytes(data[at:at + 4], "little") & 0x7FFFFFFF)
        if end > near:
            return at + (end - at) // 2
        at = end
    raise tmtest.Failed(f"no frame holds byte {near} of {len(data)}")


def sizes(path):
    return subprocess.run([sys.executable, LAUNCHER, "report", "--sizes", path],
                          capture_output=True, text=True, timeout=60)


def damage(rec, major):
    data = open(rec.capture, "rb").read()
    check(data[8] == major, f"format {data[8]}, expected {major}")
    check(len(data) > 2048, f"capture is only {len(data)} bytes")
    cut = os.path.join(tmtest.Temp.dir(), f"truncated{major}.tmcap")
    with open(cut, "wb") as f:
        f.write(data[: mid_frame(data, len(data) * 2 // 3)])
    check_partial(cut, f"truncated format {major}", rec.report)

    bad = bytearray(data)
    middle = len(bad) // 2
    for i in range(middle, middle + 16):
        bad[i] ^= 0x5A
    corrupt = os.path.join(tmtest.Temp.dir(), f"corrupt{major}.tmcap")
    with open(corrupt, "wb") as f:
        f.write(bad)
    check_partial(corrupt, f"corrupted format {major}", rec.report)


def test_damaged_captures():
    tmtest.require_report()
    rec = Recording("cond_wait", ["--delay-ms", "100", "--repeats", "5"])
    damage(rec, 2)
    # --sizes: the frames by kind, and the index read from the end; a capture
    # cut short has none, and a scan finds its whole records.
    whole = sizes(rec.capture)
    check(whole.returncode == 0 and "index: " in whole.stdout and "read from its end" in whole.stdout
          and "\ntick " in whole.stdout, f"--sizes: {whole.stdout!r} {whole.stderr!r}")
    cut = sizes(os.path.join(tmtest.Temp.dir(), "truncated2.tmcap"))
    check(cut.returncode == 2 and "found by a scan" in cut.stdout
          and len(cut.stderr.strip().splitlines()) == 1, f"--sizes, cut: {cut.stdout!r} {cut.stderr!r}")


def test_damaged_plain_captures():
    tmtest.require_report()
    os.environ["THREADMON_COMPRESS"] = "0"
    try:
        rec = Recording("cond_wait", ["--delay-ms", "100", "--repeats", "5"])
    finally:
        del os.environ["THREADMON_COMPRESS"]
    damage(rec, 1)


def test_not_a_capture():
    tmtest.require_report()
    junk = os.path.join(tmtest.Temp.dir(), "junk.tmcap")
    with open(junk, "w") as f:
        f.write("this is not a threadmon capture\n" * 10)
    proc = report(junk)
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode not in (0,) and proc.returncode < 128,
          f"junk file: exit status {proc.returncode}")
    check(len(lines) == 1, f"junk file: {len(lines)} lines on stderr: {proc.stderr!r}")


tmtest.main(globals())
