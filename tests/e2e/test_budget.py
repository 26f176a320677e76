"""THREADMON_BUDGET: above its share of a core the probe's thread ticks less
often and says so; a generous budget changes nothing. 2,000 threads that
wake every 100 ms (tm-bench-swarm light) cost the probe more than 1% of a
core on this hardware, and far less than 100%."""
import os

import tmtest
from tmtest import check, near, state

SWARM = os.path.join(tmtest.BUILD, "bench", "tm-bench-swarm")


def record(budget):
    """(the budget's notices kept by the report: its latest step, the number of steps)."""
    capture = os.path.join(tmtest.Temp.dir(), f"swarm-budget-{budget}.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", SWARM, "light", "2000", "3",
                          env=dict(os.environ, THREADMON_BUDGET=str(budget)), timeout=120)
    check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr.strip()}")
    proc = tmtest.report_json(capture)["process"]
    return ([n for n in proc.get("notices", []) if "THREADMON_BUDGET" in n],
            proc.get("detail_steps"))


def test_over_budget_lowers_detail():
    tmtest.require_report()
    if not os.path.exists(SWARM):
        raise tmtest.Skip(f"{SWARM} is not built")
    notes, steps = record(1)
    print(f"  {steps} steps; latest: {notes}")
    check(steps and steps >= 1 and len(notes) == 1 and "step" in notes[0],
          f"no Notice that the probe changed its detail over a 1% budget ({steps} steps): {notes}")


def test_generous_budget_keeps_detail():
    tmtest.require_report()
    if not os.path.exists(SWARM):
        raise tmtest.Skip(f"{SWARM} is not built")
    notes, steps = record(100)
    check(not notes and steps == 0,
          f"the probe changed its detail under a 100% budget ({steps} steps): {notes}")


def test_tiny_budget_keeps_totals():
    """A budget no probe can keep (0.01% of a core): the probe goes down its
    ladder a step a second, ticks less often, then pauses its switch records,
    and says so; each thread's states still add up to what it measured."""
    tmtest.require_report()
    args = ["--threads", "2", "--spin-ms", "30", "--sleep-ms", "50", "--repeats", "70"]
    rec = tmtest.Recording("spin_sleep", args, timeout=120,
                           env=dict(os.environ, THREADMON_BUDGET="0.01%"))
    proc = rec.report["process"]
    notes = [n for n in proc.get("notices", []) if "THREADMON_BUDGET" in n]
    print(f"  {proc.get('detail_steps')} steps; latest: {notes}")
    # A step a second, down only: the latest is the step numbered as many.
    check(proc.get("detail_steps", 0) >= 4 and len(notes) == 1 and "less detail" in notes[0]
          and f"step {proc['detail_steps']} of" in notes[0],
          f"expected the probe to lower its detail once a second over 0.01%: "
          f"{proc.get('detail_steps')} steps, {notes}")
    check("switch records paused" in notes[0], f"no step that pauses the switch records: {notes}")
    for t in rec.truth["threads"]:
        got = rec.thread(t["tid"])
        if not got:
            continue
        near(state(got, "on_cpu"), t["on_cpu_pct"], 5, f"{t['name']} on_cpu %")
        near(state(got, "sleeping"), t["sleeping_pct"], 5, f"{t['name']} sleeping %")
        near(got.get("lifetime_s"), t["lifetime_s"], 0.1 * t["lifetime_s"],
             f"{t['name']} lifetime s")


tmtest.main(globals())
