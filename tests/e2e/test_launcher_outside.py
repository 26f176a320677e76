"""Static and setuid programs: the launcher watches them from outside.

LD_PRELOAD cannot reach them, so `threadmon record -o F -- PROG` holds PROG
before its exec, starts `threadmon-attach -p PID -o F`, lets PROG go once
the capture has its first bytes, and ends when PROG does, with its status.

Most tests run the source-tree launcher from a scratch directory next to a
stand-in threadmon-attach (a script that logs what it saw), so the
launcher's side is tested whether or not the real sampler is built; the
last one records with the real one and skips while it is not built.
"""
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys

import tmtest
from tmtest import check, workload

SOURCE_LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "scripts", "threadmon")
ENGINE = os.path.join(tmtest.BUILD, "attach", "threadmon-attach")

# The stand-in: records the target's image when it is called (the launcher
# must still hold the program before its exec), marks the capture as begun
# (or refuses, FAKE_ATTACH=fail), then follows the target to its end and
# logs every image it saw.
FAKE_ENGINE = r'''#!/usr/bin/env python3
import json, os, sys, time
args = sys.argv[1:]
pid = int(args[args.index("-p") + 1])
if os.environ.get("FAKE_ATTACH") == "fail":
    print(f"threadmon-attach: proc: PID {pid} is not visible (stand-in refusal)", file=sys.stderr)
    sys.exit(1)
log = {"argv": args, "exe_at_attach": os.readlink(f"/proc/{pid}/exe"),
       "token": os.environ.get("THREADMON_TOKEN")}
if "--connect" in args:  # streaming: the session has begun once connected
    import socket
    host, port = args[args.index("--connect") + 1].rsplit(":", 1)
    time.sleep(0.2)
    conn = socket.create_connection((host, int(port)))
    out = os.environ["FAKE_LOG"]
else:
    out = args[args.index("-o") + 1]
    with open(out, "w") as f:
        f.write("begun\n")
exes = set()
while True:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        exes.add(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        break
    if state in "ZX":
        break
    time.sleep(0.002)
log["exes"] = sorted(exes)
with open(out + ".log", "w") as f:
    json.dump(log, f)
'''


def static_threads():
    path = workload("static_threads")
    if not os.path.exists(path):
        raise tmtest.Skip("no static libc: static_threads was not built")
    return path


def scratch_launcher(with_engine=True):
    """The source launcher copied into a directory of its own (it finds its
    tools next to itself), with the stand-in engine unless told not to."""
    d = os.path.join(tmtest.Temp.dir(), "engine" if with_engine else "none")
    if not os.path.isdir(d):
        os.makedirs(d)
        os.chmod(d, 0o755)
        os.chmod(tmtest.Temp.dir(), 0o755)  # nobody runs it in test_setuid_needs_root
        shutil.copy(SOURCE_LAUNCHER, os.path.join(d, "threadmon"))
        if with_engine:
            engine = os.path.join(d, "threadmon-attach")
            with open(engine, "w") as f:
                f.write(FAKE_ENGINE)
            os.chmod(engine, 0o755)
    return os.path.join(d, "threadmon")


def run(launcher, args, env=None, prefix=()):
    # PATH without build directories: the launcher may only find what is next to it.
    e = dict(os.environ, PATH="/usr/bin:/bin", **(env or {}))
    return subprocess.run([*prefix, sys.executable, launcher, *args], capture_output=True,
                          text=True, timeout=60, env=e)


def capture_path(name):
    return os.path.join(tmtest.Temp.dir(), name)


def test_held_until_attached_and_its_status_kept():
    prog = static_threads()
    out = capture_path("held.tmcap")
    r = run(scratch_launcher(), ["record", "-o", out, "--", prog, "--seconds", "0.3", "--exit",
                                 "3"])
    print(r.stderr)
    check(r.returncode == 3, f"exit status {r.returncode}, expected the program's 3")
    check("started" in r.stdout, "the program ran")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 2, f"a notice and a closing line, got {len(lines)}: {r.stderr!r}")
    notice = lines[0] if lines else ""
    for words in (f"{prog} is statically linked", "watched from outside (threadmon-attach)",
                  "lock acquisitions, hold times, uncontended calls", "docs/attach.md"):
        check(words in notice, f"notice lacks {words!r}: {notice!r}")
    check(lines[-1:] == [f"threadmon: wrote {out} (1 KiB); see: threadmon report {out}"],
          f"closing line: {lines[-1:]}")
    try:
        with open(out + ".log") as f:
            log = json.load(f)
    except OSError:
        check(False, "the stand-in did not follow the program to its end")
        return
    check(log["argv"][:4] == ["-p", log["argv"][1], "-o", out] and log["argv"][1].isdigit(),
          f"threadmon-attach -p PID -o FILE, got {log['argv']}")
    check(log["argv"][4] == "--wait-exec" and log["argv"][6] == "--exit-status-fd",
          f"the launcher's descriptors (the exec, the exit status) passed on: {log['argv']}")
    check(os.path.realpath(log["exe_at_attach"]) != os.path.realpath(prog),
          f"the program was held before its exec while attaching (its image then: "
          f"{log['exe_at_attach']})")
    check(os.path.realpath(prog) in [os.path.realpath(e) for e in log["exes"]],
          f"the same process then became the program: {log['exes']}")


