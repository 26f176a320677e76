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


tmtest.main(globals())
