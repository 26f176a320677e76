"""woken_wait: a thread asleep in a system call no wrapper sees, woken and
then kept off its CPU by a hog: the wait after the wake-up is runnable, not
sleep (from the kernel's run-queue counter), as the thread measured."""
import tmtest
from tmtest import check, near, state


def test_woken_wait_states():
    tmtest.require_report()
    rec = tmtest.recorded("woken_wait", [])
    tmtest.check_process(rec)
    t = rec.truth["threads"][0]
    got = rec.thread(t["tid"])
    if not check(got is not None, f"sleeper {t['tid']} not in the report"):
        return
    # Here the woken waits are about a fifth of its life, and reading them as
    # sleep (as before the run-queue counter was used) is off by that much.
    # A scheduler that lets the woken sleeper preempt the hog at once leaves
    # nothing to tell apart at +-4 points.
    if t["woken_s"] < 0.06 * t["lifetime_s"]:
        raise tmtest.Skip(f"the scheduler left the sleeper only {t['woken_s']:.3f} s of woken "
                          f"waits in {t['lifetime_s']:.3f} s: nothing to test")
    for st, key in (("on_cpu", "on_cpu_pct"), ("runnable", "runnable_pct"),
                    ("sleeping", "sleeping_pct")):
        near(state(got, st), t[key], 4, f"sleeper {st} %")


tmtest.main(globals())
