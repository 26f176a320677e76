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



def test_report_says_which_threads_lost_detail():
    """Switch records paused (THREADMON_MAX_SWITCH_RATE far under what two
    spinners that sleep 1 ms a round switch): the report's JSON lists each
    pause as a span of lost detail, each pause about as long as the probe's
    notice said (1 s, then 2 s, ...: a pause still going at the end ends
    with the run), and names every spinner with the part of its life that
    fell in them; the text says so in one line."""
    tmtest.require_report()
    args = ["--threads", "2", "--spin-ms", "1", "--sleep-ms", "1", "--repeats", "600"]
    rec = tmtest.Recording("spin_sleep", args, timeout=120,
                           env=dict(os.environ, THREADMON_MAX_SWITCH_RATE="100"))
    proc = rec.report["process"]
    spans = proc.get("detail_lost", [])
    paused = [d for d in spans if d.get("what") == "switch_records_paused"]
    print(f"  spans {spans}")
    if not check(paused, f"no span of paused records, notices {proc.get('notices')}"):
        return
    said = sorted(float(n.split("paused for ")[1].split(" s")[0])
                  for n in proc.get("notices", []) if "switch records paused for" in n)
    end = proc.get("duration_s", 0)
    for d in paused:
        length = d["to_s"] - d["from_s"]
        ends_run = abs(d["to_s"] - end) < 0.05
        check(ends_run or any(0.9 * p <= length <= p + 0.3 for p in said) or not said,
              f"a pause of {length:.3f} s ({d}); the probe announced {said}")
    lost_by = {t["tid"]: t["lost_s"] for t in proc.get("detail_lost_threads", [])}
    paused_s = sum(d["to_s"] - d["from_s"] for d in paused)
    for t in rec.truth["threads"]:
        got = lost_by.get(t["tid"])
        row = rec.thread(t["tid"]) or {}
        # It misses of the pauses at most the part of the run it did not live.
        check(got is not None and 0.1 <= got <= t["lifetime_s"] + 0.01 and
              got >= paused_s - (end - t["lifetime_s"]) - 0.05 and
              abs((row.get("detail_lost_s") or 0) - got) < 1e-6,
              f"{t['name']}: lost {got} s of detail (thread row {row.get('detail_lost_s')}), the "
              f"records were paused {paused_s:.3f} s of the run's {end:.3f} s; it lived "
              f"{t['lifetime_s']:.3f} s")
    text = tmtest.launcher("report", rec.capture)
    by = [line for line in text.stdout.splitlines() if line.startswith("  detail lost by ")]
    check("  detail lost: switch records paused" in text.stdout and len(by) == 1 and
          all(t["name"] in by[0] for t in rec.truth["threads"]),
          f"the text report does not name the threads that lost detail:\n{text.stdout[:1500]}")


tmtest.main(globals())
