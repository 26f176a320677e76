"""MariaDB under sysbench OLTP: a throwaway mariadbd (its own data directory
in a private temporary directory, a Unix socket, no network) runs sysbench's
oltp_read_write with 8 client threads bare and then under `threadmon
record`, then a light load (a few transactions a second); the bare server is also
attached from outside (`record -p`) under the same load. Prints the
throughput ratio; checks that the report holds no impossible number
(`threadmon-report --check`), that the light load's connection threads,
which mostly wait for their client's next query, read as idle (not
sleeping), and that no finding is about a thread for being idle (before: a
listener in poll was the only finding on MariaDB)."""
import os
import re
import signal
import socket
import subprocess
import sys
import time

import corpus
import tmtest
from corpus import check

THREADS = 8       # sysbench client threads: one connection thread each
SECONDS = 4       # each full-speed sysbench run
LIGHT_RATE, LIGHT_SECONDS = 40, 2  # then a light load: transactions a second, for this long
TABLES, ROWS = 2, 2000
ATTACH_SECONDS = 3  # attached from outside while sysbench runs
IDLE_THREAD = 50  # a thread idle this much of its life is an idle thread


def server_argv(base):
    argv = [corpus.tool("mariadbd", "/usr/sbin"), "--no-defaults", f"--datadir={base}/data",
            f"--socket={base}/sock", "--skip-networking", f"--pid-file={base}/pid",
            f"--log-error={base}/error.log", "--innodb-buffer-pool-size=64M",
            "--innodb-log-file-size=16M",
            # A thread for each connection, never reused: the light load's
            # connection threads are its own.
            "--thread-cache-size=0"]
    if os.geteuid() == 0:
        argv.append("--user=root")  # mariadbd refuses to run as root otherwise
    return argv


