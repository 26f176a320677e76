"""C++20 synchronisation (counting_semaphore, barrier, latch, atomic::wait:
futexes inside libstdc++, no pthread objects): runs under the probe, and no
false alarm (a barrier or semaphore wait is not a hidden lock)."""
import corpus
import tmtest
from corpus import check

WORKERS, ROUNDS, WORK = 3, 40, 1000000


def test_cpp20_sync():
    exe = corpus.built("cpp20_sync")
    run = corpus.Run("cpp20", [exe, str(WORKERS), str(ROUNDS), str(WORK)])
    check(run.run.returncode == 0 and run.truth.get("rounds") == ROUNDS,
          f"exit {run.run.returncode}, truth {run.truth}")
    check(len(run.threads()) == 1 + WORKERS, f"{len(run.threads())} program threads, "
          f"expected {1 + WORKERS}")
    check(not run.findings("internal_lock"),
          f"an atomic wait taken for a lock: {tmtest.describe(run.findings('internal_lock'))}")
    corpus.no_false_alarm(run)



def test_cpp20_barrier_loop():
    """A std::barrier loop whose waiters measure 75%+ of their life at the
    barrier: libstdc++ yields before its futex wait, and that spin read as
    runnable (0-2% barrier) and made a HIGH oversubscribed. Each such waiter
    reads mostly barrier now, and nothing says oversubscribed."""
    exe = corpus.built("cpp20_barrier")
    run = corpus.Run("cpp20_barrier", [exe, "60", "1000000"])
    check(run.run.returncode == 0 and run.truth.get("rounds") == 60,
          f"exit {run.run.returncode}, truth {run.truth}")
    by_tid = {t["tid"]: t for t in run.report["threads"]}
    waiters = [t for t in run.truth.get("threads", []) if t["barrier_s"] >= 0.75 * t["life_s"]]
    if not waiters:
        raise tmtest.Skip(f"no thread spent 75% at the barrier by its own clock: {run.truth}")
    for t in waiters:
        got = by_tid.get(t["tid"])
        if not check(got is not None, f"thread {t['tid']} missing"):
            continue
        share = tmtest.state(got, "blocked_barrier")
        check(share >= 50, f"thread {t['tid']}: {share:.1f}% at the barrier, its own clock "
              f"{100 * t['barrier_s'] / t['life_s']:.0f}%: {got.get('states')}")
    check(not run.findings("oversubscribed"),
          f"oversubscribed: {tmtest.describe(run.findings('oversubscribed'))}")

tmtest.main(globals())
