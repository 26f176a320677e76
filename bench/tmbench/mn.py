"""M:N: the ThreadMon paper's matrix multiply on user threads (section 5.3),
scaled to this machine: 6 user threads, each running to completion once on
an LWP (no time-slicing, as Solaris's user-level scheduler), on N = 1..6
LWPs (tests/workloads/mn_matrix --yield-rows 0)."""
import os

from . import interleave, procrun, report, tools as tl

UTHREADS = 6


def expected_t(lwps, cpus):
    """Run time in T (one user thread's work alone on a CPU): waves of N user
    threads, each wave of k taking max(k / cpus, 1) T (the kernel time-slices
    the LWPs over the CPUs)."""
    full, rest = divmod(UTHREADS, lwps)
    t = full * max(lwps / cpus, 1.0)
    if rest:
        t += max(rest / cpus, 1.0)
    return t


def matrix_table(build_dir, bare, probe, quick, log):
    cpus = os.cpu_count() or 1
    rounds = 3 if quick else 5
    size, mult_rounds = (360, 6) if quick else (420, 10)
    binary = os.path.join(build_dir, "tests", "workloads", "mn_matrix")
    sec = report.Section(
        "M:N matrix multiply: the paper's table on this machine",
        ["LWPs", "no tool, s (median)", "in T", "expected, T", "threadmon, s (median)", "ratio"],
        f"`mn_matrix --uthreads {UTHREADS} --lwps N --yield-rows 0 --size {size} --rounds "
        f"{mult_rounds}`: {UTHREADS} ucontext user threads, each multiplying its sixth of the "
        "rows once, start to end on one LWP (no time-slicing between user threads, as in the "
        "paper), N LWPs (pthreads) sharing one run queue; wall time, median of "
        f"{rounds} interleaved runs. T = the 1-LWP time / {UTHREADS}. Expected: waves of N user "
        f"threads, a wave of k taking max(k / {cpus} CPUs, 1) T. The paper (4 CPUs): 6T, 3T, 2T, "
        "2T, 2.25T, 1.5T.")
    tools = [bare] + ([probe] if probe.unavailable_reason() is None else [])
    base_1 = None
    for lwps in range(1, UTHREADS + 1):
        args = ["--uthreads", str(UTHREADS), "--lwps", str(lwps), "--yield-rows", "0",
                "--size", str(size), "--rounds", str(mult_rounds)]
        log(f"  {lwps} LWPs")

        def one(t):
            res = tl.run_under(t, [binary] + args, timeout=300)
            return procrun.last_json(res.stdout)["wall_s"]

        res = interleave.measure(tools, rounds, one, log=log)
        got, got_p = res[bare.key][0], res.get(probe.key, (None,))[0]
        if lwps == 1:
            base_1 = got
        t_unit = base_1 / UTHREADS if base_1 else None
        sec.rows.append([lwps, report.fmt(got, 3), report.fmt(got / t_unit, 2) if t_unit else "n/a",
                         f"{expected_t(lwps, cpus):.2f}", report.fmt(got_p, 3),
                         report.ratio(got_p, got)])
        for t in tools:
            if res[t.key][2]:
                sec.notes.append(f"{lwps} LWPs under {t.label}: {res[t.key][2]}")
    sec.notes.append(
        f"With {cpus} CPUs: from {cpus} LWPs on, no more than {cpus} user threads run at once; "
        "more LWPs only time-slice them, and a last short wave (5 LWPs: 5 user threads, then 1 "
        "alone on one CPU) costs more than fewer LWPs, as the paper's 5 LWPs on 4 CPUs did.")
    return sec
