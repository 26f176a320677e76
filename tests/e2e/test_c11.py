"""c11_threads: a program written with C11's <threads.h>. glibc's thrd_*,
mtx_* and cnd_* call its pthread functions past the names the probe
interposes, so before the probe wrapped them too such a program's threads
had no start routine, its mutex and cond waits read as sleeping, and the
main thread's thrd_join as a lock hidden in a library ([HIGH]
internal_lock). Now they are what a pthread program's are."""
import tmtest
from tmtest import check, near, state

ARGS = ["--workers", "3", "--rounds", "100"]


def test_c11_threads():
    tmtest.require_report()
    rec = tmtest.recorded("c11_threads", ARGS)
    tmtest.check_process(rec)
    truth = rec.truth
    check(truth["results"] == [100, 101, 102], f"thrd_join gave {truth['results']}")
    lock = tmtest.object_by_symbol(rec, truth["lock_symbol"])
    if lock:
        check(tmtest.kind_of(lock) == "mutex", f"c11_lock is a {tmtest.kind_of(lock)}")
        check(lock.get("acquisitions") == truth["acquisitions"],
              f"acquisitions {lock.get('acquisitions')}, the program counted "
              f"{truth['acquisitions']} (every mtx_lock and cnd_wait's re-lock)")
        check((lock.get("contentions") or 0) > 0, "three workers at one lock never contended")
        # The first contention's innermost frame: the program's function that
        # called mtx_lock (a worker's, or the sleeper's if a worker held it
        # then), never the probe's wrapper or libc.
        check(str(lock.get("call_site", "")).startswith(("c11_threads!worker", "c11_threads!sleeper",
                                                          "c11_threads!main")),
              f"call site {lock.get('call_site')!r}: the program's mtx_lock caller")
    cond = tmtest.object_by_symbol(rec, truth["cond_symbol"])
    if cond:
        check(tmtest.kind_of(cond) == "cond", f"c11_ready is a {tmtest.kind_of(cond)}")
        near(cond.get("wait_s"), truth["sleeper_wait_s"], 0.05 * truth["sleeper_wait_s"] + 0.002,
             "c11_ready wait s")
    threads = rec.program_threads()
    workers = [t for t in threads if str(t.get("name", "")).startswith("worker-")]
    check(len(workers) == 3 and all(str(t.get("start_routine", "")).startswith(
        "c11_threads!worker") for t in workers),
          f"workers' start routines {[t.get('start_routine') for t in workers]}")
    sleeper = next((t for t in threads if t.get("name") == "sleeper-0"), None)
    if check(sleeper is not None, "no sleeper-0 thread"):
        near(state(sleeper, "blocked_cond"), truth["sleeper_cond_pct"], 3, "sleeper blocked_cond %")
    main = next((t for t in threads if t.get("main")), None)
    if check(main is not None, "no main thread"):
        near(state(main, "blocked_join"), truth["main_join_pct"], 3, "main blocked_join %")
    wrong = [f for f in rec.report.get("findings", []) if f.get("kind") == "internal_lock"]
    check(not wrong, f"a hidden lock in a C11 program's own calls: {tmtest.describe(wrong)}")


tmtest.main(globals())
