#!/usr/bin/env python3
"""The probe's cost and detail on MariaDB under sysbench OLTP (issue 28.4).

    python3 bench/mariadb_load.py BUILD_DIR [--threads 16] [--seconds 10] [--rounds 2]
                                  [--also OTHER/libthreadmon.so] [--perf PREFIX [--perf-all]]

A throwaway mariadbd (tests/corpus/test_mariadb.py's: a private temporary
directory, a Unix socket only) runs sysbench oltp_read_write bare and under
the probe (LD_PRELOAD, THREADMON_OUTPUT), and under each --also library,
interleaved, `--rounds` times.
For each probed run it prints the probe thread's share of a core over the
sysbench run (its utime+stime from /proc, thread "threadmon"), sysbench's
tps, and from the capture's report: the budget's notices (the lowest step
reached), the switch record pauses, and what was lost. THREADMON_* in the
environment reach the probe (e.g. THREADMON_BUDGET=0 to see the unbounded
cost)."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "corpus"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import test_mariadb as tm  # noqa: E402  (server_argv, wait_ready, sysbench_argv, tps)

TICKS = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid, name):
    """utime+stime seconds of pid's threads called name, by tid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            pass
    return out


def switches(pid):
    """Context switches of pid's live threads so far (status, summed)."""
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                n += sum(int(l.split()[1]) for l in f if "ctxt_switches:" in l)
        except (OSError, ValueError):
            pass
    return n


def process_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def run_once(build, base, args, probed, n):
    """probed: None (bare) or the probe library to preload."""
    argv = tm.server_argv(base)
    env = dict(os.environ)
    capture = os.path.join(base, f"run{n}.tmcap")
    if probed:
        env["LD_PRELOAD"] = probed
        env["THREADMON_OUTPUT"] = capture
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        tm.wait_ready(base, proc, "mariadbd")
        with open(f"{base}/pid") as f:
            pid = int(f.read())
        sb = tm.sysbench_argv(base, "run", args.seconds)
        sb[sb.index(f"--threads={tm.THREADS}")] = f"--threads={args.threads}"
        before, pbefore, t0 = thread_cpu(pid, "threadmon"), process_cpu(pid), time.monotonic()
        perf = None
        if probed and args.perf:
            # The probe thread's own profile over the run (perf record -t).
            who = ["-p", str(pid)] if args.perf_all else ["-t", ",".join(map(str, before))]
            perf = subprocess.Popen(["perf", "record", "-q", "--call-graph", "dwarf,32768",
                                     "-o", f"{args.perf}.{n}", *who],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run = subprocess.Popen(sb, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Switches of the connection threads while they live (they end
        # with the run): from its second second to one before its end.
        time.sleep(1)
        sw0, ts0 = switches(pid), time.monotonic()
        time.sleep(max(1, args.seconds - 2))
        sw1, ts1 = switches(pid), time.monotonic()
        out, err = run.communicate(timeout=args.seconds + 60)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
        after, pafter, t1 = thread_cpu(pid, "threadmon"), process_cpu(pid), time.monotonic()
        run = subprocess.CompletedProcess(sb, run.returncode, out, err)
        tps = tm.tps(tm.finished(run, "run"))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    row = {"probed": probed or "bare", "tps": tps, "server_cpu": (pafter - pbefore) / (t1 - t0),
           "switches_per_s": (sw1 - sw0) / (ts1 - ts0)}
    if probed:
        row["probe_cpu"] = sum(after.get(t, 0) - before.get(t, 0) for t in after) / (t1 - t0)
        rep = subprocess.run([os.path.join(build, "display", "threadmon-report"), "--json",
                              capture], capture_output=True, text=True, timeout=300)
        report = json.loads(rep.stdout)
        proc_ = report.get("process", {})
        notes = proc_.get("notices", [])
        steps = [int(m.group(1)) for s in notes for m in [re.search(r"step (\d+) of", s)] if m]
        row["notices"] = [s for s in notes if "step" in s or "restored" in s or "pause" in s
                          or "switch" in s][:12]
        row["lowest_step"] = max(steps) if steps else 0
        row["detail_steps"] = proc_.get("detail_steps")
        row["data_lost"] = proc_.get("data_lost")
        row["size_kib"] = os.path.getsize(capture) // 1024
        row["objects"] = len(report.get("sync_objects", []))
        row["threads"] = len(report.get("threads", []))
        os.unlink(capture)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--probed-only", action="store_true")
    ap.add_argument("--also", metavar="LIB", action="append", default=[],
                    help="another probe library to run in each round (e.g. main's, for before/after)")
    ap.add_argument("--perf", metavar="PREFIX", help="perf record the probe thread to PREFIX.N")
    ap.add_argument("--perf-all", action="store_true", help="--perf: the whole server")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    base = tempfile.mkdtemp(prefix="tm-mariadb-load-")  # 0700
    try:
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={base}/data",
                        "--auth-root-authentication-method=normal",
                        "--innodb-log-file-size=16M"] +
                       (["--user=root"] if os.geteuid() == 0 else []),
                       capture_output=True, check=True, timeout=120)
        proc = subprocess.Popen(tm.server_argv(base), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        tm.wait_ready(base, proc, "mariadbd")
        subprocess.run(tm.sysbench_argv(base, "prepare"), capture_output=True, check=True,
                       timeout=120)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        n = 0
        configs = ([] if args.probed_only else [None]) + \
            [os.path.join(build, "probe", "libthreadmon.so")] + [os.path.abspath(a) for a in args.also]
        for r in range(args.rounds):
            # Interleaved, the order rotated each round: the machine is shared.
            for probed in configs[r % len(configs):] + configs[:r % len(configs)]:
                n += 1
                row = run_once(build, base, args, probed, n)
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
