"""OpenMP (GCC's libgomp, stripped in Debian): a parallel loop whose first
quarter of iterations costs ten times the rest. libgomp makes its barriers
with the futex system call itself, so the probe finds them only by
sampling; before, a schedule(static) loop's waiting thread read as losing
59% of its time to "a lock in [heap] memory ... the library takes it for
shared state" ([HIGH] internal_lock). Now its wait is at an OpenMP barrier,
as long as the thread clocked it; with schedule(dynamic) there is next to
no wait and nothing to report."""
import os

import corpus
import tmtest
from corpus import check
from tmtest import near

ROUNDS = "10"


def record(schedule):
    omp = corpus.built("omp_loop")
    env = dict(os.environ, OMP_NUM_THREADS="2")
    run = corpus.Run("openmp", [omp, ROUNDS, schedule], env=env)
    check(run.run.returncode == 0 and run.truth.get("schedule") == schedule,
          f"omp_loop exited {run.run.returncode}: {run.run.stderr[-400:]}")
    hidden = [f for f in run.findings("internal_lock")]
    check(not hidden, f"OpenMP's barrier read as a hidden lock: {tmtest.describe(hidden)}")
    return run


def barrier_seconds(run, tid):
    t = next((x for x in run.report["threads"] if x["tid"] == tid), None)
    if not check(t is not None, f"thread {tid} not in the report"):
        return 0
    return (t["states"].get("blocked_barrier") or 0) * t["lifetime_s"] / 100


def test_static_split_waits_at_the_barrier():
    run = record("static")
    truth = run.truth["threads"]
    check(len(truth) == 2, f"{len(truth)} OpenMP threads, OMP_NUM_THREADS=2")
    # The second thread's share is all light iterations: it waits for the
    # first at each loop's end (about 0.12 s a round here).
    waiter = truth[1]
    near(barrier_seconds(run, waiter["tid"]), waiter["barrier_s"], 0.25 * waiter["barrier_s"] + 0.02,
         "the waiting thread's barrier s (sampled)")
    objects = [o for o in run.report["sync_objects"] if o.get("runtime") == "OpenMP barrier"]
    check(len(objects) >= 1 and all(o.get("acts_as") == "barrier" for o in objects),
          f"objects {[(o.get('kind'), o.get('runtime'), o.get('acts_as')) for o in run.report['sync_objects']]}")
    corpus.no_false_alarm(run, lambda f: f.get("kind") in ("undersubscribed", "barrier_imbalance"))


def test_dynamic_split_barely_waits():
    run = record("dynamic")
    for t in run.truth["threads"]:
        near(barrier_seconds(run, t["tid"]), t["barrier_s"], 0.05, f"thread {t['index']} barrier s")
    corpus.no_false_alarm(run)


tmtest.main(globals())