def test_held_program_starts_with_sigpipe_default():
    """Python ignores SIGPIPE and SIGXFSZ from its start and the held
    program is forked from the launcher: it must not inherit that. With its
    output closed it dies of SIGPIPE, as it does run alone (it wrote into
    nothing and exited 0)."""
    prog = static_threads()
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run([sys.executable, scratch_launcher(), "record", "-o",
                            capture_path("pipe.tmcap"), "--", prog, "--seconds", "0.1"],
                           stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
                           env=dict(os.environ, PATH="/usr/bin:/bin"))
    finally:
        os.close(write_end)
    check(r.returncode == 128 + signal.SIGPIPE and "SIGPIPE" in r.stderr,
          f"a static program writing to a closed pipe under the launcher: exit {r.returncode}, "
          f"{r.stderr!r}")


def go_static():
    path = workload("go_static")
    if not os.path.exists(path):
        raise tmtest.Skip("no Go toolchain: go_static was not built")
    return path


def test_go_program_held_until_attached():
    prog = go_static()
    out = capture_path("go.tmcap")
    r = run(scratch_launcher(), ["record", "-o", out, "--", prog, "-seconds", "0.2", "-exit", "5"])
    check(r.returncode == 5, f"exit status {r.returncode}, expected the program's 5: {r.stderr}")
    check(f"{prog} is statically linked: LD_PRELOAD cannot reach it" in r.stderr,
          f"notice: {r.stderr!r}")
    with open(out + ".log") as f:
        log = json.load(f)
    check(os.path.realpath(log["exe_at_attach"]) != os.path.realpath(prog),
          "held before its exec while attaching")


def test_interval_passed_on():
    prog = static_threads()
    out = capture_path("interval.tmcap")
    r = run(scratch_launcher(), ["record", "-o", out, "--interval", "20", "--", prog,
                                 "--seconds", "0.1"])
    check(r.returncode == 0, f"exit status {r.returncode}: {r.stderr}")
    with open(out + ".log") as f:
        argv = json.load(f)["argv"]
    check(argv[-2:] == ["--interval-ms", "20"], f"--interval-ms 20 passed on: {argv}")


def test_script_with_a_static_interpreter():
    """A #! script is judged by its interpreter."""
    static = workload("static_hello")
    if not os.path.exists(static):
        raise tmtest.Skip("no static libc: static_hello was not built")
    script = os.path.join(tmtest.Temp.dir(), "via_static.sh")
    with open(script, "w") as f:
        f.write(f"#!{static}\n")
    os.chmod(script, 0o755)
    r = run(scratch_launcher(), ["record", "-o", capture_path("script.tmcap"), "--", script])
    check(r.returncode == 0 and "static hello" in r.stdout, f"ran: {r.returncode} {r.stderr}")
    check(f"{static} is statically linked" in r.stderr, f"notice names the interpreter: {r.stderr}")


def test_streamed_to_a_display():
    """run --connect: the program is let go once the sampler has connected."""
    prog = static_threads()
    listener = tmtest.Listener()
    log = capture_path("connect")
    r = run(scratch_launcher(), ["run", "--connect", f"127.0.0.1:{listener.port}",
                                 "--", prog, "--seconds", "0.1", "--exit", "4"],
            env={"FAKE_LOG": log})
    check(r.returncode == 4, f"exit status {r.returncode}, expected the program's 4: {r.stderr}")
    with open(log + ".log") as f:
        logged = json.load(f)
    check(logged["argv"][2:4] == ["--connect", f"127.0.0.1:{listener.port}"],
          f"threadmon-attach -p PID --connect HOST:PORT, got {logged['argv']}")
    check(os.path.realpath(logged["exe_at_attach"]) != os.path.realpath(prog),
          "held before its exec until the sampler connected")


