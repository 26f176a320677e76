"""spin_sleep: on-CPU and sleeping shares match what each thread measured."""
import tmtest
from tmtest import check, near, state

ARGS = ["--threads", "2", "--spin-ms", "30", "--sleep-ms", "50", "--repeats", "12"]


def test_spin_sleep_states():
    tmtest.require_report()
    rec = tmtest.recorded("spin_sleep", ARGS)
    tmtest.check_process(rec)
    truth = rec.truth["threads"]
    # main + the two spinners, plus the probe's own thread (checked above).
    check(len(rec.program_threads()) == 1 + len(truth),
          f"{len(rec.program_threads())} program threads, expected {1 + len(truth)}")
    for t in truth:
        got = rec.thread(t["tid"])
        if not got:
            continue
        check(got.get("name") == t["name"], f"thread {t['tid']} named {got.get('name')!r}")
        near(state(got, "on_cpu"), t["on_cpu_pct"], 5, f"{t['name']} on_cpu %")
        near(state(got, "sleeping"), t["sleeping_pct"], 5, f"{t['name']} sleeping %")
        near(got.get("lifetime_s"), t["lifetime_s"], 0.1 * t["lifetime_s"],
             f"{t['name']} lifetime s")
        check("spin_sleep" in str(got.get("start_routine", "")),
              f"{t['name']} start routine {got.get('start_routine')!r} is not in spin_sleep")


def test_no_findings():
    """A well-behaved program: nothing to report above low severity."""
    tmtest.require_report()
    tmtest.check_clean(tmtest.recorded("spin_sleep", ARGS))


tmtest.main(globals())
