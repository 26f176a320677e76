"""record --ssh through a real sshd (Debian's openssh-server), started here on
a free loopback port with host and user keys made here: the capture that
comes home reports what a local record of the same workload reports, no
TCP port is opened for the stream, the remote program's exit status is the
launcher's, Ctrl-C leaves a whole capture, and each way of failing to
start (no sshd there, a refused key, no threadmon there, another wire
version) is one line and a non-zero status."""
import getpass
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

import tmtest
from tmtest import LAUNCHER, check, near, state

SSHD = "/usr/sbin/sshd"
MUTEX_ARGS = ["--waiters", "2", "--rounds", "40"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    """An sshd of the test's own: its config, keys, authorized keys and a
    remote PATH whose threadmon is the build tree's launcher."""
    instance = None

    @classmethod
    def get(cls):
        if cls.instance is None:
            cls.instance = cls()
        return cls.instance

    def __init__(self):
        for tool in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")):
            if not tool or not os.path.exists(tool):
                raise tmtest.Skip("openssh-server and openssh-client are not installed "
                                  f"({tool or 'ssh'} missing)")
        if not os.path.isdir("/run/sshd"):
            if os.geteuid() != 0:
                raise tmtest.Skip("sshd needs /run/sshd (its privilege separation directory), "
                                  "which only root can make")
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.dir = os.path.join(tmtest.Temp.dir(), "sshd")
        os.mkdir(self.dir, 0o700)
        path = lambda name: os.path.join(self.dir, name)  # noqa: E731
        for key in ("host_key", "user_key", "stranger_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path(key)],
                           check=True)
        shutil.copy(path("user_key.pub"), path("authorized_keys"))
        self.bin = path("bin")
        os.mkdir(self.bin)
        os.symlink(os.path.abspath(LAUNCHER), os.path.join(self.bin, "threadmon"))
        # A remote threadmon of another wire version: what a newer one says first.
        future = os.path.join(self.bin, "threadmon-future")
        with open(future, "w") as f:
            f.write("#!/bin/sh\necho 'threadmon-serve 2 9.0'\nsleep 5\n")
        os.chmod(future, 0o755)
        # One that starts well, then sends a stream opened by pid "abc".
        garbage = os.path.join(self.bin, "threadmon-garbage")
        with open(garbage, "w") as f:
            f.write("#!/bin/sh\necho 'threadmon-serve 1 1.0'\n"
                    "printf 'O\\001\\000\\000\\000\\003\\000\\000\\000abc'\nsleep 1\n")
        os.chmod(garbage, 0o755)
        # A login script that prints before threadmon does (rsync's "is your shell clean?").
        noisy = os.path.join(self.bin, "threadmon-noisy")
        with open(noisy, "w") as f:
            f.write("#!/bin/sh\necho 'Welcome to the lab'\n"
                    f"exec {os.path.abspath(LAUNCHER)} \"$@\"\n")
        os.chmod(noisy, 0o755)
        self.port = free_port()
        with open(path("sshd_config"), "w") as f:
            f.write(f"HostKey {path('host_key')}\nListenAddress 127.0.0.1\n"
                    f"AuthorizedKeysFile {path('authorized_keys')}\nStrictModes no\nUsePAM no\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                    "PermitRootLogin prohibit-password\nPidFile none\nLogLevel ERROR\n"
                    f"SetEnv PATH={self.bin}:/usr/bin:/bin\n")
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", path("sshd_config"), "-p",
                                      str(self.port)], stderr=open(path("sshd.log"), "wb"))
        user = getpass.getuser()
        with open(path("ssh_config"), "w") as f:
            for host, key, port in (("tmhost", "user_key", self.port),
                                    ("stranger", "stranger_key", self.port),
                                    ("nobody-there", "user_key", free_port())):
                f.write(f"Host {host}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
                        f"  IdentityFile {path(key)}\n  IdentitiesOnly yes\n"
                        f"  UserKnownHostsFile {path('known_hosts')}\n"
                        "  StrictHostKeyChecking accept-new\n  BatchMode yes\n"
                        "  LogLevel ERROR\n  ConnectTimeout 5\n")
        self.env = dict(os.environ, THREADMON_SSH=f"ssh -F {path('ssh_config')}")
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    with open(path("sshd.log"), errors="replace") as log:
                        raise tmtest.Failed(f"sshd did not start: {log.read().strip()}")
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def launcher(*args, **kwargs):
    return tmtest.launcher(*args, env=Sshd.get().env, **kwargs)


