"""The launcher's closing line names the capture a run wrote: one, for any
process tree. An exec'd image (a `#!/usr/bin/env` script, `sh -c 'exec
...'`) and each forked child that starts a session write their own capture
inside it (docs/format.md, "Process trees")."""
import os
import re
import shutil

import tmtest
from tmtest import check, launcher, workload


def record_in_own_dir(name, command, env=None):
    """Records command into a fresh directory; returns (proc, directory,
    names listed by the closing line, the one it says to read)."""
    directory = os.path.join(tmtest.Temp.dir(), name)
    os.mkdir(directory)
    out = os.path.join(directory, "out.tmcap")
    proc = launcher("record", "-o", out, "--", *command, env=env)
    last = proc.stderr.strip().splitlines()[-1:] or [""]
    found = re.match(r"threadmon: wrote (.*); see: threadmon report (\S+)$", last[0])
    if not check(found, f"{name}: closing line {last[0]!r}"):
        return proc, directory, [], None
    listed = re.findall(r"(\S+) \((?:\d+ process(?:es)?, )?\d+ KiB\)", found.group(1))
    return proc, directory, listed, found.group(2)


def tree_of(directory):
    """The report of out.tmcap, a process tree's capture (a directory):
    (processes by pid, reports by pid)."""
    out = os.path.join(directory, "out.tmcap")
    check(os.path.isdir(out), f"{out} is not a process tree's directory")
    doc = tmtest.report_json(out)
    processes = {p["pid"]: p for p in doc.get("tree", {}).get("processes", [])}
    reports = {r["pid"]: r["report"] for r in doc.get("reports", [])}
    return processes, reports


def check_one_capture(name, directory, listed, first):
    """Everything the run wrote is out.tmcap, and the closing line says so."""
    out = os.path.join(directory, "out.tmcap")
    check(sorted(os.listdir(directory)) == ["out.tmcap"],
          f"{name}: the run left {sorted(os.listdir(directory))}, expected only out.tmcap")
    check(listed == [out] and first == out, f"{name}: the closing line names {listed}, {first}")


def test_env_script_names_the_interpreters_capture():
    """env execs python3 in the same process: two images, one capture (the
    tree's directory), whose report is the interpreter's."""
    tmtest.require_report()
    script = os.path.join(tmtest.Temp.dir(), "hello.py")
    with open(script, "w") as f:
        f.write("#!/usr/bin/env python3\nimport os\nprint('pid', os.getpid())\n")
    os.chmod(script, 0o755)
    proc, directory, listed, first = record_in_own_dir("env_script", [script])
    check(proc.returncode == 0, f"env script exited {proc.returncode}: {proc.stderr!r}")
    check_one_capture("env_script", directory, listed, first)
    pid = int(re.search(r"pid (\d+)", proc.stdout).group(1))
    processes, reports = tree_of(directory)
    check(list(processes) == [pid], f"the tree lists {list(processes)}, expected only {pid}")
    exe = reports.get(pid, {}).get("process", {}).get("exe", "")
    check("python3" in os.path.basename(exe), f"the process's report records {exe!r}")


def test_shell_exec_after_a_path_search():
    """The shell tries each PATH directory in turn: the failed tries leave no
    capture of their own, and the program's truncates none."""
    tmtest.require_report()
    env = dict(os.environ, PATH=os.pathsep.join(["/no/such/dir", tmtest.Temp.dir(),
                                                 tmtest.WORKLOADS, os.environ["PATH"]]))
    proc, directory, listed, first = record_in_own_dir(
        "shell_exec", ["sh", "-c", "exec spin_sleep --repeats 2"], env=env)
    check(proc.returncode == 0, f"sh -c exec exited {proc.returncode}: {proc.stderr!r}")
    check_one_capture("shell_exec", directory, listed, first)
    inside = sorted(n for n in os.listdir(os.path.join(directory, "out.tmcap")) if n != "lives")
    check(len(inside) == 2 and re.fullmatch(r"\d+-exec1\.tmcap", inside[0]) and
          re.fullmatch(r"\d+\.tmcap", inside[1]),
          f"the tree holds {inside}, expected the shell's and spin_sleep's captures")
    processes, reports = tree_of(directory)
    (pid, report), = reports.items() if len(reports) == 1 else ((0, {}),)
    exe = report.get("process", {}).get("exe", "")
    check(exe.endswith("/spin_sleep"), f"the process's report records {exe!r}, not spin_sleep")
    check(processes.get(pid, {}).get("exit_status") == 0, f"the tree says {processes.get(pid)}")
    # The shell's own image ends at its exec: no exit status of its own.
    shell = tmtest.report_json(os.path.join(directory, "out.tmcap", f"{pid}.tmcap"))
    shell = shell.get("process", {})
    check(shell.get("exec") is True and shell.get("exit_status") is None,
          f"the shell's capture: exec {shell.get('exec')!r}, "
          f"exit_status {shell.get('exit_status')!r}")


def test_forked_children_are_named():
    """Two forked children that exec a threaded program: the tree lists
    them under the shell, each with its own capture and exit status."""
    tmtest.require_report()
    wl = workload("spin_sleep")
    proc, directory, listed, first = record_in_own_dir(
        "forks", ["sh", "-c", f"{wl} --repeats 2 & {wl} --repeats 2 & wait"])
    check(proc.returncode == 0, f"forking shell exited {proc.returncode}: {proc.stderr!r}")
    check_one_capture("forks", directory, listed, first)
    processes, reports = tree_of(directory)
    root = [p for p in processes.values() if p["depth"] == 0]
    kids = [p for p in processes.values() if p["name"] == "spin_sleep"]
    check(len(root) == 1 and len(kids) == 2 and all(k["ppid"] == root[0]["pid"] for k in kids),
          f"the tree: {list(processes.values())}")
    for k in kids:
        check(k.get("exit_status") == 0 and k["pid"] in reports,
              f"spin_sleep {k['pid']}: {k}, reported: {k['pid'] in reports}")


def test_follow_off_writes_one_capture():
    """THREADMON_FOLLOW=0 follows nothing, even from bash, which hands its
    children the environment array main() got (not environ) and so used to
    keep the probe preloaded in every command it ran."""
    tmtest.require_report()
    if not shutil.which("bash"):
        raise tmtest.Skip("no bash")
    env = dict(os.environ, THREADMON_FOLLOW="0")
    proc, directory, listed, first = record_in_own_dir(
        "follow_off", ["bash", "-c", "for i in 1 2 3; do /bin/true; done; /bin/true"], env=env)
    check(proc.returncode == 0, f"bash exited {proc.returncode}: {proc.stderr!r}")
    check(sorted(os.listdir(directory)) == ["out.tmcap"],
          f"FOLLOW=0 wrote {sorted(os.listdir(directory))}, expected only out.tmcap")
    check(first == os.path.join(directory, "out.tmcap"), f"the line says to read {first}")


def test_relative_output_keeps_its_form():
    """Names are shown the way -o was given."""
    tmtest.require_probe()
    directory = os.path.join(tmtest.Temp.dir(), "relative")
    os.mkdir(directory)
    proc = launcher("record", "-o", "rel.tmcap", "--", "sh", "-c", "exec true", cwd=directory)
    # Two images of one process: one capture, the directory of its tree.
    check(re.search(r"wrote rel\.tmcap \(1 process, \d+ KiB\); see: threadmon report rel\.tmcap$",
                    proc.stderr.strip()), f"closing line {proc.stderr.strip()!r}")
    shutil.rmtree(directory, ignore_errors=True)


tmtest.main(globals())
