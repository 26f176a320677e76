"""tmtest: what every end-to-end test shares.

Runs workloads under the threadmon launcher, reads `threadmon report --json`
and compares it with the truth each workload prints about itself. A test
file defines test_* functions and ends with `tmtest.main(globals())`; checks
collect failures instead of stopping at the first, so one run shows every
mismatch. Exit status: 0 pass, 1 fail, 77 skip (meson's convention).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import traceback

BUILD = os.environ.get("THREADMON_BUILD_ROOT", os.getcwd())
LAUNCHER = os.path.join(BUILD, "scripts", "threadmon")
WORKLOADS = os.path.join(BUILD, "tests", "workloads")
PROBE = os.path.join(BUILD, "probe", "libthreadmon.so")
REPORT = next((p for p in (os.path.join(BUILD, "display", sub, "threadmon-report")
                           for sub in ("", "report")) if os.path.exists(p)),
              os.path.join(BUILD, "display", "threadmon-report"))
SKIP = 77


class Skip(Exception):
    pass


class Failed(Exception):
    pass


_failures = []


def check(cond, message):
    """Records a failed expectation; returns cond so callers can branch."""
    if not cond:
        _failures.append(message)
        print(f"  FAIL {message}")
    return cond


def near(actual, expected, tolerance, what):
    """|actual - expected| <= tolerance (same units)."""
    ok = actual is not None and abs(actual - expected) <= tolerance
    print(f"  {'ok  ' if ok else 'FAIL'} {what}: got {actual}, truth {expected:.3f} "
          f"+-{tolerance:.3f}")
    if not ok:
        _failures.append(f"{what}: got {actual}, expected {expected:.3f} +-{tolerance:.3f}")
    return ok


def require_probe():
    if not os.path.exists(PROBE):
        raise Skip(f"{PROBE} is not built")


def require_report():
    require_probe()
    if not os.path.exists(REPORT):
        raise Skip(f"{REPORT} is not built (display disabled?)")


def workload(name):
    return os.path.join(WORKLOADS, name)


class Temp:
    """A scratch directory, removed unless the test failed."""
    path = None

    @classmethod
    def dir(cls):
        if cls.path is None:
            cls.path = tempfile.mkdtemp(prefix="threadmon-e2e-")
        return cls.path


def launcher(*args, timeout=60, **kwargs):
    """Runs the launcher; returns the CompletedProcess (text mode)."""
    return subprocess.run([sys.executable, LAUNCHER, *args], capture_output=True, text=True,
                          timeout=timeout, **kwargs)


class Listener:
    """A stand-in display: accepts connections and keeps every byte each one
    sends."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.streams = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(30)
        try:
            while True:
                conn, _ = self.sock.accept()
                data = bytearray()
                self.streams.append(data)
                threading.Thread(target=self.read, args=(conn, data), daemon=True).start()
        except OSError:
            pass

    @staticmethod
    def read(conn, data):
        conn.settimeout(30)
        with conn:
            try:
                while chunk := conn.recv(65536):
                    data.extend(chunk)
            except OSError:
                pass


class Recording:
    """A workload recorded with `threadmon record`, with its truth and report."""
    count = 0

    def __init__(self, name, args=(), interval=None, timeout=60, env=None):
        self.name = name
        self.args = list(args)
        Recording.count += 1
        self.capture = os.path.join(Temp.dir(), f"{name}-{Recording.count}.tmcap")
        extra = ["--interval", str(interval)] if interval else []
        self.run = launcher("record", "-o", self.capture, *extra, "--", workload(name), *args,
                            timeout=timeout, **({"env": env} if env else {}))
        if self.run.returncode != 0:
            raise Failed(f"threadmon record {name} exited {self.run.returncode}: "
                         f"{self.run.stderr.strip()}")
        truth_lines = [l for l in self.run.stdout.splitlines() if l.startswith("{")]
        if not truth_lines:
            raise Failed(f"{name} printed no truth line; stdout: {self.run.stdout!r}")
        self.truth = json.loads(truth_lines[-1])
        self.report = report_json(self.capture)
        check_derivation(self.capture)
        if "tree" in self.report:  # it forked: the capture is its tree; the workload is the root
            root = self.report["tree"]["processes"][0]["pid"]
            self.tree = self.report["tree"]
            self.report = next((r["report"] for r in self.report["reports"] if r["pid"] == root),
                               {"threads": []})

    def thread(self, tid):
        """The report's thread with this tid, or None (recorded as a failure)."""
        for t in self.report.get("threads", []):
            if t.get("tid") == tid:
                return t
        check(False, f"thread {tid} missing from the report")
        return None

    def program_threads(self):
        return [t for t in self.report["threads"] if not t.get("probe")]

    def probe_threads(self):
        return [t for t in self.report["threads"] if t.get("probe")]

    def objects(self, kind=None):
        objs = self.report.get("sync_objects", [])
        if kind is None:
            return [o for o in objs if kind_of(o) != "internal"]
        return [o for o in objs if kind_of(o) == kind]


def kind_of(obj):
    """Normalises the kind field ("mutex", "KIND_MUTEX", ...) to "mutex"."""
    return str(obj.get("kind", "")).lower().removeprefix("kind_")


_recordings = {}


def recorded(name, args=()):
    """Recording(name, args), made once per test file and shared by its tests."""
    key = (name, tuple(args))
    if key not in _recordings:
        _recordings[key] = Recording(name, args)
    return _recordings[key]


def check_clean(rec):
    """A clean workload raises no high or medium finding."""
    bad = serious(findings(rec))
    check(not bad, f"{rec.name} {' '.join(rec.args)}: unexpected findings: {describe(bad)}")


