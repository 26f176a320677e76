"""A deadlock streamed live to threadmon-display (offscreen, --listen).

The display has no way to report what it shows from the command line (no
log of findings, and --screenshot renders captures only), so this checks
what can be seen from outside: the viewer takes the whole live stream of a
program that deadlocks and recovers and keeps running with the session
open. That the model finds the cycle while the stream arrives -- tick by
tick, within a second -- is checked through the report in test_deadlock."""
import os
import socket
import subprocess
import time

import tmtest
from tmtest import check, launcher, workload


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def test_display_receives_deadlock_live():
    tmtest.require_probe()
    display = os.path.join(tmtest.BUILD, "display", "threadmon-display")
    if not os.path.exists(display):
        raise tmtest.Skip("threadmon-display is not built")
    port = free_port()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    viewer = subprocess.Popen([display, "--listen", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        if not check(wait_listening(port, viewer), "threadmon-display did not listen within 15 s"):
            return
        run = launcher("run", "--connect", f"127.0.0.1:{port}", "--", workload("deadlock"),
                       "--deadlock-ms", "400")
        check(run.returncode == 0, f"run --connect exited {run.returncode}: {run.stderr.strip()}")
        check('"timed_out":true' in run.stdout, f"deadlock did not form: {run.stdout!r}")
        time.sleep(1.0)  # the viewer applies the last frames and the session's end
        check(viewer.poll() is None, f"threadmon-display exited {viewer.returncode} after a "
              "live deadlock")
    finally:
        viewer.terminate()
        try:
            out, _ = viewer.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            viewer.kill()
            out, _ = viewer.communicate()
    check("rror" not in out, f"threadmon-display printed: {out.strip()!r}")


tmtest.main(globals())
