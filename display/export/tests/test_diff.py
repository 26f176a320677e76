"""threadmon diff: a run before and after a fix, told in words.
mutex_hold with a 20 ms hold and with a 2 ms one: the wait on big_lock
must fall by most of itself, its serialising finding go, and two runs of
the same thing differ only by noise. mutex_loop --rng rand vs rand_r (the
paper's hidden lock): when the first run shows the lock in rand() at all
(it does not on a machine too loaded for the loopers to run at once), its
wait must be gone after."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "e2e"))
import tmtest  # noqa: E402
from tmtest import check  # noqa: E402

DIFF = os.path.join(tmtest.BUILD, "display", "export", "threadmon-diff")


def diff(a, b, *extra):
    if not os.path.exists(DIFF):
        raise tmtest.Skip(f"{DIFF} not built")
    proc = subprocess.run([DIFF, *extra, a.capture, b.capture], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise tmtest.Failed(f"threadmon-diff exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def test_fix_shortens_the_hold():
    tmtest.require_report()
    before = tmtest.recorded("mutex_hold", ["--rounds", "20", "--hold-ms", "20"])
    after = tmtest.recorded("mutex_hold", ["--rounds", "20", "--hold-ms", "2"])
    text = diff(before, after)
    print(text)
    m = re.search(r"the wait on `[^`]*big_lock` fell from ([\d.]+ m?s) to ([\d.]+ m?s) \(\u2212(\d+)%\)",
                  text)
    if check(m is not None, "the diff says the wait on big_lock fell"):
        check(int(m[3]) >= 60, f"big_lock's wait fell by {m[3]}%, expected most of it")
    d = json.loads(diff(before, after, "--json"))
    check(d["changes"][0]["what"] == "wall", "the wall time comes first")
    ranked = [c for c in d["changes"][1:] if not c["noise"]]
    sizes = [abs(c["after_s"] - c["before_s"]) for c in ranked]
    check(sizes == sorted(sizes, reverse=True), "changes sorted by their size")
    gone = [f["kind"] for f in d["findings"]["gone"]]
    had = [f["kind"] for f in before.report["findings"]]
    if "serialising_object" in had:
        check("serialising_object" in gone or "serialising_object" in
              [f["kind"] for f in d["findings"]["kept"]], f"serialising finding judged: {d['findings']}")
    # The same run against itself: everything is noise, nothing gone or new.
    same = json.loads(diff(before, before, "--json"))
    check(all(c["noise"] for c in same["changes"]), "a capture against itself: all noise")
    check(not same["findings"]["gone"] and not same["findings"]["new"],
          "a capture against itself: no finding gone or new")


def test_hidden_lock_fix():
    tmtest.require_report()
    before = tmtest.recorded("mutex_loop", ["--iterations", "300000", "--rng", "rand"])
    after = tmtest.recorded("mutex_loop", ["--iterations", "300000", "--rng", "rand_r"])
    hidden = [o for o in before.report["sync_objects"]
              if tmtest.kind_of(o) == "internal" and (o.get("wait_s") or 0) > 0.005]
    d = json.loads(diff(before, after, "--json"))
    text = diff(before, after)
    print(text)
    if not hidden:
        raise tmtest.Skip("the rand run shows no wait on rand()'s lock (machine too loaded for "
                          "the loopers to run at once); nothing to compare")
    lock = [c for c in d["changes"] if c["what"] == "object" and "random.c" in c["subject"]
            or c["what"] == "object" and c["subject"].endswith("!lock`")]
    if check(lock, f"the hidden lock is among the changes: {[c['subject'] for c in d['changes']]}"):
        check(lock[0]["after_s"] == 0 and "is gone" in lock[0]["text"],
              f"rand()'s lock is gone after rand_r: {lock[0]['text']}")


def test_pool_that_changed_size():
    """6 multiplying threads, then 2: the pool's lines say both sizes (they
    said "(6 threads)" of the run with 2)."""
    tmtest.require_report()
    before = tmtest.recorded("matrix_mult", ["--threads", "6", "--size", "200", "--rounds", "4"])
    after = tmtest.recorded("matrix_mult", ["--threads", "2", "--size", "200", "--rounds", "4"])
    subjects = [c["subject"] for c in json.loads(diff(before, after, "--json", "--top", "0"))["changes"]
                if c["what"] == "threads" and c["subject"].startswith("`mult-#")]
    check(subjects and all("(6 threads, then 2)" in s for s in subjects),
          f"the mult-# pool's lines: {subjects}")
    same = [c["subject"] for c in json.loads(diff(before, before, "--json", "--top", "0"))["changes"]
            if c["subject"].startswith("`mult-#")]
    check(same and all("(6 threads):" in s for s in same), f"the same run twice: {same}")
    # The launcher hands on --noise-ms (the floor the text names).
    proc = tmtest.launcher("diff", "--noise-ms", "50", before.capture, after.capture)
    check(proc.returncode == 0 and ", 50 ms, or the spread" in proc.stdout,
          f"threadmon diff --noise-ms 50: exit {proc.returncode}, {proc.stdout[-300:]!r} "
          f"{proc.stderr[-300:]!r}")


tmtest.main(globals())
