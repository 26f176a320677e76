"""A Rust program (std Mutex, RwLock, Condvar: futexes the probe finds by
sampling): it runs under the probe, its threads are named, its Mutex may be
reported (a lock its workers take turns at), and the consumer's Condvar wait
is not taken for a lock."""
import os
import re
import subprocess

import corpus
import tmtest
from corpus import check

WORKERS, MILLIS = 3, 1500


def test_rust_sync():
    rustc = corpus.tool("rustc", os.path.expanduser("~/.cargo/bin"))
    exe = os.path.join(tmtest.Temp.dir(), "rs_sync")
    built = subprocess.run([rustc, "-O", "-g", "--edition", "2021", "-o", exe,
                            corpus.source("rs_sync.rs")], capture_output=True, text=True, timeout=300)
    if built.returncode:
        raise tmtest.Failed(f"rustc failed: {built.stderr.strip()}")
    run = corpus.Run("rust", [exe, str(WORKERS), str(MILLIS)])
    check(run.run.returncode == 0 and run.truth.get("turns", 0) > 0,
          f"exit {run.run.returncode}, truth {run.truth}")
    names = sorted(t["name"] for t in run.threads("rs-"))
    check(names == sorted([f"rs-worker-{i}" for i in range(WORKERS)] + ["rs-consumer"]),
          f"thread names {names}")
    for f in run.findings("internal_lock"):
        sites = " ".join(map(str, f.get("evidence", {}).get("call_site", [])))
        check("Condvar" not in sites or "lock_contended" in sites,
              f"the Condvar wait taken for a lock: {f.get('message')}")

    def true_lock(f):  # the workers' Mutex: they do take turns at it
        text = str(f.get("evidence", {}).get("program_function", "")) + str(f.get("message", ""))
        return (f.get("kind") == "serialising_object" and "Mutex" in text) or \
            (f.get("kind") == "internal_lock" and "lock_contended" in text)
    corpus.no_false_alarm(run, true_lock)
    # Where the program takes it: std's lock inlined into the worker's
    # closure, followed out to the program's own line (rs_sync.rs).
    mutexes = [o for o in run.report["sync_objects"] if o.get("runtime") == "Rust std::sync::Mutex"]
    frames = [f for o in mutexes for s in o.get("call_sites", []) for f in s.get("frames", [])]
    check(any(re.search(r" in rs_sync\.rs:\d+\)$", f) for f in frames),
          f"no frame of the Mutex's call sites names rs_sync.rs: {frames[:6]}")
    # The text report: std waits through glibc's syscall(), so the futex is
    # seen at the call: its longest wait is known, its acquisition count and
    # hold time are not ("-", not 0).
    text = tmtest.launcher("report", run.capture).stdout
    rows = [l for l in text.splitlines() if "Rust std::sync::Mutex, seen at syscall()" in l]
    check(rows and all(re.match(r"\s*\d+\s+mutex\s+-\s+\d+\s+[\d.]+\s+[\d.]+\s+-\s", r)
                       for r in rows),
          f"the Rust Mutex's row: {rows}")



def test_rust_channel_recv():
    """A consumer blocked in mpsc recv() waits for the channel (a queue),
    not a lock: it read "mutex 60-68%" and an object labelled a Rust
    std::sync::Mutex at Thread::park (a stale lock_contended frame beyond
    the park)."""
    rustc = corpus.tool("rustc", os.path.expanduser("~/.cargo/bin"))
    exe = os.path.join(tmtest.Temp.dir(), "rs_channel")
    built = subprocess.run([rustc, "-O", "-g", "--edition", "2021", "-o", exe,
                            corpus.source("rs_channel.rs")], capture_output=True, text=True,
                           timeout=300)
    if built.returncode:
        raise tmtest.Failed(f"rustc failed: {built.stderr.strip()}")
    run = corpus.Run("rust_channel", [exe, "200"])
    truth = run.truth
    check(run.run.returncode == 0 and truth.get("sum") == 19900, f"truth {truth}")
    got = next((t for t in run.report["threads"] if t.get("tid") == truth.get("tid")), None)
    if not check(got is not None, f"the receiver {truth.get('tid')} is missing"):
        return
    mutex, cond = tmtest.state(got, "blocked_mutex"), tmtest.state(got, "blocked_cond")
    own = 100 * truth["recv_s"] / truth["life_s"]
    check(mutex < 5, f"the receiver reads {mutex:.1f}% blocked on a mutex (its recv: {own:.0f}%)")
    check(cond >= own - 25, f"the receiver reads {cond:.1f}% waiting, its own clock {own:.0f}%")
    # The channel's own Mutex (its waker list) may show: seen at syscall(),
    # its short waits are exact now; the receiver is not blocked on it
    # (above), it waits for messages.
    corpus.no_false_alarm(run)

tmtest.main(globals())
