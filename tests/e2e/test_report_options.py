"""`threadmon report --top N --thread PATTERN` narrows the text report (the
launcher hands both to threadmon-report)."""
import json
import os
import re
import signal
import subprocess
import sys

import tmtest
from tmtest import check, launcher

ARGS = ["--workers", "4", "--iterations", "500", "--items", "20"]


def state_rows(text):
    """The thread rows of the "Thread states" table."""
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if re.match(r"thread +life s", l)), None)
    if not check(head is not None, f"no thread states table in {text[:300]!r}"):
        return []
    rows = []
    for line in lines[head + 1:]:
        if not re.match(r"\d+ ", line):
            break
        rows.append(line)
    return rows


def test_top_and_thread():
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    proc = launcher("report", "--top", "2", rec.capture)
    check(proc.returncode == 0, f"report --top 2 exited {proc.returncode}: {proc.stderr.strip()}")
    rows = state_rows(proc.stdout)
    check(len(rows) == 2, f"{len(rows)} thread rows with --top 2: {rows}")
    more = len(rec.report["threads"]) - 2
    check(f"… and {more} more threads" in proc.stdout, f"no '… and {more} more threads' line")

    proc = launcher("report", "--thread", "cpp-worker-*", "--thread", "cpp-producer", rec.capture)
    rows = state_rows(proc.stdout)
    names = sorted(r.split()[1] for r in rows)
    check(names == ["cpp-producer"] + [f"cpp-worker-{i}" for i in range(4)],
          f"--thread picked {names}")

    # A report cut short by a full disk is said, never taken as whole.
    if os.path.exists("/dev/full"):
        for how in ([], ["--json"]):
            with open("/dev/full", "w") as full:
                proc = subprocess.run([tmtest.REPORT, *how, rec.capture], stdout=full,
                                      stderr=subprocess.PIPE, text=True, timeout=60)
            lines = proc.stderr.strip().splitlines()
            check(proc.returncode == 1 and len(lines) == 1 and "writing the report" in lines[0],
                  f"report {how} to a full disk: exit {proc.returncode}, {proc.stderr!r}")



def test_launcher_read_options():
    """The launcher hands threadmon-report the options the user guide gives
    `threadmon report` (--check, --stream, --whole, --window, --segment);
    before, each was "unrecognized arguments"."""
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    note = "Read a window at a time"
    for how, streamed in ((["--stream", "--window", "1", "--segment", "2"], True),
                          (["--window", "1"], True), (["--whole"], False), ([], False)):
        proc = launcher("report", "--check", *how, rec.capture)
        check(proc.returncode == 0, f"report --check {how} exited {proc.returncode}: "
              f"{proc.stderr.strip()[-300:]!r}")
        check((note in proc.stdout) == streamed and ("1.0 s window" in proc.stdout) == streamed,
              f"report {how}: streamed note {'missing' if streamed else 'present'}")
    proc = launcher("report", "--window", "0", rec.capture)
    check(proc.returncode != 0 and "--window wants seconds from 1 to 3600, not '0'" in proc.stderr,
          f"report --window 0: exit {proc.returncode}, {proc.stderr!r}")

    # export takes them too (user guide, "Export for Perfetto, Chrome tracing and pprof").
    for how in (["--stream", "--window", "1", "--segment", "2"], ["--whole"]):
        out = os.path.join(tmtest.Temp.dir(), f"read{len(how)}.json")
        proc = launcher("export", "--format", "chrome", *how, "-o", out, rec.capture)
        check(proc.returncode == 0 and os.path.getsize(out) > 0,
              f"export {how}: exit {proc.returncode}, {proc.stderr.strip()[-300:]!r}")
    proc = launcher("export", "--format", "chrome", "--window", "0", "-o", os.devnull,
                    rec.capture)
    check(proc.returncode != 0 and "--window wants a number of seconds, not '0'" in proc.stderr,
          f"export --window 0: exit {proc.returncode}, {proc.stderr!r}")


def test_closed_output_ends_quietly():
    """`threadmon report F | head` ends as threadmon-report does run alone:
    killed by SIGPIPE, nothing on stderr. The launcher (Python, which ignores
    SIGPIPE) used to hand that on through its exec, and the report said
    "writing the report: Broken pipe"."""
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    for command in (["report", "--json"], ["export", "--format", "chrome", "-o", "-"],
                    ["diff"]):
        files = [rec.capture] * (2 if command == ["diff"] else 1)
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run([sys.executable, tmtest.LAUNCHER, *command, *files],
                                  stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(write_end)
        check(proc.returncode == -signal.SIGPIPE and proc.stderr == "",
              f"threadmon {command[0]} into a closed pipe: exit {proc.returncode}, {proc.stderr!r}")


def test_waits_longer_than_a_window():
    """Read a window at a time, waits longer than a window hold the
    invariants: an object's counter takes a wait whole at its end, so only
    the merged windows can be held against it (before: "waits of 1700 ms in
    a window of 1000 ms" for every such wait), and the waits are those of a
    whole read."""
    tmtest.require_report()
    for name, args in (("cond_wait", ["--delay-ms", "1300", "--repeats", "3"]),
                       ("mutex_hold", ["--hold-ms", "1200", "--rounds", "3"])):
        rec = tmtest.recorded(name, args)
        whole, streamed = (subprocess.run([tmtest.REPORT, *how, "--json", "--check", rec.capture],
                                          capture_output=True, text=True, timeout=60)
                           for how in (["--whole"], ["--stream", "--window", "1"]))
        for how, proc in (("whole", whole), ("streamed", streamed)):
            check(proc.returncode == 0, f"{name}: report --{how} --check exited {proc.returncode}: "
                  f"{proc.stderr.strip()[-600:]}")
        a, b = (json.loads(p.stdout)["sync_objects"] for p in (whole, streamed))
        waits = lambda objs: {o["id"]: round(o["wait_s"], 6) for o in objs}
        check(waits(a) == waits(b), f"{name}: waits read whole {waits(a)}, streamed {waits(b)}")
        check(max(waits(a).values(), default=0) > 1.2, f"{name}: no wait longer than a window: "
              f"{waits(a)}")

tmtest.main(globals())
