"""SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to the launcher alone reach the
program, as a terminal's Ctrl-C does, and the capture is still written and
readable."""
import os
import signal
import subprocess
import sys
import time

import tmtest
from tmtest import LAUNCHER, Listener, check, workload


def interrupt_launcher(sig, args, streaming):
    """Starts the launcher, waits until streaming() says the probe is
    sending, sends sig to the launcher's pid only; returns (status, stderr)."""
    proc = subprocess.Popen([sys.executable, LAUNCHER, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and proc.poll() is None and not streaming():
        time.sleep(0.05)
    os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise tmtest.Failed(f"the program did not end after {sig.name} to the launcher")
    return proc.returncode, err


def record_and_signal(sig):
    out = os.path.join(tmtest.Temp.dir(), f"{sig.name}.tmcap")
    status, err = interrupt_launcher(
        sig, ["record", "-o", out, "--", workload("spin_sleep"), "--repeats", "200"],
        lambda: os.path.exists(out) and os.path.getsize(out) > 8192)
    check(status == 128 + sig, f"{sig.name}: exit status {status}, expected {128 + sig}")
    check(f"killed by {sig.name}" in err and f"wrote {out}" in err, f"{sig.name}: stderr {err!r}")
    report = tmtest.report_json(out, expect_ok=False)
    check((report.get("process", {}).get("duration_s") or 0) >= 0.1,
          f"{sig.name}: the capture holds no run: {report.get('process')}")


def test_sigterm_reaches_the_recorded_program():
    tmtest.require_report()
    record_and_signal(signal.SIGTERM)


def test_sigint_reaches_the_recorded_program():
    tmtest.require_report()
    record_and_signal(signal.SIGINT)


def test_sigquit_reaches_the_recorded_program():
    tmtest.require_report()
    record_and_signal(signal.SIGQUIT)


def test_sighup_reaches_the_recorded_program():
    tmtest.require_report()
    record_and_signal(signal.SIGHUP)


def test_sigterm_reaches_a_streaming_program():
    tmtest.require_probe()
    listener = Listener()
    status, err = interrupt_launcher(
        signal.SIGTERM, ["run", "--connect", f"127.0.0.1:{listener.port}", "--", "sleep", "30"],
        lambda: any(len(s) > 1024 for s in listener.streams))
    check(status == 128 + signal.SIGTERM, f"run: exit status {status}: {err!r}")
    check("killed by SIGTERM" in err, f"run: stderr {err!r}")


tmtest.main(globals())
