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


def severities_agree(streamed, whole):
    """The same severity, or shares (a rule's figure its severity follows)
    within 0.5% of each other, so that its threshold lies between them
    (matrix_mult under load: 0.49997 in 1 s windows, 0.50007 whole, medium
    and high: the high line is 0.5)."""
    if streamed["severity"] == whole["severity"]:
        return True
    a, b = streamed["evidence"].get("share"), whole["evidence"].get("share")
    return a is not None and b is not None and abs(a - b) <= 0.005 * b


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
        check(severities_agree(got, f), f"{name}: {f['kind']} streamed is {got['severity']} "
              f"(share {got['evidence'].get('share')}, whole {f['evidence'].get('share')})")
        w = got["evidence"].get("windows", {})
        # undersubscribed may hold over the run and in no window (its phases
        # spread thinly: seen under load, each 1 s window with one thread on
        # a CPU at a time); then it has no worst window.
        least = 0 if f["kind"] == "undersubscribed" else 1
        check(least <= w.get("held", 0) <= w.get("of", 0) and w.get("of", 0) >= 2,
              f"{name}: {f['kind']} evidence.windows {w}, expected held of at least 2 windows")
        check(f"In {w.get('held')} of {w.get('of')} windows" in got["message"],
              f"{name}: {f['kind']} message does not say its windows: {got['message']!r}")
        if w.get("held", 0) == 0:
            check("worst_s" not in w, f"{name}: held in no window, but a worst window {w}")
            continue
        worst = w.get("worst_s", [0, 0])
        check(0 <= worst[0] < worst[1] <= streamed["process"]["duration_s"] + 1e-6,
              f"{name}: worst window {worst} outside the run")
    # The whole read's own figures: no windows.
    check(all("windows" not in f["evidence"] for f in whole["findings"]),
          f"{name}: a whole read's finding has evidence.windows")


def pairs(rep):
    """The waiter x holder table, and each object's, as (waiter, holder, count, wait ns)."""
    def rows(cells):
        return sorted((c["waiter"], c["holder"], c["count"], round(c["wait_s"] * 1e9))
                      for c in cells)
    return rows(rep["wait_matrix"]), {o["id"]: rows(o.get("blocked_by", []))
                                      for o in rep["sync_objects"]}


def test_waits_blamed_across_edges():
    """A barrier wait longer than two 1 s windows (heavy-0 spins 2 s a round)
    is open at a window's end, when nobody released it yet: the streamed
    report blames it on heavy-0 as the whole read does, not on nobody."""
    tmtest.require_report()
    rec = tmtest.recorded("barrier_imbalance", ["--threads", "2", "--rounds", "2", "--work-ms",
                                                "150", "--heavy-factor", "15"])
    whole = report(rec.capture, "--whole")
    streamed = report(rec.capture, "--window", "1")
    if not any(c["wait_s"] > 1.5 for c in whole["wait_matrix"]):
        raise tmtest.Skip(f"no barrier wait over 1.5 s: {whole['wait_matrix']}")
    check(pairs(streamed) == pairs(whole),
          f"waits by holder, 1 s windows {pairs(streamed)} against whole {pairs(whole)}")


def test_deadlock_resolved_across_edges():
    """A deadlock a timed lock breaks after 2.6 s is seen live by the first
    1 s windows: the streamed report gives it as the last window saw it,
    resolved, with the whole read's times."""
    tmtest.require_report()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])

    def deadlocks(rep):
        return [(f["threads"], f["objects"], f["message"],
                 {k: f["evidence"].get(k) for k in ("formed_s", "duration_s", "resolved",
                                                    "resolved_s")})
                for f in rep["findings"] if f["kind"] == "deadlock"]
    whole = deadlocks(report(rec.capture, "--whole"))
    check(len(whole) == 1, f"the whole read's deadlocks: {whole}")
    streamed = deadlocks(report(rec.capture, "--window", "1"))
    check(streamed == whole, f"1 s windows' deadlocks {streamed} against whole {whole}")


