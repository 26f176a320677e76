#!/usr/bin/env python3
"""What a display's ended sessions cost: plays N short sessions (a real
probe's stream of cond_wait, recorded once) to threadmon-display, one after
another, and prints its RSS and open descriptors every 50 sessions.

    python3 bench/ended_sessions.py BUILD_DIR [N [DISPLAY]]   (default N: 300)

DISPLAY: another threadmon-display binary (a build before a change).
"""
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_stream(build):
    """cond_wait's stream as its probe sends it to a display (format 1)."""
    server = socket.create_server(("127.0.0.1", 0))
    env = dict(os.environ, LD_PRELOAD=os.path.join(build, "probe", "libthreadmon.so"),
               THREADMON_CONNECT=f"127.0.0.1:{server.getsockname()[1]}")
    env.pop("THREADMON_TOKEN", None)
    prog = subprocess.Popen([os.path.join(build, "tests", "workloads", "cond_wait"),
                             "--delay-ms", "20", "--repeats", "3"], env=env,
                            stdout=subprocess.DEVNULL)
    conn, _ = server.accept()
    data = bytearray()
    conn.settimeout(20)
    while chunk := conn.recv(65536):
        data.extend(chunk)
    prog.wait()
    return bytes(data)


def usage(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return rss // 1024, len(os.listdir(f"/proc/{pid}/fd"))


def main():
    build = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    stream = probe_stream(build)
    port = free_port()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("THREADMON_TOKEN", None)
    tool = sys.argv[3] if len(sys.argv) > 3 else os.path.join(build, "display", "threadmon-display")
    display = subprocess.Popen([tool, "--listen",
                                f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(1)
        rss, fds = usage(display.pid)
        print(f"stream {len(stream)} bytes; before: RSS {rss} MiB, {fds} descriptors")
        for i in range(1, n + 1):
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(stream)
                s.shutdown(socket.SHUT_WR)
                s.settimeout(10)
                try:
                    while s.recv(4096):
                        pass
                except OSError:
                    pass
            if i % 50 == 0:
                time.sleep(0.5)
                rss, fds = usage(display.pid)
                print(f"after {i} sessions: RSS {rss} MiB, {fds} descriptors", flush=True)
    finally:
        display.terminate()
        display.wait()


if __name__ == "__main__":
    main()
