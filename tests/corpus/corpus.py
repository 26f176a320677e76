"""corpus: what the tests of real programs share (tests/corpus/test_*.py).

Each test records a real program (memcached, a JVM, Go, CPython, Rust,
C++20, SQLite) with `threadmon record`, reads `threadmon report --json` and
checks what a user must see: the program's real contention found and named,
and no high or medium finding that is not true of it. Builds on the
end-to-end helpers (tests/e2e/tmtest.py); skips (77) with a reason when a
toolchain or package is missing.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import tmtest  # noqa: E402
from tmtest import Skip, check  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_BUILD = os.path.join(tmtest.BUILD, "tests", "corpus")


def source(name):
    return os.path.join(HERE, name)


def tool(name, *extra_dirs):
    """The path of a program on PATH or in extra_dirs; skips when missing."""
    path = shutil.which(name) or next(
        (os.path.join(d, name) for d in extra_dirs if os.access(os.path.join(d, name), os.X_OK)),
        None)
    if not path:
        raise Skip(f"{name} is not installed")
    return path


def built(name):
    """A corpus program meson built; skips when its toolchain was missing."""
    path = os.path.join(CORPUS_BUILD, name)
    if not os.path.exists(path):
        raise Skip(f"{path} is not built (its compiler or library was missing at setup)")
    return path


class Run:
    """A program recorded under the launcher, with its truth and report."""
    count = 0

    def __init__(self, name, argv, timeout=90, env=None, popen_hook=None):
        tmtest.require_report()
        Run.count += 1
        self.name = name
        self.capture = os.path.join(tmtest.Temp.dir(), f"{name}-{Run.count}.tmcap")
        if popen_hook:
            self.run = popen_hook(self.capture)
        else:
            self.run = tmtest.launcher("record", "-o", self.capture, "--", *argv,
                                       timeout=timeout, env=env)
        print(f"  recorded {' '.join(argv)}: exit {self.run.returncode}")
        lines = [l for l in (self.run.stdout or "").splitlines() if l.startswith("{")]
        self.truth = json.loads(lines[-1]) if lines else {}
        self.report = tmtest.report_json(self.capture)
        for f in self.report.get("findings", []):
            print(f"  finding {f.get('severity')} {f.get('kind')}: {f.get('message')}")

    def findings(self, kind=None):
        return [f for f in self.report.get("findings", []) if kind is None or f.get("kind") == kind]

    def threads(self, prefix=""):
        return [t for t in self.report["threads"]
                if not t.get("probe") and str(t.get("name", "")).startswith(prefix)]

    def cpus(self):
        return len(self.report.get("cpus", [])) or os.cpu_count()


def true_oversubscription(run, f):
    """oversubscribed is true of a program that had more busy threads than CPUs."""
    return f.get("kind") == "oversubscribed" and \
        f.get("evidence", {}).get("busy_threads", 0) > run.cpus()


def no_false_alarm(run, allowed=lambda f: False):
    """No high or medium finding but those `allowed` says are true of the
    program (and a true oversubscription). data_lost is about the recording
    (a machine too busy for the probe): reported, not failed."""
    for f in tmtest.serious(run.findings()):
        if f.get("kind") == "data_lost":
            print(f"  note: the probe lost data on this run: {f.get('message')}")
            continue
        check(allowed(f) or true_oversubscription(run, f),
              f"{run.name}: false alarm {f.get('kind')}/{f.get('severity')}: {f.get('message')}")


def only(run, kind):
    """The one finding of a kind (recorded as a failure when not one)."""
    found = run.findings(kind)
    check(len(found) == 1, f"{run.name}: {len(found)} {kind} findings, expected 1: "
          f"{tmtest.describe(run.findings())}")
    return found[0] if found else {}


def check_streamed_as_whole(run, kind):
    """A long capture's report is read in windows (the default over 10 s):
    kind's findings read in 1 s windows are the whole run's, as a whole read
    gives them (before, gil_contention and java_lock took their worst
    window's figures: on CPython 40% high where the run's was 36% medium)."""
    def found(*how):
        proc = subprocess.run([tmtest.REPORT, "--json", *how, run.capture], capture_output=True,
                              text=True, timeout=60)
        check(proc.returncode == 0, f"threadmon-report {how} exited {proc.returncode}")
        rep = json.loads(proc.stdout) if proc.returncode == 0 else {}
        return {f.get("evidence", {}).get("lock"): f
                for f in rep.get("findings", []) if f.get("kind") == kind}
    whole, streamed = found("--whole"), found("--window", "1")
    check(set(streamed) == set(whole), f"{kind}: 1 s windows {tmtest.describe(streamed.values())}, "
          f"whole {tmtest.describe(whole.values())}")
    for lock, w in whole.items():
        s = streamed.get(lock)
        if s is None:
            continue
        check(s["threads"] == w["threads"], f"{kind} {lock}: 1 s windows name {s['threads']}, "
              f"whole {w['threads']}")
        extra = set(s["evidence"]) - set(w["evidence"]) - {"windows"}
        check(not extra, f"{kind} {lock}: 1 s windows' evidence has {extra}, the whole read's not")
        for k in ("wait_s", "waiters_lifetime_s", "share"):
            a, b = s["evidence"].get(k, -1), w["evidence"].get(k, -1)
            check(abs(a - b) <= 0.005 * abs(b), f"{kind} {lock} {k}: 1 s windows {a}, whole {b}")
        share_s, share_w = s["evidence"].get("share", 0), w["evidence"].get("share", 0)
        check(s["severity"] == w["severity"] or abs(share_s - share_w) <= 0.005 * share_w,
              f"{kind} {lock}: 1 s windows {s['severity']} ({share_s}), "
              f"whole {w['severity']} ({share_w})")


def streamed_findings(capture, kind):
    """kind's findings of a report read in 1 s windows, of each process of
    a process tree's capture (a directory)."""
    paths = sorted(os.path.join(capture, n) for n in os.listdir(capture)
                   if n.endswith(".tmcap")) if os.path.isdir(capture) else [capture]
    found = []
    for path in paths:
        proc = subprocess.run([tmtest.REPORT, "--json", "--window", "1", path],
                              capture_output=True, text=True, timeout=60)
        check(proc.returncode == 0, f"threadmon-report --window 1 {path}: exit {proc.returncode}")
        if proc.returncode == 0:
            found += [f for f in json.loads(proc.stdout).get("findings", []) if f["kind"] == kind]
    return found


