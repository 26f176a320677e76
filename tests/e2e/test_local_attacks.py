"""A hostile neighbour on the same machine: an unprivileged user, created
for this test (useradd) and removed at its end, does what the issue's
tester did to root's runs, and every attack fails.

- It listens first on 127.0.0.1:7411 and the ports next to it: root's
  `run --display` streams nothing to it (the display is on a Unix socket).
- It plants links at the old log names (/tmp/threadmon-display-PORT.log),
  at OUT.tmcap, at the OUT.PID.tmcap of the next few hundred pids and at
  OUT.partial in a directory it owns where root records: no file they point
  to is written, and the captures are root's real ones.
- It tries to reach the private directories of `run --display` and `record
  --last`: it cannot enter them, and the flight recorder's capture is of
  root's program.
- No secret is on any command line (/proc/PID/cmdline) during a run with a
  token file.

Needs root (to create the user and act as it); skipped otherwise."""
import glob
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import tmtest
from tmtest import check, launcher, workload

DISPLAY = os.path.join(tmtest.BUILD, "display", "threadmon-display")
SQUATTED = [7411] + list(range(7412, 7420))
VICTIM_TEXT = b"root's own file: must stay as it is\n"


class Stranger:
    """An unprivileged user made for the test, and a way to run as it."""

    def __init__(self):
        if os.geteuid() != 0:
            raise tmtest.Skip("needs root: it creates a user and acts as that user")
        if not shutil.which("useradd") or not shutil.which("userdel"):
            raise tmtest.Skip("useradd/userdel not found (Debian's passwd package)")
        self.name = f"tmatk{secrets.token_hex(3)}"
        made = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                               self.name], capture_output=True, text=True)
        if made.returncode != 0:
            raise tmtest.Skip(f"useradd failed: {made.stderr.strip()}")
        if not os.access("/usr/bin/python3", os.X_OK):
            self.remove()
            raise tmtest.Skip("no /usr/bin/python3 for the other user to run")
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        # The test's own interpreter may live where the stranger cannot go
        # (/root/.pyenv): the system's, which anyone may run.
        self.python = "/usr/bin/python3"

    def become(self):
        os.setgroups([])
        os.setgid(self.gid)
        os.setuid(self.uid)

    def run(self, code, *args):
        """Starts Python code as the stranger (in /tmp); returns the Popen."""
        return subprocess.Popen([self.python, "-c", code, *map(str, args)],
                                preexec_fn=self.become, cwd="/tmp", stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def remove(self):
        gone = subprocess.run(["userdel", self.name], capture_output=True, text=True)
        check(gone.returncode == 0, f"userdel {self.name}: {gone.stderr.strip()}")


# The squatter: listens on every port it can of `ports`, says which, then
# counts the bytes any connection brings until SIGTERM, and prints them.
SQUATTER = r'''
import signal, socket, sys, selectors
ports = [int(p) for p in sys.argv[1:]]
sel = selectors.DefaultSelector()
held = []
for p in ports:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        s.listen(16)
    except OSError:
        s.close()
        continue
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, "listen")
    held.append(p)
print("holding", *held, flush=True)
got = {"bytes": 0, "connections": 0}
def stop(*_):
    print("got", got["bytes"], got["connections"], flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    for key, _ in sel.select(0.2):
        if key.data == "listen":
            c, _ = key.fileobj.accept()
            c.setblocking(False)
            got["connections"] += 1
            sel.register(c, selectors.EVENT_READ, "conn")
        else:
            try:
                data = key.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                key.fileobj.close()
            got["bytes"] += len(data)
'''

# The prowler: for `seconds`, looks for threadmon's private directories and
# tries to enter them and connect to any socket inside; prints what it did.
PROWLER = r'''
import glob, os, socket, sys, time
end = time.monotonic() + float(sys.argv[1])
seen, entered, connected = set(), 0, 0
while time.monotonic() < end:
    for d in glob.glob("/tmp/threadmon-*") + glob.glob("/run/user/*/threadmon/*"):
        if not os.path.isdir(d) or d.startswith("/tmp/threadmon-e2e-"):
            continue
        seen.add(d)
        try:
            names = os.listdir(d)
            entered += 1
        except OSError:
            names = ["display.sock", "flight.sock"]  # guessed: connect without listing
        for n in names:
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(os.path.join(d, n))
                s.sendall(b"TMCAP forged")
                connected += 1
            except OSError:
                pass
            finally:
                s.close()
    time.sleep(0.02)
print("seen", len(seen), "entered", entered, "connected", connected, flush=True)
'''

# The planter: makes links named argv[3:] in argv[2], each pointing at the
# victim, argv[1].
PLANTER = r'''
import os, sys
victim, where, names = sys.argv[1], sys.argv[2], sys.argv[3:]
made = 0
for n in names:
    try:
        os.symlink(victim, os.path.join(where, n))
        made += 1
    except OSError:
        pass
print("planted", made, flush=True)
'''


def make_victim():
    path = os.path.join(tmtest.Temp.dir(), "victim")
    with open(path, "wb") as f:
        f.write(VICTIM_TEXT)
    return path


def victim_intact(path):
    with open(path, "rb") as f:
        return f.read() == VICTIM_TEXT


def plant(stranger, victim, where, names):
    """Links at names in where, made by the stranger; how many it made."""
    out = stranger.run(PLANTER, victim, where, *names).communicate(timeout=30)[0]
    words = out.split()
    return int(words[1]) if len(words) == 2 and words[0] == "planted" else 0


def stranger_dir(stranger):
    """A directory the stranger owns (0755): root records into it."""
    d = tempfile.mkdtemp(prefix="tm-attack-out-")
    os.chown(d, stranger.uid, stranger.gid)
    os.chmod(d, 0o755)
    return d


def secrets_in_cmdlines(secret):
    """Processes whose command line holds secret."""
    found = []
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as f:
                if secret.encode() in f.read():
                    found.append(path)
        except OSError:
            pass
    return found


def stop_display(stderr):
    found = re.search(r"threadmon-display \(pid (\d+)\) listens on unix:(\S+);", stderr)
    if found:
        try:
            os.kill(int(found.group(1)), signal.SIGTERM)
        except OSError:
            pass
        shutil.rmtree(os.path.dirname(found.group(2)), ignore_errors=True)
    return found


def test_attacks_fail():
    tmtest.require_report()
    if not os.path.exists(DISPLAY):
        raise tmtest.Skip("threadmon-display is not built")
    stranger = Stranger()
    squatter, prowler, out_dir, got = None, None, None, []
    try:
        victim = make_victim()
        # Links where the old launcher wrote its display's log.
        planted_logs = plant(stranger, victim, "/tmp",
                             [f"threadmon-display-{p}.log" for p in SQUATTED])
        # The squatter takes its ports before anything of root's starts.
        squatter = stranger.run(SQUATTER, *SQUATTED)
        holding = squatter.stdout.readline().split()
        check(holding[:2] == ["holding", "7411"],
              f"the stranger could not squat 7411 first: {holding}")
        prowler = stranger.run(PROWLER, 12)

        # run --display as root, offscreen, while the stranger squats and prowls.
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        shown = launcher("run", "--display", "--", workload("cond_wait"), "--delay-ms", "50",
                         "--repeats", "3", env=env)
        found = stop_display(shown.stderr)
        check(shown.returncode == 0 and found is not None,
              f"run --display: exit {shown.returncode}, {shown.stderr!r}")

        # record -o into a directory the stranger owns, with links planted
        # at the capture's name and at the next pids' children's names.
        out_dir = stranger_dir(stranger)
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        names = ["out.tmcap"] + [f"out.{pid}.tmcap" for pid in range(last + 1, last + 400)]
        planted = plant(stranger, victim, out_dir, names)
        check(planted == len(names), f"planted {planted} of {len(names)} links")
        wl = workload("spin_sleep")
        rec = launcher("record", "-o", os.path.join(out_dir, "out.tmcap"), "--", "sh", "-c",
                       f"{wl} --repeats 2 & {wl} --repeats 2 & wait")
        check(rec.returncode == 0, f"record -o exited {rec.returncode}: {rec.stderr!r}")
        # One capture, the process tree's directory, and all in it root's.
        tree = os.path.join(out_dir, "out.tmcap")
        check(os.path.isdir(tree) and not os.path.islink(tree), f"{tree} is not the tree's")
        written = sorted(os.listdir(tree)) if os.path.isdir(tree) else []
        check(len(written) >= 4, f"root's captures in {tree}: {written}")
        for n in [tree] + [os.path.join(tree, n) for n in written]:
            st = os.lstat(n)
            check(st.st_uid == 0 and not os.path.islink(n),
                  f"{n} belongs to uid {st.st_uid}, not root, or is a link")
        doc = tmtest.report_json(tree)
        reports = {r["pid"]: r["report"] for r in doc.get("reports", [])}
        root = doc.get("tree", {}).get("root")
        exe = os.path.basename(str(reports.get(root, {}).get("process", {}).get("exe")))
        check(exe in ("sh", "dash", "bash"), f"the tree's first process is not root's shell: {exe}")

        # record --last, with a link at the old OUT.partial name.
        plant(stranger, victim, out_dir, ["last.tmcap.partial", "last.tmcap"])
        last_rec = launcher("record", "--last", "5s", "-o", os.path.join(out_dir, "last.tmcap"),
                            "--", workload("cond_wait"), "--delay-ms", "50", "--repeats", "3")
        check(last_rec.returncode == 0, f"record --last exited {last_rec.returncode}: "
              f"{last_rec.stderr!r}")
        last_path = os.path.join(out_dir, "last.tmcap")
        check(not os.path.islink(last_path) and os.lstat(last_path).st_uid == 0,
              "last.tmcap is not root's own file")
        last_report = tmtest.report_json(last_path)
        check(os.path.basename(str(last_report.get("process", {}).get("exe"))) == "cond_wait",
              f"the flight recorder's capture is not root's program: "
              f"{last_report.get('process')}")

        check(victim_intact(victim), "a planted link made root overwrite its own file")
        check(planted_logs == len(SQUATTED), f"planted {planted_logs} log links")

        prowled = prowler.communicate(timeout=30)[0].split()
        print(f"  stranger: {' '.join(prowled)}; {planted} + {planted_logs} links planted")
        # Under $XDG_RUNTIME_DIR it cannot even see them.
        saw = os.environ.get("XDG_RUNTIME_DIR") or (len(prowled) == 6 and prowled[1] != "0")
        check(saw and len(prowled) == 6 and prowled[3] == "0" and prowled[5] == "0",
              f"the stranger saw no private directory, or entered or connected to one: {prowled}")
    finally:
        if squatter:
            squatter.send_signal(signal.SIGTERM)
            got = squatter.communicate(timeout=10)[0].split()
        if prowler and prowler.poll() is None:  # a check failed first: userdel needs it gone
            prowler.kill()
            prowler.wait()
        stranger.remove()
        if out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)
        for p in SQUATTED:
            link = f"/tmp/threadmon-display-{p}.log"
            if os.path.islink(link):
                os.unlink(link)
    print(f"  squatter on {SQUATTED[0]}..{SQUATTED[-1]}: {' '.join(got)} (bytes, connections)")
    check(got[:2] == ["got", "0"], f"the squatter received data: {got}")


