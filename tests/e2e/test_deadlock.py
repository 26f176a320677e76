"""deadlock: both threads are seen blocked on a mutex while deadlocked, and
the report names the cycle -- both threads, both mutexes -- formed when the
workload says it formed, though a timed lock later broke it."""
import tmtest
from tmtest import check, near, state

ARGS = ["--deadlock-ms", "400"]
# The model re-checks the wait-for graph on every tick: it must see the
# cycle within this long of its forming.
DETECT_WITHIN_S = 1.0


def run():
    return tmtest.recorded("deadlock", ARGS)


def test_deadlock_recovers():
    tmtest.require_report()
    rec = run()
    tmtest.check_process(rec)
    t = rec.truth
    check(t["second"]["timed_out"] and not t["first"]["timed_out"],
          f"workload did not deadlock as designed: {t}")
    names = {o.get("symbol") for o in rec.objects("mutex")}
    check({"lock_a", "lock_b"} <= names, f"mutex symbols {names}, expected lock_a and lock_b")
    for side in ("first", "second"):
        got = rec.thread(t[side]["tid"])
        if got:
            blocked_s = (state(got, "blocked_mutex") or 0) / 100 * (got.get("lifetime_s") or 0)
            near(blocked_s, t[side]["wait_s"], 0.1 * t[side]["wait_s"], f"{side} blocked s")


def test_deadlock_finding():
    tmtest.require_report()
    rec = run()
    t = rec.truth
    found = tmtest.findings(rec, "deadlock")
    if not check(len(found) == 1, f"{len(found)} deadlock findings, expected 1: "
                 f"{tmtest.describe(tmtest.findings(rec))}"):
        return
    f = found[0]
    check(f.get("severity") == "high", f"severity {f.get('severity')}, expected high")
    tmtest.mentions(f.get("message"), f"first ({t['first']['tid']})",
                    f"second ({t['second']['tid']})", "deadlock!lock_a", "deadlock!lock_b")
    ev = f.get("evidence", {})
    check(sorted(ev.get("threads", [])) == sorted([t["first"]["tid"], t["second"]["tid"]]),
          f"evidence.threads {ev.get('threads')}, expected first and second")
    ids = {tmtest.object_by_symbol(rec, s)["id"] for s in t["locks"]
           if tmtest.object_by_symbol(rec, s)}
    check(set(ev.get("objects", [])) == ids, f"evidence.objects {ev.get('objects')}, "
          f"lock_a and lock_b are {sorted(ids)}")
    # The workload's clock starts in main, a few ms after the session.
    near(ev.get("formed_s"), t["formed_s"], 0.1, "formed at s")
    detected = ev.get("detected_s")
    check(detected is not None and 0 <= detected - t["formed_s"] <= DETECT_WITHIN_S,
          f"detected at {detected} s, formed at {t['formed_s']:.3f} s: not within "
          f"{DETECT_WITHIN_S} s")
    check(ev.get("resolved") is True, f"evidence.resolved {ev.get('resolved')}: the timed "
          "lock broke the cycle")
    near(ev.get("duration_s"), t["broken_s"] - t["formed_s"], 0.1, "cycle lasted s")


tmtest.main(globals())
