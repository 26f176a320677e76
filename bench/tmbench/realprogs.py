"""Real multi-threaded programs: compressors and stress-ng stressors."""
import hashlib
import os
import random
import re
import shutil
import statistics
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
METRIC = re.compile(r"metrc: \[\d+\]\s+(\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def compressors(bare, probe, quick, log, unavailable):
    megabytes, rounds = (4, 1) if quick else (16, 9)
    sec = report.Section(
        "Real programs: compressors",
        ["command", "no tool, s (median)", "threadmon, s", "ratio", "outputs identical",
         "capture bytes/s"],
        f"{megabytes} MiB of generated text-like data (seeded), {rounds} interleaved runs per "
        "tool; stdout written to a file and compared by SHA-256.")
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
            walls = {bare.key: [], probe.key: []}
            digests, rates, err = {}, [], None
            for r in range(rounds):
                for tool in ([bare, probe] if r % 2 == 0 else [probe, bare]):
                    out = os.path.join(work, f"out.{tool.key}")
                    try:
                        res = tl.run_under(tool, argv, timeout=600, stdout_path=out)
                    except procrun.RunError as e:
                        err = str(e)
                        continue
                    walls[tool.key].append(res.wall)
                    digests.setdefault(tool.key, set()).add(_sha256(out))
                    if tool is probe:
                        rates.append(res.capture_bytes / res.wall)
            b = statistics.median(walls[bare.key]) if walls[bare.key] else None
            p = statistics.median(walls[probe.key]) if walls[probe.key] else None
            same = (len(digests.get(bare.key, ())) == 1 and
                    digests.get(bare.key) == digests.get(probe.key))
            cmd = " ".join(argv[:-1]) + " FILE"
            sec.rows.append([f"`{cmd}`", report.fmt(b, 2), report.fmt(p, 2), report.ratio(p, b),
                             "yes" if same else "**no**",
                             report.fmt(statistics.median(rates)) if rates else "n/a"])
            if err:
                sec.notes.append(f"{name}: {err}")
            if b and p:
                slow = 100.0 * (p / b - 1)
                bw = walls[bare.key]
                spread = 100.0 * (max(bw) - min(bw)) / b if len(bw) > 1 else 0.0
                sec.add_goal(f"{name}: at most 3% slower", f"{slow:+.1f}%", slow <= 3.0,
                             f"{slow - 3.0:.1f} points",
                             f"the runs without any tool alone spread over {spread:.0f}% of their "
                             f"median ({len(bw)} runs of {b:.2f} s on a shared 2-vCPU VM); the "
                             "probe's own thread (sampler table) takes its share of a machine "
                             "the program keeps busy")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return sec


def stressors(bare, probe, quick, log, unavailable):
    seconds, rounds = (1, 1) if quick else (3, 3)
    sec = report.Section(
        "Real programs: stress-ng",
        ["stressor", "no tool, bogo ops/s (median)", "threadmon, bogo ops/s", "throughput ratio",
         "capture bytes/s"],
        f"`stress-ng --STRESSOR 2 --timeout {seconds} --metrics-brief`, {rounds} interleaved "
        "runs. stress-ng runs for a fixed time, so the comparison is throughput (bogo ops per "
        "second of real time); the probe follows stress-ng's forked workers.")
    if not shutil.which("stress-ng"):
        unavailable["stress-ng"] = "not installed (run with --install)"
        sec.notes.append("stress-ng not installed")
        return sec
    for name in STRESSORS:
        argv = ["stress-ng", f"--{name}", "2", "--timeout", str(seconds), "--metrics-brief"]
        log(f"  {' '.join(argv)}")
        rates = {bare.key: [], probe.key: []}
        cap, err = [], None
        for r in range(rounds):
            for tool in ([bare, probe] if r % 2 == 0 else [probe, bare]):
                try:
                    res = tl.run_under(tool, argv, timeout=120, merge_stderr=True)
                except procrun.RunError as e:
                    err = str(e)
                    continue
                m = [x for x in METRIC.findall(res.stdout) if x[0] == name]
                if m:
                    rates[tool.key].append(float(m[0][5]))  # bogo ops/s, real time
                if tool is probe:
                    cap.append(res.capture_bytes / res.wall)
        b = statistics.median(rates[bare.key]) if rates[bare.key] else None
        p = statistics.median(rates[probe.key]) if rates[probe.key] else None
        sec.rows.append([name, report.fmt(b), report.fmt(p), report.ratio(p, b),
                         report.fmt(statistics.median(cap)) if cap else "n/a"])
        if err:
            sec.notes.append(f"{name}: {err}")
        if b and p:
            slow = 100.0 * (b / p - 1)
            kb = statistics.median(cap) / 1024 if cap else 0
            sec.add_goal(f"stress-ng {name}: at most 3% slower", f"{slow:+.1f}%", slow <= 3.0,
                         f"{slow - 3.0:.1f} points",
                         f"stress-ng does nothing but {name} operations, so every one pays the "
                         f"wrapper and its event ({kb:,.0f} KiB/s of capture)" +
                         ("; above all each new thread costs the sampler a first full read "
                          "(opening its /proc files, a status read): with thousands of "
                          "threads created per second the sampler thread took about a quarter "
                          "of the process's CPU samples in a profile (perf events off, "
                          "THREADMON_PERF=0, did not help)"
                          if name == "pthread" else ""))
    return sec
