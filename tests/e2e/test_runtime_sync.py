"""Synchronisation a language runtime builds from futexes, which no pthread
wrapper sees: C++20 (cpp20_sync) and Rust std::sync (rust_std_sync.rs). Their
waiters must show as the blocked kinds they are (they read 99% "sleeping"),
the objects as what they are, and no "lock inside [heap] the program never
wrote" finding."""
import json
import os
import shutil
import subprocess

import tmtest
from tmtest import check, near, state

HERE = os.path.dirname(os.path.abspath(__file__))


def runtime_objects(report):
    return {o.get("runtime"): o for o in report.get("sync_objects", []) if o.get("runtime")}


def no_false_alarm(report, name, serialising=None):
    """No hidden-lock finding, and nothing high except, where the program
    really serialises on a runtime lock, a serialising_object naming it."""
    bad = [f for f in report.get("findings", []) if f.get("kind") == "internal_lock" or
           (f.get("severity") == "high" and not (
               serialising and f.get("kind") == "serialising_object" and
               (f.get("evidence") or {}).get("runtime") in serialising))]
    check(not bad, f"{name}: {tmtest.describe(bad)}")


def test_cpp20_sync():
    tmtest.require_report()
    if not os.path.exists(tmtest.workload("cpp20_sync")):
        raise tmtest.Skip("cpp20_sync not built (the C++ compiler lacks C++20 <semaphore>)")
    rec = tmtest.recorded("cpp20_sync")
    tmtest.check_process(rec)
    expect = {"semaphore": "blocked_sem", "atomic_wait": "blocked_cond",
              "barrier_fast": "blocked_barrier"}
    for t in rec.truth["threads"]:
        got = rec.thread(t["tid"])
        if got and t["role"] in expect:
            # Estimated from ticks: the share asleep on the word, within 10 points.
            near(state(got, expect[t["role"]]), t["wait_pct"], 10,
                 f"{t['role']} {expect[t['role']]} %")
    objs = runtime_objects(rec.report)
    for what in ("C++ std::counting_semaphore", "C++ std::atomic::wait", "C++ std::barrier"):
        check(what in objs, f"no object recognised as {what}: {sorted(objs)}")
    no_false_alarm(rec.report, "cpp20_sync")


def test_rust_std_sync():
    tmtest.require_report()
    rustc = shutil.which("rustc")
    if not rustc:
        raise tmtest.Skip("rustc not installed (Debian: rustc)")
    exe = os.path.join(tmtest.Temp.dir(), "rust_std_sync")
    src = os.path.join(HERE, "..", "workloads", "rust_std_sync.rs")
    build = subprocess.run([rustc, "-O", "-o", exe, src], capture_output=True, text=True,
                           timeout=300)
    if build.returncode != 0:
        raise tmtest.Skip(f"rustc could not build rust_std_sync.rs: {build.stderr.strip()[:200]}")
    capture = os.path.join(tmtest.Temp.dir(), "rust_std_sync.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", exe)
    check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr.strip()}")
    truth = json.loads([l for l in run.stdout.splitlines() if l.startswith("{")][-1])
    report = tmtest.report_json(capture)
    by_name = {}
    for t in report["threads"]:
        by_name.setdefault(t.get("name"), []).append(t)
    waiter = by_name.get(truth["cond"], [None])[0]
    if check(waiter is not None, "no condwaiter thread"):
        # It waits from start to end: nearly all of its life.
        check(state(waiter, "blocked_cond") > 80,
              f"condwaiter blocked_cond {state(waiter, 'blocked_cond'):.1f}%, "
              f"sleeping {state(waiter, 'sleeping'):.1f}%")
    mutexers = by_name.get(truth["mutex"], [])
    check(any(state(t, "blocked_mutex") > 0 for t in mutexers),
          f"no mutexer shows blocked_mutex: {[t.get('states') for t in mutexers]}")
    objs = runtime_objects(report)
    for what in ("Rust std::sync::Mutex", "Rust std::sync::Condvar"):
        check(what in objs, f"no object recognised as {what}: {sorted(objs)}")
    # Three threads taking turns on one Mutex held 200 µs at a time do
    # serialise: if that is reported, it names the Mutex and the program's
    # closure, not Rust's lock_contended.
    locks = ("Rust std::sync::Mutex", "Rust std::sync::RwLock")
    for f in [f for f in report.get("findings", []) if f.get("kind") == "serialising_object"]:
        check((f.get("evidence") or {}).get("runtime") in locks and
              "_contended" not in f.get("message", ""),
              f"serialising_object: {f.get('message')}")
    no_false_alarm(report, "rust_std_sync", serialising=locks)


tmtest.main(globals())
