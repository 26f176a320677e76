#!/usr/bin/env python3
"""Line and branch coverage of the readers by a fuzzing corpus (docs/fuzzing.md).

    coverage.py --build DIR CORPUS_DIR...

Sets up (once) a clang build with source-based coverage and no sanitizers
in DIR, runs every input of the corpus directories once through both fuzz
targets, and prints llvm-cov's report for the readers' sources: the model,
the report and the wire decoder.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
FLAGS = "-fprofile-instr-generate -fcoverage-mapping"


def tool(name):
    for candidate in (name, f"{name}-14"):
        if shutil.which(candidate):
            return candidate
    sys.exit(f"coverage.py: {name} not found (apt-get install llvm)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("corpus", nargs="+")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    env = dict(os.environ, CC="clang", CXX="clang++")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, SOURCE_ROOT, "-Dfuzzing=true",
                        "-Dbuildtype=debugoptimized", "-Db_lundef=false",
                        f"-Dc_args={FLAGS}", f"-Dcpp_args={FLAGS}",
                        "-Dc_link_args=-fprofile-instr-generate",
                        "-Dcpp_link_args=-fprofile-instr-generate"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["meson", "compile", "-C", build], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    prof = os.path.join(build, "profiles")
    shutil.rmtree(prof, ignore_errors=True)
    os.makedirs(prof)
    binaries = []
    for target in ("ingest", "report"):
        binary = os.path.join(build, "display", "fuzz", f"fuzz-{target}")
        binaries.append(binary)
        # -runs=0: every input of the corpus once, no mutation.
        subprocess.run([binary, "-runs=0", "-timeout=60", *map(os.path.abspath, args.corpus)],
                       env=dict(os.environ, LLVM_PROFILE_FILE=os.path.join(prof, f"{target}.profraw")),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    merged = os.path.join(prof, "all.profdata")
    subprocess.run([tool("llvm-profdata"), "merge", "-sparse", "-o", merged,
                    *glob.glob(os.path.join(prof, "*.profraw"))], check=True)
    # The readers' own sources: not Qt's headers, the generated code or the
    # fuzz targets themselves.
    subprocess.run([tool("llvm-cov"), "report", binaries[0], "-object", binaries[1],
                    f"-instr-profile={merged}",
                    r"-ignore-filename-regex=(/usr/include/|\.pb-c\.|moc_|/display/fuzz/[^/]+$|\.h$)"],
                   check=True)


if __name__ == "__main__":
    main()
