"""deadlock: both threads are seen blocked on a mutex while deadlocked."""
import tmtest
from tmtest import Recording, check, near, state


def test_deadlock_recovers():
    tmtest.require_report()
    rec = Recording("deadlock", ["--deadlock-ms", "400"])
    tmtest.check_process(rec)
    t = rec.truth
    check(t["second"]["timed_out"] and not t["first"]["timed_out"],
          f"workload did not deadlock as designed: {t}")
    names = {o.get("symbol", "").split("+")[0] for o in rec.objects("mutex")}
    check({"lock_a", "lock_b"} <= names, f"mutex symbols {names}, expected lock_a and lock_b")
    for side in ("first", "second"):
        got = rec.thread(t[side]["tid"])
        if got:
            blocked_s = (state(got, "blocked_mutex") or 0) / 100 * (got.get("lifetime_s") or 0)
            near(blocked_s, t[side]["wait_s"], 0.1 * t[side]["wait_s"], f"{side} blocked s")


tmtest.main(globals())
