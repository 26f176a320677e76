"""Which path threadmon-report reads a capture by, and that the choice loses
nothing: the span decides, not the size on disk.

- Every capture of display/fuzz/corpus (each under 10 s, one window) gives,
  by default, the text and the JSON of a whole read (--whole), byte for byte.
- 15 s of 10 busy threads (tm-bench-longcap; well under 64 MiB) gives, by
  default, the report of the window-at-a-time path (--stream), byte for
  byte, which says so in its notices.
"""

import glob
import os
import subprocess
import sys
import tempfile

LONGCAP, REPORT, CORPUS = sys.argv[1], sys.argv[2], sys.argv[3]


def report(args):
    p = subprocess.run([REPORT] + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p.returncode, p.stdout


def main():
    failed = []
    captures = sorted(glob.glob(os.path.join(CORPUS, "*.tmcap")))
    if not captures:
        sys.exit(f"FAIL no captures in {CORPUS}")
    for path in captures:
        for fmt in ([], ["--json"]):
            if report(fmt + [path]) != report(fmt + ["--whole", path]):
                failed.append(f"{os.path.basename(path)} {' '.join(fmt) or 'text'}: the default "
                              "differs from a whole read")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fifteen.tmcap")
        subprocess.run([LONGCAP, "0.25", "10", path], check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(path)
        default, streamed = report(["--json", path]), report(["--json", "--stream", path])
        if default != streamed:
            failed.append(f"15 s ({size} bytes): the default is not the window-at-a-time read")
        if b"Read a window at a time" not in default[1]:
            failed.append("15 s: the report does not say it was read a window at a time")
    print(f"{len(captures)} corpus captures read whole by default; 15 s ({size} bytes) by window")
    for f in failed:
        print("FAIL " + f)
    sys.exit(1 if failed else 0)


main()
