#!/usr/bin/env python3
"""Two ways to get switch records of a running process's threads, measured
on attach_target with 1,000 extra threads: what opening them costs the
attacher (time, descriptors, mapped ring memory) and whether they follow
threads the target creates later.

  per thread x CPU: one inherited event per thread and CPU, each CPU's
                    events redirected into one mapped ring (what
                    threadmon-attach does: probe/base/perf_switch.c)
  per thread:       one event per thread on every CPU (cpu -1), not
                    inherited (an inherited one can be neither mapped nor
                    redirected), each with a ring of its own

usage: bench/attach_perf_layout.py BUILD [--as-nobody]
"""
import argparse
import ctypes
import mmap
import os
import struct
import subprocess
import sys
import time

SYS_PERF_EVENT_OPEN = 298
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY = 1, 9
SAMPLE_TID_TIME_CPU = (1 << 1) | (1 << 2) | (1 << 7)
PERF_EVENT_IOC_SET_OUTPUT = 0x2405
PERF_FLAG_FD_CLOEXEC = 1 << 3
libc = ctypes.CDLL(None, use_errno=True)


def attr(inherit):
    # struct perf_event_attr (size 128): type, size, config, sample_period,
    # sample_type, read_format, then the flag bits.
    flags = (1 << 5)  # exclude_kernel
    flags |= (1 << 18)  # sample_id_all
    flags |= (1 << 25)  # use_clockid
    flags |= (1 << 26)  # context_switch
    if inherit:
        flags |= (1 << 1) | (1 << 35)  # inherit, inherit_thread
    buf = bytearray(128)
    struct.pack_into("IIQQQQQ", buf, 0, PERF_TYPE_SOFTWARE, 128, PERF_COUNT_SW_DUMMY, 0,
                     SAMPLE_TID_TIME_CPU, 0, flags)
    struct.pack_into("i", buf, 92, time.CLOCK_MONOTONIC)  # clockid
    return (ctypes.c_char * 128).from_buffer(buf)


def perf_open(a, tid, cpu):
    fd = libc.syscall(SYS_PERF_EVENT_OPEN, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return fd


def per_thread_cpu(tids, ncpu, pages):
    a = attr(True)
    fds, rings, owner = [], [], {}
    for tid in tids:
        for cpu in range(ncpu):
            fd = perf_open(a, tid, cpu)
            fds.append(fd)
            if cpu not in owner:
                owner[cpu] = fd
                rings.append(mmap.mmap(fd, (1 + pages) * mmap.PAGESIZE))
            elif libc.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, owner[cpu]) < 0:
                raise OSError(ctypes.get_errno(), "SET_OUTPUT")
    return fds, rings


def per_thread(tids, pages):
    a = attr(False)
    fds, rings = [], []
    for tid in tids:
        fd = perf_open(a, tid, -1)
        fds.append(fd)
        rings.append(mmap.mmap(fd, (1 + pages) * mmap.PAGESIZE))
    return fds, rings


def measure(name, fn, pages):
    t0, c0 = time.monotonic(), time.process_time()
    try:
        fds, rings = fn()
    except OSError as e:
        print(f"| {name} | refused: {e} | | | |")
        return
    wall, cpu = (time.monotonic() - t0) * 1e3, (time.process_time() - c0) * 1e3
    kib = len(rings) * (1 + pages) * mmap.PAGESIZE // 1024
    print(f"| {name} | {wall:.0f} | {cpu:.0f} | {len(fds):,} | {len(rings):,} rings, {kib:,} KiB |")
    for r in rings:
        r.close()
    for fd in fds:
        os.close(fd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--extra", type=int, default=1000)
    a = ap.parse_args()
    target = os.path.join(a.build, "attach/tests/attach_target")
    p = subprocess.Popen([target, "--extra", str(a.extra)], stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        if line == "ready\n":
            break
    tids = [int(t) for t in os.listdir(f"/proc/{p.pid}/task")]
    ncpu = os.cpu_count()
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"{len(tids)} threads, {ncpu} CPUs, uid {os.getuid()}, perf_event_mlock_kb "
          f"{open('/proc/sys/kernel/perf_event_mlock_kb').read().strip()}, load average "
          f"{os.getloadavg()[0]:.1f}")
    print("\n| layout | open + map, wall ms | CPU ms | descriptors | mapped |")
    print("|---|---|---|---|---|")
    for _ in range(3):
        measure("per thread x CPU, inherited, one 64-page ring a CPU",
                lambda: per_thread_cpu(tids, ncpu, 64), 64)
        measure("per thread, CPU -1, a 1-page ring each", lambda: per_thread(tids, 1), 1)
    p.kill()
    p.wait()


if __name__ == "__main__":
    main()
