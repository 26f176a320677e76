"""The probe thread's CPU share and the capture size, with many threads
(bench/thread_swarm.c)."""
import json
import os
import statistics
import subprocess

from . import machine, procrun, report, tools as tl

# Threads the probe names itself: tm-bench-swarm sums the CPU time of every
# thread whose comm starts with this (see probe/life/sampler.c).
PROBE_COMM_PREFIX = "threadmon"


def _swarm(build_dir, probe, mode, threads, seconds):
    argv = [os.path.join(build_dir, "bench", "tm-bench-swarm"), mode, str(threads),
            str(seconds), PROBE_COMM_PREFIX]
    res = tl.run_under(probe, argv, timeout=120 + 10 * seconds)
    out = procrun.last_json(res.stdout)
    out["wall"] = res.wall
    out["capture_bytes"] = res.capture_bytes
    return out


def _floor_share(build_dir, seconds, rounds):
    """% of a core that a thread waking every 10 ms and doing nothing else
    costs on this machine, without any probe: the floor under a sampler."""
    argv = [os.path.join(build_dir, "bench", "tm-bench-swarm"), "ticker", "1", str(seconds),
            "tm-ticker"]
    shares = []
    for _ in range(rounds):
        out = procrun.last_json(tl.run_under(tl.NoTool(), argv, timeout=60 + 10 * seconds).stdout)
        if out["probe_threads"]:
            shares.append(100.0 * out["probe_cpu_ns"] / out["window_ns"])
    return statistics.median(shares) if shares else None


def _share(out):
    """Percent of one core used by the probe's threads in the window."""
    if not out["probe_threads"]:
        return None
    return 100.0 * out["probe_cpu_ns"] / out["window_ns"]


def _median_share(build_dir, probe, threads, seconds, rounds, log):
    shares, found, err = [], 0, None
    for _ in range(rounds):
        try:
            out = _swarm(build_dir, probe, "light", threads, seconds)
        except procrun.RunError as e:
            err = str(e)
            log(f"  {threads} threads: {e}")
            break
        found = out["probe_threads"]
        if _share(out) is not None:
            shares.append(_share(out))
    return (statistics.median(shares) if shares else None), found, err


def cpu_share(build_dir, probe, quick, log):
    """Phase 1: share of one core at 10/100/1,000 threads, 10 ms ticks."""
    seconds, rounds = (1, 1) if quick else (3, 3)
    sec = report.Section(
        "Sampler CPU share, 10 ms ticks",
        ["threads", "probe CPU, % of one core (median)", "probe threads found"],
        f"`tm-bench-swarm light N {seconds}`: N threads each doing 500 multiply-add steps then "
        f"sleeping 100 ms; CPU time of the threads named `{PROBE_COMM_PREFIX}*` (from "
        f"/proc/self/task/TID/schedstat) over a {seconds} s window that starts 0.3 s after the "
        f"last thread is created, divided by the window; median of {rounds} run(s).")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        sec.add_goal("sampler at 100 threads, 10 ms: at most 1% of a core", "probe not built", None)
        return sec
    shares = {}
    try:
        floor = _floor_share(build_dir, seconds, rounds)
    except procrun.RunError as e:
        floor = None
        log(f"  ticker: {e}")
    sec.rows.append(["0 (no probe: one thread that only wakes every 10 ms)",
                     report.fmt(floor, 2), "-"])
    for n in (10, 100, 1000):
        share, found, err = _median_share(build_dir, probe, n, seconds, rounds, log)
        shares[n] = share
        sec.rows.append([f"{n:,}", report.fmt(share, 2), found])
        if err:
            sec.notes.append(f"{n} threads failed: {err}")
    share = shares.get(100)
    why = ""
    if shares.get(10) is not None and share is not None:
        # A 10 ms tick is 10,000 us: 1% of a core is 100 us per tick.
        fixed = shares[10] * 100
        per_thread = (share - shares[10]) * 100 / 90
        wake = (f"of which {floor * 100:.0f} us is only waking up (a thread doing nothing but "
                "waking every 10 ms costs that here: the first system calls after a wake-up "
                "on this VM take several times their usual time)"
                if floor is not None else "")
        why = (f"about {fixed:.0f} us per tick at 10 threads, {wake}, and {per_thread:.1f} us "
               "more per extra thread (in this workload each wakes every 100 ms and is read "
               "at most every 200 ms)")
    sec.add_goal("sampler at 100 threads, 10 ms: at most 1% of a core",
                 f"{share:.2f}%" if share is not None else "probe thread not found",
                 None if share is None else share <= 1.0,
                 f"{share:.1f}× the budget" if share else "", why)
    if not any(r[2] for r in sec.rows):
        sec.notes.append(f"no thread named {PROBE_COMM_PREFIX}* was found in the probed process")
    return sec


