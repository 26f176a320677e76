"""The launcher runs programs faithfully: exit status, signals, Ctrl-C,
LD_PRELOAD kept, and the one closing line."""
import os
import signal
import subprocess
import sys
import time

import tmtest
from tmtest import LAUNCHER, check, launcher, workload


def capture_path(name):
    return os.path.join(tmtest.Temp.dir(), name + ".tmcap")


def test_exit_status_propagates():
    tmtest.require_probe()
    out = capture_path("exit7")
    proc = launcher("record", "-o", out, "--", "sh", "-c", "exit 7")
    check(proc.returncode == 7, f"exit status {proc.returncode}, expected 7")
    lines = proc.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith(f"threadmon: wrote {out} (") and
          lines[0].endswith(f"see: threadmon report {out}"), f"closing line {proc.stderr!r}")


def test_signal_death_propagates():
    tmtest.require_probe()
    proc = launcher("record", "-o", capture_path("term"), "--", "sh", "-c", "kill -TERM $$")
    check(proc.returncode == 128 + signal.SIGTERM,
          f"exit status {proc.returncode}, expected {128 + signal.SIGTERM}")
    check("killed by SIGTERM" in proc.stderr, f"no signal named in {proc.stderr!r}")


def test_script_with_shebang_runs():
    tmtest.require_probe()
    script = os.path.join(tmtest.Temp.dir(), "hello.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho script-ran\nexit 3\n")
    os.chmod(script, 0o755)
    proc = launcher("record", "-o", capture_path("script"), "--", script)
    check(proc.returncode == 3 and "script-ran" in proc.stdout,
          f"script: status {proc.returncode}, stdout {proc.stdout!r}, stderr {proc.stderr!r}")


def test_ld_preload_is_appended():
    tmtest.require_probe()
    env = dict(os.environ, LD_PRELOAD="libm.so.6")
    proc = launcher("record", "-o", capture_path("preload"), "--", "sh", "-c",
                    'echo "$LD_PRELOAD"', env=env)
    got = proc.stdout.strip()
    check(got.startswith("libm.so.6:") and got.endswith("libthreadmon.so"),
          f"LD_PRELOAD in the program was {got!r}")


def test_ctrl_c_leaves_readable_capture():
    """SIGINT to the whole process group, as a terminal's Ctrl-C does."""
    tmtest.require_report()
    out = capture_path("ctrl_c")
    proc = subprocess.Popen([sys.executable, LAUNCHER, "record", "-o", out, "--",
                             workload("spin_sleep"), "--repeats", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    # Interrupt once the probe is streaming (a few ticks are in the file).
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(out) and os.path.getsize(out) > 8192:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise tmtest.Failed("the launcher did not finish after Ctrl-C")
    check(proc.returncode == 128 + signal.SIGINT,
          f"exit status {proc.returncode}, expected {128 + signal.SIGINT}")
    check("killed by SIGINT" in err and f"wrote {out}" in err, f"stderr {err!r}")
    report = tmtest.report_json(out, expect_ok=False)  # 2 = cut short, still reported
    spinners = [t for t in report.get("threads", []) if str(t.get("name")).startswith("spinner")]
    check(len(spinners) == 2, f"{len(spinners)} spinner threads in the interrupted capture")
    check((report.get("process", {}).get("duration_s") or 0) >= 0.1,
          f"interrupted capture lasts {report.get('process', {}).get('duration_s')} s")


tmtest.main(globals())
