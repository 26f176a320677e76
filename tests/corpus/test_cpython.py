"""CPython threads: the GIL named (gil_contention, with what to do about it)
and the threading.Lock they take turns at found (serialising_object).
Before, a run whose threads waited 56-77% for the GIL raised nothing. Runs
the python running this test and Debian's /usr/bin/python3 (stripped: the
GIL is known by its object in _PyRuntime, take_gil has no symbol)."""
import os
import sys

import corpus
import tmtest
from corpus import check


def interpreters():
    seen, out = set(), []
    for p in (sys.executable, "/usr/bin/python3"):
        if p and os.path.exists(p) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            out.append(p)
    return out


def check_python(python):
    run = corpus.Run("cpython", [python, corpus.source("gil_threads.py"), "1.5"])
    t = run.truth
    check(run.run.returncode == 0 and t, f"{python} exited {run.run.returncode}: {run.run.stderr}")
    if not t:
        return
    if t.get("gil"):
        f = corpus.only(run, "gil_contention")
        if f:
            tmtest.mentions(f.get("message"), "GIL", "take_gil", "processes")
            named = set(f.get("threads", []))
            check(set(t["cpu_tids"]) <= named, f"gil_contention names {named}, "
                  f"the computing threads are {t['cpu_tids']}")
            by_thread = f.get("evidence", {}).get("wait_s_by_thread", {})
            cpu_waits = [by_thread.get(str(x), 0) for x in t["cpu_tids"]]
            print(f"  {t['version']}: computing threads waited {cpu_waits} s for the GIL")
            check(min(cpu_waits) > 0, "a computing thread never waited for the GIL")
    f = corpus.only(run, "serialising_object")
    if f:
        check(set(f.get("threads", [])) == set(t["lock_tids"]),
              f"serialising_object names {f.get('threads')}, the lock's threads are {t['lock_tids']}")
        check("PyThread_acquire_lock" in str(f.get("evidence", {}).get("call_site")),
              f"call site {f.get('evidence', {}).get('call_site')}")
    corpus.no_false_alarm(run, lambda f: f.get("kind") in ("gil_contention", "serialising_object"))
    corpus.check_streamed_as_whole(run, "gil_contention")


def test_cpython_threads():
    for python in interpreters():
        print(f"-- {python}")
        check_python(python)


tmtest.main(globals())
