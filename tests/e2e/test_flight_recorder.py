"""`threadmon record --last`: the capture keeps only the last window of
detail (ticks) yet whole-run totals (the lock's acquisitions and wait, from
the workload's own truth), and a trigger or SIGUSR1 writes one while the
program runs."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import tmtest
from tmtest import LAUNCHER, check, launcher, report_json, workload


def truth_of(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    check(lines, f"no truth line; stdout {proc.stdout!r}, stderr {proc.stderr!r}")
    return json.loads(lines[-1]) if lines else {}


def big_lock(report):
    for o in report.get("sync_objects", []):
        if o.get("symbol") == "big_lock":
            return o
    check(False, f"big_lock missing: {[o.get('symbol') for o in report.get('sync_objects', [])]}")
    return {}


def tick_frames(capture):
    """Tick frames in the capture, from `threadmon report --sizes`."""
    proc = subprocess.run([sys.executable, LAUNCHER, "report", "--sizes", capture],
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"report --sizes exited {proc.returncode}: {proc.stderr}")
    m = re.search(r"^tick\s+([\d,]+)\s", proc.stdout, re.M)
    check(m, f"no tick row in --sizes: {proc.stdout[:400]!r}")
    return int(m.group(1).replace(",", "")) if m else 0


def record(name, options, workload_args, program="mutex_hold"):
    """`threadmon record OPTIONS -o <scratch>/NAME.tmcap -- PROGRAM ARGS`: the
    capture's path and the finished process."""
    cap = os.path.join(tmtest.Temp.dir(), f"{name}.tmcap")
    proc = launcher("record", *options, "-o", cap, "--", workload(program), *workload_args,
                    timeout=90)
    check(proc.returncode == 0, f"record {' '.join(options)} exited {proc.returncode}: "
          f"{proc.stderr}")
    return cap, proc


def test_last_window_keeps_whole_run_totals():
    tmtest.require_report()
    # About 4.8 s of rounds, 1 s kept.
    cap, proc = record("last", ["--last", "1s", "--interval", "10"],
                       ["--rounds", "160", "--hold-ms", "25", "--gap-ms", "5"])
    check("threadmon: wrote" in proc.stderr, f"no closing line: {proc.stderr!r}")
    truth = truth_of(proc)
    report = report_json(cap)
    lock = big_lock(report)
    check(lock.get("acquisitions") == truth["acquisitions"],
          f"acquisitions {lock.get('acquisitions')}, truth {truth['acquisitions']} (whole run)")
    tmtest.near(lock.get("wait_s", 0), truth["wait_s"], 0.05 * truth["wait_s"], "lock wait_s")
    # A window of 1 s plus at most two 125 ms chunks, at 10 ms ticks, and a
    # few ticks the recorder adds (ended threads', the totals'); the whole
    # run had over 400.
    ticks = tick_frames(cap)
    whole = truth["wall_s"] / 0.010
    check(ticks <= 1.25 / 0.010 + 10, f"{ticks} ticks kept for a 1 s window (whole run {whole:.0f})")
    check(ticks >= 10, f"only {ticks} ticks kept")
    check("flight recorder" in json.dumps(report), "no flight recorder note in the report")
    # Findings are about the kept detail (at most 1.25 s): before it a
    # thread's states are estimates from the counters, its waits sleep, and
    # over the whole run the waiters' share read as a fifth (truth: 79%).
    everything = report.get("findings", [])
    found = [f for f in everything if f.get("kind") == "serialising_object"]
    if check(len(found) == 1, f"serialising_object: {tmtest.describe(everything)}"):
        ev = found[0].get("evidence", {})
        waiters = len(ev.get("waiters", []))
        check(0 < ev.get("waiters_lifetime_s", 0) <= 1.3 * waiters,
              f"waiters_lifetime_s {ev.get('waiters_lifetime_s')} for {waiters} waiters: not "
              "the kept detail's")
        check(ev.get("waiters_share", 0) >= 0.45, f"waiters_share {ev.get('waiters_share')}")
    check(not [f for f in everything if f.get("kind") == "never_runs"],
          f"never_runs from the estimated states: {tmtest.describe(everything)}")

    # Read a window at a time (what a capture longer than 10 s gets): the
    # run-level rules judge the windows of the kept detail, not the
    # estimates before it, which read as three threads that never ran.
    streamed = report_json(cap, "--stream", "--window", "1")
    told = streamed.get("findings", [])
    check(not [f for f in told if f.get("kind") == "never_runs"],
          f"streamed: never_runs from the estimated states: {tmtest.describe(told)}")
    found = [f for f in told if f.get("kind") == "serialising_object"]
    if check(len(found) == 1, f"streamed serialising_object: {tmtest.describe(told)}"):
        ev = found[0].get("evidence", {})
        check(ev.get("waiters_share", 0) >= 0.45,
              f"streamed waiters_share {ev.get('waiters_share')}: not the kept detail's")
        check("the kept detail's" in found[0].get("message", ""),
              f"streamed message says whose figures: {found[0].get('message')!r}")
        windows = ev.get("windows", {})
        check(0 < windows.get("of", 0) <= 2, f"{windows.get('of')} windows of a 1.25 s detail")


