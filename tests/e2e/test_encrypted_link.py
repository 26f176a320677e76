"""The encrypted link (docs/user-guide.md, "Remote"): `run --connect
--token-file` streams through threadmon-relay over TLS to `threadmon
receive`. A recording TCP relay in the test sees every byte on the wire:
no token, thread name or symbol. A wrong token, a plain probe to an
encrypted receiver and the reverse each give one line and a non-zero
status; idle strangers do not keep a probe out; wrong keys are slowed; the
real openssl client gets in with the token's key and ECDHE-PSK."""
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import tmtest
from tmtest import check, launcher, workload

RECEIVE = os.path.join(tmtest.BUILD, "display", "threadmon-receive")
RELAY = os.path.join(tmtest.BUILD, "relay", "threadmon-relay")
TOKEN = "tls-e2e-t0ken-8c1f"
LABEL = "threadmon link psk v1"
COND_WAIT = ("--delay-ms", "50", "--repeats", "3")
# What cond_wait's stream names in clear: its threads, their start
# routines' symbol and its executable.
SECRETS = [TOKEN.encode(), b"sleeper", b"signaller", b"cond_wait"]


def require_tools():
    tmtest.require_report()
    for tool in (RECEIVE, RELAY):
        if not os.path.exists(tool):
            raise tmtest.Skip(f"{tool} is not built (libssl-dev missing?)")


