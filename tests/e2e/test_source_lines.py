"""mutex_hold_O0 (built -g -O0): call sites carry their source line, looked
up by the reader in the module's debug information; when the binary is
gone from the reading machine, or replaced by another build, frames show
what the capture has and no wrong line."""
import json
import os
import re
import shutil

import tmtest
from tmtest import check

NAME = "mutex_hold_O0"
ARGS = ["--waiters", "2", "--rounds", "10"]


def record_copy(tag):
    """Records a copy of the workload (which the test may then remove);
    returns (copy path, capture, truth)."""
    tmtest.require_report()
    directory = os.path.join(tmtest.Temp.dir(), tag)
    os.makedirs(directory)
    copy = os.path.join(directory, NAME)
    shutil.copy2(tmtest.workload(NAME), copy)
    capture = os.path.join(directory, "run.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", copy, *ARGS)
    if run.returncode != 0:
        raise tmtest.Failed(f"record {NAME} exited {run.returncode}: {run.stderr.strip()}")
    truth = json.loads([l for l in run.stdout.splitlines() if l.startswith("{")][-1])
    return copy, capture, truth


def lock_of(report):
    objs = [o for o in report.get("sync_objects", []) if o.get("symbol") == "big_lock"]
    check(len(objs) == 1, f"{len(objs)} objects named big_lock")
    return objs[0] if objs else {}


def program_frames(lock):
    return [f for s in lock.get("call_sites", []) for f in s.get("frames", [])
            if f.startswith(NAME + "!")]


def test_call_sites_have_lines():
    rec = tmtest.recorded(NAME, ARGS)
    lock = lock_of(rec.report)
    want = f"(mutex_hold.c:{rec.truth['lock_line']})"
    site = str(lock.get("call_site"))
    check(re.fullmatch(rf"{NAME}!timed_lock\+0x[0-9a-f]+ {re.escape(want)}", site) is not None,
          f"call_site {site!r}, expected {NAME}!timed_lock+0x.. {want}")
    frames = program_frames(lock)
    check(bool(frames) and frames[0].endswith(want), f"first call site frames {frames}")
    check(all(re.search(r" \(mutex_hold\.c:\d+\)$", f) for f in frames),
          f"program frames without a line: {frames}")


def test_started_by_a_relative_path():
    """A program started as dir/prog (glibc names the main program by that
    argv[0]): its frames still find their file and line, from wherever the
    report is read (the user guide's build/tests/workloads/matrix_mult
    showed none)."""
    tmtest.require_report()
    directory = os.path.join(tmtest.Temp.dir(), "relative")
    os.makedirs(os.path.join(directory, "bin"))
    shutil.copy2(tmtest.workload(NAME), os.path.join(directory, "bin", NAME))
    capture = os.path.join(directory, "run.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", os.path.join("bin", NAME), *ARGS,
                          cwd=directory)
    if run.returncode != 0:
        raise tmtest.Failed(f"record bin/{NAME} exited {run.returncode}: {run.stderr.strip()}")
    truth = json.loads([l for l in run.stdout.splitlines() if l.startswith("{")][-1])
    lock = lock_of(tmtest.report_json(capture))
    want = f"(mutex_hold.c:{truth['lock_line']})"
    check(str(lock.get("call_site")).endswith(want), f"call_site {lock.get('call_site')!r}, "
          f"expected {NAME}!timed_lock+0x.. {want}")


def test_binary_gone():
    copy, capture, _ = record_copy("gone")
    os.remove(copy)
    lock = lock_of(tmtest.report_json(capture))
    frames = program_frames(lock)
    check(bool(frames) and all(re.fullmatch(rf"{NAME}!\w+\+0x[0-9a-f]+", f) for f in frames),
          f"frames of a binary not here: {frames}, expected module!function+0xoff only")


def test_another_build():
    copy, capture, _ = record_copy("rebuilt")
    # Another program at the same path: its build-id differs, its lines
    # would be wrong.
    shutil.copy2(tmtest.workload("mutex_hold"), copy)
    frames = program_frames(lock_of(tmtest.report_json(capture)))
    check(bool(frames) and not any(" (" in f for f in frames),
          f"frames read from another build: {frames}")


tmtest.main(globals())
