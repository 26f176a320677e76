"""One -o, one capture, for any process tree (docs/format.md, "Process
trees"): a shell running /bin/true 50 times and a threaded program makes one
directory holding the tree's index and the captures of the processes that
started a session; the short children are in the index only (their life:
exit status, lifetime, CPU), and the captures written one file per process
(the probe without the launcher) still open."""
import json
import os
import re
import subprocess

import tmtest
from tmtest import check, launcher, workload


def test_tree_is_one_capture():
    tmtest.require_report()
    directory = os.path.join(tmtest.Temp.dir(), "tree")
    os.mkdir(directory)
    out = os.path.join(directory, "run.tmcap")
    wl = workload("spin_sleep")
    script = (f"for i in $(seq 50); do /bin/true; done; /bin/false; "
              f"{wl} --threads 2 --repeats 2 --spin-ms 5 --sleep-ms 5; exit 3")
    proc = launcher("record", "-o", out, "--", "sh", "-c", script)
    check(proc.returncode == 3, f"the program's status 3 came back as {proc.returncode}: "
          f"{proc.stderr!r}")
    check(os.listdir(directory) == ["run.tmcap"],
          f"the run left {sorted(os.listdir(directory))}, expected only run.tmcap")
    check(re.search(r"wrote \S*run\.tmcap \(5\d processes, \d+ KiB\); see: threadmon report",
                    proc.stderr), f"closing line {proc.stderr.strip()!r}")
    inside = sorted(os.listdir(out))
    check(len(inside) == 3 and "lives" in inside,
          f"the tree holds {inside}: expected the index and the shell's and spin_sleep's captures")

    doc = tmtest.report_json(out)
    processes = doc["tree"]["processes"]
    root = processes[0]
    check(root["depth"] == 0 and root["name"] == "sh" and root.get("exit_status") == 3,
          f"the root: {root}")
    trues = [p for p in processes if p["name"] == "true"]
    check(len(trues) == 50, f"{len(trues)} /bin/true listed, expected 50")
    for p in trues:
        if not check(p["ppid"] == root["pid"] and p.get("exit_status") == 0 and
                     "capture" not in p and p["lifetime_s"] > 0 and
                     p["user_cpu_s"] + p["system_cpu_s"] > 0, f"a /bin/true: {p}"):
            break
    false = [p for p in processes if p["name"] == "false"]
    check(len(false) == 1 and false[0].get("exit_status") == 1, f"/bin/false: {false}")
    spin = [p for p in processes if p["name"] == "spin_sleep"]
    check(len(spin) == 1 and spin[0].get("exit_status") == 0 and "capture" in spin[0],
          f"spin_sleep: {spin}")
    reports = {r["pid"]: r["report"] for r in doc["reports"]}
    check(sorted(reports) == sorted([root["pid"], spin[0]["pid"]]),
          f"reports of {sorted(reports)}: expected the shell's and spin_sleep's")
    threads = [t for t in reports.get(spin[0]["pid"], {}).get("threads", [])
               if not t.get("probe")]
    check(len(threads) == 3, f"spin_sleep's report has {len(threads)} program threads, "
          "expected main and 2 workers")

    text = subprocess.run([tmtest.LAUNCHER, "report", out], capture_output=True, text=True,
                          timeout=60)
    check(text.returncode == 0, f"the text report exited {text.returncode}: {text.stderr}")
    check(re.search(r"Process tree: 5\d processes, 2 with a session", text.stdout) and
          len(re.findall(r"exit 0 .* life only +true", text.stdout)) == 50 and
          f"=== process {spin[0]['pid']} (spin_sleep) ===" in text.stdout,
          f"the text report:\n{text.stdout[:3000]}")
    one = json.loads(subprocess.run([tmtest.LAUNCHER, "report", "--json", "--pid",
                                     str(spin[0]["pid"]), out], capture_output=True, text=True,
                                    timeout=60).stdout or "{}")
    check([r["pid"] for r in one.get("reports", [])] == [spin[0]["pid"]],
          f"--pid {spin[0]['pid']} reported {[r['pid'] for r in one.get('reports', [])]}")

    # export: the program's own process by default, another with --pid; a
    # process without a session has nothing to export, said in one line.
    for pid, name in ((None, "root.json"), (spin[0]["pid"], "spin.json")):
        target = os.path.join(tmtest.Temp.dir(), name)
        argv = [tmtest.LAUNCHER, "export", "--format", "chrome", "-o", target, out]
        argv[2:2] = ["--pid", str(pid)] if pid else []
        exp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        check(exp.returncode == 0 and os.path.getsize(target) > 0,
              f"export {argv[2:]}: {exp.returncode} {exp.stderr}")
        if exp.returncode == 0:
            with open(target) as f:
                pids = {e.get("pid") for e in json.load(f).get("traceEvents", [])}
            want = pid or root["pid"]
            check(want in pids, f"export of {want}: the trace has pids {sorted(map(str, pids))}")
    exp = subprocess.run([tmtest.LAUNCHER, "export", "--format", "chrome", "--pid",
                          str(trues[0]["pid"]), "-o", os.path.join(tmtest.Temp.dir(), "t.json"),
                          out], capture_output=True, text=True, timeout=60)
    check(exp.returncode == 1 and "its life only" in exp.stderr,
          f"export of a /bin/true: {exp.returncode} {exp.stderr}")

    # diff compares single captures: a tree gets one line naming a file in it
    # to give instead (before: "cannot open: file to open is a directory").
    dif = subprocess.run([tmtest.LAUNCHER, "diff", out, out], capture_output=True, text=True,
                         timeout=60)
    check(dif.returncode == 1 and dif.stderr.count("\n") == 1
          and "a process tree's capture; diff compares one process's capture, such as "
          + os.path.join(out, f"{root['pid']}.tmcap") in dif.stderr,
          f"diff of a tree: {dif.returncode} {dif.stderr!r}")

    # Recorded again at the same name, as a file would be replaced.
    again = launcher("record", "-o", out, "--", "/bin/true")
    check(again.returncode == 0 and os.path.isfile(out) and os.listdir(directory) == ["run.tmcap"],
          f"recording over a tree: {again.returncode} {again.stderr!r}, left "
          f"{sorted(os.listdir(directory))}")


