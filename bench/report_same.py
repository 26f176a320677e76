#!/usr/bin/env python3
"""Compare two threadmon-report builds byte for byte.

Runs OLD and NEW threadmon-report on every capture given (files or
directories searched for *.tmcap, duplicates by content skipped) in several
modes (text, --json, streamed in 1 s windows, --check) and compares stdout,
stderr (the capture's path is the same for both) and the exit status.
Prints one line per difference and a summary; exit 1 on any difference.

  bench/report_same.py OLD NEW display/fuzz/corpus display/fuzz/regressions \
      /tmp/threadmon-e2e-* big.tmcap
"""
import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys

MODES = [
    [],
    ["--json"],
    ["--top", "0"],
    ["--check"],
    ["--stream", "--window", "1"],
    ["--stream", "--window", "1", "--json"],
]


def captures(paths):
    seen, found = set(), []
    for p in paths:
        files = [p]
        if os.path.isdir(p):
            files = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs
                           if f.endswith(".tmcap"))
        for f in files:
            try:
                with open(f, "rb") as h:
                    digest = hashlib.sha256(h.read()).hexdigest()
            except OSError:
                continue
            if digest not in seen:
                seen.add(digest)
                found.append(f)
    return found


def compare_all(jobs, compare, describe, parts, captured, workers):
    """Runs compare(job) -> (old, new) over jobs, workers at once; prints a
    line naming the differing parts of each job that differs, a summary,
    and exits 1 on any difference. Shared with export_same.py."""
    differ = compared = 0
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for job, (a, b) in zip(jobs, pool.map(compare, jobs)):
            compared += 1
            if a != b:
                differ += 1
                what = [n for n, x, y in zip(parts, a, b) if x != y]
                print(f"DIFFER {describe(job)}: {', '.join(what)}", flush=True)
    print(f"{captured} captures, {compared} comparisons, {differ} differ")
    sys.exit(1 if differ else 0)


def run(binary, mode, capture):
    p = subprocess.run([binary] + mode + [capture], capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--modes", type=int, default=len(MODES),
                    help="only the first N modes (for big captures)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="comparisons at once")
    args = ap.parse_args()
    files = captures(args.paths)
    jobs = [(c, m) for c in files for m in MODES[:args.modes]]

    def compare(job):
        capture, mode = job
        return run(args.old, mode, capture), run(args.new, mode, capture)

    compare_all(jobs, compare, lambda job: f"{' '.join(job[1]) or 'text'} {job[0]}",
                ("status", "stdout", "stderr"), len(files), args.jobs)

if __name__ == "__main__":
    main()
