#!/usr/bin/env python3
"""Regenerates the console examples of a Markdown document from the current
build: every ```console block right after a line `<!-- regenerate -->` has
its `$ ` commands run again (in a scratch directory, with `threadmon` the
build's launcher and `build/` the build directory) and their output put in
place of the old. Commands run in the order they appear, so a block may
read a file an earlier one recorded.

usage: scripts/doc-examples.py BUILD_DIR [DOC ...]   (default docs/user-guide.md)
"""
import os
import re
import subprocess
import sys
import tempfile

MARK = "<!-- regenerate -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A workload's truth line is long and not what the example is about.
LONG_JSON = 100


def run_block(commands, work, build, env):
    out = []
    for cmd in commands:
        out.append(f"$ {cmd}")
        proc = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True,
                              text=True, timeout=600)
        for line in (proc.stdout + proc.stderr).splitlines():
            line = line.replace(work + "/", "").replace(build + "/", "build/")
            if line.startswith("{") and len(line) > LONG_JSON:
                line = line[:LONG_JSON].rsplit(",", 1)[0] + ",...}"
            out.append(line.rstrip())
    return out


def regenerate(path, work, build, env):
    lines = open(path).read().split("\n")
    result, i, blocks = [], 0, 0
    while i < len(lines):
        result.append(lines[i])
        if lines[i].strip() == MARK and i + 1 < len(lines) and lines[i + 1].startswith("```console"):
            end = next((k for k in range(i + 2, len(lines)) if lines[k].startswith("```")), None)
            if end is None:
                sys.exit(f"{path}:{i + 2}: console block never closed")
            commands = [l[2:] for l in lines[i + 2:end] if l.startswith("$ ")]
            result.append(lines[i + 1])
            result.extend(run_block(commands, work, build, env))
            result.append(lines[end])
            blocks += 1
            i = end + 1
            continue
        i += 1
    with open(path, "w") as f:
        f.write("\n".join(result))
    print(f"{os.path.relpath(path, ROOT)}: {blocks} examples regenerated")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__.strip())
    build = os.path.abspath(sys.argv[1])
    launcher = os.path.join(build, "scripts", "threadmon")
    if not os.path.exists(launcher):
        sys.exit(f"doc-examples.py: {launcher} not found: build first (meson compile -C {sys.argv[1]})")
    docs = sys.argv[2:] or [os.path.join(ROOT, "docs", "user-guide.md")]
    with tempfile.TemporaryDirectory(prefix="threadmon-doc-") as work:
        os.symlink(build, os.path.join(work, "build"))
        bindir = os.path.join(work, ".bin")
        os.mkdir(bindir)
        os.symlink(launcher, os.path.join(bindir, "threadmon"))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        for doc in docs:
            regenerate(os.path.abspath(doc), work, build, env)


if __name__ == "__main__":
    main()