def report_json(capture, *options, expect_ok=True):
    proc = subprocess.run([sys.executable, LAUNCHER, "report", "--json", *options, capture],
                          capture_output=True, text=True, timeout=60)
    if expect_ok and proc.returncode != 0:
        raise Failed(f"threadmon report --json exited {proc.returncode}: {proc.stderr.strip()}")
    # Every capture a test makes holds the model's invariants (numbers that
    # cannot be true: modelinvariants.h); the report says each broken one.
    broken = [l for l in proc.stderr.splitlines() if "invariant broken:" in l]
    if expect_ok and broken:
        raise Failed("impossible numbers in the report:\n  " + "\n  ".join(broken))
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise Failed(f"threadmon report --json printed no JSON ({e}); stderr: "
                     f"{proc.stderr.strip()}") from e


DERIVE_CHECK = os.path.join(BUILD, "display", "test_model_derive")


def check_derivation(capture):
    """The capture read frame by frame, derived as it goes (the live display),
    ends as read whole (display/tests/test_model_derive.cpp)."""
    if not os.path.exists(DERIVE_CHECK):
        return
    env = {k: v for k, v in os.environ.items() if k != "THREADMON_FUZZ_REGRESSIONS"}
    env["THREADMON_DERIVE_CAPTURES"] = capture
    proc = subprocess.run([DERIVE_CHECK], capture_output=True, text=True, timeout=120, env=env)
    check(proc.returncode == 0, f"{os.path.basename(capture)} derived frame by frame differs "
          f"from a whole read:\n{proc.stdout[-4000:]}{proc.stderr[-1000:]}")


def check_process(rec, status=0):
    """Checks every recording shares: the process, the probe thread, the CPUs."""
    proc = rec.report.get("process", {})
    check(proc.get("exit_status") == status,
          f"process.exit_status is {proc.get('exit_status')}, expected {status}")
    check(os.path.basename(str(proc.get("exe", ""))) == rec.name,
          f"process.exe is {proc.get('exe')!r}, expected .../{rec.name}")
    check(len(rec.probe_threads()) == 1,
          f"{len(rec.probe_threads())} threads flagged as the probe's, expected 1")
    mains = [t for t in rec.report["threads"] if t.get("main")]
    check(len(mains) == 1, f"{len(mains)} threads flagged main, expected 1")
    check(len(rec.report.get("cpus", [])) == os.cpu_count(),
          f"{len(rec.report.get('cpus', []))} CPUs reported, this machine has {os.cpu_count()}")


def require_key(container, key, what):
    """Skips (77) while a report key that a not-yet-landed feature adds is
    missing. Only absence skips: a present key with a wrong value fails."""
    if key not in container:
        raise Skip(f"{what} has no '{key}' key yet (feature not built)")
    return container[key]


def findings(rec, kind=None):
    """The report's findings (of one kind); skips while the report has none."""
    found = require_key(rec.report, "findings", "threadmon report --json")
    return [f for f in found if kind is None or f.get("kind") == kind]


def serious(found):
    """The findings of severity high or medium."""
    return [f for f in found if f.get("severity") in ("high", "medium")]


def describe(found):
    """One line per finding, for failure messages."""
    return "; ".join(f"{f.get('kind')}/{f.get('severity')}: {f.get('message')}" for f in found) \
        or "no findings"


def object_by_symbol(rec, symbol):
    """The sync object whose symbol is `symbol`, or None (a failure)."""
    objs = [o for o in rec.report.get("sync_objects", [])
            if o.get("symbol") == symbol]
    check(len(objs) == 1, f"{len(objs)} sync objects named {symbol}, expected 1")
    return objs[0] if objs else None


def mentions(text, *words):
    """Checks that a message names every word (a thread, object, function)."""
    missing = [w for w in words if w not in str(text)]
    return check(not missing, f"message lacks {missing}: {text!r}")


def other_cpu_share(rec):
    """Share of the machine's CPU time other processes used during the
    recording (the CPUs' busy time less the program's own)."""
    cpus = rec.report.get("cpus") or []  # percent of each CPU over the run
    duration = rec.report["process"].get("duration_s") or 0
    if not cpus or not duration:
        return 0.0
    busy = sum(100 - (c.get("idle") or 0) - (c.get("iowait") or 0) for c in cpus) / 100 * duration
    program = sum(sum((t.get("cpus") or {}).values()) for t in rec.program_threads())
    return (busy - program) / (duration * len(cpus))


def child_pid(parent, name):
    """The pid of parent's child whose command (comm) is name, or None."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if comm == name[:15] and int(stat[stat.rindex(")") + 2:].split()[1]) == parent:
            return int(entry)
    return None


def state(thread, name):
    return (thread or {}).get("states", {}).get(name)


def main(tests):
    """Runs the test_* functions of a module; exits 0, 1 or 77."""
    cases = [(n, f) for n, f in sorted(tests.items()) if n.startswith("test_") and callable(f)]
    skipped = 0
    for name, func in cases:
        print(f"== {name}")
        before = len(_failures)
        try:
            func()
        except Skip as e:
            print(f"  SKIP {e}")
            skipped += 1
        except Failed as e:
            check(False, str(e))
        except Exception:  # a crash in a test is a failure with its traceback
            traceback.print_exc()
            _failures.append(f"{name} raised")
        print(f"   {'FAILED' if len(_failures) > before else 'done'}")
    if _failures:
        print(f"{len(_failures)} check(s) failed; scratch files kept in {Temp.path}")
        sys.exit(1)
    if Temp.path and os.environ.get("THREADMON_KEEP_SCRATCH"):
        print(f"scratch files kept in {Temp.path} (THREADMON_KEEP_SCRATCH)")
    elif Temp.path:
        shutil.rmtree(Temp.path, ignore_errors=True)
    sys.exit(SKIP if skipped == len(cases) else 0)
