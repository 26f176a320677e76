"""The program behaves the same with and without the probe (exit status and
output) when it ends by _exit, by pthread_exit, in a forked child, after it
took every descriptor, and when its capture's disk fills up and frees again;
and each capture reads to its end (a Goodbye with the right status)."""
import glob
import os
import subprocess

import tmtest
from tmtest import check, launcher, report_json, workload


def bare(*args):
    return subprocess.run([workload("process_paths"), *args], capture_output=True, text=True,
                          timeout=30)


def recorded(name, *args):
    capture = os.path.join(tmtest.Temp.dir(), f"{name}.tmcap")
    run = launcher("record", "-o", capture, "--", workload("process_paths"), *args, timeout=60)
    return capture, run


def same_as_bare(name, *args):
    """Runs the mode both ways; returns (capture, report) of the probed run."""
    plain = bare(*args)
    capture, run = recorded(name, *args)
    check(run.returncode == plain.returncode,
          f"{name}: exit status {run.returncode} under the probe, {plain.returncode} without")
    check(run.stdout == plain.stdout,
          f"{name}: output {run.stdout!r} under the probe, {plain.stdout!r} without")
    return capture, report_json(capture)


def check_ended(name, report, status, workers=2):
    proc = report.get("process", {})
    check(proc.get("exit_status") == status,
          f"{name}: capture's exit status {proc.get('exit_status')}, expected {status} "
          "(no Goodbye means the end of the run was lost)")
    check(proc.get("duration_s", 0) > 0.1, f"{name}: capture lasts {proc.get('duration_s')} s")
    busy = [t for t in report.get("threads", []) if not t.get("probe") and not t.get("main")]
    check(len(busy) >= workers,
          f"{name}: {len(busy)} worker threads in the capture, expected {workers}")


def test_exit_call():
    tmtest.require_report()
    _, report = same_as_bare("exit_call", "exit_call", "7")
    check_ended("_exit(7)", report, 7)


def test_forked_child_exit_call():
    """A forked child with threads: the run is a process tree, one capture
    holding the parent's and the child's (docs/format.md, "Process trees")."""
    tmtest.require_report()
    capture, tree = same_as_bare("fork_exit", "fork_exit", "5")
    check(glob.glob(capture[:-len(".tmcap")] + ".*.tmcap") == [],
          "a child's capture was written beside the tree's")
    processes = tree.get("tree", {}).get("processes", [])
    reports = {r["pid"]: r["report"] for r in tree.get("reports", [])}
    check(len(processes) == 2 and len(reports) == 2,
          f"{len(processes)} processes, {len(reports)} reports: expected the parent and the child")
    if len(processes) == 2 and sorted(reports) == sorted(p["pid"] for p in processes):
        parent, child = processes
        check_ended("parent", reports[parent["pid"]], 5, workers=0)
        check_ended("child's _exit(5)", reports[child["pid"]], 5)
        check(child.get("exit_status") == 5 and child.get("ended_by") == "_exit",
              f"the tree's index says the child ended {child}")


def test_pthread_exit_ends_process():
    tmtest.require_report()
    _, report = same_as_bare("pthread_exit", "pthread_exit")
    check_ended("pthread_exit", report, 0)


def test_descriptors_taken():
    tmtest.require_report()
    for mode in ("dup_all", "close_all"):
        _, report = same_as_bare(mode, mode)
        check_ended(mode, report, 0)
        # The work after the program took the descriptors is in the capture.
        check(report["process"].get("duration_s", 0) > 0.35,
              f"{mode}: capture ends at {report['process'].get('duration_s')} s, the run took 0.4 s")


def test_disk_full_then_space():
    tmtest.require_report()
    capture, report = same_as_bare("size_limit", "size_limit")
    check_ended("size_limit", report, 0)
    notices = report["process"].get("notices", [])
    gaps = [n for n in notices if n.startswith("capture gap")]
    check(len(gaps) == 1, f"expected one capture gap notice, got {notices}")
    check(report["process"].get("duration_s", 0) > 0.7,
          f"capture ends at {report['process'].get('duration_s')} s, the run took 0.8 s")


tmtest.main(globals())
