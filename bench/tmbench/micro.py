"""Microbenchmarks of interposed pthread calls (bench/sync_micro.c)."""
import os
import statistics

from . import interleave, procrun, report, tools as tl

# name, argument list, operations for a quick / a full run, unit divisor
BENCHES = [
    ("uncontended mutex lock+unlock", ["mutex"], 4_000_000, 20_000_000, "ns"),
    ("mutex contended by 2 threads", ["mutex-contended", "2"], 1_000_000, 4_000_000, "ns"),
    ("mutex contended by 4 threads", ["mutex-contended", "4"], 1_000_000, 4_000_000, "ns"),
    ("cond signal/wait ping-pong (1 CPU)", ["cond-pingpong"], 10_000, 40_000, "µs"),
    ("rwlock read lock+unlock", ["rwlock-read"], 4_000_000, 20_000_000, "ns"),
    ("barrier wait, 2 threads (1 CPU)", ["barrier"], 10_000, 40_000, "µs"),
    ("sem post+wait", ["sem"], 4_000_000, 20_000_000, "ns"),
    ("rwlock write lock+unlock", ["rwlock-write"], 4_000_000, 20_000_000, "ns"),
    ("mutex trylock+unlock", ["trylock"], 4_000_000, 20_000_000, "ns"),
    ("spin lock+unlock", ["spin"], 4_000_000, 20_000_000, "ns"),
    ("cond signal, no waiter", ["cond-signal"], 4_000_000, 20_000_000, "ns"),
    ("context switch: sched_yield, 2 threads (1 CPU)", ["yield-pingpong"], 50_000, 200_000,
     "µs"),
    ("thread create+join", ["create-join"], 1_000, 5_000, "µs"),
    ("futex wait answered EAGAIN (syscall)", ["futex-eagain"], 1_000_000, 4_000_000, "ns"),
]
MIN_OPS = 200


def _sync_binary(build_dir):
    return os.path.join(build_dir, "bench", "tm-bench-sync")


