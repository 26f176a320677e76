"""No data is lost without a line saying so: a capture whose disk fills up
(a small tmpfs this test mounts; skipped where mounting is not allowed) or
whose descriptor the program takes with none left to reopen it (a low
RLIMIT_NOFILE) gets one line from the launcher (how long, from when, why) and
one in the report (text and JSON); a thread's state across a gap is not
invented."""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

import tmtest
from tmtest import LAUNCHER, check, launcher, report_json, workload


class Tmpfs:
    """A tmpfs of size bytes mounted on a fresh directory; skips the test
    when it cannot be mounted (not root, no CAP_SYS_ADMIN)."""

    def __init__(self, size):
        self.dir = os.path.join(tmtest.Temp.dir(), f"tmpfs{size}")
        os.mkdir(self.dir, 0o700)
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                               self.dir], capture_output=True, text=True)
        if proc.returncode != 0:
            os.rmdir(self.dir)
            raise tmtest.Skip(f"cannot mount a tmpfs: {proc.stderr.strip()}")

    def fill(self, leave):
        """Takes all but `leave` bytes of the space with a file; returns its path."""
        st = os.statvfs(self.dir)
        path = os.path.join(self.dir, "filler")
        with open(path, "wb") as f:
            f.write(b"\0" * max(st.f_bavail * st.f_frsize - leave, 0))
        return path

    def close(self, keep):
        """Unmounts it; copies the files named in keep out first."""
        for name in keep:
            src = os.path.join(self.dir, name)
            if os.path.exists(src):
                shutil.copy(src, os.path.join(tmtest.Temp.dir(), name))
        subprocess.run(["umount", self.dir], check=False)
        try:
            os.rmdir(self.dir)
        except OSError:
            pass


LOST_LINE = re.compile(r"threadmon: (\S+) lost (\d+) ms of data at ([\d.]+) s \(\d+ KiB of "
                       r"frames\): (.*)")


def closing_says_incomplete(stderr):
    """The launcher's closing line comes after the loss and does not read as
    a whole capture."""
    last = stderr.strip().splitlines()[-1:]
    check(last and last[0].startswith("threadmon: wrote ") and ", incomplete (" in last[0],
          f"the closing line reads as a whole capture: {stderr!r}")


def lost_line(stderr, cause):
    closing_says_incomplete(stderr)
    lines = [m for m in map(LOST_LINE.match, stderr.splitlines()) if m]
    check(len(lines) == 1, f"{len(lines)} lines saying data was lost: {stderr!r}")
    if lines:
        check(cause in lines[0].group(4), f"the cause is {lines[0].group(4)!r}, expected {cause}")
        return int(lines[0].group(2)), float(lines[0].group(3))
    return 0, 0.0


def main_thread(report):
    mains = [t for t in report.get("threads", []) if t.get("main")]
    check(len(mains) == 1, f"{len(mains)} main threads")
    return mains[0] if mains else {}


def test_disk_stays_full():
    """The disk fills during the run and stays full: the capture is cut; the
    launcher says how much was lost and from when, the report that the
    capture ends before the program did."""
    tmtest.require_report()
    fs = Tmpfs(1 << 20)
    try:
        fs.fill(8 * 1024)
        cap = os.path.join(fs.dir, "full.tmcap")
        run = launcher("record", "-o", cap, "--", workload("mutex_hold"), "--rounds", "60",
                       "--hold-ms", "20", "--gap-ms", "5", timeout=60)
        check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr}")
        lost_ms, at_s = lost_line(run.stderr, "disk full")
        wall = [float(m) for m in re.findall(r'"wall_s":([\d.]+)', run.stdout)]
        check(wall, f"no truth line: {run.stdout!r}")
        # What was lost runs from the gap to the program's end.
        if wall:
            tmtest.near(at_s + lost_ms / 1000, wall[0], 0.3, "the loss's end (the run's end)")
        report = report_json(cap, expect_ok=False)
        lost = report["process"].get("data_lost", [])
        check(any("without the program's end" in n for n in lost), f"report data_lost: {lost}")
        text = subprocess.run([sys.executable, LAUNCHER, "report", cap], capture_output=True,
                              text=True, timeout=60).stdout
        check(len(re.findall(r"^  data lost: ", text, re.M)) == len(lost),
              f"the text report's data lost lines: {text[:1500]!r}")
    finally:
        fs.close([])


