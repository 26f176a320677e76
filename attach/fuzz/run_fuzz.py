#!/usr/bin/env python3
"""Builds attach's libFuzzer targets in a clang build of their own, then runs them.

    run_fuzz.py --build DIR --seconds 50          the short run of `meson test`
    run_fuzz.py --build DIR --target elf --seconds 600 --corpus DIR

Targets (docs/fuzzing.md): fuzz-maps, fuzz-syscall, fuzz-elf, fuzz-cfi and
fuzz-waitkind, the parsers of what an attached process controls. The build
and the checks are display/fuzz/run_fuzz.py's (clang, -Dfuzzing=true, ASan
and UBSan; a crash, sanitizer report, leak, slow input or large allocation
fails the run, the input kept in DIR/artifacts). Seeds: the text ones in
attach/fuzz/corpus/ (a real target's maps, syscall lines and frame names),
and made here from this machine's files: /usr/bin/true and libc as ELF
files, /usr/bin/true's eh_frame segment with a stack for fuzz-cfi. The
inputs in attach/fuzz/regressions/TARGET run first.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "display", "fuzz"))
import run_fuzz as display_fuzz  # noqa: E402  (the clang build and libFuzzer's checks)

# Largest input tried: an ELF file needs its headers and a symbol table, an
# eh_frame segment a few kilobytes.
MAX_LEN = {"maps": 4096, "syscall": 256, "elf": 65536, "cfi": 16384, "waitkind": 1024}
TARGETS = tuple(MAX_LEN)
ELF_SEEDS = ("/usr/bin/true", "/lib/x86_64-linux-gnu/libc.so.6")
SEG_BASE = 0x40000000  # fuzz_cfi.c's


def build(build_dir, jobs):
    cc, cxx = display_fuzz.find_clang()
    display_fuzz.check_libfuzzer(cxx)
    env = dict(os.environ, CC=cc, CXX=cxx)
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        subprocess.run(["meson", "setup", build_dir, display_fuzz.SOURCE_ROOT, "-Dfuzzing=true",
                        "-Db_sanitize=address,undefined", "-Db_lundef=false",
                        "-Dbuildtype=debugoptimized"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    # Only these targets: the readers' Qt model in the same build is slow to
    # compile and is display/fuzz's to run.
    subprocess.run(["meson", "compile", "-C", build_dir, "-j", str(jobs),
                    *(f"fuzz-{t}" for t in TARGETS)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return {t: os.path.join(build_dir, "attach", "fuzz", f"fuzz-{t}") for t in TARGETS}


def eh_frame_seeds(path, out_dir):
    """fuzz_cfi inputs from an ELF file's eh_frame segment: a PC in each of a
    few functions its .eh_frame_hdr lists, over a stack of return addresses
    into the others."""
    data = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    phdrs = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    eh = next(p for p in phdrs if p[0] == 0x6474E550)  # PT_GNU_EH_FRAME
    seg = next(p for p in phdrs if p[0] == 1 and p[3] <= eh[3] < p[3] + p[5])
    seg_bytes = data[seg[2]:seg[2] + seg[5]]
    if len(seg_bytes) > MAX_LEN["cfi"] // 2:  # libc's: cut to -max_len, it would say nothing
        return
    hdr_off = eh[3] - seg[3]
    count, = struct.unpack_from("<I", seg_bytes, hdr_off + 8)
    table = hdr_off + 12
    starts = [struct.unpack_from("<i", seg_bytes, table + 8 * i)[0] + hdr_off
              for i in range(count)]
    stack = b"".join(struct.pack("<Q", SEG_BASE + s + 9) for s in starts[::-1]) * 4
    for k, s in enumerate(starts[:8]):
        head = struct.pack("<iII", s + 4, hdr_off, len(seg_bytes))
        with open(os.path.join(out_dir, f"{os.path.basename(path)}-{k}.cfi"), "wb") as f:
            f.write(head + seg_bytes + stack)


def seed_dirs(target, tmp):
    dirs = [d for d in (os.path.join(HERE, "corpus", target),
                        os.path.join(HERE, "regressions", target)) if os.path.isdir(d)]
    if target in ("elf", "cfi"):
        made = os.path.join(tmp, "seeds")
        os.makedirs(made)
        for path in ELF_SEEDS:
            if not os.path.exists(path):
                continue
            if target == "elf":  # libFuzzer cuts a seed to -max_len: libc's headers and first tables
                with open(path, "rb") as src, open(os.path.join(made, os.path.basename(path)),
                                                   "wb") as dst:
                    dst.write(src.read(MAX_LEN["elf"]))
            else:
                eh_frame_seeds(path, made)
        dirs.append(made)
    return dirs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    display_fuzz.add_run_arguments(ap)  # --seconds shared out, --runs each
    ap.add_argument("--target", choices=TARGETS, help="run only this target")
    args = ap.parse_args()

    binaries = build(os.path.abspath(args.build), args.jobs)
    targets = (args.target,) if args.target else TARGETS
    artifacts = os.path.join(os.path.abspath(args.build), "artifacts") + os.sep
    os.makedirs(artifacts, exist_ok=True)
    common = display_fuzz.libfuzzer_flags(args, artifacts)
    for t in targets:
        regressions = os.path.join(HERE, "regressions", t)
        inputs = sorted(os.path.join(regressions, f) for f in os.listdir(regressions)) \
            if os.path.isdir(regressions) else []
        if inputs and subprocess.run([binaries[t], *common, *inputs],
                                     env=display_fuzz.fuzz_env()).returncode != 0:
            print(f"FAIL: fuzz-{t}: a regression input crashes again (see above)")
            return 1
    for t in targets:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(os.path.abspath(args.corpus), t) if args.corpus else \
                os.path.join(tmp, "corpus")
            os.makedirs(corpus, exist_ok=True)
            limits = []
            if args.seconds:
                limits.append(f"-max_total_time={max(1, args.seconds // len(targets))}")
            if args.runs:
                limits.append(f"-runs={args.runs}")
            cmd = [binaries[t], *common, *limits, f"-max_len={MAX_LEN[t]}",
                   "-print_final_stats=1", corpus, *seed_dirs(t, tmp)]
            print("+", " ".join(cmd), flush=True)
            if subprocess.run(cmd, env=display_fuzz.fuzz_env()).returncode != 0:
                print(f"FAIL: fuzz-{t} found an input attach does not survive: {artifacts}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