def test_killed_children_show_their_signal():
    """A child killed by a signal writes no line of its own: its parent
    reaps it (the wait family) and writes how it ended and its CPU."""
    tmtest.require_report()
    out = os.path.join(tmtest.Temp.dir(), "killed.tmcap")
    script = ('sleep 30 & kill -KILL $!; wait $!; sh -c \'kill -TERM $$\'; '
              'sh -c \'exec sleep 30\' & sleep 0.05; kill -HUP $!; wait; exit 0')
    proc = launcher("record", "-o", out, "--", "sh", "-c", script)
    check(proc.returncode == 0, f"exited {proc.returncode}: {proc.stderr!r}")
    processes = tmtest.report_json(out)["tree"]["processes"]
    root = processes[0]
    killed = sorted(p.get("signal", 0) for p in processes
                    if p.get("ended_by") == "signal" and p["ppid"] == root["pid"])
    check(killed == [1, 9, 15], f"signals of the killed children {killed}, expected [1, 9, 15]: "
          f"{processes}")
    check(not [p for p in processes if "ended_by" not in p],
          f"processes whose end was not seen: {processes}")


def test_long_lived_lazy_child_is_watched():
    """A child that makes no thread but lives on (sleep 0.4) is watched from
    outside once it has lived 0.1 s: its capture has its main thread's
    states; the short ones around it still have none."""
    tmtest.require_report()
    out = os.path.join(tmtest.Temp.dir(), "watched.tmcap")
    proc = launcher("record", "-o", out, "--", "sh", "-c",
                    "sleep 0.4; for i in $(seq 10); do /bin/true; done")
    check(proc.returncode == 0, f"exited {proc.returncode}: {proc.stderr!r}")
    doc = tmtest.report_json(out)
    processes = doc["tree"]["processes"]
    sleeps = [p for p in processes if p["name"] == "sleep"]
    if not check(len(sleeps) == 1 and "capture" in sleeps[0] and
                 sleeps[0].get("exit_status") == 0 and sleeps[0]["lifetime_s"] >= 0.35,
                 f"sleep: {sleeps}"):
        return
    trues = [p for p in processes if p["name"] == "true"]
    check(len(trues) == 10 and not [p for p in trues if "capture" in p],
          f"the /bin/true children: {trues}")
    reports = {r["pid"]: r["report"] for r in doc["reports"]}
    threads = reports.get(sleeps[0]["pid"], {}).get("threads", [])
    check(len(threads) == 1 and threads[0]["main"] and threads[0]["lifetime_s"] >= 0.2 and
          threads[0]["states"]["sleeping"] >= 80,
          f"sleep's threads, watched from outside: {threads}")


def test_parallel_lazy_children_are_all_watched():
    """make -j8's shape: eight children without threads living at once. Each
    is watched (the launcher starts the watchers without waiting on each
    one's start-up), and each watch's start line gives the child's own start
    time, the same as its end line's."""
    tmtest.require_report()
    out = os.path.join(tmtest.Temp.dir(), "parallel.tmcap")
    proc = launcher("record", "-o", out, "--", "sh", "-c",
                    "for i in 1 2 3 4 5 6 7 8; do sleep 0.8 & done; wait")
    check(proc.returncode == 0, f"exited {proc.returncode}: {proc.stderr!r}")
    starts, ends = {}, {}
    with open(os.path.join(out, "lives")) as f:
        for line in f:
            words = dict(w.split("=", 1) for w in line.split()[3:] if "=" in w)
            if line.split()[2] == "start" and words.get("capture", "").endswith("-watch.tmcap"):
                starts[words["pid"]] = int(words["since"])
            elif line.split()[2] == "end" and words.get("name") == "sleep":
                ends[words["pid"]] = int(words["since"])
    check(len(ends) == 8 and sorted(starts) == sorted(ends),
          f"{len(ends)} sleeps ended, {sorted(ends)}; watched: {sorted(starts)}")
    for pid in set(starts) & set(ends):
        if not check(abs(starts[pid] - ends[pid]) < 50_000_000,
                     f"sleep {pid}: the watch says it began at {starts[pid]}, its end line "
                     f"at {ends[pid]}"):
            break


def test_one_file_per_process_still_opens():
    """The probe without the launcher (no THREADMON_TREE) writes a capture
    per followed process, as before; each opens."""
    tmtest.require_report()
    directory = os.path.join(tmtest.Temp.dir(), "old")
    os.mkdir(directory)
    env = dict(os.environ, LD_PRELOAD=tmtest.PROBE,
               THREADMON_OUTPUT=os.path.join(directory, "old.tmcap"))
    env.pop("THREADMON_TREE", None)
    wl = workload("spin_sleep")
    proc = subprocess.run(["sh", "-c", f"{wl} --repeats 1 & wait"], env=env,
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"exited {proc.returncode}: {proc.stderr}")
    names = sorted(os.listdir(directory))
    check("old.tmcap" in names and len(names) >= 2, f"wrote {names}")
    for name in names:
        report = tmtest.report_json(os.path.join(directory, name))
        check(report.get("process", {}).get("pid"), f"{name}: no process in its report")


tmtest.main(globals())
