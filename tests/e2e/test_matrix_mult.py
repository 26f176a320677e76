"""matrix_mult: six threads on fewer CPUs are visibly runnable."""
import os

import tmtest
from tmtest import Recording, check, near, state


def test_matrix_mult():
    tmtest.require_report()
    rec = Recording("matrix_mult", ["--threads", "6"])
    tmtest.check_process(rec)
    workers = rec.truth["workers"]
    check(len(rec.program_threads()) == 1 + len(workers),
          f"{len(rec.program_threads())} program threads, expected {1 + len(workers)}")
    check(len(rec.objects("barrier")) == 1, f"{len(rec.objects('barrier'))} barriers, expected 1")
    # Who blocked whom: the last arrival at each round released it, itself
    # included; nobody is listed as blocked by itself, and every round's
    # waits are blamed on a worker (a wait whose releaser the probe could
    # not tell is unknown, rare).
    tids = {w["tid"] for w in workers}
    pairs = rec.objects("barrier")[0].get("blocked_by", []) if rec.objects("barrier") else []
    selfs = [p for p in pairs if p.get("waiter") == p.get("holder")]
    check(not selfs, f"waits blocked by their own thread: {selfs}")
    blamed = sum(p.get("count", 0) for p in pairs if p.get("holder") in tids)
    unknown = sum(p.get("count", 0) for p in pairs if not p.get("holder"))
    check(blamed >= 4 * unknown, f"{blamed} waits blamed on a worker, {unknown} on nobody")
    more_threads_than_cpus = len(workers) > (os.cpu_count() or 1)
    for w in workers:
        got = rec.thread(w["tid"])
        if not got:
            continue
        near(state(got, "on_cpu"), w["on_cpu_pct"], 5, f"{w['name']} on_cpu %")
        near(state(got, "blocked_barrier"), w["barrier_pct"], 5, f"{w['name']} blocked_barrier %")
        near(state(got, "runnable"), w["runnable_pct"], 5, f"{w['name']} runnable %")
        if more_threads_than_cpus:
            check((state(got, "runnable") or 0) >= 10,
                  f"{w['name']} runnable {state(got, 'runnable')}%: should be visibly runnable")
        cpus = got.get("cpus") or []
        check(len(cpus) >= 1, f"{w['name']} ran on no CPU: {cpus!r}")


tmtest.main(globals())