def one_error_line(proc, what, *words):
    """A failure to start: non-zero, and exactly one line, naming words."""
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode != 0, f"{what}: exit status 0")
    if check(len(lines) == 1 and lines[0].startswith("threadmon: ") and
             "Traceback" not in proc.stderr, f"{what}: not one line: {proc.stderr!r}"):
        missing = [w for w in words if w not in lines[0]]
        check(not missing, f"{what}: {lines[0]!r} does not say {missing}")
        print(f"  ok   {what}: {lines[0]} (status {proc.returncode})")


def truth_of(text):
    lines = [line for line in text.splitlines() if line.startswith("{")]
    return tmtest.json.loads(lines[-1]) if lines else None


def descendants(roots):
    """roots and every process below them."""
    parent = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    found = set(roots)
    while True:
        more = {pid for pid, ppid in parent.items() if ppid in found} - found
        if not more:
            return found
        found |= more


def listeners(roots):
    """The listening sockets of the processes under roots (both ends of the
    link: the launcher's, and the test sshd's sessions): TCP/UDP as 'proto
    addr', Unix as its path. Other tests on this machine are not ours."""
    out = subprocess.run(["ss", "-lntuxpH"], capture_output=True, text=True).stdout
    ours = descendants(roots)
    found = set()
    for line in out.splitlines():
        words = line.split()
        owners = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if not words or not owners & ours:
            continue
        if words[0] in ("tcp", "udp"):
            found.add(f"{words[0]} {words[4]}")
        elif words[0] in ("u_str", "u_seq", "u_dgr"):
            found.add(words[4])
    return found