def test_trigger_writes_capture():
    tmtest.require_report()
    # Each waiter waits about 300 ms for the holder: the trigger fires.
    cap, proc = record("trig", ["--last", "5s", "--trigger", "wait>200ms"],
                       ["--rounds", "6", "--hold-ms", "300", "--gap-ms", "50"])
    fired = os.path.join(tmtest.Temp.dir(), "trig.trigger1.tmcap")
    check(os.path.exists(fired), f"no {fired}; stderr: {proc.stderr!r}")
    check("wait>200ms" in proc.stderr, f"the trigger is not named: {proc.stderr!r}")
    if os.path.exists(fired):
        # Written while the first wait was still open: the waiters end blocked on the lock.
        report = report_json(fired)
        big_lock(report)
        waiting = [t["name"] for t in report["threads"] if t["name"].startswith("waiter")
                   and (tmtest.state(t, "blocked_mutex") or 0) >= 50]
        check(waiting, f"no waiter blocked in the trigger's capture: {report['threads']}")
    check(os.path.exists(cap), "no capture at the program's end")


def deadlock_finding(report):
    found = [f for f in report.get("findings", []) if f.get("kind") == "deadlock"]
    check(found, f"no deadlock finding: {[f.get('kind') for f in report.get('findings', [])]}")
    return found[0] if found else {}


def check_deadlock_capture(report, truth_tids=None):
    """The trigger's capture shows the deadlock: the finding with both
    threads and both locks, and both threads blocked on a mutex in it."""
    finding = deadlock_finding(report)
    symbols = {o.get("id"): o.get("symbol") for o in report.get("sync_objects", [])}
    locks = sorted(symbols.get(o) for o in finding.get("objects", []))
    check(locks == ["lock_a", "lock_b"], f"the deadlock's objects are {locks}")
    by_name = {t.get("name"): t for t in report.get("threads", [])}
    for name in ("first", "second"):
        blocked = tmtest.state(by_name.get(name), "blocked_mutex") or 0
        check(blocked >= 20, f"{name} is {blocked}% blocked on a mutex in the trigger's capture")
    tids = sorted(by_name[n]["tid"] for n in ("first", "second") if n in by_name)
    check(sorted(finding.get("threads", [])) == tids,
          f"the deadlock's threads {finding.get('threads')}, first and second are {tids}")
    if truth_tids:
        check(tids == sorted(truth_tids), f"threads {tids}, the program's own {truth_tids}")
    # Written while the program ran on, and saying so: nothing was cut short.
    cut = [f for f in report.get("findings", []) if f.get("kind") == "data_lost" and
           f.get("evidence", {}).get("ends_without_exit")]
    check(not cut, f"the trigger's capture is called cut short: {cut}")
    check(not report["process"].get("data_lost"),
          f"the trigger's capture says data was lost: {report['process'].get('data_lost')}")


