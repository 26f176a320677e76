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
import hashlib
import subprocess

from report_same import captures, compare_all

MODES = [[], ["--whole"]]


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

    compare_all(jobs, compare, lambda job: f"{job[1]} {' '.join(job[2]) or 'default'} {job[0]}",
                ("status", "output", "stderr"), len(files), args.jobs)

if __name__ == "__main__":
    main()