def test_terminate_is_passed_on():
    """SIGTERM to the launcher ends the program, which ends the session."""
    prog = static_threads()
    out = capture_path("term.tmcap")
    p = subprocess.Popen([sys.executable, scratch_launcher(), "record", "-o", out, "--", prog,
                          "--seconds", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, PATH="/usr/bin:/bin"))
    check(p.stdout.readline() == "started\n", "the program started")
    p.terminate()
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "the launcher did not end after SIGTERM")
        return
    check(p.returncode == 128 + 15, f"exit status {p.returncode}, expected 143")
    check(f"threadmon: {prog} was killed by SIGTERM" in err, f"said: {err!r}")
    check(os.path.exists(out + ".log"), "the sampler followed the program to its end")


def test_killed_program_recorded_by_the_sampler():
    """The real threadmon-attach: a program killed by a signal (SIGTERM to
    the launcher, passed on) ends the capture with that signal, no status."""
    if not os.path.exists(ENGINE):
        raise tmtest.Skip(f"{ENGINE} is not built yet")
    tmtest.require_report()
    out = capture_path("killed-real.tmcap")
    p = subprocess.Popen([sys.executable, tmtest.LAUNCHER, "record", "-o", out, "--",
                          static_threads(), "--seconds", "30"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    check(p.stdout.readline() == "started\n", "the program started")
    p.terminate()
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "the launcher did not end after SIGTERM")
        return
    check(p.returncode == 128 + 15, f"exit status {p.returncode}, expected 143")
    proc = tmtest.report_json(out).get("process", {})
    check(proc.get("exit_signal") == 15 and proc.get("exit_status") is None,
          f"killed by SIGTERM: exit_signal {proc.get('exit_signal')}, "
          f"exit_status {proc.get('exit_status')}")
    check(proc.get("detached") is False, "not detached: it ended")


def test_refusal_runs_nothing():
    """threadmon-attach could not watch it: the program never starts."""
    prog = static_threads()
    r = run(scratch_launcher(), ["record", "-o", capture_path("refused.tmcap"), "--", prog],
            env={"FAKE_ATTACH": "fail"})
    check(r.returncode == 126, f"exit status {r.returncode}, expected 126")
    check("started" not in r.stdout, f"the program did not run: {r.stdout!r}")
    check("stand-in refusal" in r.stderr, "threadmon-attach's own line is shown")
    check(f"threadmon: threadmon-attach could not watch {prog} (exit status 1); the program was "
          "not run" in r.stderr, f"one line says so: {r.stderr!r}")


def test_no_sampler_built():
    prog = static_threads()
    r = run(scratch_launcher(with_engine=False),
            ["record", "-o", capture_path("none.tmcap"), "--", prog])
    check(r.returncode == 127, f"exit status {r.returncode}, expected 127")
    check("started" not in r.stdout, "the program did not run")
    check(r.stderr.strip().splitlines()[-1:] == [
        "threadmon: cannot find threadmon-attach (build attach/, or install threadmon)"],
        f"one line names the missing tool: {r.stderr!r}")


def test_flight_recorder_needs_the_probe():
    prog = static_threads()
    r = run(scratch_launcher(), ["record", "--last", "5s", "-o", capture_path("last.tmcap"), "--",
                                 prog])
    check(r.returncode == 126 and "needs the probe inside the program" in r.stderr,
          f"--last refused in one line: {r.returncode} {r.stderr!r}")


def test_setuid_needs_root():
    """A setuid copy: refused for another user in one line; root watches it."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise tmtest.Skip("needs root and setpriv to run the launcher as nobody")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        raise tmtest.Skip("no user nobody") from None
    copy = os.path.join(tmtest.Temp.dir(), "setuid_threads")
    shutil.copy(static_threads(), copy)
    os.chmod(copy, 0o755 | stat.S_ISUID)
    if not os.stat(copy).st_mode & stat.S_ISUID:
        raise tmtest.Skip("this file system refuses the setuid bit")
    launcher = scratch_launcher()
    out = os.path.join(tmtest.Temp.dir(), "setuid-out")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o777)
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all"]
    r = run(launcher, ["record", "-o", os.path.join(out, "x.tmcap"), "--", copy], prefix=nobody)
    if "Permission denied" in r.stderr and "setuid" not in r.stderr:
        raise tmtest.Skip(f"nobody cannot run the launcher here: {r.stderr.strip()}")
    check(r.returncode == 126, f"as nobody: exit status {r.returncode}, expected 126")
    check(r.stderr.strip().splitlines() == [
        f"threadmon: {copy}: is setuid: LD_PRELOAD cannot work there, and watching it from "
        "outside needs root (it runs with other ids, not dumpable): run threadmon as root"],
        f"as nobody: one line: {r.stderr!r}")
    check("started" not in r.stdout, "as nobody: the program did not run")
    r = run(launcher, ["record", "-o", capture_path("setuid.tmcap"), "--", copy, "--seconds",
                       "0.1"])
    check(r.returncode == 0 and "started" in r.stdout, f"as root: ran: {r.returncode} {r.stderr}")
    check(f"{copy} is setuid: LD_PRELOAD cannot reach it" in r.stderr, f"notice: {r.stderr!r}")


def record_with_sampler(prog, args, status):
    """Records prog with the real threadmon-attach; its report and the
    program's truth (its last line)."""
    if not os.path.exists(ENGINE):
        raise tmtest.Skip(f"{ENGINE} is not built yet (the external sampler, issue 15)")
    tmtest.require_report()
    out = capture_path(os.path.basename(prog) + "-real.tmcap")
    r = tmtest.launcher("record", "-o", out, "--", prog, *args)
    print(r.stderr)
    check(r.returncode == status, f"exit status {r.returncode}, expected the program's {status}")
    rep = tmtest.report_json(out, expect_ok=False)
    proc = rep.get("process", {})
    check("attach" in proc.get("sources", []), f"sources say attach: {proc.get('sources')}")
    check(proc.get("acquisitions_known") is False, "acquisitions unknown")
    check(os.path.basename(str(proc.get("exe", ""))) == os.path.basename(prog),
          f"process.exe is the program, not the image held before its exec: {proc.get('exe')!r}")
    check(proc.get("exit_status") == status, f"process.exit_status {proc.get('exit_status')}")
    for o in rep.get("sync_objects", []):
        check(o.get("acquisitions") is None and o.get("hold_s") is None,
              f"object {o.get('id')}: acquisitions and holds unknown, not 0: {o}")
    lines = r.stdout.strip().splitlines()
    return rep, json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}


