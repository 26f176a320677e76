"""Real multi-threaded programs: compressors and stress-ng stressors."""
import functools
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from . import procrun, report, tools as tl

WORDS = ("thread mutex lock wait signal cond barrier sched futex kernel sample probe "
         "capture frame stream socket display sleep yield spin owner holder queue").split()


def make_input(path, megabytes, seed=42):
    """Deterministic, text-like data that compresses about 3:1."""
    rng = random.Random(seed)
    blocks = []
    for _ in range(64):
        words = [rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(8000)]
        blocks.append(" ".join(words).encode())
    with open(path, "wb") as f:
        written = 0
        while written < megabytes << 20:
            b = bytearray(rng.choice(blocks))
            for _ in range(64):  # keep long-range matches from making it trivial
                b[rng.randrange(len(b))] = rng.randrange(256)
            f.write(b)
            written += len(b)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


COMPRESSORS = [
    ("pigz", lambda f: ["pigz", "-p", "2", "-c", f]),
    # -9, not the default -3: at -3 a run is under 0.1 s here, shorter than
    # the machine's own jitter between runs.
    ("zstd", lambda f: ["zstd", "-T2", "-9", "-c", f]),
    ("xz", lambda f: ["xz", "-T2", "-1", "-c", f]),
]
STRESSORS = ["mutex", "futex", "pthread"]
# What each stressor pays for, from what the probe does on its path.
# {switches}: the sentence on what context switches cost it (switch_text).
STRESSOR_COST = {
    "mutex": ("stress-ng locks, unlocks, yields and changes its threads' priorities in a loop, "
              "switching context all the time: {switches}; {kb:,.0f} KiB/s of capture"),
    "futex": ("stress-ng calls futex() directly, which no wrapper sees: {switches}; its "
              "throughput also flips between two regimes with its switch rate, without any "
              "tool too; {kb:,.0f} KiB/s of capture"),
    "pthread": ("every bogo op creates a thread ({rate:,.0f} a second without a tool), and "
                "a thread's create+join costs {create:.0f} µs more under the probe, "
                "{create_noperf:.0f} µs of it without perf events (THREADMON_PERF=0): the rest "
                "is the kernel copying the switch-record events into each new thread and "
                "freeing them at its exit, until the probe closes them after a second of "
                "such creation (THREADMON_MAX_CREATE_RATE; tm-bench-sync create-join, a "
                "tenth of a second, measured in this "
                "section); {kb:,.0f} KiB/s of capture"),
}
METRIC = re.compile(r"metrc: \[\d+\]\s+(\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def paired(bare_key, probe_key, rounds):
    """Per-round (no tool, probe) pairs from [{tool key: value}, ...], rounds
    where a run failed left out. Each round runs the two back to back, so
    their ratio cancels the drift a shared VM shows over a section (runs of
    one configuration moving by a third within a minute)."""
    return [(r[bare_key], r[probe_key]) for r in rounds if bare_key in r and probe_key in r]


def ratio_spread(ratios):
    """'from X to Y': the range of per-round ratios, for the why texts."""
    return f"from {min(ratios):.2f} to {max(ratios):.2f}"


def probe_cpu_share(probe, run_dir):
    """(the probe threads' CPU seconds, all threads' CPU seconds, whether any
    process stopped its switch records) over the captures in run_dir (one
    per process followed), from `threadmon report --json`; None if unreadable."""
    build_dir = os.path.dirname(os.path.dirname(probe.lib))
    mine = total = 0.0
    stopped = False
    captures = [f for f in os.listdir(run_dir) if f.endswith(".tmcap")]
    for name in captures:
        try:
            rep = subprocess.run([sys.executable, os.path.join(build_dir, "scripts", "threadmon"),
                                  "report", "--json", os.path.join(run_dir, name)],
                                 capture_output=True, text=True, timeout=120, check=True)
            doc = json.loads(rep.stdout)
            threads = doc["threads"]
        except (OSError, subprocess.SubprocessError, ValueError, KeyError):
            return None
        cpu = {t["tid"]: t["states"]["on_cpu"] / 100 * t["lifetime_s"] for t in threads}
        mine += sum(cpu[t["tid"]] for t in threads if t.get("probe"))
        total += sum(cpu.values())
        stopped = stopped or doc.get("process", {}).get("switch_records_stopped_s") is not None
    return (mine, total, stopped) if captures else None


def compressors(bare, probe, quick, log, unavailable):
    megabytes, rounds = (4, 1) if quick else (16, 9)
    sec = report.Section(
        "Real programs: compressors",
        ["command", "no tool, s (median)", "threadmon, s", "ratio", "outputs identical",
         "capture bytes/s"],
        f"{megabytes} MiB of generated text-like data (seeded), {rounds} rounds, each running "
        "the program without a tool and under the probe back to back (order alternating); "
        "the ratio is the median of the rounds' ratios, so drift between rounds cancels. "
        "stdout written to a file and compared by SHA-256.")
    work = tempfile.mkdtemp(prefix="tmbench-data-")
    try:
        data = os.path.join(work, "input.txt")
        make_input(data, megabytes)
        for name, make_argv in COMPRESSORS:
            if not shutil.which(name):
                unavailable[name] = "not installed (run with --install)"
                continue
            argv = make_argv(data)
            log(f"  {' '.join(argv[:-1])}")
            walls = []  # per round: {tool key: seconds}
            digests, rates, err = {}, [], None
            shares = []  # (probe CPU s, process CPU s) of the first probed run
            for r in range(rounds):
                walls.append({})
                for tool in ([bare, probe] if r % 2 == 0 else [probe, bare]):
                    out = os.path.join(work, f"out.{tool.key}")
                    inspect = (functools.partial(probe_cpu_share, probe)
                               if tool is probe and not shares else None)
                    try:
                        res = tl.run_under(tool, argv, timeout=600, stdout_path=out,
                                           inspect=inspect)
                    except procrun.RunError as e:
                        err = str(e)
                        continue
                    walls[-1][tool.key] = res.wall
                    if res.inspected:
                        shares.append(res.inspected)
                    digests.setdefault(tool.key, set()).add(_sha256(out))
                    if tool is probe:
                        rates.append(res.capture_bytes / res.wall)
            pairs = paired(bare.key, probe.key, walls)
            b = statistics.median(x for x, _ in pairs) if pairs else None
            p = statistics.median(y for _, y in pairs) if pairs else None
            ratios = [y / x for x, y in pairs]
            same = (len(digests.get(bare.key, ())) == 1 and
                    digests.get(bare.key) == digests.get(probe.key))
            cmd = " ".join(argv[:-1]) + " FILE"
            sec.rows.append([f"`{cmd}`", report.fmt(b, 2), report.fmt(p, 2),
                             f"{statistics.median(ratios):.2f}×" if ratios else "n/a",
                             "yes" if same else "**no**",
                             report.fmt(statistics.median(rates)) if rates else "n/a"])
            if err:
                sec.notes.append(f"{name}: {err}")
            if ratios:
                slow = 100.0 * (statistics.median(ratios) - 1)
                bw = [x for x, _ in pairs]
                spread = 100.0 * (max(bw) - min(bw)) / b if len(bw) > 1 else 0.0
                sec.add_goal(f"{name}: at most 3% slower", f"{slow:+.1f}%", slow <= 3.0,
                             report.points(slow - 3.0),
                             f"the rounds' ratios range {ratio_spread(ratios)}, and the runs "
                             f"without any tool alone over {spread:.0f}% of their median "
                             f"({len(bw)} runs of {b:.2f} s on a shared 2-vCPU VM)" +
                             (f"; in a probed run the probe's own thread used "
                              f"{1000 * shares[0][0]:.0f} ms of the process's "
                              f"{shares[0][1]:.2f} CPU seconds "
                              f"({100 * shares[0][0] / shares[0][1]:.1f}%) on a machine the "
                              "program keeps busy" if shares and shares[0][1] else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return sec


def added_us(tools, args, rounds):
    """Median µs per operation of `tm-bench-sync ARGS` under each of tools
    after the first (no tool), minus no tool's; interleaved, order rotated."""
    binary = os.path.join(os.path.dirname(os.path.dirname(tools[1].lib)), "bench",
                          "tm-bench-sync")
    per = {t.key: [] for t in tools}
    for r in range(rounds):
        for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
            res = tl.run_under(tool, [binary] + args, timeout=120)
            per[tool.key].append(procrun.last_json(res.stdout)["ns_per_op"])
    base = statistics.median(per[tools[0].key])
    return [(statistics.median(per[t.key]) - base) / 1000 for t in tools[1:]]


def switch_text(extra_us, bare_rate, probe_rate, cpus, stopped):
    """What the probe's cost per context switch comes to at a program's rate.
    stopped: whether the inspected probed run stopped its switch records."""
    share = 100.0 * probe_rate * extra_us / 1e6 / cpus
    text = (f"its probed runs switched {probe_rate:,.0f} times a second (no tool: "
            f"{bare_rate:,.0f}); while the probe keeps switch records each switch of a probed "
            f"thread costs {extra_us:.1f} µs more (the kernel writes the record and switches the "
            f"thread's perf context; tm-bench-sync yield-pingpong with "
            f"THREADMON_MAX_SWITCH_RATE=0, measured in this section), {share:.0f}% of the "
            f"machine's {cpus} CPUs at that rate")
    if stopped:
        text += (", until the probe stops the records (more than 25,000 switches a second "
                 "per CPU for 50 ms, as here)")
    return text


def stressors(bare, probe, quick, log, unavailable):
    seconds, rounds = (1, 1) if quick else (3, 5)
    sec = report.Section(
        "Real programs: stress-ng",
        ["stressor", "no tool, bogo ops/s (median)", "threadmon, bogo ops/s", "throughput ratio",
         "capture bytes/s"],
        f"`stress-ng --STRESSOR 2 --timeout {seconds} --metrics-brief`, {rounds} rounds, each "
        "running it without a tool and under the probe back to back (order alternating). "
        "stress-ng runs for a fixed time, so the comparison is throughput (bogo ops per "
        "second of real time): the ratio is the median of the rounds' ratios. The probe "
        "follows stress-ng's forked workers.")
    if not shutil.which("stress-ng"):
        unavailable["stress-ng"] = "not installed (run with --install)"
        sec.notes.append("stress-ng not installed")
        return sec
    cost_rounds = 3 if quick else 5
    extra_us, = added_us([bare, probe.keeping_switches()], ["yield-pingpong", "100000"],
                         cost_rounds)
    create_us, create_noperf_us = added_us([bare, probe, probe.without_perf()],
                                           ["create-join", "2000"], cost_rounds)
    cpus = os.cpu_count() or 1
    for name in STRESSORS:
        argv = ["stress-ng", f"--{name}", "2", "--timeout", str(seconds), "--metrics-brief"]
        log(f"  {' '.join(argv)}")
        rates = []  # per round: {tool key: bogo ops/s}
        switches = {bare.key: [], probe.key: []}
        cap, err, sampler, stopped = [], None, [], False
        for r in range(rounds):
            rates.append({})
            for tool in ([bare, probe] if r % 2 == 0 else [probe, bare]):
                # One probed run is also reported on: what the probe threads used.
                inspect = (functools.partial(probe_cpu_share, probe)
                           if tool is probe and r == 0 else None)
                try:
                    res = tl.run_under(tool, argv, timeout=120, merge_stderr=True,
                                       inspect=inspect)
                except procrun.RunError as e:
                    err = str(e)
                    continue
                m = [x for x in METRIC.findall(res.stdout) if x[0] == name]
                if m:
                    rates[-1][tool.key] = float(m[0][5])  # bogo ops/s, real time
                    switches[tool.key].append(res.switches / res.wall)
                if tool is probe:
                    cap.append(res.capture_bytes / res.wall)
                if res.inspected:
                    sampler.append(100.0 * res.inspected[0] / res.wall / cpus)
                    stopped = res.inspected[2]
        pairs = paired(bare.key, probe.key, rates)
        b = statistics.median(x for x, _ in pairs) if pairs else None
        p = statistics.median(y for _, y in pairs) if pairs else None
        ratios = [y / x for x, y in pairs if x]
        sec.rows.append([name, report.fmt(b), report.fmt(p),
                         f"{statistics.median(ratios):.2f}×" if ratios else "n/a",
                         report.fmt(statistics.median(cap)) if cap else "n/a"])
        if err:
            sec.notes.append(f"{name}: {err}")
        if ratios and all(ratios):
            # Slower: the time a bare run's work takes under the probe.
            slow = 100.0 * (statistics.median(x / y for x, y in pairs) - 1)
            kb = statistics.median(cap) / 1024 if cap else 0
            bw = [x for x, _ in pairs]
            spread = 100.0 * (max(bw) - min(bw)) / b if len(bw) > 1 else 0.0
            sec.add_goal(f"stress-ng {name}: at most 3% slower", f"{slow:+.1f}%", slow <= 3.0,
                         report.points(slow - 3.0),
                         STRESSOR_COST[name].format(
                             kb=kb, rate=b, create=create_us, create_noperf=create_noperf_us,
                             switches=switch_text(extra_us, statistics.median(switches[bare.key]),
                                                  statistics.median(switches[probe.key]), cpus,
                                                  stopped)) +
                         (f"; the probe's own threads (one per process) used {sampler[0]:.1f}% "
                          f"of the machine" if sampler else "") +
                         f"; the rounds' throughput ratios range {ratio_spread(ratios)}, and "
                         f"its runs without any tool alone over {spread:.0f}% of their median "
                         f"({len(bw)} runs)")
    return sec
