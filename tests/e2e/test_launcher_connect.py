"""`threadmon run` streams to a display: --connect with a token (checked
against a stand-in listener), and --display with the real viewer."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import tmtest
from tmtest import check, launcher, workload

MAGIC = b"TMCAP\r\n\x1a"


def test_connect_streams_with_token():
    """With a token the stream goes through threadmon-relay over TLS with the
    token's key: the openssl server with that key (the real thing, not ours)
    reads the probe's stream, which carries no token; --token is warned."""
    tmtest.require_probe()
    relay = os.path.join(tmtest.BUILD, "relay", "threadmon-relay")
    if not os.path.exists(relay) or not shutil.which("openssl"):
        raise tmtest.Skip("threadmon-relay or openssl missing (Debian: libssl-dev, openssl)")
    token = "s3cret-t0ken"
    key = subprocess.run(["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
                          "-kdfopt", f"key:{token}", "-kdfopt", "info:threadmon link psk v1",
                          "HKDF"], capture_output=True, text=True, check=True).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Two connections: the launcher's check, then the probe's stream.
    server = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-nocert",
                               "-psk", key.replace(":", ""), "-psk_identity", "threadmon",
                               "-cipher", "ECDHE-PSK-CHACHA20-POLY1305", "-tls1_2", "-quiet",
                               "-naccept", "2"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        proc = launcher("run", "--no-check", "--connect", f"127.0.0.1:{port}", "--token", token,
                        "--", workload("cond_wait"), "--delay-ms", "50", "--repeats", "3")
    finally:
        try:
            stream, _ = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            stream, _ = server.communicate()
    check(proc.returncode == 0, f"run --connect exited {proc.returncode}: {proc.stderr.strip()}")
    check("--token is readable by every local user" in proc.stderr,
          f"--token was not warned about: {proc.stderr!r}")
    check(stream.startswith(MAGIC), f"the TLS server read {stream[:16]!r}")
    check(token.encode() not in stream, "the token is in the stream (the key proves it)")
    check(len(stream) > 1024, f"only {len(stream)} bytes streamed")


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
