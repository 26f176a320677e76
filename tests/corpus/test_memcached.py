"""memcached under load: its worker threads' real contention (the item and
stats locks inside memcached) ranked first, its event loops idle (waiting
for events) and no finding about its idle listener, workers or maintenance
threads (an idle event loop in epoll is waiting for work; before, five LOW
never_runs on an idle memcached)."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import corpus
import tmtest
from corpus import check

CLIENTS = 4
IDLE_S = 1.0   # no clients yet: every memcached thread idles
LOAD_S = 1.5   # then CLIENTS connections set and get a few hot keys
ATTACH_S = 2   # the bare server attached from outside under the same load


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BATCH = 64  # sets sent in one write: a worker runs them back to back


def client(port, seconds, counts, k):
    """Batches of sets (noreply) on two hot keys, then a get to keep pace:
    each worker spends its time in the same item and LRU locks as the
    others. One set and get at a time, the Python clients (one GIL) kept
    the workers apart: on a busy machine a run saw no contention at all."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        end, n, value = time.monotonic() + seconds, 0, b"v" * 100
        while time.monotonic() < end:
            batch = b"".join(b"set k%d 0 0 100 noreply\r\n" % ((n + i) % 2) + value + b"\r\n"
                             for i in range(BATCH))
            s.sendall(batch + b"get k0\r\n")
            while f.readline() not in (b"END\r\n", b""):
                pass
            n += BATCH
        counts[k] = n


def memcached_argv(port):
    argv = [corpus.tool("memcached", "/usr/bin"), "-p", str(port), "-l", "127.0.0.1", "-t", "4",
            "-U", "0"]
    if os.geteuid() == 0:
        argv[1:1] = ["-u", "root"]  # memcached refuses to run as root otherwise
    return argv


def load(port, clients, seconds):
    """CLIENTS connections hammering the hot keys for `seconds`."""
    counts = [0] * clients
    ts = [threading.Thread(target=client, args=(port, seconds, counts, k)) for k in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"  {sum(counts)} sets from {clients} clients")


def record_under_load(capture, clients=CLIENTS):
    port = free_port()
    argv = memcached_argv(port)
    proc = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "record", "-o", capture, "--", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_listening(port, proc)
    time.sleep(IDLE_S)
    load(port, clients, LOAD_S)
    proc.send_signal(signal.SIGTERM)  # the launcher passes it on; memcached exits 0
    out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def wait_listening(port, proc):
    deadline = time.monotonic() + 10
    while True:  # until memcached listens
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                out, err = proc.communicate()
                raise tmtest.Failed(f"memcached never listened on {port}: {err.strip()}")
            time.sleep(0.05)


def record_idle(capture):
    """memcached with no client at all: five threads idle in epoll, four
    maintenance threads in cond waits."""
    return record_under_load(capture, clients=0)


def check_idle_loops(run, at_least):
    """memcached's event loops (the main thread's listener and each worker)
    wait in epoll_wait: idle, waiting for events, not sleeping."""
    loops = run.threads("mc-worker") + [t for t in run.threads() if t.get("main")]
    check(len(loops) >= 5, f"{len(loops)} event loop threads, expected the main thread and 4 workers")
    for t in loops:
        idle, sleeping = t["states"].get("idle", 0), t["states"].get("sleeping", 0)
        print(f"  {t.get('name')} ({t['tid']}): idle {idle}%, sleeping {sleeping}%")
        check(idle >= at_least, f"{t.get('name')} ({t['tid']}) idle {idle}%, expected >= {at_least}%")
        check(sleeping < idle, f"{t.get('name')} ({t['tid']}) sleeping {sleeping}% >= idle {idle}%")


def test_memcached_idle():
    run = corpus.Run("memcached", ["memcached"], popen_hook=record_idle)
    check(not run.findings(), f"idle memcached: {tmtest.describe(run.findings())}")
    check_idle_loops(run, 90)


def test_memcached_under_load():
    run = corpus.Run("memcached", ["memcached"], popen_hook=record_under_load)
    workers = run.threads("mc-worker")
    check(len(workers) == 4, f"{len(workers)} mc-worker threads, expected 4")
    check(all(t["states"]["on_cpu"] > 0 for t in workers), "an mc-worker never ran under load")
    # Idle event loops and maintenance threads are not a problem.
    check(not run.findings("never_runs"),
          f"never_runs on memcached: {tmtest.describe(run.findings('never_runs'))}")
    corpus.no_false_alarm(run)
    # Idle for IDLE_S before the clients come, and between their requests.
    check_idle_loops(run, 20)
    # Its real contention: the most contended mutex is one inside memcached
    # (an item, LRU or stats lock) that its workers waited for.
    mutexes = sorted((o for o in run.report["sync_objects"]
                      if tmtest.kind_of(o) == "mutex" and o.get("contentions")),
                     key=lambda o: -o["contentions"])
    if check(bool(mutexes), "no contended mutex in memcached under load"):
        top = mutexes[0]
        names = {t["tid"]: str(t.get("name")) for t in run.report["threads"]}
        waiters = sorted({names.get(w["tid"], "?") for w in top.get("waiters", [])})
        print(f"  most contended mutex: {top.get('module')} @ {top.get('call_site')}, "
              f"{top['contentions']} of {top['acquisitions']} contended, waiters {waiters}")
        check("memcached" in top.get("call_site", ""),
              f"the most contended mutex is not taken in memcached: {top.get('call_site')}")
        check("mc-worker" in waiters, f"no mc-worker among its waiters: {waiters}")


def test_memcached_attached_under_load():
    """The bare server, attached from outside (`record -p`) for ATTACH_S
    while its clients keep it busy: no impossible number."""
    tmtest.require_report()
    port = free_port()
    server = subprocess.Popen(memcached_argv(port), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    capture = os.path.join(tmtest.Temp.dir(), "memcached-attached.tmcap")
    try:
        wait_listening(port, server)
        loader = threading.Thread(target=load, args=(port, CLIENTS, ATTACH_S + 1.5))
        loader.start()
        time.sleep(0.5)
        rec = subprocess.run([sys.executable, tmtest.LAUNCHER, "record", "-p", str(server.pid),
                              "--duration", str(ATTACH_S), "-o", capture],
                             capture_output=True, text=True, timeout=ATTACH_S + 60)
        loader.join()
    finally:
        server.kill()
        server.communicate()
    check(rec.returncode == 0, f"threadmon record -p exited {rec.returncode}: {rec.stderr[-400:]}")
    corpus.check_attached(capture, ATTACH_S)


tmtest.main(globals())
