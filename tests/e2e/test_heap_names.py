"""heap_locks: sync objects on the heap are named by where the program made
them (the caller of pthread_mutex_init / sem_init, with its source line, and
the struct member the debug information says it is), and a heap mutex set by
a static initialiser by where it was first used.
The report's JSON and text, and the Chrome export, all say that name; the
expected lines come from the workload's own source (its truth line)."""
import json
import os
import re
import subprocess
import sys

import tmtest
from tmtest import check

NAME = "heap_locks"
ARGS = ["--workers", "4", "--rounds", "25"]


def heap_objects(rec):
    return [o for o in rec.objects() if o.get("module") == "[heap]"]


def one(rec, kind, named_by, function):
    found = [o for o in heap_objects(rec) if tmtest.kind_of(o) == kind and
             o.get("named_by") == named_by and function in str(o.get("name"))]
    check(len(found) == 1, f"{len(found)} heap {kind}s named by {named_by} in {function}: "
          f"{[(o.get('kind'), o.get('name')) for o in heap_objects(rec)]}")
    return found[0] if found else {}


def check_made_at(obj, function, line, member=None):
    want = (f"{member} " if member else "") + f"made in {function} (heap_locks.c:{line})"
    check(obj.get("name") == want, f"name {obj.get('name')!r}, expected {want!r}")
    made = obj.get("made_at") or {}
    check(made.get("function") == function and made.get("file") == "heap_locks.c" and
          made.get("line") == line and made.get("module") == NAME,
          f"made_at {made}, expected {function} at heap_locks.c:{line} in {NAME}")
    check(made.get("member") == member, f"made_at.member {made.get('member')!r}, expected {member!r}")
    # GCC may name its copy of the function "make_table.constprop.0".
    check(re.fullmatch(rf"{NAME}!{function}(\.\w+)*\+0x[0-9a-f]+ \(heap_locks\.c:{line}\)",
                       str(made.get("frame"))) is not None, f"made_at.frame {made.get('frame')!r}")
    check(obj.get("symbol") == "", f"a heap object with a symbol: {obj.get('symbol')!r}")
    check(obj.get("contentions", 0) > 0, f"{want}: not contended ({obj.get('contentions')})")


def test_json_names_heap_objects_by_where_they_were_made():
    tmtest.require_report()
    rec = tmtest.recorded(NAME, ARGS)
    tmtest.check_process(rec)
    t = rec.truth
    # The debug information says which member of which struct it is; a
    # semaphore malloc'd on its own is no member.
    check_made_at(one(rec, "mutex", "made_at", "make_table"), "make_table", t["table_init_line"],
                  "table->lock")
    check_made_at(one(rec, "sem", "made_at", "make_gate"), "make_gate", t["gate_init_line"])
    # PTHREAD_MUTEX_INITIALIZER: no init call, so its first use names it.
    counter = one(rec, "mutex", "first_use", "bump_counter")
    want = f"first used in bump_counter (heap_locks.c:{t['counter_lock_line']})"
    check(counter.get("name") == want, f"name {counter.get('name')!r}, expected {want!r}")
    check(counter.get("made_at") is None, f"made_at {counter.get('made_at')} of a static init")
    # Said to be where it was first used, with its source line.
    first = counter.get("first_used_at") or {}
    check(first.get("function") == "bump_counter" and first.get("file") == "heap_locks.c" and
          first.get("line") == t["counter_lock_line"],
          f"first_used_at {first}, expected bump_counter at heap_locks.c:{t['counter_lock_line']}")
    check(one(rec, "mutex", "made_at", "make_table").get("first_used_at") is None,
          "an object made by an initialiser call also has a first_used_at")
    # No object the program made is left as a bare address.
    bare = [o.get("address") for o in heap_objects(rec) if o.get("named_by") == "address"]
    check(not bare, f"heap objects named by their address: {bare}")


def test_global_struct_members_named_by_debug_information():
    """A lock inside a global struct is named by the member it is
    (registry.shards[1].lock), not registry+0x38, in the JSON and the text."""
    tmtest.require_report()
    rec = tmtest.recorded(NAME, ARGS)
    t = rec.truth
    got = sorted(o.get("name") for o in rec.objects("mutex") if o.get("symbol") == t["global"])
    check(got == t["shard_locks"], f"the global's locks are named {got}, expected {t['shard_locks']}")
    for o in rec.objects("mutex"):
        if o.get("symbol") == t["global"]:
            check(o.get("named_by") == "symbol" and o.get("symbol_offset", 0) > 0 and
                  o.get("name") == t["global"] + str(o.get("symbol_member")),
                  f"{o.get('name')}: named_by {o.get('named_by')}, offset {o.get('symbol_offset')}, "
                  f"member {o.get('symbol_member')!r}")
    text = tmtest.launcher("report", rec.capture)
    for name in t["shard_locks"]:
        check(f"{NAME}!{name}" in text.stdout, f"the text report does not say {NAME}!{name}")


def test_text_report_says_the_names():
    tmtest.require_report()
    rec = tmtest.recorded(NAME, ARGS)
    proc = subprocess.run([sys.executable, tmtest.LAUNCHER, "report", rec.capture],
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"threadmon report exited {proc.returncode}: {proc.stderr}")
    t = rec.truth
    for name in (f"[heap] table->lock made in make_table (heap_locks.c:{t['table_init_line']})  @ ",
                 f"[heap] made in make_gate (heap_locks.c:{t['gate_init_line']})  @ ",
                 f"[heap] first used in bump_counter (heap_locks.c:{t['counter_lock_line']})\n"):
        check(name in proc.stdout, f"the text report does not say {name!r}:\n{proc.stdout}")
    # Named as in the objects table, where it was made after its mapping.
    table = f"(mutex) [heap] table->lock made in make_table (heap_locks.c:{t['table_init_line']})"
    check(re.search(r"^  object \d+ " + re.escape(table) + "$", proc.stdout, re.M) is not None,
          f"no call-site section for {table!r}")


def test_chrome_export_names_the_waits():
    tmtest.require_report()
    rec = tmtest.recorded(NAME, ARGS)
    out = os.path.join(tmtest.Temp.dir(), "heap_locks.json")
    run = tmtest.launcher("export", "--format", "chrome", "-o", out, rec.capture)
    check(run.returncode == 0, f"threadmon export exited {run.returncode}: {run.stderr}")
    if run.returncode != 0:
        return
    with open(out, encoding="utf-8") as f:
        text = json.dumps(json.load(f))
    want = f"mutex table->lock made in make_table (heap_locks.c:{rec.truth['table_init_line']})"
    check(want in text, f"the Chrome trace never names {want!r}")
    check("mutex at 0x" not in text, "the Chrome trace names a heap mutex by its address")


tmtest.main(globals())
