#!/usr/bin/env python3
"""Count where a streamed report differs from the whole read.

Runs REPORT --stream --window W --json and REPORT --whole --json on every
capture given (files or directories searched for *.tmcap, duplicates by
content skipped) and counts the lines that differ, per section of the JSON
(process, threads, sync_objects, wait_matrix, findings, ...), after taking
out the words that legitimately name the stream: its notice,
evidence.windows, and a merged finding's last sentence ("In 3 of 7 windows
of 1 s; ..."). Prints the captures that differ most, the totals per
section, and the total; exit 0 (a measure, not a check).

  bench/stream_same.py build/display/threadmon-report display/fuzz/corpus \
      /tmp/reportpass.d/e2e /tmp/threadmon-e2e-*
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_same import captures  # noqa: E402

NOTICE = "Read a window at a time (a long capture): "
# A merged finding's last sentence (StreamFindings::findings).
LAST_SENTENCE = re.compile(r" In \d+ of \d+ windows of [0-9.]+ s; .*$")


def normalised(doc):
    """The report's JSON without the stream's own words."""
    process = doc.get("process")
    if isinstance(process, dict) and isinstance(process.get("notices"), list):
        process["notices"] = [n for n in process["notices"]
                              if not (isinstance(n, str) and n.startswith(NOTICE))]
    for f in doc.get("findings") or []:
        if not isinstance(f, dict):
            continue
        ev = f.get("evidence")
        if isinstance(ev, dict):
            ev.pop("windows", None)
        if isinstance(f.get("message"), str):
            f["message"] = LAST_SENTENCE.sub("", f["message"])
    return doc


def sections(binary, mode, capture):
    """{section: its lines} of one run, or {"(status)": [...]} when it made
    no JSON."""
    p = subprocess.run([binary] + mode + ["--json", capture], capture_output=True,
                       timeout=900)
    try:
        doc = normalised(json.loads(p.stdout))
    except ValueError:
        return {"(no json)": [f"exit {p.returncode}"]}
    return {k: json.dumps(v, indent=1).splitlines() for k, v in doc.items()}


def differing(a, b):
    """{section: lines differing} between two runs' sections."""
    out = {}
    for k in sorted(set(a) | set(b)):
        n = sum(1 for d in difflib.unified_diff(a.get(k, []), b.get(k, []), lineterm="", n=0)
                if d[:1] in "+-" and d[:3] not in ("+++", "---"))
        if n:
            out[k] = n
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", help="a threadmon-report binary")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--window", default="1", help="the stream's window, seconds (1)")
    ap.add_argument("--top", type=int, default=15, help="captures listed (15)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="captures at once")
    args = ap.parse_args()
    files = captures(args.paths)
    stream = ["--stream", "--window", args.window]

    def compare(capture):
        return differing(sections(args.report, stream, capture),
                         sections(args.report, ["--whole"], capture))

    totals, per = {}, []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for capture, d in zip(files, pool.map(compare, files)):
            for k, n in d.items():
                totals[k] = totals.get(k, 0) + n
            if d:
                per.append((sum(d.values()), capture, d))
    per.sort(key=lambda x: (-x[0], x[1]))
    for n, capture, d in per[:args.top]:
        print(f"{n:6d} {capture}: " + ", ".join(f"{k} {v}" for k, v in d.items()))
    print("per section: " + (", ".join(f"{k} {v}" for k, v in sorted(totals.items())) or "none"))
    print(f"{len(files)} captures, {len(per)} differ, {sum(totals.values())} lines differ")


if __name__ == "__main__":
    main()