def token_file(token, name="token"):
    path = os.path.join(tmtest.Temp.dir(), name)
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """threadmon receive on a free loopback port, captures in a fresh DIR."""

    count = 0

    def __init__(self, token=TOKEN):
        Receiver.count += 1
        self.dir = os.path.join(tmtest.Temp.dir(), f"received-{Receiver.count}")
        self.log_path = self.dir + ".log"
        args = ["receive", "--listen", "127.0.0.1:0", "-o", self.dir]
        if token:
            args[1:1] = ["--token-file", token_file(token, f"receiver-{Receiver.count}")]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, tmtest.LAUNCHER, *args],
                                         stdout=subprocess.PIPE, stderr=log, text=True)
        words = self.proc.stdout.readline().split()
        if len(words) != 2 or words[0] != "listening":
            raise tmtest.Failed(f"threadmon receive did not listen: {self.log()!r}")
        self.port = int(words[1].rpartition(":")[2])

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM: every capture finished. Returns the paths it wrote."""
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=20)
        check(self.proc.returncode == 0, f"receive exited {self.proc.returncode}: {self.log()}")
        return [l[6:].rsplit(" (", 1)[0] for l in out.splitlines() if l.startswith("wrote ")]


class WireTap:
    """A TCP relay that forwards to port and keeps every byte both ways."""

    def __init__(self, port):
        self.target = port
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.wire = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        try:
            while True:
                conn, _ = self.sock.accept()
                up = socket.create_connection(("127.0.0.1", self.target))
                for a, b in ((conn, up), (up, conn)):
                    threading.Thread(target=self.pump, args=(a, b), daemon=True).start()
        except OSError:
            pass

    def pump(self, src, dst):
        try:
            while chunk := src.recv(65536):
                with self.lock:
                    self.wire.extend(chunk)
                dst.sendall(chunk)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def thread_names(report):
    return sorted(t.get("name", "") for t in report["threads"])


def one_line(proc, words, what):
    lines = [l for l in proc.stderr.splitlines() if l.startswith("threadmon")]
    check(proc.returncode != 0, f"{what}: exit {proc.returncode}, expected non-zero")
    check(len(lines) == 1 and all(w in lines[0] for w in words),
          f"{what}: expected one line with {words}: {proc.stderr!r}")


def test_wire_carries_nothing_readable():
    require_tools()
    receiver = Receiver()
    tap = WireTap(receiver.port)
    try:
        run = launcher("run", "--connect", f"127.0.0.1:{tap.port}", "--token-file",
                       token_file(TOKEN), "--", workload("cond_wait"), *COND_WAIT)
        check(run.returncode == 0, f"run exited {run.returncode}: {run.stderr}")
        # The session ends when the receiver has read the stream's end.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "recording pid" not in receiver.log():
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        written = receiver.stop()
    with tap.lock:
        wire = bytes(tap.wire)
    check(len(wire) > 2000, f"only {len(wire)} bytes crossed the wire")
    print(f"  {len(wire)} bytes on the wire, both ways")
    for secret in SECRETS:
        check(secret not in wire, f"{secret!r} is on the wire in clear")
    check(not wire.startswith(b"TMCAP"), "the stream's header is on the wire in clear")
    if not check(len(written) == 1, f"receive wrote {written}, expected one capture"):
        return
    name = os.path.basename(written[0])
    check(name.startswith(f"{socket.gethostname()}-") and name.endswith(".tmcap"),
          f"capture named {name!r}, expected HOST-PID-START.tmcap")
    remote = tmtest.report_json(written[0])
    local = tmtest.Recording("cond_wait", COND_WAIT).report
    check(thread_names(remote) == thread_names(local),
          f"received threads {thread_names(remote)}, a local record: {thread_names(local)}")
    check(remote["process"].get("exit_status") == 0, "the received capture has no exit status")


def test_refusals_are_one_line():
    require_tools()
    encrypted = Receiver()
    plain = Receiver(token=None)
    try:
        wrong = launcher("run", "--connect", f"127.0.0.1:{encrypted.port}", "--token-file",
                         token_file("not-the-token", "wrong"), "--", "true")
        one_line(wrong, ["wrong token"], "a wrong token")
        to_tls = launcher("run", "--connect", f"127.0.0.1:{encrypted.port}", "--", "true",
                          env={k: v for k, v in os.environ.items() if k != "THREADMON_TOKEN"})
        one_line(to_tls, ["encrypted links only"], "a plain probe to an encrypted receiver")
        to_plain = launcher("run", "--connect", f"127.0.0.1:{plain.port}", "--token-file",
                            token_file(TOKEN), "--", "true")
        one_line(to_plain, ["does not speak TLS"], "a TLS probe to a plain receiver")
    finally:
        encrypted.stop()
        plain.stop()
    check("TLS handshake failed" in encrypted.log(), f"no wrong-key line: {encrypted.log()!r}")
    # The receiver's lines carry its own name, not the display's.
    check("threadmon-display" not in encrypted.log() + plain.log(),
          f"the receiver logs as threadmon-display: {encrypted.log()!r}")
    exposed = launcher("receive", "--listen", "0.0.0.0:0", "-o", tmtest.Temp.dir(),
                       env={k: v for k, v in os.environ.items() if k != "THREADMON_TOKEN"})
    one_line(exposed, ["give a token"], "a receiver on the network without a token")
    check("a TLS client, but this display has no token" in plain.log(),
          f"the plain receiver did not say what came: {plain.log()!r}")


def test_strangers_do_not_keep_a_probe_out():
    require_tools()
    receiver = Receiver()
    idle = []
    try:
        idle = [socket.create_connection(("127.0.0.1", receiver.port)) for _ in range(200)]
        run = launcher("run", "--connect", f"127.0.0.1:{receiver.port}", "--token-file",
                       token_file(TOKEN), "--", workload("cond_wait"), *COND_WAIT)
        check(run.returncode == 0 and "refused" not in run.stderr,
              f"with 200 idle strangers: exit {run.returncode}: {run.stderr!r}")
        time.sleep(0.5)
    finally:
        for s in idle:
            s.close()
        written = receiver.stop()
    check(len(written) == 1, f"receive wrote {written}, expected the probe's capture")


def test_several_probes_then_sigterm():
    """Two probes at once; SIGTERM while both still stream: two captures,
    each finished so that the report reads it."""
    require_tools()
    receiver = Receiver()
    runs = [subprocess.Popen([sys.executable, tmtest.LAUNCHER, "run", "--connect",
                              f"127.0.0.1:{receiver.port}", "--token-file", token_file(TOKEN),
                              "--", workload("cond_wait"), "--delay-ms", "300", "--repeats",
                              "30"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and receiver.log().count("recording pid") < 2:
            time.sleep(0.1)
        time.sleep(1)
        written = receiver.stop()  # the programs still run
    finally:
        for r in runs:
            r.kill()
            r.wait()
    if not check(len(written) == 2, f"receive wrote {written}, expected 2 captures"):
        return
    pids = set()
    for path in written:
        rep = tmtest.report_json(path)
        pids.add(rep["process"].get("pid"))
        names = thread_names(rep)
        check("sleeper" in names and "signaller" in names, f"{path}: threads {names}")
    check(len(pids) == 2, f"both captures are of pids {pids}")


def test_attach_streams_through_the_relay():
    """run --connect -p with a token: threadmon-attach streams through the
    relay too, and the receiver records the target."""
    require_tools()
    attach = os.path.join(tmtest.BUILD, "attach", "threadmon-attach")
    if not os.path.exists(attach):
        raise tmtest.Skip("threadmon-attach is not built")
    receiver = Receiver()
    target = subprocess.Popen([workload("cond_wait"), "--delay-ms", "300", "--repeats", "20"],
                              stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        run = launcher("run", "--connect", f"127.0.0.1:{receiver.port}", "--token-file",
                       token_file(TOKEN), "-p", str(target.pid), "--duration", "1")
        check(run.returncode == 0, f"run -p exited {run.returncode}: {run.stderr}")
        time.sleep(0.5)
    finally:
        target.kill()
        target.wait()
        written = receiver.stop()
    if check(len(written) == 1, f"receive wrote {written}, expected one capture"):
        rep = tmtest.report_json(written[0])
        check(rep["process"].get("pid") == target.pid,
              f"the capture is of pid {rep['process'].get('pid')}, not {target.pid}")


def test_relay_keeps_its_socket_and_token_private():
    """threadmon-relay as the launcher starts it: the token from a pipe (not
    in its argv nor its environment), its socket in a 0700 directory of its
    own that another user cannot connect to."""
    require_tools()
    read_end, write_end = os.pipe()
    os.write(write_end, TOKEN.encode())
    os.close(write_end)
    env = {k: v for k, v in os.environ.items() if k != "THREADMON_TOKEN"}
    env["THREADMON_TOKEN_FD"] = str(read_end)
    relay = subprocess.Popen([RELAY, "--connect", "127.0.0.1:9"], env=env, pass_fds=(read_end,),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    os.close(read_end)
    try:
        path = relay.stdout.readline().split()[1].removeprefix("unix:")
        with open(f"/proc/{relay.pid}/cmdline", "rb") as f:
            argv = f.read()
        with open(f"/proc/{relay.pid}/environ", "rb") as f:
            environ = f.read()
        check(TOKEN.encode() not in argv + environ, "the token is in the relay's argv or environ")
        st = os.stat(os.path.dirname(path))
        check(st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid(),
              f"the relay's directory has mode {st.st_mode & 0o777:o}, owner {st.st_uid}")
        if os.geteuid() == 0 and shutil.which("setpriv"):
            other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    sys.executable, "-c",
                                    "import socket,sys; s=socket.socket(socket.AF_UNIX); "
                                    "s.connect(sys.argv[1])", path],
                                   capture_output=True, text=True, timeout=10)
            check(other.returncode != 0 and "Permission denied" in other.stderr,
                  f"another user connected to the relay: {other.returncode} {other.stderr!r}")
    finally:
        relay.stdin.close()
        relay.wait(timeout=10)
    check(not os.path.exists(path), "the relay left its socket behind")


def openssl_client(port, token):
    """One handshake by the openssl command-line client with the token's
    key: (status, output, seconds)."""
    key = subprocess.run(["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
                          "-kdfopt", f"key:{token}", "-kdfopt", f"info:{LABEL}", "HKDF"],
                         capture_output=True, text=True, check=True).stdout.strip()
    started = time.monotonic()
    proc = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-tls1_2",
                           "-psk", key.replace(":", ""), "-psk_identity", "threadmon",
                           "-cipher", "ECDHE-PSK-CHACHA20-POLY1305", "-brief"],
                          input="", capture_output=True, text=True, timeout=30)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def test_openssl_client_and_wrong_keys_slowed():
    require_tools()
    if not shutil.which("openssl"):
        raise tmtest.Skip("no openssl command (Debian: openssl)")
    receiver = Receiver()
    try:
        status, out, _ = openssl_client(receiver.port, TOKEN)
        check("ECDHE-PSK-CHACHA20-POLY1305" in out and "TLSv1.2" in out,
              f"openssl s_client with the token's key: {status}, {out!r}")
        times = []
        for _ in range(6):
            status, out, took = openssl_client(receiver.port, "guess")
            check(status != 0, f"a wrong key was let in: {out!r}")
            times.append(took)
    finally:
        receiver.stop()
    # 100 ms after the first failure, doubling: the 6th waits 1.6 s.
    check(times[0] < 1.0 and times[-1] >= 1.2,
          f"wrong keys not slowed: {', '.join(f'{t:.2f}' for t in times)} s")
    check(receiver.log().count("TLS handshake failed") == 6,
          f"expected 6 wrong-key lines: {receiver.log()!r}")


tmtest.main(globals())