def test_hidden_lock_as_whole():
    """rand()'s lock inside glibc is a hidden lock, its waits estimated from
    the ticks that saw threads on its word and their sleeps: 1 s windows
    estimate it once over the whole run from their summed inputs, as the
    whole read does, not window by window."""
    tmtest.require_report()
    rec = tmtest.recorded("mutex_loop", ["--iterations", "3000000", "--rng", "rand"])

    def hidden(rep):
        return {o["id"]: (o["contentions"], o["wait_s"]) for o in rep["sync_objects"]
                if o["kind"] == "internal"}

    def sites(rep):
        # In the order of their counters, as a whole read gives them.
        return {o["id"]: [(c["frames"], c["contentions"]) for c in o["call_sites"]]
                for o in rep["sync_objects"] if o["kind"] == "internal"}
    whole_rep = report(rec.capture, "--whole")
    whole = hidden(whole_rep)
    if not whole:
        raise tmtest.Skip("no tick saw a thread on rand()'s lock")
    streamed_rep = report(rec.capture, "--window", "1")
    streamed = hidden(streamed_rep)
    check(sites(streamed_rep) == sites(whole_rep),
          f"hidden locks' call sites, 1 s windows {sites(streamed_rep)}, whole {sites(whole_rep)}")
    check(set(streamed) == set(whole), f"hidden locks, 1 s windows {streamed}, whole {whole}")
    for k, (count, wait) in whole.items():
        got = streamed.get(k, (0, 0.0))
        check(got[0] == count and abs(got[1] - wait) <= 0.005 * wait + 1e-6,
              f"hidden lock {k}: 1 s windows {got} against whole {(count, wait)}")


def test_hidden_lock_finding_of_run():
    """The internal_lock finding about rand()'s lock gives the whole run's
    figures in 1 s windows, from the waits estimated once, as a whole read
    does (main: the worst window's, 0.66 s of 5.23 s, 33% against 29%).
    test_mutex_loop's run (3.6 s), whose lock is hot enough for a finding.
    On a busy machine the lock is seldom hot enough (the loopers take turns
    on the CPUs, not on the lock): a run recorded on a quiet one is kept in
    tests/e2e/captures (2,000,000 iterations, 1.1 s of waits, 47%) and
    always checked."""
    tmtest.require_report()
    rec = tmtest.recorded("mutex_loop", ["--iterations", "6000000", "--rng", "rand"])
    kept = os.path.join(os.path.dirname(os.path.abspath(__file__)), "captures",
                        "mutex_loop-rand-quiet.tmcap")
    check(hidden_lock_of_run(kept), f"{kept}: no internal_lock finding read whole")
    # A CI run's: 11.5% read whole, under the rule's 10% in both its 1 s
    # windows (sightings come a few a second): the run's share decides.
    unseen = os.path.join(os.path.dirname(kept), "mutex_loop-rand-in-no-window.tmcap")
    check(hidden_lock_of_run(unseen), f"{unseen}: no internal_lock finding read whole")
    hidden_lock_of_run(rec.capture)


def hidden_lock_of_run(capture):
    """Checks that capture's internal_lock findings read the same in 1 s
    windows as whole; False when it has none."""
    def found(rep):
        return {tuple(f["objects"]): (f["severity"], f["evidence"]["wait_s"], f["evidence"]["share"])
                for f in rep["findings"] if f["kind"] == "internal_lock"}
    whole = found(report(capture, "--whole"))
    streamed = found(report(capture, "--window", "1"))
    for k, (sev, wait, share) in whole.items():
        got = streamed.get(k)
        check(got is not None and got[0] == sev and abs(got[1] - wait) <= 0.005 * wait + 1e-6
              and abs(got[2] - share) <= 0.005 * share + 1e-6,
              f"internal_lock {k}: 1 s windows {got} against whole {(sev, wait, share)}")
    return bool(whole)


def of_run(rep, kind):
    """Findings of a kind by subject, without the stream's own words (its
    last sentence, evidence.windows), shares rounded."""
    out = {}
    for f in rep["findings"]:
        if f["kind"] != kind:
            continue
        ev = {k: round(v, 4) if isinstance(v, float) else v
              for k, v in f["evidence"].items() if k not in ("windows", "wait_s_by_thread")}
        message = f["message"].split(" In ")[0] if " windows of " in f["message"] else f["message"]
        out[subject(f)] = (f["severity"], f["threads"], ev, message, round(f["t0_s"], 6),
                           round(f["t1_s"], 6))
    return out


def test_serialising_of_run():
    """A serialising object's finding in 1 s windows gives the whole run's
    figures, as a whole read does: its waiters' waits summed over every
    window over the program's threads' lives in the run, its call site the
    run's busiest (main: the worst window's, 2.78 s of waits and 56% against the
    run's 13.62 s and 55%)."""
    tmtest.require_report()
    rec = tmtest.recorded(*WORKLOADS[0][:2])
    whole = of_run(report(rec.capture, "--whole"), "serialising_object")
    if not whole:
        raise tmtest.Skip("no serialising_object read whole")
    streamed = of_run(report(rec.capture, "--window", "1"), "serialising_object")
    check(streamed == whole, f"serialising_object, 1 s windows {streamed}, whole {whole}")


