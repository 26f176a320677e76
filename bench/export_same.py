#!/usr/bin/env python3
"""Compare two threadmon-export builds byte for byte.

Runs OLD and NEW threadmon-export on every capture given (files or
directories searched for *.tmcap, duplicates by content skipped) for the
Perfetto and Chrome formats (default walk and --whole; pprof with
--formats) and compares the output's bytes, stderr (the capture's path is
the same for both; the line THREADMON_EXPORT_SAY_PASS adds is left out) and
the exit status. Output goes through sha256, not memory: a 30 s capture of
100 busy threads exports 770 MB of JSON.
Prints one line per difference and a summary; exit 1 on any difference.

  bench/export_same.py OLD NEW display/fuzz/corpus display/fuzz/regressions \
      /tmp/threadmon-e2e-* /work/tmp/half.tmcap
"""
import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys

MODES = [[], ["--whole"]]


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


def run(binary, fmt, mode, capture):
    p = subprocess.Popen([binary, "--format", fmt, "-o", "-"] + mode + [capture],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    digest, size = hashlib.sha256(), 0
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        digest.update(b)
        size += len(b)
    err = p.stderr.read()
    p.wait(timeout=600)
    err = b"\n".join(l for l in err.splitlines()
                     if not l.startswith(b"threadmon-export: one pass")
                     and not l.startswith(b"threadmon-export: model:"))
    return p.returncode, (digest.hexdigest(), size), err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--formats", default="perfetto,chrome")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="comparisons at once")
    args = ap.parse_args()
    files = captures(args.paths)
    jobs = [(c, f, m) for c in files for f in args.formats.split(",") for m in MODES]

    def compare(job):
        capture, fmt, mode = job
        return run(args.old, fmt, mode, capture), run(args.new, fmt, mode, capture)

    differ = compared = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for (capture, fmt, mode), (a, b) in zip(jobs, pool.map(compare, jobs)):
            compared += 1
            if a != b:
                differ += 1
                what = [n for n, x, y in zip(("status", "output", "stderr"), a, b) if x != y]
                print(f"DIFFER {fmt} {' '.join(mode) or 'default'} {capture}: {', '.join(what)}",
                      flush=True)
    print(f"{len(files)} captures, {compared} comparisons, {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
