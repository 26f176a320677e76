"""Fork-heavy programs: what the probe adds to each short-lived child
(bench/fork_storm.c)."""
import os

from . import interleave, procrun, report, tools as tl


def per_child(build_dir, bare, probe, quick, log):
    """Phase 2: wall and CPU per child, bare / probe following children /
    probe not following, for children ending with _exit and with exit."""
    children, rounds = (200, 3) if quick else (1600, 5)
    work_us = 200
    tools = [bare, probe, probe.one_file_per_process(), probe.not_following()]
    sec = report.Section(
        "Fork-heavy programs: cost per short-lived child",
        ["child ends with", "configuration", "wall µs per child (median)",
         "CPU µs per child (median)", "wall vs bare"],
        f"`tm-bench-fork {children} EXIT {work_us}`: the parent forks {children:,} children "
        f"one after another; each spins {work_us} µs of CPU and ends with EXIT; the parent reaps "
        "each before the next fork. Wall time from the first fork to the last reap; CPU time of "
        "parent and children together (getrusage). threadmon as `threadmon record` runs it "
        "(THREADMON_TREE: a child that makes no thread starts no session, and is two lines in "
        "the tree's index); without THREADMON_TREE every child starts a session and writes a "
        f"capture of its own. Median of {rounds} interleaved runs.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    exe = os.path.join(build_dir, "bench", "tm-bench-fork")
    worst = None
    for how in ("_exit", "exit"):
        argv = [exe, str(children), how, str(work_us)]
        outs = {}

        def one(tool):
            out = procrun.last_json(tl.run_under(tool, argv, timeout=600).stdout)
            outs.setdefault(tool.key, []).append(out["cpu_us_per_child"])
            return out["wall_us_per_child"]

        res = interleave.measure(tools, rounds, one, log=log)
        base = res[bare.key][0]
        for t in tools:
            wall, _values, err = res[t.key]
            cpus = sorted(outs.get(t.key, []))
            cpu = cpus[len(cpus) // 2] if cpus else None
            sec.rows.append([f"`{how}`", t.label, report.fmt(wall), report.fmt(cpu),
                             "failed: " + err if err else report.ratio(wall, base)])
            if t is probe and wall is not None and base:
                worst = max(worst or 0, wall / base)
    sec.add_goal("fork-heavy program, children followed: at most 1.3× the bare wall time",
                 f"{worst:.2f}×" if worst else "n/a",
                 None if worst is None else worst <= 1.3,
                 f"{worst / 1.3:.2f}×" if worst else "")
    return sec


def shell_loop(build_dir, bare, probe, quick, log):
    """A shell running /bin/true N times: each an exec'd image that ends at
    once. Wall time per child, and the files the run left."""
    children, rounds = (100, 3) if quick else (300, 5)
    tools = [bare, probe, probe.one_file_per_process()]
    argv = ["sh", "-c", f"for i in $(seq {children}); do /bin/true; done"]
    sec = report.Section(
        "Fork-heavy programs: a shell's exec'd /bin/true",
        ["configuration", "wall µs per child (median)", "files written", "wall vs bare"],
        f"`sh -c 'for i in $(seq {children}); do /bin/true; done'`: wall time of the whole "
        f"run over {children}; files the run left in its directory (the capture, the tree's "
        f"index and the per-process captures). Median of {rounds} interleaved runs.")
    if probe.unavailable_reason():
        sec.notes.append(f"not measured: {probe.unavailable_reason()}")
        return sec
    files = {}

    def count(run_dir):
        return sum(len(names) for _, _, names in os.walk(run_dir))

    def one(tool):
        run = tl.run_under(tool, argv, timeout=600, inspect=count)
        files[tool.key] = run.inspected
        return run.wall * 1e6 / children

    res = interleave.measure(tools, rounds, one, log=log)
    base = res[bare.key][0]
    worst = None
    for t in tools:
        wall, _values, err = res[t.key]
        sec.rows.append([t.label, report.fmt(wall), str(files.get(t.key, "")),
                         "failed: " + err if err else report.ratio(wall, base)])
        if t is probe and wall is not None and base:
            worst = wall / base
    sec.add_goal("a shell's exec'd /bin/true: at most 1.3× the bare wall time",
                 f"{worst:.2f}×" if worst else "n/a",
                 None if worst is None else worst <= 1.3,
                 f"{worst / 1.3:.2f}×" if worst else "")
    return sec