def test_recorded_by_the_sampler():
    """The real threadmon-attach: the static program's threads and states."""
    rep, _ = record_with_sampler(static_threads(), ["--seconds", "1.5", "--exit", "3"], 3)
    byname = {t.get("name"): t for t in rep.get("threads", [])}
    for name in ("st-spin", "st-sleep", "st-lock"):
        check(name in byname, f"thread {name} seen (threads: {sorted(map(str, byname))})")
    if "st-spin" in byname:
        st = byname["st-spin"]["states"]
        check(st.get("on_cpu", 0) + st.get("runnable", 0) + st.get("stolen", 0) > 50,
              f"st-spin computes: {st}")
    for name in ("st-sleep", "st-lock"):
        if name in byname:
            check(byname[name]["states"].get("on_cpu", 100) < 20, f"{name} waits: "
                  f"{byname[name]['states']}")


def test_go_program_recorded_by_the_sampler():
    """The real threadmon-attach on a Go program: its computing thread."""
    prog = go_static()
    r = subprocess.run([prog, "-seconds", "0"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "go_static runs")
    rep, truth = record_with_sampler(prog, ["-seconds", "1.5", "-exit", "6"], 6)
    threads = rep.get("threads", [])
    check(len(threads) >= 3, f"the runtime's threads seen: {len(threads)}")
    spinner = [t for t in threads if t.get("tid") == truth.get("spinner_tid")]
    check(len(spinner) == 1, f"the computing thread {truth.get('spinner_tid')} is seen")
    # Named from the runtime's Ms (runtime.allm), not all "go_static".
    names = {t.get("tid"): str(t.get("name")) for t in threads}
    main = [n for tid, n in names.items() if tid == rep.get("process", {}).get("pid")]
    check(main == ["M0"], f"the main thread is M0: {main} ({names})")
    check(sum(n.endswith(" sysmon") for n in names.values()) == 1, f"one sysmon: {names}")
    check(all(n.startswith("M") and n.split()[0][1:].isdigit() for n in names.values()),
          f"every thread an M: {names}")
    if spinner:
        st = spinner[0]["states"]
        check(st.get("on_cpu", 0) + st.get("runnable", 0) + st.get("stolen", 0) > 50,
              f"and seen computing: {st}")


tmtest.main(globals())
