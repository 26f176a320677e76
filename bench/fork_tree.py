#!/usr/bin/env python3
"""Fork-heavy programs under the probe, before and after (issue 26, docs/benchmarks.md,
"Fork-heavy programs and process trees"): wall and CPU per child, and the files a run leaves.

    python3 bench/fork_tree.py BUILD WHAT CONFIGS ROUNDS [OLD_LIBTHREADMON]

WHAT: _exit or exit (tm-bench-fork 300 WHAT 200), or shell (sh -c 'for i in $(seq 300); do
/bin/true; done'). CONFIGS, comma-separated: bare; tree (the probe as `threadmon record` runs
it, THREADMON_TREE); old (the probe without THREADMON_TREE: a session per child); main (the
library OLD_LIBTHREADMON, e.g. main's, as old); before (OLD_LIBTHREADMON as tree). Rounds interleaved, order rotated, medians."""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def env_for(kind, run_dir, new_lib, old_lib):
    env = dict(os.environ)
    if kind == "bare":
        return env
    env["LD_PRELOAD"] = old_lib if kind in ("main", "before") else new_lib
    env["THREADMON_OUTPUT"] = os.path.join(run_dir, "c.tmcap")
    if kind in ("tree", "before"):
        tree = os.path.join(run_dir, "tree")
        os.mkdir(tree)
        open(os.path.join(tree, "lives"), "x").close()
        env["THREADMON_TREE"] = tree
    return env


def run(kind, argv, n, fork_bench, new_lib, old_lib):
    run_dir = tempfile.mkdtemp(prefix="tm-forktree-")
    try:
        env = env_for(kind, run_dir, new_lib, old_lib)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600).stdout
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        files = sum(len(names) for _, _, names in os.walk(run_dir))
        if argv[0] == fork_bench:
            j = json.loads(out.strip().splitlines()[-1])
            return j["wall_us_per_child"], j["cpu_us_per_child"], files
        return wall * 1e6 / n, cpu * 1e6 / n, files
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    build, what, kinds, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
    new_lib = os.path.abspath(os.path.join(build, "probe", "libthreadmon.so"))
    old_lib = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else new_lib
    fork_bench = os.path.abspath(os.path.join(build, "bench", "tm-bench-fork"))
    n = 300
    argv = (["sh", "-c", f"for i in $(seq {n}); do /bin/true; done"] if what == "shell"
            else [fork_bench, str(n), what, "200"])
    res = {k: [] for k in kinds}
    for r in range(rounds):
        for k in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
            res[k].append(run(k, argv, n, fork_bench, new_lib, old_lib))
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
           for k, v in res.items()}
    base = med.get("bare", next(iter(med.values())))
    for k in kinds:
        wall, cpu = med[k]
        print(f"{what:6} {k:5} wall {wall:8.1f} us ({wall / base[0]:4.2f}x)  "
              f"cpu {cpu:8.1f} us ({cpu / base[1]:4.2f}x)  files {res[k][0][2]}")
    print("load", " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
