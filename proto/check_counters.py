#!/usr/bin/env python3
"""proto/counters.def against proto/threadmon.proto and docs/report-json.md:
every line of the .def names a uint64 field of its message (SyncStats,
LwpSample or CpuSample) under the same number, every uint64 field of those messages is
in a line (as a counter or, for LwpSample, as not one), every JSON key
the .def gives is in the JSON reference, and every text report column has
a JSON key (the text report reads the JSON). Run by the build; fails it with
one line per difference."""
import re
import sys

proto_path, def_path, doc_path, stamp = sys.argv[1:5]
proto = re.sub(r"//[^\n]*", "", open(proto_path).read())
defs = open(def_path).read()
doc = open(doc_path).read()

MESSAGES = {
    "SyncStats": ("TM_SYNC_COUNTER",),
    "LwpSample": ("TM_LWP_COUNTER", "TM_LWP_EXTRA", "TM_LWP_UNKEPT", "TM_LWP_NOT_COUNTER"),
    "CpuSample": ("TM_CPU_COUNTER",),
}


def proto_fields(message):
    body = re.search(r"\bmessage\s+" + message + r"\s*{([^}]*)}", proto)
    if not body:
        sys.exit(f"{proto_path}: no message {message}")
    return {m.group(3): (m.group(2), int(m.group(4)), bool(m.group(1)))
            for m in re.finditer(r"(repeated\s+)?([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;", body.group(1))}


errors = []
for message, macros in MESSAGES.items():
    fields = proto_fields(message)
    listed = set()
    for m in re.finditer(r"^(" + "|".join(macros) + r")\((\w+),\s*(\d+)([^\n]*)", defs, re.M):
        macro, name, number, rest = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        where = f"{def_path}: {macro}({name}, {number})"
        if name in listed:
            errors.append(f"{where}: {name} is listed twice")
        listed.add(name)
        if name not in fields:
            errors.append(f"{where}: {message} of {proto_path} has no field {name}")
            continue
        kind, want, repeated = fields[name]
        if want != number:
            errors.append(f"{where}: the proto numbers {message}.{name} {want}")
        if kind != "uint64" or repeated:
            errors.append(f"{where}: {message}.{name} is {'repeated ' if repeated else ''}{kind}, "
                          "a counter is a uint64")
        texts = re.findall(r'"([^"]*)"', rest)  # its JSON key, then (LWP) its column head
        if texts and texts[0] and f'"{texts[0]}"' not in doc:
            errors.append(f'{where}: its JSON key "{texts[0]}" is not in {doc_path}')
        if len(texts) > 1 and texts[1] and not texts[0]:
            errors.append(f"{where}: a column of the text report needs a JSON key to read")
    for name, (kind, number, repeated) in sorted(fields.items()):
        if kind == "uint64" and not repeated and name not in listed:
            errors.append(f"{def_path}: no line for {message}.{name} = {number} of {proto_path}"
                          f" (one of {', '.join(macros)})")
for e in errors:
    print(e, file=sys.stderr)
if errors:
    sys.exit(1)
open(stamp, "w").write("ok\n")