def test_no_secret_on_any_command_line():
    """run --connect with a token file: the token is in no process's argv
    while the program runs (the relay gets it through a pipe, the receiver
    through its environment, which only the user can read)."""
    tmtest.require_probe()
    receive = os.path.join(tmtest.BUILD, "display", "threadmon-receive")
    if not os.path.exists(receive):
        raise tmtest.Skip("threadmon-receive is not built")
    token = "tok-" + secrets.token_hex(12)
    token_file = os.path.join(tmtest.Temp.dir(), "token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    received = os.path.join(tmtest.Temp.dir(), "received")
    receiver = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "receive", "--listen",
                                 "127.0.0.1:0", "--token-file", token_file, "-o", received],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    words = receiver.stdout.readline().split()
    if len(words) != 2 or words[0] != "listening":
        receiver.kill()
        raise tmtest.Failed(f"threadmon receive did not listen: {words}")
    port = words[1].rpartition(":")[2]
    run = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "run", "--connect",
                            f"127.0.0.1:{port}", "--token-file", token_file, "--",
                            workload("cond_wait"), "--delay-ms", "100", "--repeats", "8"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, looks = [], 0
    while run.poll() is None:
        seen += secrets_in_cmdlines(token)
        looks += 1
        time.sleep(0.05)
    _, err = run.communicate()
    receiver.send_signal(signal.SIGTERM)
    out, _ = receiver.communicate(timeout=20)
    check(run.returncode == 0, f"run --connect exited {run.returncode}: {err.strip()}")
    check(looks >= 5, f"only {looks} looks at the command lines while it ran")
    check(not seen, f"the token is on command lines: {sorted(set(seen))}")
    print(f"  {looks} looks at every /proc/PID/cmdline: the token in none")
    check("wrote " in out, f"the receiver took no session (the test would prove nothing): {out!r}")


tmtest.main(globals())
