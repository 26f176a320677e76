"""`threadmon run` streams to a display: --connect with a token (checked
against a stand-in listener), and --display with the real viewer."""
import os
import re
import shutil
import signal
import stat
import subprocess
import time
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
    check("--token on a command line is visible to every local user" in proc.stderr,
          f"no warning that --token is visible in ps: {proc.stderr!r}")


def listening(port):
    """Whether a socket listens on 127.0.0.1:port (from /proc/net/tcp: no
    connection, so nothing in the display's log)."""
    with open("/proc/net/tcp") as f:
        return any(l.split()[1] == f"0100007F:{port:04X}" and l.split()[3] == "0A"
                   for l in f.readlines()[1:])


def test_token_file_reaches_a_real_display():
    """--token-file on both sides: the display takes the session, the probe
    is refused with another file's token, and neither warns."""
    tmtest.require_probe()
    display = os.path.join(tmtest.BUILD, "display", "threadmon-display")
    if not os.path.exists(display):
        raise tmtest.Skip("threadmon-display is not built")
    right, wrong = (os.path.join(tmtest.Temp.dir(), n) for n in ("right.token", "wrong.token"))
    for path, text in ((right, "s3cret\n"), (wrong, "other\n")):
        with open(path, "w") as f:
            f.write(text)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_path = os.path.join(tmtest.Temp.dir(), "display.log")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("THREADMON_TOKEN", None)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([display, "--listen", f"127.0.0.1:{port}", "--token-file", right],
                                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while not listening(port):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise tmtest.Failed("the display did not listen")
            time.sleep(0.1)
        bad = launcher("run", "--connect", f"127.0.0.1:{port}", "--token-file", wrong, "--",
                       "sleep", "0.3", env=env)
        good = launcher("run", "--connect", f"127.0.0.1:{port}", "--token-file", right, "--",
                        workload("cond_wait"), "--delay-ms", "50", "--repeats", "2", env=env)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with open(log_path, errors="replace") as f:
        log = f.read()
    check("wrong token" in bad.stderr, f"the wrong file's token was not refused: {bad.stderr!r}")
    check(good.returncode == 0 and "refused" not in good.stderr,
          f"the right file's token: exit {good.returncode}, {good.stderr!r}")
    check(log.count("accepted") == 1, f"the display accepted {log.count('accepted')} sessions")
    check("visible" not in log + bad.stderr + good.stderr, "a warning without --token")


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
    found = re.search(r"threadmon-display \(pid (\d+)\) listens on unix:(\S+); its log: (\S+)",
                      proc.stderr)
    if found:
        os.kill(int(found.group(1)), signal.SIGTERM)
    check(proc.returncode == 0, f"run --display exited {proc.returncode}: {proc.stderr.strip()}")
    check(found is not None, f"no 'threadmon-display (pid N) listens on unix:' line: {proc.stderr!r}")
    if not found:
        return
    # The socket and the log are in a directory only this user can enter;
    # the display got the session over it.
    private = os.path.dirname(found.group(2))
    st = os.lstat(private)
    check(stat.S_ISDIR(st.st_mode) and st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid(),
          f"{private}: mode {oct(st.st_mode)}, owner {st.st_uid}")
    check(os.path.dirname(found.group(3)) == private, f"the log {found.group(3)} is elsewhere")
    with open(found.group(3)) as f:
        log = f.read()
    check("accepted unix:" in log, f"the display's log shows no session: {log!r}")
    shutil.rmtree(private, ignore_errors=True)


tmtest.main(globals())
