"""The launcher refuses what cannot run, in one line each (what LD_PRELOAD
cannot reach is watched from outside: test_launcher_outside.py).

Needs no probe: every check here happens before the program would start.
"""
import os

import tmtest
from tmtest import check, launcher, workload


def expect_error(args, status, words):
    proc = launcher(*args)
    lines = proc.stderr.strip().splitlines()
    shown = " ".join(args)
    check(proc.returncode == status, f"'{shown}' exited {proc.returncode}, expected {status}")
    check(len(lines) == 1, f"'{shown}' printed {len(lines)} lines on stderr, expected 1: "
          f"{proc.stderr!r}")
    check(lines[:1] and lines[0].startswith("threadmon: "), f"'{shown}' error lacks the prefix")
    for w in words:
        check(w in proc.stderr, f"'{shown}' error does not mention {w!r}: {proc.stderr.strip()!r}")
    check(proc.stdout == "", f"'{shown}' wrote to stdout: {proc.stdout!r}")


def test_missing_command():
    expect_error(["record", "-o", "x.tmcap", "--", "no-such-command-xyz"], 127,
                 ["no-such-command-xyz", "not found"])
    expect_error(["record", "-o", "x.tmcap", "--", "./no/such/file"], 127, ["no such file"])


def test_attach_usage():
    """-p watches a running process (test_attach.py); what does not go with
    it is refused in one line."""
    expect_error(["record", "-o", "x.tmcap", "-p", "12x"], 2, ["-p wants PID[,PID...]", "12x"])
    expect_error(["record", "-o", "x.tmcap", "-p", "1234", "--", "true"], 2,
                 ["either -p PID or a command"])
    expect_error(["record", "--last", "60s", "-o", "x.tmcap", "-p", "1234"], 2,
                 ["--last and --trigger"])
    expect_error(["run", "--display", "--connect", "127.0.0.1:1", "-p", "1234"], 2,
                 ["exactly one of --connect"])
    expect_error(["record", "-o", "x.tmcap", "--duration", "5", "--", "true"], 2,
                 ["--duration goes with -p"])


def test_not_executable():
    plain = os.path.join(tmtest.Temp.dir(), "plain.txt")
    with open(plain, "w") as f:
        f.write("not a program\n")
    expect_error(["record", "-o", "x.tmcap", "--", plain], 126, ["not executable"])
    expect_error(["record", "-o", "x.tmcap", "--", tmtest.Temp.dir()], 126, ["directory"])


def test_script_interpreter_is_checked():
    """A #! script is judged by its interpreter (a static one is watched
    from outside: test_launcher_outside.py)."""
    missing = os.path.join(tmtest.Temp.dir(), "via_missing.sh")
    with open(missing, "w") as f:
        f.write("#!/no/such/interpreter\n")
    os.chmod(missing, 0o755)
    expect_error(["record", "-o", "x.tmcap", "--", missing], 127, ["/no/such/interpreter"])


def test_usage_errors():
    expect_error(["record", "--", "true"], 2, ["-o"])
    expect_error(["record", "-o", "x.tmcap"], 2, ["no command"])
    # An unknown option is said by its command, whose --help lists the right ones.
    for command, rest in (("record", ["-o", "x.tmcap", "--", "true"]), ("report", ["x.tmcap"]),
                          ("export", ["--format", "pprof", "x.tmcap"]), ("diff", ["a", "b"])):
        expect_error([command, "--bogus", *rest], 2,
                     [f"threadmon: {command}: unrecognized arguments: --bogus",
                      f"(see threadmon {command} --help)"])
    expect_error(["record", "-o", "x.tmcap", "--interval", "zero", "--", "true"], 2, ["--interval"])
    expect_error(["frobnicate"], 2, ["frobnicate", "record, run, report, export, diff, receive"])
    # The internal commands (--ssh's far end, the display's dialog) are not offered.
    proc = launcher("frobnicate")
    check("serve-stdio" not in proc.stderr and "ps-ssh" not in proc.stderr,
          f"an unknown command's error lists the internal ones: {proc.stderr!r}")
    expect_error(["run", "--", "true"], 2, ["--connect"])
    expect_error(["run", "--connect", "no-port-here", "--", "true"], 2, ["HOST:PORT"])
    expect_error(["record", "-o", "x.tmcap", "--trigger-limit", "2", "--", "true"], 2,
                 ["--trigger-limit", "--last"])
    expect_error(["record", "--last", "5s", "--trigger-after", "soon", "-o", "x.tmcap", "--",
                  "true"], 2, ["--trigger-after", "soon"])
    expect_error(["record", "--last", "5s", "--trigger-limit", "many", "-o", "x.tmcap", "--",
                  "true"], 2, ["--trigger-limit", "many"])


def test_unwritable_output():
    """Refused before the program starts: it would otherwise run unprobed."""
    expect_error(["record", "-o", "/no/such/dir/x.tmcap", "--", "sh", "-c", "echo ran"], 2,
                 ["cannot write /no/such/dir/x.tmcap", "No such file or directory"])
    if os.path.isdir("/sys/kernel"):  # refused even to root
        expect_error(["record", "-o", "/sys/kernel/x.tmcap", "--", "sh", "-c", "echo ran"], 2,
                     ["cannot write /sys/kernel/x.tmcap"])
    # A device or pipe (root's -o /dev/null) is never replaced by a capture.
    fifo = os.path.join(tmtest.Temp.dir(), "sink.fifo")
    os.mkfifo(fifo)
    expect_error(["record", "-o", fifo, "--", "sh", "-c", "echo ran"], 2,
                 [fifo, "not a regular file"])
    check(os.path.exists(fifo) and not os.path.isfile(fifo), "the pipe at -o is kept")
    kept = os.path.join(tmtest.Temp.dir(), "probe-check.tmcap")
    proc = launcher("record", "-o", kept, "--", "true")
    check(proc.returncode == 0, f"record to a writable path exited {proc.returncode}")


def test_blank_token():
    """A token of only spaces (an unset variable in quotes) protects nothing."""
    expect_error(["run", "--connect", "127.0.0.1:1", "--token", "   ", "--", "true"], 2,
                 ["white space"])
    proc = launcher("run", "--connect", "127.0.0.1:1", "--", "true",
                    env=dict(os.environ, THREADMON_TOKEN=" \t"))
    check(proc.returncode == 2 and "white space" in proc.stderr,
          f"THREADMON_TOKEN of blanks: exit {proc.returncode}, {proc.stderr!r}")


def test_unreachable_display():
    expect_error(["run", "--connect", "127.0.0.1:1", "--", "true"], 2, ["cannot reach", "127.0.0.1:1"])


def test_help_and_version():
    for args in (["--help"], ["record", "--help"], ["run", "--help"], ["report", "--help"]):
        proc = launcher(*args)
        check(proc.returncode == 0 and "usage: threadmon" in proc.stdout,
              f"'threadmon {' '.join(args)}' exited {proc.returncode}: {proc.stdout[:80]!r}")
    proc = launcher("--version")
    check(proc.returncode == 0 and proc.stdout.startswith("threadmon "),
          f"--version printed {proc.stdout!r}")


tmtest.main(globals())