def _run_one(binary, args, ops, tool, recorded=None, scale_down=True):
    """ns per operation; appends recorded bytes per operation to recorded[tool.key].

    scale_down: divide ops by the tool's ops_divisor (always for valgrind)."""
    if scale_down or isinstance(tool, tl.Valgrind):
        ops = max(MIN_OPS, ops // tool.ops_divisor)
    argv = [binary, args[0], str(ops)] + args[1:]
    res = tl.run_under(tool, argv, timeout=600)
    if recorded is not None:
        recorded.setdefault(tool.key, []).append(res.capture_bytes / ops)
    return procrun.last_json(res.stdout)["ns_per_op"]


def uncontended(build_dir, bare, probe, quick, log):
    """Phase-1 headline: ns per uncontended pair, without and with the probe."""
    ops = 5_000_000 if quick else 20_000_000
    rounds = 5 if quick else 11
    sec = report.Section(
        "Uncontended pthread_mutex_lock+unlock",
        ["configuration", "ns per pair (median)", "min", "max", "runs"],
        f"`tm-bench-sync mutex {ops}` with one idle extra thread alive; {rounds} interleaved "
        "runs per configuration; only the loop is timed. Probe: "
        "`LD_PRELOAD=libthreadmon.so THREADMON_OUTPUT=<tmp>/capture.tmcap THREADMON_INTERVAL_MS=10`.")
    tools = [bare] + ([probe] if probe.unavailable_reason() is None else [])
    res = interleave.measure(tools, rounds,
                             lambda t: _run_one(_sync_binary(build_dir), ["mutex"], ops, t),
                             log=log)
    for t in tools:
        med, vals, err = res[t.key]
        sec.rows.append([t.label, report.fmt(med), report.fmt(min(vals) if vals else None),
                         report.fmt(max(vals) if vals else None), len(vals)])
        if err:
            sec.notes.append(f"{t.label} failed: {err}")
    base = res[bare.key][0]
    got = res.get(probe.key, (None,))[0]
    if base is not None and got is not None:
        delta = got - base
        sec.rows.append(["difference", f"{delta:+.1f}", "", "", ""])
        spread = (max(res[bare.key][1]) - min(res[bare.key][1])) if res[bare.key][1] else 0
        sec.add_goal("uncontended pair: at most +5 ns", f"{delta:+.1f} ns ({base:.1f} → {got:.1f})",
                     delta <= 5.0, f"{delta - 5.0:.1f} ns",
                     "each pair adds the wrappers' calls through libthreadmon's PLT entries, a "
                     "trylock-first fast path and an acquisition counted into the lock's entry "
                     "of the probe's object table (the THREADMON_PERF=0 column of the "
                     "microbenchmarks costs the same: none of it is perf's); the bare runs "
                     f"alone spread over {spread:.1f} ns on this VM"
                     + (", more than the miss" if spread > delta - 5.0 else ""))
    else:
        sec.add_goal("uncontended pair: at most +5 ns", "probe not run", None)
    return sec


def futex_cost(build_dir, bare, probe, quick, log):
    """What interposing syscall() adds: a FUTEX_WAIT that returns EAGAIN at
    once (the probe records it as a wait), and another number (passed
    through). Uncontended futex locks never call it."""
    ops = 1_000_000 if quick else 4_000_000
    rounds = 5 if quick else 11
    sec = report.Section(
        "syscall(): a futex wait answered EAGAIN, and any other number",
        ["call", "no tool, ns", "threadmon, ns", "difference, ns"],
        f"`tm-bench-sync futex-eagain {ops}` (syscall(SYS_futex, FUTEX_WAIT_PRIVATE) on a word "
        f"that no longer holds the value) and `tm-bench-sync syscall-gettid {ops}`; medians of "
        f"{rounds} interleaved runs, thread CPU time of the loop only.")
    tools = [bare] + ([probe] if probe.unavailable_reason() is None else [])
    for label, bench in (("futex wait, EAGAIN", "futex-eagain"), ("syscall(SYS_gettid)",
                                                                  "syscall-gettid")):
        res = interleave.measure(tools, rounds,
                                 lambda t: _run_one(_sync_binary(build_dir), [bench], ops, t),
                                 log=log)
        base, got = res[bare.key][0], res.get(probe.key, (None,))[0]
        sec.rows.append([label, report.fmt(base), report.fmt(got),
                         f"{got - base:+.1f}" if base is not None and got is not None else ""])
    return sec


def all_tools(build_dir, bare, tools, quick, log):
    """Phase 2: every microbenchmark under every available tool."""
    binary = _sync_binary(build_dir)
    rounds = 3 if quick else 5
    sec = report.Section(
        "Microbenchmarks: tools side by side",
        ["benchmark", "no tool"] + [t.label for t in tools if t is not bare],
        f"`tm-bench-sync`, median of up to {rounds} interleaved runs (valgrind: 1 run, with "
        f"{tl.Valgrind.ops_divisor}× fewer iterations; LTTng: {tl.Lttng.ops_divisor}× fewer in the "
        "ns-scale rows, where shorter runs are less often preempted, which favours it). "
        "Cells are time per operation and the ratio to no tool. Contended figures are time per "
        "acquisition across all threads; ping-pong and barrier run both threads on CPU 0 "
        "(unpinned, this VM's ~45 µs cross-CPU wake-ups would hide every tool's cost). "
        "LTTng-UST's pthread wrapper traces only mutex lock, trylock and unlock, so its other "
        "rows record nothing. The THREADMON_PERF=0 column is the probe without perf events (no "
        "switch records: states split by schedstat per tick): the difference between the two "
        "threadmon columns is what the kernel's switch records cost.")

    def reps_for(t):
        return 1 if isinstance(t, tl.Valgrind) else rounds

    contended = {}
    for name, args, quick_ops, full_ops, unit in BENCHES:
        ops = quick_ops if quick else full_ops
        log(f"  {name}")
        recorded = {}
        res = interleave.measure([bare] + [t for t in tools if t is not bare], rounds,
                                 lambda t: _run_one(binary, args, ops, t, recorded, unit == "ns"),
                                 reps_for, log)
        if args[0] == "mutex":
            sizes = [f"{t.label} {statistics.median(recorded[t.key]):.3g}" for t in tools
                     if recorded.get(t.key) and isinstance(t, (tl.Threadmon, tl.Lttng))]
            if sizes:
                sec.notes.append("bytes recorded per uncontended pair (capture or trace size / "
                                 "pairs, start-up included): " + ", ".join(sizes))
        base = res[bare.key][0]
        scale = 1000.0 if unit == "µs" else 1.0
        row = [name, f"{report.fmt(base / scale if base else None)} {unit}"]
        for t in tools:
            if t is bare:
                continue
            med, _vals, err = res[t.key]
            if med is None:
                row.append("failed" if err else "n/a")
                if err:
                    sec.notes.append(f"{name} under {t.label}: {err}")
            else:
                row.append(f"{report.fmt(med / scale)} {unit} ({report.ratio(med, base)})")
        sec.rows.append(row)
        if args[0] == "mutex-contended":
            contended[args[1]] = (base, {t.key: res[t.key][0] for t in tools})
    for n, (base, by_tool) in contended.items():
        tm, lt = by_tool.get("threadmon"), by_tool.get("lttng")
        if base and tm:
            r = tm / base
            sec.add_goal(f"mutex contended by {n}: at most 1.3× no tool", f"{r:.2f}×", r <= 1.3,
                         f"{r / 1.3:.1f}× the allowance",
                         f"a contended acquisition costs {base:.0f} ns bare; the probe times it "
                         "(two clock reads), writes a wait event to the thread's ring and counts "
                         f"the call site: {tm - base:.0f} ns more")
            if lt:
                sec.add_goal(f"mutex contended by {n}: ahead of LTTng",
                             f"threadmon {r:.2f}× vs LTTng {lt / base:.2f}×", tm < lt)
    return sec


def swapcontext_cost(build_dir, bare, probe, quick, log):
    """User threads (M:N): ns per swapcontext, without and with the probe.

    Two loops: back-to-back switches (millions a second: an LWP's event ring,
    1,024 events per 10 ms tick, overflows and most events are dropped and
    counted, a cheaper path), and bursts of 400 switches 12 ms apart, only
    the bursts timed, where every event is kept (the goal's case)."""
    rounds = 5 if quick else 9
    loop_ops, burst_ops = (1_000_000, 60_000) if quick else (4_000_000, 200_000)
    sec = report.Section(
        "User-thread switch: swapcontext",
        ["configuration", "back to back, ns (median)", "min", "max",
         "bursts, every event kept, ns (median)", "min", "max", "runs"],
        f"`tm-bench-sync swapcontext {loop_ops}` (a fiber and the thread's own context switching "
        f"back and forth, thread CPU time per swapcontext) and `tm-bench-sync swapcontext-burst "
        f"{burst_ops}` (the same in bursts of 400 switches 12 ms apart, only the bursts timed: "
        "the probe keeps every switch's event; each burst starts with cold caches, in both "
        f"configurations); {rounds} interleaved runs per configuration. glibc's swapcontext "
        "saves and restores the signal mask: one rt_sigprocmask system call per switch.")
    tools = [bare] + ([probe] if probe.unavailable_reason() is None else [])
    binary = _sync_binary(build_dir)
    loop = interleave.measure(tools, rounds,
                              lambda t: _run_one(binary, ["swapcontext"], loop_ops, t,
                                                 scale_down=False), log=log)
    burst = interleave.measure(tools, rounds,
                               lambda t: _run_one(binary, ["swapcontext-burst"], burst_ops, t,
                                                  scale_down=False), log=log)
    for t in tools:
        row = [t.label]
        for res in (loop, burst):
            med, vals, err = res[t.key]
            row += [report.fmt(med), report.fmt(min(vals) if vals else None),
                    report.fmt(max(vals) if vals else None)]
            if err:
                sec.notes.append(f"{t.label} failed: {err}")
        sec.rows.append(row + [len(loop[t.key][1])])
    deltas = []
    for res in (loop, burst):
        base, got = res[bare.key][0], res.get(probe.key, (None,))[0]
        deltas.append(got - base if base is not None and got is not None else None)
    if deltas[1] is not None:
        sec.rows.append(["difference", f"{deltas[0]:+.1f}" if deltas[0] is not None else "n/a",
                         "", "", f"{deltas[1]:+.1f}", "", "", ""])
        base = burst[bare.key][0]
        sec.add_goal("swapcontext, every event kept: at most +20 ns",
                     f"{deltas[1]:+.1f} ns ({base:.1f} → {base + deltas[1]:.1f}); back to back "
                     f"{deltas[0]:+.1f} ns",
                     deltas[1] <= 20.0, f"{deltas[1] - 20.0:.1f} ns",
                     "each switch reads the TSC (about 10 ns here), looks the target context up "
                     "in the probe's address map and writes a 24-byte event to the LWP's ring; "
                     "in a burst after a pause the ring's lines are cold (the sampler read them "
                     "last, on another CPU), which the back-to-back loop, whose ring is full "
                     "and drops, does not pay")
    else:
        sec.add_goal("swapcontext, every event kept: at most +20 ns", "probe not run", None)
    return sec


# tm-bench-switchcost's configurations, what each stands for (switch_cost.c).
SWITCH_CONFIGS = [
    ("none", "no perf events"),
    ("records", "PERF_RECORD_SWITCH per CPU, inherited (the probe's)"),
    ("disabled", "the same, disabled by ioctl (the probe's records paused)"),
    ("counters", "records + task-clock/faults group per thread (THREADMON_COUNTERS=1 before)"),
    ("toggled", "records enabled by ioctl only around each wait"),
]


def switch_cost(build_dir, quick, log):
    """What each way of learning of context switches costs the kernel per
    switch, without any probe (issue 26, deliverable 3)."""
    binary = os.path.join(build_dir, "bench", "tm-bench-switchcost")
    ops = 20_000 if quick else 50_000
    rounds = 3 if quick else 5
    sec = report.Section(
        "Kernel cost of switch records, per switch",
        ["configuration", "CPU ns per switch (median)", "over no events", "wall ns per switch"],
        f"`tm-bench-switchcost CONFIG {ops}`: two threads pinned to CPU 0 yield to each other, "
        "with the perf events of CONFIG opened by the program itself (no probe); both threads' "
        f"CPU time per switch, which other programs on CPU 0 do not inflate; {rounds} interleaved "
        "rounds. Software context-switch events (sampled or counted) are left out: they must "
        "include the kernel, which perf_event_paranoid 2 refuses.")
    if not os.path.exists(binary):
        sec.notes.append(f"not measured: {binary} not built")
        return sec
    cpu = {c: [] for c, _ in SWITCH_CONFIGS}
    wall = {c: [] for c, _ in SWITCH_CONFIGS}
    for r in range(rounds):
        order = SWITCH_CONFIGS[r % len(SWITCH_CONFIGS):] + SWITCH_CONFIGS[:r % len(SWITCH_CONFIGS)]
        for config, _ in order:
            try:
                out = procrun.last_json(tl.run_under(tl.NoTool(), [binary, config, str(ops)],
                                                     timeout=300).stdout)
            except procrun.RunError as e:
                log(f"  {config}: {e}")
                continue
            cpu[config].append(out["cpu_ns_per_switch"])
            wall[config].append(out["ns_per_switch"])
    base = statistics.median(cpu["none"]) if cpu["none"] else None
    for config, what in SWITCH_CONFIGS:
        med = statistics.median(cpu[config]) if cpu[config] else None
        over = f"{med - base:+.0f}" if med is not None and base is not None else "n/a"
        sec.rows.append([f"{config}: {what}", report.fmt(med, 0), over,
                         report.fmt(statistics.median(wall[config]) if wall[config] else None, 0)])
    return sec
