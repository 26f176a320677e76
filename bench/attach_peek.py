#!/usr/bin/env python3
"""How long one look at a running process from outside takes
(threadmon-attach-peek: every thread's state, futex wait, stack, owner and
the deadlock) as its thread count grows: attach_target with N extra threads
waiting on a cond, N = 0, 100, 1000. Prints a Markdown table: the tool's own
wall time ("read in", median and all runs) and its CPU time (user + system,
from the kernel's accounting of the child).

usage: bench/attach_peek.py BUILD [--runs N]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time


def all_asleep(pid, want):
    task = f"/proc/{pid}/task"
    try:
        tids = os.listdir(task)
    except FileNotFoundError:
        return False
    if len(tids) < want:
        return False
    for tid in tids:
        with open(f"{task}/{tid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "S":
                return False
    return True


def peek_once(peek, pid):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([peek, str(pid)], capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ms = float(re.search(r"read in ([0-9.]+) ms", out).group(1))
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return ms, cpu, "deadlock:" in out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    peek = os.path.join(a.build, "attach/threadmon-attach-peek")
    target = os.path.join(a.build, "attach/tests/attach_target")
    for path in (peek, target):
        if not os.path.exists(path):
            sys.exit(f"attach_peek.py: {path} not found: build first (meson compile -C {a.build})")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| threads | wall ms, median (runs) | CPU ms, median (runs) | deadlock found |")
    print("|---|---|---|---|")
    for extra in (0, 100, 1000):
        p = subprocess.Popen([target, "--extra", str(extra)], stdout=subprocess.PIPE, text=True)
        for line in p.stdout:
            if line == "ready\n":
                break
        while not all_asleep(p.pid, extra + 1):
            time.sleep(0.05)
        threads = len(os.listdir(f"/proc/{p.pid}/task"))
        runs = [peek_once(peek, p.pid) for _ in range(a.runs)]
        p.kill()
        p.wait()
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(f"| {threads} | {statistics.median(walls):.1f} ({' '.join(f'{w:.1f}' for w in walls)})"
              f" | {statistics.median(cpus):.0f} ({' '.join(f'{c:.0f}' for c in cpus)})"
              f" | {'yes' if all(r[2] for r in runs) else 'NO'} |")


if __name__ == "__main__":
    main()
