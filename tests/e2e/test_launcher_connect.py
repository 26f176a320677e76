"""`threadmon run` streams to a display: --connect with a token (checked
against a stand-in listener), and --display with the real viewer."""
import os
import re
import signal
import socket

import tmtest
from tmtest import Listener, check, launcher, workload

MAGIC = b"TMCAP\r\n\x1a"


def test_connect_streams_with_token():
    tmtest.require_probe()
    listener = Listener()
    proc = launcher("run", "--connect", f"127.0.0.1:{listener.port}", "--token", "s3cret-t0ken",
                    "--", workload("cond_wait"), "--delay-ms", "50", "--repeats", "3")
    check(proc.returncode == 0, f"run --connect exited {proc.returncode}: {proc.stderr.strip()}")
    streams = [bytes(s) for s in listener.streams if s]
    if not check(len(streams) == 1, f"{len(streams)} connections carried data, expected 1"):
        return
    check(streams[0].startswith(MAGIC), f"stream starts with {streams[0][:16]!r}")
    check(b"s3cret-t0ken" in streams[0][:4096], "the token is not in the stream's Hello")
    check(len(streams[0]) > 1024, f"only {len(streams[0])} bytes streamed")


def test_unreachable_display_is_reported():
    """With --no-check nothing is tested first: the probe tells the launcher
    at the end that it never got through."""
    tmtest.require_probe()
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = launcher("run", "--no-check", "--connect", f"127.0.0.1:{port}", "--", "sleep", "0.3")
    lines = [l for l in proc.stderr.splitlines() if l.startswith("threadmon: ")]
    check(proc.returncode == 0, f"run --no-check exited {proc.returncode}")
    check(len(lines) == 1 and f"127.0.0.1:{port} could not be reached" in lines[0],
          f"expected one 'could not be reached' line: {proc.stderr!r}")


def test_display_starts_and_receives():
    tmtest.require_probe()
    display = os.path.join(tmtest.BUILD, "display", "threadmon-display")
    if not os.path.exists(display):
        raise tmtest.Skip("threadmon-display is not built")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = launcher("run", "--display", "--", workload("cond_wait"), "--delay-ms", "50",
                    "--repeats", "3", env=env)
    found = re.search(r"threadmon-display \(pid (\d+)\) listens on 127\.0\.0\.1:\d+", proc.stderr)
    if found:
        os.kill(int(found.group(1)), signal.SIGTERM)
    check(proc.returncode == 0, f"run --display exited {proc.returncode}: {proc.stderr.strip()}")
    check(found is not None, f"no 'threadmon-display (pid N) listens on' line: {proc.stderr!r}")


tmtest.main(globals())
