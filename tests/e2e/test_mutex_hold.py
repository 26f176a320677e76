"""mutex_hold: waiters' blocked share, the lock's wait and its symbol."""
import tmtest
from tmtest import Recording, check, near, state


def test_mutex_hold():
    tmtest.require_report()
    rec = Recording("mutex_hold", ["--waiters", "2", "--rounds", "40"])
    tmtest.check_process(rec)
    truth = rec.truth
    check(len(rec.program_threads()) == 2 + len(truth["waiters"]),
          f"{len(rec.program_threads())} program threads, expected {2 + len(truth['waiters'])}")
    for w in truth["waiters"]:
        got = rec.thread(w["tid"])
        if got:
            near(state(got, "blocked_mutex"), w["blocked_mutex_pct"], 5, f"{w['name']} blocked_mutex %")
    mutexes = rec.objects("mutex")
    check(len(rec.objects()) == 1, f"{len(rec.objects())} sync objects, expected 1 (big_lock): "
          f"{[o.get('symbol') for o in rec.objects()]}")
    if not check(len(mutexes) == 1, f"{len(mutexes)} mutexes reported, expected 1"):
        return
    lock = mutexes[0]
    check(str(lock.get("symbol", "")).split("+")[0] == truth["lock_symbol"],
          f"mutex symbol {lock.get('symbol')!r}, expected {truth['lock_symbol']!r}")
    check(str(lock.get("module", "")).endswith("mutex_hold"),
          f"mutex module {lock.get('module')!r}, expected .../mutex_hold")
    check(lock.get("acquisitions") == truth["acquisitions"],
          f"acquisitions {lock.get('acquisitions')}, truth {truth['acquisitions']}")
    near(lock.get("wait_s"), truth["wait_s"], 0.1 * truth["wait_s"], "big_lock wait s")
    near(lock.get("max_wait_s"), truth["max_wait_s"], 0.1 * truth["max_wait_s"] + 0.002,
         "big_lock max wait s")
    check((lock.get("contentions") or 0) >= len(truth["waiters"]),
          f"contentions {lock.get('contentions')}")


tmtest.main(globals())
