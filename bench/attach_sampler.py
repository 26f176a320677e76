#!/usr/bin/env python3
"""The external sampler (threadmon-attach) on running programs: how long an
attach takes to its first frame as the target's thread count grows, and how
much slower the target runs while it is watched.

First frame: attach_target with N extra threads waiting on a cond (N = 0,
100, 1000), `threadmon-attach -p PID -o F --duration 0.001`: the whole run
(start, permissions, perf events on every thread, the first tick, the final
tick, the capture's end) bounds the time to the first frame from above.
Its CPU time comes from the kernel's accounting of the child; the report of
the capture must list every thread and the deadlock.

Throughput: `pigz -p 2 -c FILE` (64 MiB of text) and the mutex_loop
workload (4 threads, one lock: a context switch per contended acquisition),
bare and attached from their first millisecond to their end, interleaved
round by round; the target's own wall and CPU time (wait4). And a server
that keeps running: memcached (4 worker threads) under load from client
processes doing a set and a get at a time for a few seconds, with and
without threadmon-attach watching it for those seconds, interleaved; its
requests served a second and its CPU time per request (/proc/PID/stat).

usage: bench/attach_sampler.py BUILD [--runs N]
"""
import argparse
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tmbench.realprogs import make_input  # noqa: E402


def all_asleep(pid, want):
    task = f"/proc/{pid}/task"
    try:
        tids = os.listdir(task)
    except FileNotFoundError:
        return False
    if len(tids) < want:
        return False
    for tid in tids:
        with open(f"{task}/{tid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "S":
                return False
    return True


def first_frame(attach, report, pid, capture, duration="0.001"):
    t0 = time.monotonic()
    proc = subprocess.Popen([attach, "-p", str(pid), "-o", capture, "--duration", duration])
    _, status, ru = os.wait4(proc.pid, 0)
    wall = (time.monotonic() - t0) * 1e3
    cpu = (ru.ru_utime + ru.ru_stime) * 1e3
    rep = json.loads(subprocess.run([report, "--json", capture], capture_output=True,
                                    text=True).stdout)
    found = [f for f in rep.get("findings", []) if f.get("kind") == "deadlock"]
    detected = found[0].get("evidence", {}).get("detected_s") if found else None
    return wall, cpu, len(rep.get("threads", [])), detected, status


def run_target(argv, attach, capture):
    """Runs argv to its end, attached from its start when attach is set;
    returns (wall s, CPU s) of the target itself."""
    t0 = time.monotonic()
    target = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    watcher = None
    if attach:
        watcher = subprocess.Popen([attach, "-p", str(target.pid), "-o", capture],
                                   stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(target.pid, 0)
    wall = time.monotonic() - t0
    if watcher:
        watcher.wait()
    return wall, ru.ru_utime + ru.ru_stime


def memcached_client(port, seconds, k, out):
    """One connection: set then get the client's own keys until the time is up."""
    conn = socket.create_connection(("127.0.0.1", port))
    f = conn.makefile("rwb")
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        key = f"k{k}-{n % 512}".encode()
        f.write(b"set " + key + b" 0 0 8\r\nabcdefgh\r\nget " + key + b"\r\n")
        f.flush()
        f.readline()                     # STORED
        while f.readline() != b"END\r\n":  # VALUE ..., the data, END
            pass
        n += 2
    out.put(n)
    conn.close()


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memcached_round(pid, port, attach, capture, seconds, clients):
    """Requests a second and memcached's CPU µs per request over one round."""
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=memcached_client, args=(port, seconds, k, out))
             for k in range(clients)]
    watcher = None
    if attach:
        watcher = subprocess.Popen([attach, "-p", str(pid), "-o", capture, "--duration",
                                    str(seconds)], stderr=subprocess.DEVNULL)
    c0, t0 = cpu_s(pid), time.monotonic()
    for p in procs:
        p.start()
    served = sum(out.get() for _ in procs)
    for p in procs:
        p.join()
    wall, cpu = time.monotonic() - t0, cpu_s(pid) - c0
    if watcher:
        watcher.wait()
    return served / wall, cpu * 1e6 / served


