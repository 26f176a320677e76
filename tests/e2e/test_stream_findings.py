"""A long capture's report is read a window at a time, each window's findings
merged. Forced on recorded workloads whose problem is known (`--window 1`),
every high finding of the whole read is in the streamed report, about the
same subject, saying in how many windows it held; the notice says how the
findings were found."""
import json
import os
import subprocess

import tmtest
from tmtest import check

# Several 1 s windows each (2-3 s runs), like the ones test_serialise,
# test_barrier and test_sched_findings check whole.
WORKLOADS = [
    ("serialise", ["--threads", "4", "--work-ms", "600"], "serialising_object"),
    ("barrier_imbalance", ["--rounds", "60"], "barrier_imbalance"),
    ("matrix_mult", ["--threads", str(3 * (os.cpu_count() or 1)), "--size", "600",
                     "--rounds", "30"],
     "oversubscribed"),
]
# Rules about one object or one thread; the others are about the program.
BY_OBJECT = ("serialising_object", "internal_lock", "barrier_imbalance")


def report(capture, *args):
    proc = subprocess.run([tmtest.REPORT, "--json", *args, capture], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise tmtest.Failed(f"threadmon-report {args} exited {proc.returncode}: {proc.stderr}")
    return json.loads(proc.stdout)


def subject(f):
    if f.get("kind") in BY_OBJECT:
        return tuple(f.get("objects", []))
    if f.get("kind") == "never_runs":
        return tuple(f.get("threads", []))
    return ()


def check_workload(name, args, kind):
    rec = tmtest.recorded(name, args)
    whole = report(rec.capture, "--whole")
    streamed = report(rec.capture, "--window", "1")
    found = [f for f in whole["findings"] if f.get("kind") == kind]
    if not tmtest.serious(found):
        # Under heavy load from other processes a rule may not fire at all:
        # then there is nothing to carry over.
        raise tmtest.Skip(f"{name}: the whole read has no serious {kind} ({tmtest.describe(found)})")
    notices = streamed["process"].get("notices", [])
    check(any("findings are each 1.0 s window's, merged" in n for n in notices),
          f"{name}: no notice of merged windows in {notices}")
    merged = {(f["kind"], subject(f)): f for f in streamed["findings"]}
    for f in whole["findings"]:
        if f.get("severity") != "high":
            continue
        got = merged.get((f["kind"], subject(f)))
        if not check(got is not None, f"{name}: the whole read's high {f['kind']} {subject(f)} "
                     f"is not in the streamed report ({tmtest.describe(streamed['findings'])})"):
            continue
        check(got["severity"] == "high", f"{name}: {f['kind']} streamed is {got['severity']}")
        w = got["evidence"].get("windows", {})
        check(1 <= w.get("held", 0) <= w.get("of", 0) and w.get("of", 0) >= 2,
              f"{name}: {f['kind']} evidence.windows {w}, expected held of at least 2 windows")
        check(f"In {w.get('held')} of {w.get('of')} windows" in got["message"],
              f"{name}: {f['kind']} message does not say its windows: {got['message']!r}")
        worst = w.get("worst_s", [0, 0])
        check(0 <= worst[0] < worst[1] <= streamed["process"]["duration_s"] + 1e-6,
              f"{name}: worst window {worst} outside the run")
    # The whole read's own figures: no windows.
    check(all("windows" not in f["evidence"] for f in whole["findings"]),
          f"{name}: a whole read's finding has evidence.windows")


def make(name, args, kind):
    def test():
        tmtest.require_report()
        check_workload(name, args, kind)
    return test


for _name, _args, _kind in WORKLOADS:
    globals()[f"test_{_name}"] = make(_name, _args, _kind)

tmtest.main(globals())