def test_oversubscribed_of_run():
    """oversubscribed in 1 s windows gives the whole run's figures: the
    threads busy over the run, their lives, the runnable time beyond the
    CPUs summed over every window (main: the worst window's, its threads'
    lives of one window). Bins of 50 ms cut at the windows' edges move the
    runnable time a little (0.03% on the e2e tests' captures)."""
    tmtest.require_report()
    rec = tmtest.recorded(*WORKLOADS[2][:2])

    def found(rep):
        return [f for f in rep["findings"] if f["kind"] == "oversubscribed"]
    whole = found(report(rec.capture, "--whole"))
    if not whole:
        raise tmtest.Skip("no oversubscribed read whole")
    streamed = found(report(rec.capture, "--window", "1"))
    if not check(len(streamed) == 1, f"oversubscribed in 1 s windows: {streamed}"):
        return
    w, s = whole[0], streamed[0]
    check((s["threads"], s["t0_s"], s["t1_s"]) == (w["threads"], w["t0_s"], w["t1_s"]),
          f"oversubscribed, 1 s windows {s}, whole {w}")
    for k in ("threads_lifetime_s", "runnable_s", "share"):
        check(abs(s["evidence"][k] - w["evidence"][k]) <= 0.005 * w["evidence"][k],
              f"oversubscribed {k}: 1 s windows {s['evidence'][k]}, whole {w['evidence'][k]}")
    check(severities_agree(s, w),
          f"oversubscribed severity, 1 s windows {s['severity']} (share {s['evidence']['share']}), "
          f"whole {w['severity']} (share {w['evidence']['share']})")


def test_never_runs_of_run():
    """never_runs in 1 s windows is the whole run's: starved-0 (SCHED_IDLE
    behind busy threads, as test_sched_findings records it) over its life in
    the run, its shares of that life (main: the worst window's, alive 1.00 s
    of its 2.5 s)."""
    tmtest.require_report()
    rec = tmtest.recorded("starved", ["--how", "idle", "--duration-ms", "2500"])
    tid = rec.truth["starved"]["tid"]

    def found(rep):
        return [f for f in rep["findings"] if f["kind"] == "never_runs" and f["threads"] == [tid]]
    whole = found(report(rec.capture, "--whole"))
    if not whole:
        raise tmtest.Skip(f"no never_runs of starved-0 ({tid}) read whole")
    streamed = found(report(rec.capture, "--window", "1"))
    if not check(len(streamed) == 1, f"never_runs of starved-0 in 1 s windows: {streamed}"):
        return
    w, s = whole[0], streamed[0]
    check((s["severity"], s["threads"], s["t0_s"], s["t1_s"]) ==
          (w["severity"], w["threads"], w["t0_s"], w["t1_s"]),
          f"never_runs, 1 s windows {s}, whole {w}")
    check(abs(s["evidence"]["lifetime_s"] - w["evidence"]["lifetime_s"]) <= 1e-6,
          f"never_runs lifetime_s: 1 s windows {s['evidence']['lifetime_s']}, "
          f"whole {w['evidence']['lifetime_s']}")
    for k in ("on_cpu_share", "runnable_share", "sync_blocked_share", "chosen_sleep_share",
              "idle_share"):
        check(abs(s["evidence"][k] - w["evidence"][k]) <= 0.005 * w["evidence"][k] + 1e-9,
              f"never_runs {k}: 1 s windows {s['evidence'][k]}, whole {w['evidence'][k]}")
    check(s["message"].startswith(w["message"]),
          f"never_runs message, 1 s windows {s['message']!r}, whole {w['message']!r}")


def barriers_both_ways(capture, figures):
    """The barrier_imbalance findings of capture read whole and in 1 s
    windows, by object: [(object, streamed figures, whole figures)] for the
    objects both have; the same objects both ways is checked here."""
    def found(rep):
        return {tuple(f["objects"]): figures(f)
                for f in rep["findings"] if f["kind"] == "barrier_imbalance"}
    whole = found(report(capture, "--whole"))
    if not whole:
        raise tmtest.Skip("no barrier_imbalance read whole")
    streamed = found(report(capture, "--window", "1"))
    check(set(streamed) == set(whole), f"barrier_imbalance, 1 s windows {streamed}, whole {whole}")
    return [(k, streamed[k], w) for k, w in whole.items() if k in streamed]


