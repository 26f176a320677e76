#!/usr/bin/env python3
"""Instructions per transition spent decoding a capture (docs/benchmarks.md,
"Decoding, counted per transition").

Runs tm-bench-decode under `valgrind --tool=cachegrind --cache-sim=no` with
1 and 2 passes over the capture, for the framing alone (CRC-32C, zstd) and
for the whole decoding (the frames unpacked too), and divides each
difference (one pass, without the start-up and the file's read) by the
capture's transitions. The counts are the same on every run, whatever the
load, unlike CPU seconds.

  bench/decode_cost.py BUILD/bench/tm-bench-decode CAPTURE
"""
import json
import re
import shutil
import subprocess
import sys


def run(bench, capture, passes, stage):
    r = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        "--cachegrind-out-file=/dev/null", bench, capture,
                        "--passes", str(passes), "--stage", stage],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{bench} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if not m:
        sys.exit("no instruction count in valgrind's output")
    return int(m.group(1).replace(",", "")), json.loads(r.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip())
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    bench, capture = sys.argv[1:]
    per = {}
    for stage in ("frames", "unpack"):
        one, counts = run(bench, capture, 1, stage)
        two, _ = run(bench, capture, 2, stage)
        per[stage] = two - one
    n = counts["transitions"]
    if not n:
        sys.exit(f"{capture}: no transitions")
    out = {
        "capture": capture,
        "bytes": counts["bytes"],
        "frames": counts["frames"],
        "transitions": n,
        "instructions_per_pass": per["unpack"],
        "framing_per_transition": round(per["frames"] / n, 1),
        "unpack_per_transition": round((per["unpack"] - per["frames"]) / n, 1),
        "decode_per_transition": round(per["unpack"] / n, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
