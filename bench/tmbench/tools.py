"""The tools a benchmark can run under: none, threadmon, LTTng, valgrind.

Each tool turns a command into the command it runs under the tool, and says
why it is unavailable when it is. Slow tools divide iteration counts by
ops_divisor; results are per operation, so counts do not change them."""
import os
import resource
import shutil
import subprocess
import tempfile
import time

from . import procrun

LTTNG_WRAPPER = "liblttng-ust-pthread-wrapper.so"
LTTNG_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]


class RunResult:
    def __init__(self, stdout, wall, capture_bytes, inspected=None, switches=0):
        self.stdout = stdout
        self.wall = wall
        self.capture_bytes = capture_bytes
        self.inspected = inspected  # what inspect(run_dir) returned
        self.switches = switches  # context switches of the process and all it waited for


class Tool:
    key = "none"
    label = "no tool"
    ops_divisor = 1

    def unavailable_reason(self):
        return None

    def launch(self, argv, run_dir):
        """Returns (argv, extra environment) for running argv under the tool."""
        return argv, {}

    def finish(self, run_dir):
        """Called after the run; returns the bytes the tool recorded."""
        return 0

    def close(self):
        pass


class NoTool(Tool):
    pass


class Threadmon(Tool):
    key = "threadmon"
    label = "threadmon"

    def __init__(self, build_dir, interval_ms=10, perf=True):
        self.lib = os.path.abspath(os.path.join(build_dir, "probe", "libthreadmon.so"))
        self.interval_ms = interval_ms
        self.perf = perf
        self.switch_limit = None  # THREADMON_MAX_SWITCH_RATE; None: the probe's default
        self.follow = True  # THREADMON_FOLLOW: a capture for each forked child
        self.compress = None  # THREADMON_COMPRESS; None: the probe's default (zstd level 3)
        self.tree = True  # THREADMON_TREE, as `threadmon record` sets it: lazy children
        if not perf:
            self.key = "threadmon-noperf"
            self.label = "threadmon, THREADMON_PERF=0"

    def with_interval(self, interval_ms):
        t = Threadmon.__new__(Threadmon)
        t.__dict__.update(self.__dict__)
        t.interval_ms = interval_ms
        return t

    def keeping_switches(self):
        """The same probe with switch records whatever the switch rate: what they cost."""
        t = self.with_interval(self.interval_ms)
        t.switch_limit = 0
        t.key = "threadmon-records"
        t.label = "threadmon, THREADMON_MAX_SWITCH_RATE=0"
        return t

    def not_following(self):
        """The same probe with THREADMON_FOLLOW=0: forked children run unprobed."""
        t = self.with_interval(self.interval_ms)
        t.follow = False
        t.key = "threadmon-nofollow"
        t.label = "threadmon, THREADMON_FOLLOW=0"
        return t

    def one_file_per_process(self):
        """The same probe without THREADMON_TREE (no launcher): every followed
        child starts its session at once and writes its own capture."""
        t = self.with_interval(self.interval_ms)
        t.tree = False
        t.key = "threadmon-perprocess"
        t.label = "threadmon, no THREADMON_TREE (a session per child)"
        return t

    def compressing(self, level):
        """The same probe writing zstd level `level` blocks (0: plain frames, format 1)."""
        t = self.with_interval(self.interval_ms)
        t.compress = level
        t.key = f"threadmon-z{level}"
        t.label = f"threadmon, THREADMON_COMPRESS={level}"
        return t

    def without_perf(self):
        """The same probe without perf events: what interposition and /proc cost alone."""
        return Threadmon(os.path.dirname(os.path.dirname(self.lib)), self.interval_ms, perf=False)

    def unavailable_reason(self):
        if not os.path.exists(self.lib):
            return f"{self.lib} not built"
        return None

    def launch(self, argv, run_dir):
        env = {
            "LD_PRELOAD": self.lib,
            # The probe adds .<pid> for children it follows: keep one dir per run.
            "THREADMON_OUTPUT": os.path.join(run_dir, "capture.tmcap"),
            "THREADMON_INTERVAL_MS": str(self.interval_ms),
        }
        if not self.perf:
            env["THREADMON_PERF"] = "0"
        if self.switch_limit is not None:
            env["THREADMON_MAX_SWITCH_RATE"] = str(self.switch_limit)
        if not self.follow:
            env["THREADMON_FOLLOW"] = "0"
        if self.compress is not None:
            env["THREADMON_COMPRESS"] = str(self.compress)
        if self.tree:
            tree = os.path.join(run_dir, "tree")
            os.mkdir(tree)
            open(os.path.join(tree, "lives"), "x").close()
            env["THREADMON_TREE"] = tree
        return argv, env

    def finish(self, run_dir):
        return procrun.dir_bytes(run_dir)


