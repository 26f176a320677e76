"""Every command prints its --help (and --version) and exits 0 anywhere,
including a machine without a display server, where Qt's GUI cannot start."""
import os
import subprocess
import sys

import tmtest
from tmtest import LAUNCHER, check

DISPLAY = os.path.join(tmtest.BUILD, "display", "threadmon-display")

# As on a server reached over ssh without X forwarding.
NO_DISPLAY_ENV = {k: v for k, v in os.environ.items()
                  if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=NO_DISPLAY_ENV,
                          stdin=subprocess.DEVNULL)


def expect_prints(argv, words):
    proc = run(argv)
    shown = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))
    check(proc.returncode == 0, f"'{shown}' exited {proc.returncode}: {proc.stderr.strip()[-300:]!r}")
    for w in words:
        check(w in proc.stdout, f"'{shown}' printed no {w!r}: {proc.stdout[:200]!r}")


def test_launcher_help():
    for sub in ([], ["record"], ["run"], ["report"]):
        expect_prints([sys.executable, LAUNCHER, *sub, "--help"], ["usage: threadmon"])
    expect_prints([sys.executable, LAUNCHER, "--version"], ["threadmon "])


def test_display_help_without_a_display_server():
    if not os.path.exists(DISPLAY):
        raise tmtest.Skip("threadmon-display is not built")
    for flag in ("--help", "-h"):
        expect_prints([DISPLAY, flag], ["Usage:", "--listen", "--token"])
    for flag in ("--version", "-v"):
        expect_prints([DISPLAY, flag], ["threadmon-display "])


def test_run_display_without_a_display_server():
    """Said in one line before anything starts, not Qt's abort ("status -6")."""
    proc = run([sys.executable, LAUNCHER, "run", "--display", "--", "true"])
    check(proc.returncode == 2, f"run --display without X exited {proc.returncode}")
    check(proc.stderr.count("\n") == 1 and "no display" in proc.stderr
          and "DISPLAY and WAYLAND_DISPLAY are unset" in proc.stderr,
          f"run --display without X said {proc.stderr!r}")


def test_attach_tools_help():
    for tool, words in (("threadmon-attach", ["usage: threadmon-attach"]),
                        ("threadmon-attach-peek", ["usage: threadmon-attach-peek", "deadlock"])):
        path = os.path.join(tmtest.BUILD, "attach", tool)
        if not os.path.exists(path):
            raise tmtest.Skip(f"{tool} is not built")
        expect_prints([path, "--help"], words)


def test_report_help():
    if not os.path.exists(tmtest.REPORT):
        raise tmtest.Skip("threadmon-report is not built")
    expect_prints([tmtest.REPORT, "--help"], ["usage: threadmon-report"])


def test_tools_usage_errors_are_one_line():
    """A mistyped flag is named in one line pointing at --help, not answered
    with the whole usage."""
    tools = {name: os.path.join(tmtest.BUILD, "display", sub, name)
             for name, sub in (("threadmon-export", "export"), ("threadmon-diff", "export"))}
    tools["threadmon-report"] = tmtest.REPORT
    cases = [("threadmon-report", ["--bogus", "x.tmcap"], "unknown option '--bogus'"),
             ("threadmon-report", ["x.tmcap", "--top"], "--top wants a value"),
             ("threadmon-report", ["a.tmcap", "b.tmcap"], "one capture at a time"),
             ("threadmon-report", [], "no capture given"),
             ("threadmon-export", ["--format", "pprof", "--bogus", "x.tmcap"],
              "unknown option '--bogus'"),
             ("threadmon-export", ["x.tmcap"], "--format perfetto, chrome or pprof is needed"),
             ("threadmon-export", ["--format", "pprof"], "no capture given"),
             ("threadmon-diff", ["--noise"], "--noise wants a value"),
             ("threadmon-diff", ["a.tmcap"], "two captures, BEFORE and AFTER, not 1")]
    for tool, argv, words in cases:
        if not os.path.exists(tools[tool]):
            raise tmtest.Skip(f"{tool} is not built")
        proc = run([tools[tool], *argv])
        shown = " ".join([tool, *argv])
        check(proc.returncode == 1, f"'{shown}' exited {proc.returncode}")
        check(proc.stderr.startswith(f"{tool}: {words}") and proc.stderr.count("\n") == 1
              and proc.stderr.endswith(f" (see {tool} --help)\n"), f"'{shown}' said {proc.stderr!r}")


tmtest.main(globals())
