"""A listening display cannot be exhausted by a stranger: idle connections,
a plain (unencrypted) oversized Hello, a TLS handshake that never ends and
a wrong token are each closed and logged, the wrong token is one line and
a non-zero status before the program runs, and a probe with the right token
still gets in and its data arrive. The display runs with 128
descriptors, as on a machine with a low limit."""
import os
import re
import resource
import socket
import struct
import subprocess
import time

import tmtest
from tmtest import check, launcher, workload

DISPLAY = os.path.join(tmtest.BUILD, "display", "threadmon-display")
TOKEN = "right-token"
HEADER = b"TMCAP\r\n\x1a" + struct.pack("<HHI", 1, 0, 0)
ENDED = re.compile(r"session of pid \d+ from \S+ ended: (\d+) frames, (\d+) bytes")


def low_descriptor_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


class Display:
    """threadmon-display on a free port, offscreen, logging to a file."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log_path = os.path.join(tmtest.Temp.dir(), "display.log")
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        env.pop("THREADMON_TOKEN", None)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [DISPLAY, "--listen", f"127.0.0.1:{self.port}", "--token", TOKEN], env=env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=low_descriptor_limit)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise tmtest.Failed(f"the display did not listen: {self.log()!r}")

    def connect(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def closed_within(sock, seconds):
    """True when the display closes sock within seconds (what it sent first
    is read and dropped); keeps sending nothing."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not sock.recv(4096):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def test_strangers_cannot_keep_the_probe_out():
    tmtest.require_probe()
    if not os.path.exists(DISPLAY):
        raise tmtest.Skip("threadmon-display is not built")
    display = Display()
    idle = []
    try:
        oversized = display.connect()
        oversized.sendall(HEADER + struct.pack("<II", 16 << 20, 0) + b"x" * 65536)
        check(closed_within(oversized, 5), "an oversized Hello was not closed within 5 s")

        slow = display.connect()
        slow.sendall(b"\x16\x03\x01\x02\x00")  # a TLS record of 512 bytes, never whole
        started = time.monotonic()
        closed = False
        while not closed and time.monotonic() - started < 8:
            try:
                slow.send(b"\x01")  # one byte a quarter second: never a whole Hello
            except OSError:
                closed = True
            closed = closed or closed_within(slow, 0.25)
        took = time.monotonic() - started
        check(closed and took < 6, f"a slow Hello was closed: {closed}, after {took:.1f} s")

        wrong = launcher("run", "--connect", f"127.0.0.1:{display.port}", "--token", "wrong",
                         "--", "sleep", "1.5")
        check(wrong.returncode == 2, f"wrong-token run exited {wrong.returncode}, expected 2")
        told = [l for l in wrong.stderr.splitlines() if l.startswith("threadmon: the display")]
        check(len(told) == 1 and "wrong token" in told[0],
              f"the launcher did not say the token was refused, once: {wrong.stderr!r}")

        # Enough idle connections to take every descriptor if each cost two,
        # opened just before the probe so that they still wait for a Hello.
        idle = [display.connect() for _ in range(70)]
        right = launcher("run", "--connect", f"127.0.0.1:{display.port}", "--token", TOKEN,
                         "--", workload("spin_sleep"), "--repeats", "3")
        check(right.returncode == 0 and "refused" not in right.stderr,
              f"right-token run exited {right.returncode}: {right.stderr!r}")
        # The display logs the session's end once it has read the last byte.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not ENDED.search(display.log()):
            time.sleep(0.1)
        # Evictions are logged as one summary line a moment after the last.
        while time.monotonic() < deadline and "waited for a Hello" not in display.log():
            time.sleep(0.1)
        check(display.proc.poll() is None, f"the display died: {display.log()[-2000:]!r}")
    finally:
        for s in idle:
            s.close()
        display.stop()
    log = display.log()
    wrong_lines = [l for l in log.splitlines() if "wrong token" in l]
    check(len(wrong_lines) == 1, f"{len(wrong_lines)} wrong-token refusals logged, expected 1 "
          "(the probe must stop reconnecting)")
    evicted = re.search(r"closed (\d+) connections that waited for a Hello", log)
    check(evicted and int(evicted.group(1)) >= 70 - 16,
          f"the idle connections were not closed to make room: {evicted}")
    check(re.search(r"refused .*: this display takes encrypted links only", log),
          "the plain oversized Hello was not logged")
    check(re.search(r"refused .*: no whole Hello within", log), "the slow Hello was not logged")
    ended = ENDED.search(log)
    check(ended and int(ended.group(1)) > 20,
          f"the right probe's data did not arrive: {log[-1500:]!r}")
    if ended:
        print(f"  right probe: {ended.group(1)} frames, {ended.group(2)} bytes")


tmtest.main(globals())