def test_barrier_of_run():
    """barrier_imbalance in 1 s windows gives the whole run's rounds, tallied
    window after window in order of release (each round once, its waits read
    from before the window's start), as a whole read does (main: the worst
    window's, 9 rounds of the run's 59)."""
    tmtest.require_report()
    rec = tmtest.recorded(*WORKLOADS[1][:2])
    for k, s, w in barriers_both_ways(rec.capture, lambda f: (
            f["severity"], f["threads"], f["evidence"]["rounds"], f["evidence"]["usual_last"],
            f["evidence"]["usual_last_rounds"], f["evidence"]["others_wait_share"],
            f["t0_s"], f["t1_s"])):
        check(s[:5] == w[:5] and s[6:] == w[6:] and abs(s[5] - w[5]) <= 0.01,
              f"barrier_imbalance {k}: 1 s windows {s}, whole {w}")


def test_undersubscribed_of_run():
    """undersubscribed in 1 s windows is the whole run's: the idle phases
    summed over every window against the run's length, as a whole read
    (main: the worst window's, 75% high where the run's was 20% medium).
    Bins of 50 ms cut at the windows' edges move the idle phases a little."""
    tmtest.require_report()
    rec = tmtest.recorded(*WORKLOADS[1][:2])

    def found(rep):
        return [f for f in rep["findings"] if f["kind"] == "undersubscribed"]
    whole = found(report(rec.capture, "--whole"))
    streamed = found(report(rec.capture, "--window", "1"))
    if not check(len(streamed) == len(whole),
                 f"undersubscribed, 1 s windows {streamed}, whole {whole}") or not whole:
        return
    w, s = whole[0], streamed[0]
    check((s["severity"], s["threads"], s["t0_s"], s["t1_s"]) ==
          (w["severity"], w["threads"], w["t0_s"], w["t1_s"]),
          f"undersubscribed, 1 s windows {s}, whole {w}")
    check(abs(s["evidence"]["share"] - w["evidence"]["share"]) <= 0.02,
          f"undersubscribed share: 1 s windows {s['evidence']['share']}, "
          f"whole {w['evidence']['share']}")


def test_undersubscribed_in_no_window():
    """A run whose rule holds only over the run: barrier_imbalance recorded
    at load (tests/e2e/captures), one thread on a CPU at a time in each of
    its 1 s windows (1.50 over the run, the rule wants 1.5), idle CPUs half
    the run. The streamed report judges the run's inputs once, as a whole
    read does (main: only findings some window raised were the run's, so
    this run had none)."""
    tmtest.require_report()
    capture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "captures",
                           "undersubscribed-in-no-window.tmcap")

    def found(rep):
        return [f for f in rep["findings"] if f["kind"] == "undersubscribed"]
    whole = found(report(capture, "--whole"))
    streamed = found(report(capture, "--window", "1"))
    if not check(len(whole) == 1 and len(streamed) == 1,
                 f"undersubscribed, 1 s windows {streamed}, whole {whole}"):
        return
    w, s = whole[0], streamed[0]
    check((s["severity"], s["threads"]) == (w["severity"], w["threads"]),
          f"undersubscribed, 1 s windows {s}, whole {w}")
    check(abs(s["evidence"]["share"] - w["evidence"]["share"]) <= 0.02,
          f"undersubscribed share: 1 s windows {s['evidence']['share']}, "
          f"whole {w['evidence']['share']}")
    check(s["evidence"]["windows"]["held"] == 0, f"windows: {s['evidence']['windows']}")
    # Its windows start 18 ms off the run's 50 ms grid: binned on the run's
    # grid, they sum the whole read's idle phases (main: 1.3463 s against
    # 1.3472).
    check(s["evidence"]["idle_phase_s"] == w["evidence"]["idle_phase_s"],
          f"idle phases: 1 s windows {s['evidence']['idle_phase_s']} s, "
          f"whole {w['evidence']['idle_phase_s']} s")


