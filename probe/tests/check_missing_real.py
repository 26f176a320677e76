#!/usr/bin/env python3
"""A real function the probe cannot find ends the program at once with
status 127 and one line on stderr (real.c), instead of forwarding to NULL
or, as when its error path called the probe's own _exit wrapper, spinning
for ever inside the resolution that failed.

Usage: check_missing_real.py LIBTHREADMON HIDE_SHIM PROGRAM"""
import os
import subprocess
import sys
import tempfile
import time

lib, shim, program = sys.argv[1:4]
failed = False
for name in ['sched_yield', 'pthread_mutex_lock', 'nanosleep']:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LD_PRELOAD=f'{shim}:{lib}', TM_TEST_HIDE_SYMBOL=name,
                   THREADMON_OUTPUT=os.path.join(tmp, 'out.tmcap'))
        start = time.monotonic()
        try:
            r = subprocess.run([program], env=env, capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            print(f'{name} hidden: still running after 10 s (the error path re-entered the probe)')
            failed = True
            continue
        took = time.monotonic() - start
        want = f'threadmon: cannot find the real {name}\n'
        if r.returncode != 127 or r.stderr != want:
            print(f'{name} hidden: exit {r.returncode}, stderr {r.stderr!r}; want 127, {want!r}')
            failed = True
        elif took > 5:
            print(f'{name} hidden: exited 127 but took {took:.1f} s')
            failed = True
        else:
            print(f'{name} hidden: exit 127 in {took * 1000:.0f} ms, {r.stderr.strip()!r}')
        if os.listdir(tmp):
            print(f'{name} hidden: left {os.listdir(tmp)} behind')
            failed = True
# The shim itself hides nothing unless asked: the program runs normally.
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, LD_PRELOAD=f'{shim}:{lib}',
               THREADMON_OUTPUT=os.path.join(tmp, 'out.tmcap'))
    r = subprocess.run([program], env=env, capture_output=True, text=True, timeout=30)
if r.returncode != 0:
    print(f'nothing hidden: exit {r.returncode}, stderr {r.stderr!r}')
    failed = True
sys.exit(1 if failed else 0)
