"""A Go program with cgo: the pthread mutex its C code takes is named
(serialising_object), and the runtime's parked Ms are not locks (an idle Go
runtime raised four HIGH/MEDIUM internal_lock findings on
runtime.futexsleep/notesleep)."""
import os
import subprocess

import corpus
import tmtest
from corpus import check

WORKERS, MILLIS = 4, 1500


def go_env():
    env = dict(os.environ, CGO_ENABLED="1", GOTOOLCHAIN="local", GOPROXY="off")
    home = env.get("HOME")
    if not home or not os.access(home, os.W_OK):  # go needs a cache directory
        env["GOCACHE"] = os.path.join(corpus.CORPUS_BUILD, "go-cache")
    return env


def test_go_cgo():
    go = corpus.tool("go", "/usr/local/go/bin", "/usr/lib/go/bin")
    corpus.tool("gcc")  # cgo needs a C compiler
    exe = os.path.join(tmtest.Temp.dir(), "cgo_contention")
    built = subprocess.run([go, "build", "-o", exe, corpus.source("cgo_contention.go")],
                           capture_output=True, text=True, timeout=300, env=go_env())
    if built.returncode:
        raise tmtest.Failed(f"go build failed: {built.stderr.strip()}")
    run = corpus.Run("go_cgo", [exe, str(WORKERS), str(MILLIS)])
    check(run.truth.get("c_calls", 0) > 0, f"truth {run.truth}; stderr {run.run.stderr.strip()}")
    check(not run.findings("internal_lock"),
          f"the Go runtime's parking taken for a lock: {tmtest.describe(run.findings('internal_lock'))}")
    f = corpus.only(run, "serialising_object")
    if f:
        tmtest.mentions(f.get("message"), "c_table_lock")
        check("c_update" in str(f.get("evidence", {}).get("call_site")),
              f"call site {f.get('evidence', {}).get('call_site')}")
    corpus.no_false_alarm(run, lambda f: f.get("kind") == "serialising_object"
                          and "c_table_lock" in f.get("message", ""))
    # What the user cannot see here, said: goroutine locks, and where to look.
    notes = " ".join(run.report["process"].get("runtime_notes", []))
    check("goroutine" in notes and "pprof" in notes, f"runtime notes {notes!r}")


tmtest.main(globals())
