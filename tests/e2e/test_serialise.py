"""serialise: threads that do all their work under one global mutex are
reported as serialised on it, by name and function, with the share of
their time the workload itself measured waiting."""
import re

import tmtest
from tmtest import Recording, check, near


def test_serialising_object():
    tmtest.require_report()
    rec = Recording("serialise", ["--threads", "4", "--work-ms", "150"])
    tmtest.check_process(rec)
    t = rec.truth
    found = tmtest.findings(rec, "serialising_object")
    if not check(len(found) == 1, f"{len(found)} serialising_object findings, expected 1: "
                 f"{tmtest.describe(tmtest.findings(rec))}"):
        return
    f = found[0]
    check(f.get("severity") in ("high", "medium"), f"severity {f.get('severity')}")
    tmtest.mentions(f.get("message"), "work_lock", "crunch_locked", "cruncher-")
    check(f.get("view") == "sync", f"view {f.get('view')!r}, expected sync")
    ev = f.get("evidence", {})
    lock = tmtest.object_by_symbol(rec, "work_lock")
    if lock:
        check(ev.get("object") == lock["id"], f"evidence.object {ev.get('object')}, "
              f"work_lock is {lock['id']}")
    waited = {w["tid"] for w in t["workers"] if w["wait_s"] > 0.05}
    got = set(ev.get("waiters", []))
    check(waited <= got <= {w["tid"] for w in t["workers"]},
          f"evidence.waiters {sorted(got)}, workers that waited {sorted(waited)}")
    # The rule divides by every program thread's lifetime, main's included;
    # the sentence says what the waiters lost of their own lives.
    near(ev.get("share"), t["blocked_share_with_main"], 0.1, "blocked share")
    near(ev.get("waiters_share"), t["blocked_share"], 0.1, "the waiters' own blocked share")
    check(re.search(r"spent \d+% of their time \(\d+% of the program's thread time\)",
                    f.get("message", "")), f"the message's shares: {f.get('message')!r}")
    near(ev.get("wait_s"), t["wait_s"], 0.1 * t["wait_s"] + 0.05, "summed wait s")


tmtest.main(globals())
