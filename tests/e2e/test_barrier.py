"""barrier_fine / barrier_coarse: barrier objects and the workers' waits;
a balanced barrier with one thread per CPU raises no finding."""
import os

import tmtest
from tmtest import Recording, check, near, state


def check_workers(rec, blocked_state, truth_key):
    """truth_key: the workload's own timing of the blocking call."""
    workers = rec.truth["workers"]
    check(len(rec.program_threads()) == 1 + len(workers),
          f"{len(rec.program_threads())} program threads, expected {1 + len(workers)}")
    for w in workers:
        got = rec.thread(w["tid"])
        if got:
            # Which on-CPU stretches the hypervisor stole from is estimated
            # (program code first, see ThreadTimeline::clockShare); under
            # heavy steal (20% per CPU seen on a CI host) the estimate can be
            # off by part of the stolen share. Quiet hosts: +-5.
            slack = 5 + (state(got, "stolen") or 0)
            near(state(got, "on_cpu"), w["on_cpu_pct"], slack, f"worker {w['tid']} on_cpu %")
            near(state(got, blocked_state), w[truth_key], 5,
                 f"worker {w['tid']} {blocked_state} %")


def test_coarse_pthread_barrier():
    tmtest.require_report()
    # One thread per CPU; matrix_mult covers more threads than CPUs.
    rec = Recording("barrier_coarse", ["--threads", str(os.cpu_count()), "--pthread-barrier",
                                       "--iterations", "300"])
    tmtest.check_process(rec)
    kinds = [tmtest.kind_of(o) for o in rec.objects()]
    check(kinds == ["barrier"], f"sync objects {kinds}, expected one barrier")
    check_workers(rec, "blocked_barrier", "barrier_pct")


def test_coarse_mutex_cond():
    tmtest.require_report()
    rec = Recording("barrier_coarse", ["--threads", "3", "--iterations", "300"])
    tmtest.check_process(rec)
    kinds = sorted(tmtest.kind_of(o) for o in rec.objects())
    check(kinds == ["cond", "mutex"], f"sync objects {kinds}, expected barrier_cond, barrier_mtx")
    mtx = rec.objects("mutex")
    check(mtx and mtx[0].get("acquisitions") == rec.truth["mutex_acquisitions"],
          f"barrier_mtx acquisitions {mtx and mtx[0].get('acquisitions')}, truth "
          f"{rec.truth['mutex_acquisitions']}")
    check_workers(rec, "blocked_cond", "cond_wait_pct")


def test_fine_mutex_cond():
    """Fine grain: thousands of barrier rounds; counts must stay exact."""
    tmtest.require_report()
    rec = Recording("barrier_fine", ["--threads", "3", "--iterations", "5000"])
    tmtest.check_process(rec)
    mtx = [o for o in rec.objects("mutex") if str(o.get("symbol", "")).startswith("barrier_mtx")]
    if check(len(mtx) == 1, f"barrier_mtx not named: {[o.get('symbol') for o in rec.objects()]}"):
        # each lock call, plus the re-lock at the end of every pthread_cond_wait
        expected = rec.truth["mutex_acquisitions"]
        check(mtx[0].get("acquisitions") == expected,
              f"barrier_mtx acquisitions {mtx[0].get('acquisitions')}, expected {expected}")


def test_holds_after_cond_waits():
    """barrier_mtx's holds, half of them begun by pthread_cond_wait's re-lock,
    are timed as a lock's (untimed, the next lock's hold stood for them and
    the estimate read 1.5-2.8x the truth). Under 256 acquisitions: every hold
    timed, so the figure is exact, not a sample's (preempted holds sampled
    at random made a sampled check fail under load)."""
    tmtest.require_report()
    rec = Recording("barrier_fine", ["--threads", "3", "--iterations", "40"])
    mtx = [o for o in rec.objects("mutex") if str(o.get("symbol", "")).startswith("barrier_mtx")]
    if not check(len(mtx) == 1, f"barrier_mtx not named: {[o.get('symbol') for o in rec.objects()]}"):
        return
    check(mtx[0].get("acquisitions") == rec.truth["mutex_acquisitions"] and
          mtx[0].get("hold_exact") is True,
          f"acquisitions {mtx[0].get('acquisitions')} (truth {rec.truth['mutex_acquisitions']}), "
          f"hold_exact {mtx[0].get('hold_exact')}: expected every hold timed")
    truth_ms, got_ms = rec.truth["mutex_hold_s"] * 1e3, (mtx[0].get("hold_s") or 0) * 1e3
    near(got_ms, truth_ms, 0.15 * truth_ms + 0.02, "barrier_mtx hold ms (every hold)")


def test_balanced_no_findings():
    """Equal work, one thread per CPU: no imbalance, no idle phases. Rounds of
    a few ms: with sub-ms rounds this VM's ~0.35 ms cross-CPU wake-up leaves
    the CPUs idle half the time, which the undersubscribed finding rightly
    reports (the M-to-N study's fine-grain effect)."""
    tmtest.require_report()
    for barrier in (["--pthread-barrier"], []):
        rec = tmtest.recorded("barrier_coarse", ["--threads", str(os.cpu_count()), "--rows", "1500",
                                                 "--iterations", "150", *barrier])
        # On a 2-vCPU VM each round still idles a CPU for the cross-CPU wake-up
        # (the workers measure 5-15% of their time in the barrier themselves),
        # so undersubscribed is accepted when the workload's own truth shows
        # those waits; every other serious finding fails the test.
        workers = rec.truth["workers"]
        waited = [w["barrier_pct"] for w in workers]
        # Equal work can still take one worker more CPU time when the machine
        # is shared (seen: 1.45x, beside other tests on this VM). Then
        # barrier_imbalance is right, and must name that worker and its ratio.
        cpu = {w["tid"]: w["cpu_s"] for w in workers}
        slowest = max(cpu, key=cpu.get)
        others = [v for t, v in cpu.items() if t != slowest]
        uneven = cpu[slowest] / (sum(others) / len(others))

        def explained(f):
            if f.get("kind") == "undersubscribed":
                return min(waited) >= 5.0
            if f.get("kind") == "barrier_imbalance":
                ev = f.get("evidence", {})
                print(f"  machine-made imbalance: truth {uneven:.2f}x, "
                      f"finding {ev.get('cpu_ratio')} for {ev.get('usual_last')}")
                ratio_right = abs((ev.get("cpu_ratio") or 0) - uneven) <= 0.15 * uneven
                if uneven >= 1.2:
                    return ev.get("usual_last") == slowest and ratio_right
                # Equal CPU time and still last: the finding must say it waited
                # for a CPU (other processes share it), not that it had more work.
                return ratio_right and "waiting for a CPU" in (f.get("message") or "")
            return False

        bad = [f for f in tmtest.serious(tmtest.findings(rec)) if not explained(f)]
        check(not bad, f"{rec.name} {' '.join(rec.args)}: unexpected findings: "
              f"{tmtest.describe(bad)} (workers' CPU time {uneven:.2f}x)")


tmtest.main(globals())