def test_deadlock_trigger():
    """`--last 5 --trigger deadlock`: the trigger's capture, written a second
    after the cycle formed, holds the cycle and the finding; the program's
    own clock says when it formed."""
    tmtest.require_report()
    _, proc = record("dl", ["--last", "5s", "--trigger", "deadlock"], ["--deadlock-ms", "2500"],
                     program="deadlock")
    fired = os.path.join(tmtest.Temp.dir(), "dl.trigger1.tmcap")
    check(os.path.exists(fired), f"no {fired}; stderr: {proc.stderr!r}")
    check("deadlock: threads" in proc.stderr, f"the cycle is not named: {proc.stderr!r}")
    if not os.path.exists(fired):
        return
    truth = truth_of(proc)
    report = report_json(fired)
    check_deadlock_capture(report, [truth["first"]["tid"], truth["second"]["tid"]])
    # Written about 1 s (--trigger-after's default) after the cycle formed,
    # well before second's 2.5 s timeout broke it: still held at the end.
    finding = deadlock_finding(report)
    formed = finding.get("evidence", {}).get("formed_s", 0)
    tmtest.near(formed, truth["formed_s"], 0.2, "formed_s")
    check(finding.get("evidence", {}).get("resolved") is False,
          f"the trigger's capture sees the deadlock resolved: {finding.get('evidence')}")
    lasted = report["process"].get("duration_s", 0) - truth["formed_s"]
    check(0.5 <= lasted < 2.4,
          f"the capture goes {lasted:.3f} s past the cycle, expected about 1 s")


def test_late_trigger_keeps_window_before():
    """A deadlock 2.5 s into the run under `--last 1s`: the trigger's capture
    keeps detail from at least 1 s before the cycle formed (the ring keeps
    the window plus --trigger-after), and has the finding."""
    tmtest.require_report()
    _, proc = record("late", ["--last", "1s", "--trigger", "deadlock", "--trigger-limit", "1"],
                     ["--start-ms", "2500", "--deadlock-ms", "2000"], program="deadlock")
    fired = os.path.join(tmtest.Temp.dir(), "late.trigger1.tmcap")
    check(os.path.exists(fired), f"no {fired}; stderr: {proc.stderr!r}")
    if not os.path.exists(fired):
        return
    truth = truth_of(proc)
    report = report_json(fired)
    check_deadlock_capture(report, [truth["first"]["tid"], truth["second"]["tid"]])
    kept = [re.search(r"detail kept for the last .* from ([\d.]+) s", n)
            for n in report["process"].get("notices", [])]
    kept = [float(m.group(1)) for m in kept if m]
    check(kept, f"no note of the detail kept: {report['process'].get('notices')}")
    if kept:
        check(kept[0] <= truth["formed_s"] - 0.95,
              f"detail kept from {kept[0]} s, the cycle formed at {truth['formed_s']:.3f} s: "
              "the window before the trigger is not whole")


