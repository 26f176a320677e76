#!/usr/bin/env python3
"""The ThreadMon paper's figure 5 on this machine: mutex_loop with rand()
(glibc's hidden random() lock) and rand_r() at 1, 2 and 4 threads, bare and
under the probe, runs interleaved so drift hits every configuration alike.
Prints a Markdown table (median wall time, all runs in brackets) and what
the report said about each recorded run with rand/rand_r at 2 threads.

usage: bench/hidden_lock.py BUILD [--runs N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def wall(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])["wall_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    workload = os.path.join(a.build, "tests/workloads/mutex_loop")
    launcher = os.path.join(a.build, "scripts/threadmon")
    probe = os.path.join(a.build, "probe/libthreadmon.so")
    for path in (workload, launcher, probe):
        if not os.path.exists(path):
            sys.exit(f"hidden_lock.py: {path} not found: build first (meson compile -C {a.build})")
    configs = [(rng, t) for rng in ("rand", "rand_r") for t in (1, 2, 4)]
    bare = {c: [] for c in configs}
    probed = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="threadmon-fig5-") as tmp:
        for _ in range(a.runs):
            for rng, t in configs:
                cmd = [workload, "--threads", str(t), "--rng", rng]
                bare[(rng, t)].append(wall(cmd))
                env = dict(os.environ, LD_PRELOAD=probe,
                           THREADMON_OUTPUT=os.path.join(tmp, f"{rng}-{t}.tmcap"))
                probed[(rng, t)].append(wall(cmd, env))
        print("| rng | threads | bare, s | with probe, s | probe cost |")
        print("|---|---|---|---|---|")
        for c in configs:
            b, p = statistics.median(bare[c]), statistics.median(probed[c])
            runs = lambda v: " ".join(f"{x:.3f}" for x in v)  # noqa: E731
            print(f"| {c[0]} | {c[1]} | {b:.3f} ({runs(bare[c])}) | {p:.3f} ({runs(probed[c])}) | "
                  f"{100 * (p / b - 1):+.0f}% |")
        for rng in ("rand", "rand_r"):
            rep = subprocess.run([sys.executable, launcher, "report", "--json",
                                  os.path.join(tmp, f"{rng}-2.tmcap")],
                                 capture_output=True, text=True, check=True).stdout
            found = json.loads(rep).get("findings", [])
            print(f"\n{rng}, 2 threads, last recorded run: " +
                  ("; ".join(f"[{f['severity']}] {f['kind']}: {f['message']}" for f in found)
                   or "no findings"))


if __name__ == "__main__":
    main()
