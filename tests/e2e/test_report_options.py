"""`threadmon report --top N --thread PATTERN` narrows the text report (the
launcher hands both to threadmon-report)."""
import re

import tmtest
from tmtest import check, launcher

ARGS = ["--workers", "4", "--iterations", "500", "--items", "20"]


def state_rows(text):
    """The thread rows of the "Thread states" table."""
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if re.match(r"thread +life s", l)), None)
    if not check(head is not None, f"no thread states table in {text[:300]!r}"):
        return []
    rows = []
    for line in lines[head + 1:]:
        if not re.match(r"\d+ ", line):
            break
        rows.append(line)
    return rows


def test_top_and_thread():
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    proc = launcher("report", "--top", "2", rec.capture)
    check(proc.returncode == 0, f"report --top 2 exited {proc.returncode}: {proc.stderr.strip()}")
    rows = state_rows(proc.stdout)
    check(len(rows) == 2, f"{len(rows)} thread rows with --top 2: {rows}")
    more = len(rec.report["threads"]) - 2
    check(f"… and {more} more threads" in proc.stdout, f"no '… and {more} more threads' line")

    proc = launcher("report", "--thread", "cpp-worker-*", "--thread", "cpp-producer", rec.capture)
    rows = state_rows(proc.stdout)
    names = sorted(r.split()[1] for r in rows)
    check(names == ["cpp-producer"] + [f"cpp-worker-{i}" for i in range(4)],
          f"--thread picked {names}")


tmtest.main(globals())