def run_watching_listeners(args, env):
    """Runs the launcher with args; returns its (status, stdout, stderr)
    after checking, every 0.1 s while it ran, that no process of either end
    (under the launcher, under the test's sshd) listened on a TCP or UDP
    port and that every Unix listener is in a private (0700) directory of
    this user."""
    if not shutil.which("ss"):
        raise tmtest.Skip("ss (iproute2) is not installed")
    proc = subprocess.Popen([sys.executable, LAUNCHER, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    roots = {proc.pid, Sshd.get().proc.pid}
    before = listeners({Sshd.get().proc.pid})  # sshd's own port
    during = set()
    while proc.poll() is None:
        during |= listeners(roots) - before
        time.sleep(0.1)
    stdout, stderr = proc.communicate()
    ports = [s for s in during if s.startswith(("tcp", "udp"))]
    check(not ports, f"listening ports opened during the run: {ports}")
    for path in during - set(ports):
        parent = os.path.dirname(path)
        st = os.stat(parent) if os.path.isdir(parent) else None
        private = st and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
        check(private or not os.path.exists(parent),
              f"a Unix listener outside a private directory: {path}")
    print(f"  ok   new listeners during the run: {sorted(during) or 'none'}")
    return proc.returncode, stdout, stderr


def test_record_over_ssh_reports_as_local():
    """mutex_hold recorded over ssh and locally: the same threads, object
    names and state shares (within a few points); no TCP or UDP port opened
    while it ran, the only new listener a Unix socket in a 0700 directory."""
    tmtest.require_report()
    sshd = Sshd.get()
    local = tmtest.recorded("mutex_hold", MUTEX_ARGS)
    out = os.path.join(tmtest.Temp.dir(), "over-ssh.tmcap")
    status, stdout, stderr = run_watching_listeners(
        ["record", "--ssh", "tmhost", "-o", out, "--", tmtest.workload("mutex_hold"),
         *MUTEX_ARGS], sshd.env)
    check(status == 0, f"record --ssh exited {status}: {stderr.strip()}")
    check(stdout == "", f"the launcher's stdout is not empty: {stdout!r}")
    truth = truth_of(stderr)  # the remote program's stdout comes home on stderr
    if not check(truth is not None, f"no truth line came home: {stderr!r}"):
        return
    check(f"threadmon: wrote {out} (" in stderr, f"no closing line: {stderr!r}")
    with open(out, "rb") as f:
        header = f.read(16)
    check(header[:8] == b"TMCAP\r\n\x1a" and header[8] == 2,
          f"not a format 2 capture (zstd blocks): {header!r}")
    print(f"  ok   capture over ssh {os.path.getsize(out)} bytes, "
          f"locally {os.path.getsize(local.capture)}")
    remote = tmtest.report_json(out)
    names = lambda rep: sorted(t.get("name") or "" for t in rep["threads"])  # noqa: E731
    check(names(remote) == names(local.report),
          f"threads {names(remote)}, locally {names(local.report)}")
    symbols = lambda rep: sorted(str(o.get("symbol"))  # noqa: E731
                                 for o in rep.get("sync_objects", []))
    check(symbols(remote) == symbols(local.report),
          f"objects {symbols(remote)}, locally {symbols(local.report)}")
    check(remote["process"].get("exit_status") == 0, f"exit_status {remote['process']}")
    for w in truth["waiters"]:
        got = next((t for t in remote["threads"] if t.get("tid") == w["tid"]), None)
        if check(got is not None, f"waiter {w['tid']} missing"):
            near(state(got, "blocked_mutex"), w["blocked_mutex_pct"], 5,
                 f"{w['name']} blocked_mutex % over ssh")
    lock = next((o for o in remote.get("sync_objects", []) if o.get("symbol") == "big_lock"), None)
    if check(lock is not None, "big_lock missing over ssh"):
        check(lock.get("acquisitions") == truth["acquisitions"],
              f"acquisitions {lock.get('acquisitions')}, truth {truth['acquisitions']}")
        near(lock.get("wait_s"), truth["wait_s"], 0.1 * truth["wait_s"], "big_lock wait s")


def test_flight_recorder_over_ssh():
    """record --ssh --last: mutex_hold's stream feeds a local flight
    recorder; the capture keeps the window's ticks (not the whole run's),
    the whole run's totals, its threads and the exit status."""
    tmtest.require_report()
    out = os.path.join(tmtest.Temp.dir(), "last-over-ssh.tmcap")
    proc = launcher("record", "--ssh", "tmhost", "--last", "500ms", "--interval", "10", "-o", out,
                    "--", tmtest.workload("mutex_hold"), "--waiters", "2", "--rounds", "120")
    check(proc.returncode == 0, f"record --ssh --last exited {proc.returncode}: {proc.stderr!r}")
    truth = truth_of(proc.stderr)
    if not check(truth is not None and os.path.exists(out), f"no capture: {proc.stderr!r}"):
        return
    check(f"threadmon: wrote {os.path.relpath(out)} (" in proc.stderr,
          f"no closing line: {proc.stderr!r}")
    rep = tmtest.report_json(out)
    check("flight recorder" in tmtest.json.dumps(rep), "no flight recorder note in the report")
    names = sorted(t.get("name") or "" for t in rep["threads"])
    check(any(n.startswith("waiter") for n in names), f"threads {names}")
    lock = next((o for o in rep.get("sync_objects", []) if o.get("symbol") == "big_lock"), {})
    check(lock.get("acquisitions") == truth["acquisitions"],
          f"big_lock acquisitions {lock.get('acquisitions')}, truth {truth['acquisitions']}")
    check(rep["process"].get("exit_status") == 0, f"exit_status {rep['process']}")
    sizes = subprocess.run([sys.executable, LAUNCHER, "report", "--sizes", out],
                           capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"^tick\s+([\d,]+)\s", sizes, re.M)
    ticks = int(m.group(1).replace(",", "")) if m else -1
    # The window and at most two 125 ms chunks at 10 ms ticks, a few more.
    check(10 <= ticks <= 0.75 / 0.010 + 10,
          f"{ticks} ticks kept for a 0.5 s window of a {truth['wall_s']:.1f} s run")
    print(f"  ok   {ticks} ticks kept of a {truth['wall_s']:.2f} s run over ssh")


def test_exit_status_and_output_come_home():
    """A program exiting 3 makes the launcher exit 3; its stdout and stderr
    reach the user (on the launcher's stderr), never the capture."""
    tmtest.require_report()
    out = os.path.join(tmtest.Temp.dir(), "exit3.tmcap")
    proc = launcher("record", "--ssh", "tmhost", "-o", out, "--", "sh", "-c",
                    "echo to-stdout; echo to-stderr >&2; exit 3")
    check(proc.returncode == 3, f"exit status {proc.returncode}, expected 3: {proc.stderr!r}")
    check("to-stdout" in proc.stderr and "to-stderr" in proc.stderr,
          f"the program's output did not come home: {proc.stderr!r}")
    rep = tmtest.report_json(out)
    check(rep["process"].get("exit_status") == 3, f"capture's exit_status {rep['process']}")


def test_a_process_tree_comes_home_whole():
    """sh forking and exec'ing a workload: over ssh one capture per process
    image (OUT, OUT.PID, OUT.PID-execN); a local record makes the tree one
    capture directory (OUT/PID.tmcap each): the same processes both ways."""
    tmtest.require_report()
    script = f"{tmtest.workload('mutex_hold')} --rounds 5 >/dev/null; exit 0"
    captures = {}
    for how in ("local", "ssh"):
        where = os.path.join(tmtest.Temp.dir(), f"tree-{how}")
        os.mkdir(where)
        over = ["--ssh", "tmhost"] if how == "ssh" else []
        out = os.path.join(where, "t.tmcap")
        proc = launcher("record", *over, "-o", out, "--", "sh", "-c", script)
        check(proc.returncode == 0, f"{how}: status {proc.returncode}: {proc.stderr!r}")
        folder = out if os.path.isdir(out) else where
        captures[how] = sorted(os.path.join(folder, n) for n in os.listdir(folder)
                               if n.endswith(".tmcap") or ".tmcap." in n)
        for path in captures[how]:
            rep = tmtest.report_json(path)
            check(rep.get("threads"), f"{how}: {os.path.basename(path)} has no threads")
    check(os.path.isdir(os.path.join(tmtest.Temp.dir(), "tree-local", "t.tmcap")),
          "the local record did not make the tree one capture directory")
    check(len(captures["ssh"]) == len(captures["local"]) >= 2,
          f"captures over ssh {captures['ssh']}, locally {captures['local']}")
    print(f"  ok   {len(captures['ssh'])} process captures both ways")


def test_words_reach_the_remote_program_as_given():
    """Every word is quoted for the remote shell: spaces, quotes, ; and $
    arrive as they were typed; --ssh-command and --remote-threadmon are
    taken as given (no THREADMON_SSH)."""
    tmtest.require_probe()
    sshd = Sshd.get()
    env = dict(os.environ)
    env.pop("THREADMON_SSH", None)
    odd = "a b;$HOME 'q' \"d\" `x`"
    proc = tmtest.launcher("record", "--ssh", "tmhost", "--ssh-command",
                           sshd.env["THREADMON_SSH"], "--remote-threadmon",
                           os.path.join(sshd.bin, "threadmon"), "-o",
                           os.path.join(tmtest.Temp.dir(), "words.tmcap"), "--", "printf",
                           "<%s>", odd, env=env)
    check(proc.returncode == 0 and f"<{odd}>" in proc.stderr,
          f"the word did not arrive whole: status {proc.returncode}, {proc.stderr!r}")


def test_a_login_banner_on_stdout_is_passed_on():
    """Lines a login script prints before the version line reach the user
    on stderr; the session runs."""
    tmtest.require_probe()
    proc = launcher("record", "--ssh", "tmhost", "--remote-threadmon", "threadmon-noisy", "-o",
                    os.path.join(tmtest.Temp.dir(), "noisy.tmcap"), "--", "sh", "-c", "exit 6")
    check(proc.returncode == 6 and proc.stderr.startswith("Welcome to the lab\n"),
          f"status {proc.returncode}, stderr {proc.stderr!r}")


def test_relay_for_the_display():
    """relay-ssh (what the display's Watch over SSH runs): the checked
    version line, then the records, ending with the exit status; ps-ssh
    lists the host's processes."""
    tmtest.require_probe()
    sshd = Sshd.get()
    proc = subprocess.run([sys.executable, LAUNCHER, "relay-ssh", "--ssh", "tmhost", "--",
                           "sh", "-c", "exit 5"], capture_output=True, env=sshd.env, timeout=60)
    check(proc.returncode == 5, f"relay-ssh exited {proc.returncode}: {proc.stderr!r}")
    check(proc.stdout.startswith(b"threadmon-serve 1 "), f"starts {proc.stdout[:40]!r}")
    check(proc.stdout.endswith(b"X\0\0\0\0\1\0\0\0005"), f"ends {proc.stdout[-20:]!r}")
    check(b"O\1\0\0\0" in proc.stdout, "no stream opened")
    ps = subprocess.run([sys.executable, LAUNCHER, "ps-ssh", "--ssh", "tmhost"],
                        capture_output=True, text=True, env=sshd.env, timeout=60)
    pids = {line.split()[0] for line in ps.stdout.splitlines() if line.strip()}
    check(ps.returncode == 0 and str(sshd.proc.pid) in pids,
          f"ps-ssh: status {ps.returncode}, sshd {sshd.proc.pid} not among {len(pids)} pids")


def test_ctrl_c_leaves_a_whole_capture():
    """SIGINT to the launcher's process group (a terminal's Ctrl-C) mid-run
    stops the remote program (ssh ignores it; the launcher sends a stop
    line); everything it streamed until it died is in the capture."""
    tmtest.require_report()
    sshd = Sshd.get()
    out = os.path.join(tmtest.Temp.dir(), "ctrl-c.tmcap")
    proc = subprocess.Popen([sys.executable, LAUNCHER, "record", "--ssh", "tmhost", "-o", out,
                             "--", tmtest.workload("spin_sleep"), "--repeats", "300"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sshd.env, start_new_session=True)
    # Mid-run: once its stream is arriving (the capture's temporary file is
    # there), and a second more.
    deadline = time.monotonic() + 20
    while not any(n.startswith(".ctrl-c.tmcap.") for n in os.listdir(tmtest.Temp.dir())):
        if proc.poll() is not None or time.monotonic() > deadline:
            check(False, f"no stream arrived: {proc.communicate()[1]!r}")
            return
        time.sleep(0.05)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        check(False, f"the launcher did not end within 20 s of Ctrl-C: {stderr!r}")
        return
    check(proc.returncode == 128 + signal.SIGINT,
          f"exit status {proc.returncode}, expected {128 + signal.SIGINT}: {stderr!r}")
    check("killed by SIGINT" in stderr and f"wrote {out}" in stderr, f"stderr {stderr!r}")
    rep = tmtest.report_json(out)
    check(not rep["process"].get("input_warnings"),
          f"capture damaged: {rep['process'].get('input_warnings')}")
    spinners = [t for t in rep.get("threads", []) if str(t.get("name")).startswith("spinner")]
    check(len(spinners) == 2, f"{len(spinners)} spinner threads in the interrupted capture")
    check((rep["process"].get("duration_s") or 0) >= 0.5,
          f"interrupted capture lasts {rep['process'].get('duration_s')} s")


def test_attach_to_a_running_process():
    """record --ssh -p PID: threadmon-attach on the remote side, its stream
    brought home the same way."""
    tmtest.require_report()
    target = subprocess.Popen([tmtest.workload("mutex_hold"), "--waiters", "2", "--rounds",
                               "200"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = os.path.join(tmtest.Temp.dir(), "attached.tmcap")
        proc = launcher("record", "--ssh", "tmhost", "-p", str(target.pid), "--duration", "1.5",
                        "-o", out)
        check(proc.returncode == 0, f"record --ssh -p exited {proc.returncode}: {proc.stderr!r}")
        rep = tmtest.report_json(out)
        check(rep["process"].get("pid") == target.pid,
              f"capture of pid {rep['process'].get('pid')}, expected {target.pid}")
        check(len(rep.get("threads", [])) >= 3, f"{len(rep.get('threads', []))} threads")
    finally:
        target.kill()
        target.wait()


def test_run_display_over_ssh():
    """run --display --ssh: a local display reads the streams on its stdin
    (one session per process: sh and the program it forks) and listens on
    no port; the launcher exits with the program's status, the display
    stays open."""
    tmtest.require_probe()
    display = os.path.join(tmtest.BUILD, "display", "threadmon-display")
    if not os.path.exists(display):
        raise tmtest.Skip(f"{display} is not built")
    env = dict(Sshd.get().env, QT_QPA_PLATFORM="offscreen")
    status, _, stderr = run_watching_listeners(
        ["run", "--display", "--ssh", "tmhost", "--", "sh", "-c",
         f"{tmtest.workload('mutex_hold')} --rounds 10 >/dev/null; exit 4"], env)
    check(status == 4, f"exit status {status}, expected 4: {stderr!r}")
    words = stderr.split()
    pid = int(words[words.index("(pid") + 1].rstrip(")")) if "(pid" in words else None
    log = words[-1] if words else ""
    if not check(pid and os.path.exists(log), f"no display pid or log in {stderr!r}"):
        return
    try:
        deadline = time.monotonic() + 10
        text = ""
        while text.count(" ended: ") < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            with open(log, errors="replace") as f:
                text = f.read()
        check(text.count("accepted") == 2 and text.count(" ended: ") == 2,
              f"the display did not show two sessions to their end: {text!r}")
        check(os.path.exists(f"/proc/{pid}"), "the display closed when the session ended")
    finally:
        os.kill(pid, signal.SIGTERM)
        os.unlink(log)


def test_display_watches_over_ssh():
    """File > Watch over SSH's work (MainWindow::watchOverSsh: the launcher's
    relay-ssh read by a MuxReader) through this sshd: test-ui-ssh's
    watchOverRealSsh opens mutex_hold's tab, sees it end with status 0;
    closingTheTabStopsTheRemoteProgram closes a running one's tab and sees
    the program, the remote launcher, ssh and the relay all gone."""
    test = os.path.join(tmtest.BUILD, "display", "test-ui-ssh")
    if not os.path.exists(test):
        raise tmtest.Skip(f"{test} is not built")
    env = dict(Sshd.get().env, QT_QPA_PLATFORM="offscreen", THREADMON_TEST_SSH_HOST="tmhost",
               THREADMON_TEST_WORKLOAD=tmtest.workload("mutex_hold"))
    functions = ["watchOverRealSsh", "closingTheTabStopsTheRemoteProgram"]
    proc = subprocess.run([test] + functions, capture_output=True, text=True, env=env,
                          timeout=120)
    passed = all(f"PASS   : TestUiSsh::{f}()" in proc.stdout for f in functions)
    check(proc.returncode == 0 and passed,
          f"test-ui-ssh {' '.join(functions)}: status {proc.returncode}: {proc.stdout[-1500:]}")


def test_failures_to_start_are_one_line():
    tmtest.require_probe()
    Sshd.get()
    out = os.path.join(tmtest.Temp.dir(), "never.tmcap")
    cmd = ["-o", out, "--", "true"]
    one_error_line(launcher("record", "--ssh", "nobody-there", *cmd), "unreachable port",
                   "nobody-there", "refused")
    one_error_line(launcher("record", "--ssh", "stranger", *cmd), "refused key",
                   "stranger", "Permission denied")
    one_error_line(launcher("record", "--ssh", "tmhost", "--remote-threadmon",
                            "threadmon-not-installed", *cmd), "no threadmon there",
                   "threadmon-not-installed", "--remote-threadmon")
    one_error_line(launcher("record", "--ssh", "tmhost", "--remote-threadmon",
                            "threadmon-future", *cmd), "another wire version", "9.0", "wire")
    one_error_line(launcher("record", "--ssh", "tmhost", "--remote-threadmon",
                            "threadmon-garbage", *cmd), "not a threadmon stream", "'abc'",
                   "not a threadmon stream")
    one_error_line(launcher("record", "--ssh", "tmhost", "-o", out, "--",
                            "/no/such/program"), "no such program there", "/no/such/program")
    one_error_line(launcher("record", "--ssh=-oProxyCommand=x", *cmd), "a host that is an option",
                   "--ssh")
    check(not os.path.exists(out), "a capture was written for a session that never ran")


if __name__ == "__main__":
    try:
        tmtest.main(globals())
    finally:
        if Sshd.instance:
            Sshd.instance.stop()
