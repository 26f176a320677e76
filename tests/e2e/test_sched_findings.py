"""Scheduling findings, each raised by the workload built to show it:
more threads than CPUs (matrix_mult), serial phases leaving CPUs idle
(phases), one thread arriving last at every barrier (barrier_imbalance) and
threads that never get to run (starved)."""
import os

import tmtest
from tmtest import Recording, check, near


def one_finding(rec, kind):
    """The single finding of `kind`, or None (recorded as a failure)."""
    found = tmtest.findings(rec, kind)
    if not check(len(found) == 1, f"{len(found)} {kind} findings, expected 1: "
                 f"{tmtest.describe(tmtest.findings(rec))}"):
        return None
    return found[0]


def test_oversubscribed():
    tmtest.require_report()
    # Enough work to stay CPU-bound for many 50 ms bins on a quiet machine:
    # size 400 x 6 rounds was 0.25 s of CPU in all (0.12 s on 2 idle CPUs),
    # mostly thread start-up and barrier tails, and its share sat at the
    # 25 % threshold; this is about 1.4 s of CPU.
    rec = Recording("matrix_mult", ["--threads", str(3 * os.cpu_count()), "--size", "600",
                                    "--rounds", "10"])
    tmtest.check_process(rec)
    f = one_finding(rec, "oversubscribed")
    if not f:
        return
    check(f.get("severity") in ("high", "medium"), f"severity {f.get('severity')}")
    ev = f.get("evidence", {})
    workers = rec.truth["workers"]
    # The busy threads: every worker, not main (parked in pthread_join).
    check({w["tid"] for w in workers} == set(ev.get("threads", [])),
          f"evidence.threads {ev.get('threads')} are not the mult threads")
    # The finding counts only the runnable time beyond the CPUs (threads
    # that had to wait because the program itself had more than one per
    # CPU), over the lifetimes of the threads that want to run (the
    # workers; main, parked in its join, no longer dilutes it). From the
    # truth: at most all runnable time; at least the threads' active (not
    # at the barrier) time beyond what the CPUs could run in wall time.
    runnable = sum(w["runnable_pct"] / 100 * w["lifetime_s"] for w in workers)
    active = sum(w["lifetime_s"] - w["barrier_s"] for w in workers)
    life = sum(w["lifetime_s"] for w in workers)
    low = (active - os.cpu_count() * rec.truth["wall_s"]) / life
    share = ev.get("share") or 0
    print(f"  share {share:.3f}, truth between {low:.3f} and {runnable / life:.3f}")
    check(low - 0.1 <= share <= runnable / life + 0.05,
          f"runnable share {share:.3f} outside the truth's {low:.3f}..{runnable / life:.3f}")
    check(ev.get("cpus") == os.cpu_count(), f"evidence.cpus {ev.get('cpus')}")


def test_undersubscribed():
    tmtest.require_report()
    rec = Recording("phases")
    tmtest.check_process(rec)
    # The finding needs CPUs that really idle (docs/findings.md): on a
    # machine other processes keep busy there is no idle phase to find.
    other = tmtest.other_cpu_share(rec)
    if other > 0.25:
        raise tmtest.Skip(f"machine busy: other processes used {100 * other:.0f}% of the CPUs "
                          "during the run, so its serial phases had no idle CPU to find")
    f = one_finding(rec, "undersubscribed")
    if not f:
        return
    check(f.get("severity") in ("high", "medium"), f"severity {f.get('severity')}")
    ev = f.get("evidence", {})
    # Phases are measured in bins, so allow for the edges of each serial step.
    near(ev.get("share"), rec.truth["serial_pct"] / 100, 0.2, "idle-phase share")


