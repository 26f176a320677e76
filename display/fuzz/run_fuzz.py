#!/usr/bin/env python3
"""Builds the readers' libFuzzer targets in a clang build of their own, then runs them.

    run_fuzz.py --build DIR --seconds 60         the short run of `meson test`
    run_fuzz.py --build DIR --runs 5000000 \
                --corpus DIR                      a long run (bench/fuzz_long.sh)

Targets (docs/fuzzing.md): fuzz-ingest (decoder, model, timelines),
fuzz-report (that, then the whole report and the findings), fuzz-window
(a capture read through its index: its Summary records, a window) and
fuzz-frame (the one-pass reader of transitions against protobuf-c) and
fuzz-stream (a capture reported as one over 64 MiB is: windows through its
index or scan, the merge); --seconds and
--runs are shared out between them, --target runs one. The build is
`meson setup DIR -Dfuzzing=true -Db_sanitize=address,undefined` with CC=clang
CXX=clang++; it is set up once and rebuilt incrementally. The regression
inputs (display/fuzz/regressions) run first, then the fuzzer mutates the seed
corpus (display/fuzz/corpus) plus what it found before in --corpus (by
default a fresh directory: the repository's corpus is only read). Any crash,
sanitizer report, leak, input slower than --timeout or allocation over
--malloc-mb fails the run; the input that did it is kept in DIR/artifacts.
Exit status 77 (meson's "skipped") with the reason when clang or its
libFuzzer runtime is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def find_clang():
    for cc, cxx in (("clang", "clang++"), ("clang-14", "clang++-14")):
        if shutil.which(cc) and shutil.which(cxx):
            return cc, cxx
    skip("clang is not installed (apt-get install clang libclang-rt-14-dev)")


def check_libfuzzer(cxx):
    """A trivial target must link with -fsanitize=fuzzer,address,undefined."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.cpp")
        with open(src, "w") as f:
            f.write('#include <cstddef>\n#include <cstdint>\n'
                    'extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) '
                    '{ return 0; }\n')
        r = subprocess.run([cxx, "-fsanitize=fuzzer,address,undefined", src,
                            "-o", os.path.join(tmp, "t")], capture_output=True, text=True)
        if r.returncode != 0:
            skip("clang cannot link a libFuzzer target (apt-get install libclang-rt-14-dev): "
                 + (r.stderr.strip().splitlines() or ["?"])[-1])


TARGETS = ("ingest", "report", "window", "frame", "stream")
# Of a run's time or executions: the light target gets the larger share.
SHARE = {"ingest": 0.4, "report": 0.25, "window": 0.15, "frame": 0.1, "stream": 0.1}


def build(build_dir, jobs, targets):
    cc, cxx = find_clang()
    check_libfuzzer(cxx)
    env = dict(os.environ, CC=cc, CXX=cxx)
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        subprocess.run(["meson", "setup", build_dir, SOURCE_ROOT, "-Dfuzzing=true",
                        "-Db_sanitize=address,undefined", "-Db_lundef=false",
                        "-Dbuildtype=debugoptimized"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    # The fuzzing build holds only the readers and the targets: build it all
    # (naming targets would skip meson's regeneration after a change).
    subprocess.run(["meson", "compile", "-C", build_dir, "-j", str(jobs)],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return {t: os.path.join(build_dir, "display", "fuzz", f"fuzz-{t}") for t in targets}


def fuzz_env():
    # Undefined behaviour is a crash like any other; leaks are checked. A
    # small quarantine and no allocation stacks make executions a third
    # faster (re-run a crash with the defaults to see where its memory came
    # from).
    return dict(os.environ,
                UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
                ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:quarantine_size_mb=16:"
                             "malloc_context_size=0")


def add_run_arguments(ap):
    """The options of a fuzzing run (this one's and attach/fuzz/run_fuzz.py's)."""
    ap.add_argument("--build", required=True, help="the clang build directory")
    ap.add_argument("--seconds", type=int, default=0, help="stop after this long")
    ap.add_argument("--runs", type=int, default=0, help="stop after this many executions")
    ap.add_argument("--corpus", help="where found inputs are kept (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=2, help="compile jobs")
    ap.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    ap.add_argument("--malloc-mb", type=int, default=512, help="largest allocation allowed")


def libfuzzer_flags(args, artifacts):
    # -entropic=0: the entropic schedule's bookkeeping over tens of thousands
    # of features took half of every execution here; plain scheduling runs
    # almost twice as many inputs in the same time.
    return [f"-timeout={args.timeout}", f"-malloc_limit_mb={args.malloc_mb}",
            "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}", "-entropic=0"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(ap)
    ap.add_argument("--max-len", type=int, default=4096, help="largest input tried")
    ap.add_argument("--target", choices=TARGETS, help="run only this target")
    ap.add_argument("--build-only", action="store_true", help="build, run nothing")
    args = ap.parse_args()

    targets = (args.target,) if args.target else TARGETS
    binaries = build(os.path.abspath(args.build), args.jobs, targets)
    if args.build_only:
        return 0
    artifacts = os.path.join(os.path.abspath(args.build), "artifacts") + os.sep
    os.makedirs(artifacts, exist_ok=True)
    common = libfuzzer_flags(args, artifacts)

    regression_dir = os.path.join(HERE, "regressions")
    regressions = sorted(os.path.join(regression_dir, f) for f in os.listdir(regression_dir)
                         if f.endswith(".tmcap"))
    for t in targets:
        if regressions and subprocess.run([binaries[t], *common, *regressions],
                                          env=fuzz_env()).returncode != 0:
            print(f"FAIL: fuzz-{t}: a regression input crashes again (see above)")
            return 1

    share = {t: (SHARE[t] if len(targets) > 1 else 1.0) for t in targets}
    for t in targets:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(os.path.abspath(args.corpus), t) if args.corpus else tmp
            os.makedirs(corpus, exist_ok=True)
            limits = []
            if args.seconds:
                limits.append(f"-max_total_time={max(1, round(args.seconds * share[t]))}")
            if args.runs:
                limits.append(f"-runs={max(1, round(args.runs * share[t]))}")
            cmd = [binaries[t], *common, *limits, f"-max_len={args.max_len}",
                   "-print_final_stats=1", corpus, os.path.join(HERE, "corpus"), regression_dir]
            print("+", " ".join(cmd), flush=True)
            if subprocess.run(cmd, env=fuzz_env()).returncode != 0:
                print(f"FAIL: fuzz-{t} found an input the readers do not survive: {artifacts}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