def test_disk_full_then_space():
    """The disk fills, then gets space back: one gap, said by the launcher
    and the report; the main thread, in pthread_join all the while, reads
    join or unknown across the gap, never sleep."""
    tmtest.require_report()
    fs = Tmpfs(1 << 20)
    try:
        filler = fs.fill(8 * 1024)
        cap = os.path.join(fs.dir, "gap.tmcap")
        child = subprocess.Popen([sys.executable, LAUNCHER, "record", "-o", cap, "--",
                                  workload("mutex_hold"), "--rounds", "120", "--hold-ms", "20",
                                  "--gap-ms", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        # Full once the capture stops growing; space back half a second later.
        sizes = []
        deadline = time.time() + 20
        while time.time() < deadline and child.poll() is None:
            time.sleep(0.1)
            sizes.append(os.path.getsize(cap) if os.path.exists(cap) else 0)
            if len(sizes) > 5 and sizes[-1] and sizes[-1] == sizes[-5]:
                break
        os.unlink(filler)
        out, err = child.communicate(timeout=60)
        check(child.returncode == 0, f"record exited {child.returncode}: {err}")
        lost_ms, at_s = lost_line(err, "disk full")
        check(0 < lost_ms < 3000, f"lost {lost_ms} ms")
        report = report_json(cap)
        lost = report["process"].get("data_lost", [])
        check(len(lost) == 1 and lost[0].startswith("capture gap:"), f"report data_lost: {lost}")
        main = main_thread(report)
        join = tmtest.state(main, "blocked_join") or 0
        sleep = tmtest.state(main, "sleep") or 0
        check(sleep < 5, f"main reads {sleep}% sleep ({join}% join): the gap's state invented")
        check(join > 50, f"main reads {join}% in pthread_join, its whole life but the start")
        # The waiters' states in the gap are the kernel's guess: no finding
        # may blame them for sitting in the kernel there.
        never = [f for f in report.get("findings", []) if f.get("kind") == "never_runs"]
        check(not never, f"never_runs from a gap: {[f.get('message') for f in never]}")
    finally:
        fs.close([])


def test_descriptors_gone():
    """The program takes every descriptor up to its limit (64) and never
    frees one: the probe cannot reopen its capture nor say so; the launcher
    says the capture was not finished, from when, and the report that it
    ends before the program did."""
    tmtest.require_report()
    cap = os.path.join(tmtest.Temp.dir(), "fds.tmcap")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    run = launcher("record", "-o", cap, "--", workload("process_paths"), "dup_all", timeout=60,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)))
    check(run.returncode == 0, f"record exited {run.returncode}: {run.stderr}")
    said = [l for l in run.stderr.splitlines()
            if "fds.tmcap" in l and ("lost" in l or "not finished" in l)]
    check(len(said) == 1, f"{len(said)} lines saying the capture lost data: {run.stderr!r}")
    closing_says_incomplete(run.stderr)
    report = report_json(cap, expect_ok=False)
    lost = report["process"].get("data_lost", [])
    check(lost, f"the report says nothing was lost: {report['process']}")


def test_stream_dropped():
    """The flight recorder stops reading for a second (SIGSTOP) while the
    probe's queue to it is 16 KiB: the probe drops frames; the recorder says
    so in one line (frames dropped, from the Goodbye, which is not dropped)
    and the report of its capture in data_lost, with the program's end."""
    tmtest.require_report()
    cap = os.path.join(tmtest.Temp.dir(), "dropped.tmcap")
    child = subprocess.Popen([sys.executable, LAUNCHER, "record", "--last", "10s", "--interval",
                              "5", "-o", cap, "--", workload("mutex_hold"), "--rounds", "100",
                              "--hold-ms", "10", "--gap-ms", "2"],
                             env=dict(os.environ, THREADMON_NET_BUFFER_KB="16"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    recorder = None
    deadline = time.time() + 20
    while recorder is None and time.time() < deadline and child.poll() is None:
        time.sleep(0.05)
        recorder = tmtest.child_pid(child.pid, "threadmon-flight")
    check(recorder, "no threadmon-flight child")
    if recorder:
        time.sleep(0.3)
        os.kill(recorder, signal.SIGSTOP)
        time.sleep(1.0)
        os.kill(recorder, signal.SIGCONT)
    _, err = child.communicate(timeout=60)
    check(child.returncode == 0, f"record exited {child.returncode}: {err}")
    # The frames dropped are counted in the Goodbye, which waits at the exit
    # for room in the queue the recorder reads again: the end is not lost.
    said = [l for l in err.splitlines() if l.startswith("threadmon: flight recorder: ") and
            (" dropped " in l or "before its Goodbye" in l)]
    check(len(said) == 1 and " dropped " in said[0],
          f"{len(said)} lines saying frames were dropped (the Goodbye's count): {err!r}")
    closing_says_incomplete(err)
    if os.path.exists(cap):
        process = report_json(cap, expect_ok=False)["process"]
        lost = process.get("data_lost", [])
        check(any("frames dropped" in n for n in lost), f"report data_lost: {lost}")
        check(process.get("exit_status") == 0, f"the program's end is lost: {process}")


tmtest.main(globals())
