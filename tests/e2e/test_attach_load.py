"""Attaching to a loaded thread pool that has run for seconds already
(threadmon record -p PID --duration S): nothing before the attach counts. A
busy server made the switch records pause (its switch rate) and waits were
counted from stale switch-outs: 25-30 objects of MariaDB waited longer than
the 22 s window, one condition variable 268 s; and every LWP's times ran
from its birth (two spinners attached for 2 s read 3.87 s of user time).
The report's numbers hold the model's invariants (tmtest.report_json checks
them) and each thread's CPU and run-queue time fits in what the kernel
counted for it between just before and just after the attach."""
import os
import subprocess
import time

import tmtest
from tmtest import check, workload

ATTACH = os.path.join(tmtest.BUILD, "attach", "threadmon-attach")
DURATION = 2.0


def schedstat(pid):
    """Per tid: (on-CPU s, run-queue s) as the kernel counts them."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                on, rq, _ = f.read().split()
        except OSError:
            continue
        out[int(tid)] = (int(on) / 1e9, int(rq) / 1e9)
    return out


def attach_loaded(extra_env):
    """busy_pool after 3 s of work, attached for DURATION; returns (report,
    kernel counts before, after)."""
    tmtest.require_report()
    if not os.path.exists(ATTACH):
        raise tmtest.Skip("threadmon-attach is not built")
    proc = subprocess.Popen([workload("busy_pool"), "--workers", "6", "--spinners", "2",
                             "--jobs-per-s", "1000", "--job-us", "100", "--warm-s", "3",
                             "--seconds", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        check(proc.stderr.readline().strip() == "ready", "busy_pool never said ready")
        capture = os.path.join(tmtest.Temp.dir(), f"loaded-{proc.pid}.tmcap")
        before = schedstat(proc.pid)
        run = tmtest.launcher("record", "-o", capture, "-p", str(proc.pid), "--duration",
                              str(DURATION), env=dict(os.environ, **extra_env))
        after = schedstat(proc.pid)
        check(run.returncode == 0, f"record -p exited {run.returncode}: {run.stderr.strip()}")
        return tmtest.report_json(capture), before, after
    finally:
        proc.kill()
        proc.wait()


def check_against_kernel(rep, before, after):
    spent_before = max(on + rq for on, rq in before.values())
    # Meaningful only when the pool's threads had used more before the attach
    # than the attach lasts (else times from their birth would fit too).
    if spent_before < DURATION + 0.2:
        raise tmtest.Skip(f"the pool's threads used only {spent_before:.2f} s before the attach")
    for t in rep["threads"]:
        tid, lwp = t["tid"], t.get("lwp") or {}
        if tid not in before or tid not in after:
            continue
        on = after[tid][0] - before[tid][0]
        rq = after[tid][1] - before[tid][1]
        cpu = (lwp.get("user_s") or 0) + (lwp.get("system_s") or 0)
        # /proc's user and system times are in 10 ms clock ticks.
        check(cpu <= on + 0.03, f"{t['name']} ({tid}): {cpu:.3f} s of CPU in the attach, the "
              f"kernel counted {on:.3f} s from before it to after it")
        check((lwp.get("runqueue_s") or 0) <= rq + 0.01,
              f"{t['name']} ({tid}): {lwp.get('runqueue_s')} s run queue, the kernel {rq:.3f} s")
    duration = rep["process"]["duration_s"]
    waits = sum(o.get("wait_s") or 0 for o in rep.get("sync_objects", []))
    lives = sum(t.get("lifetime_s") or 0 for t in rep["threads"])
    check(waits <= lives, f"objects waited {waits:.2f} s, the threads lived {lives:.2f} s")
    pool = [o for o in rep.get("sync_objects", []) if o.get("symbol") in ("pool_lock", "pool_ready")]
    check(pool, f"pool_lock and pool_ready not seen: {rep.get('sync_objects')}")
    for o in pool:
        check((o.get("wait_s") or 0) <= duration * 6 + 0.1,
              f"{o.get('symbol')}: {o.get('wait_s')} s of waits in {duration:.2f} s, 6 waiters")


def test_loaded_pool_records_paused():
    """The switch rate pauses the records (as a busy server's does): waits
    from the reads, never from a stale switch-out."""
    check_against_kernel(*attach_loaded({"THREADMON_MAX_SWITCH_RATE": "200"}))


def test_loaded_pool():
    check_against_kernel(*attach_loaded({}))


if __name__ == "__main__":
    tmtest.main(globals())