def test_barrier_imbalance():
    tmtest.require_report()
    rec = Recording("barrier_imbalance")
    tmtest.check_process(rec)
    # heavy-0 arrives last because it has more work; on a machine other
    # processes keep busy every worker also waits for a CPU, and the rounds'
    # order is the scheduler's (seen at load 10: no finding at all).
    other = tmtest.other_cpu_share(rec)
    if other > 0.25:
        raise tmtest.Skip(f"machine busy: other processes used {100 * other:.0f}% of the CPUs "
                          "during the run, so the rounds' order was not the work's")
    f = one_finding(rec, "barrier_imbalance")
    if not f:
        return
    check(f.get("severity") in ("high", "medium"), f"severity {f.get('severity')}")
    tmtest.mentions(f.get("message"), "round_barrier", "heavy-0")
    ev = f.get("evidence", {})
    barrier = tmtest.object_by_symbol(rec, "round_barrier")
    if barrier:
        check(ev.get("object") == barrier["id"], f"evidence.object {ev.get('object')}, "
              f"round_barrier is {barrier['id']}")
    heavy = next(w for w in rec.truth["workers"] if w["heavy"])
    lights = [w for w in rec.truth["workers"] if not w["heavy"]]
    check(ev.get("usual_last") == heavy["tid"],
          f"evidence.usual_last {ev.get('usual_last')}, heavy-0 is {heavy['tid']}")
    near(ev.get("rounds"), rec.truth["rounds"], 1, "rounds")
    light_share = sum(w["barrier_s"] for w in lights) / sum(w["lifetime_s"] for w in lights)
    near(ev.get("others_wait_share"), light_share, 0.15, "light threads' wait share")
    near(ev.get("last_wait_share"), heavy["barrier_pct"] / 100, 0.05, "heavy-0's wait share")
    # The cause named: heavy-0 used more CPU time (its work), as its truth says.
    ratio = heavy["cpu_s"] / (sum(w["cpu_s"] for w in lights) / len(lights))
    near(ev.get("cpu_ratio"), ratio, 0.15 * ratio, "heavy-0's CPU time over the others'")
    tmtest.mentions(f.get("message"), "the CPU time of the others")


def check_never_runs(rec, severities):
    victim = rec.truth["starved"]
    found = [f for f in tmtest.findings(rec, "never_runs")
             if f.get("evidence", {}).get("tid") == victim["tid"]]
    if not check(len(found) == 1, f"no never_runs finding for starved-0 ({victim['tid']}): "
                 f"{tmtest.describe(tmtest.findings(rec))}"):
        return None
    f = found[0]
    check(f.get("severity") in severities, f"severity {f.get('severity')}, expected {severities}")
    tmtest.mentions(f.get("message"), f"starved-0 ({victim['tid']})")
    ev = f.get("evidence", {})
    near(ev.get("lifetime_s"), victim["lifetime_s"], 0.05, "starved-0 lifetime s")
    check((ev.get("on_cpu_share") or 0) < 0.005, f"on_cpu_share {ev.get('on_cpu_share')}")
    return ev


def test_never_runs_starved():
    """SCHED_IDLE behind busy threads: runnable all along, a real problem."""
    tmtest.require_report()
    rec = Recording("starved", ["--how", "idle"])
    tmtest.check_process(rec)
    ev = check_never_runs(rec, ("high", "medium"))
    if ev:
        check((ev.get("runnable_share") or 0) > 0.8,
              f"runnable_share {ev.get('runnable_share')}, expected most of its life")
    # What it did while starving is shown too: its sched_yield calls, and its
    # policy and affinity changes (pinned to CPU 0 and SCHED_IDLE, then
    # released by main).
    victim = rec.thread(rec.truth["starved"]["tid"])
    if victim:
        check(victim["lwp"].get("yields") == rec.truth["starved"]["yields"],
              f"yields {victim['lwp'].get('yields')}, truth {rec.truth['starved']['yields']}")
        sched = victim.get("sched") or {}
        # Main puts it back to SCHED_OTHER on every CPU at the end, as far as
        # the kernel lets it (RLIMIT_NICE) and the thread has not ended yet:
        # the last set, seen in a later tick.
        pinned = sched.get("policy") == "SCHED_IDLE" and sched.get("affinity") == [0]
        check((pinned and (sched.get("changes") or 0) >= 1) or (sched.get("changes") or 0) >= 2,
              f"sched {sched}: expected SCHED_IDLE on CPU 0, or that and its release")


def test_no_never_runs_for_a_reader():
    """Blocked in read() on a pipe: waiting for input is idle, not a problem
    (a listener in accept, a worker reading its socket)."""
    tmtest.require_report()
    rec = Recording("starved", ["--how", "read"])
    tmtest.check_process(rec)
    victim = rec.truth["starved"]
    found = [f for f in tmtest.findings(rec, "never_runs")
             if f.get("evidence", {}).get("tid") == victim["tid"]]
    check(not found, f"never_runs for starved-0, a reader of a pipe: {tmtest.describe(found)}")
    thread = rec.thread(victim["tid"])
    check(thread is not None, f"starved-0 ({victim['tid']}) is in the report")


def test_no_never_runs_for_a_parent():
    """Waiting in waitpid() for a child process is what a parent of workers does."""
    tmtest.require_report()
    rec = Recording("starved", ["--how", "child"])
    tmtest.check_process(rec)
    victim = rec.truth["starved"]
    found = [f for f in tmtest.findings(rec, "never_runs")
             if f.get("evidence", {}).get("tid") == victim["tid"]]
    check(not found, f"never_runs for starved-0, a parent in waitpid(): {tmtest.describe(found)}")


tmtest.main(globals())