def test_user_threads_of_run():
    """user_thread_handoff and user_threads_share_lwps in 1 s windows are the
    whole run's: the user threads' and their LWPs' states summed over the
    windows, the handoffs counted once each (main: the worst window's, 15,970
    handoffs a second of 69.9 us against the run's 31,650 of 38.4 us). The
    M-to-N study's fine-grained barrier, 4 user threads on 2 LWPs, 3-4 s."""
    tmtest.require_report()
    rec = tmtest.recorded("mn_barrier", ["--uthreads", "4", "--lwps", "2", "--rounds", "40000",
                                         "--work", "20000"])

    def found(rep):
        return {f["kind"]: f for f in rep["findings"] if f["kind"].startswith("user_thread")}
    whole = found(report(rec.capture, "--whole"))
    streamed = found(report(rec.capture, "--window", "1"))
    check(set(streamed) == set(whole), f"user thread findings, 1 s windows {sorted(streamed)}, "
          f"whole {sorted(whole)}")
    exact = ("dispatchable_share", "dispatches_per_s", "mean_run_us")
    for kind, w in whole.items():
        s = streamed.get(kind)
        if not s:
            continue
        check((s["severity"], s["threads"], s["evidence"]["user_threads"], s["evidence"]["lwps"])
              == (w["severity"], w["threads"], w["evidence"]["user_threads"],
                  w["evidence"]["lwps"]), f"{kind}: 1 s windows {s}, whole {w}")
        for k in exact:
            if k in w["evidence"]:
                check(abs(s["evidence"][k] - w["evidence"][k]) <= 1e-9 * abs(w["evidence"][k]),
                      f"{kind} {k}: 1 s windows {s['evidence'][k]}, whole {w['evidence'][k]}")
        # The LWPs' states are the streamed rows' (each window derived on
        # its own: the threads' table moves by hundredths of a point).
        if "lwp_scheduler_idle_share" in w["evidence"]:
            check(abs(s["evidence"]["lwp_scheduler_idle_share"] -
                      w["evidence"]["lwp_scheduler_idle_share"]) <= 0.01,
                  f"{kind} lwp_scheduler_idle_share: 1 s windows "
                  f"{s['evidence']['lwp_scheduler_idle_share']}, whole "
                  f"{w['evidence']['lwp_scheduler_idle_share']}")


def test_barrier_rounds_longer_than_windows():
    """A barrier whose rounds are each over a third of a window holds in no
    window alone (a finding needs three rounds), yet in the run: the
    streamed report says it, of the run's rounds (main: nothing), each
    round's waits whole (under load its rounds last seconds: they were cut
    at one window before the release, 34% for the whole read's 58%)."""
    tmtest.require_report()
    rec = tmtest.recorded("barrier_imbalance", ["--rounds", "5", "--work-ms", "200",
                                                "--heavy-factor", "3"])
    # Each round's waits whole, however many windows they span.
    for k, s, w in barriers_both_ways(rec.capture, lambda f: (
            f["severity"], f["evidence"]["rounds"], f["evidence"]["usual_last"],
            f["evidence"]["others_wait_share"], f["message"])):
        check(s[:3] == w[:3] and abs(s[3] - w[3]) <= 0.01 and "In 0 of" in s[4],
              f"barrier_imbalance {k}: 1 s windows {s}, whole {w}")


def states(rep):
    """Each thread's states (% of its life), by tid."""
    return {t["tid"]: t["states"] for t in rep["threads"]}


def test_thread_states_as_whole():
    """A window's states are summed once the ticks after its end are read:
    the probe's own thread (its switch records come with the next tick)
    read 1.1% stolen in 1 s windows of the deadlock run against none whole.
    Every thread's states in 1 s windows are the whole read's."""
    tmtest.require_report()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = states(report(rec.capture, "--whole"))
    streamed = states(report(rec.capture, "--window", "1"))
    check(set(streamed) == set(whole), f"threads, 1 s windows {sorted(streamed)}, "
          f"whole {sorted(whole)}")
    for tid, st in whole.items():
        got = streamed.get(tid, {})
        off = {k: (got.get(k), v) for k, v in st.items() if abs(got.get(k, -1) - v) > 0.05}
        check(not off, f"thread {tid}: states (1 s windows, whole) that differ: {off}")