def scaling(build_dir, probe, quick, log):
    """Phase 2: threads × tick interval."""
    counts = (100, 1000) if quick else (10, 100, 1000, 5000)
    ticks = (1, 10, 100)
    seconds = 1 if quick else 2
    sec = report.Section(
        "Sampler scaling: % of one core by threads × tick",
        ["threads"] + [f"{t} ms tick" for t in ticks],
        f"Same workload as above (`light`), {seconds} s window, one run per cell.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    for n in counts:
        row = [f"{n:,}"]
        for t in ticks:
            share, _found, err = _median_share(build_dir, probe.with_interval(t), n, seconds, 1, log)
            row.append("failed" if err else report.fmt(share, 2))
            if err:
                sec.notes.append(f"{n} threads at {t} ms: {err}")
        sec.rows.append(row)
    return sec


def capture_size(build_dir, probe, quick, log):
    """Phase 1: capture bytes per thread-second for idle, light and busy threads."""
    seconds = 1 if quick else 3
    sec = report.Section(
        "Capture size",
        ["workload", "threads", "capture bytes", "process wall s", "bytes per thread-second",
         "bytes per second"],
        f"`tm-bench-swarm MODE N {seconds}` under the probe (10 ms ticks). idle: every thread "
        "blocked in pthread_cond_wait; light: 500 multiply-adds per 100 ms; busy: short critical "
        "sections on 4 shared mutexes with 1 ms naps every 50. Bytes per thread-second = file "
        "size / (N × process wall time), start-up and shutdown included.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    for mode, n in (("idle", 100), ("light", 100), ("busy", 10), ("busy", 100)):
        try:
            out = _swarm(build_dir, probe, mode, n, seconds)
        except procrun.RunError as e:
            sec.notes.append(f"{mode} {n}: {e}")
            continue
        b, wall = out["capture_bytes"], out["wall"]
        sec.rows.append([mode, n, f"{b:,}", f"{wall:.2f}", report.fmt(b / (n * wall)),
                         report.fmt(b / wall)])
    return sec


def compression_cost(build_dir, probe, quick, log):
    """Phase 1: what the capture's zstd blocks cost the probe's thread and save
    on disk, busy 100, plain frames and level 3 interleaved."""
    seconds, rounds = (2, 1) if quick else (20, 3)
    sec = report.Section(
        "Capture compression: probe CPU and bytes on disk",
        ["THREADMON_COMPRESS", "probe CPU, % of one core (median)", "capture MB/s (median)",
         "runs"],
        f"`tm-bench-swarm busy 100 {seconds}` under the probe (10 ms ticks), {rounds} run(s) of "
        "each, interleaved: 0 writes plain frames (format 1), 3 zstd blocks (format 2, the "
        "default). Probe CPU: CPU time of the threads named `threadmon*` over the window; MB/s: "
        "file size over the process's wall time. The runs differ in how much the busy threads "
        "did, so the MB/s are of different streams: `threadmon report --sizes` gives one "
        "capture's frames and bytes on disk.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    shares, rates = {0: [], 3: []}, {0: [], 3: []}
    for _ in range(rounds):
        for level in (0, 3):
            try:
                out = _swarm(build_dir, probe.compressing(level), "busy", 100, seconds)
            except procrun.RunError as e:
                sec.notes.append(f"level {level}: {e}")
                continue
            if _share(out) is not None:
                shares[level].append(_share(out))
            rates[level].append(out["capture_bytes"] / out["wall"] / 1e6)
    for level in (0, 3):
        if shares[level]:
            sec.rows.append([level, f"{statistics.median(shares[level]):.2f}",
                             f"{statistics.median(rates[level]):.3f}", len(shares[level])])
    return sec


def _records_stopped(build_dir, run_dir):
    """Whether the probe stopped or paused its switch records (rate limit): a
    notice says so. A capture's frames are zstd blocks (docs/format.md): the
    report tool reads its notices."""
    path = os.path.join(run_dir, "capture.tmcap")
    tool = os.path.join(build_dir, "display", "threadmon-report")
    if not os.path.exists(path) or not os.path.exists(tool):
        return None
    proc = subprocess.run([tool, "--json", path], capture_output=True, text=True, timeout=300)
    try:
        notices = json.loads(proc.stdout)["process"].get("notices", [])
    except (ValueError, KeyError):
        return None
    # Since the rate limit resumes the records, its notice says "paused".
    return any("switch records stopped" in n or "switch records paused" in n for n in notices)


# Goals of issue 13, 10 ms ticks: (mode, threads) -> % of one core.
SCALE_GOALS = {("light", 100): 1.0, ("light", 1000): 2.0, ("light", 10000): 10.0,
               ("idle", 10000): 0.5}


def scale_to_10k(build_dir, probe, quick, log):
    """Phase 1: the sampler's share up to 10,000 threads, light and idle, with
    the cost per thread per tick; configurations interleaved, medians."""
    configs = ([("light", 100), ("light", 1000), ("idle", 10000)] if quick else
               [("light", 100), ("light", 1000), ("light", 5000), ("light", 10000),
                ("idle", 1000), ("idle", 10000)])
    seconds, rounds = (1, 1) if quick else (3, 3)
    interval_us = probe.interval_ms * 1000
    sec = report.Section(
        "Sampler scaling to 10,000 threads, 10 ms ticks",
        ["workload", "threads", "probe CPU, % of one core (median)", "µs per tick",
         "µs per thread per tick", "switch records stopped", "load average"],
        f"`tm-bench-swarm MODE N {seconds}` under the probe; light: 500 multiply-adds then a "
        "100 ms sleep; idle: every thread blocked in pthread_cond_wait. Share as in the CPU "
        f"share section; median of {rounds} run(s), configurations interleaved. µs per thread "
        "per tick: the tick's cost above the same mode's smallest count, divided by the "
        "threads added (the slope: flat when cost follows what threads do). 'switch records "
        "stopped': the probe closed its switch records (THREADMON_MAX_SWITCH_RATE) in some "
        "run, and states came from the wrappers' events and /proc.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    shares = {c: [] for c in configs}
    stopped = {c: False for c in configs}
    loads = {c: [] for c in configs}
    argv0 = os.path.join(build_dir, "bench", "tm-bench-swarm")
    for _ in range(rounds):
        for mode, n in configs:
            try:
                res = tl.run_under(probe, [argv0, mode, str(n), str(seconds), PROBE_COMM_PREFIX],
                                   timeout=120 + 10 * seconds,
                                   inspect=lambda d: _records_stopped(build_dir, d))
            except procrun.RunError as e:
                log(f"  {mode} {n}: {e}")
                continue
            out = procrun.last_json(res.stdout)
            if _share(out) is not None:
                shares[(mode, n)].append(_share(out))
            stopped[(mode, n)] |= bool(res.inspected)
            loads[(mode, n)].append(float(machine.load_average().split()[0]))
    med = {c: statistics.median(v) if v else None for c, v in shares.items()}
    for mode, n in configs:
        share = med[(mode, n)]
        base_n = min(m for md, m in configs if md == mode)
        base = med[(mode, base_n)]
        per_tick = share * interval_us / 100 if share is not None else None
        slope = None
        if share is not None and base is not None and n > base_n:
            slope = (share - base) * interval_us / 100 / (n - base_n)
        load = statistics.median(loads[(mode, n)]) if loads[(mode, n)] else None
        sec.rows.append([mode, f"{n:,}", report.fmt(share, 2), report.fmt(per_tick),
                         "-" if slope is None else f"{slope:.3f}",
                         "yes" if stopped[(mode, n)] else "no", report.fmt(load, 2)])
    for (mode, n), goal in SCALE_GOALS.items():
        name = f"sampler at {n:,} {mode} threads, 10 ms: at most {goal:g}% of a core"
        share = med.get((mode, n))
        if (mode, n) not in med:
            sec.add_goal(name, "not run (--quick)", None)
            continue
        sec.add_goal(name, f"{share:.2f}%" if share is not None else "probe thread not found",
                     None if share is None else share <= goal,
                     f"{share / goal:.1f}× the budget" if share else "")
    return sec
