"""A process watched from outside that execs another program: threadmon-attach
follows it into the new image (an Exec frame), so the report names the program
it became, says when it exec'd and from what, and counts the new image's
threads, alone and in a recorded process tree. A probe ends its session at an
exec (Goodbye END_EXEC) and the new image opens its own; from outside the
session goes on."""
import os
import subprocess
import sys
import time

import tmtest
from tmtest import check, workload

ATTACH = os.path.join(tmtest.BUILD, "attach", "threadmon-attach")


def test_exec_while_watched():
    """exec_later waits on its stdin; once the watch has begun it is told to
    exec spin_sleep, which starts two threads and ends."""
    tmtest.require_report()
    if not os.path.exists(ATTACH):
        raise tmtest.Skip("threadmon-attach is not built")
    spin = workload("spin_sleep")
    args = ["--threads", "2", "--spin-ms", "10", "--sleep-ms", "20", "--repeats", "10"]
    proc = subprocess.Popen([workload("exec_later"), spin, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    capture = os.path.join(tmtest.Temp.dir(), "exec.tmcap")
    watch = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "record", "-o", capture, "-p",
                              str(proc.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    # The watch has read the process once its capture holds its Hello.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and watch.poll() is None and (
            not os.path.exists(capture) or os.path.getsize(capture) < 200):
        time.sleep(0.01)
    time.sleep(0.2)
    proc.stdin.write("\n")
    proc.stdin.close()
    # Reaped after the watch ended: it reads the exit status from the zombie.
    _, err = watch.communicate(timeout=30)
    proc.wait(timeout=30)
    proc.stdout.close()
    check(watch.returncode == 0, f"record -p exited {watch.returncode}: {err.strip()}")
    rep = tmtest.report_json(capture)
    process = rep["process"]
    check(process.get("exe") == os.path.realpath(spin),
          f"the process is described as {process.get('exe')!r}, not the program it became")
    check(process.get("argv") == [spin, *args], f"its argv: {process.get('argv')}")
    execs = process.get("execs") or []
    if check(len(execs) == 1, f"execs: {execs}"):
        e = execs[0]
        check(e["from_exe"] == os.path.realpath(workload("exec_later")) and
              e["to_exe"] == os.path.realpath(spin), f"the exec: {e}")
        check(e["from_argv"][:2] == [workload("exec_later"), spin], f"from argv {e['from_argv']}")
        check(0.1 < e["at_s"] < process["duration_s"], f"exec'd at {e['at_s']} s of "
              f"{process['duration_s']} s")
    check(process.get("exit_status") == 0, f"its end: {process}")
    names = {t.get("tid"): t.get("name") for t in rep.get("threads", [])}
    check(names.get(proc.pid) == "spin_sleep", f"the main thread's name: {names}")
    check(len(names) >= 3, f"the new image's threads: {names}")
    text = subprocess.run([sys.executable, tmtest.LAUNCHER, "report", capture],
                          capture_output=True, text=True, timeout=60).stdout
    check(f": {os.path.realpath(spin)}\n" in text, f"the report's process line: {text[:600]!r}")
    check(f"exec'd at " in text and f"to {os.path.realpath(spin)}" in text,
          f"the report says it exec'd: {text[:900]!r}")
    if execs:
        print(f"  exec'd at {execs[0]['at_s']:.3f} s of {process['duration_s']:.3f} s")


def test_tree_child_execs_while_watched():
    """In a recorded tree, a child without a session (a subshell, no thread)
    is watched from outside after 0.1 s; at 0.6 s it execs sleep, which
    starts no session either: its watch says it became sleep."""
    tmtest.require_report()
    if not os.path.exists(ATTACH):
        raise tmtest.Skip("threadmon-attach is not built")
    out = os.path.join(tmtest.Temp.dir(), "tree")
    run = tmtest.launcher("record", "-o", out, "--", "bash", "-c",
                          "(/bin/sleep 0.6; exec /bin/sleep 0.3); true")
    check(run.returncode == 0, f"exited {run.returncode}: {run.stderr!r}")
    doc = tmtest.report_json(out)
    watched = [r for r in doc["reports"] if r["report"]["process"].get("execs")]
    if not check(len(watched) == 1, f"reports with an exec: {len(watched)} of "
                 f"{[r['report']['process']['exe'] for r in doc['reports']]}"):
        return
    process = watched[0]["report"]["process"]
    e = process["execs"][0]
    check(os.path.basename(e["from_exe"]) == "bash" and
          os.path.basename(e["to_exe"]) == "sleep" and e["to_argv"] == ["/bin/sleep", "0.3"],
          f"the exec: {e}")
    check(process["exe"] == e["to_exe"] and process["argv"] == ["/bin/sleep", "0.3"],
          f"the watched child is described as {process['exe']} {process['argv']}")


def test_each_exec_once():
    """exec_chain execs itself 30 times, 30 ms apart, each image's argv[1]
    the execs still to come, with 100,000 environment variables: the kernel
    sets the new image's stack start twice, its arguments readable in
    between, for about a millisecond with that many. Each exec the watch
    records steps argv[1] down (by one, or more if a late tick saw two
    at once); a second exec of the same image (a step of 0) is the
    in-between stack read as another exec (11% of execs before the fix)."""
    tmtest.require_report()
    if not os.path.exists(ATTACH):
        raise tmtest.Skip("threadmon-attach is not built")
    proc = subprocess.Popen([workload("exec_chain"), "30", "30"])
    capture = os.path.join(tmtest.Temp.dir(), "chain.tmcap")
    try:
        run = tmtest.launcher("record", "-o", capture, "-p", str(proc.pid))
    finally:
        proc.wait(timeout=60)
    check(run.returncode == 0, f"record -p exited {run.returncode}: {run.stderr.strip()}")
    execs = tmtest.report_json(capture)["process"].get("execs") or []
    steps = [(e["from_argv"][1], e["to_argv"][1]) for e in execs]
    check(len(steps) >= 15, f"{len(steps)} of 30 execs recorded: {steps}")
    check(all(int(a) > int(b) for a, b in steps), f"an exec recorded twice: {steps}")
    check(all(b == c for (_, b), (c, _) in zip(steps, steps[1:])), f"execs out of order: {steps}")
    check(not steps or steps[-1][1] == "0", f"the last exec: {steps[-1:]}")


tmtest.main(globals())