def test_thread_states_across_segments():
    """Each 1 s window a model of its own (--segment 1): the deadlock run's
    main thread joins its workers for 2.6 s, from before the warm-up of the
    segment at 2 s. The join is carried into the new model as the waits on
    locks are, so every thread's states are the whole read's (before: the
    main thread's kernel view after the edge, 99.80% blocked_join and 0.18%
    on a CPU against 99.97% and 0.01%)."""
    tmtest.require_report()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = states(report(rec.capture, "--whole"))
    streamed = states(report(rec.capture, "--window", "1", "--segment", "1"))
    check(set(streamed) == set(whole), f"threads, 1 s segments {sorted(streamed)}, "
          f"whole {sorted(whole)}")
    joined = [tid for tid, st in whole.items() if st.get("blocked_join", 0) > 90]
    check(joined, f"no thread joined for most of its life read whole: {whole}")
    for tid, st in whole.items():
        got = streamed.get(tid, {})
        off = {k: (got.get(k), v) for k, v in st.items() if abs(got.get(k, -1) - v) > 0.05}
        check(not off, f"thread {tid}: states (1 s segments, whole) that differ: {off}")


def test_first_window_at_start():
    """A capture of the fuzz corpus whose first record is 1,400 s before its
    Hello's start: the streamed report's first window starts at the
    session's start, as a whole read does, not at that record (a finding
    from -1400.7 s, its worst window -1400.7-0.5 s)."""
    tmtest.require_report()
    capture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "display",
                           "fuzz", "corpus", "cpp_threads.tmcap")
    whole = report(capture, "--whole")
    streamed = report(capture, "--stream", "--window", "1")
    spans = [(f["kind"], f["t0_s"], f["t1_s"]) for f in whole["findings"]]
    check(spans, f"no findings read whole: {whole['findings']}")
    got = [(f["kind"], f["t0_s"], f["t1_s"]) for f in streamed["findings"]]
    check(got == spans, f"findings' spans, 1 s windows {got}, whole {spans}")
    for f in streamed["findings"]:
        worst = f["evidence"].get("windows", {}).get("worst_s", [0, 0])
        check(worst[0] >= 0, f"{f['kind']}: worst window {worst} before the run")


def test_data_lost_probe_share_of_run():
    """2,000 threads waking every 100 ms over a 1% budget: the probe drops
    detail and its own thread waits for a CPU. No finding's share is over 1. The streamed data_lost (the
    newest window's) gives the probe's share of the whole run, as a whole
    read does, not the last window's (main: 10.6% against 8.9% whole), and
    the threads with gaps of every window."""
    tmtest.require_report()
    swarm = os.path.join(tmtest.BUILD, "bench", "tm-bench-swarm")
    if not os.path.exists(swarm):
        raise tmtest.Skip(f"{swarm} is not built")
    capture = os.path.join(tmtest.Temp.dir(), "swarm-starved.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", swarm, "light", "2000", "3",
                          env=dict(os.environ, THREADMON_BUDGET="1"), timeout=120)
    check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr.strip()}")

    def share(rep):
        return [f["evidence"]["probe_runnable_share"] for f in rep["findings"]
                if f["kind"] == "data_lost"]

    def rest(rep):
        # Made once of the whole run: its threads with gaps in every window
        # and whether the run was cut short, its span the run's (main: the
        # newest window's threads, none when its last window had no gap,
        # and its span).
        return [(f["severity"], f["threads"], f["evidence"]["threads_with_gaps"],
                 f["evidence"]["ends_without_exit"], round(f["t0_s"], 6), round(f["t1_s"], 6))
                for f in rep["findings"] if f["kind"] == "data_lost"]
    whole_rep = report(capture, "--whole")
    # A share is of the named threads' time: never over all of it (main: a
    # herd of 2,000 threads each waking briefly made "1 busy threads spent
    # 745% of their time ready to run").
    for how, rep in (("whole", whole_rep), ("1 s windows", report(capture, "--window", "1"))):
        for f in rep["findings"]:
            check(f["evidence"].get("share", 0) <= 1 + 1e-9,
                  f"{how}: {f['kind']} share {f['evidence'].get('share')}: {f['message']}")
    whole = share(whole_rep)
    if not whole:
        raise tmtest.Skip("the probe lost nothing: no data_lost read whole")
    streamed_rep = report(capture, "--window", "1")
    streamed = share(streamed_rep)
    check(len(streamed) == 1 and abs(streamed[0] - whole[0]) <= 0.002,
          f"data_lost's probe_runnable_share, 1 s windows {streamed}, whole {whole}")
    check(rest(streamed_rep) == rest(whole_rep),
          f"data_lost, 1 s windows {rest(streamed_rep)}, whole {rest(whole_rep)}")


def make(name, args, kind):
    def test():
        tmtest.require_report()
        check_workload(name, args, kind)
    return test


for _name, _args, _kind in WORKLOADS:
    globals()[f"test_{_name}"] = make(_name, _args, _kind)

tmtest.main(globals())