def wait_ready(base, proc, what):
    """Until the server greets a client on its socket."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(2)
                s.connect(f"{base}/sock")
                if s.recv(4):  # the server's handshake packet
                    return
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    out, err = proc.communicate()
    with open(f"{base}/error.log", errors="replace") as f:
        log = f.read()[-600:]
    raise tmtest.Failed(f"{what} never became ready (exit {proc.returncode}): {err[-300:]} {log}")


def stop(proc, what):
    proc.send_signal(signal.SIGTERM)  # mariadbd shuts down cleanly; the launcher passes it on
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise tmtest.Failed(f"{what} did not stop within 30 s of SIGTERM")


def sysbench_argv(base, command, seconds=SECONDS, rate=0):
    return [corpus.tool("sysbench"), "oltp_read_write", "--db-driver=mysql",
            f"--mysql-socket={base}/sock", "--mysql-user=root", "--mysql-db=test",
            f"--tables={TABLES}", f"--table-size={ROWS}", f"--threads={THREADS}",
            f"--time={seconds}", f"--rate={rate}", "--report-interval=0", command]


def finished(run, command):
    if run.returncode != 0:
        raise tmtest.Failed(f"sysbench {command} exited {run.returncode}: "
                            f"{(run.stderr or run.stdout).strip()[-400:]}")
    return run.stdout


def sysbench(base, command):
    return finished(subprocess.run(sysbench_argv(base, command), capture_output=True, text=True,
                                   timeout=SECONDS + 60), command)


def light_load(base):
    """The light run, and the server's threads that its connections made
    (seen in /proc while it runs: none is reused, --thread-cache-size=0)."""
    with open(f"{base}/pid") as f:
        pid = int(f.read())
    before = set(os.listdir(f"/proc/{pid}/task"))
    proc = subprocess.Popen(sysbench_argv(base, "run", LIGHT_SECONDS, LIGHT_RATE),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(LIGHT_SECONDS / 2)
    made = {int(t) for t in set(os.listdir(f"/proc/{pid}/task")) - before}
    out, err = proc.communicate(timeout=LIGHT_SECONDS + 60)
    finished(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), "run (light)")
    return made


def tps(output):
    m = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", output)
    if not m:
        raise tmtest.Failed(f"no transactions line in sysbench's output: {output[-400:]}")
    return float(m.group(1))


def attach_under_load(base, pid):
    """`threadmon record -p` of the running server for ATTACH_SECONDS while
    sysbench keeps it busy; the capture's path."""
    load = subprocess.Popen(sysbench_argv(base, "run", ATTACH_SECONDS + 3), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    capture = os.path.join(tmtest.Temp.dir(), "mariadb-attached.tmcap")
    try:
        time.sleep(1)  # the connections are made and busy
        rec = subprocess.run([sys.executable, tmtest.LAUNCHER, "record", "-p", str(pid),
                              "--duration", str(ATTACH_SECONDS), "-o", capture],
                             capture_output=True, text=True, timeout=ATTACH_SECONDS + 60)
    finally:
        out, err = load.communicate(timeout=ATTACH_SECONDS + 60)
    finished(subprocess.CompletedProcess(load.args, load.returncode, out, err), "run (attached)")
    check(rec.returncode == 0, f"threadmon record -p exited {rec.returncode}: {rec.stderr[-400:]}")
    return capture


def test_mariadb_under_sysbench():
    tmtest.require_report()
    install = corpus.tool("mariadb-install-db", "/usr/bin")
    corpus.tool("sysbench")
    base = os.path.join(tmtest.Temp.dir(), "mariadb")  # Temp.dir() is private (mkdtemp: 0700)
    os.mkdir(base, 0o700)
    argv = server_argv(base)
    setup = subprocess.run([install, "--no-defaults", f"--datadir={base}/data",
                            "--auth-root-authentication-method=normal",
                            "--innodb-log-file-size=16M"] +
                           (["--user=root"] if os.geteuid() == 0 else []),
                           capture_output=True, text=True, timeout=60)
    if setup.returncode != 0:
        raise tmtest.Failed(f"mariadb-install-db exited {setup.returncode}: {setup.stderr[-400:]}")

    bare = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_ready(base, bare, "mariadbd")
        sysbench(base, "prepare")
        bare_tps = tps(sysbench(base, "run"))
        attached = attach_under_load(base, bare.pid)
    finally:
        stop(bare, "mariadbd")
    corpus.check_attached(attached, ATTACH_SECONDS)

    capture = os.path.join(tmtest.Temp.dir(), "mariadb.tmcap")
    rec = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "record", "-o", capture, "--", *argv],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_ready(base, rec, "mariadbd under threadmon")
        probed_tps = tps(sysbench(base, "run"))
        light = light_load(base)
    finally:
        out, err = stop(rec, "threadmon record mariadbd")
    check(rec.returncode == 0, f"threadmon record mariadbd exited {rec.returncode}: {err[-400:]}")
    print(f"  sysbench oltp_read_write, {THREADS} threads, {SECONDS} s: {bare_tps:.1f} tps bare, "
          f"{probed_tps:.1f} tps under threadmon: ratio {probed_tps / bare_tps:.3f}")

    checked = subprocess.run([tmtest.REPORT, "--check", capture], capture_output=True, text=True,
                             timeout=120)
    check(checked.returncode == 0, f"threadmon-report --check exited {checked.returncode}: "
          f"{checked.stderr.strip()[-600:]}")
    report = tmtest.report_json(capture)
    threads = [t for t in report["threads"] if not t.get("probe")]
    for f in report.get("findings", []):
        print(f"  finding {f.get('severity')} {f.get('kind')}: {f.get('message')}")

    # The light load's connection threads (one per sysbench thread) mostly
    # wait in poll/recv for their client's next query.
    conns = [t for t in threads if t["tid"] in light]
    check(len(conns) >= THREADS, f"{len(conns)} connection threads of the light load, expected "
          f"{THREADS} (tids {sorted(light)})")
    idle = sum(t["states"].get("idle", 0) * t["lifetime_s"] for t in conns) / 100
    sleeping = sum(t["states"].get("sleeping", 0) * t["lifetime_s"] for t in conns) / 100
    life = sum(t["lifetime_s"] for t in conns)
    print(f"  light load: {len(conns)} connection threads, {life:.2f} s: idle {idle:.3f} s, "
          f"sleeping {sleeping:.3f} s")
    check(idle >= 0.5 * life, f"connection threads idle {idle:.3f} s of {life:.2f} s: "
          "their waits for the next query are not idle")
    check(sleeping < 0.2 * idle, f"connection threads sleep {sleeping:.3f} s, idle {idle:.3f} s: "
          "idle read as sleeping")

    idle_tids = {t["tid"] for t in threads if t["states"].get("idle", 0) >= IDLE_THREAD}
    print(f"  {len(idle_tids)} of {len(threads)} threads idle >= {IDLE_THREAD}% of their lives")
    check(not [f for f in report.get("findings", []) if f.get("kind") == "never_runs"],
          "never_runs on MariaDB")
    about_idle = [f for f in report.get("findings", [])
                  if f.get("threads") and set(f["threads"]) <= idle_tids]
    check(not about_idle, f"findings about idle threads: {tmtest.describe(about_idle)}")


if __name__ == "__main__":  # bench/mariadb_load.py imports the server's helpers
    tmtest.main(globals())
