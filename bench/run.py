#!/usr/bin/env python3
"""threadmon benchmarks: one command, a table on the terminal and
docs/benchmarks.md.

    python3 bench/run.py BUILD_DIR [--quick] [--phase 1] [--install]

BUILD_DIR is a meson build directory with bench/tm-bench-* built and, for the
probe columns, probe/libthreadmon.so. A full run takes under ~10 minutes on
2 cores, --quick about one (and prints only: its few repetitions are not
for publishing). Phase 1 is the probe's own overhead (uncontended
lock, sampler CPU share, capture size); phase 2 adds the other tools, sampler
scaling, accuracy against the ground-truth workloads and real programs."""
import argparse
import datetime
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tmbench import accuracy, create, forks, longreport, machine, micro, mn, realprogs, report, sampler, tools as tl  # noqa: E402

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Command a section needs -> the Debian package that provides it.
PACKAGES = {
    "pigz": ["pigz"], "zstd": ["zstd"], "xz": ["xz-utils"], "stress-ng": ["stress-ng"],
    "valgrind": ["valgrind"], "lttng": ["lttng-tools", "liblttng-ust-dev"],
}

PREAMBLE = (
    "Method: every comparison interleaves the configurations (a round runs each once, in an "
    "order rotated per round) and reports medians, because this 2-core VM is shared with "
    "other builds; timings come from the benchmark programs' own clocks around the measured "
    "loop, so a tool's start-up is not counted. Every benchmark process keeps one idle extra "
    "thread alive: glibc skips the lock atomics in a process that never created a thread. "
    "Probe configuration: `LD_PRELOAD=libthreadmon.so THREADMON_OUTPUT=<tmp>/capture.tmcap "
    "THREADMON_INTERVAL_MS=10` unless a table says otherwise.")


def install_missing(log):
    missing = [pkg for cmd, pkgs in PACKAGES.items() if not shutil.which(cmd) for pkg in pkgs]
    if not shutil.which("lttng") or not tl.Lttng().wrapper:
        missing += [p for p in PACKAGES["lttng"] if p not in missing]
    if not missing:
        return
    log(f"installing: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
    subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, env=env, check=False)


def display_command(argv):
    """The command to type at the source root (ninja runs us from the build dir)."""
    parts = []
    for a in argv:
        if os.path.exists(a):
            a = os.path.abspath(a)
        if os.path.isabs(a) and a.startswith(SOURCE_ROOT + os.sep):
            a = os.path.relpath(a, SOURCE_ROOT)
        parts.append(a)
    return "python3 " + shlex.join(parts)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir", help="meson build directory")
    ap.add_argument("--quick", action="store_true", help="about one minute, fewer repetitions")
    ap.add_argument("--phase", type=int, choices=(1, 2), default=2,
                    help="1 = the probe's own overhead only; 2 (default) = everything")
    ap.add_argument("--install", action="store_true",
                    help="apt-get install the tools that are missing (pigz, stress-ng, ...)")
    ap.add_argument("--doc", default=None,
                    help="where to write the Markdown report (default docs/benchmarks.md; "
                    "a --quick run writes none unless given)")
    ap.add_argument("--no-doc", action="store_true", help="print only")
    ap.add_argument("--only", metavar="SECTION", default=None,
                    help="run only the sections whose progress title contains SECTION "
                    "(e.g. swapcontext); prints only")
    return ap.parse_args()


def main():
    args = parse_args()
    build = os.path.abspath(args.build_dir)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    for exe in ("tm-bench-sync", "tm-bench-swarm", "tm-bench-fork", "tm-bench-create"):
        if not os.path.exists(os.path.join(build, "bench", exe)):
            sys.exit(f"{build}/bench/{exe} missing: run `ninja -C {args.build_dir}` first")
    if args.install:
        install_missing(log)

    started = time.monotonic()
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    info = machine.describe()
    bare, probe = tl.NoTool(), tl.Threadmon(build)
    unavailable = {}
    if probe.unavailable_reason():
        unavailable["threadmon"] = probe.unavailable_reason()

    sections = []

    def run_section(title, fn, *fargs):
        if args.only and args.only not in title:
            return
        log(f"[{time.monotonic() - started:5.0f} s] {title}")
        sec = fn(*fargs)
        report.print_section(sec)
        sections.append(sec)

    run_section("uncontended mutex", micro.uncontended, build, bare, probe, args.quick, log)
    run_section("swapcontext", micro.swapcontext_cost, build, bare, probe, args.quick, log)
    run_section("syscall futex", micro.futex_cost, build, bare, probe, args.quick, log)
    run_section("sampler CPU share", sampler.cpu_share, build, probe, args.quick, log)
    run_section("sampler to 10,000 threads", sampler.scale_to_10k, build, probe, args.quick, log)
    run_section("capture size", sampler.capture_size, build, probe, args.quick, log)
    run_section("capture compression", sampler.compression_cost, build, probe, args.quick, log)

    extra = []
    if args.phase == 1:
        unavailable["other tools, scaling, real programs"] = "not run (--phase 1)"
    else:
        others = [tl.Lttng(), tl.Valgrind("drd"), tl.Valgrind("helgrind")]
        for t in others:
            if t.unavailable_reason():
                unavailable[t.label] = t.unavailable_reason()
        extra = [t for t in [probe, probe.without_perf()] + others if not t.unavailable_reason()]
        try:
            run_section("microbenchmarks", micro.all_tools, build, bare, [bare] + extra,
                        args.quick, log)
        finally:
            for t in extra:
                t.close()
        run_section("switch-record cost", micro.switch_cost, build, args.quick, log)
        run_section("sampler scaling", sampler.scaling, build, probe, args.quick, log)
        run_section("fork-heavy", forks.per_child, build, bare, probe, args.quick, log)
        run_section("fork-heavy", forks.shell_loop, build, bare, probe, args.quick, log)
        run_section("thread creation", create.create_join, build, bare, probe, args.quick, log)
        run_section("accuracy", accuracy.states, build, probe, args.quick, log)
        run_section("M:N matrix multiply", mn.matrix_table, build, bare, probe, args.quick, log)
        run_section("M:N fine-grained barrier", mn.barrier_penalty, build, bare, args.quick, log)
        run_section("report on long captures", longreport.report_scaling, build, args.quick, log)
        if not probe.unavailable_reason():
            run_section("compressors", realprogs.compressors, bare, probe, args.quick, log,
                        unavailable)
            run_section("stress-ng", realprogs.stressors, bare, probe, args.quick, log,
                        unavailable)

    duration = time.monotonic() - started
    info["load average at end"] = machine.load_average()
    print(f"\nfinished in {duration:.0f} s")
    if args.no_doc or args.only:
        return
    if args.doc is None and args.quick:
        # Quick figures have too few repetitions to replace the published ones.
        print("quick run: docs/benchmarks.md left as it is (--doc FILE writes one)")
        return
    args.doc = args.doc or os.path.join(SOURCE_ROOT, "docs", "benchmarks.md")
    text = report.markdown_document(info, date, display_command(sys.argv), duration, sections,
                                    unavailable, PREAMBLE)
    os.makedirs(os.path.dirname(os.path.abspath(args.doc)), exist_ok=True)
    with open(args.doc, "w") as f:
        f.write(text)
    print(f"wrote {args.doc}")


if __name__ == "__main__":
    main()
