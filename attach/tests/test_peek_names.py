#!/usr/bin/env python3
"""threadmon-attach-peek as a user meets it: --help says what it does and
exits 0, and the frames of a C++ program read as C++ names, not mangled
ones (std::counting_semaphore's wait, the lambdas that run the threads).
Usage: test_peek_names.py PEEK CXX_TARGET."""

import re
import subprocess
import sys

PEEK, TARGET = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(f"  {'ok  ' if cond else 'FAIL'} {what}")
    if not cond:
        failures.append(what)


helped = subprocess.run([PEEK, "--help"], capture_output=True, text=True, timeout=10)
check(helped.returncode == 0, f"--help exits 0 (got {helped.returncode})")
check("deadlock" in helped.stdout and "Exit status" in helped.stdout,
      f"--help says what it shows: {helped.stdout[:200]!r}")
bad = subprocess.run([PEEK, "nonsense"], capture_output=True, text=True, timeout=10)
check(bad.returncode == 1 and bad.stderr.count("\n") == 1, f"bad usage: one line, exit 1: {bad.stderr!r}")

target = subprocess.Popen([TARGET], stdout=subprocess.PIPE, text=True)
try:
    for line in target.stdout:
        if line.strip() == "ready":
            break
    peek = subprocess.run([PEEK, str(target.pid)], capture_output=True, text=True, timeout=30)
finally:
    target.kill()
    target.wait()
frames = [f for line in peek.stdout.splitlines() if line.lstrip().startswith("at ")
          for f in line.strip()[3:].split(" <- ")]
print("\n".join(frames[:12]))
mangled = [f for f in frames if re.search(r"!_Z", f)]
check(frames, f"peek printed call stacks: {peek.stdout[:300]!r}")
check(not mangled, f"no mangled frame: {mangled[:3]}")
check(any("::" in f for f in frames), "C++ frames read as C++ names (a '::' among them)")
sys.exit(1 if failures else 0)
