"""A JVM program: Java's `synchronized` and ReentrantLock contention named
first (java_lock), and nothing about the JVM's own threads (the JIT's compile
queue raised a HIGH barrier_imbalance, and GC/compiler waits filled the top
of the report)."""
import os
import subprocess

import corpus
import tmtest
from corpus import check

THREADS, MILLIS = 3, 1500


def compiled():
    """The classes directory with Contention and Pool compiled (once)."""
    javac = corpus.tool("javac")
    classes = os.path.join(tmtest.Temp.dir(), "classes")
    if not os.path.exists(os.path.join(classes, "Pool.class")):
        os.makedirs(classes, exist_ok=True)
        built = subprocess.run([javac, "-d", classes, corpus.source("Contention.java"),
                                corpus.source("Pool.java")], capture_output=True, text=True,
                               timeout=120)
        if built.returncode:
            raise tmtest.Failed(f"javac failed: {built.stderr.strip()}")
    return classes


def test_jvm_executor_is_no_lock():
    """Pool threads parked for work and a submitter parked on its futures
    wake each other too, but they do not take turns at a lock."""
    java = corpus.tool("java")
    run = corpus.Run("jvm", [java, "-Xshare:auto", "-cp", compiled(), "Pool"])
    check(run.truth.get("tasks") == 300, f"truth {run.truth}")
    check(not run.findings("java_lock"), f"java_lock on an executor: "
          f"{tmtest.describe(run.findings('java_lock'))}")
    corpus.no_false_alarm(run)


def test_jvm_contention():
    java = corpus.tool("java")
    classes = compiled()
    run = corpus.Run("jvm", [java, "-Xshare:auto", "-cp", classes, "Contention", str(THREADS),
                             str(MILLIS)])
    check(run.run.returncode == 0, f"java exited {run.run.returncode}: {run.run.stderr.strip()}")
    check(run.truth.get("sync_turns", 0) > 0 and run.truth.get("lock_turns", 0) > 0,
          f"truth {run.truth}")
    runtime = [t for t in run.report["threads"] if t.get("runtime") == "jvm"]
    names = {t["name"] for t in runtime}
    print(f"  {len(runtime)} JVM housekeeping threads: {sorted(names)}")
    check(any(n.startswith("C2 CompilerThre") or n.startswith("C1 CompilerThre") for n in names)
          and "VM Thread" in names, f"JVM threads not recognised: {sorted(names)}")
    workers = {t["name"]: t for t in run.threads() if t["name"].endswith(tuple("0123456789"))
               and "-worker-" in t["name"]}
    check(not any(t.get("runtime") for t in workers.values()), "a worker taken for the JVM's")
    # The program's contention, named: one java_lock per kind of lock.
    by_lock = {f.get("evidence", {}).get("lock"): f for f in run.findings("java_lock")}
    for lock, prefix in (("synchronized", "sync-worker-"), ("park", "lock-worker-")):
        f = by_lock.get(lock)
        if not check(f is not None, f"no java_lock ({lock}): {tmtest.describe(run.findings())}"):
            continue
        named = {t["name"] for t in run.report["threads"] if t["tid"] in f.get("threads", [])}
        check(named == {f"{prefix}{i}" for i in range(THREADS)}, f"java_lock ({lock}) names {named}")
        check(f.get("evidence", {}).get("share", 0) >= 0.2, f"java_lock ({lock}) share "
              f"{f.get('evidence', {}).get('share')}")
    # Nothing about the JVM's housekeeping.
    jvm_tids = {t["tid"] for t in runtime}
    for f in run.findings():
        check(not jvm_tids & set(f.get("threads", [])),
              f"finding about the JVM's own threads: {f.get('kind')}: {f.get('message')}")
    corpus.no_false_alarm(run, lambda f: f.get("kind") == "java_lock")
    corpus.check_streamed_as_whole(run, "java_lock")
    # Java frames are not named: the report says so and how to find them.
    notes = " ".join(run.report["process"].get("runtime_notes", []))
    check("Java" in notes and "Thread.print" in notes, f"runtime notes {notes!r}")
    # Ranked first: the top objects are the workers', not the JVM's.
    top = run.report["sync_objects"][:6]
    check(not any(o.get("housekeeping") for o in top),
          "JVM housekeeping objects among the top 6 of the report")



def test_jshell_loop_raises_nothing():
    """A plain jshell session running a loop: the JIT compiles it while the
    loop runs, its compiler threads use more CPU than the program's and wait
    on the compile queue that jshell's thread fills, round after round. That
    is the runtime's machinery: no barrier_imbalance (2 of 2 runs said HIGH),
    whole or in windows, nothing else serious; and the loop's own result is
    printed."""
    jshell = corpus.tool("jshell")
    script = ("long s = 0; for (long i = 0; i < 200000000L; i++) s += i % 7;\n"
              "System.out.println(\"sum \" + s);\n/exit\n")
    run = corpus.Run("jshell", [jshell], popen_hook=lambda capture: tmtest.launcher(
        "record", "-o", capture, "--", jshell, input=script, timeout=120))
    check("sum 599999994" in (run.run.stdout or ""),
          f"jshell did not run the loop: {run.run.stdout!r} {run.run.stderr.strip()}")
    check(not run.findings("barrier_imbalance"),
          f"barrier_imbalance in jshell: {tmtest.describe(run.findings('barrier_imbalance'))}")
    # Nor read in windows, where rounds too long for any window are tallied
    # over the run (main: a HIGH barrier_imbalance of the run's rounds).
    streamed = corpus.streamed_findings(run.capture, "barrier_imbalance")
    check(not streamed, f"barrier_imbalance in jshell, 1 s windows: {tmtest.describe(streamed)}")
    corpus.no_false_alarm(run)

tmtest.main(globals())
