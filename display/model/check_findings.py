#!/usr/bin/env python3
"""display/model/findings.def against the docs' findings tables: every kind,
in the .def's order, in docs/findings.md (with its severity, view and merge),
in docs/user-guide.md's table of kinds and workloads, and in docs/report-json.md
(the findings[].kind values and the evidence table; its findings[].view values
name every view a finding opens). The findings-def test; one line per
difference.

usage: check_findings.py findings.def views.def findings.md user-guide.md report-json.md"""
import re
import sys

def_path, views_path, findings_md, guide_md, json_md = sys.argv[1:6]

# findings.def's merge, as the "merged by" column of docs/findings.md says it.
MERGED_BY = {"Newest": "newest window", "Cycle": "cycle", "Objects": "object",
             "Threads": "thread", "Lock": "lock kind", "Program": "program"}


def without_comments(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def read_def():
    text = without_comments(open(def_path, encoding="utf-8").read())
    entry = re.compile(r'^TM_FINDING\(\s*(\w+),\s*"(\w+)",\s*(\w+),\s*(\w+),\s*(\w+),\s*'
                       r'((?:"[^"]*"\s*)+)\)', re.M)
    kinds = []
    for m in entry.finditer(text):
        kinds.append({"kind": m.group(1), "key": m.group(2), "view": m.group(3),
                      "merge": m.group(4), "runtime": m.group(5),
                      "severity": "".join(re.findall(r'"([^"]*)"', m.group(6)))})
    if len(kinds) != text.count("TM_FINDING("):
        sys.exit(f"{def_path}: a TM_FINDING line this check cannot read")
    return kinds


def view_names():
    text = without_comments(open(views_path, encoding="utf-8").read())
    return dict(re.findall(r'^TM_VIEW\((\w+),\s*"(\w+)"', text, re.M))


def table(path, header):
    """The rows (lists of cells) of the markdown table under header."""
    lines = open(path, encoding="utf-8").read().splitlines()
    try:
        at = lines.index(header)
    except ValueError:
        sys.exit(f"{path}: no table '{header}'")
    rows = []
    for line in lines[at + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return rows


def kind_cell(cell):
    m = re.fullmatch(r"`(\w+)`", cell)
    return m.group(1) if m else None


errors = []


def same_order(where, have, keys):
    have = [h or "?" for h in have]
    missing = [k for k in keys if k not in have]
    extra = [h for h in have if h not in keys]
    if missing:
        errors.append(f"{where}: lacks {', '.join(missing)}")
    if extra:
        errors.append(f"{where}: {', '.join(extra)} not in findings.def")
    if not missing and not extra and have != keys:
        errors.append(f"{where}: kinds not in findings.def's order: {', '.join(keys)}")


kinds = read_def()
keys = [k["key"] for k in kinds]
views = view_names()
merges = set(MERGED_BY)
for k in kinds:
    if k["view"] not in views:
        errors.append(f"{def_path}: {k['key']}: view {k['view']} is not in {views_path}")
    if k["merge"] not in merges:
        errors.append(f"{def_path}: {k['key']}: merge {k['merge']} is none of {sorted(merges)}")
    if k["runtime"] not in ("Drop", "Keep"):
        errors.append(f"{def_path}: {k['key']}: runtime {k['runtime']} is neither Drop nor Keep")
if len(set(keys)) != len(keys):
    errors.append(f"{def_path}: a key is listed twice")

# docs/findings.md: kind, raised when, default, severity, view, merged by.
rows = table(findings_md, "| kind | raised when | default | severity | view | merged by |")
same_order(findings_md, [kind_cell(r[0]) for r in rows], keys)
for r, k in zip(rows, kinds):
    if len(r) != 6 or kind_cell(r[0]) != k["key"]:
        continue
    want = {"severity": k["severity"], "view": views.get(k["view"], k["view"]),
            "merged by": MERGED_BY.get(k["merge"], k["merge"])}
    for column, cell in zip(("severity", "view", "merged by"), r[3:]):
        if cell != want[column]:
            errors.append(f"{findings_md}: {k['key']}: {column} '{cell}', findings.def says "
                          f"'{want[column]}'")

# docs/user-guide.md: kind, what it means, workload.
rows = table(guide_md, "| kind | what it means | workload |")
same_order(guide_md, [kind_cell(r[0]) for r in rows], keys)

# docs/report-json.md: findings[].kind and .view, and the evidence per kind.
text = open(json_md, encoding="utf-8").read()
m = re.search(r'"kind": ((?:"\w+"[\s|,]*)+)"severity"', text)
if not m:
    errors.append(f"{json_md}: no findings[].kind values")
else:
    same_order(f"{json_md} findings[].kind", re.findall(r'"(\w+)"', m.group(1)), keys)
m = re.search(r'"view": ((?:"\w+"[\s|,]*)+)"threads"', text)
if not m:
    errors.append(f"{json_md}: no findings[].view values")
else:
    listed = set(re.findall(r'"(\w+)"', m.group(1)))
    for k in kinds:
        name = views.get(k["view"], k["view"])
        if name not in listed:
            errors.append(f"{json_md}: findings[].view lacks \"{name}\" ({k['key']})")
rows = table(json_md, "| kind | evidence |")
same_order(f"{json_md} evidence", [kind_cell(r[0]) for r in rows if kind_cell(r[0])], keys)

for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
