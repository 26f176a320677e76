"""The launcher's closing line names every capture a run wrote: an exec'd
image (a `#!/usr/bin/env` script, `sh -c 'exec ...'`) and each forked child
write their own, next to the one given with -o."""
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
    listed = re.findall(r"(\S+) \(\d+ KiB\)", found.group(1))
    return proc, directory, listed, found.group(2)


def check_names_every_file(name, directory, listed):
    on_disk = sorted(os.listdir(directory))
    named = sorted(os.path.basename(p) for p in listed)
    check(named == on_disk, f"{name}: closing line names {named}, the directory holds {on_disk}")
    for path in listed:
        check(os.path.dirname(path) == directory, f"{name}: {path} is not in {directory}")


def test_env_script_names_the_interpreters_capture():
    tmtest.require_report()
    script = os.path.join(tmtest.Temp.dir(), "hello.py")
    with open(script, "w") as f:
        f.write("#!/usr/bin/env python3\nimport os\nprint('pid', os.getpid())\n")
    os.chmod(script, 0o755)
    proc, directory, listed, first = record_in_own_dir("env_script", [script])
    check(proc.returncode == 0, f"env script exited {proc.returncode}: {proc.stderr!r}")
    pid = re.search(r"pid (\d+)", proc.stdout)
    exec_capture = os.path.join(directory, f"out.{pid.group(1) if pid else '?'}-exec1.tmcap")
    check(exec_capture in listed, f"{exec_capture} not named in {listed}")
    check(first == exec_capture, f"the line says to read {first}, not {exec_capture}")
    check_names_every_file("env_script", directory, listed)
    if os.path.exists(exec_capture):
        exe = tmtest.report_json(exec_capture).get("process", {}).get("exe", "")
        check("python3" in os.path.basename(exe), f"{exec_capture} records {exe!r}")


def test_shell_exec_after_a_path_search():
    """The shell tries each PATH directory in turn: the failed tries leave no
    capture of their own, and the program's truncates none."""
    tmtest.require_report()
    env = dict(os.environ, PATH=os.pathsep.join(["/no/such/dir", tmtest.Temp.dir(),
                                                 tmtest.WORKLOADS, os.environ["PATH"]]))
    proc, directory, listed, first = record_in_own_dir(
        "shell_exec", ["sh", "-c", "exec spin_sleep --repeats 2"], env=env)
    check(proc.returncode == 0, f"sh -c exec exited {proc.returncode}: {proc.stderr!r}")
    check(len(listed) == 2, f"{len(listed)} captures named, expected the shell's and "
          f"spin_sleep's: {listed}")
    check_names_every_file("shell_exec", directory, listed)
    if first and re.search(r"out\.\d+-exec1\.tmcap$", first):
        exe = tmtest.report_json(first).get("process", {}).get("exe", "")
        check(exe.endswith("/spin_sleep"), f"{first} records {exe!r}, not spin_sleep")
    else:
        check(False, f"the line says to read {first}, not the exec'd spin_sleep's")
    # The shell's own capture ends at its exec: no exit status of its own
    # (it used to read "exit status 0", whatever the program went on to do).
    shell = tmtest.report_json(os.path.join(directory, "out.tmcap")).get("process", {})
    check(shell.get("exec") is True and shell.get("exit_status") is None,
          f"the shell's capture: exec {shell.get('exec')!r}, "
          f"exit_status {shell.get('exit_status')!r}")


def test_forked_children_are_named():
    tmtest.require_report()
    wl = workload("spin_sleep")
    proc, directory, listed, first = record_in_own_dir(
        "forks", ["sh", "-c", f"{wl} --repeats 2 & {wl} --repeats 2 & wait"])
    check(proc.returncode == 0, f"forking shell exited {proc.returncode}: {proc.stderr!r}")
    # The shell, and per child its fork (a shell) and its exec'd spin_sleep.
    check(len(listed) == 5, f"{len(listed)} captures named, expected 5: {listed}")
    check(first == os.path.join(directory, "out.tmcap"), f"the line says to read {first}")
    check_names_every_file("forks", directory, listed)


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
    check(re.search(r"wrote rel\.tmcap \(\d+ KiB\), rel\.\d+-exec1\.tmcap \(\d+ KiB\); "
                    r"see: threadmon report rel\.\d+-exec1\.tmcap$", proc.stderr.strip()),
          f"closing line {proc.stderr.strip()!r}")
    shutil.rmtree(directory, ignore_errors=True)


tmtest.main(globals())