def test_exit_capture_has_signal():
    """A deadlocked program killed outright: the trigger's capture has the
    deadlock, the exit capture the signal the launcher saw."""
    tmtest.require_report()
    cap = os.path.join(tmtest.Temp.dir(), "killed.tmcap")
    child = subprocess.Popen([sys.executable, LAUNCHER, "record", "--last", "5s", "--trigger",
                              "deadlock", "--trigger-after", "300ms", "-o", cap, "--",
                              workload("deadlock"), "--deadlock-ms", "60000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fired = os.path.join(tmtest.Temp.dir(), "killed.trigger1.tmcap")
    deadline = time.time() + 30
    while not os.path.exists(fired) and time.time() < deadline and child.poll() is None:
        time.sleep(0.1)
    pid = tmtest.child_pid(child.pid, "deadlock")
    check(pid, "the program is not running")
    if pid:
        os.kill(pid, signal.SIGKILL)
    _, err = child.communicate(timeout=60)
    check(child.returncode == 128 + signal.SIGKILL, f"record exited {child.returncode}: {err}")
    check("killed by SIGKILL" in err, f"the launcher does not say the signal: {err!r}")
    check(os.path.exists(fired) and os.path.exists(cap), f"captures missing; stderr {err!r}")
    if not (os.path.exists(fired) and os.path.exists(cap)):
        return
    check_deadlock_capture(report_json(fired))
    process = report_json(cap)["process"]
    check(process.get("exit_signal") == signal.SIGKILL,
          f"the exit capture's signal is {process.get('exit_signal')}, status "
          f"{process.get('exit_status')}")


def test_trigger_limit():
    """A program that keeps triggering writes --trigger-limit captures, then
    one line says the limit is reached."""
    tmtest.require_report()
    cap, proc = record("cap", ["--last", "300ms", "--trigger", "wait>40ms", "--trigger-after",
                               "100ms", "--trigger-limit", "2"],
                       ["--rounds", "30", "--hold-ms", "80", "--gap-ms", "10"])
    base = os.path.join(tmtest.Temp.dir(), "cap.trigger")
    written = [n for n in range(1, 6) if os.path.exists(f"{base}{n}.tmcap")]
    check(written == [1, 2], f"trigger captures {written}, the limit is 2; stderr {proc.stderr!r}")
    limit = [l for l in proc.stderr.splitlines() if "limit of 2 trigger captures" in l]
    check(len(limit) == 1, f"{len(limit)} limit lines: {proc.stderr!r}")
    check(os.path.exists(cap), "no capture at the program's end")


def test_sigusr1_snapshot():
    tmtest.require_report()
    cap = os.path.join(tmtest.Temp.dir(), "usr1.tmcap")
    child = subprocess.Popen([sys.executable, LAUNCHER, "record", "--last", "2s", "-o", cap,
                              "--", workload("mutex_hold"), "--rounds", "100", "--hold-ms", "20",
                              "--gap-ms", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    time.sleep(1.5)
    child.send_signal(signal.SIGUSR1)
    out, err = child.communicate(timeout=90)
    check(child.returncode == 0, f"record exited {child.returncode}: {err}")
    snap = os.path.join(tmtest.Temp.dir(), "usr1.snap1.tmcap")
    check(os.path.exists(snap), f"no {snap} after SIGUSR1; stderr {err!r}")
    if os.path.exists(snap):
        # Written while the program ran on: shorter than the run, no exit
        # status, and a note saying why.
        report = report_json(snap, expect_ok=False)
        wall = truth_of(subprocess.CompletedProcess([], 0, out, err)).get("wall_s", 0)
        process = report["process"]
        check(process.get("duration_s", 0) < wall,
              f"the snapshot lasts {process.get('duration_s')} s, the run {wall} s")
        check(process.get("exit_status") is None, f"a snapshot with exit status "
              f"{process.get('exit_status')}")
        check(any("without the program's Goodbye" in n for n in process.get("notices", [])),
              f"no note: {process.get('notices')}")


def test_stranger_first():
    """A connection that says nothing, then one with a wrong token, reach the
    recorder before the probe: the probe's session is still the one recorded."""
    tmtest.require_report()
    cap = os.path.join(tmtest.Temp.dir(), "stranger.tmcap")
    rec = subprocess.Popen([os.path.join(tmtest.BUILD, "recorder", "threadmon-flight"), "-o", cap,
                            "--last-ms", "5000", "--token", "right"], stdout=subprocess.PIPE,
                           text=True)
    port = int(rec.stdout.readline().split()[1])
    silent = socket.create_connection(("127.0.0.1", port))
    env = dict(os.environ, LD_PRELOAD=tmtest.PROBE, THREADMON_CONNECT=f"127.0.0.1:{port}",
               THREADMON_FOLLOW="0")
    argv = [workload("cond_wait"), "--delay-ms", "20", "--repeats", "2"]
    wrong = subprocess.Popen(argv, env=dict(env, THREADMON_TOKEN="wrong"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    wrong.communicate(timeout=60)
    right = subprocess.Popen(argv, env=dict(env, THREADMON_TOKEN="right"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    _, err = right.communicate(timeout=60)
    out, _ = rec.communicate(timeout=60)
    silent.close()
    check(right.returncode == 0 and rec.returncode == 0,
          f"program {right.returncode}, recorder {rec.returncode}: {err!r}")
    check(f"wrote {cap}" in out, f"recorder said {out!r}")
    if os.path.exists(cap):
        pid = report_json(cap)["process"].get("pid")
        check(pid == right.pid, f"the capture is of pid {pid}; the wrong token's run was "
              f"{wrong.pid}, the right one's {right.pid}")


tmtest.main(globals())