def check_attached(capture, seconds):
    """A capture attached (`record -p`) for `seconds` to a server under load
    holds no number past what the window allows (before, on MariaDB: 25-30
    objects waited longer than a 22 s window, one 268 s), read whole and a
    second at a time."""
    for how in (["--whole"], ["--stream", "--window", "1"]):
        checked = subprocess.run([tmtest.REPORT, "--check", *how, capture], capture_output=True,
                                 text=True, timeout=120)
        check(checked.returncode == 0, f"attached, threadmon-report --check {' '.join(how)} exited "
              f"{checked.returncode}: {checked.stderr.strip()[-600:]}")
    report = tmtest.report_json(capture)
    window = report["process"]["duration_s"]
    threads = [t for t in report["threads"] if not t.get("probe")]
    check(window <= seconds + 1, f"attached for {window:.1f} s, asked {seconds}")
    longest = max((o.get("wait_s") or 0 for o in report["sync_objects"]), default=0)
    total = sum(o.get("wait_s") or 0 for o in report["sync_objects"])
    print(f"  attached {window:.1f} s under load: {len(threads)} threads, "
          f"{len(report['sync_objects'])} objects, waits {total:.1f} s, the longest {longest:.2f} s")
    check(longest <= window + 0.02, f"an object waited {longest:.2f} s in {window:.2f} s")
    check(total <= len(threads) * (window + 0.02),
          f"{total:.1f} s of waits by {len(threads)} threads in {window:.2f} s")
    for t in threads:
        check(t["lifetime_s"] <= window + 0.02, f"thread {t['tid']} lived {t['lifetime_s']:.2f} s "
              f"in {window:.2f} s")
