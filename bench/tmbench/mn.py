"""M:N: the ThreadMon paper's matrix multiply on user threads (section 5.3),
scaled to this machine: 6 user threads, each running to completion once on
an LWP (no time-slicing, as Solaris's user-level scheduler), on N = 1..6
LWPs (tests/workloads/mn_matrix --yield-rows 0); and the M-to-N study's
fine-grained barrier with bound and unbound user threads
(tests/workloads/mn_barrier)."""
import os
import resource
import statistics

from . import procrun, report, tools as tl

UTHREADS = 6


def expected_t(lwps, cpus):
    """Run time in T (one user thread's work alone on a CPU): waves of N user
    threads, each wave of k taking k / min(k, cpus) T (the kernel time-slices
    the LWPs over the CPUs; cpus may be a fraction: what other processes
    left)."""
    full, rest = divmod(UTHREADS, lwps)
    t = full * lwps / min(lwps, cpus)
    if rest:
        t += rest / min(rest, cpus)
    return t


def _busy_cpu_s():
    """Seconds all CPUs spent busy since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle, iowait
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measured_run(tool, argv):
    """Runs argv under tool: (its truth line, its CPU seconds, the CPUs other
    processes used meanwhile, on average)."""
    busy0, cpu0 = _busy_cpu_s(), _children_cpu_s()
    res = tl.run_under(tool, argv, timeout=300)
    cpu = _children_cpu_s() - cpu0
    other = max(0.0, (_busy_cpu_s() - busy0 - cpu) / res.wall)
    return procrun.last_json(res.stdout), cpu, other


def matrix_table(build_dir, bare, probe, quick, log):
    cpus = os.cpu_count() or 1
    rounds = 3 if quick else 5
    size, mult_rounds = (360, 6) if quick else (420, 10)
    binary = os.path.join(build_dir, "tests", "workloads", "mn_matrix")
    sec = report.Section(
        "M:N matrix multiply: the paper's table on this machine",
        ["LWPs", "no tool, s (median)", "in T", "expected, T", "CPUs it used",
         "other processes, CPUs", "expected with the CPUs left, T", "threadmon, s (median)",
         "ratio"],
        f"`mn_matrix --uthreads {UTHREADS} --lwps N --yield-rows 0 --size {size} --rounds "
        f"{mult_rounds}`: {UTHREADS} ucontext user threads, each multiplying its sixth of the "
        "rows once, start to end on one LWP (no time-slicing between user threads, as in the "
        "paper), N LWPs (pthreads) sharing one run queue; wall time, median of "
        f"{rounds} interleaved runs. T = one user thread's work in CPU time (the program's CPU "
        f"seconds at 1 LWP / {UTHREADS}), so that a loaded machine does not stretch the unit. "
        f"Expected: waves of N user threads, a wave of k taking k / min(k, {cpus} CPUs) T; the "
        "paper (4 CPUs): 6T, 3T, 2T, 2T, 2.25T, 1.5T. CPUs it used: the program's CPU seconds "
        "/ wall time; other processes: the machine's busy CPU time during the run less the "
        "program's, per second; expected with the CPUs left: the same waves on "
        f"{cpus} less those.")
    tools = [bare] + ([probe] if probe.unavailable_reason() is None else [])
    runs = {}
    for r in range(rounds):
        for lwps in range(1, UTHREADS + 1):
            args = ["--uthreads", str(UTHREADS), "--lwps", str(lwps), "--yield-rows", "0",
                    "--size", str(size), "--rounds", str(mult_rounds)]
            for t in tools[r % len(tools):] + tools[:r % len(tools)]:
                truth, cpu, other = measured_run(t, [binary] + args)
                runs.setdefault((t.key, lwps), []).append((truth["wall_s"], cpu, other))
        log(f"  round {r + 1}/{rounds}")

    def med(key, i):
        return statistics.median(x[i] for x in runs[key]) if key in runs else None

    t_unit = med((bare.key, 1), 1) / UTHREADS
    for lwps in range(1, UTHREADS + 1):
        wall, cpu, other = (med((bare.key, lwps), i) for i in range(3))
        left = max(0.05, cpus - other)
        sec.rows.append([lwps, f"{wall:.3f}", f"{wall / t_unit:.2f}",
                         f"{expected_t(lwps, cpus):.2f}", f"{cpu / wall:.2f}", f"{other:.2f}",
                         f"{expected_t(lwps, left):.2f}", report.fmt(med((probe.key, lwps), 0), 3),
                         report.ratio(med((probe.key, lwps), 0), wall)])
    worst = max(med((bare.key, n), 2) for n in range(1, UTHREADS + 1))
    sec.notes.append(
        f"With {cpus} CPUs: from {cpus} LWPs on, no more than {cpus} user threads run at once; "
        "more LWPs only time-slice them, and a last short wave (5 LWPs: 5 user threads, then 1 "
        "alone on one CPU) costs more than fewer LWPs, as the paper's 5 LWPs on 4 CPUs did.")
    if cpus - worst < 2:
        sec.notes.append(
            f"Other processes used up to {worst:.2f} of the {cpus} CPUs during these runs: the "
            f"program had less than 2 CPUs (down to {cpus - worst:.2f}), so its plateau comes "
            "earlier and lower; read the CPUs it used and the last expected column.")
    return sec


BARRIER_CONFIGS = [
    ("bound: 4 user threads, one per LWP", ["--bound"]),
    ("unbound: 4 user threads on a pool of 4 LWPs (the study's)", ["--lwps", "4"]),
    ("unbound: 4 user threads on 2 LWPs", ["--lwps", "2"]),
]


def barrier_penalty(build_dir, bare, quick, log):
    """The M-to-N study's fine-grained barrier (section 5.1): bound vs
    unbound user threads, wall and CPU time, and what the rest of the
    machine took meanwhile."""
    cpus = os.cpu_count() or 1
    rounds = 5 if quick else 9
    barriers = 10000 if quick else 20000
    binary = os.path.join(build_dir, "tests", "workloads", "mn_barrier")
    common = ["--uthreads", "4", "--rounds", str(barriers), "--work", "400"]
    sec = report.Section(
        "M:N fine-grained barrier: bound vs unbound",
        ["configuration", "wall, s (median)", "vs bound", "CPU s (median)", "dispatchable, %",
         "other processes, CPUs"],
        f"`mn_barrier {' '.join(common)} [--bound | --lwps N]`: 4 ucontext user threads each "
        "increment a 2 x 2 matrix 400 times, then meet at a barrier, "
        f"{barriers} times. Bound: each on its own LWP, the barrier a mutex and a condition "
        "variable (a waiter blocks its LWP in the kernel). Unbound: the user-level barrier "
        "parks a waiter off its LWP, the last arrival puts them back in the run queue, and an "
        "LWP with nothing to run parks in the kernel until one is ready. Wall and CPU time "
        f"(user + system) of the process, median of {rounds} interleaved rounds; dispatchable: "
        "the user threads' own truth (off an LWP, parked or queued); other processes: the "
        f"machine's busy CPU time during the run less the program's, in CPUs of {cpus}.")
    results = {}
    for r in range(rounds):
        order = BARRIER_CONFIGS[r % 3:] + BARRIER_CONFIGS[:r % 3]
        for label, args in order:
            truth, cpu, other = measured_run(bare, [binary] + common + args)
            disp = statistics.mean(u["dispatchable_pct"] for u in truth["user_threads"])
            results.setdefault(label, []).append((truth["wall_s"], cpu, disp, other))
        log(f"  round {r + 1}/{rounds}")
    med = {k: [statistics.median(x[i] for x in v) for i in range(4)] for k, v in results.items()}
    bound = med[BARRIER_CONFIGS[0][0]][0]
    for label, _ in BARRIER_CONFIGS:
        wall, cpu, disp, other = med[label]
        sec.rows.append([label, f"{wall:.3f}", report.ratio(wall, bound), f"{cpu:.3f}",
                         f"{disp:.0f}", f"{other:.2f}"])
    spare = cpus - max(m[3] for m in med.values())
    if spare < 2:
        sec.notes.append(
            f"The rest of the machine used up to {cpus - spare:.2f} of its {cpus} CPUs during "
            f"these runs: the program had less than 2 CPUs ({spare:.2f}), and a wall time "
            "there is mostly waiting for a CPU; compare the CPU times.")
    return sec
