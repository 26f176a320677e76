"""threadmon report on long captures: capture MB/s and peak RSS (issues 14, 29)."""

import os
import subprocess
import tempfile
import time

from . import report

MIB = 1 << 20


def _run(cmd):
    """Runs cmd (output discarded); returns (wall s, CPU s, peak RSS bytes, status)."""
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stderr.close()
    wall = time.monotonic() - t0
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, p.returncode


def report_scaling(build_dir, quick, log, minutes=None, capture_dir=None):
    """`threadmon-report --json` on `tm-bench-longcap MINUTES 100` captures:
    as a user runs it (streamed: the default for captures over 10 s) and,
    where it fits, read whole."""
    minutes = minutes or ([1, 2] if quick else [1, 10, 60])
    longcap = os.path.join(build_dir, "bench", "tm-bench-longcap")
    tool = os.path.join(build_dir, "display", "threadmon-report")
    sec = report.Section(
        "threadmon report on long captures",
        ["capture", "MB on disk", "read", "wall s", "CPU s", "MB/s of capture (wall)",
         "MB/s per CPU s", "peak RSS MB"],
        "`tm-bench-longcap MINUTES 100 F` (100 busy threads, display/tests/busy_capture.cpp), "
        "then `/usr/bin/time threadmon-report --json F` (the default: 5 s windows, two at "
        "once, for any capture over 10 s) and `--whole` (one model of the whole run) on the "
        "smaller ones. CPU and peak RSS of the report process (wait4).")
    own_dir = capture_dir is None
    capture_dir = capture_dir or tempfile.mkdtemp(prefix="tm-longreport-")
    os.makedirs(capture_dir, exist_ok=True)
    stream_rate, stream_rss, minute_rss = None, 0, None
    try:
        for m in minutes:
            path = os.path.join(capture_dir, f"busy100-{m}min.tmcap")
            if not os.path.exists(path):
                log(f"  writing {m} min of 100 busy threads")
                subprocess.run([longcap, str(m), "100", path], check=True,
                               stdout=subprocess.DEVNULL)
            size = os.path.getsize(path)
            reads = [("default", [])]
            if m <= 5:
                reads.append(("whole", ["--whole"]))
            for label, opts in reads:
                log(f"  report {m} min, {label}")
                wall, cpu, rss, rc = _run([tool, "--json"] + opts + [path])
                if rc != 0:
                    sec.notes.append(f"{m} min {label}: exit status {rc}")
                    continue
                sec.rows.append([f"{m} min", report.fmt(size / 1e6), label, report.fmt(wall),
                                 report.fmt(cpu), report.fmt(size / 1e6 / wall),
                                 report.fmt(size / 1e6 / cpu), report.fmt(rss / 1e6)])
                if label == "default" and m == max(minutes):
                    stream_rate, stream_rss = size / 1e6 / cpu, rss
                if label == "default" and m == 1:
                    minute_rss = rss
    finally:
        if own_dir:
            for f in os.listdir(capture_dir):
                os.unlink(os.path.join(capture_dir, f))
            os.rmdir(capture_dir)
    if minute_rss is not None:
        sec.add_goal("report of 1 min of 100 busy threads in <= 200 MiB RSS (issue 29)",
                     f"{minute_rss / MIB:.0f} MiB", minute_rss <= 200 * MIB,
                     f"{(minute_rss - 200 * MIB) / MIB:.0f} MiB")
    if stream_rate is not None:
        longest = f"{max(minutes)} min"
        sec.add_goal(f"report of {longest} of 100 busy threads in <= 256 MiB RSS",
                     f"{stream_rss / MIB:.0f} MiB", stream_rss <= 256 * MIB,
                     f"{(stream_rss - 256 * MIB) / MIB:.0f} MiB")
        sec.add_goal(f"report of {longest} at >= 200 MB of capture per CPU second",
                     f"{stream_rate:.1f} MB/s", stream_rate >= 200, f"{200 / stream_rate:.0f}x",
                     "the model's fold of every transition and wait (ThreadTimeline, "
                     "SyncActivity) and the per-window queries: docs/benchmarks.md, "
                     "'threadmon report on long captures'")
    return sec


if __name__ == "__main__":
    import argparse
    import sys
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("build_dir")
    ap.add_argument("minutes", nargs="*", type=float)
    ap.add_argument("--captures", help="keep (and reuse) the captures in this directory")
    a = ap.parse_args()
    report.print_section(report_scaling(os.path.abspath(a.build_dir), False,
                                        lambda s: print(s, file=sys.stderr, flush=True),
                                        [m if m != int(m) else int(m) for m in a.minutes] or None,
                                        a.captures))