class Valgrind(Tool):
    ops_divisor = 200

    def __init__(self, tool):
        self.tool = tool
        self.key = tool
        self.label = f"valgrind {tool}"

    def unavailable_reason(self):
        return None if shutil.which("valgrind") else "valgrind not installed"

    def launch(self, argv, run_dir):
        return ["valgrind", f"--tool={self.tool}", "-q"] + argv, {}


class Lttng(Tool):
    """LTTng-UST's pthread wrapper, with a session per run that records its
    userspace events to disk (the way someone would use it)."""
    key = "lttng"
    label = "LTTng-UST"
    ops_divisor = 20

    def __init__(self):
        self.wrapper = next((os.path.join(d, LTTNG_WRAPPER) for d in LTTNG_LIB_DIRS
                             if os.path.exists(os.path.join(d, LTTNG_WRAPPER))), None)
        self.daemon = None
        self.counter = 0

    def unavailable_reason(self):
        if not shutil.which("lttng") or not shutil.which("lttng-sessiond"):
            return "lttng-tools not installed"
        if not self.wrapper:
            return f"{LTTNG_WRAPPER} not found (liblttng-ust-dev)"
        return None

    def _lttng(self, *args):
        subprocess.run(["lttng", "--quiet"] + list(args), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

    def _ensure_daemon(self):
        if self.daemon is not None:
            return
        if subprocess.run(["lttng", "list"], capture_output=True).returncode == 0:
            self.daemon = False  # someone else's daemon is already running
            return
        # Started in the foreground so that we own it by pid and stop it at the end.
        self.daemon = subprocess.Popen(["lttng-sessiond", "--no-kernel"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["lttng", "list"], capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise procrun.RunError("lttng-sessiond did not come up")

    def _session(self):
        return f"tmbench-{os.getpid()}-{self.counter}"

    def launch(self, argv, run_dir):
        self._ensure_daemon()
        self.counter += 1
        name = self._session()
        self._lttng("create", name, f"--output={os.path.join(run_dir, 'trace')}")
        self._lttng("enable-event", "--userspace", "--session", name, "lttng_ust_pthread:*")
        self._lttng("start", name)
        return argv, {"LD_PRELOAD": self.wrapper}

    def finish(self, run_dir):
        name = self._session()
        self._lttng("stop", name)  # waits until the trace is on disk
        size = procrun.dir_bytes(run_dir)
        self._lttng("destroy", name)
        return size

    def close(self):
        if self.daemon:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
            self.daemon = None


def _child_switches():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_nvcsw + r.ru_nivcsw


def run_under(tool, argv, timeout=300, stdout_path=None, merge_stderr=False, inspect=None):
    """Runs argv under tool in a fresh scratch directory; returns a RunResult.
    inspect(run_dir), when given, looks at what the tool left there (a
    capture) before the directory goes."""
    run_dir = tempfile.mkdtemp(prefix="tmbench-")
    try:
        full_argv, env = tool.launch(argv, run_dir)
        before = _child_switches()
        try:
            text, wall = procrun.run(full_argv, env=env, timeout=timeout,
                                     stdout_path=stdout_path, merge_stderr=merge_stderr)
        finally:
            size = tool.finish(run_dir)
        return RunResult(text, wall, size, inspect(run_dir) if inspect else None,
                         _child_switches() - before)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
