#!/usr/bin/env python3
"""proto/states.def against proto/threadmon.proto: every ThreadState and
SyncKind value of the proto has its line in the .def under the same name and
number, and the .def has none the proto lacks (the compiler checks each
.def line against the generated header too: probe/out/encode.c). Run by the
build; fails it with one line per difference."""
import re
import sys

proto_path, def_path, stamp = sys.argv[1:4]
proto = open(proto_path).read()
defs = open(def_path).read()


def proto_enum(name, prefix):
    body = re.search(r"enum\s+" + name + r"\s*{([^}]*)}", proto)
    if not body:
        sys.exit(f"{proto_path}: no enum {name}")
    return {m.group(1): int(m.group(2))
            for m in re.finditer(prefix + r"(\w+)\s*=\s*(\d+)\s*;", body.group(1))}


def def_entries(macro):
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^" + macro + r"\((\w+),\s*(\d+)", defs, re.M)}


errors = []
for enum, prefix, macro in (("ThreadState", "STATE_", "TM_WIRE_STATE"),
                            ("SyncKind", "KIND_", "TM_SYNC_KIND")):
    want, have = proto_enum(enum, prefix), def_entries(macro)
    for name in sorted(set(want) | set(have)):
        if name not in have:
            errors.append(f"{def_path}: no {macro}({name}, {want[name]}) for {enum}.{prefix}{name}")
        elif name not in want:
            errors.append(f"{def_path}: {macro}({name}) is not in {enum} of {proto_path}")
        elif want[name] != have[name]:
            errors.append(f"{def_path}: {name} is {have[name]}, the proto says {want[name]}")
for e in errors:
    print(e, file=sys.stderr)
if errors:
    sys.exit(1)
open(stamp, "w").write("ok\n")