def memcached_table(attach, capture, runs, seconds=3.0, clients=4):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    user = ["-u", "nobody"] if os.geteuid() == 0 else []
    server = subprocess.Popen(["memcached", "-t", "4", "-p", str(port), "-U", "0", "-l",
                               "127.0.0.1"] + user)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    memcached_round(server.pid, port, None, capture, 1.0, clients)  # warm-up
    bare, watched = [], []
    for r in range(runs):
        order = (False, True) if r % 2 == 0 else (True, False)
        for on in order:
            (watched if on else bare).append(memcached_round(
                server.pid, port, attach if on else None, capture, seconds, clients))
    server.terminate()
    server.wait()
    print(f"\nmemcached -t 4 under {clients} client processes, {seconds:.0f} s rounds, "
          f"{runs} interleaved; load average after: {os.getloadavg()[0]:.1f}")
    print("\n| memcached | requests/s, median (rounds) | CPU µs per request, median |")
    print("|---|---|---|")
    for name, rows in (("bare", bare), ("attached", watched)):
        rates = [r for r, _ in rows]
        print(f"| {name} | {statistics.median(rates):,.0f} "
              f"({' '.join(f'{x:,.0f}' for x in rates)}) "
              f"| {statistics.median(c for _, c in rows):.2f} |")
    ratio = statistics.median(r for r, _ in watched) / statistics.median(r for r, _ in bare)
    print(f"\nattached / bare requests a second: {ratio:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    attach = os.path.join(a.build, "attach/threadmon-attach")
    target = os.path.join(a.build, "attach/tests/attach_target")
    report = os.path.join(a.build, "display/threadmon-report")
    if not os.path.exists(report):
        report = os.path.join(a.build, "display/report/threadmon-report")
    for path in (attach, target, report):
        if not os.path.exists(path):
            sys.exit(f"attach_sampler.py: {path} not found: build first")
    scratch = tempfile.mkdtemp(prefix="attach-bench-")
    capture = os.path.join(scratch, "c.tmcap")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("\n| threads | wall ms to the end, median (runs) | CPU ms, median (runs) | threads in "
          "the capture | deadlock found at (0.5 s session) |")
    print("|---|---|---|---|---|")
    for extra in (0, 100, 1000):
        p = subprocess.Popen([target, "--extra", str(extra)], stdout=subprocess.PIPE, text=True)
        for line in p.stdout:
            if line == "ready\n":
                break
        while not all_asleep(p.pid, extra + 1):
            time.sleep(0.05)
        threads = len(os.listdir(f"/proc/{p.pid}/task"))
        runs = [first_frame(attach, report, p.pid, capture) for _ in range(a.runs)]
        detected = first_frame(attach, report, p.pid, capture, "0.5")[3]
        p.kill()
        p.wait()
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        shown = " ".join(f"{w:.0f}" for w in walls)
        print(f"| {threads} | {statistics.median(walls):.0f} ({shown})"
              f" | {statistics.median(cpus):.0f} ({' '.join(f'{c:.0f}' for c in cpus)})"
              f" | {min(r[2] for r in runs)} | "
              f"{'NOT FOUND' if detected is None else f'{detected:.3f} s'} |")

    targets = [("mutex_loop --threads 4 --iterations 200000",
                [os.path.join(a.build, "tests/workloads/mutex_loop"), "--threads", "4",
                 "--iterations", "200000"])]
    if shutil.which("pigz"):
        data = os.path.join(scratch, "input.txt")
        make_input(data, 64)
        targets.insert(0, ("pigz -p 2 -c FILE (64 MiB)", ["pigz", "-p", "2", "-c", data]))
    print(f"\nload average before: {os.getloadavg()[0]:.1f}")
    print("\n| target | bare wall s | attached wall s | wall ratio | bare CPU s | attached CPU s "
          "| CPU ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, argv in targets:
        bare, watched = [], []
        for r in range(a.runs):
            order = (False, True) if r % 2 == 0 else (True, False)
            for on in order:
                (watched if on else bare).append(run_target(argv, attach if on else None,
                                                            capture))
        bw, bc = statistics.median(w for w, _ in bare), statistics.median(c for _, c in bare)
        aw, ac = statistics.median(w for w, _ in watched), statistics.median(c for _, c in watched)
        print(f"| `{name}` | {bw:.2f} | {aw:.2f} | {aw / bw:.3f} | {bc:.2f} | {ac:.2f} "
              f"| {ac / bc:.3f} |")
    if shutil.which("memcached"):
        memcached_table(attach, capture, a.runs)
    else:
        print("\nmemcached: not installed, not measured")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
