"""THREADMON_BUDGET: above its share of a core the probe's thread ticks less
often and says so; a generous budget changes nothing. 2,000 threads that
wake every 100 ms (tm-bench-swarm light) cost the probe more than 1% of a
core on this hardware, and far less than 100%."""
import os

import tmtest
from tmtest import check

SWARM = os.path.join(tmtest.BUILD, "bench", "tm-bench-swarm")


def record(budget):
    capture = os.path.join(tmtest.Temp.dir(), f"swarm-budget-{budget}.tmcap")
    run = tmtest.launcher("record", "-o", capture, "--", SWARM, "light", "2000", "3",
                          env=dict(os.environ, THREADMON_BUDGET=str(budget)), timeout=120)
    check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr.strip()}")
    return tmtest.report_json(capture)["process"].get("notices", [])


def test_over_budget_lowers_detail():
    tmtest.require_report()
    if not os.path.exists(SWARM):
        raise tmtest.Skip(f"{SWARM} is not built")
    notes = [n for n in record(1) if "THREADMON_BUDGET" in n]
    print("  " + "\n  ".join(notes))
    check(notes and "less detail" in notes[0],
          f"no Notice that the probe lowered its detail over a 1% budget: {notes}")


def test_generous_budget_keeps_detail():
    tmtest.require_report()
    if not os.path.exists(SWARM):
        raise tmtest.Skip(f"{SWARM} is not built")
    notes = [n for n in record(100) if "THREADMON_BUDGET" in n]
    check(not notes, f"the probe changed its detail under a 100% budget: {notes}")


tmtest.main(globals())
