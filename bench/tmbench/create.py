"""Thread creation: a create+join's cost under the probe, in CPU time of the
program's own threads (bench/create_cost.c)."""
import os

from . import interleave, procrun, report, tools as tl

GOAL_US = 3.0
WARMUP_MS = 1500  # the probe judges the creation rate over its first second


class EventsOnly(tl.NoTool):
    """No probe, but the probe's inherited per-CPU switch events opened by the
    benchmark itself: the kernel's share of a create+join under the probe."""
    key = "inherit-events"
    label = "no tool, the probe's switch events open (--inherit-events)"


def create_join(build_dir, bare, probe, quick, log):
    rounds, ops = (3, 5_000) if quick else (7, 20_000)
    exe = os.path.join(build_dir, "bench", "tm-bench-create")
    tools = [bare, EventsOnly()] + ([probe, probe.without_perf()]
                                    if not probe.unavailable_reason() else [])
    sec = report.Section(
        "Thread creation: create+join",
        ["configuration", "program CPU µs per create+join (median)", "min", "probe thread µs "
         "per thread", "wall µs", "runs"],
        f"`tm-bench-create {ops} {WARMUP_MS}`: {ops:,} create+joins of a thread that does "
        f"nothing, after {WARMUP_MS / 1000:g} s of the same untimed (the probe closes its switch "
        "events once a program has created threads faster than THREADMON_MAX_CREATE_RATE for a "
        "second: the steady state comes after); CPU time of the process less the probe's "
        f"threads', per create+join; {rounds} interleaved rounds.")
    res = {}

    def one(tool):
        flag = ["--inherit-events"] if isinstance(tool, EventsOnly) else []
        out = tl.run_under(tool, [exe] + flag + [str(ops), str(WARMUP_MS)], timeout=300)
        res.setdefault(tool.key, []).append(procrun.last_json(out.stdout))
        return res[tool.key][-1]["cpu_ns_per_op"] / 1000

    got = interleave.measure(tools, rounds, one, log=log)
    for t in tools:
        med, vals, err = got[t.key]
        if err:
            sec.notes.append(f"{t.label} failed: {err}")
        runs = res.get(t.key, [])
        probe_us = sorted(r["probe_cpu_ns_per_op"] / 1000 for r in runs)
        wall = sorted(r["wall_ns_per_op"] / 1000 for r in runs)
        sec.rows.append([t.label, report.fmt(med, 2), report.fmt(min(vals) if vals else None, 2),
                         report.fmt(probe_us[len(probe_us) // 2]
                                    if isinstance(t, tl.Threadmon) and runs else None, 2),
                         report.fmt(wall[len(wall) // 2] if wall else None), len(vals)])
    base, mine = got[bare.key][0], got.get(probe.key, (None,))[0]
    if base is not None and mine is not None:
        noperf = got[probe.without_perf().key][0]
        delta = mine - base
        sec.add_goal(f"create+join: at most +{GOAL_US:g} µs", f"{delta:+.2f} µs ({base:.2f} → "
                     f"{mine:.2f})", delta <= GOAL_US, f"{delta - GOAL_US:.2f} µs",
                     "with its switch events closed the probe still claims a registry slot, "
                     "stamps the thread's start and end (its CPU clock at the end is a system "
                     "call), writes two state events and times the join as a wait: "
                     f"THREADMON_PERF=0 costs {noperf - base:+.2f} µs"
                     if noperf is not None else "")
    else:
        sec.add_goal(f"create+join: at most +{GOAL_US:g} µs", "probe not run", None)
    return sec
